"""Parquet (``*.parquet``) and Arrow (``*.arrow``) files: one record per row, numbered from 1.

This is also how a Hugging Face dataset is read, without ``datasets``: a Hub-layout folder
(``data/train-00000-of-00001.parquet``, ...) is a folder of Parquet files, and a folder written
by ``Dataset.save_to_disk`` holds its rows in Arrow stream files (``data-00000-of-00001.arrow``)
beside metadata that is no source (:data:`curate.ingest.formats.NOT_SOURCES`). Read with
``pyarrow`` a record batch at a time (a Parquet row group at a time), and only the columns the
mapping names, so memory stays bounded by a batch whatever the file's size. A column whose
Arrow type the mapping cannot read is one finding for the file, not one a row.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from curate.ingest.formats.fields import (
    BATCH_RECORDS,
    Batches,
    Group,
    Tabular,
    columnar_parts,
    columns_to_read,
    file_digest,
    reason,
)
from validation.records import SourceFile

if TYPE_CHECKING:
    import pyarrow as pa

# A file's schema, and its groups of record batches given the columns to read.
Opened = tuple["pa.Schema", Callable[[list[str]], list[Group]]]


class _Columnar(Tabular):
    """What reading Parquet and Arrow files shares: each says how its file is opened."""

    what = ""

    def from_file(self, fh: BinaryIO, path: Path, out: Batches) -> Iterator[SourceFile]:
        import pyarrow as pa

        try:
            schema, groups = self.open(fh)
        except (pa.ArrowException, OSError) as exc:
            out.finding("file-truncated", 0, f"not a readable {self.what} ({reason(exc)})")
            yield out.last(*file_digest(fh))
            return
        columns = columns_to_read(out, schema)
        if columns is None:
            yield out.last(*file_digest(fh))
            return
        yield from columnar_parts(out, groups(columns), lambda: file_digest(fh), self.what)

    def open(self, fh: BinaryIO) -> Opened:
        raise NotImplementedError


class Parquet(_Columnar):
    """The :class:`~curate.ingest.formats.SourceFormat` of Parquet files."""

    name = "parquet"
    patterns = ("*.parquet",)
    what = "Parquet file"

    def open(self, fh: BinaryIO) -> Opened:
        import pyarrow.parquet as pq

        file = pq.ParquetFile(fh)

        def groups(columns: list[str]) -> list[Group]:
            out, first = [], 0
            for i in range(file.num_row_groups):
                rows = file.metadata.row_group(i).num_rows
                read = functools.partial(
                    file.iter_batches, batch_size=BATCH_RECORDS, row_groups=[i], columns=columns
                )
                out.append((first, rows, read))
                first += rows
            return out

        return file.schema_arrow, groups


class Arrow(_Columnar):
    """The :class:`~curate.ingest.formats.SourceFormat` of Arrow IPC files, stream or file
    format (``datasets`` writes the stream format)."""

    name = "arrow"
    patterns = ("*.arrow",)
    what = "Arrow file"

    def open(self, fh: BinaryIO) -> Opened:
        import pyarrow as pa
        import pyarrow.ipc as ipc

        try:
            stream = ipc.open_stream(fh)
            schema, batches = stream.schema, iter(stream)
        except (pa.ArrowException, OSError):
            fh.seek(0)
            file = ipc.open_file(fh)
            schema = file.schema
            batches = (file.get_batch(i) for i in range(file.num_record_batches))

        def groups(columns: list[str]) -> list[Group]:
            return [(0, None, lambda: (batch.select(columns) for batch in batches))]

        return schema, groups
