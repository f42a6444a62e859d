"""Start-up: wall time of short commands, and what they import.

    uv run python bench/bench_startup.py [--runs 5] [--baseline REV] [--no-source]

Runs each command ``--runs`` times in a fresh process and prints the best and the median wall
time (hyperfine-like; best of N is the figure least disturbed by other load). The variants of a
command run back to back, A B C A B C…, so a burst of load from elsewhere hits them alike:

- ``curate --help``, ``curate validate --help``, ``curate --version``
- ``curate validate sources/`` warm (the bundled sources, from the repository root; its cache
  filled by an untimed first run, as in CI's second run) and cold (a new, empty cache folder
  before every run: the first run of a checkout)
- ``python -c "import curate.cli"``
- ``python -c pass`` and ``python -c "import numpy"`` (with the .pyc files only): how fast the
  machine is at the time, to compare figures taken on different days or under other load
- ``uv run curate --help`` and ``uv run --compile-bytecode curate --help``: with compile-bytecode
  on, ``uv run`` re-runs its compile step (a walk over all of site-packages) on every call (uv
  issue #12202), which costs about what the .pyc files save

each in up to three states of bytecode. ``PYTHONDONTWRITEBYTECODE=1`` is set for all, so a run
writes no bytecode that a later run could use:

- *pyc*: the environment's ``.pyc`` files (``uv sync --compile-bytecode`` writes them for
  site-packages; curate's own modules, an editable install, are compiled on every run);
- *own pyc*: the same, and curate's own modules compiled too (a copy of ``curate/`` and
  ``validation/`` under ``bench/out/`` compiled with ``compileall`` and put first on
  ``PYTHONPATH``), as in a wheel installed with ``--compile-bytecode``;
- *no pyc*: ``PYTHONPYCACHEPREFIX`` pointing to an empty folder, so that no ``.pyc`` is found and
  every module is compiled from source on every run (not for the cold validate, which would
  compile pandas on every run; ``--no-source`` skips this state altogether).

``--baseline REV`` extracts ``curate/`` and ``validation/`` of REV with ``git archive`` under
``bench/out/`` and times it too (first on ``PYTHONPATH``), interleaved with the working tree.

Then, per tree: how many modules ``import curate.cli`` loads, and which of the heavy libraries
``import curate.cli``, ``curate --help`` and a warm ``curate validate sources/`` import (seen with
``python -X importtime``). Prints its figures; asserts nothing. Writes only under bench/out/.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import OUT, ROOT, machine, table

HEAVY = (
    "numpy",
    "pyarrow",
    "pandas",
    "pandera",
    "datasets",
    "huggingface_hub",
    "httpx",
    "httpx2",
    "langdetect",
    "ftfy",
    "pylatexenc",
    "matplotlib",
    "jinja2",
    "tqdm",
    "importlib.metadata",
    "multiprocessing",
    "sqlite3",
)
STATES = ("pyc", "own pyc", "no pyc")
REFERENCES = ("python -c pass", 'python -c "import numpy"')


def run(cmd: list[str], env: dict[str, str], before: Callable[[], None] | None = None) -> float:
    if before is not None:
        before()
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def heavy_imported(cmd: list[str], env: dict[str, str]) -> list[str]:
    """The entries of HEAVY that ``cmd`` (a Python script and its arguments) imports."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    ).stderr
    names = {line.split("|")[-1].strip() for line in err.splitlines() if "|" in line}
    return [h for h in HEAVY if any(n == h or n.startswith(h + ".") for n in names)]


def extract(rev: str) -> Path:
    """``curate/`` and ``validation/`` of git revision ``rev``, under bench/out/."""
    old = OUT / f"startup-{rev}"
    if not old.exists():
        old.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "archive", rev, "curate", "validation"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    return old


def compiled_copy(tree: Path, name: str) -> Path:
    """A fresh copy of ``tree``'s packages with every module compiled to .pyc."""
    dest = OUT / f"startup-compiled-{name}"
    shutil.rmtree(dest, ignore_errors=True)
    for package in ("curate", "validation"):
        shutil.copytree(tree / package, dest / package, ignore=shutil.ignore_patterns("*.pyc"))
    compileall.compile_dir(dest, quiet=1)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also time the code of git revision REV (extracted with git archive under "
        "bench/out/, put first on PYTHONPATH), interleaved with this tree",
    )
    parser.add_argument(
        "--no-source", action="store_true", help="skip the runs without any .pyc file"
    )
    args = parser.parse_args(argv)

    bindir = Path(sys.executable).parent
    script = bindir / "curate"
    entry = [str(script)] if script.exists() else [sys.executable, "-m", "curate.cli"]
    commands: dict[str, list[str]] = {
        # References for the machine's speed today (they do not depend on curate's code).
        "python -c pass": [sys.executable, "-c", "pass"],
        'python -c "import numpy"': [sys.executable, "-c", "import numpy"],
        "curate --help": [*entry, "--help"],
        "curate validate --help": [*entry, "validate", "--help"],
        "curate --version": [*entry, "--version"],
        "curate validate sources/ (warm)": [*entry, "validate", "sources/"],
        "curate validate sources/ (cold)": [*entry, "validate", "sources/"],
        'python -c "import curate.cli"': [sys.executable, "-c", "import curate.cli"],
    }
    if shutil.which("uv"):
        commands["uv run curate --help"] = ["uv", "run", "curate", "--help"]
        commands["uv run --compile-bytecode curate --help"] = [
            "uv", "run", "--compile-bytecode", "curate", "--help"
        ]  # fmt: skip

    OUT.mkdir(parents=True, exist_ok=True)
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    base_env["PYTHONDONTWRITEBYTECODE"] = "1"
    base_env["PYTHONSAFEPATH"] = "1"  # `python -c` must not put the working folder first
    pyc = sum(1 for _ in (bindir.parent / "lib").rglob("*.pyc"))
    print(f"# bench_startup: best and median of {args.runs} runs; {machine()}")
    print(f"environment {bindir.parent}: {pyc:,} .pyc files")

    # tree -> (the folder holding its packages, what to put on PYTHONPATH for them)
    trees: dict[str, tuple[Path, str | None]] = {}
    if args.baseline:
        old = extract(args.baseline)
        trees[args.baseline] = (old, str(old))
    trees["this tree"] = (ROOT, None)
    states = STATES[:2] if args.no_source else STATES

    empty = Path(tempfile.mkdtemp(prefix="no-pyc-", dir=OUT))
    # (tree, state) -> environment
    envs: dict[tuple[str, str], dict[str, str]] = {}
    for i, (tree, (folder, path)) in enumerate(trees.items()):
        env = dict(base_env, CURATE_CACHE_DIR=str(OUT / f"startup-cache-{i}"))
        if path:
            env["PYTHONPATH"] = path
        envs[tree, "pyc"] = env
        envs[tree, "own pyc"] = dict(env, PYTHONPATH=str(compiled_copy(folder, str(i))))
        envs[tree, "no pyc"] = dict(env, PYTHONPYCACHEPREFIX=str(empty))

    def cold(env: dict[str, str]) -> Callable[[], None]:
        return lambda: shutil.rmtree(env["CURATE_CACHE_DIR"] + "-cold", ignore_errors=True)

    rows = []
    try:
        for name, cmd in commands.items():
            variants = [
                (tree, state)
                for tree in trees
                for state in states
                if not (state == "no pyc" and name.endswith("(cold)"))
            ]
            if name in REFERENCES:
                variants = [("this tree", "pyc")]
            times: dict[tuple[str, str], list[float]] = {v: [] for v in variants}
            for v in variants:  # untimed: fills the warm cache, loads the files into memory
                env = envs[v]
                if name.endswith("(cold)"):
                    env = dict(env, CURATE_CACHE_DIR=env["CURATE_CACHE_DIR"] + "-cold")
                run(cmd, env)
            for _ in range(args.runs):
                for v in variants:
                    env, before = envs[v], None
                    if name.endswith("(cold)"):
                        before = cold(env)
                        env = dict(env, CURATE_CACHE_DIR=env["CURATE_CACHE_DIR"] + "-cold")
                    times[v].append(run(cmd, env, before))
            for (tree, state), ts in times.items():
                rows.append([name, tree, state, f"{min(ts):.3f}", f"{statistics.median(ts):.3f}"])
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    print()
    print(table(rows, ["command", "code", "bytecode", "best s", "median s"], right={3, 4}))

    print()
    # sys.modules is read before json is imported, so that json does not count.
    probe = "import curate.cli, sys; m = sorted(sys.modules); import json; print(json.dumps(m))"
    for tree in trees:
        env = envs[tree, "pyc"]
        out = subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
        ).stdout
        loaded = json.loads(out)
        heavy = [h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in loaded)]
        print(f"{tree}: import curate.cli loads {len(loaded)} modules; heavy: {heavy or 'none'}")
        script_cmd = [str(script)] if script.exists() else ["-m", "curate.cli"]
        probes = {"curate --help": ["--help"], "warm validate": ["validate", "sources/"]}
        for label, extra in probes.items():
            heavy = heavy_imported([*script_cmd, *extra], env)
            print(f"{tree}: {label} imports, of the heavy ones: {heavy or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
