"""Table writers: how the published table's rows, given in id order, become files of a release.

A writer is opened on the staging folder, takes the rows a batch at a time in id order (every
batch with the table's schema), and on ``close`` says which files it wrote: the card's
``configs``, the Croissant file and the manifest list exactly those. The single Parquet file is
the first implementation.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pyarrow as pa


@dataclass(frozen=True)
class DataFile:
    """One file a writer wrote: its path in the release, and the rows in it."""

    path: str
    rows: int


class TableWriter(Protocol):
    def write(self, batch: pa.Table) -> None: ...

    def close(self) -> list[DataFile]:
        """Finish every file (an empty table still gets one) and list them in order."""
        ...

    def abort(self) -> None:
        """Stop without finishing: the staging folder is removed by the caller."""
        ...


WRITERS = {"parquet": "curate.dataset.writers.parquet:ParquetFile"}
DEFAULT = "parquet"


def open_writer(name: str, folder: Path, schema: pa.Schema | None = None) -> TableWriter:
    """The writer ``name`` on ``folder``, for a table of ``schema`` (default: a build of text
    drops' table)."""
    module, _, cls = WRITERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)(folder, schema)
