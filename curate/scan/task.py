"""The per-file task: one file read, parsed, checked and, in a build, turned into rows.

This is the one visit of a file, and the unit of parallel work: an engine runs one task per
file, anywhere, because a task names everything it reads and writes (the file, its format, the
cache it may read, the spool file its rows go to) and returns everything the main process needs
(the file's result and the cache entries to store). It holds no state between tasks but an
open read-only cache connection per thread, keyed by what the task names.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from curate.ingest import formats
from curate.scan.cache import ValidationCache
from validation.config import Config
from validation.corpus import FileResult
from validation.runner import check_file

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


@dataclass
class Scanned:
    """What one task gives back: the file's result and the cache's bookkeeping."""

    file: FileResult
    cache_entries: list[tuple[str, str, str]] = field(default_factory=list)
    hits: int = 0
    misses: int = 0


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


def scan_file(task: ScanTask) -> Scanned:
    """Parse and check one file; with a spool, also make its records' rows."""
    cache = _cache(task.cache, task.config) if task.cache else None
    hits, misses = (cache.hits, cache.misses) if cache is not None else (0, 0)
    t = time.perf_counter()
    source = formats.get(task.format).read(Path(task.path), task.config)
    parse_seconds = time.perf_counter() - t
    file, results = check_file(source, task.config, cache, index=task.index)
    file.timings["parse"] = file.timings.get("parse", 0.0) + parse_seconds
    if task.spool is not None:
        from curate.transform.rows import Cleaning, spool_rows  # only a build loads the cleaner

        t = time.perf_counter()
        spool_rows(
            source.path, source.records, results, task.config, task.cleaning or Cleaning(),
            Path(task.spool),
        )  # fmt: skip
        file.timings["clean + rows"] = time.perf_counter() - t
    if cache is None:
        return Scanned(file)
    return Scanned(file, cache.take_pending(), cache.hits - hits, cache.misses - misses)
