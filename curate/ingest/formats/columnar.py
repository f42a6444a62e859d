"""Parquet (``*.parquet``) and Arrow (``*.arrow``) files: one record per row, numbered from 1.

This is also how a Hugging Face dataset is read, without ``datasets``: a Hub-layout folder
(``data/train-00000-of-00001.parquet``, ...) is a folder of Parquet files, and a folder written
by ``Dataset.save_to_disk`` holds its rows in Arrow stream files (``data-00000-of-00001.arrow``)
beside metadata that is no source (:data:`curate.ingest.formats.NOT_SOURCES`). Read with
``pyarrow`` a record batch at a time, and only the columns the mapping names, so memory stays
bounded by a batch whatever the file's size. A column whose Arrow type the mapping cannot read
is one finding for the file, not one a row.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

from curate.ingest.formats import irregular
from curate.ingest.formats.fields import (
    BATCH_RECORDS,
    Batches,
    columnar_parts,
    columns_to_read,
    file_digest,
    joined,
    reason,
)
from validation.config import Config
from validation.records import SourceFile


def _opened(path: Path, out: Batches) -> bool:
    """Whether the file may be opened; else an `unreadable` finding says why."""
    try:
        why = irregular(path)
    except OSError as exc:
        why = f"cannot read: {exc.strerror or exc}"
    if why is not None:
        out.finding("unreadable", 0, why)
    return why is None


class Parquet:
    """The :class:`~curate.ingest.formats.SourceFormat` of Parquet files."""

    name = "parquet"
    patterns = ("*.parquet",)

    def read(self, path: Path, config: Config) -> SourceFile:
        return joined(self.parts(path, config))

    def parts(self, path: Path, config: Config) -> Iterator[SourceFile]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        out = Batches(path.as_posix(), config, self.name)
        if not _opened(path, out):
            yield out.last("", 0)
            return
        try:
            file = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            out.finding("file-truncated", 0, f"not a readable Parquet file ({reason(exc)})")
            yield out.last(*file_digest(path))
            return
        with file:
            columns = columns_to_read(out, file.schema_arrow)
            if columns is None:
                yield out.last(*file_digest(path))
                return
            groups, first = [], 0
            for i in range(file.num_row_groups):
                rows = file.metadata.row_group(i).num_rows
                groups.append((first, rows, functools.partial(
                    file.iter_batches, batch_size=BATCH_RECORDS, row_groups=[i], columns=columns
                )))  # fmt: skip
                first += rows
            yield from columnar_parts(out, groups, lambda: file_digest(path), "Parquet file")


class Arrow:
    """The :class:`~curate.ingest.formats.SourceFormat` of Arrow IPC files, stream or file
    format (``datasets`` writes the stream format)."""

    name = "arrow"
    patterns = ("*.arrow",)

    def read(self, path: Path, config: Config) -> SourceFile:
        return joined(self.parts(path, config))

    def parts(self, path: Path, config: Config) -> Iterator[SourceFile]:
        import pyarrow as pa
        import pyarrow.ipc as ipc

        out = Batches(path.as_posix(), config, self.name)
        if not _opened(path, out):
            yield out.last("", 0)
            return
        try:
            source = pa.memory_map(str(path))
        except (pa.ArrowException, OSError) as exc:
            out.finding("unreadable", 0, f"cannot read: {reason(exc)}")
            yield out.last(*file_digest(path))
            return
        with source:
            try:
                stream = ipc.open_stream(source)
            except (pa.ArrowException, OSError):
                try:
                    source.seek(0)
                    reader = ipc.open_file(source)
                except (pa.ArrowException, OSError) as exc:
                    out.finding("file-truncated", 0, f"not a readable Arrow file ({reason(exc)})")
                    yield out.last(*file_digest(path))
                    return
                schema = reader.schema
                batches: Iterator = (reader.get_batch(i) for i in range(reader.num_record_batches))
            else:
                schema, batches = stream.schema, iter(stream)
            columns = columns_to_read(out, schema)
            if columns is None:
                yield out.last(*file_digest(path))
                return
            chosen = (batch.select(columns) for batch in batches)
            yield from columnar_parts(
                out, [(0, None, lambda: chosen)], lambda: file_digest(path), "Arrow file"
            )
