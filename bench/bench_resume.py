"""A build run again, and a build resumed after a kill: what the kept scans save.

    uv run python bench/bench_resume.py --records 100000 [--seed 0] [--baseline main] [--reuse]

A ``warnings-only`` corpus is generated in ``bench/out/resume-<N>-s<seed>/drops`` (the answer
key left out of the sources, as in bench_build.py). Each build is ``curate build`` in a child
process with the cache on, in a folder of its own (emptied first), into a new ``--out``:

1. for ``--baseline`` (the curate and validation packages at that revision, on PYTHONPATH) and
   for this tree in turn: a first build, then a second build of the unchanged corpus with the
   same cache;
2. for this tree: a first build killed (SIGKILL) once half the files' scans are kept, then the
   build run again with that cache: it scans the other half.

With ``--stages``, instead: a first and a second build of this tree in this process, and the
seconds of each stage (``BuildResult.timings``): what a second build still spends after the
scan.

Wall time comes from the child's start and end. Every output folder is compared with this
tree's first build, byte for byte.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ANSWER_KEY, EXCLUDE_KEY, OUT, baseline_tree, generate_corpus, machine, table


def _cmd(corpus: Path, dist: Path) -> list[str]:
    return [sys.executable, "-m", "curate.cli", "build", str(corpus), "--out", str(dist),
            *EXCLUDE_KEY]  # fmt: skip


def _env(cache: Path, tree: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["CURATE_CACHE_DIR"] = str(cache)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def _build(corpus: Path, dist: Path, cache: Path, tree: Path | None) -> tuple[float, float, str]:
    """One build: its wall, the seconds until its ``validated`` line (the scan and the corpus
    checks; the rest is the decisions, the dedupe plan, assembly, card and report), and its
    stderr."""
    if dist.exists():
        shutil.rmtree(dist)  # bench/out is the benchmarks' own folder
    t = time.perf_counter()
    # In the tree's folder (its packages first on sys.path) or beside the corpus: either way
    # the settings are the repository's, found upwards.
    child = subprocess.Popen(
        _cmd(corpus, dist), env=_env(cache, tree), cwd=tree or corpus.parent,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stderr is not None
    lines, validated = [], 0.0
    for line in child.stderr:
        lines.append(line)
        if line.startswith("curate: validated "):
            validated = time.perf_counter() - t
    wall = time.perf_counter() - t
    said = "".join(lines)
    if child.wait() != 0:
        raise SystemExit(f"build into {dist} failed ({child.returncode}):\n{said[-3000:]}")
    return wall, validated, said


def _times(wall: float, validated: float) -> list[str]:
    return [f"{wall:.1f}", f"{validated:.1f}", f"{wall - validated:.1f}"]


def _reused(said: str) -> str:
    found = re.search(r"\(the scans of (\d+) files? reused\)", said)
    return found.group(1) if found else "0"


def _kept(cache: Path) -> int:
    folder = cache / "scan"
    if not folder.is_dir():
        return 0
    return sum(1 for p in folder.iterdir() if not p.name.startswith(".") and p.is_dir())


def _killed_half(corpus: Path, dist: Path, cache: Path, files: int) -> tuple[float, int]:
    """A first build killed once half the files' scans are kept: its wall until then, and how
    many were kept."""
    t = time.perf_counter()
    child = subprocess.Popen(_cmd(corpus, dist), env=_env(cache, None), cwd=corpus.parent,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    while _kept(cache) < files // 2 and child.poll() is None:
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    return time.perf_counter() - t, _kept(cache)


def _differ(a: Path, b: Path) -> list[str]:
    compared = filecmp.dircmp(a, b)
    out = [*compared.left_only, *compared.right_only]
    out += filecmp.cmpfiles(a, b, compared.common_files, shallow=False)[1]
    for sub in compared.subdirs:
        out += [f"{sub}/{n}" for n in _differ(a / sub, b / sub)]
    return out


def _stages(corpus: Path, base: Path) -> int:
    """Each stage's seconds in a first build and in a second one that reuses every scan."""
    from dataclasses import replace

    from curate.pipeline.build import build
    from curate.settings import load_settings

    settings = load_settings(search_from=corpus.parent)
    checks = replace(settings.checks, exclude=(*settings.checks.exclude, *ANSWER_KEY))
    own = replace(settings, checks=checks)
    cache = base / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    runs = []
    for name in ("first", "again"):
        dist = base / f"dist-stages-{name}"
        shutil.rmtree(dist, ignore_errors=True)
        t = time.perf_counter()
        result = build([corpus], dist, own, cache_dir=cache)
        runs.append({**result.timings, "whole build (wall)": time.perf_counter() - t})
    names = list(dict.fromkeys(k for r in runs for k in r))
    rows = [[k, *(f"{r[k]:,.2f}" if k in r else "" for r in runs)] for k in names]
    print(table(rows, ["stage (BuildResult.timings)", "first s", "second s"], {1, 2}))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--baseline", default="main", help="the revision to compare with")
    p.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    p.add_argument(
        "--stages",
        action="store_true",
        help="instead: a first and a second build in this process, and their stage times "
        "(BuildResult.timings)",
    )
    args = p.parse_args(argv)
    base = OUT / f"resume-{args.records}-s{args.seed}"
    corpus = base / "drops"
    if not (args.reuse and (corpus / "meta.json").is_file()):
        generate_corpus(corpus, args.records, args.seed, ["--preset", "warnings-only"])
    files = sum(1 for f in corpus.iterdir() if f.name.endswith(".txt"))
    print(f"curate build, run again and resumed ({machine()}): {args.records:,} records, "
          f"{files} files")  # fmt: skip
    if args.stages:
        return _stages(corpus, base)
    rows = []
    first = base / "dist-first"
    trees = [(args.baseline, baseline_tree(args.baseline), "base-"), ("this tree", None, "")]
    for name, tree, tag in trees:
        cache = base / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        cold, scan, _ = _build(corpus, base / f"dist-{tag}first", cache, tree)
        rows.append([name, "first build", *_times(cold, scan), "", f"dist-{tag}first"])
        warm, scan, said = _build(corpus, base / f"dist-{tag}again", cache, tree)
        rows.append([name, "second build, unchanged", *_times(warm, scan), _reused(said),
                     f"dist-{tag}again"])  # fmt: skip
    cache = base / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    until, kept = _killed_half(corpus, base / "dist-killed", cache, files)
    resumed, scan, said = _build(corpus, base / "dist-resumed", cache, None)
    rows.append(["this tree", f"killed after {kept} files' scans", f"{until:.1f}", "", "", "", ""])
    rows.append(["this tree", "resumed", *_times(resumed, scan), _reused(said), "dist-resumed"])
    for row in rows:
        if row[-1]:
            differ = _differ(first, base / row[-1])
            row[-1] = "same bytes" if not differ else f"differ: {', '.join(differ[:3])}"
    header = ["code", "build", "wall s", "until validated", "after", "scans reused", "output"]
    print(table(rows, header, {2, 3, 4, 5}))
    size = sum(f.stat().st_size for f in (cache / "scan").rglob("*") if f.is_file())
    spools = sum(f.stat().st_size for f in (cache / "scan").rglob("*.arrow"))
    print(f"kept scans: {size / 2**20:,.1f} MiB, of which spools {spools / 2**20:,.1f} MiB "
          f"({size / args.records:,.0f} bytes a record)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
