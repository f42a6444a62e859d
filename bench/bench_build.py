"""Benchmark ``curate build`` end to end, cold, in a fresh child process per corpus size.

    uv run python bench/bench_build.py --records 10000 100000 [--seed 0] [--timeout 1800]
        [--engine local ray]

For each N a corpus without error-level faults (``generate.py --preset warnings-only``: exact
and near duplicates, residue, truncation, too-short/long, a BOM and CRLF file) is generated in
``bench/out/build-<N>-s<seed>/``, then ``python -m curate.cli build DIR --out DIR/dist`` runs in a
child process (with ``--no-cache`` when the CLI has it, so nothing is reused; ``--cache`` builds
with the validation cache on, in a new empty folder, as a first ``curate build`` does). Wall
time, user and system CPU and the peak RSS come from ``os.wait4`` on that child (``ru_maxrss``
is the largest high-water mark of the child or of any descendant it waited for, e.g. a worker;
KiB on Linux; a Ray cluster's processes are not the child's, so for ``--engine ray`` it is the
main process's alone). With several ``--engine``s each corpus is built on each in turn, and
every output folder is compared with the first engine's, byte for byte.
Stage times are read off the CLI's progress lines on stderr, time-stamped as they arrive.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ANSWER_KEY, EXCLUDE_KEY, OUT, ROOT, generate_corpus, machine, mib, table


def cli_has(option: str) -> bool:
    out = subprocess.run(
        [sys.executable, "-m", "curate.cli", "build", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return option in out.stdout


def run_build(
    corpus: Path, dist: Path, timeout: float, cache: Path | None = None, engine: str | None = None
) -> dict:
    """One build in a child process; with ``cache``, the validation cache on in that folder
    (emptied first: what the first ``curate build`` of new drops does), else ``--no-cache``."""
    cmd = [sys.executable, "-m", "curate.cli", "build", str(corpus), "--out", str(dist),
           *EXCLUDE_KEY]  # fmt: skip
    if engine is not None:
        cmd += ["--engine", engine]
    env = dict(os.environ)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)  # bench/out is the benchmarks' own folder
        env["CURATE_CACHE_DIR"] = str(cache)
    elif cli_has("--no-cache"):
        cmd.append("--no-cache")
    log = corpus.parent / f"{corpus.name}.build.log"
    events: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        child = subprocess.Popen(
            cmd, cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True, start_new_session=True,
            env=env,
        )  # fmt: skip

        def read() -> None:
            assert child.stderr is not None
            for line in child.stderr:
                events.append((time.perf_counter() - t0, line.rstrip("\n")))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        timer = threading.Timer(timeout, lambda: os.killpg(child.pid, signal.SIGKILL))
        timer.start()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        reader.join(timeout=5)
    with log.open("a", encoding="utf-8") as out:
        for at, line in events:
            out.write(f"[{at:8.2f}s] {line}\n")
    return {
        "cmd": cmd,
        "returncode": child.returncode,
        "wall": wall,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "maxrss_kib": usage.ru_maxrss,
        "events": events,
        "log": log,
        "killed": child.returncode == -signal.SIGKILL,
    }


def stages(events: list[tuple[float, str]]) -> list[list[str]]:
    """Seconds between successive ``curate: ...`` progress lines (each line ends a stage)."""
    rows = []
    last = 0.0
    for at, line in events:
        if not line.startswith("curate: "):
            continue
        rows.append([line[len("curate: ") :][:70], f"{at - last:,.2f}", f"{at:,.2f}"])
        last = at
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, nargs="+", default=[10_000])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=1800, help="kill a build after this long (s)")
    p.add_argument(
        "--cache",
        action="store_true",
        help="build with the validation cache on, in a new empty folder (the CLI's default for "
        "a first build); without it the build runs with --no-cache",
    )
    p.add_argument(
        "--engine",
        nargs="+",
        default=[None],
        help="build each corpus on each of these engines in turn (default: the CLI's)",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="also run build() in this process and print BuildResult.timings if it has them",
    )
    args = p.parse_args(argv)

    print(f"curate build benchmark ({machine()})")
    summary = []
    for n in args.records:
        corpus = OUT / f"build-{n}-s{args.seed}"
        t = time.perf_counter()
        meta = generate_corpus(corpus / "drops", n, args.seed, ["--preset", "warnings-only"])
        gen_s = time.perf_counter() - t
        dist = corpus / "dist"
        print()
        print(
            f"N = {n:,}: {meta['records']:,} records in {meta['files']} files "
            f"(generated in {gen_s:.1f} s); injected: {json.dumps(meta['ground_truth_counts'])}"
        )
        for engine in args.engine:
            summary.append(_one(args, n, corpus, meta, engine, dist))
        if args.in_process:
            from curate.pipeline.build import BuildResult, build
            from curate.settings import load_settings

            if "timings" in {f.name for f in fields(BuildResult)}:
                settings = load_settings(search_from=ROOT)  # what the child's build reads
                checks = replace(settings.checks, exclude=(*settings.checks.exclude, *ANSWER_KEY))
                own = replace(settings, checks=checks)
                res = build([corpus / "drops"], corpus / "dist-inproc", own, force=True)
                rows = [[k, f"{v:,.3f}"] for k, v in res.timings.items()]  # type: ignore[attr-defined]
                print(table(rows, ["BuildResult.timings stage", "seconds"], right={1}))
            else:
                print("(BuildResult has no `timings` field: no in-process stage table)")

    print()
    print(
        table(
            summary,
            [
                "records",
                "engine",
                "status",
                "wall s",
                "records/s",
                "CPU s",
                "peak RSS",
                "output",
                "same bytes",
            ],
            right={0, 3, 4, 5, 6},
        )
    )
    return 0


def _one(
    args: argparse.Namespace, n: int, corpus: Path, meta: dict, engine: str | None, first: Path
) -> list[str]:
    """One build of the corpus on ``engine``, its progress table, and its summary row."""
    dist = first if engine == args.engine[0] else corpus / f"dist-{engine}"
    if dist.exists():
        shutil.rmtree(dist)  # bench/out is the benchmarks' own folder
    cache = corpus / "cache" if args.cache else None
    r = run_build(corpus / "drops", dist, args.timeout, cache, engine)
    print("command: " + " ".join(os.path.relpath(c, ROOT) if "/" in c else c for c in r["cmd"]))
    if r["killed"]:
        print(f"  did not finish within {args.timeout:.0f} s (killed); log: {r['log']}")
    elif r["returncode"] != 0:
        print(f"  exit status {r['returncode']}; see {r['log']}")
        print("  " + "\n  ".join(r["log"].read_text(encoding="utf-8").splitlines()[-15:]))
    rows = stages(r["events"])
    if rows:
        print(table(rows, ["progress line (end of stage)", "stage s", "at s"], right={1, 2}))
    rate = meta["records"] / r["wall"]
    built = ""
    manifest = dist / "manifest.json"
    if r["returncode"] == 0 and manifest.is_file():
        m = json.loads(manifest.read_text(encoding="utf-8"))
        built = f"{m.get('rows')} rows"
    same = "" if dist == first else ("yes" if same_tree(first, dist) else "NO")
    return [
        f"{n:,}",
        engine or "default",
        "ok" if r["returncode"] == 0 else ("killed" if r["killed"] else "failed"),
        f"{r['wall']:,.1f}",
        f"{rate:,.0f}",
        f"{r['user'] + r['sys']:,.1f}",
        mib(r["maxrss_kib"]),
        built,
        same,
    ]


def same_tree(a: Path, b: Path) -> bool:
    """Every file of two folders the same bytes, and no file on one side only."""
    compared = filecmp.dircmp(a, b)
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, compared.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(a / d, b / d) for d in compared.subdirs)


if __name__ == "__main__":
    sys.exit(main())
