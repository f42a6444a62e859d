"""Turning the bytes of a source drop into records and parse findings.

Parsing never raises on bad input: what it cannot read becomes a finding with a path and a
line, and whatever can still be read is kept, so one broken file hides nothing else.
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import validation.checks  # noqa: F401  (registers the parse codes)
from curate.errors import UsageError
from validation.config import Config
from validation.headers import parse_header
from validation.records import Record, SourceFile
from validation.registry import finding

BOM = "\ufeff"
ACCEPT_MARKER = re.compile(r"^[ \t]*#[ \t]*curate:[ \t]*accept[ \t]+([a-z][a-z, \t-]*?)[ \t]*$")


DROP_GLOB = "*.txt"


@dataclass(frozen=True)
class Found:
    """One input entry: where to read it, its name in outputs, and why it is not read (if so).

    ``name`` is the path relative to the folder given (a file given by itself: its name), so the
    outputs never depend on, or reveal, where the sources lived, while ``a/x.txt`` and
    ``b/x.txt`` stay distinct.
    """

    path: Path
    name: str
    problem: tuple[str, str] | None = None  # (code, message): a finding instead of reading it


def display(path: str | Path) -> str:
    """A path as text that can always be printed and written as UTF-8.

    A file name that is not valid UTF-8 keeps its undecodable bytes as ``\\xNN`` escapes:
    deterministic, readable, and never a crash when a report or the table is written.
    """
    text = path if isinstance(path, str) else Path(path).as_posix()
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte stands for
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    name = rel.rpartition("/")[2]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def _walk(root: Path, roots: list[Path], exclude: tuple[str, ...]) -> Iterator[Found]:
    """Every drop under ``root``, in sorted order, following symlinks only inside ``roots``."""
    seen: set[Path] = set()

    def inside(target: Path) -> bool:
        return any(target == r or target.is_relative_to(r) for r in roots)

    def visit(folder: Path, prefix: str) -> Iterator[Found]:
        real = folder.resolve()
        if real in seen:  # a symlink back up the tree: each folder is read once
            return
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            rel = prefix.rstrip("/") or "."
            yield Found(folder, rel, ("unreadable", f"cannot list folder: {exc.strerror or exc}"))
            return
        for entry in entries:
            rel = prefix + entry.name
            path = Path(entry.path)
            if _excluded(rel, exclude):
                continue
            link = entry.is_symlink()
            try:
                target = path.resolve(strict=True) if link else path
                is_dir = target.is_dir()
            except FileNotFoundError:
                if fnmatch.fnmatchcase(entry.name, DROP_GLOB):
                    yield Found(path, rel, ("unreadable", "dangling symlink: its target is gone"))
                continue
            except (OSError, RuntimeError) as exc:  # a symlink loop, or no permission
                why = (
                    "symlink loop"
                    if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
                    else (exc.strerror or str(exc))
                )
                yield Found(path, rel, ("unreadable", f"cannot follow: {why}"))
                continue
            if link and not inside(target):
                if is_dir or fnmatch.fnmatchcase(entry.name, DROP_GLOB):
                    yield Found(
                        path,
                        rel,
                        ("outside-link", "symlink to a path outside the folders given; not read"),
                    )
                continue
            if is_dir:
                yield from visit(path, rel + "/")
            elif fnmatch.fnmatchcase(entry.name, DROP_GLOB):
                yield Found(path, rel)

    yield from visit(root, "")


def discover(paths: Iterable[str | Path], exclude: tuple[str, ...] = ()) -> list[Found]:
    """The drops named by ``paths``: files as given, folders searched recursively for ``*.txt``.

    The result is sorted by path and without repeats, since "earlier" in the duplicate checks
    means earlier in this order. A folder that yields nothing is a usage error: a moved or
    misspelt drop folder must not pass as a clean, empty corpus.
    """
    given = [Path(p) for p in paths]
    roots = [p.resolve() for p in given if p.is_dir()]
    found: dict[str, Found] = {}
    for path in given:
        if path.is_dir():
            entries = list(_walk(path, roots, exclude))
            if not entries:
                also = f" (after --exclude {', '.join(exclude)})" if exclude else ""
                raise UsageError(f"no drops ({DROP_GLOB}) in {display(path)}{also}")
            for item in entries:
                found.setdefault(item.path.as_posix(), item)
        elif path.exists() or path.is_symlink():
            found.setdefault(path.as_posix(), Found(path, display(path.name)))
        else:
            raise UsageError(f"no such file or folder: {display(path)}")
    if not found:
        raise UsageError("no drops given")
    items = [found[k] for k in sorted(found)]
    names = [f.name for f in items]
    if len(set(names)) != len(names):  # folders given side by side: name them from their parent
        base = os.path.commonpath([str(f.path.absolute().parent) for f in items])
        items = [replace(f, name=display(os.path.relpath(f.path.absolute(), base))) for f in items]
    return [replace(f, name=display(f.name)) for f in items]


def collect_paths(paths: Iterable[str | Path], exclude: tuple[str, ...] = ()) -> list[Path]:
    """The drop files named by ``paths`` (see :func:`discover`), as paths."""
    return [f.path for f in discover(paths, exclude)]


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
    max_chars = (config or Config()).max_record_chars
    if max_chars:
        kept = []
        for record in source.records:
            if len(record.text) > max_chars:
                message = (
                    f"record of {len(record.text):,} characters, over max_record_chars = "
                    f"{max_chars:,}: not checked and not included (two drops run together, or "
                    "not a drop at all?)"
                )
                add(finding("record-too-large", path, record.line, message, config))
            else:
                kept.append(record)
        source.records = kept
    return source


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
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            kind = {
                stat.S_ISFIFO(info.st_mode): "a FIFO (named pipe)",
                stat.S_ISCHR(info.st_mode): "a character device",
                stat.S_ISBLK(info.st_mode): "a block device",
                stat.S_ISSOCK(info.st_mode): "a socket",
                stat.S_ISDIR(info.st_mode): "a folder",
            }.get(True, "not a regular file")
            return problem("unreadable", f"not a regular file: {kind}; not read")
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
