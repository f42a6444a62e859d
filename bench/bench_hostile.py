"""Hostile inputs for the filesystem parts: what they cost (wall time, peak RSS). Run by hand.

    uv run python bench/bench_hostile.py [--mb 200] [--files 5000] [--tree PATH ...]

- ``one-line``: a drop of one header and one line of ``--mb`` MB, validated with the default
  limits (``file-too-large`` from its size, nothing read), then with ``max_file_bytes = 0`` (the
  file is read; ``record-too-large`` leaves the record out of the checks).
- ``cache cold``: ``--files`` small drops validated cold without the cache, then cold with it
  (a fresh cache folder), with the default workers: what the cache costs on a first run.

Each run is a child process (``curate validate``) whose peak RSS is its own ``ru_maxrss``. With
``--tree`` the same runs are made against other checkouts (e.g. ``/work/main``, the code before
this change), back to back in one command, so a slowed machine slows every tree alike.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import OUT, ROOT, table

CHILD = (
    "import resource, sys\n"
    "from curate.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)
SEED = (ROOT / "sources").glob("*.txt")


def run(tree: Path, args: list[str], cwd: Path) -> tuple[float, float, int, str]:
    env_path = str(tree)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )
    wall = time.perf_counter() - started
    rss = next(
        (int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("RSS ")), 0
    )
    last = next(
        (line for line in reversed(done.stdout.splitlines()) if line.strip()),
        done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "",
    )
    return wall, rss / 1024, done.returncode, last[:90]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--tree", action="append", default=[], type=Path)
    args = parser.parse_args()
    trees = [ROOT, *args.tree]
    OUT.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="hostile-", dir=OUT))
    try:
        big = work / "big"
        big.mkdir()
        with (big / "one-line.txt").open("wb") as fh:
            fh.write(b"ICML 2025 Papers\n\n")
            chunk = b"word " * (1 << 18)  # 1.25 MiB
            for _ in range(args.mb * 1_000_000 // len(chunk)):
                fh.write(chunk)
            fh.write(b"\n")
        (work / "nolimit.toml").write_text("max_file_bytes = 0\n")

        small = work / "small"
        small.mkdir()
        abstracts = [
            line
            for seed in SEED
            for line in seed.read_text(encoding="utf-8").split("\n")[2:]
            if line.strip()
        ]
        for i in range(args.files):
            text = abstracts[i % len(abstracts)] + f" Variant {i}."
            (small / f"{i:05d}.txt").write_text(f"ICML 2025 Papers\n\n{text}\n", encoding="utf-8")

        rows = []
        for tree in trees:
            cases = [
                ("one-line, default limits", ["validate", str(big), "--no-cache"]),
                (
                    "one-line, max_file_bytes = 0",
                    ["validate", str(big), "--no-cache", "--config", str(work / "nolimit.toml")],
                ),
                (
                    f"{args.files:,} files cold, no cache",
                    ["validate", str(small), "--no-cache"],
                ),
            ]
            for name, cmd in cases:
                if name.startswith("one-line") and tree != ROOT:
                    continue  # an older tree reads it whole: GBs on a shared machine
                wall, rss, code, last = run(tree, cmd, work)
                rows.append([str(tree), name, f"{wall:.2f} s", f"{rss:,.0f} MiB", str(code), last])
            cache = work / f"cache-{len(rows)}"
            shutil.rmtree(cache, ignore_errors=True)
            cmd = ["validate", str(small)]
            wall, rss, code, last = run_with_cache(tree, cmd, work, cache)
            case = f"{args.files:,} files cold, cache"
            rows.append([str(tree), case, f"{wall:.2f} s", f"{rss:,.0f} MiB", str(code), last])
        print(table(rows, ["tree", "case", "wall", "peak RSS", "exit", "last line"], {2, 3}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_with_cache(tree: Path, args: list[str], cwd: Path, cache: Path) -> tuple:
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "HOME": str(cwd),
           "CURATE_CACHE_DIR": str(cache)}  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], cwd=cwd, capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - started
    rss = next(
        (int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("RSS ")), 0
    )
    last = next((line for line in reversed(done.stdout.splitlines()) if line.strip()), "")
    return wall, rss / 1024, done.returncode, last[:90]


if __name__ == "__main__":
    main()
