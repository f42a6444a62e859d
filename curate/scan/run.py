"""The scan stage: every source file read once, on an engine, with the validation cache.

A file is the unit of work, or a part of one: a task (:mod:`curate.scan.task`) parses one
file (a large tabular file: one stretch of it, planned by a task of its own in one pass that
also takes the file's digest), runs the file and record checks and returns only findings and
compact sketches, so the main process stays small however large the corpus is; the results
of a file's parts are joined into the result of the whole. The main process looks files up
in the cache first (a validation run; a build looks up the scans it keeps, its rows included,
:mod:`curate.scan.kept`), hands the rest to the engine, and writes the new cache entries the
tasks return (a build: keeps each file's scan as it completes).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from curate import storage
from curate.engine.serial import SERIAL
from curate.ingest import formats
from curate.io import sha256_file
from curate.scan.cache import ValidationCache
from curate.scan.kept import KeptScans
from curate.scan.task import (
    CacheRef,
    PlanTask,
    Scanned,
    ScanTask,
    joined_parts,
    plan_parts,
    scan_file,
)
from validation.config import Config
from validation.corpus import FileResult
from validation.mapping import mapping_for
from validation.registry import finding
from validation.sketch import NUM_PERM

if TYPE_CHECKING:
    from curate.engine import Engine
    from curate.ingest.discover import Source
    from curate.ingest.formats import Split
    from curate.transform.rows import Cleaning

# Below this much input, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 2_000_000
# A large file's parts hold `split_bytes` at most, and fewer when the run's bytes would make
# fewer than this many tasks a worker (the last tasks of a few large ones leave workers idle),
# down to MIN_PART_BYTES (below it, a task's own costs outweigh spreading the work).
PARTS_PER_WORKER = 4
MIN_PART_BYTES = 4 << 20

Progress = Callable[[str, int], None]
Warn = Callable[[str], None]


def stderr_warning(message: str) -> None:
    print(f"curate: warning: {message}", file=sys.stderr, flush=True)


@dataclass
class Scan:
    """Every file's result, in discovery order, with what later stages find them by."""

    files: list[FileResult]
    names: list[str]  # each file's name relative to its source folder: what a build publishes
    spools: list[str | None]  # each file's spool of rows, in a build
    timings: dict[str, float] = field(default_factory=dict)
    cache_hits: int = 0
    cache_misses: int = 0
    reused: int = 0  # files whose kept scan was used (a build's): not scanned


@dataclass(frozen=True)
class Rows:
    """A build's request to the scan: make every record's rows, into spool files in
    ``folder``, as ``cleaning`` says; with ``kept``, each file's scan is looked up there
    first, and kept there (its spool in the cache folder, not in ``folder``)."""

    folder: Path
    cleaning: Cleaning
    kept: KeptScans | None = None

    @property
    def keeps(self) -> bool:
        """Whether the scans are kept (in a cache folder that can be written)."""
        return self.kept is not None and self.kept.writable

    def spool(self, index: int) -> str:
        if self.keeps:
            return self.kept.spool(index)
        return (self.folder / f"{index:07d}.arrow").as_posix()


def scan(
    sources: list[Source],
    config: Config,
    *,
    engine: Engine | Callable[[], Engine],
    cache_dir: str | Path | None = None,
    rows: Rows | None = None,
    progress: Progress | None = None,
    warn: Warn = stderr_warning,
    split_bytes: int = formats.SPLIT_BYTES,
) -> Scan:
    """Scan ``sources`` (as :func:`curate.ingest.discover.discover` found them).

    ``engine`` runs the tasks (or makes the engine, called only when the work is large enough
    to go parallel); ``cache_dir`` turns on the content-addressed cache. With ``rows``, each
    file's rows are made in the same visit (a build), and a file is read unless its scan, rows
    included, is kept (``rows.kept``). A large tabular file is read in parts of at most
    ``split_bytes``, a task each, and their results joined: the same result.
    """
    timings: dict[str, float] = {}
    cache = ValidationCache(cache_dir, config, warn) if cache_dir else None
    results: list[FileResult | None] = [None] * len(sources)
    spools: list[str | None] = [None] * len(sources)
    todo: list[ScanTask] = []
    ref = CacheRef(str(cache_dir), uuid.uuid4().hex) if cache is not None else None
    kept = rows.kept if rows is not None and rows.kept is not None and rows.kept.any() else None
    t = time.perf_counter()
    for i, source in enumerate(sources):
        where = source.path.as_posix()
        if source.problem is not None:  # a symlink out of the folders, a dangling one, a loop
            code, message = source.problem
            results[i] = _empty_result(where, [finding(code, where, 0, message, config)])
            continue
        hit, spools[i] = _found(source, i, config, cache if rows is None else None, kept)
        if hit is not None:
            results[i] = hit
            if progress:
                progress(hit.path, hit.n_records)
            continue
        spools[i] = spool = rows.spool(i) if rows is not None else None
        cleaning = rows.cleaning if rows is not None else None
        todo.append(ScanTask(i, where, source.format, config, ref, spool, cleaning,
                             keep=rows is not None and rows.keeps))  # fmt: skip
    timings["cache lookup"] = time.perf_counter() - t

    t = time.perf_counter()
    total = sum(_size(storage.local_or_uri(task.path)) for task in todo)
    runner: Engine = SERIAL
    may_split = any(_splits(task, min(split_bytes, MIN_PART_BYTES)) for task in todo)
    if (len(todo) > 1 or may_split) and total >= PARALLEL_MIN_BYTES:
        # Only here: a warm or small run starts no worker, and imports no multiprocessing.
        chosen = engine() if callable(engine) else engine
        if chosen.workers > 1:
            runner = chosen
    size = min(split_bytes, max(MIN_PART_BYTES, total // (PARTS_PER_WORKER * runner.workers)))
    large = [task for task in todo if _splits(task, size)]
    plans = [PlanTask(task.path, task.format, config, size) for task in large]
    planned = dict(zip([task.index for task in large], runner.map(plan_parts, plans), strict=True))
    todo = [part for task in todo for part in _split(task, planned.get(task.index, []))]
    timings["planning parts"] = time.perf_counter() - t
    t = time.perf_counter()
    whole: list[ScanTask] = []  # files whose parts did not read as the whole: read whole
    for task, done in _files(todo, runner.map(scan_file, todo), config):
        if done is None:
            whole.append(_unsplit(task))
        else:
            results[task.index] = _store(cache, done, progress, _key(done[-1], task, config))
            spools[task.index] = _keep(rows, task, config, results[task.index], done, spools)
    for task, one in zip(whole, runner.map(scan_file, whole), strict=True):
        results[task.index] = _store(cache, [one], progress, _key(one, task, config))
        spools[task.index] = _keep(rows, task, config, results[task.index], [one], spools)
    timings["files (wall)"] = time.perf_counter() - t

    files = [r for r in results if r is not None]
    out = Scan(files, [s.name for s in sources], spools, timings)
    out.reused = kept.reused if kept is not None else 0
    if cache is not None:
        cache.close()
        out.cache_hits, out.cache_misses = cache.hits, cache.misses
    return out


def _found(
    source: Source,
    index: int,
    config: Config,
    cache: ValidationCache | None,
    kept: KeptScans | None,
) -> tuple[FileResult | None, str | None]:
    """The file's result without scanning it, from the validation ``cache`` (a validation
    run's) or from the scans a build ``kept`` (then with its spool), if either has it."""
    if cache is not None:
        where = source.path.as_posix()
        data = _cacheable_bytes(source.path, config)
        sha = hashlib.sha256(data).hexdigest() if data is not None else ""
        key = file_key(sha, source.format, where, config)
        return (cache.get_file(key, where, index) if sha else None), None
    if kept is not None:
        return _kept_scan(kept, source, index, config) or (None, None)
    return None, None


def _kept_scan(
    kept: KeptScans, source: Source, index: int, config: Config
) -> tuple[FileResult, str] | None:
    """The file's kept scan (its result and spool), if there is one for its bytes as they are
    now: hashed a block at a time, never held (unlike the validation cache's look-up, so a
    file over ``max_file_bytes`` that its format streams is kept too). Only a regular file: a
    FIFO or a device could block forever, and a scan reads what it is."""
    path = source.path
    if storage.is_uri(path):
        return None  # read by its task alone: the main process downloads nothing
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        sha = sha256_file(path)
    except OSError:
        return None
    where = path.as_posix()
    return kept.find(kept.key(file_key(sha, source.format, where, config), where), where, index)


def _keep(
    rows: Rows | None,
    task: ScanTask,
    config: Config,
    result: FileResult,
    parts: list[Scanned],
    spools: list[str | None],
) -> str | None:
    """Where the file's spool is once its completed scan is kept (a build's, with a folder
    that keeps scans), else where its task wrote it. A file found changed while it was read
    (no SHA-256) is not kept."""
    if rows is None or rows.kept is None or not rows.keeps:
        return spools[task.index]
    content = file_key(result.sha256, task.format, task.path, config)
    name = rows.kept.key(content, task.path) if result.sha256 else None
    return rows.kept.keep(name, task.index, result, [d for p in parts for d in p.spooled])


def file_key(sha256: str, format_name: str, path: str, config: Config) -> str:
    """What a file's cached result is keyed by, besides the checks' settings: its bytes, and
    for a source that is not a text drop its format and the field mapping that applies to it
    (the same bytes under another name may be read as another format, or mapped otherwise)."""
    if format_name == formats.DEFAULT:
        return sha256
    entry = mapping_for(config.mapping, path, format_name).as_dict()
    return f"{sha256}/{format_name}/{json.dumps(entry, sort_keys=True)}"


def _splits(task: ScanTask, size: int) -> bool:
    """Whether the file may be read in parts: of a format that plans them, and at least twice
    ``size`` (:func:`curate.ingest.formats.splits` decides, in a task, reading the file)."""
    if size <= 0 or _size(Path(task.path)) < 2 * size:
        return False
    return callable(getattr(formats.get(task.format), "splits", None))


def _split(task: ScanTask, found: list[Split]) -> list[ScanTask]:
    """The file's task, or a task for each of its parts (``found``), each spooling its rows to
    a file of its own in the file's spool folder."""
    if not found:
        return [task]
    if task.spool is not None:
        Path(task.spool).mkdir()
    return [
        replace(task, split=part, spool=f"{task.spool}/{part.number:05d}.arrow"
                if task.spool is not None else None)
        for part in found
    ]  # fmt: skip


def _unsplit(task: ScanTask) -> ScanTask:
    """The whole file's task in place of its parts' (their spool folder, which this run made,
    removed)."""
    spool = task.spool.rpartition("/")[0] if task.spool is not None else None
    if spool is not None:
        shutil.rmtree(spool)
    return replace(task, split=None, spool=spool)


def _files(
    todo: list[ScanTask], done: Iterator[Scanned], config: Config
) -> Iterator[tuple[ScanTask, list[Scanned] | None]]:
    """Each file's task and what it gave, as the tasks finish in order: the results of a
    file's parts joined into one (None: read it whole)."""
    held: list[Scanned] = []
    for task, one in zip(todo, done, strict=True):
        if task.split is None:
            yield task, [one]
            continue
        held.append(one)
        if task.split.next_line < 0:  # its last part
            joined = joined_parts(held, task.format, config)
            parts, held = held, []
            if joined is None:
                yield task, None
                continue
            parts[-1] = replace(parts[-1], file=joined)
            yield task, parts


def _key(done: Scanned, task: ScanTask, config: Config) -> str | None:
    if config.max_file_bytes and done.file.size > config.max_file_bytes:
        return None  # a streamed file over the limit is never looked up: _cacheable_bytes
    return file_key(done.file.sha256, task.format, task.path, config)


def _store(
    cache: ValidationCache | None,
    parts: list[Scanned],
    progress: Progress | None,
    key: str | None,
) -> FileResult:
    """The file's result (the last of its parts' ``Scanned``), with the cache's bookkeeping
    of every part."""
    result = parts[-1].file
    if cache is not None:
        for done in parts:
            cache.add_pending(done.cache_entries)
            if done.spilled is not None:
                cache.add_spilled(Path(done.spilled))
            cache.hits += done.hits
            cache.misses += done.misses
        if result.sha256 and key is not None:
            cache.put_file(key, replace(result, timings={}, rows=None, source_ids=None))
    if progress:
        progress(result.path, result.n_records)
    return result


def _size(path: Path | storage.Uri) -> int:
    try:
        info = path.stat()
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _cacheable_bytes(path: Path | storage.Uri, config: Config) -> bytes | None:
    """The bytes of a regular file within the size limit, to key the cache; else None.

    Never opens a FIFO or a device (it could block forever) and never reads past the limit:
    such entries are not cached, and parsing reports them. An object in storage is never read
    here: its task reads it (the main process downloads nothing), and the result it gives back
    is stored under its bytes' hash like any other; a later run looks up its records.
    """
    if storage.is_uri(path):
        return None
    try:
        info = path.stat()
        limit = config.max_file_bytes
        if not stat.S_ISREG(info.st_mode) or (limit and info.st_size > limit):
            return None
        return path.read_bytes()
    except OSError:
        return None


def _empty_result(path: str, findings: list) -> FileResult:
    return FileResult(
        path, None, "", 0, np.empty(0, np.int32), [], np.empty((0, NUM_PERM), np.uint16), findings
    )
