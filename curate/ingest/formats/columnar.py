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

from curate.ingest.formats import Split
from curate.ingest.formats.fields import (
    BATCH_RECORDS,
    Batches,
    Group,
    Tabular,
    columnar_parts,
    columns_to_read,
    file_digest,
    file_identity,
    reason,
)
from validation.config import Config
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
        return self._read(fh, out, lambda: file_digest(fh))

    def from_part(
        self, fh: BinaryIO, path: Path, out: Batches, split: Split
    ) -> Iterator[SourceFile]:
        return self._read(fh, out, lambda: (split.sha256, split.size))

    def _read(
        self, fh: BinaryIO, out: Batches, digest: Callable[[], tuple[str, int]]
    ) -> Iterator[SourceFile]:
        import pyarrow as pa

        said = len(out.part.findings)
        try:
            schema, groups = self.open(fh, out)
        except (pa.ArrowException, OSError) as exc:
            out.finding("file-truncated", 0, f"not a readable {self.what} ({reason(exc)})")
            out.exact = out.split is None  # it was readable when planned: read it whole
            yield out.last(*digest())
            return
        columns = columns_to_read(out, schema)
        if out.split is not None and out.split.number:
            del out.part.findings[said:]  # about the schema: the first part says them
        if columns is None:
            yield out.last(*digest())
            return
        yield from columnar_parts(out, groups(columns), digest, self.what)

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

        split = out.split
        wanted = range(split.start, split.end) if split else range(file.num_row_groups)

        def groups(columns: list[str]) -> list[Group]:
            found, first = [], 0
            for i in range(file.num_row_groups):
                rows = file.metadata.row_group(i).num_rows
                read = functools.partial(
                    file.iter_batches, batch_size=BATCH_RECORDS, row_groups=[i], columns=columns
                )
                if i in wanted and not _oversized(file.metadata.row_group(i), columns, first, out):
                    found.append((first, rows, read))
                first += rows
            return found

        return file.schema_arrow, groups

    def splits(self, path: Path, config: Config, size: int) -> list[Split]:
        """The file cut between row groups, about every ``size`` bytes of them (compressed,
        as they are read)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        with path.open("rb") as fh:
            before = file_identity(fh)
            try:
                meta = pq.ParquetFile(fh).metadata
            except (pa.ArrowException, OSError):
                return []  # read whole: its reader says why
            sha, total = file_digest(fh)
            if file_identity(fh) != before:
                return []
        bounds: list[tuple[int, int]] = []  # (first row group, rows before it)
        held = rows = 0
        for i in range(meta.num_row_groups):
            group = meta.row_group(i)
            if not bounds or held >= size:
                bounds.append((i, rows))
                held = 0
            held += sum(group.column(j).total_compressed_size for j in range(group.num_columns))
            rows += group.num_rows
        return _parts(bounds, meta.num_row_groups, sha, total, before)


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

        split = out.split
        if split is not None:
            batches = _messages(fh, schema, split.start, split.end)

        def groups(columns: list[str]) -> list[Group]:
            first = split.line if split is not None else 0
            return [(first, None, lambda: (batch.select(columns) for batch in batches))]

        return schema, groups

    def splits(self, path: Path, config: Config, size: int) -> list[Split]:
        """The file cut between record batches, about every ``size`` bytes of them, found by
        their messages' lengths (a file with dictionaries, whose batches depend on the ones
        before, is read whole)."""
        import pyarrow as pa
        import pyarrow.ipc as ipc

        with path.open("rb") as fh:
            before = file_identity(fh)
            sha, total = file_digest(fh)
            fh.seek(0)
            source = pa.PythonFile(fh, mode="r")
            source.seek(8 if fh.read(6) == b"ARROW1" else 0)  # the file format's magic
            try:
                reader = ipc.MessageReader.open_stream(source)
                schema = ipc.read_schema(reader.read_next_message())
                if any(pa.types.is_dictionary(f.type) for f in schema):
                    return []
                bounds: list[tuple[int, int]] = []  # (first batch's byte, rows before it)
                held = rows = 0
                while True:
                    at = source.tell()
                    try:
                        message = reader.read_next_message()
                    except StopIteration:
                        end = at  # the stream's end marker: no part reads it
                        break
                    if message.type != "record batch":
                        return []
                    if not bounds or held >= size:
                        bounds.append((at, rows))
                        held = 0
                    held += source.tell() - at
                    rows += ipc.read_record_batch(message, schema).num_rows
            except (pa.ArrowException, OSError):
                return []  # read whole: its reader says why
            if file_identity(fh) != before:
                return []
        return _parts(bounds, end, sha, total, before)


def _messages(fh: BinaryIO, schema: pa.Schema, start: int, end: int) -> Iterator[pa.RecordBatch]:
    """The record batches whose messages lie from byte ``start`` to ``end`` of an Arrow file."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    source = pa.PythonFile(fh, mode="r")
    source.seek(start)
    reader = ipc.MessageReader.open_stream(source)
    while source.tell() < end:
        yield ipc.read_record_batch(reader.read_next_message(), schema)


def _parts(
    bounds: list[tuple[int, int]], end: int, sha: str, size: int, identity: tuple[int, int, int]
) -> list[Split]:
    """The parts of a columnar file from where each starts (a row group's index, a batch's
    byte) and the rows before it: a row's number is also its line."""
    ends = [*(b[0] for b in bounds[1:]), end]
    after = [*(b[1] for b in bounds[1:]), -1]
    return [
        Split(k, start, stop, rows, rows, sha, size, identity, nxt, nxt)
        for k, ((start, rows), stop, nxt) in enumerate(zip(bounds, ends, after, strict=True))
    ]
