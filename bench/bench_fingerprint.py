"""The row digests of the content fingerprint: version 1 (canonical JSON) against version 2
(Arrow's kernels over whole columns), µs a row, on the rows of a build.

    uv run python bench/bench_fingerprint.py [BUILD_DIR ...] [--rounds 3]

Each BUILD_DIR is a `curate build` output folder (default: builds the dev corpus into
bench/out/fingerprint-dev first). The versions are interleaved, each round timing both on the
same table; version 1 is timed from the Parquet table as the build has it, so both include
turning Arrow values into what they hash. Prints the best and the median of the rounds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from curate.dataset.manifest import row_digests

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT.parent / "shared" / "corpus" / "real-dev" / "drops"
OUT = ROOT / "bench" / "out"


def dev_build() -> Path:
    out = OUT / "fingerprint-dev"
    if not (out / "manifest.json").is_file():
        config = OUT / "fingerprint-dev.toml"
        OUT.mkdir(parents=True, exist_ok=True)
        config.write_text('[severity]\ncontrol-char = "warning"\n', encoding="utf-8")
        subprocess.run(
            [sys.executable, "-m", "curate.cli", "-q", "build", str(DEV), "--out", str(out),
             "--config", str(config), "--no-cache", "--force"],
            check=True,
        )  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for folder in args.builds or [dev_build()]:
        table = pq.read_table(folder / "data")
        times: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.rounds):
            for version in (1, 2):
                start = time.process_time()
                row_digests(table, version)
                times[version].append((time.process_time() - start) / table.num_rows * 1e6)
        print(f"{folder}: {table.num_rows:,} rows, CPU µs a row, best (median) of {args.rounds}")
        for version, got in times.items():
            print(f"  version {version}: {min(got):.1f} ({statistics.median(got):.1f})")
        print(f"  version 1 / version 2: {min(times[1]) / min(times[2]):.1f}×")


if __name__ == "__main__":
    main()
