"""Records that crashed the whole run (exit 3, no file or line, every other finding lost) are
one finding each at their file and line or row; the good records around them, and the other
files, are still checked, and the run exits 1.

Every reader gets every hostile value it can carry: JSON Lines, a JSON array, a CSV cell read
as JSON (a list column) or as a number, and Parquet and Arrow string columns whose bytes are
not UTF-8 (Arrow does not check what a writer puts there).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from hostile import GOOD, SAMPLE, errors, validate

DEEP = "[" * 100_000 + "]" * 100_000
LONG_INT = "9" * 5_000
FLOAT_BOMB = "9" * 400


def _jsonl(bad: str) -> bytes:
    lines = [json.dumps(GOOD[0]), bad, json.dumps(GOOD[1])]
    return ("\n".join(lines) + "\n").encode()


def _array(bad: str) -> bytes:
    """A JSON array on one line, as ``json.dump(records, f)`` writes it."""
    return ("[" + ", ".join([json.dumps(GOOD[0]), bad, json.dumps(GOOD[1])]) + "]").encode()


def _csv(bad_cells: str) -> bytes:
    def row(r: dict) -> str:
        return r["id"] + ',"' + r["abstract"].replace('"', '""') + '",1.5,[]\n'

    return ("id,abstract,score,tags\n" + row(GOOD[0]) + bad_cells + row(GOOD[1])).encode()


# A third real abstract (arXiv:2504.16662), so a record that is read is no duplicate.
ABSTRACT = json.dumps(SAMPLE["arXiv:2504.16662"]["abstract"])
JSON_CASES = {
    "nested 100,000 deep": (f'{{"abstract": {ABSTRACT}, "tags": {DEEP}}}', "invalid-json"),
    "an integer of 5,000 digits": (f'{{"abstract": {ABSTRACT}, "n": {LONG_INT}}}', "invalid-json"),
    "a lone \\ud800 escape": ('{"abstract": "a lone \\ud800 in the text"}', "encoding"),
    "400 digits in a float64 field": (
        f'{{"abstract": {ABSTRACT}, "score": {FLOAT_BOMB}}}', "field-type",
    ),
    "a lone surrogate in a list": (
        f'{{"abstract": {ABSTRACT}, "tags": ["\\udfff"]}}', "field-type",
    ),
}  # fmt: skip


@pytest.mark.parametrize("shape", ["jsonl", "json array on one line"])
@pytest.mark.parametrize("case", JSON_CASES, ids=list(JSON_CASES))
def test_a_hostile_json_record_is_one_finding_and_the_rest_is_checked(
    case, shape, tmp_path, capsys
):
    bad, code = JSON_CASES[case]
    src = tmp_path / "src"
    src.mkdir()
    name = "a.jsonl" if shape == "jsonl" else "a.json"
    (src / name).write_bytes(_jsonl(bad) if shape == "jsonl" else _array(bad))
    (src / "b.jsonl").write_bytes(b'{"abstract": 1}\n')  # another file, still checked
    status, report = validate(src, capsys)
    assert status == 1
    found = errors(report)
    line = 2 if shape == "jsonl" else 1
    assert (code, name, line) in found and ("text-field", "b.jsonl", 1) in found
    mine = [f for f in found if f[1] == name]
    assert len(mine) == 1, mine
    # The good records on both sides are read, and the hostile one too when only a field of
    # it is bad; in an array, a value the decoder cannot hold ends the array (where the next
    # element starts is not known), so only the record before it is kept.
    kept = {"field-type": 3, "encoding": 2, "invalid-json": 2 if shape == "jsonl" else 1}
    assert report["summary"]["records"] == kept[code]


CSV_CASES = {
    "a list cell nested 100,000 deep": (f'x1,"a cell of its own text",1,"{DEEP}"\n', "field-type"),
    "a list cell with a 5,000-digit integer": (
        f'x1,"a cell of its own text",1,"[{LONG_INT}]"\n', "field-type",
    ),
    "a list cell with a lone surrogate": (
        'x1,"a cell of its own text",1,"[""\\ud800""]"\n', "field-type",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CSV_CASES, ids=list(CSV_CASES))
def test_a_hostile_csv_cell_is_one_finding_at_its_line(case, tmp_path, capsys):
    cells, code = CSV_CASES[case]
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.csv").write_bytes(_csv(cells))
    status, report = validate(src, capsys)
    assert status == 1
    assert errors(report) == [(code, "a.csv", 3)]
    assert report["summary"]["records"] == 3


def _not_utf8_column() -> pa.Table:
    texts = [GOOD[0]["abstract"].encode(), b"caf\xff " + GOOD[1]["abstract"].encode(),
             GOOD[1]["abstract"].encode()]  # fmt: skip
    return pa.table({"abstract": pa.array(texts, pa.binary()).view(pa.string())})


@pytest.mark.parametrize("name", ["a.parquet", "a.arrow"])
def test_a_string_column_that_is_not_utf8_is_one_finding_at_its_row(name, tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    table = _not_utf8_column()
    if name.endswith(".parquet"):
        pq.write_table(table, src / name)
    else:
        with ipc.new_stream(src / name, table.schema) as writer:
            writer.write_table(table)
    (src / "b.jsonl").write_bytes(b'{"abstract": 1}\n')
    status, report = validate(src, capsys)
    assert status == 1
    assert errors(report) == [("encoding", name, 2), ("text-field", "b.jsonl", 1)]
    assert report["summary"]["records"] == 2
    (bad,) = [f for f in report["findings"] if f["code"] == "encoding"]
    assert "'abstract'" in bad["message"] and "not UTF-8" in bad["message"]


def test_a_valid_json_array_on_one_line_is_read_without_error(tmp_path, capsys):
    # What json.dump(records, f) writes: every record starts on line 1.
    src = tmp_path / "src"
    src.mkdir()
    records = [GOOD[0], GOOD[1], SAMPLE["arXiv:2504.16662"]]
    (src / "a.json").write_text(json.dumps(records))
    status, report = validate(src, capsys)
    assert (status, errors(report)) == (0, [])
    assert report["summary"]["records"] == 3


def test_a_record_of_a_one_line_array_is_named_by_its_number_in_the_file(
    tmp_path, capsys, monkeypatch
):
    """Every record of a one-line array is at line 1: `a.json:1` named none of them, and a
    near-duplicate said "similar to a.json:1" of a record at a.json:1. Each finding of such a
    record names its number, and the record it repeats is `a.json:1 (record 1)`; a record
    that has its line to itself is named by its line alone."""
    from curate.cli import main

    src = tmp_path / "src"
    src.mkdir()
    again = {**GOOD[0], "id": "again", "abstract": GOOD[0]["abstract"] + " Revised."}
    short = {"id": "short", "abstract": "Too short to say anything."}
    (src / "a.json").write_text(json.dumps([GOOD[0], GOOD[1], again, short]))
    pretty = [SAMPLE["arXiv:2504.16662"], {**short, "id": "short2"}]
    (src / "b.json").write_text(json.dumps(pretty, indent=1))  # a record to a line, and more
    second = [n for n, line in enumerate(json.dumps(pretty, indent=1).splitlines(), 1)
              if line == " {"][1]  # fmt: skip
    status, report = validate(src, capsys)
    assert status == 0
    found = [
        (f["file"].rsplit("/", 1)[-1], f["line"], f["code"], f["message"], f.get("related"))
        for f in report["findings"]
        if f["code"] in ("near-duplicate", "too-short")
    ]
    earlier = f"{src / 'a.json'}:1 (record 1)"
    near, short_a, short_b = sorted(found, key=lambda f: (f[0], f[2]))
    assert near[:3] == ("a.json", 1, "near-duplicate") and near[4] == earlier
    assert near[3].startswith(f"record 3: 99% similar to {earlier} (word 3-shingle")
    assert short_a[:2] == ("a.json", 1) and short_a[3].startswith("record 4: 5 words, fewer")
    assert short_b[:2] == ("b.json", second) and short_b[3].startswith("5 words, fewer than")
    # The text output, and paths made relative (GitHub's annotations) keep the number.
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert main(["validate", str(src), "--format", "github", "--no-cache", "--config",
                 str(tmp_path / "curate.toml")]) == 0  # fmt: skip
    lines = [line for line in capsys.readouterr().out.splitlines() if "near-duplicate" in line]
    assert lines == [
        "::warning file=src/a.json,line=1,title=near-duplicate::record 3: 99%25 similar to "
        "src/a.json:1 (record 1) (word 3-shingle Jaccard, threshold 0.80) (related: "
        "src/a.json:1 (record 1))"
    ]


def test_what_is_wrong_with_an_element_of_a_one_line_array_names_the_element(tmp_path, capsys):
    """What the reader finds in an element (no object, a field of the wrong type) names its
    place in the array, counting every element: the element may make no record."""
    src = tmp_path / "src"
    src.mkdir()
    elements = [json.dumps(GOOD[0]), '"a string"', json.dumps({**GOOD[1], "score": "high"})]
    (src / "a.json").write_text("[" + ", ".join(elements) + "]")
    status, report = validate(src, capsys)
    assert status == 1
    found = sorted((f["code"], f["line"], f["message"]) for f in report["findings"]
                   if f["severity"] == "error")  # fmt: skip
    assert found == [
        ("field-type", 1, "element 3: 'score' is a string ('high'), not a number: published as "
                          "null"),
        ("invalid-json", 1, "element 2: a string, not an object: no record"),
    ]  # fmt: skip


def test_a_one_line_array_gives_each_record_its_own_position(tmp_path):
    from curate.ingest import formats
    from validation.config import Config
    from validation.mapping import parse

    path = tmp_path / "a.json"
    path.write_text(json.dumps([GOOD[0], GOOD[1]]))
    config = Config(mapping=parse({"jsonl": {"text": "abstract"}}))
    records = formats.get("jsonl").read(path, config).records
    assert [(r.line, r.row) for r in records] == [(1, 1), (1, 2)]


def test_two_records_at_one_place_are_one_schema_error_that_names_the_place(tmp_path):
    """Two records at one place (a one-line array's were, all at line 1) fail the record
    schema's uniqueness. Its two errors quoted the columns' values, the first the file's local
    path (absolute, and cut at 60 characters), where every output names files relative to
    the folder given."""
    import validation.checks  # noqa: F401  (registers the codes)
    from validation.config import Config
    from validation.records import Record, SourceFile
    from validation.schema import schema_findings

    local = str(tmp_path / "src" / "a.json")
    source = SourceFile(local, [Record(local, 1, GOOD[0]["abstract"], row=2),
                                Record(local, 1, GOOD[1]["abstract"], row=2)])  # fmt: skip
    found = [(f.file, f.line, f.message) for f in schema_findings(source, Config())]
    assert found == [(local, 1, "more than one record at line 1, row 2: each needs a place "
                                "of its own (its file, line, row)")]  # fmt: skip


DUPLICATED = {
    "jsonl": ("a.jsonl", '{"abstract": "an old text", "abstract": %s}\n', 1),
    "a nested object": ("a.jsonl", '{"abstract": %s, "meta": {"n": 1, "n": 2}}\n', 1),
    "json array": ("a.json", '[\n{"id": "x", "abstract": %s, "id": "y"}\n]', 2),
}


@pytest.mark.parametrize("case", DUPLICATED, ids=list(DUPLICATED))
def test_a_field_named_twice_is_a_duplicate_key_finding_naming_it(case, tmp_path, capsys):
    name, template, line = DUPLICATED[case]
    src = tmp_path / "src"
    src.mkdir()
    (src / name).write_text(template % json.dumps(GOOD[0]["abstract"]))
    status, report = validate(src, capsys)
    assert status == 1
    # (a record of the mapping's without its id is id-field: the other error here)
    assert [e for e in errors(report) if e[0] != "id-field"] == [("duplicate-key", name, line)]
    (found,) = [f for f in report["findings"] if f["code"] == "duplicate-key"]
    field = {"jsonl": "abstract", "a nested object": "n", "json array": "id"}[case]
    assert f"the field {field!r} more than once" in found["message"]
    assert report["summary"]["records"] == 1


def test_bytes_appended_to_a_gzip_file_lose_nothing_and_say_so(tmp_path, capsys):
    import gzip

    src = tmp_path / "src"
    src.mkdir()
    whole = gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in GOOD), mtime=0)
    (src / "a.jsonl.gz").write_bytes(whole + b"junk appended by a careless upload\n")
    status, report = validate(src, capsys)
    assert status == 1 and report["summary"]["records"] == 2
    assert errors(report) == [("file-truncated", "a.jsonl.gz", 3)]
    (found,) = [f for f in report["findings"] if f["code"] == "file-truncated"]
    assert "nothing is lost" in found["message"] and "are lost" not in found["message"]
