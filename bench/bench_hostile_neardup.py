"""Near-duplicate search on hostile input: many templated variants of one abstract, one huge record.

    uv run python bench/bench_hostile_neardup.py [--variants 4000] [--record-mb 10]
                                                 [--tiny 100000] [--jobs 1]

Writes the drops into ``bench/out/hostile-neardup/`` and runs ``curate validate --no-cache`` on
each in a child process, printing its wall time, peak RSS (the largest process: the CLI or one of
its workers) and how many near-duplicate findings it reported. Targets: 4,000 templated
near-duplicates in under 30 s and 1 GB; a 10 MB record in under 1 GB. Run by hand; it prints
its figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT, ROOT, machine, mib, table

SEED = ROOT / "sources" / "000_06b61cfca4c53418.txt"


def base_abstract() -> str:
    """A real ICML 2025 abstract of a seed drop, the one closest to 1,450 characters (the size
    of the variants the issue measured: 2,000 of them made 2.9 MB)."""
    records = [line for line in SEED.read_text(encoding="utf-8").split("\n")[2:] if line.strip()]
    return min(records, key=lambda r: abs(len(r) - 1450))


def templated(n: int) -> list[str]:
    """``n`` variants of one abstract, each with three words replaced by its number: all of
    them pairwise near-duplicates, all in the same LSH buckets (the worst case for pairing)."""
    words = base_abstract().split()
    out = []
    for i in range(n):
        variant = list(words)
        for k in range(3):
            variant[(i * 7 + k * 31) % len(variant)] = f"v{i}x{k}"
        out.append(" ".join(variant))
    return out


def huge_record(megabytes: float) -> str:
    """One record of ``megabytes`` MB of prose-like words in random order (distinct shingles)."""
    vocab = sorted({w for line in SEED.read_text(encoding="utf-8").split() for w in [line]})
    rng = random.Random(0)
    out: list[str] = []
    size = 0
    while size < megabytes * 1_000_000:
        word = rng.choice(vocab)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def tiny(n: int) -> list[str]:
    """``n`` tiny records that differ by one number: many share LSH buckets."""
    return [f"Abstract not available for paper {i} of the session." for i in range(n)]


def write_drop(folder: Path, records: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "drop.txt"
    path.write_text("ICML 2025 Papers\n\n" + "\n\n".join(records) + "\n", encoding="utf-8")
    return path


def run(folder: Path, jobs: int) -> dict:
    """``curate validate`` in a child process; its time, peak RSS and near-duplicate count."""
    cmd = [
        sys.executable,
        "-m",
        "curate.cli",
        "validate",
        str(folder),
        "--no-cache",
        "--jobs",
        str(jobs),
        "--format",
        "json",
    ]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=stdout, stderr=stderr)
        # wait4's usage is the child's and its reaped workers': peak RSS of the largest process
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read(), stderr.read().decode(errors="replace")
    try:
        findings = json.loads(out)["findings"]
    except ValueError:
        findings = []
        print(err.strip().splitlines()[-1:] or "(no output)", file=sys.stderr)
    near = sum(1 for f in findings if f["code"] == "near-duplicate")
    cpu = usage.ru_utime + usage.ru_stime  # less sensitive than wall time to a busy machine
    return {"wall": wall, "cpu": cpu, "peak": usage.ru_maxrss, "near": near, "rc": proc.returncode}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", type=int, default=4000)
    ap.add_argument("--record-mb", type=float, default=10.0)
    ap.add_argument("--tiny", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()

    out = OUT / "hostile-neardup"
    variants = templated(args.variants)
    write_drop(out / "templated", variants)
    write_drop(out / "huge", [huge_record(args.record_mb)])
    write_drop(out / "tiny", tiny(args.tiny))
    size = sum(len(v.encode()) + 2 for v in variants)

    rows = []
    for name, label in (
        ("huge", f"1 record of {args.record_mb:g} MB"),
        ("templated", f"{args.variants:,} templated variants ({size / 1e6:.1f} MB)"),
        ("tiny", f"{args.tiny:,} tiny records"),
    ):
        r = run(out / name, args.jobs)
        peak = mib(r["peak"])
        rows.append(
            [label, f"{r['wall']:.1f} s", f"{r['cpu']:.1f} s", peak, str(r["near"]), str(r["rc"])]
        )
    print(f"# hostile near-duplicate input ({machine()}, --jobs {args.jobs}, no cache)")
    print(
        table(rows, ["input", "wall", "CPU", "peak RSS", "near-dup findings", "exit"], {1, 2, 3, 4})
    )


if __name__ == "__main__":
    main()
