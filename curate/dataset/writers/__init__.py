"""Table writers: how one file of the published table (a shard: a range of one split's rows, in
id order) is written.

The layout (:mod:`curate.dataset.layout`) decides which rows each file holds and what it is
called; a writer is opened on one of those files in the staging folder, in the task that writes
that shard, takes its rows a batch at a time in id order (every batch with the table's schema),
and on ``close`` says what it wrote: its rows, their size in memory, its size and SHA-256.
The card's ``configs``, the Croissant file and the manifest are made from those summaries, so
no file is read again to describe it. The Parquet writer is the first implementation.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa


@dataclass(frozen=True)
class DataFile:
    """One file a writer wrote: its path in the release, the split it belongs to, its rows and
    their size in memory (Arrow's, the card's ``num_bytes``), and the file's size and SHA-256
    (the manifest's and the Croissant file's)."""

    path: str
    rows: int
    split: str = "train"
    nbytes: int = 0
    size: int = 0
    sha256: str = ""


class TableWriter(Protocol):
    def write(self, batch: pa.Table) -> None: ...

    def close(self) -> DataFile:
        """Finish the file (an empty shard still gets one) and say what it holds."""
        ...

    def abort(self) -> None:
        """Stop without finishing, leaving nothing under the file's name."""
        ...


WRITERS = {"parquet": "curate.dataset.writers.parquet:ParquetFile"}
DEFAULT = "parquet"


def _writer(name: str) -> Any:
    module, _, cls = WRITERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def suffix(name: str) -> str:
    """How the names of the files the writer ``name`` writes end (``.parquet``)."""
    return str(_writer(name).suffix)


def open_writer(name: str, folder: Path, path: str, **options: object) -> TableWriter:
    """The writer registered as ``name``, writing the file ``path`` of ``folder`` (``options``
    are its own)."""
    return _writer(name)(folder, path, **options)  # type: ignore[no-any-return]
