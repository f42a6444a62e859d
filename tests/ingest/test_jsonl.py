"""JSON Lines and JSON arrays: each record at its line, streamed, read through the mapping."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import ROOT

from curate.ingest import formats
from curate.ingest.formats import fields
from validation.config import Config
from validation.mapping import parse

RECORDS = [
    json.loads(x) for x in (ROOT / "tests/data/formats_sample.jsonl").read_text().splitlines()
]
CONFIG = Config(mapping=parse({"jsonl": {"text": "abstract", "id": "id", "title": "title"}}))


def read(path: Path, config: Config = CONFIG):
    return formats.get("jsonl").read(path, config)


def test_every_record_keeps_its_text_id_title_and_line(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS))
    source = read(path)
    assert [r.line for r in source.records] == list(range(1, len(RECORDS) + 1))
    assert [r.source_id for r in source.records] == [r["id"] for r in RECORDS]
    assert [dict(r.extra)["title"] for r in source.records] == [r["title"] for r in RECORDS]
    # the text as found, a CR read as a line break (one warning for the file, as in a drop)
    expected = [r["abstract"].replace("\r\n", "\n").replace("\r", "\n") for r in RECORDS]
    assert [r.text for r in source.records] == expected
    assert [(f.code, f.severity) for f in source.findings] == [("line-endings", "warning")]
    assert source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_large_file_comes_in_batches_with_the_same_records(tmp_path, monkeypatch):
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    monkeypatch.setattr(fields, "BATCH_RECORDS", 40)
    parts = list(formats.parts("jsonl", path, CONFIG))
    assert [len(p.records) for p in parts] == [40, 40, 40, 15]
    assert [p.sha256 != "" for p in parts] == [False, False, False, True]
    assert [r.line for p in parts for r in p.records] == list(range(1, 136))


def test_blank_lines_are_no_records_and_a_bom_is_a_warning(tmp_path):
    path = tmp_path / "a.jsonl"
    one, two = (json.dumps(r) for r in RECORDS[1:3])
    path.write_bytes(b"\xef\xbb\xbf" + f"{one}\n\n   \n{two}\n".encode())
    source = read(path)
    assert [r.line for r in source.records] == [1, 4]
    assert [f.code for f in source.findings] == ["bom"]


def test_a_line_over_the_limit_is_skipped_without_being_held(tmp_path):
    path = tmp_path / "a.jsonl"
    long = json.dumps({"abstract": "word " * 5000})
    path.write_text(f"{json.dumps(RECORDS[1])}\n{long}\n{json.dumps(RECORDS[2])}\n")
    source = read(path, Config(mapping=CONFIG.mapping, max_file_bytes=10_000))
    assert [r.line for r in source.records] == [1, 3]
    (too_long,) = source.findings
    assert (too_long.code, too_long.line) == ("record-too-large", 2)


def test_a_json_array_gives_each_object_at_the_line_it_starts_on(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(RECORDS[:3], indent=2))
    source = read(path)
    starts = [i + 1 for i, line in enumerate(path.read_text().splitlines()) if line == "  {"]
    assert [r.line for r in source.records] == starts
    assert [r.source_id for r in source.records] == [r["id"] for r in RECORDS[:3]]


def test_a_broken_array_keeps_the_objects_before_the_break(tmp_path):
    path = tmp_path / "a.json"
    good = json.dumps(RECORDS[1])
    path.write_text(f'[\n{good},\n{good[:-1]} "oops"}},\n{good}\n]\n')
    source = read(path)
    assert [r.line for r in source.records] == [2]
    (bad,) = source.findings
    assert (bad.code, bad.line) == ("invalid-json", 3)


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        ("{one}\n{two}\n", [1, 2]),  # JSON Lines under a .json name
        ('{{"id": "a", "title": "A", "abstract": {text}}}', [1]),  # one object
    ],
)
def test_a_json_file_that_is_no_array(tmp_path, content, lines):
    path = tmp_path / "a.json"
    one, two = (json.dumps(r) for r in RECORDS[1:3])
    path.write_text(content.format(one=one, two=two, text=json.dumps(RECORDS[1]["abstract"])))
    source = read(path)
    assert [r.line for r in source.records] == lines and not source.findings


def test_the_metadata_of_a_saved_dataset_is_no_source():
    assert formats.claim("state.json") is None and formats.claim("dataset_info.json") is None
    assert formats.claim("records.json") == "jsonl" == formats.claim("x.jsonl.gz")


@pytest.mark.parametrize("content", [b"", b"\n\n", b"\xef\xbb\xbf\n"])
def test_a_file_without_rows_is_an_empty_file(tmp_path, content):
    path = tmp_path / "a.jsonl"
    path.write_bytes(content)
    source = read(path)
    assert not source.records and "empty-file" in [f.code for f in source.findings]
