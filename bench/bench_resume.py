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
from _common import EXCLUDE_KEY, OUT, baseline_tree, generate_corpus, machine, table


def _cmd(corpus: Path, dist: Path) -> list[str]:
    return [sys.executable, "-m", "curate.cli", "build", str(corpus), "--out", str(dist),
            *EXCLUDE_KEY]  # fmt: skip


def _env(cache: Path, tree: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["CURATE_CACHE_DIR"] = str(cache)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def _build(corpus: Path, dist: Path, cache: Path, tree: Path | None) -> tuple[float, str]:
    if dist.exists():
        shutil.rmtree(dist)  # bench/out is the benchmarks' own folder
    t = time.perf_counter()
    # In the tree's folder (its packages first on sys.path) or beside the corpus: either way
    # the settings are the repository's, found upwards.
    done = subprocess.run(_cmd(corpus, dist), env=_env(cache, tree), cwd=tree or corpus.parent,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"build into {dist} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, done.stderr


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--baseline", default="main", help="the revision to compare with")
    p.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    args = p.parse_args(argv)
    base = OUT / f"resume-{args.records}-s{args.seed}"
    corpus = base / "drops"
    if not (args.reuse and (corpus / "meta.json").is_file()):
        generate_corpus(corpus, args.records, args.seed, ["--preset", "warnings-only"])
    files = sum(1 for f in corpus.iterdir() if f.name.endswith(".txt"))
    print(f"curate build, run again and resumed ({machine()}): {args.records:,} records, "
          f"{files} files")  # fmt: skip
    rows = []
    first = base / "dist-first"
    trees = [(args.baseline, baseline_tree(args.baseline), "base-"), ("this tree", None, "")]
    for name, tree, tag in trees:
        cache = base / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        cold, _ = _build(corpus, base / f"dist-{tag}first", cache, tree)
        warm, said = _build(corpus, base / f"dist-{tag}again", cache, tree)
        reused = re.search(r"\(the scans of (\d+) files? reused\)", said)
        rows.append([name, "first build", f"{cold:.1f}", "", f"dist-{tag}first"])
        rows.append([name, "second build, unchanged", f"{warm:.1f}",
                     reused.group(1) if reused else "0", f"dist-{tag}again"])  # fmt: skip
    cache = base / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    until, kept = _killed_half(corpus, base / "dist-killed", cache, files)
    resumed, said = _build(corpus, base / "dist-resumed", cache, None)
    reused = re.search(r"\(the scans of (\d+) files? reused\)", said)
    rows.append(["this tree", f"killed after {kept} files' scans", f"{until:.1f}", "", ""])
    rows.append(["this tree", "resumed", f"{resumed:.1f}", reused.group(1) if reused else "0",
                 "dist-resumed"])  # fmt: skip
    for row in rows:
        if row[4]:
            differ = _differ(first, base / row[4])
            row[4] = "same bytes" if not differ else f"differ: {', '.join(differ[:3])}"
    print(table(rows, ["code", "build", "wall s", "scans reused", "output vs first"], {2, 3}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
