"""The record contract: declared once as data, checked in plain Python, reported by pandera.

``validation/schema.py`` declares the rules of the parsed record table as data
(:data:`RECORD_CONTRACT`), builds the pandera schema from them, and evaluates them in plain
Python first so that a file that breaks none of them never imports pandas or pandera. The oracle
here is the real pandera: over many seeded random frames, with values at every boundary, the
Python pass says "holds" exactly when ``RECORD_SCHEMA.validate(frame, lazy=True)`` raises
nothing. The built schema is held to today's literally, and the findings keep their messages.
"""

from __future__ import annotations

import random

import pandas as pd
import pandera.pandas as pa
import pytest

import validation.checks  # noqa: F401  (registers the `schema` finding code)
from validation import schema
from validation.config import Config
from validation.records import Header, Record, SourceFile
from validation.schema import RECORD_CONTRACT, contract_holds, record_rows, schema_findings

COLUMNS = ["file", "line", "text", "venue", "year", "header_language", "row"]

# For each column: values that pass (drawn most of the time, so that many frames hold) and
# values at or past a boundary. Header-derived columns may be None (a record without a header).
GOOD = {
    "file": ["a.txt", "drops/b.txt", "é.txt", "x", "bad\\xff.txt"],
    "line": [1, 2, 3, 7, 10**6],
    "text": ["t", "Some text.", "é", "a\nb", " ", "x" * 300],
    "venue": [None, "V", "ICML", "x" * 40, "é" * 40, "NeurIPS", " "],
    "year": [None, 1950, 1951, 2000, 2099, 2100],
    "header_language": [None, "en", "eng", "fr", "zh", "yue", "en\n"],
    "row": [None, None, None, 1, 2, 3],  # a text drop's records have none
}
EDGY = {
    "file": ["", None, "\n"],
    "line": [0, -1, -(10**6), 1, 1, 2],  # and small lines repeat: duplicate file + line
    "text": ["", None, "\n"],
    "venue": ["", "x" * 41, "é" * 41, "\n" * 41, "\n"],
    "year": [1949, 2101, 0, -1950, 10**4],
    "header_language": [
        "e", "EN", "En", "en\n\n", "\nen", "zh-cn", "engl", "", " en", "en ", "ée", "ñeñ",
        "ën", "ｅｎ", "é", "en\r", "e\nn", "\n",
    ],
    "row": [0, -1, 1, 1, None],  # and rows repeat: duplicate file + line + row
}  # fmt: skip


def pandera_frame(rows: list[dict]) -> pd.DataFrame:
    """The frame the schema check validates, built here as the check has always built it."""
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["year"] = frame["year"].astype("Int64")
    frame["line"] = frame["line"].astype("int64")
    frame["row"] = frame["row"].astype("Int64")
    return frame


def pandera_passes(rows: list[dict]) -> bool:
    try:
        schema.RECORD_SCHEMA.validate(pandera_frame(rows), lazy=True)
    except pa.errors.SchemaErrors:
        return False
    return True


def random_rows(rng: random.Random) -> list[dict]:
    edgy = rng.choice([0.0, 0.03, 0.1, 0.3])  # some frames are all good values
    file = rng.choice(GOOD["file"])
    rows = []
    for _ in range(rng.randint(1, 6)):
        row = {}
        for column in COLUMNS:
            pool = EDGY[column] if rng.random() < edgy else GOOD[column]
            row[column] = rng.choice(pool)
        if rng.random() < 0.8:  # most rows of a frame share their file, as a drop's do
            row["file"] = file if row["file"] in GOOD["file"] else row["file"]
        rows.append(row)
    if rng.random() < 0.5:  # distinct lines, unless the draw already repeats one
        for k, row in enumerate(rows):
            if row["line"] in GOOD["line"]:
                row["line"] = k + 1
    return rows


@pytest.mark.slow
def test_the_python_pass_holds_exactly_when_pandera_raises_nothing():
    rng = random.Random(20240611)
    outcomes = {True: 0, False: 0}
    for i in range(300):
        rows = random_rows(rng)
        expected = pandera_passes(rows)
        assert contract_holds(rows) is expected, (i, rows)
        outcomes[expected] += 1
    # Both sides were drawn often: the test says something about each.
    assert min(outcomes.values()) >= 100, outcomes


@pytest.mark.parametrize(
    ("column", "value", "holds"),
    [
        ("venue", "x" * 40, True),
        ("venue", "x" * 41, False),
        ("venue", "é" * 40, True),  # code points, not bytes
        ("venue", "", False),
        ("venue", None, True),
        ("year", 1949, False),
        ("year", 1950, True),
        ("year", 2100, True),
        ("year", 2101, False),
        ("year", None, True),
        ("line", 0, False),
        ("line", 1, True),
        ("text", "", False),
        ("text", None, False),
        ("file", None, False),
        ("header_language", "en", True),
        ("header_language", "eng", True),
        ("header_language", "e", False),
        ("header_language", "EN", False),
        ("header_language", "en\n", True),  # re.match: "$" matches before a final newline
        ("header_language", "en\n\n", False),
        ("header_language", "zh-cn", False),
        ("header_language", "ée", False),
        ("header_language", None, True),
        ("row", None, True),
        ("row", 1, True),
        ("row", 0, False),
    ],
)
def test_each_boundary_agrees_with_pandera(column, value, holds):
    rows = [{"file": "a.txt", "line": 3, "text": "t", "venue": "V", "year": 2000,
             "header_language": "en", "row": None} | {column: value}]  # fmt: skip
    assert pandera_passes(rows) is holds
    assert contract_holds(rows) is holds


def test_a_duplicate_file_and_line_agrees_with_pandera():
    row = {"file": "a.txt", "line": 3, "text": "t", "venue": None, "year": None,
           "header_language": None, "row": None}  # fmt: skip
    # Two elements of a JSON array on one line differ by their row; no row and no row repeat.
    element = row | {"row": 1}
    for rows, holds in [([row, row | {"text": "u"}], False), ([row, row | {"line": 4}], True),
                        ([row, row | {"file": "b.txt"}], True),
                        ([element, element | {"row": 2}], True),
                        ([element, element | {"text": "u"}], False)]:  # fmt: skip
        assert pandera_passes(rows) is holds
        assert contract_holds(rows) is holds


def test_values_of_another_type_are_left_to_pandera():
    """Outside the types a record holds, the Python pass never claims the contract holds."""
    row = {"file": "a.txt", "line": 3, "text": "t", "venue": "V", "year": 2000,
           "header_language": "en", "row": None}  # fmt: skip
    for column, value in [("line", True), ("year", True), ("year", 2000.0), ("venue", 7),
                          ("text", b"t"), ("line", 2**63), ("text", "a\udcff")]:  # fmt: skip
        assert contract_holds([row | {column: value}]) is False, (column, value)
    assert contract_holds([{k: v for k, v in row.items() if k != "venue"}]) is False


def test_the_pandera_schema_is_the_one_the_check_always_had():
    """Built from the data; the expected values are written out, as the schema was."""
    built = schema.RECORD_SCHEMA
    assert isinstance(built, pa.DataFrameSchema)
    assert built is schema.pandera_schema()  # built once
    assert built.name == "parsed records"
    assert built.unique == ["file", "line", "row"]
    assert (built.strict, built.ordered, built.coerce) == (True, True, False)
    assert built.checks == [] and built.index is None
    expected = {
        "file": ("str", False, [("str_length", {"min_value": 1, "max_value": None,
                                                "exact_value": None})]),
        "line": ("int64", False, [("greater_than_or_equal_to", {"min_value": 1})]),
        "text": ("str", False, [("str_length", {"min_value": 1, "max_value": None,
                                                "exact_value": None})]),
        "venue": ("str", True, [("str_length", {"min_value": 1, "max_value": 40,
                                                "exact_value": None})]),
        "year": ("Int64", True, [("in_range", {"min_value": 1950, "max_value": 2100,
                                               "include_min": True, "include_max": True})]),
        "header_language": ("str", True, [("str_matches", {"pattern": "^[a-z]{2,3}$"})]),
        "row": ("Int64", True, [("greater_than_or_equal_to", {"min_value": 1})]),
    }  # fmt: skip
    assert list(built.columns) == list(expected)
    str_dtype = pa.Column(str).dtype  # what pandera makes of `str` (string[pyarrow] today)
    for name, (dtype, nullable, checks) in expected.items():
        column = built.columns[name]
        assert column.dtype == (str_dtype if dtype == "str" else pa.Column(dtype).dtype), name
        assert column.nullable is nullable, name
        assert (column.unique, column.coerce, column.required, column.regex) == (
            False, False, True, False
        ), name  # fmt: skip
        assert [(c.name, c.statistics) for c in column.checks] == checks, name
    assert str(built.columns["line"].dtype) == "int64"
    assert str(built.columns["year"].dtype) == "Int64"


def test_the_contract_is_plain_data_for_the_same_columns():
    assert [c.name for c in RECORD_CONTRACT.columns] == COLUMNS
    assert RECORD_CONTRACT.unique == ("file", "line", "row")
    with pytest.raises(AttributeError):
        RECORD_CONTRACT.columns[0].nullable = True  # type: ignore[misc]


def _header(venue: str = "ICML", year: int = 2020, language: str | None = "en") -> Header:
    return Header(f"{venue} {year} Papers", venue, year, "Papers", language, "registry")


def _findings(records: list[Record]) -> list[tuple[str, int, str]]:
    source = SourceFile(path="d/a.txt", records=records)
    return [(f.file, f.line, f.message) for f in schema_findings(source, Config())]


def test_findings_keep_their_messages_once_per_file():
    """Where a rule fails, pandera reports it exactly as before: message, line, once a file."""
    year = [Record("d/a.txt", n, "t", _header(year=1066)) for n in (3, 5)]
    assert _findings(year) == [("d/a.txt", 3, "column 'year' fails in_range(1950, 2100): '1066'")]
    venue = [Record("d/a.txt", n, "t", _header(venue="V" * 41)) for n in (3, 5)]
    assert _findings(venue) == [
        ("d/a.txt", 3, f"column 'venue' fails str_length(1, 40): {'V' * 41!r}")
    ]
    language = [Record("d/a.txt", 4, "t", _header(language="EN"))]
    assert _findings(language) == [
        ("d/a.txt", 4, "column 'header_language' fails str_matches('^[a-z]{2,3}$'): 'EN'")
    ]
    twice = [Record("d/a.txt", 3, "t", _header()), Record("d/a.txt", 3, "u", _header())]
    # Two records at one place: one finding, by the place (not the columns' values, the
    # file's local path among them).
    assert _findings(twice) == [
        ("d/a.txt", 3, "more than one record at line 3: each needs a place of its own "
                       "(its file, line, row)"),
    ]  # fmt: skip
    assert _findings([Record("d/a.txt", 0, "", None)]) == [
        ("d/a.txt", 0, "column 'line' fails greater_than_or_equal_to(1): '0'"),
        ("d/a.txt", 0, "column 'text' fails str_length(1, None): ''"),
    ]


def test_clean_records_and_no_records_report_nothing():
    assert _findings([]) == []
    clean = [Record("d/a.txt", 2, "t", _header()), Record("d/a.txt", 4, "u", None)]
    assert _findings(clean) == []
    assert _findings([Record("d/a.txt", 2, "t", _header(language="en\n"))]) == []


def test_rows_hold_the_file_name_as_the_frame_does():
    """A file name that is not UTF-8 (lone surrogates) is checked as its escaped form."""
    source = SourceFile(path="d/\udcff.txt", records=[Record("d/\udcff.txt", 2, "t", None)])
    rows = record_rows(source)
    assert rows == [{"file": "d/\\xff.txt", "line": 2, "text": "t", "venue": None,
                     "year": None, "header_language": None, "row": None}]  # fmt: skip
    assert contract_holds(rows) and pandera_passes(rows)
    assert list(schema.records_frame(source)["file"]) == ["d/\\xff.txt"]
