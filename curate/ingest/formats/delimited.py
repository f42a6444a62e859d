"""CSV (``*.csv``) and TSV (``*.tsv``): a header row naming the fields, then one record per row.

Parsed with the standard library's ``csv`` module in its strict mode, in the dialect of the
file's extension, which every finding about the file's layout names: RFC 4180 CSV (``excel``:
comma-separated, a field with a comma, a quote or a line break quoted with ``"``, a quote
inside one doubled) and its tab-separated form (``excel-tab``); ``delimiter`` in the mapping
changes the separator. Read a line at a time, whatever the file's size.

Real paper lists break that dialect in three ways, each an `invalid-row` finding at the row's
first line, after which the next rows are still read: an unquoted comma or tab in a field (a
row with more fields than the header), an undoubled quote inside a quoted field (``csv``
stops at it; the rest of that line is skipped), and a quote never closed. A quote never closed
would swallow the rest of the file into one field: the field stops at the reader's line limit
or at the end of the file, the row is reported, and the lines after its first are read again
as rows of their own.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from curate.ingest.formats import Split
from curate.ingest.formats.fields import Batches, Hashed, Tabular, line_limit, line_splits
from validation.config import Config
from validation.findings import did_you_mean
from validation.records import SourceFile

_SURROGATE = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, as surrogateescape keeps it
_NAMES = {",": "comma", "\t": "tab", ";": "semicolon", "|": "vertical bar"}


def _text(fh: BinaryIO, start: int) -> io.TextIOWrapper:
    """The open file as text from byte ``start`` (a line's first), as :class:`Delimited`
    reads it."""
    raw = os.dup(fh.fileno())  # a reader of its own, closed with it; the file stays open
    stream = open(raw, "rb", buffering=1 << 20)  # noqa: SIM115
    stream.seek(start)
    return io.TextIOWrapper(stream, encoding="utf-8", errors="surrogateescape", newline="")


class _Lines:
    """The file's physical lines for ``csv``, counted, with the lines of the row being read kept
    so that they can be read again after a quote that is never closed."""

    def __init__(self, stream: io.TextIOWrapper, limit: int | None, out: Batches) -> None:
        self.stream = stream
        self.limit = limit
        self.out = out
        self.number = 0  # lines read so far
        self.row_lines: list[str] = []
        self.again: list[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        if self.again:
            line = self.again.pop()
        else:
            line = self.stream.readline(self.limit + 1 if self.limit else -1)
            if not line:
                raise StopIteration
            if self.limit and len(line) > self.limit and not line.endswith(("\n", "\r")):
                while (more := self.stream.readline(1 << 20)) and not more.endswith("\n"):
                    pass
                self.number += 1
                self.out.finding(
                    "record-too-large", self.number,
                    f"a line of more than {self.limit:,} characters: not read",
                )  # fmt: skip
                line = "\n"  # a blank line in its place keeps the count of lines
        self.number += 1
        self.row_lines.append(line)
        return line

    def start_row(self) -> int:
        """The line the next row starts on."""
        self.row_lines = []
        return self.number + 1

    def read_again(self, lines: list[str]) -> None:
        self.again += reversed(lines)  # popped from the end: the first of them comes next
        self.number -= len(lines)


class Delimited(Tabular):
    """A :class:`~curate.ingest.formats.SourceFormat` of delimited text, in one dialect."""

    name = "csv"
    patterns: tuple[str, ...] = ("*.csv",)
    dialect: type[csv.Dialect] = csv.excel
    cells = True

    def from_file(self, fh: BinaryIO, path: Path, out: Batches) -> Iterator[SourceFile]:
        hashed = Hashed(fh)
        stream = io.TextIOWrapper(
            io.BufferedReader(hashed, buffer_size=1 << 20),
            encoding="utf-8", errors="surrogateescape", newline="",
        )  # fmt: skip
        limit = line_limit(out.config)
        previous = csv.field_size_limit()
        csv.field_size_limit(limit or 2**31 - 1)  # a field never closed stops here
        try:
            yield from self._rows(_Lines(stream, limit, out), out)
        finally:
            csv.field_size_limit(previous)
        yield out.last(hashed.finish(), hashed.size)

    def from_part(
        self, fh: BinaryIO, path: Path, out: Batches, split: Split
    ) -> Iterator[SourceFile]:
        """The rows that start in the part, after the header the file starts with (read again
        here, its findings left to the first part's reader)."""
        limit = line_limit(out.config)
        previous = csv.field_size_limit()
        csv.field_size_limit(limit or 2**31 - 1)
        try:
            header = self._first_row(fh, limit, out) if split.number else None
            if split.number == 0 or header is not None:
                with _text(fh, split.start) as text:
                    lines = _Lines(text, limit, out)
                    lines.number = split.line
                    yield from self._rows(lines, out, split, header)
            else:
                out.exact = False  # a header a part cannot take as it is: read whole
        finally:
            csv.field_size_limit(previous)
        yield out.last(split.sha256, split.size)

    def splits(self, path: Path, config: Config, size: int) -> list[Split]:
        return line_splits(path, size, quoted=True)

    def _first_row(self, fh: BinaryIO, limit: int | None, out: Batches) -> list[str] | None:
        """The header, for a part after the first: the file's first row, if it is one that
        the first part reads without a finding."""
        scratch = Batches(out.path, out.config, self.name, cells=True)
        delimiter = out.map.delimiter or self.dialect.delimiter
        with _text(fh, 0) as text:
            lines = _Lines(text, limit, scratch)
            reader = csv.reader(lines, dialect=self.dialect, delimiter=delimiter, strict=True)
            try:
                fields = next((f for f in reader if f), None)
            except csv.Error:
                return None
        header = self._header(fields, 1, scratch, delimiter) if fields else None
        if header is None or any(f.code != "bom" for f in scratch.part.findings):
            return None
        out.has_fields(header)
        return header

    def dialect_name(self, delimiter: str) -> str:
        sep = _NAMES.get(delimiter, repr(delimiter))
        return (
            f"read as {sep}-separated values (Python's csv, strict, dialect {self.dialect.__name__}"
            f"{'' if delimiter == self.dialect.delimiter else f', delimiter {delimiter!r}'}"
            '): a field holding the separator, a quote or a line break is quoted with ", '
            "and a quote inside it doubled"
        )

    def _rows(
        self, lines: _Lines, out: Batches, split: Split | None = None,
        header: list[str] | None = None,
    ) -> Iterator[SourceFile]:  # fmt: skip
        """The rows' records a batch at a time; in a part (``split``) the rows that start in
        it, and in a part after the first, ``header`` is the file's."""
        delimiter = out.map.delimiter or self.dialect.delimiter
        options = {"dialect": self.dialect, "delimiter": delimiter, "strict": True}
        reader = csv.reader(lines, **options)  # type: ignore[arg-type]
        row = split.row if split is not None else 0
        stop, out.exact = (split.next_line, False) if split and split.next_line >= 0 else (-1, True)
        while True:
            start = lines.start_row()
            if 0 <= stop < start:
                # The next part starts on line stop + 1: this one read as the whole only if a
                # row starts there, after as many rows, with nothing to read again.
                out.exact = (start, row, lines.again) == (stop + 1, split.next_row, [])  # type: ignore[union-attr]
                break
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                taken = lines.row_lines
                if header is not None:
                    row += 1
                message = str(exc)
                if len(taken) > 1:
                    # A quote opened on this line ran on past it, to a quote far below, the
                    # line limit or the end of the file: the lines after the row's first are
                    # read again, as rows of their own.
                    lines.read_again(taken[1:])
                    message = (
                        f"{message}, after a quoted field opened on line {start} ran on to line "
                        f"{start + len(taken) - 1} (a quote never closed?); the lines after "
                        "this one are read again as rows"
                    )
                at = f"row {row}: " if header is not None else "the header row: "
                out.finding("invalid-row", start, f"{at}{message}; {self.dialect_name(delimiter)}")
                reader = csv.reader(lines, **options)  # type: ignore[arg-type]
                continue
            if not fields:
                continue  # a blank line
            if header is None:
                header = self._header(fields, start, out, delimiter)
                if header is None:
                    return
                continue
            row += 1
            if len(fields) != len(header):
                out.finding(
                    "invalid-row", start,
                    f"row {row}: {len(fields)} fields, the header has {len(header)} (an unquoted "
                    f"{_NAMES.get(delimiter, repr(delimiter))} in a field?); "
                    f"{self.dialect_name(delimiter)}",
                )  # fmt: skip
                continue
            if any(_SURROGATE.search(f) for f in fields):
                at = next(i for i, f in enumerate(fields) if _SURROGATE.search(f))
                out.finding(
                    "encoding", start,
                    f"row {row}: field {header[at]!r} holds bytes that are not UTF-8; not read",
                )  # fmt: skip
                continue
            out.row(dict(zip(header, fields, strict=True)), start, row)
            if out.full():
                yield out.take()
            if out.stopped:
                return

    def _header(
        self, fields: list[str], line: int, out: Batches, delimiter: str
    ) -> list[str] | None:
        if fields[0].startswith(codecs.BOM_UTF8.decode("utf-8")):
            out.finding("bom", 1, "file starts with a UTF-8 byte-order mark")
            fields = [fields[0][1:], *fields[1:]]
        limit = out.config.max_columns
        if limit and len(fields) > limit:
            out.finding(
                "invalid-row", line,
                f"the header row names {len(fields):,} columns, over max_columns = {limit:,}; no "
                "record is read (raise max_columns in [tool.curate], or 0 for no limit, if the "
                "file is what it seems)",
            )  # fmt: skip
            return None
        if any(_SURROGATE.search(f) for f in fields):
            out.finding("encoding", line, "the header row holds bytes that are not UTF-8")
            return None
        out.has_fields(fields)
        if out.map.text not in fields:
            shown = ", ".join(repr(f) for f in fields[:8])
            out.finding(
                "text-field", line,
                f"the header row names no field {out.map.text!r}"
                f"{did_you_mean(out.map.text, fields)} (its fields: {shown}); no record is read",
            )  # fmt: skip
            return None
        seen: set[str] = set()  # in one pass: a header of 40,000 names took 19 s pairwise
        repeated = [f for f in fields if f in seen or seen.add(f)]  # type: ignore[func-returns-value]
        if repeated:
            out.finding(
                "invalid-row", line,
                f"the header row names {repeated[0]!r} twice: which column is meant cannot be "
                f"told; {self.dialect_name(delimiter)}",
            )  # fmt: skip
            return None
        return fields


class Csv(Delimited):
    """``*.csv``: RFC 4180, comma-separated."""


class Tsv(Delimited):
    """``*.tsv``: tab-separated, quoted like RFC 4180."""

    name = "tsv"
    patterns = ("*.tsv",)
    dialect = csv.excel_tab
