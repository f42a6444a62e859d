"""CSV and TSV: Python's csv in a named dialect, a row at a time, recovering after bad rows."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import polars as pl
from conftest import ROOT

from curate.ingest import formats
from validation.config import Config
from validation.mapping import parse

RECORDS = [
    json.loads(x) for x in (ROOT / "tests/data/formats_sample.jsonl").read_text().splitlines()
]


def plain(i: int) -> str:
    """A record's first words on one line, with no quote: a cell that needs no quoting."""
    return " ".join(RECORDS[i]["abstract"].split())[:200].replace('"', "'").replace(",", ";")


def read(path: Path, mapping: dict | None = None, name: str = "csv"):
    entry = mapping or {"text": "abstract", "id": "id"}
    return formats.get(name).read(path, Config(mapping=parse({name: entry})))


def test_quoted_newlines_quotes_and_commas_come_back_as_written(tmp_path):
    path = tmp_path / "a.csv"
    pl.DataFrame(RECORDS).write_csv(path)  # written by polars, read by Python's csv
    source = read(path, {"text": "abstract", "id": "id", "title": "title"})
    by_id = {r["id"]: r for r in RECORDS}
    assert [r.row for r in source.records] == list(range(1, len(RECORDS) + 1))
    for record in source.records:
        original = by_id[record.source_id]
        assert record.text == original["abstract"].replace("\r\n", "\n").replace("\r", "\n")
        assert dict(record.extra)["title"] == original["title"]
    assert sum('"' in r.text or "," in r.text or "\n" in r.text for r in source.records) > 100


def test_crlf_rows_and_a_bom_header(tmp_path):
    path = tmp_path / "a.csv"
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["id", "abstract"])
    writer.writerows([[r["id"], r["abstract"]] for r in RECORDS[3:6]])
    path.write_bytes(b"\xef\xbb\xbf" + buffer.getvalue().encode())
    source = read(path)
    assert [r.source_id for r in source.records] == [r["id"] for r in RECORDS[3:6]]
    assert [f.code for f in source.findings] == ["bom"]


def test_a_quote_never_closed_is_reported_and_the_rows_after_it_are_still_read(tmp_path):
    path = tmp_path / "a.csv"
    rows = [f'{RECORDS[i]["id"]},"{plain(i)}"' for i in (1, 2, 3)]
    path.write_text("id,abstract\n" + rows[0] + '\nx,"never closed\n' + "\n".join(rows[1:]) + "\n")
    source = read(path)
    assert [(r.source_id, r.row, r.line) for r in source.records] == [
        (RECORDS[1]["id"], 1, 2), (RECORDS[2]["id"], 3, 4), (RECORDS[3]["id"], 4, 5),
    ]  # fmt: skip
    (bad,) = source.findings
    assert (bad.code, bad.line) == ("invalid-row", 3)
    assert "dialect excel" in bad.message and "quote never closed" in bad.message


def test_the_tsv_dialect_and_a_configured_delimiter_are_named(tmp_path):
    tsv = tmp_path / "a.tsv"
    tsv.write_text("id\tabstract\nx\tone\ttab too many\n")
    (bad,) = read(tsv, name="tsv").findings
    assert "3 fields, the header has 2" in bad.message and "dialect excel_tab" in bad.message
    semi = tmp_path / "b.csv"
    semi.write_text(f"id;abstract\nx;{plain(1).replace(';', ',')}\n")
    source = read(semi, {"text": "abstract", "delimiter": ";"})
    assert [r.text for r in source.records] == [plain(1).replace(";", ",")]


def test_cells_are_read_as_the_declared_types(tmp_path):
    path = tmp_path / "a.csv"
    text = plain(1)
    path.write_text(
        "abstract,year,n,ok,tags\n"
        f'{text},2024,7,true,"[""a"", ""b""]"\n'
        f"{text} again,,,,\n"
        f"{text} third,soon,x,maybe,[1]\n"
    )
    columns = {"n": "int64", "ok": "bool", "tags": "list<string>"}
    source = read(path, {"text": "abstract", "year": "year", "columns": columns})
    first, second, third = source.records
    assert (first.year, dict(first.extra)) == (2024, {"n": 7, "ok": True, "tags": ["a", "b"]})
    assert (second.year, dict(second.extra)) == (None, {"n": None, "ok": None, "tags": None})
    assert dict(third.extra) == {"n": None, "ok": None, "tags": None}
    (bad,) = source.findings  # one finding for the row, naming each field
    assert bad.code == "field-type" and bad.line == 4
    assert all(f"'{name}'" in bad.message for name in ("year", "n", "ok", "tags"))


def test_a_header_that_names_a_field_twice_is_refused(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("abstract,abstract\nx,y\n")
    source = read(path)
    assert not source.records and [f.code for f in source.findings] == ["invalid-row"]
