"""The manifest and the fingerprints: what a release holds, byte by byte and row by row.

The manifest lists the SHA-256 and size of every file of the release and of every source, so a
later build (or ``curate publish``) can tell a previous build from anything else, and a reader
can check what they downloaded. The content fingerprint is defined over the rows, not the
file's bytes, so that any reader of a release can compute it from the Parquet file alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curate.io import sha256_file

if TYPE_CHECKING:
    import pyarrow as pa

# The folder of the table's files (see curate.dataset.layout), and the files of a release
# besides them.
DATA = "data/"
MANIFEST = "manifest.json"
CARD = "README.md"
CROISSANT = "croissant.json"
REPORT_JSON = "validation-report.json"
CHANGELOG = "CHANGELOG.md"
REPORT_HTML = "report.html"  # the page for people: kept beside the release, never uploaded
REJECTED = "rejected.parquet"  # what the build left out, if asked for: local, never uploaded
# Where each row's sources are in their files (line, row): local, never uploaded, since a
# release does not change when its sources are only reordered (see curate.dataset.table).
POSITIONS = "positions.parquet"
# The marker of a staging folder (see curate.release.output): never part of a build.
STAGING_MARKER = ".curate-staging"


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


# How the content fingerprint is defined; the manifest records it as `fingerprint_version`.
# 1 (a manifest without the key): SHA-256 of each row as canonical JSON. 2: SHA-256 of each row's
# canonical binary encoding (`row_digests`), computed by Arrow over whole columns, several times
# cheaper. Fingerprints of different versions are never compared: a release of another version
# is compared row by row (`curate.release.diff`).
FINGERPRINT_VERSION = 2
FINGERPRINT_VERSIONS = (1, 2)  # the definitions `row_digests` computes


def row_digest_v1(row: dict[str, Any]) -> str:
    """SHA-256 of one row as canonical JSON: the fingerprint's rows up to version 1, still
    needed to check a build folder written then."""
    return hashlib.sha256(
        json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8")
    ).hexdigest()


def row_digests(table: pa.Table, version: int = FINGERPRINT_VERSION) -> list[str]:
    """The hex SHA-256 of every row of ``table``, in its order, as fingerprint ``version``
    defines it.

    Version 2 hashes a canonical encoding of every published value: each column's name, then
    its value with a tag for its kind and, where the length varies, the length before it (so
    no two different rows encode alike), a float by its IEEE bits, a null as its own tag. The
    encoding is made by Arrow's kernels a column at a time; only the hashing is per row.
    Arrow types that read back alike (``string`` and ``large_string``, any list type) encode
    alike, so a Parquet file read back gives the digests its rows were written with.
    """
    if version == 1:
        return [row_digest_v1(row) for row in table.to_pylist()]
    if version != 2:
        raise ValueError(f"unknown fingerprint version {version!r}")
    import pyarrow as pa

    pieces: list[Any] = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        pieces += [pa.scalar(f"{len(name.encode())}:{name}".encode(), pa.binary())]
        pieces += _pieces(column.combine_chunks())
    if table.num_rows == 0:
        return []
    return _hex_digests(_join(pieces))


def _hex_digests(encoded: pa.Array) -> list[str]:
    """The hex SHA-256 of each value of a binary array without nulls, each hashed where it lies
    in the array's buffer: no bytes object a row (``to_pylist`` cost about 0.5 µs a row of a
    5,000-row table, beside the hash's 2)."""
    import numpy as np
    import pyarrow as pa

    wide = pa.types.is_large_binary(encoded.type)
    _validity, offsets, data = encoded.buffers()
    bounds = np.frombuffer(offsets, np.int64 if wide else np.int32)
    bounds = bounds[encoded.offset : encoded.offset + len(encoded) + 1].tolist()
    view = memoryview(data) if data is not None else memoryview(b"")
    sha = hashlib.sha256
    return [sha(view[a:b]).hexdigest() for a, b in pairwise(bounds)]


def _join(pieces: list[Any]) -> pa.Array:
    """The pieces joined row by row, a null piece written ``n``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    options = pc.JoinOptions(null_handling="replace", null_replacement="n")
    return pc.binary_join_element_wise(*pieces, pa.scalar(b"", pa.binary()), options=options)


def _pieces(values: pa.Array) -> list[Any]:
    """The parts of each value's encoding, to be joined with :func:`_join`: a tag, then what
    follows it, a part null where the value is (so a null reads ``sn:n``, ``in;``, …, which no
    value reads: after a tag come digits)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = values.type

    def const(b: bytes) -> pa.Scalar:
        return pa.scalar(b, pa.binary())

    def digits(arr: pa.Array) -> pa.Array:
        return pc.cast(pc.cast(arr, pa.string()), pa.binary())

    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
        data = pc.cast(values, pa.binary())
        return [const(b"s"), digits(pc.binary_length(data)), const(b":"), data]
    if pa.types.is_boolean(kind):
        return [const(b"b"), digits(pc.cast(values, pa.int8()))]
    if pa.types.is_integer(kind):
        return [const(b"i"), digits(values), const(b";")]
    if pa.types.is_floating(kind):
        return [const(b"f"), digits(pc.cast(values, pa.float64()).view(pa.int64())), const(b";")]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        lists = pa.LargeListArray if pa.types.is_large_list(kind) else pa.ListArray
        items = _join(_pieces(values.values))
        joined = pc.binary_join(
            lists.from_arrays(values.offsets, items, mask=values.is_null()), const(b"")
        )
        return [const(b"l"), digits(pc.list_value_length(values)), const(b":"), joined]
    if pa.types.is_struct(kind):
        valid = pc.if_else(values.is_valid(), const(b"v"), pa.scalar(None, pa.binary()))
        return [const(b"t"), valid, *(p for f in values.flatten() for p in _pieces(f))]
    raise TypeError(f"the fingerprint has no encoding for a column of type {kind}")


def fingerprint_of(digests: Iterable[str]) -> str:
    """The content fingerprint: SHA-256 over the rows' digests in id order.

    Defined over row digests so that the build can compute it in worker processes, row by row,
    and a reader of any release can compute the same from its Parquet files.
    """
    digest = hashlib.sha256()
    for row in digests:
        digest.update(row.encode())
    return digest.hexdigest()


def file_inventory(
    folder: Path,
    exclude: set[str],
    skip: str | None = None,
    known: dict[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Hash and size of every file in ``folder`` but ``exclude`` and what is under ``skip``
    (a build's working folder, removed before the build is swapped in); those ``known`` (the
    table's files, which their writers hashed as they finished them) are not read again."""
    known = known or {}
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if skip is not None and rel.startswith(skip + "/"):
            continue
        if rel in known:
            out[rel] = dict(known[rel])
        elif rel not in exclude:
            out[rel] = {"sha256": sha256_file(path), "size": path.stat().st_size}
    return out
