"""The contract of the parsed record table: declared once as data, reported by pandera.

The schema is data, not code scattered over checks: it says what every parsed record must
look like before anything downstream relies on it. :data:`RECORD_CONTRACT` below is that data,
one :class:`ColumnRule` per column; nothing else defines the record schema.

Two things read it:

- :func:`pandera_schema` builds the pandera ``DataFrameSchema`` from it (also reachable as
  ``RECORD_SCHEMA``, built on first use): the authority for every reported failure. Its
  ``lazy=True`` validation collects every failure case, reported as ``schema`` findings at the
  record's file and line.
- :func:`contract_holds` evaluates the same rules in plain Python, with the semantics pandas and
  pandera give them, over the values the frame would hold. It only proves "nothing to report":
  a file whose records all hold (nearly every file) never imports pandas or pandera, which cost
  most of a cold ``curate validate`` on a small drop (see ``bench/bench_startup.py``). If any rule
  might fail, pandera validates the frame and produces the findings.

This module imports neither pandas nor pandera at the top.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from validation.findings import Finding
from validation.records import SourceFile
from validation.registry import finding

if TYPE_CHECKING:
    import pandas as pd
    import pandera.pandas as pa

    from validation.config import Config


@dataclass(frozen=True, slots=True)
class ColumnRule:
    """What one column of the record table must hold.

    ``dtype`` is ``"str"`` (pandera's ``str``), ``"int"`` (``int``: numpy int64, no missing
    values) or ``"Int64"`` (pandas' nullable integer). ``min_length``/``max_length`` bound a
    string's length in code points (pandera ``str_length``); ``min_value``/``max_value`` bound a
    number, both ends included (``ge``/``le``, or ``in_range`` with both); ``pattern`` must match
    at the start of the string (``str_matches``: :func:`re.match`). A missing value (None) is
    allowed only where ``nullable``, and then no other rule looks at it.
    """

    name: str
    dtype: str
    nullable: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_value: int | None = None
    max_value: int | None = None
    pattern: str | None = None


@dataclass(frozen=True, slots=True)
class TableContract:
    """The columns, in order, and the rules over whole rows."""

    name: str
    columns: tuple[ColumnRule, ...]
    unique: tuple[str, ...] = ()  # no two rows share these columns' values
    strict: bool = True  # no column besides ``columns``
    ordered: bool = True  # the columns in this order

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


RECORD_CONTRACT = TableContract(
    name="parsed records",
    columns=(
        ColumnRule("file", "str", min_length=1),
        ColumnRule("line", "int", min_value=1),
        ColumnRule("text", "str", min_length=1),
        ColumnRule("venue", "str", nullable=True, min_length=1, max_length=40),
        ColumnRule("year", "Int64", nullable=True, min_value=1950, max_value=2100),
        ColumnRule("header_language", "str", nullable=True, pattern=r"^[a-z]{2,3}$"),
        # A tabular record's row, or its element of a JSON array: two records may start on
        # one line (a JSON array written on one line), never at one position.
        ColumnRule("row", "Int64", nullable=True, min_value=1),
    ),
    unique=("file", "line", "row"),
    strict=True,
    ordered=True,
)

# --- the record rows --------------------------------------------------------------------------

Row = Mapping[str, Any]


def record_rows(source: SourceFile) -> list[dict[str, Any]]:
    """The rows of the record table of ``source``: the values its frame holds, column by column."""
    return [
        {
            # A file name that is not UTF-8 holds lone surrogates, which Arrow cannot encode.
            "file": r.file.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"),
            "line": r.line,
            "text": r.text,
            "venue": r.venue_year[0],
            "year": r.venue_year[1],
            "header_language": r.header.language if r.header else None,
            "row": r.row,
        }
        for r in source.records
    ]


# --- the rules in plain Python ----------------------------------------------------------------

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")  # a string Arrow cannot encode: pandas raises


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _value_holds(rule: ColumnRule, value: object) -> bool:
    """True only if ``value`` surely passes every rule of its column (False: let pandera see)."""
    if value is None:
        return rule.nullable
    if rule.dtype == "str":
        if type(value) is not str:
            return False
        if not value.isascii() and _SURROGATE.search(value):
            return False
        if rule.min_length is not None or rule.max_length is not None:
            n = len(value)  # pandas' str.len(): code points
            if rule.min_length is not None and n < rule.min_length:
                return False
            if rule.max_length is not None and n > rule.max_length:
                return False
        # str_matches is Series.str.match: re.match, so "$" also matches before a final "\n".
        return rule.pattern is None or _compiled(rule.pattern).match(value) is not None
    # "int" and "Int64": a Python int that fits the column (not a bool, which pandas casts).
    if type(value) is not int or not _INT64_MIN <= value <= _INT64_MAX:
        return False
    if rule.min_value is not None and value < rule.min_value:
        return False
    return rule.max_value is None or value <= rule.max_value


def contract_holds(rows: Sequence[Row], contract: TableContract = RECORD_CONTRACT) -> bool:
    """True only if pandera would find nothing wrong with the frame of ``rows``.

    Each row must have exactly the contract's columns (as :func:`record_rows` gives them); the
    frame is built with those columns in order, so ``strict`` and ``ordered`` hold by
    construction. False means "might fail": pandera decides.
    """
    names = contract.names
    for row in rows:
        if len(row) != len(names) or any(name not in row for name in names):
            return False
    for rule in contract.columns:
        name = rule.name
        if not all(_value_holds(rule, row[name]) for row in rows):
            return False
    if contract.unique:
        keys = [tuple(row[name] for name in contract.unique) for row in rows]
        if len(set(keys)) != len(keys):
            return False
    return True


# --- pandera, the reporter --------------------------------------------------------------------

_PANDERA_DTYPES: dict[str, object] = {"str": str, "int": int, "Int64": "Int64"}


def _checks(rule: ColumnRule) -> list[pa.Check]:
    import pandera.pandas as pa

    checks = []
    if rule.min_length is not None or rule.max_length is not None:
        checks.append(pa.Check.str_length(rule.min_length, rule.max_length))
    if rule.min_value is not None and rule.max_value is not None:
        checks.append(pa.Check.in_range(rule.min_value, rule.max_value))
    elif rule.min_value is not None:
        checks.append(pa.Check.ge(rule.min_value))
    elif rule.max_value is not None:
        checks.append(pa.Check.le(rule.max_value))
    if rule.pattern is not None:
        checks.append(pa.Check.str_matches(rule.pattern))
    return checks


@functools.cache
def pandera_schema(contract: TableContract = RECORD_CONTRACT) -> pa.DataFrameSchema:
    """The pandera ``DataFrameSchema`` of ``contract`` (built once; imports pandera)."""
    import pandera.pandas as pa

    return pa.DataFrameSchema(
        {
            rule.name: pa.Column(_PANDERA_DTYPES[rule.dtype], _checks(rule), nullable=rule.nullable)
            for rule in contract.columns
        },
        unique=list(contract.unique) or None,
        strict=contract.strict,
        ordered=contract.ordered,
        name=contract.name,
    )


def __getattr__(name: str) -> Any:
    # ``RECORD_SCHEMA``, the pandera schema, as a module attribute: built on first use only.
    if name == "RECORD_SCHEMA":
        return pandera_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def frame_of(rows: Sequence[Row]) -> pd.DataFrame:
    """The record table of ``rows`` as the pandas frame pandera validates."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=RECORD_CONTRACT.names)
    frame["year"] = frame["year"].astype("Int64")
    frame["row"] = frame["row"].astype("Int64")
    frame["line"] = frame["line"].astype("int64")
    return frame


def records_frame(source: SourceFile) -> pd.DataFrame:
    """The record table of ``source`` as pandera sees it."""
    return frame_of(record_rows(source))


def schema_findings(source: SourceFile, config: Config) -> Iterator[Finding]:
    rows = record_rows(source)
    if not rows or contract_holds(rows):
        return
    yield from _pandera_findings(source, frame_of(rows), config)


def _pandera_findings(source: SourceFile, frame: pd.DataFrame, config: Config) -> Iterator[Finding]:
    import pandas as pd
    import pandera.pandas as pa

    try:
        pandera_schema().validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        seen: set[tuple[str, str, str]] = set()
        for case in cases.itertuples(index=False):
            index = case.index
            line, place = 0, None
            if index is not None and not pd.isna(index):
                row = frame.iloc[int(index)]
                line, place = int(row["line"]), row["row"]
            column = str(case.column)
            check = str(case.check)
            value = str(case.failure_case)
            message = f"column {column!r} fails {check}: {value[:60]!r}"
            if check == "multiple_fields_uniqueness":
                # Said once per place, by its line and row: the columns' values are the
                # file's path (local, and cut at 60 characters) and that line.
                column = "unique"
                value = f"line {line}" + (
                    "" if place is None or pd.isna(place) else f", row {place}"
                )
                message = (
                    f"more than one record at {value}: each needs a place of its own "
                    f"(its {', '.join(RECORD_CONTRACT.unique)})"
                )
            # A header-derived value fails on every record of its file: say it once per file.
            key = (column, check, value)
            if key in seen:
                continue
            seen.add(key)
            yield finding("schema", source.path, line, message, config)
