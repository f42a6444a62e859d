"""From a tabular source's fields to records: what the JSONL, CSV/TSV, Parquet and Arrow readers
share.

Each reader parses with a library (``json``, ``csv``, ``pyarrow``) and hands every row, as a
mapping of field name to value, to :class:`Batches`, which applies the file's field mapping
(:mod:`validation.mapping`) and passes the records on a batch at a time, so a file of any size
is read with bounded memory. Nothing here raises on bad input: a row that cannot become a
record is a finding at its line (or row), and the file's other rows are still read.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import validation.checks  # noqa: F401  (registers the parse codes)
from curate.ingest.formats import Split, drop_oversized, irregular
from validation.findings import Finding, did_you_mean
from validation.mapping import Column, FieldMap, mapping_for
from validation.records import Record, SourceFile
from validation.registry import finding

if TYPE_CHECKING:
    import pyarrow as pa

    from validation.config import Config

# Records handed on at a time: a batch of abstracts is a few MB, whatever the file's size.
BATCH_RECORDS = 5_000
_INT_RANGE = {"int32": 2**31, "int64": 2**63}


def line_limit(config: Config) -> int | None:
    """The longest line (or CSV field) a streaming reader holds: ``max_file_bytes``, which
    bounds what is held at once, as it bounds a whole text drop; None: no limit. A longer
    line is a `record-too-large` error, skipped without being held."""
    return config.max_file_bytes or None


class Hashed(io.RawIOBase):
    """A file read through this is hashed as it is read: the SHA-256 and size a source's
    result carries, without a second pass over a large file."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.digest = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer) or 0
        if n:
            self.digest.update(memoryview(buffer)[:n])
            self.size += n
        return n

    def finish(self) -> str:
        """The SHA-256 of the whole file, reading what is left after an early stop."""
        while chunk := self.raw.read(1 << 20):
            self.digest.update(chunk)
            self.size += len(chunk)
        return self.digest.hexdigest()


def opened(path: Path, out: Batches) -> BinaryIO | None:
    """The file, open for reading; or None, with an `unreadable` finding that says why (a
    FIFO or a device is never opened, so nothing can hang on it)."""
    try:
        why = irregular(path)
        if why is None:
            return path.open("rb")
    except OSError as exc:
        why = f"cannot read: {exc.strerror or exc}"
    out.finding("unreadable", 0, why)
    return None


class Tabular:
    """What every tabular format shares: ``read`` is its batches joined, and ``parts`` opens
    the file (never a FIFO or a device) and hands it to the format's ``from_file``."""

    name = ""
    cells = False  # the values are the text of CSV cells

    def read(self, path: Path, config: Config) -> SourceFile:
        return joined(self.parts(path, config))

    def parts(self, path: Path, config: Config, split: Split | None = None) -> Iterator[SourceFile]:
        out = Batches(path.as_posix(), config, self.name, cells=self.cells, split=split)
        if (fh := opened(path, out)) is None:
            out.exact = split is None  # gone since the parts were planned: read it whole
            yield out.last("", 0)
            return
        with fh:
            before = file_identity(fh)
            if split is not None and before != split.identity:
                before = (-1, -1, -1)  # another file, or another version, than was planned
            batches = self.from_file(fh, path, out) if split is None else self.from_part(
                fh, path, out, split)  # fmt: skip
            for part in batches:
                if part.sha256 and file_identity(fh) != before:
                    # The bytes changed under the reader (written in place, truncated): the
                    # rows are of no one version of the file, so neither they nor the digest
                    # may be cached or published as the file's.
                    part.sha256 = ""
                    part.findings.append(finding("unreadable", out.path, 0, CHANGED, out.config))
                yield part

    def from_file(self, fh: BinaryIO, path: Path, out: Batches) -> Iterator[SourceFile]:
        """The batches of the open file ``fh``; the last carries its digest and size."""
        raise NotImplementedError

    def from_part(
        self, fh: BinaryIO, path: Path, out: Batches, split: Split
    ) -> Iterator[SourceFile]:
        """The batches of one part of the open file ``fh``, as :meth:`from_file` reads that
        stretch; the last carries the digest and size the parts were planned with."""
        raise NotImplementedError


@dataclass
class Tail:
    """What a reader knows about a whole file only at its end, for one part of it: the parts'
    tails, joined by :meth:`Batches.finish`, give the findings one reader of the whole gives."""

    records: int
    rows: int  # rows parsed: each a record, or a finding that says why not
    no_text: list[int]  # the lines of rows without the text field
    first_fields: str  # the fields of the first of them
    unseen: dict[str, str]  # the mapped fields no row had, with what each fills
    fields: dict[str, None]  # the fields seen (the file's own list, if `fields_known`)
    fields_known: bool
    unreadable: set[str]
    only_bom: bool  # no finding of the part but a byte-order mark's
    # The part read as the whole file's reader would (it ended where the next part starts, no
    # limit was reached): else the file is read again, whole.
    exact: bool


def finish_parts(
    path: str, config: Config, format_name: str, tails: list[Tail], findings: list[Finding]
) -> list[Finding] | None:
    """The findings of a file read in parts (``findings``: theirs, in file order) with those
    about the whole file; or None when a part did not read as the whole file's reader would,
    or the parts hold as many records as ``max_records_per_file`` (where the whole file's
    reader stops, at a row no part can tell): the file is then read whole."""
    limit = config.max_records_per_file
    if not all(t.exact for t in tails) or (limit and sum(t.records for t in tails) >= limit):
        return None
    if not any(t.fields_known for t in tails) and _fields_told(tails):
        # The fields a message lists are those of the rows read while a mapped field was
        # unseen, and of the first row without the text field: the parts' differ from the
        # whole's when several parts had such a row, or the list reached its cap.
        several = sum(bool(t.no_text) for t in tails) > 1
        if several or len({f for t in tails for f in t.fields}) >= 1000:
            return None
    return Batches(path, config, format_name).finish(tails, findings)


def _fields_told(tails: list[Tail]) -> bool:
    """Whether the file's findings will list the fields its rows had: a mapped field that no
    record has (the file has records)."""
    unreadable = {f for t in tails for f in t.unreadable}
    unseen = set.intersection(*(set(t.unseen) for t in tails)) - unreadable
    return bool(unseen) and any(t.records for t in tails)


def _first_only(findings: list[Finding]) -> list[Finding]:
    """The findings with only the first of those a reader says once for a file (CR inside a
    text; the file changed while read), which each part of a file may say again."""
    seen: set[str] = set()
    out = []
    for f in findings:
        if f.code == "line-endings" or (f.code == "unreadable" and f.message == CHANGED):
            if f.code in seen:
                continue
            seen.add(f.code)
        out.append(f)
    return out


CHANGED = (
    "the file changed while it was read (its size or modification time differ from when it "
    "was opened): its results are not kept; run again once nothing writes to it"
)


def file_identity(fh: BinaryIO) -> tuple[int, int, int]:
    """What tells one version of an open file from another: a rewrite in place changes its
    size or modification time (a file replaced by a rename leaves the open one as it was,
    but for its change time, which unlinking it sets). An object in storage says its own
    (:meth:`curate.storage.RemoteFile.identity`)."""
    if (remote := getattr(fh, "identity", None)) is not None:
        return remote()
    info = os.fstat(fh.fileno())
    return info.st_ino, info.st_size, info.st_mtime_ns


def file_digest(fh: BinaryIO) -> tuple[str, int]:
    """SHA-256 and size of a file read by a library that seeks (Parquet, Arrow): of the open
    file the rows were read from, never of the path opened again, which may name another file
    by now (a source replaced during the build gave the new file's digest for the old rows,
    and the cache then kept the old rows' results under the new file's key)."""
    fh.seek(0)
    digest = hashlib.file_digest(fh, "sha256")
    return digest.hexdigest(), fh.tell()


# The planning pass reads a file this much at a time.
PLAN_CHUNK = 16 << 20


def line_splits(path: Path, size: int, *, quoted: bool = False) -> list[Split]:
    """A JSON Lines or CSV file cut after a line break about every ``size`` bytes, planned in
    one pass that also takes the whole file's SHA-256 (the manifest's, which no part could
    take): each part's first line, and for ``quoted`` CSV its first data row, a cut falling
    only where the quotes before it are balanced (so never inside a quoted field) and after
    the header. CSV is read as text, in which a lone carriage return ends a line too; JSON
    Lines as bytes. A cut the reader does not agree with (a quote the reader does not count:
    a malformed file) is found when the part before it ends elsewhere (:attr:`Tail.exact`)."""
    import numpy as np

    cuts: list[tuple[int, int, int]] = []  # (byte, lines before it, data rows before it)
    digest = hashlib.sha256()
    off = lines = quotes = records = record_start = 0
    target = size
    with path.open("rb") as fh:
        before = file_identity(fh)
        while chunk := fh.read(PLAN_CHUNK):
            if quoted and chunk.endswith(b"\r"):
                chunk += fh.read(1)  # whether it ends a line is told by the next byte
            digest.update(chunk)
            a = np.frombuffer(chunk, np.uint8)
            breaks = np.flatnonzero(a == 10)
            ended = np.zeros(breaks.size, np.int64)
            if quoted:
                cr = np.flatnonzero(a == 13)
                lone = cr[a[np.minimum(cr + 1, a.size - 1)] != 10]  # the file's last byte too
                breaks = np.union1d(breaks, lone)
                q = np.flatnonzero(a == 34)
                ends = breaks[((quotes + np.searchsorted(q, breaks)) & 1) == 0]  # a row ends
                starts = np.concatenate(([record_start - off], ends[:-1] + 1))
                crlf = (ends > starts) & (a[ends] == 10) & (a[np.maximum(ends - 1, 0)] == 13)
                ended = records + np.cumsum((ends - starts - crlf) > 0)  # rows not blank
                quotes += q.size
            else:
                ends = breaks
            while ends.size and target <= off + int(ends[-1]) + 1:
                j = int(np.searchsorted(ends, target - off - 1))
                cut = off + int(ends[j]) + 1
                if not quoted or ended[j] > 0:  # a CSV file's cut comes after its header
                    cut_lines = lines + int(np.searchsorted(breaks, ends[j], "right"))
                    cuts.append((cut, cut_lines, max(int(ended[j]) - 1, 0)))
                target = cut + size
            if ends.size:
                record_start = off + int(ends[-1]) + 1
                records = int(ended[-1])
            lines += breaks.size
            off += len(chunk)
        if file_identity(fh) != before:
            return []
    sha = digest.hexdigest()
    bounds = [(0, 0, 0), *[c for c in cuts if c[0] < off]]
    return [
        Split(k, start, bounds[k + 1][0] if k + 1 < len(bounds) else off, line, row, sha, off,
              before, *(bounds[k + 1][1:] if k + 1 < len(bounds) else (-1, -1)))
        for k, (start, line, row) in enumerate(bounds)
    ]  # fmt: skip


def describe(value: Any) -> str:
    """A value as a message names it: its JSON kind and a short excerpt."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        shown = value if len(value) <= 30 else value[:29] + "…"
        return f"a string ({shown!r})"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


class BadValue(ValueError):
    """A field's value that its mapping cannot read: the message says what it is instead."""


def _absent(value: Any, cells: bool) -> bool:
    return value is None or (cells and isinstance(value, str) and not value.strip())


def convert(value: Any, kind: str, cells: bool) -> Any:
    """``value`` as a column of type ``kind`` holds it (``id``: the source's id, as a string);
    ``cells``: it is the text of a CSV cell, so numbers, booleans and lists are read from their
    text (a list as a JSON array), and an empty cell is no value."""
    if _absent(value, cells):
        return None
    if isinstance(value, str) and _SURROGATE.search(value):
        raise BadValue(f"{_lone(value)}, which no UTF-8 text holds")
    if kind == "string":
        if isinstance(value, str):
            return value
    elif kind == "id":  # the source's own id: a string, or an integer written as one
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise BadValue(f"{describe(value)}, not a string or an integer")
    elif kind in _INT_RANGE:
        if cells and isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise BadValue(f"{describe(value)}, not an integer") from None
        if isinstance(value, int) and not isinstance(value, bool):
            if -_INT_RANGE[kind] <= value < _INT_RANGE[kind]:
                return value
            raise BadValue(f"{value}, out of range for {kind}")
    elif kind == "float64":
        if cells and isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise BadValue(f"{describe(value)}, not a number") from None
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:  # an integer of hundreds of digits
                raise BadValue(f"an integer of {len(str(abs(value))):,} digits, too large for "
                               "float64") from None  # fmt: skip
    elif kind == "bool":
        if cells and isinstance(value, str) and value.strip().lower() in _BOOLS:
            return _BOOLS[value.strip().lower()]
        if isinstance(value, bool):
            return value
    elif kind == "list<string>":
        if cells and isinstance(value, str):
            try:
                value = json.loads(value)
            except (json.JSONDecodeError, RecursionError, ValueError):
                raise BadValue(f"{describe(value)}, not a JSON array of strings") from None
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            if any(_SURROGATE.search(v) for v in value):
                raise BadValue(f"a list holding {_lone(''.join(value))}, which no UTF-8 text holds")
            return list(value)
    raise BadValue(f"{describe(value)}, not {_KIND_NAMES.get(kind, kind)}")


# A lone UTF-16 surrogate: a JSON escape such as \ud800 with no pair. Python keeps it in a
# string, but no UTF-8 text (so no Arrow or Parquet column) can hold it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone(text: str) -> str:
    found = _SURROGATE.search(text)
    assert found is not None
    return f"a lone surrogate \\u{ord(found.group()):04x}"


_BOOLS = {"true": True, "false": False, "1": True, "0": False}
_KIND_NAMES = {
    "string": "a string",
    "float64": "a number",
    "bool": "a boolean",
    "list<string>": "a list of strings",
}


class Batches:
    """The records of one tabular file, made from its rows and handed on a batch at a time.

    A reader calls :meth:`row` for each row it parsed, :meth:`finding` for what it could not
    parse, yields :meth:`take` whenever :meth:`full`, and ends with :meth:`last`, which carries
    the file's digest and size (known only once it is read).
    """

    def __init__(
        self, path: str, config: Config, format_name: str, *, cells: bool = False,
        split: Split | None = None,
    ) -> None:  # fmt: skip
        self.path = path
        self.split = split
        self.exact = True  # a part read as the whole file's reader reads it (else: read whole)
        self.config = config
        self.map: FieldMap = mapping_for(config.mapping, path, format_name)
        self.columns: tuple[Column, ...] = self.map.carried()
        self.cells = cells
        self.part = SourceFile(path=path)
        self.records = 0
        self.unit = "row"  # how a message names a row's place: a JSON array's is its element
        self.unreadable: set[str] = set()  # fields a file-level finding already covers
        self._cr_seen = False
        self._no_text: list[int] = []  # the lines of records without the text field at all
        self._first_fields = ""  # the fields of the first of them
        self._rows = 0  # the rows parsed (each one a record, or a finding that says why not)
        self.stopped = False  # a limit was reached: the reader reads no further
        # The mapped fields (but the text) no row has had yet, with what each one fills. One
        # that no row of the file has is most likely misspelt, so it is said once at the end:
        # otherwise its column is null in every row and nothing tells why.
        roles = [
            ("id", self.map.id),
            ("venue", self.map.venue),
            ("year", self.map.year),
            ("language", self.map.language),
        ] + [(c.name, c.field) for c in self.columns]
        self._unseen: dict[str, str] = {}
        for role, field in roles:
            if field is not None:
                self._unseen.setdefault(field, role)
        # The fields the file has, for a message about a mapped one it lacks: its header's or
        # schema's (`has_fields`), else those of its records while a mapped field is unseen.
        self.fields: dict[str, None] = {}
        self._fields_known = False

    def has_fields(self, names: Iterable[str]) -> None:
        """The file's own list of fields (a CSV header, a Parquet schema)."""
        self.fields = dict.fromkeys(names)
        self._fields_known = True

    def _shown(self) -> str:
        names = list(self.fields)
        more = f" and {len(names) - 12} more" if len(names) > 12 else ""
        return ", ".join(repr(n) for n in names[:12]) + more or "none"

    def finding(self, code: str, line: int, message: str) -> None:
        self.part.findings.append(finding(code, self.path, line, message, self.config))

    def full(self) -> bool:
        return len(self.part.records) >= BATCH_RECORDS

    def stop(self, code: str, line: int, message: str) -> None:
        """A limit is reached at ``line``: one finding that names it and how to raise it, and
        the reader reads no further (what it read is kept)."""
        if not self.stopped:
            self.stopped = True
            self.finding(code, line, message)

    def take(self) -> SourceFile:
        part = self.part
        drop_oversized(part, self.config)
        self.part = SourceFile(path=self.path)
        return part

    def last(self, sha256: str, size: int) -> SourceFile:
        """The last batch, with the file's digest and size and the findings about the whole
        file; a part's last batch carries its :class:`Tail` instead, for :meth:`finish` to
        say them once the parts are joined."""
        tail = self.tail()
        if self.split is None:
            self.part.findings = self.finish([tail], self.part.findings)
        part = self.take()
        part.sha256, part.size = sha256, size
        if self.split is not None:
            part.tail = tail  # type: ignore[attr-defined]
        return part

    def tail(self) -> Tail:
        return Tail(
            self.records, self._rows, self._no_text, self._first_fields, dict(self._unseen),
            self.fields, self._fields_known, self.unreadable,
            # No record, and no finding that says why (a batch is taken only when full, so
            # every finding of a file without records is in this one): an empty file.
            all(f.code == "bom" for f in self.part.findings), self.exact and not self.stopped,
        )  # fmt: skip

    def finish(self, tails: list[Tail], findings: list[Finding]) -> list[Finding]:
        """``findings`` with those about the whole file the parts' ``tails`` (in file
        order) describe: exactly what one reader of the whole file finds at its end."""
        self.records = sum(t.records for t in tails)
        self._rows = sum(t.rows for t in tails)
        self._no_text = [line for t in tails for line in t.no_text]
        self._first_fields = next((t.first_fields for t in tails if t.no_text), "")
        unseen = [t.unseen for t in tails]
        self._unseen = {f: r for f, r in unseen[0].items() if all(f in u for u in unseen)}
        known = [t.fields for t in tails if t.fields_known]
        if known:
            self.fields = dict(known[0])
        elif not self.records and self._no_text:  # the fields of the first row, as read
            self.fields = dict(next(t.fields for t in tails if t.no_text))
        else:
            self.fields = {f: None for t in tails for f in t.fields}
        self.unreadable = {f for t in tails for f in t.unreadable}
        self.part.findings = _first_only(findings)
        empty = not self.records and all(t.only_bom for t in tails)
        if self._no_text and len(self._no_text) == self._rows:
            self._not_a_source()
            empty = False
        if empty:
            self.finding("empty-file", 0, "no records: the file holds no rows")
        missing = [(f, r) for f, r in self._unseen.items() if f not in self.unreadable]
        if self.records and missing:
            self._missing(missing)
        return self.part.findings

    def _missing(self, missing: list[tuple[str, str]]) -> None:
        """Mapped fields no record has: the id's is an error (every record would lose the
        source's own key, which the user mapped to keep), another's a warning (its column is
        null in every row); each with the fields the file has, and the closest of them."""
        hint = {f: did_you_mean(f, self.fields) for f, _ in missing}
        shown = self._shown()
        if any(role == "id" for _, role in missing):
            field = next(f for f, role in missing if role == "id")
            self.finding(
                "id-field", 0,
                f"no record of the file has the mapped id field {field!r}{hint[field]} (its "
                f"fields: {shown}); set the mapping's `id` to the field holding the records' "
                "own ids, or leave it out",
            )  # fmt: skip
        others = [(f, r) for f, r in missing if r != "id"]
        if others:
            names = ", ".join(f"{f!r} (for {r}){hint[f]}" for f, r in others)
            self.finding(
                "field-missing", 0,
                f"no record of the file has the mapped field {names}: published as null; "
                f"its fields: {shown}",
            )  # fmt: skip

    def _not_a_source(self) -> None:
        """No record has the text field: most likely a file that is no source at all (a tool's
        metadata beside the drops), or a mapping that names another field. One finding says so
        for the file, in place of one per record (a 35,000-line file gave 35,000)."""
        lines = set(self._no_text)
        self.part.findings = [
            f for f in self.part.findings if not (f.code == "text-field" and f.line in lines)
        ]
        name = self.path.rpartition("/")[2]
        self.finding(
            "text-field", self._no_text[0],
            f"no record of the file has the text field {self.map.text!r}"
            f"{did_you_mean(self.map.text, self.fields)} ({len(lines):,} "
            f"read; the first's fields: {self._first_fields or 'none'}); not read. If the file "
            f"is no source, leave it out (--exclude {name}); else set the mapping's `text` to "
            "its text field",
        )  # fmt: skip

    def row(self, values: Mapping[str, Any], line: int, row: int | None = None) -> None:
        """Make the record of one row, or say (one finding) why it has none."""
        limit = self.config.max_records_per_file
        if limit and self.records >= limit:
            self.stop(
                "file-too-large", line,
                f"more than {limit:,} records, over max_records_per_file: the rest of the file, "
                f"from here, is not read (raise max_records_per_file in [tool.curate], or 0 for "
                "no limit, if the file is what it seems)",
            )  # fmt: skip
            return
        self._rows += 1
        at = f"{self.unit} {row}: " if row is not None and row != line else ""
        text = self._text(values, line, at)
        if text is None:
            return
        if self._unseen:
            if not self._fields_known and len(self.fields) < 1000:
                self.fields.update(dict.fromkeys(values))
            for field in self._unseen.keys() & values.keys():
                del self._unseen[field]
        extra = {}
        bad: list[str] = []

        def get(field: str | None, kind: str) -> Any:
            if field is None or field in self.unreadable:
                return None
            try:
                return convert(values.get(field), kind, self.cells)
            except BadValue as exc:
                bad.append(f"{field!r} is {exc}")
                return None

        source_id = get(self.map.id, "id")
        venue = get(self.map.venue, "string")
        year = get(self.map.year, "int32")
        language = get(self.map.language, "string")
        for column in self.columns:
            extra[column.name] = get(column.field, column.type)
        if bad:
            what = "; ".join(bad)
            self.finding("field-type", line, f"{at}{what}: published as null")
        self.records += 1
        self.part.records.append(
            Record(
                self.path, line, text, row=row, source_id=source_id,
                venue=venue if venue is not None else self.map.default_venue,
                year=year if year is not None else self.map.default_year,
                language=language, extra=tuple(extra.items()),
            )
        )  # fmt: skip

    def _text(self, values: Mapping[str, Any], line: int, at: str) -> str | None:
        field = self.map.text
        if field in self.unreadable:
            return None
        text = values.get(field)
        if isinstance(text, str) and _SURROGATE.search(text):
            self.finding(
                "encoding", line,
                f"{at}the text field {field!r} holds {_lone(text)} (an escape of half a UTF-16 "
                "pair), which no UTF-8 text holds; not read",
            )  # fmt: skip
            return None
        if not isinstance(text, str) or not text.strip():
            if field not in values:
                known = ", ".join(repr(k) for k in list(values)[:8])
                if not self._no_text:
                    self._first_fields = known
                    if not self._fields_known:
                        self.fields.update(dict.fromkeys(values))
                self._no_text.append(line)
                why = f"has no field {field!r}{did_you_mean(field, values)} (its fields: "
                why += f"{known or 'none'})"
            elif isinstance(text, str):
                why = f"has an empty text field {field!r}"
            else:
                why = f"has {describe(text)} in its text field {field!r}, not a string"
            self.finding("text-field", line, f"{at}the record {why}; not read")
            return None
        if "\r" in text:
            if not self._cr_seen:
                self._cr_seen = True
                self.finding(
                    "line-endings", line,
                    f"{at}CR or CRLF inside the text (first here): read as a line break, as in "
                    "a text drop",
                )  # fmt: skip
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text


# --- columnar files: Parquet and Arrow -------------------------------------------------------
def _arrow_ok(typ: pa.DataType, kind: str) -> bool:
    import pyarrow as pa

    if kind in ("string",):
        return pa.types.is_string(typ) or pa.types.is_large_string(typ)
    if kind == "id":
        return pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ)
    if kind in _INT_RANGE:
        return pa.types.is_integer(typ)
    if kind == "float64":
        return pa.types.is_floating(typ) or pa.types.is_integer(typ)
    if kind == "bool":
        return pa.types.is_boolean(typ)
    if kind == "list<string>":
        return (pa.types.is_list(typ) or pa.types.is_large_list(typ)) and _arrow_ok(
            typ.value_type, "string"
        )
    return False


def columns_to_read(out: Batches, schema: pa.Schema) -> list[str] | None:
    """The columns of a Parquet or Arrow file the mapping reads, each of a type it can read;
    a column of another type is a `field-type` finding (its values are not read), and a text
    column missing or not of strings is a `text-field` one: then None, no records."""
    fmap = out.map
    names = set(schema.names)
    out.has_fields(schema.names)
    text = fmap.text
    if text not in names:
        shown = ", ".join(repr(n) for n in schema.names[:8])
        hint = did_you_mean(text, names)
        out.finding("text-field", 0, f"no column {text!r}{hint} (its columns: {shown}); not read")
        return None
    if not _arrow_ok(schema.field(text).type, "string"):
        out.finding(
            "field-type", 0,
            f"the text column {text!r} is {schema.field(text).type}, not strings; not read",
        )  # fmt: skip
        return None
    wanted = [(text, "string")]
    wanted += [(f, k) for f, k in ((fmap.id, "id"), (fmap.venue, "string"),
               (fmap.year, "int32"), (fmap.language, "string")) if f is not None]  # fmt: skip
    wanted += [(c.field, c.type) for c in out.columns]
    read: list[str] = []
    for field, kind in wanted:
        if field not in names or field in read:
            continue
        typ = schema.field(field).type
        if _arrow_ok(typ, kind):
            read.append(field)
        else:
            out.unreadable.add(field)
            out.finding(
                "field-type", 0,
                f"the column {field!r} is {typ}, not {_KIND_NAMES.get(kind, kind)}: its values "
                "are not read (published as null)",
            )  # fmt: skip
    return read


# A part of a columnar file: its first row's number less one, its number of rows (None: to
# the end of the file), and its record batches, read when asked for.
Group = tuple[int, "int | None", Callable[[], Iterable["pa.RecordBatch"]]]


def columnar_parts(
    out: Batches,
    groups: Iterable[Group],
    digest: Callable[[], tuple[str, int]],
    what: str,
) -> Iterator[SourceFile]:
    """The records of a Parquet or Arrow file from its record batches: one a row, numbered
    from 1 (a row's number is also its line in findings), a group (a Parquet row group) at a
    time. Damage found while reading is a `file-truncated` finding at the first row lost; the
    rows before it are kept, and in a Parquet file the next row groups are still read."""
    import pyarrow as pa

    for start, count, batches in groups:
        row = start
        try:
            for batch in batches():
                for values in _rows_of(batch, row, out):
                    row += 1
                    if values is not None:
                        out.row(values, row, row)
                    if out.full():
                        yield out.take()
                if out.stopped:
                    break
        except (pa.ArrowException, OSError) as exc:  # damage in the file
            lost = f"rows {row + 1} to {start + count}" if count is not None else "the rest"
            out.finding(
                "file-truncated", row + 1,
                f"the {what} is damaged from row {row + 1} ({reason(exc)}): {lost} not read",
            )  # fmt: skip
            if count is None:
                # The rest of the file is lost to its one reader; a part cannot tell the parts
                # after it so: the file is read again whole.
                out.exact = out.split is None
                break
        if out.stopped:
            break
    yield out.last(*digest())


def _rows_of(batch: pa.RecordBatch, before: int, out: Batches) -> list[dict[str, Any] | None]:
    """The batch's rows as Python values; a row with a string that is not UTF-8 (Arrow does
    not check what a writer put in a string column) is None, with an `encoding` finding."""
    try:
        return batch.to_pylist()
    except UnicodeDecodeError:
        pass
    rows: list[dict[str, Any] | None] = []
    for i in range(batch.num_rows):
        one = batch.slice(i, 1)
        try:
            rows.append(one.to_pylist()[0])
        except UnicodeDecodeError as exc:
            bad = next(n for n, c in zip(one.schema.names, one.columns, strict=True)
                       if not _decodes(c))  # fmt: skip
            out.finding(
                "encoding", before + i + 1,
                f"row {before + i + 1}: the column {bad!r} holds bytes that are not UTF-8 "
                f"({exc.reason} at byte {exc.start + 1}); not read",
            )  # fmt: skip
            rows.append(None)
    return rows


def _decodes(column: pa.Array) -> bool:
    try:
        column.to_pylist()
    except UnicodeDecodeError:
        return False
    return True


def reason(exc: BaseException) -> str:
    """An exception's type and first line, for a finding's message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def joined(parts: Iterable[SourceFile]) -> SourceFile:
    """A whole file from its batches: what ``read`` gives, for callers that want one object."""
    whole: SourceFile | None = None
    for part in parts:
        if whole is None:
            whole = part
            continue
        whole.records += part.records
        whole.findings += part.findings
        whole.sha256, whole.size = part.sha256, part.size
    assert whole is not None, "a reader yields at least its last batch"
    return whole
