"""Bad input in a tabular source is a finding, never a traceback, and nothing is lost silently.

Each malformed kind is written by hand into its own file, between two good records (real
abstracts of the dev corpus, `openreview:JNN6QHhLHB` and `openreview:QhqQJqe0Wq`), and checked
by ``curate validate`` as a user runs it: exactly one error, of the kind's code, at its file
and line (or row), the good records still checked, exit 1, and no traceback.
"""

from __future__ import annotations

import gzip
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT

from curate.cli import main

SAMPLE = {
    r["id"]: r
    for r in map(json.loads, (ROOT / "tests/data/formats_sample.jsonl").read_text().splitlines())
}
GOOD = [SAMPLE["openreview:JNN6QHhLHB"], SAMPLE["openreview:QhqQJqe0Wq"]]
CONFIG = """
[mapping.jsonl]
text = "abstract"
id = "id"
[mapping.csv]
text = "abstract"
id = "id"
[mapping.tsv]
text = "abstract"
id = "id"
[mapping.parquet]
text = "abstract"
id = "id"
columns = { citations = "int64" }
[mapping.arrow]
text = "abstract"
"""


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def _row(record: dict, sep: str = ",") -> str:
    quoted = '"' + record["abstract"].replace('"', '""') + '"'
    return f"{record['id']}{sep}{quoted}\n"


def jsonl_between(bad: bytes) -> bytes:
    return _line(GOOD[0]) + bad + b"\n" + _line(GOOD[1])


def csv_between(bad: str, sep: str = ",") -> bytes:
    return (f"id{sep}abstract\n" + _row(GOOD[0], sep) + bad + _row(GOOD[1], sep)).encode()


def truncated_gzip() -> bytes:
    whole = gzip.compress(b"".join(_line(r) for r in list(SAMPLE.values())[:40]), mtime=0)
    return whole[: len(whole) * 3 // 5]


def parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


GOOD_ROWS = {"id": [g["id"] for g in GOOD], "abstract": [g["abstract"] for g in GOOD]}
# (file name, bytes, code, line, records that are still checked)
CASES = {
    "not JSON": ("a.jsonl", jsonl_between(b'{"abstract": "cut off'), "invalid-json", 2, 2),
    "not an object": ("a.jsonl", jsonl_between(b'["a", "list"]'), "invalid-json", 2, 2),
    "no text field": ("a.jsonl", jsonl_between(b'{"id": "x", "title": "T"}'), "text-field", 2, 2),
    "text not a string": ("a.jsonl", jsonl_between(b'{"abstract": 42}'), "text-field", 2, 2),
    "text null": ("a.jsonl", jsonl_between(b'{"abstract": null}'), "text-field", 2, 2),
    "not UTF-8": ("a.jsonl", jsonl_between(b'{"abstract": "caf\xe9"}'), "encoding", 2, 2),
    "truncated gzip": ("a.jsonl.gz", truncated_gzip(), "file-truncated", None, None),
    "csv: too many fields": (
        "a.csv", csv_between("x1,an unquoted, comma\n"), "invalid-row", 3, 2,
    ),
    "csv: undoubled quote": (
        "a.csv", csv_between('x1,"he said "no" twice"\n'), "invalid-row", 3, 2,
    ),
    "csv: quote never closed": (
        "a.csv", csv_between('x1,"never closed\n'), "invalid-row", 3, 2,
    ),
    "csv: no text column": ("a.csv", b"id,summary\nx1,one\nx2,two\n", "text-field", 1, 0),
    "tsv: unquoted tab": ("a.tsv", csv_between("x1\tone\ttab\n", "\t"), "invalid-row", 3, 2),
    "parquet: text column of numbers": (
        "a.parquet", parquet(pa.table({"id": ["a", "b"], "abstract": [1, 2]})), "field-type", 0, 0,
    ),
    "parquet: column of the wrong type": (
        "a.parquet", parquet(pa.table({**GOOD_ROWS, "citations": ["many", "few"]})),
        "field-type", 0, 2,
    ),
    "parquet: cut short": (
        "a.parquet", parquet(pa.table(GOOD_ROWS))[:-100], "file-truncated", 0, 0,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_each_malformed_kind_is_one_finding_at_its_place(case, tmp_path, capsys):
    name, data, code, line, records = CASES[case]
    (tmp_path / "curate.toml").write_text(CONFIG)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / name).write_bytes(data)
    status = main(["validate", str(tmp_path / "src"), "--format", "json",
                   "--config", str(tmp_path / "curate.toml"), "--no-cache"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 1 and "Traceback" not in err
    report = json.loads(out)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [(f["code"], f["file"].rsplit("/", 1)[-1]) for f in errors] == [(code, name)]
    if line is not None:
        assert errors[0]["line"] == line
    if records is not None:
        assert report["summary"]["records"] == records


def test_a_truncated_gzip_keeps_the_lines_before_the_cut(tmp_path):
    from curate.ingest import formats
    from validation.config import Config
    from validation.mapping import parse

    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(truncated_gzip())
    config = Config(mapping=parse({"jsonl": {"text": "abstract", "id": "id"}}))
    source = formats.get("jsonl").read(path, config)
    (cut,) = source.findings
    ids = [r.source_id for r in source.records]
    assert ids == [r["id"] for r in list(SAMPLE.values())[: len(ids)]] and 0 < len(ids) < 40
    assert cut.code == "file-truncated" and cut.line == len(ids) + 1
    assert "ends early" in cut.message


MISSPELT = """
[mapping.jsonl]
text = "abstract"
id = "forun"
title = "title"
[mapping.csv]
text = "abstract"
id = "forun"
[mapping.parquet]
text = "abstract"
id = "id"
venue = "venu"
"""


def test_a_mapped_field_no_record_has_is_one_finding_for_its_file(tmp_path, capsys):
    """A misspelt field name (``venue = "venu"``) would leave its column null in every row with
    nothing saying why: one `field-missing` warning per file names it, with the fields the file
    has and the closest of them, and the records are read; a misspelt id (``id = "forun"``)
    is an `id-field` error, since every record would lose the key the user mapped to keep. A
    field that only some records have is an optional field, not a misspelling."""
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "curate.toml").write_text(MISSPELT)
    (src / "a.jsonl").write_bytes(_line(GOOD[0]) + _line(GOOD[1]))  # no 'forun'; titles in both
    (src / "b.csv").write_bytes(csv_between(""))  # columns id, abstract
    venues = {**GOOD_ROWS, "venue": ["ICLR", "ICLR"]}
    (src / "c.parquet").write_bytes(parquet(pa.table(venues)))  # no 'venu', but a 'venue'
    untitled = {k: v for k, v in GOOD[1].items() if k != "title"}
    tmp = tmp_path / "d"
    tmp.mkdir()
    (tmp / "d.jsonl").write_bytes(
        _line({**GOOD[0], "forun": "x1"}) + _line({**untitled, "forun": "x2"})
    )  # 'forun' in both, 'title' in one: nothing to say
    status = main(["validate", str(src), str(tmp), "--format", "json",
                   "--config", str(tmp_path / "curate.toml"), "--no-cache"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 1 and "Traceback" not in err
    report = json.loads(out)
    missing = sorted(
        (f["file"].rsplit("/", 1)[-1], f["code"], f["line"], f["severity"], f["message"])
        for f in report["findings"]
        if f["code"] in ("field-missing", "id-field")
    )
    assert [m[:4] for m in missing] == [
        ("a.jsonl", "id-field", 0, "error"), ("b.csv", "id-field", 0, "error"),
        ("c.parquet", "field-missing", 0, "warning"),
    ]  # fmt: skip
    assert "id field 'forun' (its fields: 'id', 'title', 'abstract'" in missing[0][4]
    assert "id field 'forun' (its fields: 'id', 'abstract')" in missing[1][4]
    assert "'venu' (for venue) (did you mean 'venue'?)" in missing[2][4]
    assert "its fields: 'id', 'abstract', 'venue'" in missing[2][4]
    assert report["summary"]["records"] == 8  # every record still read


def test_a_file_no_record_of_which_has_the_text_field_is_one_finding(tmp_path, capsys):
    """A JSON Lines file beside the sources that is no source (a tool's metadata, a benchmark's
    answer key) gave one `text-field` error per line; it is one for the file, which says how to
    leave it out. A file where only some records lack the field keeps one per record."""
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "curate.toml").write_text(CONFIG)
    key = b"".join(_line({"code": "duplicate", "file": "a.txt", "line": n}) for n in range(1, 41))
    (src / "ground_truth.jsonl").write_bytes(key)
    (src / "mixed.jsonl").write_bytes(b'{"id": "x"}\n{"abstract": ""}\n')  # no field; empty
    status = main(["validate", str(src), "--format", "json",
                   "--config", str(tmp_path / "curate.toml"), "--no-cache"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 1 and "Traceback" not in err
    found = sorted(
        (f["file"].rsplit("/", 1)[-1], f["line"], f["code"])
        for f in json.loads(out)["findings"]
        if f["code"] == "text-field"
    )
    assert found == [
        ("ground_truth.jsonl", 1, "text-field"),
        ("mixed.jsonl", 1, "text-field"), ("mixed.jsonl", 2, "text-field"),
    ]  # fmt: skip
    (one,) = [f for f in json.loads(out)["findings"] if f["file"].endswith("ground_truth.jsonl")]
    assert "no record of the file has the text field 'abstract' (40 read" in one["message"]
    assert "'code', 'file', 'line'" in one["message"]
    assert "--exclude ground_truth.jsonl" in one["message"]


def test_a_raw_control_character_in_a_json_string_is_said_plainly(tmp_path):
    from curate.ingest import formats
    from validation.config import Config
    from validation.mapping import parse

    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": "x1", "abstract": "a tab\there"}\n')
    config = Config(mapping=parse({"jsonl": {"text": "abstract", "id": "id"}}))
    (bad,) = formats.get("jsonl").read(path, config).findings
    assert bad.code == "invalid-json" and bad.line == 1
    assert bad.message == "not JSON: Invalid control character at column 32"  # was "at at"
