"""The engines side by side: the same build on each, byte for byte, and the near-duplicate
search on each, pair for pair.

    uv run python bench/bench_engines.py builds DROPS [--config FILE] [--engines local ray]
        [--repeat N] [--stages]
    uv run python bench/bench_engines.py search DROPS [--config FILE]

``builds`` runs ``curate build DROPS --engine E --no-cache`` for each engine in a fresh child
process (engines interleaved when repeated: local, ray, local, ray), compares every output
folder with the first one byte for byte (every file, ``filecmp`` with ``shallow=False``), and
prints wall time, CPU and peak RSS (``os.wait4``; the largest of the child and the children it
waited for, which for Ray's raylet and workers is not all of them: they are reported by the
cluster, not waited for) and the stage times of ``-v``.

``search`` scans DROPS once as a build does (rows spooled, on the local pool), then runs the
near-duplicate search three ways on the same corpus: in this process
(:func:`validation.corpus.search_corpus`, what a build did before engines searched), on the
local pool and on a local Ray cluster (:func:`curate.dedupe.near.engine_search`, forced onto
the engine whatever the corpus size), and compares the pairs (later, earlier, similarity) and
the survivors of the dedupe plan made from them.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ANSWER_KEY, EXCLUDE_KEY, OUT, ROOT, machine, mib, table


def same_tree(a: Path, b: Path) -> list[str]:
    """The relative paths that differ between two folders (missing on one side included)."""
    out: list[str] = []

    def walk(x: Path, y: Path, rel: str) -> None:
        c = filecmp.dircmp(x, y)
        out.extend(f"{rel}{n}" for n in c.left_only + c.right_only + c.funny_files)
        _, mismatch, errors = filecmp.cmpfiles(x, y, c.common_files, shallow=False)
        out.extend(f"{rel}{n}" for n in mismatch + errors)
        for d in c.common_dirs:
            walk(x / d, y / d, f"{rel}{d}/")

    walk(a, b, "")
    return out


def run_build(drops: Path, out: Path, engine: str, config: str | None) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "curate.cli",
        "-v",
        "build",
        str(drops),
        "--out",
        str(out),
        "--engine",
        engine,
        "--no-cache",
        "--template",
        str(ROOT / "dataset_card.md"),
        *EXCLUDE_KEY,  # a generated corpus's answer key (nothing to leave out elsewhere)
    ]
    if config:
        cmd += ["--config", config]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    lines: list[str] = []
    t0 = time.perf_counter()
    child = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    assert child.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(child.stderr), daemon=True)
    reader.start()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    reader.join()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"build on {engine} failed ({code}):\n{''.join(lines[-20:])}")
    stage_lines = [ln.strip() for ln in lines if "(wall)" in ln]
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss,
        "stages": stage_lines,
    }


def builds(args: argparse.Namespace) -> None:
    root = OUT / "engines"
    root.mkdir(parents=True, exist_ok=True)
    rows, first = [], None
    for rep in range(args.repeat):
        for engine in args.engines:
            out = root / f"{args.drops.name}-{engine}-{rep}"
            shutil.rmtree(out, ignore_errors=True)  # bench/out is the benchmarks' own folder
            r = run_build(args.drops, out, engine, args.config)
            if first is None:
                first, differs = out, []
            else:
                differs = same_tree(first, out)
            rows.append(
                [
                    engine,
                    str(rep),
                    f"{r['wall']:.1f} s",
                    f"{r['cpu']:.1f} s",
                    mib(r["rss"]),
                    "yes" if not differs else f"NO: {differs[:5]}",
                ]
            )
            if args.stages:
                print(f"{engine} #{rep}:", *r["stages"], sep="\n  ")
    print(f"{args.drops} ({machine()}, load {os.getloadavg()[0]:.2f} at the end)")
    print(
        table(
            rows,
            [
                "engine",
                "run",
                "wall",
                "CPU (child)",
                "peak RSS (child)",
                f"same bytes as {first.name if first else '-'}",
            ],
            {2, 3, 4},
        )
    )


def search(args: argparse.Namespace) -> None:
    import numpy as np

    import curate.dedupe.near as near
    from curate.dedupe.plan import plan
    from curate.engine.local import LocalPool
    from curate.engine.ray import RayEngine
    from curate.ingest.discover import discover
    from curate.scan.run import Rows, scan
    from curate.settings import load_settings
    from curate.transform.rows import Cleaning
    from validation.corpus import Corpus, search_corpus

    settings = load_settings(args.config) if args.config else load_settings(search_from="/")
    config = settings.checks
    sources = discover([args.drops], (*config.exclude, *ANSWER_KEY))
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="spool-", dir=OUT) as spool, LocalPool(2) as pool:
        t = time.perf_counter()
        scanned = scan(sources, config, engine=pool, rows=Rows(Path(spool), Cleaning()))
        print(f"scanned {len(scanned.files)} files in {time.perf_counter() - t:.1f} s")
        texts = near.TextSource(
            scanned.spools, [f.path for f in scanned.files], [s.format for s in sources], config
        )
        threshold, size = config.near_duplicate_threshold, config.shingle_size
        ids = [i for f in scanned.files for i in f.ids]

        def corpus() -> Corpus:
            return Corpus([replace(f, sigs=f.sigs.copy()) for f in scanned.files], texts)

        near.PARALLEL_MIN_RECORDS = 0  # onto the engine, whatever the size
        results = {}
        t = time.perf_counter()
        results["one process"] = search_corpus(corpus(), threshold, size)
        times = {"one process": time.perf_counter() - t}
        t = time.perf_counter()
        results["local pool"] = near.engine_search(pool, texts)(corpus(), threshold, size)
        times["local pool"] = time.perf_counter() - t
        ray = RayEngine(2)
        try:
            print(f"ray: {ray.workers} CPUs")  # the cluster starts here, outside the timing
            t = time.perf_counter()
            results["ray"] = near.engine_search(ray, texts)(corpus(), threshold, size)
            times["ray"] = time.perf_counter() - t
        finally:
            ray.close()
    base = results["one process"]
    survivors = {k: plan(ids, v, merge_near=True).survivors for k, v in results.items()}
    rows = []
    for k, v in results.items():
        rows.append(
            [
                k,
                f"{times[k]:.2f} s",
                f"{len(v):,}",
                "yes" if v == base else "NO",
                f"{survivors[k].size:,}",
                "yes" if np.array_equal(survivors[k], survivors["one process"]) else "NO",
            ]
        )
    print(f"{args.drops}: {len(ids):,} records ({machine()}, load {os.getloadavg()[0]:.2f})")
    print(
        table(
            rows,
            ["search", "time", "pairs", "same pairs", "survivors", "same survivors"],
            {1, 2, 4},
        )
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("builds", "search"))
    p.add_argument("drops", type=Path)
    p.add_argument("--config")
    p.add_argument("--engines", nargs="+", default=["local", "ray"])
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--stages", action="store_true", help="print each build's -v stage times")
    args = p.parse_args(argv)
    builds(args) if args.what == "builds" else search(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
