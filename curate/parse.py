"""Turning the bytes of a source drop into records and parse findings.

Parsing never raises on bad input: what it cannot read becomes a finding with a path and a
line, and whatever can still be read is kept, so one broken file hides nothing else.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

import validation.checks  # noqa: F401  (registers the parse codes)
from validation.config import Config
from validation.headers import parse_header
from validation.records import Record, SourceFile
from validation.registry import finding

BOM = "\ufeff"
ACCEPT_MARKER = re.compile(r"^[ \t]*#[ \t]*curate:[ \t]*accept[ \t]+([a-z][a-z, \t-]*?)[ \t]*$")


class UsageError(Exception):
    """A command-line mistake (for example a path that does not exist): exit 2, one line."""


def collect_paths(paths: Iterable[str | Path]) -> list[Path]:
    """The drop files named by ``paths``: files as given, folders as every ``*.txt`` inside.

    The result is sorted by path and without repeats, since "earlier" in the duplicate checks
    means earlier in this order.
    """
    found: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in path.glob("*.txt"):
                if child.is_file():
                    found.setdefault(child.as_posix(), child)
        elif path.exists():
            found.setdefault(path.as_posix(), path)
        else:
            raise UsageError(f"no such file or folder: {raw}")
    return [found[k] for k in sorted(found)]


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def parse_bytes(data: bytes, path: str, config: Config | None = None) -> SourceFile:
    source = SourceFile(path=path, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    add = source.findings.append
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        kind = "binary data" if b"\x00" in data[:8192] else "invalid UTF-8"
        add(
            finding(
                "encoding",
                path,
                line,
                f"{kind}: byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8 "
                f"({exc.reason})",
                config,
            )
        )
        return source
    if text.startswith(BOM):
        add(finding("bom", path, 1, "file starts with a UTF-8 byte-order mark", config))
        text = text[1:]
    if "\r" in text:
        at = text.index("\r")
        kind = "CRLF" if text.startswith("\r\n", at) else "CR"
        add(
            finding(
                "line-endings",
                path,
                text.count("\n", 0, at) + 1,
                f"{kind} line endings (expected LF)",
                config,
            )
        )
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if all(_is_blank(line) for line in lines):
        add(finding("empty-file", path, 1, "the file is empty", config))
        return source

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
    source.header = header

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
        source.records.append(
            Record(path, block[0][0], " ".join(parts), header, tuple(starts), accept)
        )
        block.clear()

    for i in range(body_start, len(lines)):
        if _is_blank(lines[i]):
            flush()
        else:
            block.append((i + 1, lines[i]))
    flush()
    if not source.records:
        what = "a header alone" if header is not None else "no records"
        add(finding("empty-file", path, 1, f"no records: {what}", config))
    return source


def parse_file(path: Path, config: Config | None = None) -> SourceFile:
    display = path.as_posix()
    try:
        data = path.read_bytes()
    except OSError as exc:
        source = SourceFile(path=display)
        source.findings.append(
            finding("unreadable", display, 0, f"cannot read: {exc.strerror or exc}", config)
        )
        return source
    return parse_bytes(data, display, config)
