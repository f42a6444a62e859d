"""Text drops: a header line naming the venue, year and list, a blank line, then records
separated by blank lines. The first source format and the default one.

Parsing never raises on bad input: what it cannot read becomes a finding with a path and a
line, and whatever can still be read is kept, so one broken file hides nothing else.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import validation.checks  # noqa: F401  (registers the parse codes)
from curate.ingest.formats import drop_oversized, irregular
from validation.config import Config
from validation.findings import Finding
from validation.headers import parse_header
from validation.records import Header, Record, SourceFile
from validation.registry import finding

BOM = "\ufeff"
ACCEPT_MARKER = re.compile(r"^[ \t]*#[ \t]*curate:[ \t]*accept[ \t]+([a-z][a-z, \t-]*?)[ \t]*$")


class TextDrops:
    """The :class:`~curate.ingest.formats.SourceFormat` of plain-text drops (``*.txt``)."""

    name = "text"
    patterns = ("*.txt",)

    def read(self, path: Path, config: Config) -> SourceFile:
        return parse_file(path, config)


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def parse_bytes(data: bytes, path: str, config: Config | None = None) -> SourceFile:
    """The records of a text drop's bytes, and what is wrong with the bytes and the layout."""
    source = SourceFile(path=path, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    add = source.findings.append
    text = _decode(data, path, config, add)
    if text is None:
        return source
    lines = text.split("\n")
    if all(_is_blank(line) for line in lines):
        add(finding("empty-file", path, 1, "the file is empty", config))
        return source
    source.header, body_start = _header(lines, path, config, add)
    source.records = _records(lines, body_start, path, source.header)
    if not source.records:
        what = "a header alone" if source.header is not None else "no records"
        add(finding("empty-file", path, 1, f"no records: {what}", config))
    drop_oversized(source, config)
    return source


def _decode(
    data: bytes, path: str, config: Config | None, add: Callable[[Finding], None]
) -> str | None:
    """The text of the bytes with LF line endings and no BOM (each reported), or None if they
    are not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        kind = "binary data" if b"\x00" in data[:8192] else "invalid UTF-8"
        message = (
            f"{kind}: byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8 "
            f"({exc.reason})"
        )
        add(finding("encoding", path, line, message, config))
        return None
    if text.startswith(BOM):
        add(finding("bom", path, 1, "file starts with a UTF-8 byte-order mark", config))
        text = text[1:]
    if "\r" in text:
        at = text.index("\r")
        kind = "CRLF" if text.startswith("\r\n", at) else "CR"
        line = text.count("\n", 0, at) + 1
        add(finding("line-endings", path, line, f"{kind} line endings (expected LF)", config))
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _header(
    lines: list[str], path: str, config: Config | None, add: Callable[[Finding], None]
) -> tuple[Header | None, int]:
    """The header on the first non-blank line, and the index of the body's first line."""
    first = next(i for i, line in enumerate(lines) if not _is_blank(line))
    header = parse_header(lines[first], config.header_phrases if config else None)
    body_start = first + 1
    if header is None or first != 0:
        where = "blank" if first != 0 else "not a header"
        shown = " ".join(lines[first].split())[:60]
        message = (
            f"line 1 is {where}; expected '<VENUE> <YEAR> <list phrase>', found {shown!r}"
            if header is None
            else f"line 1 is blank; the header {header.text!r} is on line {first + 1}"
        )
        add(finding("header-missing", path, 1, message, config))
        if header is None:
            body_start = first
    return header, body_start


def _records(lines: list[str], start: int, path: str, header: Header | None) -> list[Record]:
    """The records of the body: blocks of non-blank lines, each joined with single spaces."""
    records: list[Record] = []
    block: list[tuple[int, str]] = []

    def flush() -> None:
        accept: tuple[str, ...] = ()
        if block and (marker := ACCEPT_MARKER.match(block[0][1])):
            # `# curate: accept CODE ...` on the line above a record accepts those findings
            # of that record; the marker is not part of the text.
            accept = tuple(marker.group(1).replace(",", " ").split())
            del block[0]
        if not block:
            return
        parts: list[str] = []
        starts: list[int] = []
        offset = 0
        for k, (_, raw) in enumerate(block):
            piece = raw.strip(" \t")
            if k:
                offset += 1
                starts.append(offset)
            parts.append(piece)
            offset += len(piece)
        records.append(Record(path, block[0][0], " ".join(parts), header, tuple(starts), accept))
        block.clear()

    for i in range(start, len(lines)):
        if _is_blank(lines[i]):
            flush()
        else:
            block.append((i + 1, lines[i]))
    flush()
    return records


def parse_file(path: Path, config: Config | None = None) -> SourceFile:
    """Read and parse one drop; never raises, never hangs on a FIFO or a device.

    The entry is ``stat``-ed before it is opened: only a regular file is read, and only up to
    ``max_file_bytes``, so ``/dev/zero``, a FIFO or a 200 MB one-line drop cost nothing.
    """
    where = path.as_posix()
    limit = (config or Config()).max_file_bytes

    def problem(code: str, message: str) -> SourceFile:
        source = SourceFile(path=where)
        source.findings.append(finding(code, where, 0, message, config))
        return source

    try:
        if (why := irregular(path)) is not None:
            return problem("unreadable", why)
        info = path.stat()
        if limit and info.st_size > limit:
            return problem("file-too-large", _too_large(info.st_size, limit))
        with path.open("rb") as fh:
            data = fh.read(limit + 1) if limit else fh.read()
    except OSError as exc:
        return problem("unreadable", f"cannot read: {exc.strerror or exc}")
    if limit and len(data) > limit:  # it grew after the stat
        return problem("file-too-large", _too_large(len(data), limit))
    return parse_bytes(data, where, config)


def _too_large(size: int, limit: int) -> str:
    more = "more than " if size > limit else ""
    return (
        f"{more}{size:,} bytes, over max_file_bytes = {limit:,}; not read (raise the limit in "
        "the configuration if this is a real drop)"
    )
