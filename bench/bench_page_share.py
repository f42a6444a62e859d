"""The report's share of a small build: CPU of ``_write_page`` (report.html) in a serial build.

    uv run python bench/bench_page_share.py [--records 5000] [--seed 0] [--runs 3] [--reuse]
        [--baseline REV]

One generated corpus (bench/generate.py ``--preset warnings-only``). Each run is a fresh child
process that builds it with ``--engine serial --no-cache`` in-process (``curate.cli.main``):
the process's CPU time (the interpreter's start and imports included) and that of
``curate.pipeline.build._write_page``, with its word diffs (``curate.report.html._diff``) and
the template's compilation (``curate.report.html._template``, where the tree has it, else
jinja2's ``Environment.from_string``, which the card's template also calls) apart. With
``--baseline REV`` the tree of REV runs alternately with this one (A, B, A, B), each on
``PYTHONPATH``. CPU time, not cProfile: a profiler's cost per call inflates the Python-heavy
page several times beside the build's numpy and Arrow work.

Prints its figures (each tree's runs, and the best share); asserts nothing. Writes only under
bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import EXCLUDE_KEY, OUT, ROOT, baseline_tree, generate_corpus, machine


def child(corpus: Path, out: Path) -> None:
    from jinja2 import Environment

    import curate.pipeline.build as build
    import curate.report.html as page

    spent: dict[str, float] = {}

    def timed(name: str, func):
        def wrapper(*args, **kwargs):
            t = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - t

        return wrapper

    build._write_page = timed("page", build._write_page)
    page._diff = timed("diffs", page._diff)
    if hasattr(page, "_template"):
        page._template = timed("template", page._template)
    Environment.from_string = timed("from_string", Environment.from_string)
    from curate.cli import main

    shutil.rmtree(out, ignore_errors=True)  # bench/out is the benchmarks' own folder
    args = ["build", str(corpus), "--out", str(out), "--no-cache", "-q", "--engine", "serial"]
    code = main([*args, *EXCLUDE_KEY])
    assert code == 0, f"the build failed ({code})"
    # The process's CPU since it started: the interpreter's start and every import included.
    print(json.dumps({"total": time.process_time(), **spent}))


def run(tree: Path, corpus: Path, out: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"PYTHONPATH": str(tree)}
    cmd = [sys.executable, __file__, "--child", str(corpus), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    parser.add_argument("--baseline", metavar="REV", help="also run the tree of REV")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return 0
    corpus = OUT / f"page-share-{args.records}-s{args.seed}"
    if not (args.reuse and (corpus / "meta.json").is_file()):
        generate_corpus(corpus, args.records, args.seed, ["--preset", "warnings-only"])
    trees = {"this tree": ROOT}
    if args.baseline:
        trees[args.baseline] = baseline_tree(args.baseline)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, tree in trees.items():
            runs[name].append(run(tree, corpus, OUT / "page-share-build"))
    load = os.getloadavg()
    print(f"# bench_page_share: {args.records:,} records, seed {args.seed}; {machine()}")
    print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print("CPU s of the build process / of _write_page (its share): diffs, template compile")
    for name, done in runs.items():
        for got in done:
            compile_s = got.get("template", got.get("from_string", 0.0))
            share = got["page"] / got["total"]
            print(f"{name}: {got['total']:.3f} / {got['page']:.3f} ({share:.2%}): "
                  f"diffs {got.get('diffs', 0.0):.3f}, template {compile_s:.3f}")  # fmt: skip
        best = min(done, key=lambda g: g["page"] / g["total"])
        median = sorted(g["page"] / g["total"] for g in done)[len(done) // 2]
        print(f"{name}: best share {best['page'] / best['total']:.2%}, median {median:.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
