"""The scan stage: every source file read once, on an engine, with the validation cache.

Files are the unit of work: a task (:mod:`curate.scan.task`) parses one file, runs the file and
record checks and returns only findings and compact sketches, so the main process stays small
however large the corpus is. The main process looks files up in the cache first (a validation
run only: a build always reads a file, for its rows), hands the rest to the engine, and writes
the new cache entries the tasks return.
"""

from __future__ import annotations

import hashlib
import json
import stat
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from curate import storage
from curate.engine.serial import SERIAL
from curate.ingest import formats
from curate.scan.cache import ValidationCache
from curate.scan.task import CacheRef, Scanned, ScanTask, scan_file
from validation.config import Config
from validation.corpus import FileResult
from validation.mapping import mapping_for
from validation.registry import finding
from validation.sketch import NUM_PERM

if TYPE_CHECKING:
    from curate.engine import Engine
    from curate.ingest.discover import Source
    from curate.transform.rows import Cleaning

# Below this much input, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 2_000_000

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


@dataclass(frozen=True)
class Rows:
    """A build's request to the scan: make every record's rows, into spool files in
    ``folder``, as ``cleaning`` says."""

    folder: Path
    cleaning: Cleaning

    def spool(self, index: int) -> str:
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
) -> Scan:
    """Scan ``sources`` (as :func:`curate.ingest.discover.discover` found them).

    ``engine`` runs the tasks (or makes the engine, called only when the work is large enough
    to go parallel); ``cache_dir`` turns on the content-addressed cache. With ``rows``, each
    file's rows are made in the same visit: what a build does. A file is then always read, even
    when the cache knows its findings.
    """
    timings: dict[str, float] = {}
    cache = ValidationCache(cache_dir, config, warn) if cache_dir else None
    results: list[FileResult | None] = [None] * len(sources)
    todo: list[ScanTask] = []
    ref = CacheRef(str(cache_dir), uuid.uuid4().hex) if cache is not None else None
    t = time.perf_counter()
    for i, source in enumerate(sources):
        where = source.path.as_posix()
        if source.problem is not None:  # a symlink out of the folders, a dangling one, a loop
            code, message = source.problem
            results[i] = _empty_result(where, [finding(code, where, 0, message, config)])
            continue
        if cache is not None and rows is None:
            data = _cacheable_bytes(source.path, config)
            sha = hashlib.sha256(data).hexdigest() if data is not None else ""
            key = file_key(sha, source.format, where, config)
            hit = cache.get_file(key, where, i) if sha else None
            if hit is not None:
                results[i] = hit
                if progress:
                    progress(hit.path, hit.n_records)
                continue
        spool = rows.spool(i) if rows is not None else None
        cleaning = rows.cleaning if rows is not None else None
        todo.append(ScanTask(i, where, source.format, config, ref, spool, cleaning))
    timings["cache lookup"] = time.perf_counter() - t

    t = time.perf_counter()
    total = sum(_size(storage.local_or_uri(task.path)) for task in todo)
    runner: Engine = SERIAL
    if len(todo) > 1 and total >= PARALLEL_MIN_BYTES:
        # Only here: a warm or small run starts no worker, and imports no multiprocessing.
        chosen = engine() if callable(engine) else engine
        if chosen.workers > 1:
            runner = chosen
    for task, done in zip(todo, runner.map(scan_file, todo), strict=True):
        stored: str | None = file_key(done.file.sha256, task.format, task.path, config)
        if config.max_file_bytes and done.file.size > config.max_file_bytes:
            stored = None  # a streamed file over the limit is never looked up: _cacheable_bytes
        results[task.index] = _store(cache, done, progress, stored)
    timings["files (wall)"] = time.perf_counter() - t

    files = [r for r in results if r is not None]
    out = Scan(files, [s.name for s in sources], [rows.spool(i) if rows else None
               for i in range(len(sources))], timings)  # fmt: skip
    if cache is not None:
        cache.close()
        out.cache_hits, out.cache_misses = cache.hits, cache.misses
    return out


def file_key(sha256: str, format_name: str, path: str, config: Config) -> str:
    """What a file's cached result is keyed by, besides the checks' settings: its bytes, and
    for a source that is not a text drop its format and the field mapping that applies to it
    (the same bytes under another name may be read as another format, or mapped otherwise)."""
    if format_name == formats.DEFAULT:
        return sha256
    entry = mapping_for(config.mapping, path, format_name).as_dict()
    return f"{sha256}/{format_name}/{json.dumps(entry, sort_keys=True)}"


def _store(
    cache: ValidationCache | None, done: Scanned, progress: Progress | None, key: str | None
) -> FileResult:
    result = done.file
    if cache is not None:
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
