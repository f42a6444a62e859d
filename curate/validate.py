"""Validation of source drops: every file checked (in parallel, or from the cache), then the corpus.

Files are the unit of work: a worker parses one file, runs the file and record checks and
returns only findings and compact sketches, so memory stays flat however large the corpus is.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from curate.cache import ValidationCache
from curate.parallel import Workers, borrow, default_jobs
from curate.parse import collect_paths, parse_file
from validation.config import Config
from validation.corpus import FileResult
from validation.findings import Report
from validation.runner import add_timings, check_corpus, check_file, make_report

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


def _stderr_warning(message: str) -> None:
    print(f"curate: warning: {message}", file=sys.stderr, flush=True)


def _check_one(
    path: str, config: Config, cache_dir: str | None
) -> tuple[FileResult, list[tuple[str, bytes]], int, int]:
    """Worker: check one file with a cache of its own; return what the parent is to store."""
    cache = ValidationCache(cache_dir, config, _stderr_warning) if cache_dir else None
    try:
        result = _check_with(path, config, cache)
        if cache is None:
            return result, [], 0, 0
        return result, cache.take_pending(), cache.hits, cache.misses
    finally:
        if cache is not None:
            cache.close()


def _check_with(path: str, config: Config, cache: ValidationCache | None) -> FileResult:
    t = time.perf_counter()
    source = parse_file(Path(path), config)
    parse_seconds = time.perf_counter() - t
    result = check_file(source, config, cache)
    result.timings["parse"] = result.timings.get("parse", 0.0) + parse_seconds
    return result


def _texts_loader(results: list[FileResult], config: Config):
    def load(keys: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
        by_file: dict[int, list[int]] = {}
        for fi, ri in keys:
            by_file.setdefault(fi, []).append(ri)
        out = {}
        for fi, indexes in by_file.items():
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
) -> ValidationRun:
    """Parse and check the drops at ``paths``; raises ``UsageError`` for a missing path.

    ``jobs`` worker processes check files in parallel (default: one per core, and none for a
    small input), from ``workers`` if the caller shares its pool; ``cache_dir`` turns on the
    content-addressed cache.
    """
    found = collect_paths(paths)
    timings: dict[str, float] = {}
    cache = ValidationCache(cache_dir, config, warn) if cache_dir else None
    results: list[FileResult | None] = [None] * len(found)
    todo: list[int] = []
    t = time.perf_counter()
    for i, path in enumerate(found):
        if cache is not None:
            try:
                sha = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                sha = ""
            hit = cache.get_file(sha, path.as_posix()) if sha else None
            if hit is not None:
                results[i] = hit
                if progress:
                    progress(hit.path, hit.n_records)
                continue
        todo.append(i)
    timings["cache lookup"] = time.perf_counter() - t

    jobs = (workers.jobs if workers else default_jobs()) if jobs is None else max(1, jobs)
    total = sum(found[i].stat().st_size for i in todo if found[i].is_file())
    cache_arg = str(cache_dir) if cache is not None else None
    t = time.perf_counter()
    if jobs > 1 and len(todo) > 1 and total >= PARALLEL_MIN_BYTES:
        with borrow(workers, jobs) as pool:
            futures = [
                pool.submit(_check_one, found[i].as_posix(), config, cache_arg) for i in todo
            ]
            for i, future in zip(todo, futures, strict=True):
                results[i], pending, hits, misses = future.result()
                if cache is not None:
                    cache.add_pending(pending)
                    cache.hits += hits
                    cache.misses += misses
                _store(cache, results[i], progress)
    else:
        for i in todo:
            results[i] = _check_with(found[i].as_posix(), config, cache)
            _store(cache, results[i], progress)
    timings["files (wall)"] = time.perf_counter() - t

    done = [r for r in results if r is not None]
    for r in done:
        add_timings(timings, r.timings)
    corpus_findings, corpus_timings = check_corpus(done, config, _texts_loader(done, config))
    add_timings(timings, corpus_timings)
    for r in done:  # the corpus checks were their only reader: 252 bytes a record, let go
        r.sigs = r.sigs[:0]
    run = ValidationRun(done, make_report(done, corpus_findings, timings, config))
    if cache is not None:
        cache.close()
        run.cache_hits, run.cache_misses = cache.hits, cache.misses
    return run


def _store(
    cache: ValidationCache | None, result: FileResult | None, progress: Progress | None
) -> None:
    assert result is not None
    if cache is not None and result.sha256:
        cache.put_file(result.sha256, replace(result, timings={}))
    if progress:
        progress(result.path, result.n_records)
