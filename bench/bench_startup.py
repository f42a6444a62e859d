"""Start-up: wall time of short commands, and what ``import curate.cli`` loads.

    uv run python bench/bench_startup.py [--runs 5] [--baseline REV]

Runs each command ``--runs`` times in a fresh process and prints the best and the median wall
time (hyperfine-like; best of N is the figure least disturbed by other load):

- ``curate --help``
- ``curate validate sources/`` (the bundled sources, from the repository root; its cache in
  ``bench/out/startup-cache``, so after the first run it is warm, as in CI's second run)
- ``python -c "import curate.cli"``
- ``uv run --no-compile-bytecode curate --help`` and ``uv run --compile-bytecode curate --help``:
  with compile-bytecode on, ``uv run`` re-runs its compile step (a walk over all of
  site-packages) on every call (uv issue #12202), which costs about what the .pyc files save

each twice, back to back: with the environment's bytecode (the ``.pyc`` files
``uv sync --compile-bytecode`` wrote) and with ``PYTHONPYCACHEPREFIX`` pointing to an
empty folder, so that no ``.pyc`` is found and every module is compiled from source on every
run, as with ``PYTHONDONTWRITEBYTECODE=1`` and no compiled bytecode. ``PYTHONDONTWRITEBYTECODE=1``
is set for both, so a run writes no bytecode that a later run could use.

Then the number of modules ``import curate.cli`` loads, and which of the heavy libraries
among them. Prints its figures; asserts nothing. Writes only under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import OUT, ROOT, machine, table

HEAVY = (
    "datasets",
    "pandas",
    "pandera",
    "pyarrow",
    "huggingface_hub",
    "langdetect",
    "ftfy",
    "pylatexenc",
    "matplotlib",
    "jinja2",
    "numpy",
)


def timed(cmd: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also time the code of git revision REV (extracted with git archive under "
        "bench/out/, put first on PYTHONPATH), back to back with this tree",
    )
    args = parser.parse_args(argv)

    bindir = Path(sys.executable).parent
    curate = str(bindir / "curate") if (bindir / "curate").exists() else None
    entry = [curate] if curate else [sys.executable, "-m", "curate.cli"]
    # name -> (command timed with the .pyc files, command timed without them)
    commands = {
        "curate --help": ([*entry, "--help"],) * 2,
        "curate validate sources/": ([*entry, "validate", "sources/"],) * 2,
        'python -c "import curate.cli"': ([sys.executable, "-c", "import curate.cli"],) * 2,
    }
    if shutil.which("uv"):
        # `uv run` with compile-bytecode on (in [tool.uv] or UV_COMPILE_BYTECODE) re-runs its
        # compile step, a walk over all of site-packages, on every call (uv issue #12202).
        for flag in ("--no-compile-bytecode", "--compile-bytecode"):
            commands[f"uv run {flag} curate --help"] = (
                ["uv", "run", flag, "curate", "--help"],
            ) * 2
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    base_env["PYTHONDONTWRITEBYTECODE"] = "1"
    base_env["PYTHONSAFEPATH"] = "1"  # `python -c` must not put the working folder first
    base_env["CURATE_CACHE_DIR"] = str(OUT / "startup-cache")
    pyc = sum(1 for _ in (bindir.parent / "lib").rglob("*.pyc"))
    print(f"# bench_startup: best and median of {args.runs} runs; {machine()}")
    print(f"environment {bindir.parent}: {pyc:,} .pyc files\n")

    trees = {"this tree": base_env}
    if args.baseline:
        old = OUT / f"startup-{args.baseline}"
        if not old.exists():
            old.mkdir(parents=True)
            archive = subprocess.run(
                ["git", "archive", args.baseline, "curate", "validation"],
                cwd=ROOT,
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        trees = {args.baseline: {**base_env, "PYTHONPATH": str(old)}, **trees}

    rows = []
    with tempfile.TemporaryDirectory(prefix="no-pyc-", dir=OUT if OUT.exists() else None) as empty:
        for name, (compiled, source) in commands.items():
            for tree, env in trees.items():
                source_env = {**env, "PYTHONPYCACHEPREFIX": empty}
                subprocess.run(compiled, cwd=ROOT, env=env, capture_output=True)
                best_c, median_c = timed(compiled, env, args.runs)
                best_s, median_s = timed(source, source_env, args.runs)
                rows.append(
                    [name, tree, f"{best_c:.3f}", f"{median_c:.3f}", f"{best_s:.3f}",
                     f"{median_s:.3f}"]
                )  # fmt: skip
    header = ["command", "code", "best s", "median s", "best s, no .pyc", "median s, no .pyc"]
    print(table(rows, header, right={2, 3, 4, 5}))

    probe = "import curate.cli, json, sys; print(json.dumps(sorted(sys.modules)))"
    print()
    for tree, env in trees.items():
        loaded = json.loads(
            subprocess.run(
                [sys.executable, "-c", probe],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        heavy = [h for h in HEAVY if h in loaded]
        print(f"{tree}: import curate.cli loads {len(loaded)} modules; heavy: {heavy or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
