"""Deduplication on real text: the dev corpus's known same-paper pairs, and nothing else merged.

Builds the real dev corpus (`../shared/corpus/real-dev/drops`, 7,627 abstracts from 7 sources)
with `curate build` in a child process, then reads the Parquet file back and maps every row's
provenance (file, line) to the corpus's record ids. Against `duplicates.tsv` (13 pairs that
are the same paper, found by title or by reading) it prints, for each pair, its word 3-shingle
Jaccard computed here (lower-cased words, no code from `validation/`) and whether the build
merged it; then every merged group whose members have different titles and are not a known
pair, for a person to read: two different papers merged would show up there.

    uv run python bench/bench_dedupe_real.py [--corpus DIR] [--out DIR]

`control-char` is downgraded to a warning for this run (two abstracts of the corpus hold a
control character; the build removes it), so the corpus builds as a whole.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
WORD = re.compile(r"\w+")


def shingles(text: str, k: int = 3) -> set[tuple[str, ...]]:
    words = WORD.findall(text.lower())
    return {tuple(words[i : i + k]) for i in range(max(1, len(words) - k + 1))}


def jaccard(a: str, b: str) -> float:
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def norm_title(title: str) -> str:
    return " ".join(WORD.findall(title.lower()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus" / "real-dev")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "real-dev-build")
    ap.add_argument("--threshold", type=float, default=0.8)
    args = ap.parse_args()

    with gzip.open(args.corpus / "records.jsonl.gz", "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    by_id = {r["id"]: r for r in records}
    flat = defaultdict(list)  # the drop's form of an abstract -> ids, in corpus order
    for r in records:
        flat[" ".join(r["abstract"].split())].append(r["id"])

    # (drop file name, line) -> corpus id: one abstract a line from line 3, a blank between.
    at: dict[tuple[str, int], str] = {}
    taken: dict[str, int] = defaultdict(int)
    drops = sorted((args.corpus / "drops").glob("*.txt"))
    for drop in drops:
        lines = drop.read_text(encoding="utf-8").split("\n")
        for n, line in enumerate(lines, start=1):
            if n > 2 and line.strip():
                ids = flat[line]
                at[(drop.name, n)] = ids[min(taken[line], len(ids) - 1)]
                taken[line] += 1

    args.out.parent.mkdir(parents=True, exist_ok=True)
    config = args.out.parent / "real-dev-config.toml"
    config.write_text('[severity]\ncontrol-char = "warning"\n', encoding="utf-8")
    cmd = [sys.executable, "-m", "curate.cli", "build", *map(str, drops), "--out", str(args.out),
           "--config", str(config), "--no-cache", "-q"]  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:], sep="\n")
        return 1

    table = pq.read_table(args.out / "data")  # every shard
    row_of: dict[str, int] = {}
    groups: list[list[str]] = []
    for i, sources in enumerate(table.column("sources").to_pylist()):
        members = [at[(Path(s["file"]).name, s["line"])] for s in sources]
        groups.append(members)
        for rid in members:
            row_of[rid] = i
    missing = [rid for rid in by_id if rid not in row_of]
    print(f"built {len(records)} records into {table.num_rows} rows in {seconds:.1f} s "
          f"({len(records) / seconds:.0f} records/s, cold, one child process); "
          f"{len(missing)} records in no row (dropped by row policy)")  # fmt: skip

    known = set()
    print(f"\nknown same-paper pairs (duplicates.tsv), merged at threshold {args.threshold}:")
    print(f"{'id_a':28} {'id_b':28} {'jaccard':>7}  merged  expected")
    wrong = 0
    with open(args.corpus / "duplicates.tsv", encoding="utf-8") as fh:
        for pair in csv.DictReader(fh, delimiter="\t"):
            a, b = pair["id_a"], pair["id_b"]
            known.add(frozenset((a, b)))
            j = jaccard(by_id[a]["abstract"], by_id[b]["abstract"])
            merged = a in row_of and row_of.get(a) == row_of.get(b)
            expected = j >= args.threshold
            # Near the threshold our shingles (markup removed, NFKC) and these may disagree.
            flag = "" if merged == expected or abs(j - args.threshold) < 0.05 else "  <-- differs"
            wrong += bool(flag)
            print(f"{a:28} {b:28} {j:7.3f}  {merged!s:6}  {expected!s:8}{flag}")

    suspicious = []
    for members in groups:
        for other in members[1:]:
            first = members[0]
            if frozenset((first, other)) in known:
                continue
            if norm_title(by_id[first]["title"]) != norm_title(by_id[other]["title"]):
                suspicious.append((first, other))
    merged_groups = sum(len(m) > 1 for m in groups)
    print(
        f"\n{merged_groups} rows merge more than one record; {len(suspicious)} merges of "
        "records with different titles not in duplicates.tsv:"
    )
    for a, b in suspicious:
        print(f"  {a} {by_id[a]['title']!r}\n  {b} {by_id[b]['title']!r}  "
              f"(jaccard {jaccard(by_id[a]['abstract'], by_id[b]['abstract']):.3f})")  # fmt: skip
    print(f"\nknown pairs handled other than their similarity says: {wrong}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
