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
    import pyarrow.parquet as pq

# A file's schema, and its groups of record batches given the columns to read.
Opened = tuple["pa.Schema", Callable[[list[str]], list[Group]]]


class _Columnar(Tabular):
    """What reading Parquet and Arrow files shares: each says how its file is opened."""

    what = ""

    def from_file(self, fh: BinaryIO, path: Path, out: Batches) -> Iterator[SourceFile]:
        import pyarrow as pa

        try:
            schema, groups = self.open(fh, out)
        except (pa.ArrowException, OSError) as exc:
            out.finding("file-truncated", 0, f"not a readable {self.what} ({reason(exc)})")
            yield out.last(*file_digest(fh))
            return
        columns = columns_to_read(out, schema)
        if columns is None:
            yield out.last(*file_digest(fh))
            return
        yield from columnar_parts(out, groups(columns), lambda: file_digest(fh), self.what)

    def open(self, fh: BinaryIO, out: Batches) -> Opened:
        raise NotImplementedError


class Parquet(_Columnar):
    """The :class:`~curate.ingest.formats.SourceFormat` of Parquet files."""

    name = "parquet"
    patterns = ("*.parquet",)
    what = "Parquet file"

    def open(self, fh: BinaryIO, out: Batches) -> Opened:
        import pyarrow.parquet as pq

        file = pq.ParquetFile(fh)

        def groups(columns: list[str]) -> list[Group]:
            found, first = [], 0
            for i in range(file.num_row_groups):
                rows = file.metadata.row_group(i).num_rows
                read = functools.partial(
                    file.iter_batches, batch_size=BATCH_RECORDS, row_groups=[i], columns=columns
                )
                if not _oversized(file.metadata.row_group(i), columns, first, out):
                    found.append((first, rows, read))
                first += rows
            return found

        return file.schema_arrow, groups


def _oversized(group: pq.RowGroupMetaData, columns: list[str], first: int, out: Batches) -> bool:
    """Whether a batch of the row group's rows would hold more than ``max_file_bytes``, told
    from the sizes its footer declares before anything is decompressed (a 57 KB file of one
    zstd-compressed 640 MiB cell took `validate` to 3.4 GB): then it is one finding and its
    rows are not read."""
    limit = out.config.max_file_bytes
    rows = group.num_rows
    if not limit or not rows:
        return False
    sizes: dict[str, int] = {}
    for j in range(group.num_columns):
        chunk = group.column(j)
        name = chunk.path_in_schema.split(".")[0]
        if name in columns:
            sizes[name] = sizes.get(name, 0) + chunk.total_uncompressed_size
    total = sum(sizes.values())
    batch = total // rows * min(rows, BATCH_RECORDS)
    if batch <= limit:
        return False
    widest = max(sizes, key=sizes.__getitem__)
    out.finding(
        "record-too-large", first + 1,
        f"rows {first + 1:,} to {first + rows:,} (a row group) hold {total:,} bytes "
        f"uncompressed ({sizes[widest]:,} in {widest!r}), {total // rows:,} a row: more than "
        f"max_file_bytes = {limit:,} in one batch; not read (raise max_file_bytes in "
        "[tool.curate], or 0 for no limit, if the rows are what they seem)",
    )  # fmt: skip
    return True


class Arrow(_Columnar):
    """The :class:`~curate.ingest.formats.SourceFormat` of Arrow IPC files, stream or file
    format (``datasets`` writes the stream format)."""

    name = "arrow"
    patterns = ("*.arrow",)
    what = "Arrow file"

    def open(self, fh: BinaryIO, out: Batches) -> Opened:
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
