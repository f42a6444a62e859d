"""The table as Parquet files: ``data/train-00000-of-00001.parquet`` by default, or shards of
``shard_size`` rows each (``data/train-00000-of-00004.parquet``, ...), and, with ``splits``,
each split's rows in files of their own (``data/validation-00000-of-00001.parquet``).

A row's split is decided by its id alone (a hash of its words): the first eight hex digits as a
fraction of 16⁸, against the splits' cumulative shares in the order of their names, so a
record stays in its split from release to release and every build puts it there. Files hold full
row groups of :data:`ROW_GROUP_SIZE` rows (or of the shard size, if smaller), so their layout
depends on the rows alone, never on how they arrived; each carries the ``datasets`` features in
its metadata.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from curate.dataset.table import ARROW_SCHEMA, hf_features
from curate.dataset.writers import DataFile

# zstd level 3: on the real dev corpus 10 % larger than level 9, and 3.7 times faster to write
# (7 times on generated text), which is a quarter of a million-row build's serial time.
ZSTD_LEVEL = 3
# ~50 MB of abstracts a row group: small enough to stream, large enough to compress well.
ROW_GROUP_SIZE = 20_000
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": ZSTD_LEVEL,
    "write_statistics": True,
    "use_dictionary": ["venue", "language"],
}
ONE_SPLIT = {"train": 1.0}


def arrow_schema_with_features(schema: pa.Schema = ARROW_SCHEMA) -> pa.Schema:
    """The table schema, carrying the ``datasets`` features so loaders keep the declared types
    (the metadata ``datasets`` itself writes; computed without importing it)."""
    features = hf_features(schema)
    meta = {"huggingface": json.dumps({"info": {"features": features}}, sort_keys=True)}
    return schema.with_metadata(meta)


def split_of(ids: pa.Array, splits: Mapping[str, float]) -> np.ndarray:
    """The index of each id's split in ``splits`` (see the module's docstring)."""
    head = pc.utf8_slice_codeunits(ids, 0, 8).to_pylist()
    where = np.fromiter((int(h, 16) for h in head), dtype=np.float64, count=len(head)) / 16**8
    bounds = np.cumsum(list(splits.values()))[:-1]  # the last split takes the rest
    return np.searchsorted(bounds, where, side="right")


class _Files:
    """One split's files: the row groups of the current shard, and the shards written."""

    def __init__(self, folder: Path, split: str, schema: pa.Schema, shard_size: int) -> None:
        self.folder, self.split, self.schema, self.shard = folder, split, schema, shard_size
        self.group = ROW_GROUP_SIZE
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.done: list[tuple[Path, int, int]] = []  # (temporary path, rows, nbytes)
        self._writer: pq.ParquetWriter | None = None
        self._rows = self._nbytes = 0

    def _part(self) -> Path:
        return self.folder / "data" / f".{self.split}-{len(self.done):05d}.parquet.part"

    def _write(self, table: pa.Table) -> None:
        if self._writer is None:
            path = self._part()
            path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(path, self.schema, **PARQUET_OPTIONS)
        self._writer.write_table(table, row_group_size=self.group)
        self._rows += table.num_rows
        self._nbytes += table.nbytes
        if self.shard and self._rows >= self.shard:
            self._finish()

    def _finish(self) -> None:
        if self._writer is None:
            self._write(self.schema.empty_table())  # an empty split still has its file
            if self._writer is None:
                return
        self._writer.close()
        self.done.append((self._part(), self._rows, self._nbytes))
        self._writer, self._rows, self._nbytes = None, 0, 0

    def _room(self) -> int:
        """Rows the next row group takes: a full group, or what is left of the shard."""
        return min(self.group, self.shard - self._rows) if self.shard else self.group

    def add(self, batch: pa.Table) -> None:
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        while self.pending_rows >= (room := self._room()):
            merged = pa.concat_tables(self.pending)
            self._write(merged.slice(0, room))
            rest = merged.slice(room)
            self.pending, self.pending_rows = [rest], rest.num_rows

    def close(self) -> list[DataFile]:
        if self.pending_rows:
            self._write(pa.concat_tables(self.pending))
        if self._writer is not None or not self.done:
            self._finish()
        total = len(self.done)
        out = []
        for k, (part, rows, nbytes) in enumerate(self.done):
            rel = f"data/{self.split}-{k:05d}-of-{total:05d}.parquet"
            os.replace(part, self.folder / rel)
            out.append(DataFile(rel, rows, self.split, nbytes))
        return out

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()


class ParquetFile:
    """The Parquet writer; ``shard_size`` 0 writes each split as one file."""

    def __init__(
        self,
        folder: Path,
        *,
        shard_size: int = 0,
        splits: Mapping[str, float] | None = None,
        schema: pa.Schema | None = None,
    ) -> None:
        self.schema = arrow_schema_with_features(schema or ARROW_SCHEMA)
        self.splits = {k: (splits or ONE_SPLIT)[k] for k in sorted(splits or ONE_SPLIT)}
        self._files = [_Files(folder, name, self.schema, shard_size) for name in self.splits]

    def write(self, batch: pa.Table) -> None:
        if len(self._files) == 1:
            self._files[0].add(batch)
            return
        which = split_of(batch.column("id"), self.splits)
        for k, files in enumerate(self._files):
            mask = which == k
            if mask.any():
                files.add(batch.filter(pa.array(mask)))

    def close(self) -> list[DataFile]:
        return [f for files in self._files for f in files.close()]

    def abort(self) -> None:
        for files in self._files:
            files.abort()
