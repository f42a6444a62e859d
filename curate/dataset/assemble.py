"""Turning the survivors' rows into the published table, ordered by id, a bucket at a time.

The rows were made when each file was scanned (:mod:`curate.transform.rows`) and wait in a
spool, one Arrow file per drop. Here the survivors of deduplication and the row policies are
taken from it and given their flags and provenance. The table is ordered by id, but records
arrive in file order, so this is done a few files at a time, or a part of a large file (tasks,
on the engine, of a bounded number of rows, held as Arrow columns), each task's rows grouped by
the first hex digit of the id (16 buckets; two digits, 256, for a large table) in one file on
disk, which counts the rows of each bucket and split. The table's files
(:mod:`curate.dataset.layout`: each split's rows in id order, cut every ``shard_size`` rows)
are planned from those counts alone, and each is written by a task of its own (on the engine
too): it reads its buckets from every task's file, sorts them and hands its rows to the table
writer. The driver combines what the tasks say of their files (rows, bytes, SHA-256, figures,
the rows' digests for the fingerprint) and reads no row. Memory is bounded by one bucket, or
by a task's rows, not by the corpus, and the output is the same bytes whatever runs the tasks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

import validation.checks  # noqa: F401  (registers `math-kept`, which the rows report)
from curate.dataset.layout import Layout, Piece, Shard, split_of
from curate.dataset.layout import plan as plan_shards
from curate.dataset.manifest import row_digests
from curate.dataset.table import SOURCE_ID, TEXT, Contract, check_table
from curate.dataset.writers import DataFile, open_writer, suffix
from curate.dedupe.plan import Plan
from curate.dedupe.policy import RowPolicy
from curate.dedupe.provenance import FileTodo, todo_by_file
from curate.engine.serial import SERIAL
from curate.transform.rows import MADE, MATH_KEPT, spool_files, take_spool
from validation.config import Config
from validation.corpus import FileResult
from validation.findings import Finding, count
from validation.registry import finding

if TYPE_CHECKING:
    from curate.engine import Engine

HEX = "0123456789abcdef"
# Rows are bucketed by the first hex digit of their id, or by the first two beyond this many
# rows: the main process holds one bucket at a time, a sixteenth of the table (about 400 MB at
# a million rows) or a 256th of it.
FINE_BUCKETS_FROM = 250_000
DIGEST = "_row_sha256"
# Where each occurrence of a row is in its file, in the order of `sources`: kept apart from the
# table (see `curate.dataset.table.SOURCE_TYPE`), written beside it for the report and the diff.
PLACES = "_places"
PLACES_TYPE = pa.list_(
    pa.struct([("file", pa.string()), ("line", pa.int32()), ("row", pa.int32())])
)
POSITIONS_SCHEMA = pa.schema([("id", pa.string()), ("sources", PLACES_TYPE)])
# A task file's metadata: bucket -> [first batch, batches, [rows of each split]].
BUCKET_SPANS = b"curate.buckets"
PARALLEL_MIN_RECORDS = 5_000
TASK_ROWS = 4_000  # rows per assembly task, at least: see rows_of_files
TASKS = 128  # ...or more rows, so a large table makes about this many tasks (and task files)
# ...and this many at most, so that a task's memory is bounded whatever the size of a file or
# of the table: a file with more survivors is cut into several tasks.
TASK_ROWS_MAX = 50_000
# What an assembly task declares it holds (`task_memory`), measured with bench/bench_assembly.py:
# a worker with pyarrow and numpy loaded, and the rows' spooled bytes this many times over (the
# rows taken, their digests' encoding, the rows sorted by bucket).
WORKER_BYTES = 200 * 2**20
ROW_COPIES = 3
BATCH_ROWS = 20_000  # rows a bucket hands the writer at a time
DIGEST_ROWS = 1_000  # rows whose digests a task makes at a time
Say = Callable[[str], None]


@dataclass
class Assembled:
    rows: int = 0
    num_bytes: int = 0
    fingerprint: str = ""
    files: list[DataFile] = field(default_factory=list)  # what the writer wrote
    word_counts: list[np.ndarray] = field(default_factory=list)
    markup: Counter[str] = field(default_factory=Counter)
    has_math: int = 0
    # `math-kept` findings: math spans published as TeX because they could not be converted.
    math_kept: list[Finding] = field(default_factory=list)
    # The macros of that TeX: rows per macro name, so that a maintainer sees what to add.
    kept_macros: Counter[str] = field(default_factory=Counter)
    languages: set[str] = field(default_factory=set)
    venues: set[tuple[str, int | None]] = field(default_factory=set)  # (venue, year) pairs
    flagged: int = 0  # rows with at least one flag
    flags: Counter[str] = field(default_factory=Counter)  # rows per flag code
    # Row numbers (in table order) whose abstract differs from its raw text, for the report.
    changed: list[np.ndarray] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def _math_kept(
    file: str, line: int, spans: list[str], config: Config, math: str
) -> Iterator[Finding]:
    for span in spans:
        shown = span if len(span) <= 60 else span[:59] + "…"
        yield finding(
            "math-kept",
            file,
            line,
            f"math kept as TeX, it cannot be converted to {math} faithfully: `{shown}`",
            config,
        )


# One file's part of an assembly task: its path, spool, record lines and surviving records.
FilePart = tuple[str, str, np.ndarray, FileTodo]


@dataclass(frozen=True)
class AssemblyTask:
    """Some consecutive files' survivors, and the file their rows are written to."""

    parts: list[FilePart]
    config: Config  # for the severity of `math-kept`
    math: str
    out: str
    buckets: list[str]
    contract: Contract = TEXT
    # The columns' names as published, when the text columns have names of their own: the
    # row digests (and so the fingerprint) are over the table as a reader of the release sees it.
    published: tuple[str, ...] | None = None
    # The table's splits and their shares (the layout's): the file counts each bucket's rows
    # of each split, from which the shards are planned.
    splits: tuple[tuple[str, float], ...] = (("train", 1.0),)
    memory: int = 0  # the bytes it holds at its peak (`task_memory`), for an engine to reserve


def bucket_names(total: int) -> list[str]:
    """The id prefixes the rows are bucketed by, in order, for a table of ``total`` rows."""
    if total < FINE_BUCKETS_FROM:
        return list(HEX)
    return [a + b for a in HEX for b in HEX]


# A macro name in the TeX a row publishes as it is (`\\kms`, `\\benchname`).
_MACRO = re.compile(r"\\[A-Za-z]+")


def rows_of_files(task: AssemblyTask) -> tuple[list[Finding], Counter[str]]:
    """The task: the rows of some files' survivors, taken from their spools (made when the
    files were scanned) with their flags and sources added, checked against the table's
    contract and written, grouped by id bucket, into one file; returns the ``math-kept``
    findings of those rows and, for each macro name in their kept TeX, how many rows hold it.

    The rows stay Arrow columns: taken from the spool by record, the flags and sources built
    as columns beside them, and checked and hashed a column at a time; only the provenance the
    task was given and the few rows with kept TeX are Python values. Several small files make
    one task (the contract's check and the bucket writes cost about the same for ten rows as
    for thousands), and a large file several, so a task holds at most about
    :data:`TASK_ROWS_MAX` rows, whatever the size of its files.
    """
    kept: list[Finding] = []
    macros: Counter[str] = Counter()
    made = [_rows_of_file(task, part, kept, macros) for part in task.parts]
    if not made:
        return kept, macros
    rows = pa.concat_tables([t for t, _ in made])
    places = pa.chunked_array([p for _, p in made], PLACES_TYPE)
    del made
    check_table(rows.append_column(PLACES, places), task.contract)
    named = rows.rename_columns(list(task.published)) if task.published else rows
    # The digests' encoding holds a copy of every value: made a slice of rows at a time.
    digests = pa.chunked_array(
        [
            pa.array(row_digests(named.slice(start, DIGEST_ROWS)), pa.string())
            for start in range(0, rows.num_rows, DIGEST_ROWS)
        ],
        pa.string(),
    )
    held = [rows.append_column(DIGEST, digests).append_column(PLACES, places)]
    del rows, named, places, digests  # the task's rows are `held`'s alone, to be let go of
    _write_task_file(held, task.buckets, dict(task.splits), task.out)
    return kept, macros


def _write_task_file(
    held: list[pa.Table], buckets: list[str], splits: dict[str, float], out: str
) -> None:
    """A task's rows (the one table in ``held``, taken from it), grouped by bucket, into one
    file, and the record batch of each bucket and its rows of each split named in the file's
    metadata. Grouped with one
    stable sort and cut into runs, rather than filtered once per bucket: 256 passes over every
    task's rows cost more than making them, and a file per bucket and task made 32,768 files at
    256 buckets. A bucket's rows are taken and written in turn, so that beside the task's rows
    the task holds one bucket's copy, not a copy of them all."""
    table = held.pop()
    first = pc.utf8_slice_codeunits(table.column("id"), 0, len(buckets[0])).combine_chunks()
    order = pc.sort_indices(first)
    runs = pc.run_end_encode(first.take(order))  # one array: a bucket is one run
    ends = runs.run_ends.to_pylist()
    schema = table.schema
    columns = []
    for name in schema.names:  # one chunk a column (a take from chunks joins them, each time)
        columns.append(table.column(name).combine_chunks())
        table = table.drop_columns([name])  # the chunks let go of as their copy is made
    table = pa.Table.from_arrays(columns, schema=schema)
    del columns
    split = split_of(table.column("id").take(order), splits)
    spans: dict[str, list[Any]] = {}
    start = 0
    for i, (bucket, end) in enumerate(zip(runs.values.to_pylist(), ends, strict=True)):
        rows = np.bincount(split[start:end], minlength=len(splits)).tolist()
        spans[bucket] = [i, 1, rows]  # one batch a bucket
        start = end
    with ipc.new_file(out, schema.with_metadata({BUCKET_SPANS: json.dumps(spans)})) as writer:
        start = 0
        for end in ends:
            writer.write_batch(table.take(order[start:end]).to_batches()[0])
            start = end


def _rows_of_file(
    task: AssemblyTask, part: FilePart, kept: list[Finding], macros: Counter[str]
) -> tuple[pa.Table, pa.Array]:
    """One file's part of a task: its survivors' rows as the table's columns, and where each
    of their sources is; adds the ``math-kept`` findings and macros of their kept TeX."""
    path, spooled, lines, todo = part
    picked = take_spool(spooled, [t[0] for t in todo])
    ids = pa.array([t[1] for t in todo], pa.string())
    made = pc.and_kleene(picked.column(MADE), pc.equal(picked.column("id"), ids))
    unmade = np.flatnonzero(~made.fill_null(False).to_numpy(zero_copy_only=False))
    if unmade.size:
        ri, rid = todo[unmade[0]][:2]
        raise RuntimeError(
            f"{path}:{int(lines[ri])}: the row of record {rid} was not made when the file was "
            "checked; this is a bug in curate"
        )
    flags = [t[3] for t in todo]
    spans = picked.column(MATH_KEPT)
    for i in np.flatnonzero(pc.list_value_length(spans).to_numpy()):
        row_spans = spans[int(i)].as_py()
        kept.extend(_math_kept(path, int(lines[todo[i][0]]), row_spans, task.config, task.math))
        macros.update({name for span in row_spans for name in _MACRO.findall(span)})
        # A row that publishes TeX says so, whatever the finding's severity: a consumer
        # filters or renders such rows by this flag.
        flags[i] = sorted({*flags[i], "math-kept"})
    schema = task.contract.schema
    sources, offsets = _sources(todo, schema.field("sources").type)
    given = {"flags": pa.array(flags, schema.field("flags").type), "sources": sources}
    if SOURCE_ID in task.contract.descriptions:
        given[SOURCE_ID] = pa.array([t[2][0].get(SOURCE_ID) for t in todo], pa.string())
    columns = [
        given[f.name] if f.name in given
        else picked.column(f.name) if f.name in picked.column_names
        else pa.nulls(len(todo), f.type)
        for f in schema
    ]  # fmt: skip
    places = [p for t in todo for p in t[4]]
    spots = pa.StructArray.from_arrays(
        [
            sources.values.field("file"),
            pa.array([p["line"] for p in places], pa.int32()),
            pa.array([p["row"] for p in places], pa.int32()),
        ],
        fields=list(PLACES_TYPE.value_type),
    )
    return (
        pa.Table.from_arrays(columns, schema=schema),
        pa.ListArray.from_arrays(offsets, spots, type=PLACES_TYPE),
    )


def _sources(todo: FileTodo, kind: pa.ListType) -> tuple[pa.ListArray, pa.Array]:
    """The ``sources`` column of some survivors, from their provenance: a field at a time over
    every occurrence, cut into rows by offsets; and the offsets."""
    each = [s for t in todo for s in t[2]]
    offsets = pa.array(np.cumsum([0, *(len(t[2]) for t in todo)]), pa.int32())
    fields = list(kind.value_type)
    items = pa.StructArray.from_arrays(
        [pa.array([s.get(f.name) for s in each], f.type) for f in fields], fields=fields
    )
    return pa.ListArray.from_arrays(offsets, items, type=kind), offsets


def _tasks(
    files: list[FileResult],
    names: list[str],
    spools: list[str | None],
    plan: Plan,
    policy: RowPolicy,
    make: Callable[[str, list[FilePart]], AssemblyTask],
    tabular: bool,
) -> Iterator[AssemblyTask]:
    """Consecutive files grouped into tasks of at least :data:`TASK_ROWS` rows (or one file)
    and at most :data:`TASK_ROWS_MAX` (a larger file is cut into several tasks), each named by
    its first file's index and that file's first survivor in it."""
    task_rows = min(TASK_ROWS_MAX, max(TASK_ROWS, int(plan.survivors.size) // TASKS))
    parts: list[FilePart] = []
    rows = 0
    tag = ""
    for fi, todo in todo_by_file(files, names, plan, policy, tabular=tabular):
        spool = spools[fi]
        assert spool is not None or not todo, "a file with survivors has a spool"
        start = 0
        while start < len(todo):
            piece = todo[start : start + TASK_ROWS_MAX - rows]
            if not parts:
                tag = f"{fi:07d}-{start:09d}"
            parts.append((files[fi].path, spool, files[fi].lines, piece))
            rows += len(piece)
            start += len(piece)
            if rows >= task_rows:
                yield make(tag, parts)
                parts, rows = [], 0
    if parts:
        yield make(tag, parts)


def task_memory(parts: list[FilePart]) -> int:
    """The bytes an assembly task of these parts holds at its peak, for an engine that reserves
    memory per task: a worker's own, and its rows' share of their spool files (the spool holds
    a file's rows uncompressed, as the task does) times what the task makes of them."""
    held = 0
    for _, spool, lines, todo in parts:
        with contextlib.suppress(OSError):
            size = sum(os.path.getsize(f) for f in spool_files(spool))
            held += size * len(todo) // max(1, len(lines))
    return WORKER_BYTES + ROW_COPIES * held


def assemble(
    files: list[FileResult],
    names: list[str],
    spools: list[str | None],
    plan: Plan,
    policy: RowPolicy,
    config: Config,
    math: str,
    layout: Layout,
    *,
    scratch: Path,
    engine: Engine = SERIAL,
    say: Say = lambda _m: None,
    contract: Contract = TEXT,
    positions: Path | None = None,
    published: list[str] | None = None,
) -> Assembled:
    """Write the table of the survivors in ``plan`` as ``layout`` says, each split in shards of
    consecutive ids, without the rows ``policy`` drops and with the flags it gives; their rows
    are taken from the ``spools`` the scan made, and the tasks' files go to a folder in
    ``scratch``. ``contract`` is the table's (its columns, and its rows'); ``published``, the
    columns' names as published, if the text columns have names of their own. ``positions``,
    if given, gets each row's id and the line and row of each of its sources, in the table's
    order."""
    total = int(plan.survivors.size)
    started = time.perf_counter()
    kept: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix=".rows-", dir=scratch, ignore_cleanup_errors=True) as t:
        tmp = Path(t)
        buckets = bucket_names(total)

        def make(tag: str, parts: list[FilePart]) -> AssemblyTask:
            out = (tmp / f"{tag}.arrow").as_posix()
            named = tuple(published) if published is not None else None
            return AssemblyTask(
                parts, config, math, out, buckets, contract, named, layout.splits,
                task_memory(parts),
            )  # fmt: skip

        tasks = _tasks(files, names, spools, plan, policy, make, contract.tabular)
        runner = engine if total >= PARALLEL_MIN_RECORDS else SERIAL
        # A bounded window of submitted tasks keeps the queued provenance small.
        macros: Counter[str] = Counter()
        for done, (found, names) in enumerate(
            runner.map(rows_of_files, tasks, ahead=2 * runner.workers)
        ):
            kept.extend(found)
            macros.update(names)
            if runner is not SERIAL and (done + 1) % 20 == 0:
                say(f"assembled {done + 1} tasks of rows")
        say(f"assembled {count(total, 'row')}")
        cleaned = time.perf_counter()
        places = positions is not None
        shards = shard_tasks(tmp, buckets, layout, contract.schema, places, published)
        result = _write_shards(shards, runner, positions, say)
        result.math_kept = kept
        result.kept_macros = macros
        result.timings = {
            "provenance + rows (wall)": cleaned - started,
            "sort + write (wall)": time.perf_counter() - cleaned,
        }
        return result


@dataclass(frozen=True)
class ShardTask:
    """One file of the table to write: its shard, and the task files that hold its buckets
    (each with the spans of those buckets)."""

    shard: Shard
    inputs: list[tuple[str, dict[str, list[Any]]]]
    layout: Layout
    split: int  # the shard's split, by its index in the layout's
    schema: pa.Schema  # the table's, before the columns take their published names
    names: tuple[str, ...] | None
    positions: str | None  # where the shard's rows' places go, if wanted


@dataclass
class ShardDone:
    """What a shard's task wrote: the file, its rows' digests (in order, for the fingerprint)
    and the figures the card and the report need, as if the shard were the table."""

    file: DataFile
    digests: bytes
    stats: Assembled


def shard_tasks(
    tmp: Path,
    buckets: list[str],
    layout: Layout,
    schema: pa.Schema,
    places: bool,
    names: list[str] | None,
) -> list[ShardTask]:
    """The tasks that write the table, a shard each, planned from the rows each task file holds
    of each bucket and split (its metadata): the driver reads no row."""
    sources: list[tuple[str, dict[str, list[Any]]]] = []
    counts: dict[str, list[int]] = {}
    for path in sorted(tmp.glob("*.arrow")):
        with pa.OSFile(str(path)) as f:
            spans = json.loads(ipc.open_file(f).schema.metadata[BUCKET_SPANS])
        sources.append((path.as_posix(), spans))
        for bucket, (_, _, rows) in spans.items():
            have = counts.setdefault(bucket, [0] * len(rows))
            counts[bucket] = [a + b for a, b in zip(have, rows, strict=True)]
    splits = [name for name, _ in layout.splits]
    out = []
    for k, shard in enumerate(plan_shards(counts, buckets, splits, layout.shard_rows)):
        wanted = {b for b, _, _ in shard.pieces}
        mine = [(p, {b: s for b, s in spans.items() if b in wanted}) for p, spans in sources]
        # named by the shard's number: an empty split's file begins where the next split does
        where = (tmp / f"places-{k:07d}.parquet").as_posix() if places else None
        named = tuple(names) if names is not None else None
        mine = [(p, spans) for p, spans in mine if spans]
        out.append(ShardTask(shard, mine, layout, splits.index(shard.split), schema, named, where))
    return out


def _write_shards(
    tasks: list[ShardTask], runner: Engine, positions: Path | None, say: Say
) -> Assembled:
    """The shards written by their tasks, in order; the table's figures and fingerprint combined
    from what each task says of its shard (no file is read again), and the rows' places joined
    into ``positions``."""
    import pyarrow.parquet as pq

    result = Assembled()
    digest = hashlib.sha256()
    for k, done in enumerate(runner.map(write_shard, tasks, ahead=2 * runner.workers)):
        digest.update(done.digests)
        _combine(result, done.stats)
        result.files.append(done.file)
        if runner is not SERIAL and (k + 1) % 20 == 0:
            say(f"wrote {k + 1} of the table's {count(len(tasks), 'file')}")
    result.fingerprint = digest.hexdigest()
    if positions is not None:
        with pq.ParquetWriter(positions, POSITIONS_SCHEMA, compression="zstd") as places:
            for task in tasks:
                assert task.positions is not None
                part = pq.ParquetFile(task.positions)
                for i in range(part.num_row_groups):
                    places.write_table(part.read_row_group(i))
                part.close()
                Path(task.positions).unlink()
    return result


def _combine(result: Assembled, part: Assembled) -> None:
    """Add a shard's figures to the table's (the shards come in the table's order)."""
    result.rows += part.rows
    result.num_bytes += part.num_bytes
    result.word_counts += part.word_counts
    result.changed += part.changed
    result.markup.update(part.markup)
    result.has_math += part.has_math
    result.flagged += part.flagged
    result.flags.update(part.flags)
    result.languages |= part.languages
    result.venues |= part.venues


def write_shard(task: ShardTask) -> ShardDone:
    """The task: one shard's rows, each bucket it holds read from every task file, sorted by id
    and cut to the shard's part of it, handed to the writer a batch at a time (memory holds
    about one bucket and one batch); returns what it wrote, with the rows' digests and figures."""
    import pyarrow.parquet as pq

    shard, layout = task.shard, task.layout
    stats = Assembled()
    digests: list[bytes] = []
    path = shard.path(suffix(layout.writer))
    writer = open_writer(
        layout.writer, Path(layout.folder), path, split=shard.split, schema=layout.schema
    )
    try:
        with contextlib.ExitStack() as stack:
            places = None
            if task.positions is not None:
                places = pq.ParquetWriter(task.positions, POSITIONS_SCHEMA, compression="zstd")
                stack.enter_context(places)
            # Each task file read (not mapped: pages of a map count as memory while it is
            # open) a bucket's batches at a time.
            readers = [
                (ipc.open_file(stack.enter_context(pa.OSFile(source))), spans)
                for source, spans in task.inputs
            ]
            for piece in shard.pieces:
                for batch, holds, keep in _batches(readers, piece, layout, task.split):
                    # Cast, then cut, as the table was always cut: the size in memory of a
                    # cut (the card's num_bytes) depends on where the rows it views begin.
                    table = batch.drop_columns([DIGEST, PLACES]).cast(task.schema)
                    if holds:  # the shard that holds a batch's first row counts it
                        stats.num_bytes += table.nbytes
                        if places is not None:
                            ids, where = batch.column("id"), batch.column(PLACES)
                            places.write_table(pa.table([ids, where], POSITIONS_SCHEMA))
                    if keep is None:
                        continue
                    mask, lo, n = keep
                    digest = batch.column(DIGEST)
                    if mask is not None:
                        table, digest = table.filter(mask), digest.filter(mask)
                    table = table.slice(lo, n)
                    digests.append(_joined(digest.slice(lo, n)))
                    _collect_stats(stats, table, shard.first_row)
                    if task.names is not None and list(task.names) != table.schema.names:
                        table = table.rename_columns(list(task.names))
                    writer.write(table)
                # Arrow's allocator keeps what a bucket took and the next does not reuse all.
                pa.default_memory_pool().release_unused()
    except BaseException:
        writer.abort()
        raise
    return ShardDone(writer.close(), b"".join(digests), stats)


def _batches(
    readers: list[tuple[ipc.RecordBatchFileReader, dict[str, list[Any]]]],
    piece: Piece,
    layout: Layout,
    split: int,
) -> Iterator[tuple[pa.Table, bool, tuple[pa.Array | None, int, int] | None]]:
    """One bucket's rows, from every task file, in id order, in the batches of
    :data:`BATCH_ROWS` (of every split) that hold the shard's rows; with each batch, whether
    the shard holds its first row, and where the shard's rows of it are (the mask of the
    shard's split, then where in its rows the shard's begin and how many). Every shard cuts
    the bucket into the same batches, so what is counted a batch at a time (the size in
    memory, the rows' places) is the same whatever the shards."""
    bucket, skip, take = piece
    parts = [
        reader.get_batch(i)
        for reader, spans in readers
        if bucket in spans
        for i in range(spans[bucket][0], spans[bucket][0] + spans[bucket][1])
    ]
    table = pa.Table.from_batches(parts).replace_schema_metadata(None)
    order = pc.sort_indices(table, [("id", "ascending")])
    ids = table.column("id").take(order)
    if len(ids) > 1 and pc.any(pc.equal(ids[1:], ids[:-1])).as_py():
        # The table's contract checks ids per task; this is the check across them.
        raise ValueError(f"duplicate id in bucket {bucket}: the dedupe plan is broken")
    which = split_of(ids, layout.shares)
    seen = np.zeros(len(layout.splits), dtype=np.int64)  # rows of each split before the batch
    for start in range(0, table.num_rows, BATCH_ROWS):
        if seen[split] >= skip + take:
            return
        here = which[start : start + BATCH_ROWS]
        ends = seen + np.bincount(here, minlength=len(seen))
        lo, hi = max(int(seen[split]), skip), min(int(ends[split]), skip + take)
        holds = int(here[0]) == split and skip <= seen[split] < skip + take
        if holds or lo < hi:
            mask = None if len(seen) == 1 else pa.array(here == split)
            keep = (mask, lo - int(seen[split]), hi - lo) if lo < hi else None
            yield table.take(order[start : start + BATCH_ROWS]), holds, keep
        seen = ends


def _joined(digests: pa.ChunkedArray) -> bytes:
    """The rows' hex digests one after another, as the fingerprint hashes them: the bytes of
    the string column, taken as they are."""
    column = digests.combine_chunks()
    if len(column) == 0:
        return b""
    _, offsets, data = column.buffers()  # a string column: its offsets, then its bytes
    ends = np.frombuffer(offsets, dtype=np.int32, count=column.offset + len(column) + 1)
    lo, hi = int(ends[column.offset]), int(ends[-1])
    return data.slice(lo, hi - lo).to_pybytes()


def _collect_stats(result: Assembled, table: pa.Table, first_row: int = 0) -> None:
    """Add a batch's figures; ``first_row`` is the number in the table of the first row the
    figures count."""
    differs = pc.not_equal(table.column("abstract_raw"), table.column("abstract")).to_numpy(
        zero_copy_only=False
    )
    result.changed.append(np.flatnonzero(differs) + first_row + result.rows)
    result.rows += table.num_rows
    result.word_counts.append(table.column("word_count").to_numpy())
    result.has_math += int(pc.sum(table.column("has_math")).as_py() or 0)
    flags = table.column("flags").to_pylist()
    result.flagged += sum(1 for f in flags if f)
    for row_flags in flags:
        result.flags.update(row_flags)
    for kind, n in Counter(pc.list_flatten(table.column("markup")).to_pylist()).items():
        result.markup[kind] += n
    result.languages |= {x for x in table.column("language").unique().to_pylist() if x}
    venues = table.column("venue").to_pylist()
    years = table.column("year").to_pylist()
    result.venues |= {(v, y) for v, y in set(zip(venues, years, strict=True)) if v}
