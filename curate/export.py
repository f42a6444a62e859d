"""Writing the output folder: exactly the files the Hub dataset repository will hold."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa

from curate.table import ARROW_SCHEMA

PARQUET_PATH = "data/train-00000-of-00001.parquet"
ZSTD_LEVEL = 9
# ~50 MB of abstracts a row group: small enough to stream, large enough to compress well.
ROW_GROUP_SIZE = 20_000


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def arrow_schema_with_features() -> pa.Schema:
    """The table schema, carrying the ``datasets`` features so loaders keep the declared types."""
    features = datasets.Features.from_arrow_schema(ARROW_SCHEMA)
    meta = {"huggingface": json.dumps({"info": {"features": features.to_dict()}}, sort_keys=True)}
    return ARROW_SCHEMA.with_metadata(meta)


PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": ZSTD_LEVEL,
    "write_statistics": True,
    "use_dictionary": ["venue", "language"],
}


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def row_digest(row: dict[str, Any]) -> str:
    """SHA-256 of one row as canonical JSON: its content, whatever the file encoding."""
    return hashlib.sha256(
        json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8")
    ).hexdigest()


def canonical_fingerprint(rows: list[dict[str, Any]]) -> str:
    """The content fingerprint of a table: SHA-256 over its rows' digests in id order.

    Defined over row digests so that the build can compute it in worker processes, row by row,
    and a reader of any release can compute the same from its Parquet file.
    """
    digest = hashlib.sha256()
    for row in rows:
        digest.update(row_digest(row).encode())
    return digest.hexdigest()


def file_inventory(folder: Path, exclude: set[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel not in exclude:
            out[rel] = {"sha256": sha256_file(path), "size": path.stat().st_size}
    return out


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """A temporary folder beside ``out`` that replaces it only if the block succeeds.

    A build that fails part-way leaves the previous ``out`` exactly as it was: nothing is
    written to ``out`` itself until every file is complete, and then two renames swap it in.
    """
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=out.parent))
    stage.chmod(0o755)  # mkdtemp's 0700 would make the published folder private to its builder
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
    try:
        os.rename(stage, out)
    except BaseException:
        if old is not None:
            os.rename(old, out)
        shutil.rmtree(stage, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
