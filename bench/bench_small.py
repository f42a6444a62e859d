"""A small drop, as CI sees it: a cold `curate build` beside the naive pipeline, start-up included.

    uv run python bench/bench_small.py [--records 5000] [--seed 0] [--runs 3] [--reuse]

One generated corpus (bench/generate.py ``--preset warnings-only``, so that the build does not
refuse it). Then, ``--runs`` times, one after the other:

- ``curate build CORPUS --out DIR --no-cache -q`` in a fresh process of this repository's
  environment (``python -m curate.cli``): interpreter start, imports, validation, cleaning,
  deduplication, Parquet, card, Croissant, manifest and report.html, all included;
- the naive pipeline in a fresh process of its own environment (bench_peers.py's ``naive``
  pins and its ``run_naive``: langdetect, datasketch, pandas, pyarrow): it reads the drop files
  itself (header line, then abstracts separated by blank lines), runs a langdetect loop over
  every abstract, datasketch ``MinHashLSH()`` at its defaults over word 3-shingles, and writes
  the table with pandas ``to_parquet``. No checks, no cleaning, no card: the least a pipeline
  does.

Wall time of each process (``os.wait4``; peak RSS too). Prints the best and median of each
and the ratio curate / naive (best to best, median to median). Asserts nothing; writes only
under bench/out/.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))


def naive_pipeline(corpus: Path, out: Path) -> None:
    """The naive pipeline (runs in the naive environment; imports nothing of curate): reads the
    drops itself, then bench_peers.py's ``run_naive`` (the one definition of the baseline)."""
    from bench_peers import run_naive

    texts: list[str] = []
    for path in sorted(corpus.glob("*.txt")):
        body = path.read_text(encoding="utf-8", errors="replace").split("\n", 1)[-1]
        texts += [" ".join(block.split()) for block in re.split(r"\n\s*\n", body) if block.strip()]
    out.mkdir(parents=True, exist_ok=True)
    run_naive(texts, out, {})


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """(wall seconds, peak RSS KiB) of a child process; raises if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{err[-2000:]}")
    return wall, usage.ru_maxrss


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    parser.add_argument("--naive", nargs=2, metavar=("CORPUS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.naive:
        naive_pipeline(Path(args.naive[0]), Path(args.naive[1]))
        return 0

    from _common import EXCLUDE_KEY, OUT, generate_corpus, machine, mib, table
    from bench_peers import ensure_env

    base = OUT / f"small-{args.records}-s{args.seed}"
    corpus = base / "drops"
    print(f"# bench_small: {args.records:,} records, seed {args.seed}; {machine()}")
    if not (args.reuse and (corpus / "meta.json").is_file()):
        generate_corpus(corpus, args.records, args.seed, ["--preset", "warnings-only"])
    naive_python = ensure_env("naive")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    results: dict[str, list[tuple[float, int]]] = {"curate build": [], "naive pipeline": []}
    for run in range(args.runs):
        for out in (base / "curate-out", base / "naive-out"):
            shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, "-m", "curate.cli", "build", str(corpus), *EXCLUDE_KEY]
        results["curate build"].append(
            timed([*cmd, "--out", str(base / "curate-out"), "--no-cache", "-q"])
        )
        results["naive pipeline"].append(
            timed([naive_python, __file__, "--naive", str(corpus), str(base / "naive-out")], env)
        )
        print(
            f"run {run + 1}: curate {results['curate build'][-1][0]:.2f} s, "
            f"naive {results['naive pipeline'][-1][0]:.2f} s",
            flush=True,
        )
    rows = []
    for name, runs in results.items():
        walls = [w for w, _ in runs]
        rows.append([name, f"{min(walls):.2f}", f"{statistics.median(walls):.2f}",
                     mib(max(r for _, r in runs))])  # fmt: skip
    print()
    print(table(rows, ["process", "best s", "median s", "peak RSS"], right={1, 2, 3}))
    c = [w for w, _ in results["curate build"]]
    n = [w for w, _ in results["naive pipeline"]]
    print(
        f"\ncurate / naive: {min(c) / min(n):.3f} (best to best), "
        f"{statistics.median(c) / statistics.median(n):.3f} (median to median)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
