"""How often each record check fires on real abstracts, what it costs, and how right it is.

    uv run python bench/bench_checks.py [--corpus ../shared/corpus/real-dev] [--sample FILE]

Parses every drop of the dev corpus (`drops/*.txt`) with curate's parser and runs each record
check on each record in this process, timing it; prints per code the records it fires on (count
and share of all records) and its CPU time per record. Then runs the same checks on the labelled
sample (`tests/data/record_checks_labelled.jsonl`, written by `make_checks_sample.py` with
labels given by hand) and prints precision and recall of `truncated`, `too-long` and
`placeholder` against those labels, with the ids of every false positive and miss. Run by hand;
it prints its figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, machine, table

from curate.ingest.formats.text import parse_bytes
from validation.config import Config
from validation.records import Record
from validation.registry import checks

LABELS = {"truncated": "truncated", "too-long": "too_long", "placeholder": "placeholder"}


def run_checks(records: list[Record], config: Config) -> tuple[dict[str, set[int]], Counter]:
    """Index of each record every record check fires on, and CPU seconds per check."""
    fired: dict[str, set[int]] = {spec.code: set() for spec in checks("record")}
    seconds: Counter = Counter()
    specs = checks("record")
    clock = time.perf_counter
    for i, record in enumerate(records):  # as the runner does: every check on one record
        for spec in specs:
            t0 = clock()
            hit = any(True for _ in spec.run(record, config))
            seconds[spec.code] += clock() - t0
            if hit:
                fired[spec.code].add(i)
    return fired, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpus/real-dev")
    parser.add_argument(
        "--sample", type=Path, default=ROOT / "tests/data/record_checks_labelled.jsonl"
    )
    args = parser.parse_args()
    config = Config()
    print(f"{machine()}; corpus {args.corpus}")

    records: list[Record] = []
    for path in sorted((args.corpus / "drops").glob("*.txt")):
        records += parse_bytes(path.read_bytes(), path.name, config).records
    n = len(records)
    fired, seconds = run_checks(records, config)
    rows = [
        [code, str(len(hits)), f"{len(hits) / n:.2%}", f"{seconds[code] / n * 1e6:.1f}"]
        for code, hits in fired.items()
    ]
    print(f"\nRecord checks on the whole corpus: {n:,} records (each record through all checks)")
    print(table(rows, ["code", "fires on", "share", "µs/record"], right={1, 2, 3}))
    for code in ("truncated", "too-long", "placeholder", "empty-record", "too-short"):
        for i in sorted(fired[code])[:10]:
            print(f"  {code}: {records[i].file}:{records[i].line}  …{records[i].text[-60:]!r}")

    sample = [json.loads(line) for line in args.sample.read_text("utf-8").splitlines() if line]
    lines = ["Mixed 2024 Papers", ""]
    for item in sample:
        lines += [*item["text"].split("\n"), ""]
    with tempfile.TemporaryDirectory() as tmp:  # parsed as a drop, so merged lines stay lines
        drop = Path(tmp) / "sample.txt"
        drop.write_text("\n".join(lines), encoding="utf-8")
        parsed = parse_bytes(drop.read_bytes(), drop.name, config).records
    assert len(parsed) == len(sample), "every example must parse as one record"
    fired, _ = run_checks(parsed, config)
    print(f"\nLabelled sample: {len(sample)} examples ({args.sample.name})")
    rows = []
    wrong = []
    for code, label in LABELS.items():
        yes = {i for i, item in enumerate(sample) if item["labels"][label]}
        hits = fired[code]
        tp = len(hits & yes)
        precision = f"{tp / len(hits):.3f}" if hits else "n/a"
        rows.append(
            [code, str(len(yes)), str(len(hits)), str(tp), precision, f"{tp / len(yes):.3f}"]
        )
        wrong += [f"  {code} false positive: {sample[i]['id']}" for i in sorted(hits - yes)]
        wrong += [f"  {code} missed: {sample[i]['id']}" for i in sorted(yes - hits)]
    print(table(rows, ["code", "labelled yes", "fired", "right", "precision", "recall"],
                right={1, 2, 3, 4, 5}))  # fmt: skip
    print("\n".join(wrong))


if __name__ == "__main__":
    main()
