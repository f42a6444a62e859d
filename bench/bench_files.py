"""The per-file checks in CPU time: `check_file` on each file of a generated corpus, by key.

    uv run python bench/bench_files.py [--records 20000] [--seed 0] [--rounds 3] [--reuse]
        [--baseline REV] [--alternations 2] [--task]

The corpus is bench/generate.py's at its default rates (1 % of records in another language).
Each tree runs in a child process of its own with its ``validation`` and ``curate`` on
``PYTHONPATH`` (this working tree, and with ``--baseline REV`` the tree of REV, ``git archive``
under bench/out/), alternately (A, B, A, B) so both see the same machine; each child parses the
files, then checks all of them ``--rounds`` times and keeps its best round. The runner's per-check
timings are read with ``time.process_time`` in place of ``time.perf_counter`` there, so every
figure is CPU time of the process (the build's stage table adds wall time under load). Printed
in µs a record: the whole of ``check_file`` and its largest keys. ``sketch`` and ``language``
are the batch steps; ``measure language`` each record's answer after them.

With ``--task``, the whole per-file task of a build instead: ``curate.scan.task.scan_file`` with
a spool (parsing, the checks, cleaning and the rows, as a worker runs it; the spools in a
temporary folder under bench/out/), timed the same way.

Prints its figures; asserts nothing. Writes only under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _common import OUT, ROOT, baseline_tree, generate_corpus, machine


def task_child(corpus: Path, rounds: int) -> None:
    """``--task``: the whole per-file task of a build (``scan_file`` with a spool: parsing, the
    checks, cleaning and the rows), CPU of this process, as a worker runs it."""
    import tempfile

    import curate.scan.task as task_module
    import validation.runner as runner
    from curate.scan.task import ScanTask, scan_file
    from curate.transform.rows import Cleaning
    from validation import language
    from validation.config import Config
    from validation.findings import Severity
    from validation.registry import REGISTRY

    cpu = type("CpuTime", (), {"perf_counter": staticmethod(time.process_time)})
    runner.time = task_module.time = cpu  # the stage keys in CPU time, as in `child`
    config = Config(severity={code: Severity.WARNING for code in REGISTRY})
    paths = sorted(corpus.glob("*.txt"))
    best: tuple[float, dict[str, float], int] | None = None
    with tempfile.TemporaryDirectory(dir=OUT) as spools:
        for _ in range(rounds):
            for cached in (language.body_language, language.detect, language.detect_among):
                cached.cache_clear()
            timings: dict[str, float] = {}
            n = 0
            started = time.process_time()
            for index, path in enumerate(paths):
                spool = Path(spools) / f"{index:05d}.arrow"
                task = ScanTask(index, str(path), "text", config, spool=str(spool),
                                cleaning=Cleaning())  # fmt: skip
                done = scan_file(task)
                n += done.file.n_records
                for key, seconds in done.file.timings.items():
                    timings[key] = timings.get(key, 0.0) + seconds
            total = time.process_time() - started
            if best is None or total < best[0]:
                best = (total, timings, n)
    assert best is not None
    total, timings, n = best
    out = {"records": n, "check_file": total / n * 1e6}
    out |= {key: seconds / n * 1e6 for key, seconds in timings.items()}
    print(json.dumps(out))


def child(corpus: Path, rounds: int) -> None:
    import validation.runner as runner
    from curate.ingest.formats.text import parse_file
    from validation import language
    from validation.config import Config
    from validation.findings import Severity
    from validation.registry import REGISTRY

    runner.time = type("CpuTime", (), {"perf_counter": staticmethod(time.process_time)})
    config = Config(severity={code: Severity.WARNING for code in REGISTRY})
    sources = [parse_file(p) for p in sorted(corpus.glob("*.txt"))]
    n = sum(len(s.records) for s in sources)
    best: tuple[float, dict[str, float]] | None = None
    for _ in range(rounds):
        for cached in (language.body_language, language.detect, language.detect_among):
            cached.cache_clear()
        timings: dict[str, float] = {}
        started = time.process_time()
        for index, source in enumerate(sources):
            result, _ = runner.check_file(source, config, index=index)
            for key, seconds in result.timings.items():
                timings[key] = timings.get(key, 0.0) + seconds
        total = time.process_time() - started
        if best is None or total < best[0]:
            best = (total, timings)
    assert best is not None
    total, timings = best
    out = {"records": n, "check_file": total / n * 1e6}
    out |= {key: seconds / n * 1e6 for key, seconds in timings.items()}
    print(json.dumps(out))


def run(tree: Path, corpus: Path, rounds: int, task: bool = False) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"PYTHONPATH": str(tree)}
    cmd = [sys.executable, __file__, "--child", str(corpus), str(rounds)]
    if task:
        cmd.append("--task")
    proc = subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--alternations", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    parser.add_argument("--baseline", metavar="REV", help="also time the tree of REV")
    parser.add_argument(
        "--task",
        action="store_true",
        help="time the whole per-file task of a build (scan_file: parse, checks, clean, rows)",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        (task_child if args.task else child)(Path(args.child[0]), int(args.child[1]))
        return 0
    corpus = OUT / f"files-{args.records}-s{args.seed}"
    if not (args.reuse and (corpus / "meta.json").is_file()):
        generate_corpus(corpus, args.records, args.seed)
    trees = {"this tree": ROOT}
    if args.baseline:
        trees[args.baseline] = baseline_tree(args.baseline)
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.alternations):
        for name, tree in trees.items():
            got = run(tree, corpus, args.rounds, args.task)
            if name not in best or got["check_file"] < best[name]["check_file"]:
                best[name] = got
    load = os.getloadavg()
    what = "the per-file task (scan_file with a spool)" if args.task else "check_file"
    print(f"# bench_files: {what}, {args.records:,} records, seed {args.seed}; {machine()}")
    print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print("CPU µs a record, each tree's best round:")
    for name, got in best.items():
        keys = sorted((k for k in got if k not in ("records", "check_file")), key=lambda k: -got[k])
        parts = ", ".join(f"{k} {got[k]:.1f}" for k in keys[:8])
        whole = f"{'scan_file' if args.task else 'check_file'} {got['check_file']:.1f}"
        whole += f" ({got['records']:,.0f} records)"
        print(f"{name}: {whole}: {parts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
