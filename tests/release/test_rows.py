"""A release's rows held as Arrow: a comparison makes Python rows of only the records that
differ, ids are matched across files and refused when repeated, and a column's values are
compared as they always were (a source's places are no change; a type changed is compared by
value).

The records are real abstracts from the dev corpus (tests/data/formats_sample.jsonl, with
their ids).
"""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT

from curate import release
from curate.errors import ReleaseError
from curate.release import rows
from curate.release.load import parquet_schema

SAMPLE = ROOT / "tests" / "data" / "formats_sample.jsonl"
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
EDITED = "arXiv:2504.11526"  # "We conduct high-resolution wind-tunnel simulations …"
SOURCES = pa.list_(pa.struct([
    ("file", pa.string()), ("line", pa.int32()), ("row", pa.int32()), ("match", pa.string()),
    ("similarity", pa.float64()),
]))  # fmt: skip
SCHEMA = pa.schema([
    ("id", pa.string()), ("abstract", pa.string()), ("abstract_raw", pa.string()),
    ("year", pa.int32()), ("sources", SOURCES),
])  # fmt: skip


def _rows(shift: int = 0) -> list[dict]:
    """One row per sample record, its source at line ``i + 1 + shift`` of papers.jsonl."""
    return [
        {"id": r["id"], "abstract": " ".join(r["abstract"].split()), "abstract_raw": r["abstract"],
         "year": 2025, "sources": [{"file": "papers.jsonl", "line": i + 1 + shift, "row": None,
                                    "match": "original", "similarity": None}]}
        for i, r in enumerate(RECORDS)
    ]  # fmt: skip


def _stored(table: pa.Table) -> rows.StoredRows:
    """``table`` as two Parquet files of row groups of 16 rows, so that the windows a
    comparison decodes cross both."""
    files = []
    for i, part in enumerate((table.slice(0, 40), table.slice(40))):
        sink = pa.BufferOutputStream()
        pq.write_table(part, sink, row_group_size=16)
        files.append((f"part-{i}.parquet", sink.getvalue()))
    return rows.StoredRows(files, "test")


def _release(label: str, rows_: list[dict], schema: pa.Schema = SCHEMA) -> release.Release:
    table = pa.Table.from_pylist(rows_, schema)
    return release.Release(label, _stored(table), parquet_schema(table.schema))


@pytest.fixture
def materialised(monkeypatch) -> list[str]:
    """The ids of every row a comparison turns into a Python dict."""
    seen: list[str] = []
    take = rows.StoredRows.take

    def recording(table, indices, columns=None):
        out = take(table, indices, columns)
        seen.extend(r["id"] for r in out)
        return out

    monkeypatch.setattr(rows.StoredRows, "take", recording)
    return seen


def test_a_diff_where_one_row_of_many_differs_makes_python_rows_of_that_row_only(materialised):
    """Every record moved one line down and one abstract edited: one change, the others
    counted as moved, and only the edited record's two rows ever become Python values."""
    new = _rows(shift=1)
    edited = next(r for r in new if r["id"] == EDITED)
    edited["abstract"] = edited["abstract"].replace("high-resolution", "low-resolution", 1)
    diff = release.diff_releases(_release("old", _rows()), _release("new", new), metadata=[])
    assert [(c.id, c.columns) for c in diff.changed] == [(EDITED, ["abstract"])]
    assert "low-resolution" in diff.changed[0].after
    assert diff.added == [] and diff.removed == [] and diff.edited == []
    assert diff.moved == len(RECORDS) - 1
    assert materialised == [EDITED, EDITED]


def test_the_same_rows_in_another_order_are_no_change(materialised):
    """Matched by id, not by place: shuffled rows are the same release."""
    shuffled = _rows()
    random.Random(7).shuffle(shuffled)
    diff = release.diff_releases(_release("old", _rows()), _release("new", shuffled))
    assert diff.level is None and diff.moved == 0
    assert materialised == []


def test_a_change_inside_sources_is_a_change_but_its_places_are_not():
    new = _rows(shift=3)
    new[5]["sources"][0]["match"] = "exact-duplicate-kept"
    new[9]["sources"][0]["row"] = 12  # a place: no change of the record
    diff = release.diff_releases(_release("old", _rows()), _release("new", new))
    assert [(c.id, c.columns) for c in diff.changed] == [(RECORDS[5]["id"], ["sources"])]


def test_a_column_whose_type_changed_is_compared_by_value():
    """``year`` int32 → int64 holds the same values: a schema change, no row change; as text
    it holds other values ("2025" is not 2025), so every row changed."""
    wider = SCHEMA.set(SCHEMA.get_field_index("year"), pa.field("year", pa.int64()))
    texts = SCHEMA.set(SCHEMA.get_field_index("year"), pa.field("year", pa.string()))
    old = _release("old", _rows())
    same = release.diff_releases(old, _release("new", _rows(), wider))
    assert same.changed == [] and same.schema == ["column `year` type int32 → int64"]
    as_text = [{**r, "year": "2025"} for r in _rows()]
    other = release.diff_releases(old, _release("new", as_text, texts))
    assert len(other.changed) == len(RECORDS)
    assert {tuple(c.columns) for c in other.changed} == {("year",)}


def test_added_and_removed_records_are_the_ids_one_side_lacks(materialised):
    old, new = _rows()[:100], _rows()[30:]
    diff = release.diff_releases(_release("old", old), _release("new", new))
    assert [k for k, _ in diff.added] == sorted(r["id"] for r in new[70:])
    assert [k for k, _ in diff.removed] == sorted(r["id"] for r in old[:30])
    assert sorted(materialised) == sorted(r["id"] for r in old[:30] + new[70:])


def _shards(folder: Path, *tables: pa.Table) -> Path:
    (folder / "data").mkdir(parents=True)
    for i, table in enumerate(tables):
        pq.write_table(table, folder / "data" / f"train-{i:05d}-of-{len(tables):05d}.parquet")
    return folder


def test_an_id_repeated_across_shards_is_refused_naming_the_first_repeat(tmp_path):
    """The first row, in file order, whose id came before: openreview:… (not arXiv:…, the
    smaller id, repeated later)."""
    table = pa.Table.from_pylist(_rows(), SCHEMA)
    by_id = {r["id"]: i for i, r in enumerate(table.to_pylist())}
    first = table.take([by_id["openreview:Syjha0gAZ"], by_id[EDITED]])
    second = table.take([by_id["neurips2018:row0533"], by_id["openreview:Syjha0gAZ"],
                         by_id[EDITED]])  # fmt: skip
    folder = _shards(tmp_path / "rel", first, second)
    with pytest.raises(ReleaseError) as caught:
        release.load_release(folder)
    assert str(caught.value) == f"{folder}: id openreview:Syjha0gAZ occurs more than once"


def test_shards_of_other_schemas_are_refused(tmp_path):
    table = pa.Table.from_pylist(_rows(), SCHEMA)
    folder = _shards(tmp_path / "rel", table.slice(0, 50), table.slice(50).drop_columns(["year"]))
    with pytest.raises(ReleaseError) as caught:
        release.load_release(folder)
    assert str(caught.value) == (
        f"{folder}: train-00001-of-00002.parquet has another schema than "
        "train-00000-of-00002.parquet"
    )


def test_stored_rows_read_windows_and_take_rows_across_files_and_row_groups():
    table = pa.Table.from_pylist(_rows(), SCHEMA)
    stored = _stored(table)
    assert stored.num_rows == len(RECORDS)
    assert stored.column("id", 10, 70).to_pylist() == table.column("id")[10:70].to_pylist()
    assert stored.read(["year"], 133).num_rows == 2
    picked = [100, 3, 47, 16, 15, 134, 0]
    assert stored.take(np.array(picked)) == table.take(picked).to_pylist()


def test_shards_are_one_release_and_rows_of_gives_only_what_is_asked(tmp_path):
    table = pa.Table.from_pylist(_rows(), SCHEMA)
    loaded = release.load_release(_shards(tmp_path / "rel", table.slice(0, 70), table.slice(70)))
    assert loaded.summary()["rows"] == len(RECORDS)
    asked = loaded.rows_of([EDITED, "openreview:Syjha0gAZ", "no-such-id"], ["abstract_raw", "x"])
    assert set(asked) == {EDITED, "openreview:Syjha0gAZ"}
    assert set(asked[EDITED]) == {"id", "abstract_raw"}
    assert asked[EDITED]["abstract_raw"].startswith("We conduct high-resolution wind-tunnel")
    # A release pickles as its files' bytes (it was a dict per row, and pickled as one).
    again = pickle.loads(pickle.dumps(loaded))
    assert again.rows_of([EDITED], ["abstract_raw"]) == loaded.rows_of([EDITED], ["abstract_raw"])


def test_arrow_finds_exactly_the_pairs_python_finds_different():
    """Nested values compared in Arrow as Python compares them: a null list is not an empty
    one, a null item counts, a null struct equals a null struct, -0.0 equals 0.0, a NaN
    equals nothing (two NaNs read back are two objects, and ``nan != nan``)."""
    nan = float("nan")
    item = pa.struct([("file", pa.string()), ("score", pa.float64())])
    kind = pa.list_(item)
    pairs = [
        ([{"file": "a", "score": 0.5}], [{"file": "a", "score": 0.5}]),
        ([{"file": "a", "score": 0.5}], [{"file": "b", "score": 0.5}]),
        (None, []),
        (None, None),
        ([], []),
        ([None], [None]),
        ([None], [{"file": None, "score": None}]),
        ([{"file": "a", "score": -0.0}], [{"file": "a", "score": 0.0}]),
        ([{"file": "a", "score": nan}], [{"file": "a", "score": nan}]),
        ([{"file": "a", "score": 1.0}], [{"file": "a", "score": 1.0}, {"file": "a", "score": 1.0}]),
        ([{"file": "x", "score": None}, {"file": "y", "score": 2.0}],
         [{"file": "x", "score": None}, {"file": "y", "score": 2.0}]),
        ([{"file": "x", "score": None}, {"file": "y", "score": 2.0}],
         [{"file": "x", "score": 0.0}, {"file": "y", "score": 2.0}]),
    ]  # fmt: skip
    old = pa.table({"id": [str(i) for i in range(len(pairs))],
                    "parts": pa.array([a for a, _ in pairs], kind)})  # fmt: skip
    new = pa.table({"id": old.column("id"), "parts": pa.array([b for _, b in pairs], kind)})
    matched = rows.match(old.column("id"), new.column("id"))
    found = rows.differing(_stored(old), _stored(new), matched, ["parts"]).tolist()
    read = zip(old.column("parts").to_pylist(), new.column("parts").to_pylist(), strict=True)
    python = [i for i, (a, b) in enumerate(read) if a != b]  # each NaN read is its own object
    assert python == [1, 2, 6, 8, 9, 11]
    assert found == python
