"""Incremental validation: an unchanged corpus plus one new drop, with a warm cache.

    uv run python bench/bench_cache.py --records 100000 [--seed 0] [--new 20]

1. generate a corpus of N records (bench/generate.py, warnings-only preset) and a separate
   drop of `--new` records;
2. `curate validate CORPUS` cold with an empty cache (fills it);
3. copy the new drop into the corpus and run `curate validate CORPUS` again, warm;
4. run it once more with `--no-cache`, and compare the two JSON reports.

Every run is the real command line in a fresh process, so the figures include interpreter start
and imports: what CI waits for. Prints its figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import EXCLUDE_KEY, OUT, ROOT, generate_corpus, machine


def validate(corpus: Path, cache: Path | None, report: Path) -> float:
    cmd = [sys.executable, "-m", "curate.cli", "validate", str(corpus), "--format", "json",
           *EXCLUDE_KEY]  # fmt: skip
    env = None
    if cache is None:
        cmd.append("--no-cache")
    else:
        env = {**__import__("os").environ, "CURATE_CACHE_DIR": str(cache)}
    t = time.perf_counter()
    with report.open("w", encoding="utf-8") as out:
        subprocess.run(cmd, cwd=ROOT, env=env, stdout=out, check=False)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--new", type=int, default=20, help="records in the new drop")
    args = parser.parse_args(argv)

    base = OUT / f"cache-{args.records}-s{args.seed}"
    corpus, extra, cache = base / "drops", base / "new", base / "cache"
    print(f"# bench_cache: {args.records:,} records + a new drop of {args.new}; {machine()}")
    generate_corpus(corpus, args.records, args.seed, ["--preset", "warnings-only"])
    generate_corpus(extra, args.new, args.seed + 1, ["--preset", "warnings-only"])
    for name in ("ground_truth.jsonl", "meta.json"):
        (corpus / name).unlink(missing_ok=True)
    shutil.rmtree(cache, ignore_errors=True)

    cold = validate(corpus, cache, base / "cold.json")
    (new_drop,) = sorted(extra.glob("*.txt"))[:1]
    shutil.copy(new_drop, corpus / f"zz_new_{new_drop.name}")
    warm = validate(corpus, cache, base / "warm.json")
    fresh = validate(corpus, None, base / "fresh.json")

    warm_report = json.loads((base / "warm.json").read_text(encoding="utf-8"))
    fresh_report = json.loads((base / "fresh.json").read_text(encoding="utf-8"))
    same = warm_report == fresh_report
    print(f"cold, empty cache ({args.records:,} records)           : {cold:6.2f} s")
    print(f"warm, + new drop of {args.new} records                 : {warm:6.2f} s")
    print(f"no cache, same corpus                            : {fresh:6.2f} s")
    print(f"warm report identical to the no-cache report     : {same}")
    print(f"findings: {warm_report['summary']['errors']} errors, "
          f"{warm_report['summary']['warnings']} warnings")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
