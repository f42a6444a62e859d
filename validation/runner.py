"""Running every registered check, one file at a time and then across the corpus.

``check_file`` is the unit of parallel work and of caching: it needs nothing but one parsed file
and the configuration. ``check_corpus`` then runs the cross-file checks on what the files left
behind. ``run_checks`` does both in-process for parsed files already in memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from validation import checks as _checks  # noqa: F401  (fills the registry)
from validation.config import Config
from validation.corpus import Corpus, FileResult, TextLoader
from validation.findings import Finding, Report, Severity
from validation.language import body_language
from validation.records import Record, SourceFile
from validation.registry import REGISTRY, checks
from validation.sketch import NUM_PERM, Sketch, sketch, sketch_many


@dataclass(frozen=True, slots=True)
class RecordResult:
    """What checking a record computed and the later stages use instead of computing again:
    its own findings (lines relative to its first line), id, MinHash signature and language."""

    findings: tuple[Finding, ...]
    id: str
    sig: np.ndarray
    language: str | None = None


# Called with each record and its result right after its checks, in the same visit: how a
# build makes the record's row without parsing or analysing the record a second time.
RecordVisitor = Callable[[Record, RecordResult], None]


class RecordCache(Protocol):
    def get(self, text: str) -> RecordResult | None: ...

    def put(self, text: str, result: RecordResult) -> None: ...


def check_record(
    record: Record, config: Config, timings: dict[str, float], sk: Sketch | None = None
) -> RecordResult:
    """Every record check on ``record``, and its sketch (``sk`` if the caller made it already,
    as :func:`check_file` does for a whole file at once) and language."""
    found: list[Finding] = []
    for spec in checks("record", config):
        t = time.perf_counter()
        found.extend(spec.func(record, config))  # type: ignore[misc]
        timings[spec.code] = timings.get(spec.code, 0.0) + time.perf_counter() - t
    if sk is None:
        t = time.perf_counter()
        sk, _ = sketch(record.text, config.shingle_size)
        timings["sketch"] = timings.get("sketch", 0.0) + time.perf_counter() - t
    # The `language` check computed this already (cached by text); it is computed here only
    # when that check is off, because the row's `language` column needs it all the same.
    t = time.perf_counter()
    language = body_language(record.text, config.language_min_words)[0]
    timings["language"] = timings.get("language", 0.0) + time.perf_counter() - t
    relative = tuple(replace(f, file="", line=f.line - record.line) for f in found)
    return RecordResult(relative, sk.id, sk.sig, language)


def check_file(
    source: SourceFile,
    config: Config,
    cache: RecordCache | None = None,
    visit: RecordVisitor | None = None,
) -> FileResult:
    """Parse findings, file checks and record checks of one file, and its records' sketches.

    ``visit`` gets each record with its result (its accepted codes left out) as soon as the
    record is checked.
    """
    timings: dict[str, float] = {}
    findings = list(source.findings)
    for spec in checks("file", config):
        t = time.perf_counter()
        findings.extend(spec.func(source, config))  # type: ignore[misc]
        timings[spec.code] = timings.get(spec.code, 0.0) + time.perf_counter() - t
    records = source.records
    n = len(records)
    sigs = np.zeros((n, NUM_PERM), dtype=np.uint16)
    ids: list[str] = []
    results = [cache.get(r.text) if cache is not None else None for r in records]
    misses = [i for i, r in enumerate(results) if r is None]
    # The sketches of a file's new records in one batch: hashing and MinHash per call cost
    # more than the work itself for a record-sized input.
    t = time.perf_counter()
    sketches = sketch_many([records[i].text for i in misses], config.shingle_size)
    timings["sketch"] = timings.get("sketch", 0.0) + time.perf_counter() - t
    for i, sk in zip(misses, sketches, strict=True):
        results[i] = check_record(records[i], config, timings, sk)
        if cache is not None:
            cache.put(records[i].text, results[i])
    for i, (record, result) in enumerate(zip(records, results, strict=True)):
        assert result is not None
        if record.accept and any(f.code in record.accept for f in result.findings):
            result = replace(
                result, findings=tuple(f for f in result.findings if f.code not in record.accept)
            )
        findings.extend(
            replace(f, file=source.path, line=f.line + record.line) for f in result.findings
        )
        if visit is not None:
            visit(record, result)
        ids.append(result.id)
        sigs[i] = result.sig
    lines = np.fromiter((r.line for r in source.records), dtype=np.int32, count=n)
    return FileResult(
        source.path, source.header, source.sha256, source.size, lines, ids, sigs, findings,
        timings,
    )  # fmt: skip


def check_corpus(
    results: list[FileResult], config: Config, load_texts: TextLoader
) -> tuple[list[Finding], dict[str, float]]:
    corpus = Corpus(results, load_texts)
    found: list[Finding] = []
    timings: dict[str, float] = {}
    for spec in checks("corpus", config):
        t = time.perf_counter()
        found.extend(spec.func(corpus, config))  # type: ignore[misc]
        timings[spec.code] = time.perf_counter() - t
    return found, timings


def make_report(
    results: list[FileResult],
    corpus_findings: list[Finding],
    timings: dict[str, float],
    config: Config | None = None,
) -> Report:
    """The run's report: findings configured off or ignored for their file left out, and each
    record finding named by its record's id, which is the id of its row in the table."""
    report = Report(files=[r.path for r in results], records=sum(r.n_records for r in results))
    by_path = {r.path: r for r in results}
    for found in (*(r.findings for r in results), corpus_findings):
        for f in found:
            if f.severity is Severity.OFF or (
                config is not None and config.ignored(f.code, f.file)
            ):
                continue
            report.add(_with_record_id(f, by_path.get(f.file)))
    report.timings = timings
    return report.sort()


def _with_record_id(f: Finding, result: FileResult | None) -> Finding:
    if (
        f.id is not None
        or result is None
        or not result.ids
        or REGISTRY[f.code].scope not in ("record", "corpus")
    ):
        return f
    k = int(np.searchsorted(result.lines, f.line, side="right")) - 1
    return replace(f, id=result.ids[k]) if k >= 0 else f


def add_timings(total: dict[str, float], more: dict[str, float]) -> None:
    for key, value in more.items():
        total[key] = total.get(key, 0.0) + value


def run_checks(
    files: list[SourceFile],
    config: Config,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> Report:
    """All findings of parsed ``files`` (in path order), checked in this process."""
    results = []
    timings: dict[str, float] = {}
    for source in files:
        results.append(check_file(source, config))
        add_timings(timings, results[-1].timings)
        if progress is not None:
            progress(source.path, len(source.records))

    def load(keys: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
        return {(fi, ri): files[fi].records[ri].text for fi, ri in keys}

    corpus_findings, corpus_timings = check_corpus(results, config, load)
    add_timings(timings, corpus_timings)
    return make_report(results, corpus_findings, timings, config)
