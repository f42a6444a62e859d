"""The per-file task: one file read, parsed, checked and, in a build, turned into rows.

This is the one visit of a file, and the unit of parallel work: an engine runs one task per
file, anywhere, because a task names everything it reads and writes (the file, its format, the
cache it may read, the spool file its rows go to) and returns everything the main process needs
(the file's result and the cache entries to store). It holds no state between tasks but an
open read-only cache connection per thread, keyed by what the task names.

A file is read a batch of records at a time (a tabular source of any size; a text drop is one
batch), so a task holds one batch of records, their rows and the file's compact result, never
the file. The cache entries of a large file are handed over in a file of their own beside the
cache (:meth:`~curate.scan.cache.ValidationCache.spill`) rather than held until the end.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from curate import storage
from curate.ingest import formats
from curate.ingest.formats import Split
from curate.ingest.formats.fields import Tail, finish_parts
from curate.scan.cache import FLUSH_ENTRIES, ValidationCache
from curate.scan.kept import Digest, spool_digest
from validation.config import Config
from validation.corpus import FileResult
from validation.findings import Finding
from validation.runner import add_timings, check_file

if TYPE_CHECKING:
    from curate.transform.rows import Cleaning


@dataclass(frozen=True)
class CacheRef:
    """The validation cache a task may read: its folder, and a token of the run, so that a
    connection is reused by the tasks of one run and never by a later one (which may find the
    cache replaced, or created since)."""

    folder: str
    run: str


@dataclass(frozen=True)
class ScanTask:
    """One file to scan, and everything the task reads and writes."""

    index: int  # the file's place in the run: the record handles of its findings name it
    path: str
    format: str
    config: Config
    cache: CacheRef | None = None  # read here; the main process writes what the task returns
    spool: str | None = None  # a build's: the file its rows are written to
    cleaning: Cleaning | None = None  # a build's: how its rows are made
    split: Split | None = None  # the part of the file to read (None: all of it)
    keep: bool = False  # a kept scan's (curate.scan.kept): its spool's size and hash wanted


@dataclass(frozen=True)
class PlanTask:
    """A large file whose parts are to be planned, by a task of the engine: the pass that
    plans them reads the whole file (and takes its digest), which the main process never does
    for a task."""

    path: str
    format: str
    config: Config
    size: int  # split_bytes


def plan_parts(task: PlanTask) -> list[Split]:
    """The file's parts (:func:`curate.ingest.formats.splits`), or [] to read it whole."""
    return formats.splits(task.format, Path(task.path), task.config, task.size)


@dataclass
class Scanned:
    """What one task gives back: the file's result and the cache's bookkeeping."""

    file: FileResult
    cache_entries: list[tuple[str, str, str]] = field(default_factory=list)
    hits: int = 0
    misses: int = 0
    spilled: str | None = None  # a file of more cache entries, for the main process to store
    tail: Tail | None = None  # a part's: what its reader knew at its end, for `joined_parts`
    spooled: list[Digest] = field(default_factory=list)  # a kept scan's spool file, if any


def _warn(message: str) -> None:
    print(f"curate: warning: {message}", file=sys.stderr, flush=True)


_open = threading.local()  # per thread: the read-only cache of the run it last served


def _cache(ref: CacheRef, config: Config) -> ValidationCache:
    """A read-only connection to the cache, one per thread, kept for the run's tasks rather
    than opened for every file (SQLite connections are not shared between threads)."""
    key = (ref, json.dumps(config.as_dict(), sort_keys=True, default=str))
    held = getattr(_open, "held", None)
    if held is not None and held[0] == key:
        return held[1]
    if held is not None:
        held[1].close()
    cache = ValidationCache(ref.folder, config, _warn, readonly=True)
    _open.held = (key, cache)
    return cache


# Allocations between two young collections of the garbage collector while a task runs (Python's
# default: 700). A task makes many small containers that live until its end (records, results,
# findings, rows), and each time enough of them have survived the collector scans everything
# the process holds (the language profiles, the TeX tables): such full collections cost about 9
# µs a record of a generated corpus at the default, 1.6 at this.
TASK_GC_THRESHOLD = 10_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Young collections less often for the task's duration; the process's setting after."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], TASK_GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def scan_file(task: ScanTask) -> Scanned:
    """Parse and check one file, a batch of records at a time; with a spool, also make its
    records' rows."""
    with _fewer_collections():
        return _scan_file(task)


def _scan_file(task: ScanTask) -> Scanned:
    cache = _cache(task.cache, task.config) if task.cache else None
    hits, misses = (cache.hits, cache.misses) if cache is not None else (0, 0)
    spool = None
    if task.spool is not None:
        from curate.transform.rows import Cleaning, Spool  # only a build loads the cleaner

        spool = Spool(Path(task.spool), task.config, task.cleaning or Cleaning())
    part = f"-{task.split.number:05d}" if task.split is not None else ""
    spill = (Path(task.cache.folder) / f"spill-{task.cache.run}-{task.index:07d}{part}.jsonl"
             if task.cache else None)  # fmt: skip
    parts: list[FileResult] = []
    sigs = _Rows()
    timings: dict[str, float] = {}
    first = 0
    batches = formats.parts(task.format, storage.local_or_uri(task.path), task.config, task.split)
    tail = None
    while True:
        t = time.perf_counter()
        source = next(batches, None)
        add_timings(timings, {"parse": time.perf_counter() - t})
        if source is None:
            break
        tail = getattr(source, "tail", tail)
        part, results = check_file(source, task.config, cache, index=task.index, first=first)
        add_timings(timings, part.timings)
        if spool is not None:
            t = time.perf_counter()
            spool.write(source.path, source.records, results)
            add_timings(timings, {"clean + rows": time.perf_counter() - t})
            if any(r.row is not None or r.source_id is not None for r in source.records):
                part.rows = np.array([r.row or 0 for r in source.records], np.int32)
                part.source_ids = [r.source_id for r in source.records]
        first += len(source.records)
        sigs.extend(part.sigs)
        part.sigs = np.empty((0, part.sigs.shape[1]), part.sigs.dtype)  # held once: in `sigs`
        parts.append(part)
        if cache is not None and spill is not None and cache.pending >= FLUSH_ENTRIES:
            cache.spill(spill)
    spooled: list[Digest] = []
    if spool is not None:
        spool.close()
        if task.keep and task.spool is not None:  # hashed here, in parallel, not in the driver
            spooled = spool_digest(Path(task.spool))
    file = _joined(parts, sigs.array(), source_sha=parts[-1].sha256, size=parts[-1].size)
    file.timings = timings
    if cache is None:
        return Scanned(file, tail=tail, spooled=spooled)
    done = Scanned(file, cache.take_pending(), cache.hits - hits, cache.misses - misses)
    done.tail, done.spooled = tail, spooled
    if spill is not None and spill.exists():
        done.spilled = spill.as_posix()
    return done


class _Rows:
    """A 2-D array that grows a block of rows at a time in place (``ndarray.resize`` reallocates,
    which for a large block moves pages rather than copying them), so the file's signatures
    are held once: concatenating its batches' at the end held them twice, which put the peak
    of `curate validate` on a 1 GB JSON Lines file of 807,324 records at 824.6 MiB instead of
    718.9 MiB (bench/bench_formats.py)."""

    def __init__(self) -> None:
        self.data: np.ndarray | None = None
        self.n = 0

    def extend(self, block: np.ndarray) -> None:
        if self.data is None:
            self.data = np.empty((0, *block.shape[1:]), block.dtype)
        need = self.n + len(block)
        # To the size needed, no more: resize zero-fills what it adds, so spare rows would be
        # memory held for nothing.
        self.data.resize((need, *block.shape[1:]), refcheck=False)
        self.data[self.n : need] = block
        self.n = need

    def array(self) -> np.ndarray:
        assert self.data is not None, "a file has at least one batch"
        return self.data


def joined_parts(done: list[Scanned], format_name: str, config: Config) -> FileResult | None:
    """One file's result from the results of the tasks that read its parts, in file order:
    the same as one task reading the whole file gives (the parts' record numbers follow on;
    what a reader says of the whole file is said once, from all the parts' tails), or None
    when a part did not read as the whole file's reader would (then it is read whole)."""
    offset = 0
    for part in done:
        if offset:
            part.file.findings = [
                replace(f, record=(f.record[0], f.record[1] + offset)) if f.record else f
                for f in part.file.findings
            ]
        offset += part.file.n_records
    results = [part.file for part in done]
    tails = [part.tail for part in done]
    assert all(t is not None for t in tails), "every part's reader gives its tail"
    # Into one array, each part's let go once copied: a file's signatures are held once, and
    # one part's twice (206 MB for a million records), not the whole file's.
    sigs = np.empty((sum(len(r.sigs) for r in results), *results[0].sigs.shape[1:]), np.uint16)
    at = 0
    for r in results:
        sigs[at : at + len(r.sigs)] = r.sigs
        at += len(r.sigs)
        r.sigs = sigs[:0]
    file = _joined(results, sigs, source_sha=results[-1].sha256, size=results[-1].size)
    if any(not r.sha256 for r in results):
        file.sha256 = ""  # a part found the file changed: nothing of it is kept
    findings = finish_parts(file.path, config, format_name, tails, file.findings)  # type: ignore[arg-type]
    if findings is None:
        return None
    file.findings = findings
    file.timings = {}
    for r in results:
        add_timings(file.timings, r.timings)
    return file


def _joined(parts: list[FileResult], sigs: np.ndarray, source_sha: str, size: int) -> FileResult:
    """One file's result from the results of its batches (a text drop's: its one batch) and
    their signatures, in one array. A `schema` finding is said once for a file, as for a
    batch (a value from a header fails on every record)."""
    head = parts[0]
    if len(parts) == 1:
        head.sigs = sigs
        return head
    tabular = any(p.rows is not None for p in parts)
    measured = dict.fromkeys(k for p in parts for k in p.measures)
    measures = {
        k: np.concatenate([p.measures.get(k, np.full(p.n_records, np.nan)) for p in parts])
        for k in measured
    }
    return FileResult(
        head.path, head.header, source_sha, size,
        np.concatenate([p.lines for p in parts]),
        [i for p in parts for i in p.ids],
        sigs,
        _once([f for p in parts for f in p.findings]),
        measures=measures,
        rows=np.concatenate([p.rows if p.rows is not None else np.zeros(p.n_records, np.int32)
                             for p in parts]) if tabular else None,
        source_ids=[i for p in parts for i in (p.source_ids or [None] * p.n_records)]
        if tabular else None,
    )  # fmt: skip


def _once(findings: list[Finding]) -> list[Finding]:
    seen: set[str] = set()
    out = []
    for f in findings:
        if f.code == "schema":
            if f.message in seen:
                continue
            seen.add(f.message)
        out.append(f)
    return out
