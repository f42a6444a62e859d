"""Parquet and Arrow files, and the Hugging Face dataset folders made of them: a record per row,
read a batch at a time, only the mapped columns, each checked once for its type."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
from conftest import ROOT

from curate.ingest import formats
from curate.ingest.discover import discover
from curate.ingest.formats import fields
from validation.config import Config
from validation.mapping import parse

RECORDS = [
    json.loads(x) for x in (ROOT / "tests/data/formats_sample.jsonl").read_text().splitlines()
]
MAPPING = {"text": "abstract", "id": "id", "title": "title"}


def config(**entry) -> Config:
    return Config(mapping=parse({n: entry or MAPPING for n in ("parquet", "arrow")}))


def test_rows_come_a_batch_at_a_time_across_row_groups(tmp_path, monkeypatch):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.Table.from_pylist(RECORDS), path, row_group_size=30)
    monkeypatch.setattr(fields, "BATCH_RECORDS", 50)
    parts = list(formats.parts("parquet", path, config()))
    assert [len(p.records) for p in parts] == [50, 50, 35]
    records = [r for p in parts for r in p.records]
    assert [(r.line, r.row) for r in records] == [(i, i) for i in range(1, 136)]
    assert [r.source_id for r in records] == [r["id"] for r in RECORDS]
    assert [dict(r.extra) for r in records] == [{"title": r["title"]} for r in RECORDS]


def test_integer_ids_years_and_a_column_of_another_type(tmp_path):
    path = tmp_path / "a.parquet"
    texts = [RECORDS[i]["abstract"] for i in range(3)]
    table = pa.table({"abstract": texts, "id": [7, 8, 9], "year": pa.array([2024, None, 2025],
                      pa.int16()), "title": [1.5, 2.5, 3.5]})  # fmt: skip
    source = formats.get("parquet").read(path_of(table, path), config(**MAPPING, year="year"))
    assert [(r.source_id, r.year) for r in source.records] == [
        ("7", 2024),
        ("8", None),
        ("9", 2025),
    ]
    assert [dict(r.extra) for r in source.records] == [{"title": None}] * 3
    (bad,) = source.findings  # once for the file, not once a row
    assert (bad.code, bad.line) == ("field-type", 0) and "'title' is double" in bad.message


def path_of(table: pa.Table, path: Path) -> Path:
    pq.write_table(table, path)
    return path


def test_a_file_without_the_text_column_names_the_columns_it_has(tmp_path):
    path = path_of(pa.table({"summary": ["x"]}), tmp_path / "a.parquet")
    source = formats.get("parquet").read(path, config())
    (bad,) = source.findings
    assert bad.code == "text-field" and "'summary'" in bad.message and not source.records


def test_arrow_files_in_both_ipc_formats(tmp_path):
    table = pa.Table.from_pylist(RECORDS[:10])
    for kind, opener in (("stream", ipc.new_stream), ("file", ipc.new_file)):
        path = tmp_path / f"{kind}.arrow"
        with opener(path, table.schema) as writer:
            writer.write_table(table, max_chunksize=4)
        source = formats.get("arrow").read(path, config())
        assert [r.source_id for r in source.records] == [r["id"] for r in RECORDS[:10]], kind
        assert not source.findings


def test_a_saved_dataset_dict_is_read_split_by_split_and_its_metadata_is_left_alone(tmp_path):
    folder = tmp_path / "saved"
    data = datasets.DatasetDict(
        train=datasets.Dataset.from_list(RECORDS[:20]),
        test=datasets.Dataset.from_list(RECORDS[20:30]),
    )
    data.save_to_disk(str(folder))
    found = discover([folder])
    assert {s.format for s in found} == {"arrow"}
    assert sorted(s.name.split("/")[0] for s in found) == ["test", "train"]
    ids = [r.source_id for s in found for r in formats.get("arrow").read(s.path, config()).records]
    assert sorted(ids) == sorted(r["id"] for r in RECORDS[:30])


def test_a_damaged_row_group_is_one_finding_and_the_other_groups_are_read(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.Table.from_pylist(RECORDS), path, row_group_size=50, compression="snappy")
    data = bytearray(path.read_bytes())
    chunk = pq.ParquetFile(path).metadata.row_group(1).column(2)  # `abstract`, rows 51-100
    assert chunk.path_in_schema == "abstract"
    at = chunk.dictionary_page_offset
    data[at : at + 16] = b"\xff" * 16  # its page header, by hand
    path.write_bytes(bytes(data))
    source = formats.get("parquet").read(path, config())
    assert [r.row for r in source.records] == [*range(1, 51), *range(101, 136)]
    (bad,) = source.findings
    assert (bad.code, bad.line) == ("file-truncated", 51) and "rows 51 to 100" in bad.message
