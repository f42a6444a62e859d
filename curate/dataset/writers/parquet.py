"""One file of the table as Parquet, ``data/train-00000-of-00001.parquet`` and its like (the
names are the layout's, :mod:`curate.dataset.layout`).

A file holds full row groups of :data:`ROW_GROUP_SIZE` rows but its last, so its layout depends
on its rows alone, never on how they arrived; it carries the ``datasets`` features in its
metadata. It is written under a hidden name and renamed when complete, so a task run again
(an engine retries a lost one) never leaves half a file under the name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curate.dataset.table import ARROW_SCHEMA, hf_features
from curate.dataset.writers import DataFile
from curate.io import sha256_file

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


def arrow_schema_with_features(schema: pa.Schema = ARROW_SCHEMA) -> pa.Schema:
    """The table schema, carrying the ``datasets`` features so loaders keep the declared types
    (the metadata ``datasets`` itself writes; computed without importing it)."""
    features = hf_features(schema)
    meta = {"huggingface": json.dumps({"info": {"features": features}}, sort_keys=True)}
    return schema.with_metadata(meta)


class ParquetFile:
    """The Parquet writer of one file: full row groups, written as the rows come."""

    suffix = ".parquet"

    def __init__(
        self, folder: Path, path: str, *, split: str = "train", schema: pa.Schema | None = None
    ) -> None:
        self.schema = arrow_schema_with_features(schema or ARROW_SCHEMA)
        self.path, self.split = path, split
        self.final = Path(folder) / path
        self.part = self.final.with_name(f".{self.final.name}.part")
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self._writer: pq.ParquetWriter | None = None
        self._rows = self._nbytes = 0

    def _write(self, table: pa.Table) -> None:
        if self._writer is None:
            self.part.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self.part, self.schema, **PARQUET_OPTIONS)
        self._writer.write_table(table, row_group_size=ROW_GROUP_SIZE)
        self._rows += table.num_rows
        self._nbytes += table.nbytes

    def write(self, batch: pa.Table) -> None:
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        while self.pending_rows >= ROW_GROUP_SIZE:
            merged = pa.concat_tables(self.pending)
            self._write(merged.slice(0, ROW_GROUP_SIZE))
            rest = merged.slice(ROW_GROUP_SIZE)
            self.pending, self.pending_rows = [rest], rest.num_rows

    def close(self) -> DataFile:
        if self.pending_rows:
            self._write(pa.concat_tables(self.pending))
        if self._writer is None:
            self._write(self.schema.empty_table())  # an empty shard still has its file
        assert self._writer is not None
        self._writer.close()
        self._writer = None
        os.replace(self.part, self.final)
        size, sha = self.final.stat().st_size, sha256_file(self.final)
        return DataFile(self.path, self._rows, self.split, self._nbytes, size, sha)

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.part.unlink(missing_ok=True)
