"""Near-duplicate search stays bounded on hostile input and keeps its meaning on ordinary input.

The oracle is written here: word 3-shingles as tuples of lower-cased ``\\w+`` words (the records
used hold no markup, so that is what the comparison form is), Jaccard over Python sets, and every
pair compared. The code under test hashes shingles, buckets by MinHash LSH and compares only
what a bucket offers.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES, seed_records

import validation.corpus
from curate.pipeline.build import build
from curate.pipeline.validate import validate_paths
from curate.settings import Settings
from validation import sketch
from validation.config import Config

CONFIG = Config()
MARKUP = re.compile(r"[$\\*_`\[<&]")


def plain_seeds() -> list[str]:
    """Real seed abstracts without any markup, long enough to edit a few words of."""
    out = [text for path in SEED_FILES for _, text in seed_records(path)]
    return [t for t in out if not MARKUP.search(t) and len(t.split()) > 120]


def oracle_shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def oracle_jaccard(a: str, b: str) -> float:
    x, y = oracle_shingles(a), oracle_shingles(b)
    return len(x & y) / len(x | y)


def edit(text: str, positions: list[int], tag: str) -> str:
    words = text.split()
    for k, p in enumerate(positions):
        words[p % len(words)] = f"{tag}w{k}"
    return " ".join(words)


def write_drop(folder: Path, records: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "drop.txt").write_text(
        "ICML 2025 Papers\n\n" + "\n\n".join(records) + "\n", encoding="utf-8"
    )
    return folder


def line_of(i: int) -> int:
    return 3 + 2 * i  # header, blank line, then one record every two lines


def near_findings(folder: Path) -> dict[int, tuple[int, float]]:
    """later record index -> (related record index, score), from a real validation run."""
    report = validate_paths([folder], CONFIG, jobs=1).report
    out = {}
    for f in report:
        if f.code == "near-duplicate":
            related = int(str(f.related).rpartition(":")[2])
            out[(f.line - 3) // 2] = ((related - 3) // 2, float(f.score))
    return out


def test_small_groups_are_paired_exactly_as_by_comparing_every_pair(tmp_path):
    seeds = plain_seeds()[:6]
    records: list[str] = []
    for s, text in enumerate(seeds):
        records.append(text)
        # a chain: each copy edits two more words of the previous one, so the last copy may be
        # further from the original than the threshold while still near its predecessor
        previous = text
        for c in range(1 + s % 4):
            previous = edit(previous, [7 + 13 * c, 40 + 11 * c], f"s{s}c{c}")
            records.append(previous)
    found = near_findings(write_drop(tmp_path / "drop", records))

    expected = {}
    for later in range(len(records)):
        scores = [(oracle_jaccard(records[e], records[later]), -e) for e in range(later)]
        best = max(scores, default=(0.0, 0))
        if best[0] >= CONFIG.near_duplicate_threshold:
            expected[later] = (-best[1], best[0])
    assert expected, "the test data holds near-duplicates"
    assert found.keys() == expected.keys()
    for later, (related, score) in expected.items():
        assert found[later][0] == related
        assert found[later][1] == pytest.approx(score)


def templated(n: int) -> list[str]:
    base = plain_seeds()[0]
    return [edit(base, [i * 7, i * 7 + 31, i * 7 + 62], f"v{i}") for i in range(n)]


def test_templated_variants_cost_linear_comparisons_and_stay_paired(tmp_path, monkeypatch):
    n = 300
    records = templated(n)
    calls = []
    real = validation.corpus.jaccard_hashes

    def counted(a, b):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(validation.corpus, "jaccard_hashes", counted)
    found = near_findings(write_drop(tmp_path / "drop", records))
    # Enumerating the bucket would compare n(n-1)/2 = 44,850 pairs.
    assert len(calls) <= validation.corpus.EXACT_PER_RECORD * n
    assert sorted(found) == list(range(1, n))  # every variant but the first is reported once
    for later, (related, score) in found.items():
        assert related < later
        assert score == pytest.approx(oracle_jaccard(records[related], records[later]))
        assert score >= CONFIG.near_duplicate_threshold


def test_the_build_merges_every_templated_variant_into_one(tmp_path):
    n = 120
    records = templated(n)
    src = write_drop(tmp_path / "src", records)
    settings = Settings(checks=replace(CONFIG, min_words=1))
    result = build([src], tmp_path / "dist", settings, template=ROOT / "dataset_card.md")
    assert (result.records_in, result.records_out, result.near_merged) == (n, 1, n - 1)
    rows = pq.read_table(tmp_path / "dist" / "data" / "train-00000-of-00001.parquet").to_pylist()
    (row,) = rows
    assert row["abstract_raw"] in records  # one of them, by content (see test_build)
    (placed,) = pq.read_table(tmp_path / "dist" / "positions.parquet").to_pylist()
    assert sorted(s["line"] for s in placed["sources"]) == [line_of(i) for i in range(n)]


def test_a_large_record_is_signed_without_a_shingles_by_permutations_matrix():
    # 200,000 shingles: a 126-column uint64 matrix of them would be 200 MB; rensa keeps one row.
    rng = np.random.default_rng(7)
    shingles = np.unique(rng.integers(0, 2**63, 200_000, dtype=np.uint64))
    sig = sketch.signature(shingles)
    np.testing.assert_array_equal(sketch.signature(shingles[::-1].copy()), sig)
    assert sig.shape == (sketch.NUM_PERM,) and sig.any()
