"""Validation of source drops: discover, scan every file, then the corpus checks and the report.

The flow ``curate validate`` runs, and the first half of a build (which passes its engine and
asks the scan for rows).
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from curate import engine as engines
from curate.dedupe.near import TextSource, engine_search
from curate.ingest.discover import discover
from curate.ingest.formats import SPLIT_BYTES
from curate.io import display
from curate.scan.run import Progress, Rows, Scan, Warn, scan, stderr_warning
from validation.config import Config
from validation.corpus import FileResult
from validation.findings import Report
from validation.runner import add_timings, check_corpus, make_report

if TYPE_CHECKING:
    from curate.engine import Engine


@dataclass
class ValidationRun:
    files: list[FileResult]
    report: Report
    cache_hits: int = 0
    cache_misses: int = 0
    # Each file's name relative to its source folder (parallel to ``files``): what a build
    # publishes instead of the local path.
    names: list[str] = field(default_factory=list)
    spools: list[str | None] = field(default_factory=list)  # a build's spool file per file
    formats: list[str] = field(default_factory=list)  # the source format of each file
    reused: int = 0  # files whose kept scan a build used instead of scanning them


def validate_paths(
    paths: Iterable[str | Path],
    config: Config,
    *,
    jobs: int | None = None,
    engine: Engine | None = None,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    warn: Warn = stderr_warning,
    rows: Rows | None = None,
    split_bytes: int = SPLIT_BYTES,
) -> ValidationRun:
    """Parse and check the sources at ``paths``; raises ``UsageError`` for a missing path.

    The files are checked on ``engine`` if the caller shares one (a build), else on a local
    pool of ``jobs`` workers (default: one per core) started only for an input large enough;
    ``cache_dir`` turns on the content-addressed cache; ``rows`` makes each record's row in the
    same visit (see :func:`curate.scan.run.scan`); a tabular file of at least twice
    ``split_bytes`` is read in parts, a task each. A Hub dataset (``hf://datasets/…``) is
    downloaded into ``cache_dir`` (kept for the next run), or without a cache into a temporary
    folder removed once it is read.
    """
    own: list[Engine] = []

    def local() -> Engine:
        own.append(engines.make(engines.DEFAULT, jobs))
        return own[0]

    paths = list(paths)
    with contextlib.ExitStack() as stack:
        roots: list[str | Path] = [p for p in paths if not str(p).startswith("hf://")]

        def fetch(address: str) -> Path:
            from curate.ingest import remote

            if cache_dir is not None:
                roots.append(remote.fetch(address, Path(cache_dir) / "hub"))
            else:
                into = stack.enter_context(tempfile.TemporaryDirectory(prefix="curate-hub-"))
                roots.append(remote.fetch(address, Path(into)))
            return roots[-1]

        sources = discover(paths, config.exclude, fetch)
        # An engine whose tasks run on other machines checks them before its first task.
        preflight = getattr(engine, "preflight", None)
        if preflight is not None:
            preflight(roots, rows.folder if rows is not None else None)
            kept = rows.kept if rows is not None else None
            if kept is not None and kept.writable:  # the tasks spool into it, for any node
                preflight([], kept.folder)
        try:
            scanned = scan(
                sources, config, engine=engine or local, cache_dir=cache_dir, rows=rows,
                progress=progress, warn=warn, split_bytes=split_bytes,
            )  # fmt: skip
            # The near-duplicate search runs on the same engine, if the scan started one.
            runner = engine or (own[0] if own else None)
            return corpus_report(scanned, config, [s.format for s in sources], runner)
        finally:
            for pool in own:
                pool.close()


def corpus_report(
    scanned: Scan, config: Config, source_formats: list[str], engine: Engine | None = None
) -> ValidationRun:
    """The corpus checks over the scanned files (the near-duplicate search on ``engine``, if
    the run has one), and the run's report."""
    timings = dict(scanned.timings)
    for r in scanned.files:
        add_timings(timings, r.timings)
    t = time.perf_counter()
    loader = _texts_loader(scanned, config, source_formats)
    near = engine_search(engine, loader) if engine is not None else None
    corpus_findings, corpus_timings = check_corpus(scanned.files, config, loader, near)
    add_timings(timings, corpus_timings)
    timings["corpus (wall)"] = time.perf_counter() - t
    return ValidationRun(
        scanned.files,
        make_report(scanned.files, corpus_findings, timings, config),
        scanned.cache_hits,
        scanned.cache_misses,
        scanned.names,
        scanned.spools,
        source_formats,
        scanned.reused,
    )


def addressed(run: ValidationRun) -> Report:
    """The run's report with the files of a Hub dataset named by their ``hf://`` address, as
    a build's table names them, never by where the download put them (a cache folder)."""
    remote = {f.path: n for f, n in zip(run.files, run.names, strict=True) if n.startswith("hf://")}
    if not remote:
        return run.report
    from curate.dataset.describe import published_report

    named = published_report(run.report, {**{f.path: f.path for f in run.files}, **remote})
    return replace(run.report, findings=named.findings, files=named.files).sort()


def _texts_loader(scanned: Scan, config: Config, source_formats: list[str]) -> TextSource:
    """Record texts by handle, for the near-duplicate check's few candidates: from the spooled
    rows in a build, else by reading the file again."""
    return TextSource(scanned.spools, [f.path for f in scanned.files], source_formats, config)


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
