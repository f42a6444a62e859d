"""The contract of the parsed record table, as a pandera schema.

The schema is data, not code scattered over checks: it says what every parsed record must
look like before anything downstream relies on it. ``lazy=True`` collects every failure case,
which are then reported as ``schema`` findings at the record's file and line.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pandera.pandas as pa

from validation.config import Config
from validation.findings import Finding
from validation.records import SourceFile
from validation.registry import finding

RECORD_SCHEMA = pa.DataFrameSchema(
    {
        "file": pa.Column(str, pa.Check.str_length(min_value=1)),
        "line": pa.Column(int, pa.Check.ge(1)),
        "text": pa.Column(str, pa.Check.str_length(min_value=1)),
        "venue": pa.Column(str, pa.Check.str_length(1, 40), nullable=True),
        "year": pa.Column("Int64", pa.Check.in_range(1950, 2100), nullable=True),
        "header_language": pa.Column(str, pa.Check.str_matches(r"^[a-z]{2,3}$"), nullable=True),
    },
    unique=["file", "line"],
    strict=True,
    ordered=True,
    name="parsed records",
)


def records_frame(source: SourceFile) -> pd.DataFrame:
    rows = [
        {
            # A file name that is not UTF-8 holds lone surrogates, which Arrow cannot encode.
            "file": r.file.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"),
            "line": r.line,
            "text": r.text,
            "venue": r.header.venue if r.header else None,
            "year": r.header.year if r.header else None,
            "header_language": r.header.language if r.header else None,
        }
        for r in source.records
    ]
    frame = pd.DataFrame(rows, columns=list(RECORD_SCHEMA.columns))
    frame["year"] = frame["year"].astype("Int64")
    frame["line"] = frame["line"].astype("int64")
    return frame


def schema_findings(source: SourceFile, config: Config) -> Iterator[Finding]:
    frame = records_frame(source)
    if frame.empty:
        return
    try:
        RECORD_SCHEMA.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        seen: set[tuple[str, str, str, str]] = set()
        for case in cases.itertuples(index=False):
            index = case.index
            if index is None or pd.isna(index):
                file, line = source.path, 0
            else:
                row = frame.iloc[int(index)]
                file, line = source.path, int(row["line"])
            column = str(case.column)
            check = str(case.check)
            value = str(case.failure_case)
            # A header-derived value fails on every record of its file: say it once per file.
            key = (file, column, check, value)
            if key in seen:
                continue
            seen.add(key)
            yield finding(
                "schema",
                file,
                line,
                f"column {column!r} fails {check}: {value[:60]!r}",
                config,
            )
