"""Benchmark: one large JSON Lines file scanned on the local engine in parts (a task each) and
as one task: the scan's wall, the main process's CPU and each worker's CPU, interleaved.

Usage::

    uv run python bench/bench_split.py [--mib 100] [--runs 2] [--jobs 2] [--seed 0]

The file is the generator's records (warnings-only) as JSON Lines, as `bench_formats.py`
writes it, in `bench/out/split-<N>-s<seed>/records.jsonl` (kept for the next run). Each run
starts a fresh pool of ``--jobs`` workers and scans the file as `curate validate` does (no
cache): once with ``split_bytes`` at its default (parts of 64 MiB, or of ``--split-mib``) and
once with 0 (one task, so one worker: the wall of one core). A worker's CPU is read from
/proc before the pool is closed.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT, generate_corpus, machine, table
from bench_formats import BYTES_PER_RECORD, to_jsonl

from curate.engine.local import LocalPool
from curate.ingest.discover import discover
from curate.scan.run import scan
from validation.config import Config
from validation.mapping import parse

TICK = os.sysconf("SC_CLK_TCK")


def worker_cpu(pool: LocalPool) -> list[float]:
    """Each worker's user + system CPU seconds so far."""
    out = []
    processes = getattr(pool._pool, "_processes", {}) if pool._pool is not None else {}
    for pid in sorted(processes):
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        out.append((int(fields[11]) + int(fields[12])) / TICK)
    return out


def one(jsonl: Path, split_bytes: int, jobs: int) -> dict:
    config = Config(mapping=parse({"jsonl": {"text": "abstract", "id": "id"}}))
    sources = discover([jsonl], ())
    pool = LocalPool(jobs)
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    try:
        scanned = scan(sources, config, engine=pool, split_bytes=split_bytes)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        workers = worker_cpu(pool)
    finally:
        pool.close()
    main = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    records, planning = scanned.files[0].n_records, scanned.timings["planning parts"]
    return {"wall": wall, "main": main, "workers": workers, "load": load,
            "records": records, "planning": planning}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", type=float, default=100.0)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--split-mib", type=float, default=64.0)
    args = p.parse_args(argv)
    records = int(args.mib * 2**20 / BYTES_PER_RECORD)
    folder = OUT / f"split-{records}-s{args.seed}"
    jsonl = folder / "records.jsonl"
    if not jsonl.exists():
        folder.mkdir(parents=True, exist_ok=True)
        generate_corpus(folder / "drops", records, args.seed, ["--preset", "warnings-only"])
        to_jsonl(folder / "drops", jsonl)
    size = jsonl.stat().st_size
    print(f"{machine()}; JSONL {size / 2**20:.0f} MiB ({size:,} bytes), {args.jobs} workers")
    split = int(args.split_mib * 2**20)
    rows = []
    for _ in range(args.runs):
        for label, split_bytes in (("parts", split), ("one task", 0)):
            got = one(jsonl, split_bytes, args.jobs)
            cpu = " + ".join(f"{c:.1f}" for c in got["workers"])
            rows.append([label, f"{got['records']:,}", f"{got['wall']:.1f} s",
                         f"{got['main']:.1f} s", f"{got['planning']:.2f} s", cpu,
                         f"{got['load']:.1f}"])  # fmt: skip
            print(rows[-1], flush=True)
    header = ["scan", "records", "wall", "main CPU", "planning", "workers' CPU (s)", "load"]
    print(table(rows, header, right={1, 2, 3, 4}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
