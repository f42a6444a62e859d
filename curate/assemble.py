"""Turning validated drops into the published table, a file at a time.

The rows were made when each file was checked (:mod:`curate.rows`) and wait in a spool, one
Arrow file per drop. Here the survivors of deduplication and the row policies are taken from
it and given their flags and provenance. The table is ordered by id, but records arrive in file
order, so this is done a few files at a time (in worker processes), each task's rows grouped
by the first hex digit of the id (16 buckets; two digits, 256, for a large table) in one file
on disk, and each bucket is then read from every task's file, sorted and appended to the
Parquet file in turn. Memory is bounded by one bucket, not by the corpus, and the output is
the same bytes whatever the number of workers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

import validation.checks  # noqa: F401  (registers `math-kept`, which the rows report)
from curate import export
from curate.dedupe import MATCH_NEAR, MATCHES, Plan
from curate.parallel import Workers, borrow
from curate.rows import MADE, MATH_KEPT, read_spool, spool_path
from curate.table import ARROW_SCHEMA, TABLE_SCHEMA
from validation.config import Config
from validation.corpus import FileResult, record_offsets
from validation.findings import Finding, Report
from validation.registry import REGISTRY, finding, row_policy_of

HEX = "0123456789abcdef"
# Rows are bucketed by the first hex digit of their id, or by the first two beyond this many
# rows: the main process holds one bucket at a time, a sixteenth of the table (about 400 MB at
# a million rows) or a 256th of it.
FINE_BUCKETS_FROM = 250_000
DIGEST = "_row_sha256"
BUCKET_SPANS = b"curate.buckets"  # a task file's metadata: bucket -> [first batch, batches]
PARALLEL_MIN_RECORDS = 5_000
TASK_ROWS = 4_000  # rows per assembly task, at least: see rows_of_files
TASKS = 128  # ...or more rows, so a large table makes about this many tasks (and task files)
Say = Callable[[str], None]

# (record index in its file, its id, its sources, its flags) for each surviving record of a file
FileTodo = list[tuple[int, str, list[dict[str, Any]], list[str]]]


@dataclass
class Assembled:
    rows: int = 0
    num_bytes: int = 0
    fingerprint: str = ""
    word_counts: list[np.ndarray] = field(default_factory=list)
    markup: Counter[str] = field(default_factory=Counter)
    has_math: int = 0
    # `math-kept` findings: math spans published as TeX because they could not be converted.
    math_kept: list[Finding] = field(default_factory=list)
    languages: set[str] = field(default_factory=set)
    venues: set[str] = field(default_factory=set)
    flagged: int = 0  # rows with at least one flag
    flags: Counter[str] = field(default_factory=Counter)  # rows per flag code
    # Row numbers (in table order) whose abstract differs from its raw text, for the report.
    changed: list[np.ndarray] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def _math_kept(file: str, line: int, spans: list[str], config: Config) -> Iterator[Finding]:
    for span in spans:
        shown = span if len(span) <= 60 else span[:59] + "…"
        yield finding(
            "math-kept",
            file,
            line,
            f"math kept as TeX, it cannot be converted to {config.math} faithfully: `{shown}`",
            config,
        )


class TableContractBroken(ValueError):
    """Rows break the published table's contract. Validation may let such a record through
    when its finding is only a warning (``schema`` set to ``warning``: a header year of 1066);
    the table still may not hold it, and the build is refused with where and why."""


def check_rows(rows: list[dict[str, Any]]) -> None:
    """The published table's pandera contract, on one file's rows before they are written."""
    from pandera.errors import SchemaErrors

    frame = pd.DataFrame(rows, columns=ARROW_SCHEMA.names)
    for col in ("word_count", "char_count"):
        frame[col] = frame[col].astype("int32")
    frame["year"] = frame["year"].astype("Int32")
    try:
        TABLE_SCHEMA.validate(frame, lazy=True)
    except SchemaErrors as exc:
        raise TableContractBroken(_broken(exc.failure_cases, rows)) from None


def _broken(cases: pd.DataFrame, rows: list[dict[str, Any]], shown: int = 3) -> str:
    """One line: what breaks the contract, each with the first row's source."""
    seen: dict[tuple[str, str, str], list[str]] = {}
    for case in cases.itertuples(index=False):
        where = seen.setdefault((str(case.column), str(case.check), str(case.failure_case)), [])
        if case.index is not None and not pd.isna(case.index):
            first = rows[int(case.index)]["sources"][0]
            where.append(f"{first['file']}:{first['line']}")
    what = []
    for (column, check, value), where in list(seen.items())[:shown]:
        at = f" ({where[0]}{' and more rows' if len(where) > 1 else ''})" if where else ""
        what.append(f"{column} {value[:40]!r} fails {check}{at}")
    more = f"; {len(seen) - shown} more failures" if len(seen) > shown else ""
    return (
        "rows break the published table's contract: "
        + "; ".join(what)
        + more
        + " (a finding only warned about still keeps such a row out of the table)"
    )


# One file's part of an assembly task: its path, spool, record lines and surviving records.
FilePart = tuple[str, str, np.ndarray, FileTodo]


def bucket_names(total: int) -> list[str]:
    """The id prefixes the rows are bucketed by, in order, for a table of ``total`` rows."""
    if total < FINE_BUCKETS_FROM:
        return list(HEX)
    return [a + b for a in HEX for b in HEX]


def rows_of_files(
    parts: list[FilePart], config: Config, out_dir: str, tag: str, buckets: list[str]
) -> list[Finding]:
    """Worker: the rows of some files' survivors, taken from their spools (made when the files
    were checked) with their flags and sources added, checked against the table's contract and
    written, grouped by id bucket, into one file in ``out_dir``; returns the ``math-kept``
    findings of those rows.

    Several small files make one task: the contract's check and the bucket writes cost about
    the same for ten rows as for thousands.
    """
    kept: list[Finding] = []
    rows: list[dict[str, Any]] = []
    for path, spooled, lines, todo in parts:
        spool = read_spool(Path(spooled))
        picked = spool.take(pa.array([ri for ri, _, _, _ in todo], pa.int64())).to_pylist()
        for row, (ri, rid, sources, flags) in zip(picked, todo, strict=True):
            if not row.pop(MADE) or row["id"] != rid:
                raise RuntimeError(
                    f"{path}:{int(lines[ri])}: the row of record {rid} was not made when the "
                    "file was checked; this is a bug in curate"
                )
            spans = row.pop(MATH_KEPT)
            kept.extend(_math_kept(path, int(lines[ri]), spans, config))
            # A row that publishes TeX says so, whatever the finding's severity: a consumer
            # filters or renders such rows by this flag.
            row["flags"] = sorted({*flags, "math-kept"}) if spans else flags
            row["sources"] = sources
        rows += picked
    if not rows:
        return kept
    check_rows(rows)
    digests = [export.row_digest(r) for r in rows]
    table = pa.Table.from_pylist(rows, schema=ARROW_SCHEMA).append_column(
        DIGEST, pa.array(digests, pa.string())
    )
    # One file per task, its rows grouped by bucket, and the record batches of each bucket
    # named in the file's metadata. Grouped with one stable sort and cut into runs, rather than
    # filtered once per bucket: 256 passes over every task's rows cost more than making them,
    # and a file per bucket and task made 32,768 files at 256 buckets (cProfile, 292k rows).
    first = pc.utf8_slice_codeunits(table.column("id"), 0, len(buckets[0])).combine_chunks()
    order = pc.sort_indices(first)
    table = table.take(order)
    runs = pc.run_end_encode(first.take(order))  # one array: a bucket is one run
    batches: list[pa.RecordBatch] = []
    spans: dict[str, list[int]] = {}
    start = 0
    for bucket, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist(), strict=True):
        part = table.slice(start, end - start).to_batches()
        spans[bucket] = [len(batches), len(part)]
        batches += part
        start = end
    schema = table.schema.with_metadata({BUCKET_SPANS: json.dumps(spans)})
    with ipc.new_file(Path(out_dir) / f"{tag}.arrow", schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return kept


def _tasks(
    files: list[FileResult],
    plan: Plan,
    policy: RowPolicy | None,
    names: list[str] | None,
    spool: Path,
) -> Iterator[tuple[str, list[FilePart]]]:
    """Consecutive files grouped into tasks of at least :data:`TASK_ROWS` rows (or one file),
    each named by its first file's index."""
    task_rows = max(TASK_ROWS, int(plan.survivors.size) // TASKS)
    parts: list[FilePart] = []
    rows = 0
    tag = ""
    for fi, todo in todo_by_file(files, plan, policy, names):
        if not todo:
            continue
        if not parts:
            tag = f"{fi:07d}"
        parts.append((files[fi].path, str(spool_path(spool, fi)), files[fi].lines, todo))
        rows += len(todo)
        if rows >= task_rows:
            yield tag, parts
            parts, rows = [], 0
    if parts:
        yield tag, parts


@dataclass(frozen=True)
class RowPolicy:
    """What the row policies decided, by record id: its flags, and whether it is dropped."""

    flags: dict[str, list[str]] = field(default_factory=dict)
    dropped: frozenset[str] = frozenset()


def decide_rows(
    report: Report, files: list[FileResult], config: Config, names: list[str] | None = None
) -> tuple[RowPolicy, list[dict[str, Any]]]:
    """Apply each code's row policy to the records the report's findings name.

    Returns the policy and the dropped records as the report lists them (file name, line, id,
    the codes that dropped it), one entry per occurrence, in file/line order. ``names`` are
    the files' names relative to their source folder, as provenance gives them.
    """
    lines_of = {r.path: r.lines for r in files}
    name_of = {r.path: n for r, n in zip(files, names, strict=True)} if names else {}
    flags: dict[str, set[str]] = {}
    drops: dict[tuple[str, int, str], set[str]] = {}
    for f in report.findings:
        if f.id is None or REGISTRY[f.code].scope != "record":
            continue  # only a record's own text decides its row (duplicates are merged)
        policy = row_policy_of(f.code, config)
        if policy == "flag":
            flags.setdefault(f.id, set()).add(f.code)
        elif policy == "drop":
            lines = lines_of[f.file]
            first = int(lines[np.searchsorted(lines, f.line, side="right") - 1])
            drops.setdefault((name_of.get(f.file, Path(f.file).name), first, f.id), set()).add(
                f.code
            )
    dropped_ids = frozenset(rid for _, _, rid in drops)
    listed = [
        {"id": rid, "file": name, "line": line, "reasons": sorted(codes)}
        for (name, line, rid), codes in sorted(drops.items())
    ]
    policy = RowPolicy({rid: sorted(c) for rid, c in flags.items() if rid not in dropped_ids},
                       dropped_ids)  # fmt: skip
    return policy, listed


def todo_by_file(
    files: list[FileResult],
    plan: Plan,
    policy: RowPolicy | None = None,
    names: list[str] | None = None,
) -> Iterator[tuple[int, FileTodo]]:
    """For each file in order, its surviving records with the provenance of every occurrence.

    Made one file at a time, so the provenance of a million records is never all in memory.
    A survivor ``policy`` drops is left out with the exact duplicates merged into it (they
    have its text, so its reasons).
    """
    policy = policy or RowPolicy()
    offsets = record_offsets(files)
    file_of = np.repeat(np.arange(len(files)), [f.n_records for f in files])
    order, starts = plan.groups()
    lead_of_run = order[starts[:-1]]  # survivors, ascending: runs are sorted by leader
    run_file = file_of[lead_of_run]

    def source(g: int) -> dict[str, Any]:
        f = files[int(file_of[g])]
        match = MATCHES[int(plan.match[g])]
        return {
            "file": names[int(file_of[g])] if names is not None else Path(f.path).name,
            "line": int(f.lines[g - offsets[file_of[g]]]),
            "header": f.header.text if f.header else None,
            "header_language": f.header.language if f.header else None,
            "match": match,
            "similarity": round(float(plan.similarity[g]), 6) if match == MATCH_NEAR else None,
        }

    bounds = np.searchsorted(run_file, np.arange(len(files) + 1))
    for fi in range(len(files)):
        runs = range(int(bounds[fi]), int(bounds[fi + 1]))
        if not runs:
            continue
        todo: FileTodo = []
        for k in runs:
            members = order[starts[k] : starts[k + 1]].tolist()
            ri = members[0] - int(offsets[fi])
            rid = files[fi].ids[ri]
            if rid in policy.dropped:
                continue
            todo.append((ri, rid, [source(g) for g in members], policy.flags.get(rid, [])))
        yield fi, todo


def assemble(
    files: list[FileResult],
    plan: Plan,
    config: Config,
    parquet: Path,
    *,
    jobs: int = 1,
    workers: Workers | None = None,
    say: Say = lambda _m: None,
    policy: RowPolicy | None = None,
    names: list[str] | None = None,
    spool: Path,
) -> Assembled:
    """Write the table of the survivors in ``plan`` to ``parquet``, ordered by id, without the
    rows ``policy`` drops and with the flags it gives; their rows are taken from ``spool``,
    where validation made them (:func:`curate.validate.validate_paths` with ``rows``)."""
    total = int(plan.survivors.size)
    started = time.perf_counter()
    parquet.parent.mkdir(parents=True, exist_ok=True)
    kept: list[Finding] = []
    with tempfile.TemporaryDirectory(
        prefix=".rows-", dir=parquet.parent, ignore_cleanup_errors=True
    ) as tmp:
        buckets = bucket_names(total)
        work = ((parts, config, tmp, tag, buckets)
                for tag, parts in _tasks(files, plan, policy, names, spool))  # fmt: skip
        if jobs > 1 and total >= PARALLEL_MIN_RECORDS:
            with borrow(workers, jobs) as pool:
                # A bounded window of submitted tasks keeps the queued provenance small.
                window: list[Future[list[Finding]]] = []
                done = 0
                for args in work:
                    window.append(pool.submit(rows_of_files, *args))
                    if len(window) >= 2 * jobs:
                        kept.extend(window.pop(0).result())
                        done += 1
                        if done % 20 == 0:
                            say(f"assembled {done} tasks of rows")
                for future in window:
                    kept.extend(future.result())
        else:
            for args in work:
                kept.extend(rows_of_files(*args))
        say(f"assembled {total} rows")
        cleaned = time.perf_counter()
        result = _write_buckets(Path(tmp), parquet, buckets)
        result.math_kept = kept
        result.timings = {
            "provenance + rows (wall)": cleaned - started,
            "sort + write (wall)": time.perf_counter() - cleaned,
        }
        return result


def _write_buckets(tmp: Path, parquet: Path, buckets: list[str]) -> Assembled:
    """Append the buckets in id order; each bucket is read from every task's file and sorted by
    index, and written a row group's worth of rows at a time, so memory holds about one bucket
    and one row group."""
    result = Assembled()
    digest = hashlib.sha256()
    schema = export.arrow_schema_with_features()
    size = export.ROW_GROUP_SIZE
    pending: list[pa.Table] = []
    pending_rows = 0
    with contextlib.ExitStack() as stack:
        # Every task file stays open, read (not mapped: pages of a map count as memory while it
        # is open) a bucket's batches at a time, in the order of the tasks.
        tasks = []
        for path in sorted(tmp.glob("*.arrow")):
            reader = ipc.open_file(stack.enter_context(pa.OSFile(str(path))))
            tasks.append((reader, json.loads(reader.schema.metadata[BUCKET_SPANS])))
        writer = stack.enter_context(pq.ParquetWriter(parquet, schema, **export.PARQUET_OPTIONS))
        for bucket in buckets:
            parts = [
                reader.get_batch(i)
                for reader, spans in tasks
                if bucket in spans
                for i in range(spans[bucket][0], spans[bucket][0] + spans[bucket][1])
            ]
            if not parts:
                continue
            table = pa.Table.from_batches(parts).replace_schema_metadata(None)
            order = pc.sort_indices(table, [("id", "ascending")])
            ids = table.column("id").take(order)
            if len(ids) > 1 and pc.any(pc.equal(ids[1:], ids[:-1])).as_py():
                # The pandera schema checks ids per file; this is the check across files.
                raise ValueError(f"duplicate id in bucket {bucket}: the dedupe plan is broken")
            for start in range(0, table.num_rows, size):
                chunk = table.take(order[start : start + size])
                for d in chunk.column(DIGEST).to_pylist():
                    digest.update(d.encode())
                chunk = chunk.drop_columns([DIGEST]).cast(schema)
                _collect_stats(result, chunk)
                pending.append(chunk)
                pending_rows += chunk.num_rows
                # Full row groups only, so the file's layout depends on the rows, not buckets.
                while pending_rows >= size:
                    merged = pa.concat_tables(pending)
                    writer.write_table(merged.slice(0, size), row_group_size=size)
                    rest = merged.slice(size)
                    pending, pending_rows = [rest], rest.num_rows
            del table, order, ids
            # Arrow's allocator keeps what a bucket took and the next does not reuse all of it.
            pa.default_memory_pool().release_unused()
        if pending_rows:
            writer.write_table(pa.concat_tables(pending), row_group_size=size)
        elif result.rows == 0:
            writer.write_table(schema.empty_table())
    result.fingerprint = digest.hexdigest()
    return result


def _collect_stats(result: Assembled, table: pa.Table) -> None:
    differs = pc.not_equal(table.column("abstract_raw"), table.column("abstract")).to_numpy(
        zero_copy_only=False
    )
    result.changed.append(np.flatnonzero(differs) + result.rows)
    result.rows += table.num_rows
    result.num_bytes += table.nbytes
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
    result.venues |= {f"{v} {y}" for v, y in set(zip(venues, years, strict=True)) if v}
