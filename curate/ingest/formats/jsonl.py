"""JSON Lines (``*.jsonl``, gzipped ``*.jsonl.gz``) and JSON arrays (``*.json``): one record per
object, its fields read through the file's mapping (:mod:`validation.mapping`).

Parsed with the standard library's ``json``. A JSON Lines file is read a line at a time,
through ``gzip`` when it is compressed, so its size is bounded by nothing but the disk; a line
that is not JSON, or not an object, is an `invalid-json` finding at its line and the next line
is read. A ``.json`` file is read whole (within ``max_file_bytes``, like a text drop): an array
of objects, each at the line it starts on; a ``.json`` file that is no array is read as JSON
Lines, which many such files are.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from curate.ingest.formats import Split
from curate.ingest.formats.fields import Batches, Hashed, Tabular, line_limit, line_splits
from validation.config import Config
from validation.records import SourceFile

_WHITESPACE = " \t\n\r"  # JSON's


class _Object(dict):
    """A JSON object that remembers the first field it was given twice: ``json`` keeps the
    last value of a repeated name and drops the first without a word."""

    __slots__ = ("repeated",)


def _pairs(pairs: list[tuple[str, object]]) -> dict:
    obj = _Object(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        obj.repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return obj


_decoder = json.JSONDecoder(object_pairs_hook=_pairs)


class JsonLines(Tabular):
    """The :class:`~curate.ingest.formats.SourceFormat` of JSON Lines and JSON arrays."""

    name = "jsonl"
    patterns = ("*.jsonl", "*.jsonl.gz", "*.json")

    def from_file(self, fh: BinaryIO, path: Path, out: Batches) -> Iterator[SourceFile]:
        if path.name.endswith(".json"):
            return _array(fh, out, out.config)
        return _lines(fh, out, out.config, path.name.endswith(".gz"))

    def from_part(
        self, fh: BinaryIO, path: Path, out: Batches, split: Split
    ) -> Iterator[SourceFile]:
        return _lines(fh, out, out.config, False, split)

    def splits(self, path: Path, config: Config, size: int) -> list[Split]:
        """A ``.jsonl`` file cut on line breaks; a compressed one (read from its start only)
        and a ``.json`` one (an array, read whole) are one part."""
        return line_splits(path, size) if path.name.endswith(".jsonl") else []


# A .gz file's expansion is checked once this much is decompressed: a small file may expand
# far (a few repeated lines), and gzip reads its input 128 KiB at a time.
EXPANSION_FLOOR = 1 << 20


def _lines(
    fh: BinaryIO, out: Batches, config: Config, gz: bool, split: Split | None = None
) -> Iterator[SourceFile]:
    hashed = Hashed(fh)
    # gzip reads straight from the file, so what it has consumed is what has been hashed.
    stream = gzip.GzipFile(fileobj=hashed, mode="rb") if gz else io.BufferedReader(hashed, 1 << 20)
    limit = line_limit(config)
    number = expanded = 0
    left = -1  # the bytes of the part still to read (-1: to the end of the file)
    if split is not None:  # the lines from split.start to split.end, numbered on from its line
        raw = fh.raw  # type: ignore[attr-defined]
        raw.seek(split.start)
        stream = io.BufferedReader(raw, 1 << 20)
        number, left = split.line, split.end - split.start
    try:
        while not out.stopped and left and (data := stream.readline(limit + 1 if limit else -1)):
            left -= len(data) if split is not None else 0
            number += 1
            expanded += len(data)
            if gz and expanded > EXPANSION_FLOOR and _bomb(out, expanded, hashed.size, number):
                break
            if limit and len(data) > limit and not data.endswith(b"\n"):
                size = len(data)
                while (more := stream.readline(1 << 20)) and not more.endswith(b"\n"):
                    size += len(more)
                left -= size - len(data) + len(more) if split is not None else 0
                out.finding(
                    "record-too-large", number,
                    f"a line of more than {limit:,} bytes ({size + len(more):,}): not read",
                )  # fmt: skip
                continue
            _line(out, data, number)
            if out.full():
                yield out.take()
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        out.finding("file-truncated", number + 1, _damage(exc, number, expanded))
    except OSError as exc:
        out.finding("unreadable", number + 1, f"cannot read on from line {number + 1}: {exc}")
    if split is not None:
        yield out.last(split.sha256, split.size)
        return
    yield out.last(hashed.finish(), hashed.size)


def _damage(exc: Exception, number: int, expanded: int) -> str:
    """What a .gz file's damage cost, found after ``number`` lines: bytes that are no gzip
    member after a whole one (a file appended to) cost nothing, though they were said to."""
    if isinstance(exc, gzip.BadGzipFile) and expanded and str(exc).startswith("Not a gzipped"):
        return (
            "bytes that are not gzip follow the end of the compressed data (appended to it?): "
            f"they are not read; all {number:,} lines before them were, nothing is lost"
        )
    if isinstance(exc, EOFError):
        what = "the compressed file ends early (a download cut short?)"
    else:
        what = f"the compressed file is damaged ({exc})"
    rest = f"line {number + 1} and what follows are lost" if number else "nothing is read"
    return f"{what}: {rest}; {number:,} line{'' if number == 1 else 's'} read"


def _bomb(out: Batches, expanded: int, compressed: int, number: int) -> bool:
    """Whether a .gz file has expanded past ``max_expansion`` times the compressed bytes read
    for it: a compression bomb (one record a million times over took `validate` to 3.1 GB and
    288 s), read no further, with the lines before kept."""
    ratio = out.config.max_expansion
    if not ratio or expanded <= ratio * compressed:
        return False
    out.stop(
        "file-too-large", number,
        f"the compressed file expands more than {ratio} times ({compressed:,} bytes read gave "
        f"{expanded:,}), over max_expansion: a compression bomb, or one record repeated; line "
        f"{number:,} and what follows are not read (raise max_expansion in [tool.curate], or 0 "
        "for no limit, if the file is what it seems)",
    )  # fmt: skip
    return True


def _line(out: Batches, data: bytes, number: int) -> None:
    if number == 1 and data.startswith(codecs.BOM_UTF8):
        out.finding("bom", 1, "file starts with a UTF-8 byte-order mark")
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.finding(
            "encoding", number,
            f"byte 0x{data[exc.start]:02x} at byte {exc.start + 1} of the line is not UTF-8 "
            f"({exc.reason}); the line is not read",
        )  # fmt: skip
        return
    if not text.strip(_WHITESPACE):
        return  # a blank line: no record, and nothing wrong
    try:
        value = _decoder.decode(text)
    except json.JSONDecodeError as exc:
        out.finding("invalid-json", number, f"not JSON: {_reason(exc)} at column {exc.colno}")
        return
    except (RecursionError, ValueError) as exc:
        out.finding("invalid-json", number, f"{unparsable(exc)}; the line is not read")
        return
    _value(out, value, number)


def _repeated(value: dict) -> str | None:
    """The first field named twice in the object or in an object inside it, or None."""
    found = getattr(value, "repeated", None)
    if found is not None:
        return found
    stack = [v for v in value.values() if isinstance(v, dict | list)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found = getattr(item, "repeated", None)
            if found is not None:
                return found
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        else:
            stack.extend(v for v in item if isinstance(v, dict | list))
    return None


def unparsable(exc: BaseException) -> str:
    """Why a JSON text the decoder refused past its own syntax errors cannot be read: nested
    deeper than Python recurses, or an integer longer than Python converts (each crashed
    the whole run, where it is one bad record)."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deep to read (arrays or objects inside one another)"
    if "integer string conversion" in str(exc):
        limit = sys.get_int_max_str_digits()
        return f"an integer of more than {limit:,} digits, over Python's limit for reading one"
    return f"a JSON value Python cannot hold ({str(exc).split(';')[0]})"


def _value(out: Batches, value: object, number: int, element: int | None = None) -> None:
    at = f"element {element}: " if element is not None else ""  # of an array: several a line
    if isinstance(value, dict):
        repeated = _repeated(value)
        if repeated is not None:
            out.finding(
                "duplicate-key", number,
                f"{at}the object names the field {repeated!r} more than once: its last value "
                "is read, the earlier ones are dropped",
            )  # fmt: skip
        out.row(value, number, element)
    else:
        kind = {list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a value")
        if value is None:
            kind = "null"
        elif isinstance(value, int | float) and not isinstance(value, bool):
            kind = "a number"
        out.finding("invalid-json", number, f"{at}{kind}, not an object: no record")


def _array(fh: BinaryIO, out: Batches, config: Config) -> Iterator[SourceFile]:
    """A ``.json`` file: an array of objects (each at the line it starts on), else JSON Lines."""
    limit = config.max_file_bytes
    hashed = Hashed(fh)
    data = io.BufferedReader(hashed).read(limit + 1 if limit else -1)
    if limit and len(data) > limit:
        out.finding(
            "file-too-large", 0,
            f"more than {limit:,} bytes, over max_file_bytes; not read (a .json file is read "
            "whole: write it as JSON Lines, .jsonl, to stream it)",
        )  # fmt: skip
        yield out.last(hashed.finish(), hashed.size)
        return
    digest = hashed.finish()
    if data.startswith(codecs.BOM_UTF8):
        out.finding("bom", 1, "file starts with a UTF-8 byte-order mark")
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        out.finding("encoding", line, f"byte 0x{data[exc.start]:02x} is not UTF-8; not read")
        yield out.last(digest, hashed.size)
        return
    start = _skip(text, 0)
    if text[start : start + 1] != "[":
        try:
            whole = _decoder.decode(text)
        except (json.JSONDecodeError, RecursionError, ValueError):
            whole = None  # several values: JSON Lines under a .json name (each line read)
        if isinstance(whole, dict):
            _value(out, whole, text.count("\n", 0, start) + 1)
        else:
            for number, line in enumerate(text.split("\n"), start=1):
                if out.stopped:
                    break
                _line(out, line.encode("utf-8", "surrogatepass"), number)
                if out.full():
                    yield out.take()
        yield out.last(digest, hashed.size)
        return
    out.unit = "element"  # several may share a line: each is named by its place
    yield from _elements(text, start + 1, out)
    yield out.last(digest, hashed.size)


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _elements(text: str, pos: int, out: Batches) -> Iterator[SourceFile]:
    """The values of the array opened before ``pos``, decoded one at a time by the standard
    library's decoder (only the array's commas and brackets are looked at here)."""
    decoder = _decoder
    line, counted = 1, 0

    def line_at(at: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, at)
        counted = at
        return line

    pos = _skip(text, pos)
    if text.startswith("]", pos):
        return
    element = 0
    while True:
        element += 1
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            out.finding(
                "invalid-json", line_at(exc.pos),
                f"not JSON: {_reason(exc)} at column {exc.colno}; the rest of the array is not "
                "read",
            )  # fmt: skip
            return
        except (RecursionError, ValueError) as exc:
            out.finding(
                "invalid-json", line_at(pos),
                f"{unparsable(exc)}; the rest of the array is not read",
            )  # fmt: skip
            return
        _value(out, value, line_at(pos), element)  # its position: several may share a line
        if out.full():
            yield out.take()
        if out.stopped:
            return
        pos = _skip(text, end)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
            continue
        if text.startswith("]", pos) and _skip(text, pos + 1) == len(text):
            return
        what = "text after the array" if text.startswith("]", pos) else "no ',' or ']'"
        out.finding("invalid-json", line_at(pos), f"{what} here; the rest is not read")
        return


def _reason(exc: json.JSONDecodeError) -> str:
    """The decoder's reason, without the ``at`` some of its reasons end in (``Invalid control
    character at``), which the message's own ``at column N`` follows."""
    return exc.msg.removesuffix(" at")
