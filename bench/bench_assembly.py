"""Assembly's tasks alone: the CPU of each row, and the peak memory of each task.

    uv run python bench/bench_assembly.py --records 100000 [--seed 0] [--one-file] [--reuse]
    uv run python bench/bench_assembly.py --records 100000 --reuse --spool 10

A generated corpus (bench/generate.py, every finding code demoted to a warning as in
bench_scale.py) is built once, on the local engine, in a child process that keeps every
assembly task it runs (the task pickled, beside links to the spool files it reads). Each task
is then run again alone, in a fresh child process: its CPU seconds and peak RSS (``os.wait4``),
and the same child's peak with what a worker has loaded by then and nothing run, so the
difference is what the task itself held (the CPU is the task's alone). ``--one-file`` builds
the same records as one JSON Lines file: the case of a large file, whose survivors are the
rows of few tasks.

``--spool FILES`` times the per-file half instead: the spool writes (cleaning and the rows) of
that many files' records, parsed and checked first, CPU of the best of three.

To measure another revision, run this script with that revision's tree first on ``PYTHONPATH``
(``PYTHONPATH=/path/to/tree uv run python bench/bench_assembly.py …``): the build, the tasks kept
and their runs are then all that tree's.

Prints its figures; asserts nothing. Writes only under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import ANSWER_KEY, OUT, ROOT, generate_corpus, machine, mib, table


def settings(one_file: bool):  # curate is imported in the child only
    from curate.settings import from_mapping
    from validation.registry import REGISTRY

    given: dict = {"severity": dict.fromkeys(REGISTRY, "warning"), "exclude": list(ANSWER_KEY)}
    if one_file:
        given["mapping"] = {"jsonl": {"text": "abstract", "id": "id"}}
    return from_mapping(given, "bench_assembly")


KEEP = "BENCH_ASSEMBLY_KEEP"  # the folder the build's child keeps its tasks in


def keeping(task):  # replaces rows_of_files in the building child
    """Keep the task (pickled, with links to its spool files), then run it."""
    import dataclasses
    import hashlib

    from curate.dataset import assemble

    keep = Path(os.environ[KEEP])
    parts = []
    for path, spool, lines, todo in task.parts:
        linked = keep / f"spool-{hashlib.sha256(spool.encode()).hexdigest()[:16]}.arrow"
        try:
            os.link(spool, linked)
        except FileExistsError:  # another task of the same file linked it
            pass
        except OSError:  # another filesystem: a copy, in place at once
            shutil.copyfile(spool, f"{linked}.{os.getpid()}")
            os.replace(f"{linked}.{os.getpid()}", linked)
        parts.append((path, str(linked), lines, todo))
    name = Path(task.out).stem
    copy = dataclasses.replace(task, parts=parts, out=str(keep / f"{name}.out.arrow"))
    (keep / f"{name}.task").write_bytes(pickle.dumps(copy))
    return assemble.__dict__["_real_rows_of_files"](task)


def keep_tasks(source: Path, out: Path, keep: Path, one_file: bool) -> None:
    """The child that builds (on the local engine): every assembly task is kept in ``keep``."""
    import validation.checks  # noqa: F401  (registers every code, which the settings demote)
    from curate.dataset import assemble
    from curate.pipeline.build import build

    os.environ[KEEP] = str(keep)
    assemble._real_rows_of_files = assemble.rows_of_files
    assemble.rows_of_files = keeping
    build([source], out, settings(one_file), template=ROOT / "dataset_card.md", engine="local")


def run_task(path: Path, idle: bool) -> None:
    """The child that runs one kept task (or, ``idle``, only imports what it needs)."""
    import pyarrow as pa

    from curate.dataset.assemble import rows_of_files

    # What a worker has loaded by its first assembly task: pyarrow loads pandas the first time
    # it turns Python values into Arrow, a second or so that is the worker's, not a task's.
    pa.Table.from_pylist([{"a": ["x"]}])
    task = pickle.loads(path.read_bytes())
    rows = sum(len(todo) for *_, todo in task.parts)
    started = time.process_time()
    if not idle:
        rows_of_files(task)
    print(json.dumps({"rows": rows, "cpu": time.process_time() - started}))


def spool_writes(corpus: Path, files: int, rounds: int) -> None:
    """The child that times a build's per-file rows alone: the spool writes of some files'
    records (cleaning and rows, what the scan's ``clean + rows`` stage times), once they are
    parsed and checked; the CPU of the best of ``rounds``."""
    import tempfile

    from curate.ingest import formats
    from curate.transform.rows import Cleaning, Spool
    from validation.config import Config
    from validation.runner import check_file

    config = Config()
    checked = []
    for path in sorted(corpus.glob("*.txt"))[:files]:
        for part in formats.parts("text", path, config):
            checked.append((part, check_file(part, config, None, index=0, first=0)[1]))
    best = float("inf")
    with tempfile.TemporaryDirectory(dir=OUT) as folder:
        Spool(Path(folder) / "warm.arrow", config, Cleaning()).write(
            checked[0][0].path, checked[0][0].records[:1], checked[0][1][:1]
        )  # pyarrow's first conversion loads pandas: the worker's, not a record's
        for k in range(rounds):
            started = time.process_time()
            for i, (part, results) in enumerate(checked):
                spool = Spool(Path(folder) / f"{k}-{i}.arrow", config, Cleaning())
                spool.write(part.path, part.records, results)
                spool.close()
            best = min(best, time.process_time() - started)
    print(json.dumps({"rows": sum(len(p.records) for p, _ in checked), "cpu": best}))


def child(argv: list[str]) -> dict:
    """Run this script as a child: what it prints, with its CPU and peak RSS (KiB)."""
    proc = subprocess.Popen([sys.executable, __file__, *argv], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    printed = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child {argv} failed")
    result = json.loads(printed.decode().strip().splitlines()[-1]) if printed.strip() else {}
    return {**result, "rss": usage.ru_maxrss, "child_cpu": usage.ru_utime + usage.ru_stime}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("--keep", "--task", "--idle", "--spooling"):
        if sys.argv[1] == "--spooling":
            spool_writes(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        elif sys.argv[1] == "--keep":
            keep_tasks(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5] == "1")
        else:
            run_task(Path(sys.argv[2]), idle=sys.argv[1] == "--idle")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one-file", action="store_true", help="the records as one JSONL file")
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    parser.add_argument(
        "--spool", type=int, default=0, metavar="FILES",
        help="instead: the spool writes alone (cleaning and rows) of this many files' records",
    )  # fmt: skip
    args = parser.parse_args()
    corpus = OUT / f"assembly-{args.records}-s{args.seed}"
    if not (args.reuse and (corpus / "meta.json").exists()):
        generate_corpus(corpus, args.records, args.seed, ["--preset", "warnings-only"])
    if args.spool:
        done = child(["--spooling", str(corpus), str(args.spool), "3"])
        print(f"{machine()}; spool writes of {done['rows']:,} records, best of 3: "
              f"{done['cpu']:.2f} s CPU, {done['cpu'] / done['rows'] * 1e6:.1f} µs a record; "
              f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
        return
    source = corpus
    if args.one_file:
        from bench_formats import to_jsonl

        source = corpus.with_name(corpus.name + "-jsonl") / "records.jsonl"
        if not (args.reuse and source.exists()):
            source.parent.mkdir(parents=True, exist_ok=True)
            to_jsonl(corpus, source)
    work = OUT / "assembly-run"
    shutil.rmtree(work, ignore_errors=True)
    keep = work / "tasks"
    keep.mkdir(parents=True)
    print(machine())
    started = time.perf_counter()
    child(["--keep", str(source), str(work / "dist"), str(keep), "1" if args.one_file else "0"])
    print(f"built {source} in {time.perf_counter() - started:.0f} s")
    tasks = sorted(keep.glob("*.task"))
    idle = child(["--idle", str(tasks[0])])
    runs = [child(["--task", str(t)]) for t in tasks]
    rows = sum(r["rows"] for r in runs)
    cpu = sum(r["cpu"] for r in runs)
    biggest = max(runs, key=lambda r: r["rss"])
    print(table(
        [[f"{len(runs):,}", f"{rows:,}", f"{max(r['rows'] for r in runs):,}",
          f"{cpu:.2f}", f"{cpu / rows * 1e6:.1f}", mib(idle["rss"]), mib(biggest["rss"]),
          mib(biggest["rss"] - idle["rss"]), f"{biggest['rows']:,}"]],
        ["tasks", "rows", "most rows", "CPU s", "CPU µs/row", "RSS idle", "peak RSS",
         "peak - idle", "its rows"],
        right=set(range(9)),
    ))  # fmt: skip
    print(f"load: {os.getloadavg()[0]:.1f} (1-minute average, at the end)")


if __name__ == "__main__":
    main()
