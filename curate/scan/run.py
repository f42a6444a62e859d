"""Validation of source drops: every file checked (in parallel, or from the cache), then the corpus.

Files are the unit of work: a worker parses one file, runs the file and record checks and
returns only findings and compact sketches, so memory stays flat however large the corpus is.
"""

from __future__ import annotations

import hashlib
import json
import stat
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from curate.ingest.formats.text import discover, display, parse_file
from curate.scan.cache import ValidationCache
from validation.config import Config
from validation.corpus import FileResult
from validation.findings import Report
from validation.registry import finding
from validation.runner import add_timings, check_corpus, check_file, make_report
from validation.sketch import NUM_PERM

if TYPE_CHECKING:
    from curate.engine.local import Workers

# Below this much input, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 2_000_000

Progress = Callable[[str, int], None]
Warn = Callable[[str], None]


@dataclass
class ValidationRun:
    files: list[FileResult]
    report: Report
    cache_hits: int = 0
    cache_misses: int = 0
    # Each file's name relative to its source folder (parallel to ``files``): what a build
    # publishes instead of the local path.
    names: list[str] = field(default_factory=list)


def _stderr_warning(message: str) -> None:
    print(f"curate: warning: {message}", file=sys.stderr, flush=True)


_worker_caches: dict[tuple[str, str], ValidationCache] = {}


def _check_one(
    path: str, config: Config, cache_dir: str | None, rows: str | None = None
) -> tuple[FileResult, list[tuple[str, str, str]], int, int]:
    """Worker: check one file; return its result and the cache entries the parent is to store.

    A worker reads the cache through one read-only connection kept for its lifetime (not one
    per file), and the parent writes the new entries (in transactions of
    :data:`curate.scan.cache.FLUSH_ENTRIES`).
    """
    if not cache_dir:
        return _check_with(path, config, None, rows), [], 0, 0
    key = (cache_dir, json.dumps(config.as_dict(), sort_keys=True, default=str))
    cache = _worker_caches.get(key)
    if cache is None:
        cache = _worker_caches[key] = ValidationCache(
            cache_dir, config, _stderr_warning, readonly=True
        )
    hits, misses = cache.hits, cache.misses
    result = _check_with(path, config, cache, rows)
    return result, cache.take_pending(), cache.hits - hits, cache.misses - misses


def _check_with(
    path: str, config: Config, cache: ValidationCache | None, rows: str | None = None
) -> FileResult:
    """Parse and check one file; with ``rows`` (a spool file), also make its records' rows.

    This is the one visit of a file: parsing, checks and rows, each record passing each stage
    once (see :mod:`curate.transform.rows`).
    """
    t = time.perf_counter()
    source = parse_file(Path(path), config)
    parse_seconds = time.perf_counter() - t
    spool = None
    if rows is not None:
        from curate.transform.rows import (
            RowSpool,
        )  # the cleaner: only a build pays for importing it

        spool = RowSpool(source.path, config, Path(rows))
    result = check_file(source, config, cache, spool)
    result.timings["parse"] = result.timings.get("parse", 0.0) + parse_seconds
    if spool is not None:
        t = time.perf_counter()
        spool.write()
        result.timings["clean + rows"] = spool.seconds + time.perf_counter() - t
    return result


def _texts_loader(results: list[FileResult], config: Config, rows: Path | None = None):
    """Record texts by (file, record) index, for the near-duplicate check's few candidates:
    from the spooled rows in a build, else by parsing the file again."""

    def load(keys: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
        by_file: dict[int, list[int]] = {}
        for fi, ri in keys:
            by_file.setdefault(fi, []).append(ri)
        out = {}
        for fi, indexes in by_file.items():
            if rows is not None:
                from curate.transform.rows import raw_texts

                texts = raw_texts(rows, fi, indexes)
                out.update(zip([(fi, ri) for ri in indexes], texts, strict=True))
                continue
            source = parse_file(Path(results[fi].path), config)
            for ri in indexes:
                out[(fi, ri)] = source.records[ri].text
        return out

    return load


def validate_paths(
    paths: Iterable[str | Path],
    config: Config,
    *,
    jobs: int | None = None,
    workers: Workers | None = None,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    warn: Warn = _stderr_warning,
    rows: Path | None = None,
) -> ValidationRun:
    """Parse and check the drops at ``paths``; raises ``UsageError`` for a missing path.

    ``jobs`` worker processes check files in parallel (default: one per core, and none for a
    small input), from ``workers`` if the caller shares its pool; ``cache_dir`` turns on the
    content-addressed cache. With ``rows`` (a folder), each file's rows are made in the same
    visit and spooled there as ``curate.transform.rows.spool_path(rows, file index)``: what a build
    does. A file is then always read, even when the cache knows its findings.
    """
    entries = discover(paths, config.exclude)
    found = [e.path for e in entries]
    timings: dict[str, float] = {}
    cache = ValidationCache(cache_dir, config, warn) if cache_dir else None
    results: list[FileResult | None] = [None] * len(found)
    todo: list[int] = []
    t = time.perf_counter()
    for i, entry in enumerate(entries):
        if entry.problem is not None:  # a symlink out of the folders, a dangling one, a loop
            code, message = entry.problem
            where = entry.path.as_posix()
            results[i] = _empty_result(where, [finding(code, where, 0, message, config)])
            continue
        if cache is not None and rows is None:
            data = _cacheable_bytes(entry.path, config)
            sha = hashlib.sha256(data).hexdigest() if data is not None else ""
            hit = cache.get_file(sha, entry.path.as_posix()) if sha else None
            if hit is not None:
                results[i] = hit
                if progress:
                    progress(hit.path, hit.n_records)
                continue
        todo.append(i)
    timings["cache lookup"] = time.perf_counter() - t

    total = sum(_size(found[i]) for i in todo)
    parallel = False
    if len(todo) > 1 and total >= PARALLEL_MIN_BYTES:
        # Only here: a warm or small run starts no worker, and imports no multiprocessing.
        from curate.engine.local import default_jobs

        jobs = (workers.jobs if workers else default_jobs()) if jobs is None else max(1, jobs)
        parallel = jobs > 1
    cache_arg = str(cache_dir) if cache is not None else None
    t = time.perf_counter()
    if parallel:
        from curate.engine.local import borrow

        assert jobs is not None
        with borrow(workers, jobs) as pool:
            # Taken off the queue as they are read: a done future keeps its result, which holds
            # the file's new cache entries (292k records: 250 MB held to the end of the run).
            futures = deque(
                pool.submit(_check_one, found[i].as_posix(), config, cache_arg, _spool(rows, i))
                for i in todo
            )
            for i in todo:
                results[i], pending, hits, misses = futures.popleft().result()
                if cache is not None:
                    cache.add_pending(pending)
                    cache.hits += hits
                    cache.misses += misses
                _store(cache, results[i], progress)
    else:
        for i in todo:
            results[i] = _check_with(found[i].as_posix(), config, cache, _spool(rows, i))
            _store(cache, results[i], progress)
    timings["files (wall)"] = time.perf_counter() - t

    done = [r for r in results if r is not None]
    for r in done:
        add_timings(timings, r.timings)
    corpus_findings, corpus_timings = check_corpus(done, config, _texts_loader(done, config, rows))
    add_timings(timings, corpus_timings)
    run = ValidationRun(
        done,
        make_report(done, corpus_findings, timings, config),
        names=[e.name for e in entries],
    )
    if cache is not None:
        cache.close()
        run.cache_hits, run.cache_misses = cache.hits, cache.misses
    return run


def _spool(rows: Path | None, file_index: int) -> str | None:
    if rows is None:
        return None
    from curate.transform.rows import spool_path

    return spool_path(rows, file_index).as_posix()


def _store(
    cache: ValidationCache | None, result: FileResult | None, progress: Progress | None
) -> None:
    assert result is not None
    if cache is not None and result.sha256:
        cache.put_file(result.sha256, replace(result, timings={}))
    if progress:
        progress(result.path, result.n_records)


def _size(path: Path) -> int:
    try:
        info = path.stat()
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _cacheable_bytes(path: Path, config: Config) -> bytes | None:
    """The bytes of a regular file within the size limit, to key the cache; else None.

    Never opens a FIFO or a device (it could block forever) and never reads past the limit:
    such entries are not cached, and parsing reports them.
    """
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


def printable(report: Report) -> Report:
    """The report with every path printable and writable as UTF-8 (see :func:`display`)."""
    findings = [
        replace(
            f,
            file=display(f.file),
            related=display(f.related) if f.related is not None else None,
            message=display(f.message),
        )
        for f in report.findings
    ]
    return replace(report, findings=findings, files=[display(p) for p in report.files])
