"""Running every registered check, one file at a time and then across the corpus.

``check_file`` is the unit of parallel work and of caching: it needs nothing but one parsed file
and the configuration. ``check_corpus`` then runs the cross-file checks on what the files left
behind, and ``make_report`` gathers the findings of both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from validation import checks as _checks  # noqa: F401  (fills the registry)
from validation.config import Config
from validation.corpus import Corpus, FileResult, NearSearch, TextLoader
from validation.findings import Finding, Report, Severity
from validation.language import LanguageBatch, body_language
from validation.measures import summarise
from validation.normalize import strip_markup
from validation.records import Record, SourceFile
from validation.registry import MEASURES, CheckSpec, checks
from validation.sketch import NUM_PERM, Sketch, sketch, sketch_many


@dataclass(frozen=True, slots=True)
class RecordResult:
    """What checking a record computed and the later stages use instead of computing again:
    its own findings (lines relative to its first line), id, MinHash signature and language."""

    findings: tuple[Finding, ...]
    id: str
    sig: np.ndarray
    language: str | None = None
    # What the threshold checks measured, by measure (see validation.registry.MEASURES).
    measures: tuple[tuple[str, Any], ...] = ()


class RecordCache(Protocol):
    def get(self, text: str) -> RecordResult | None: ...

    def put(self, text: str, result: RecordResult) -> None: ...


@dataclass(frozen=True, slots=True)
class RecordPlan:
    """The record checks that run under a configuration and the measures they read, in order:
    worked out once per file, not per record (it cost a record about 4 µs)."""

    specs: tuple[CheckSpec, ...]
    measures: tuple[str, ...]

    @classmethod
    def of(cls, config: Config) -> RecordPlan:
        specs = tuple(checks("record", config))
        return cls(specs, tuple(sorted({s.measure for s in specs if s.measure is not None})))


def check_record(
    record: Record,
    config: Config,
    timings: dict[str, float],
    sk: Sketch | None = None,
    plan: RecordPlan | None = None,
) -> RecordResult:
    """Every record check on ``record``, and its sketch (``sk`` if the caller made it already,
    as :func:`check_file` does for a whole file at once) and language; ``plan`` is
    ``RecordPlan.of(config)``, passed by a caller that checks many records."""
    found: list[Finding] = []
    if plan is None:
        plan = RecordPlan.of(config)
    specs = plan.specs
    # Measure first: each measure once, before the checks that decide from it read it.
    values: dict[str, Any] = {}
    for name in plan.measures:
        t = time.perf_counter()
        values[name] = MEASURES[name].func(record, config)
        timings[f"measure {name}"] = timings.get(f"measure {name}", 0.0) + time.perf_counter() - t
    for spec in specs:
        t = time.perf_counter()
        found.extend(spec.run(record, config, values.get(spec.measure or "")))
        timings[spec.code] = timings.get(spec.code, 0.0) + time.perf_counter() - t
    if sk is None:
        t = time.perf_counter()
        sk, _ = sketch(record.text, config.shingle_size)
        timings["sketch"] = timings.get("sketch", 0.0) + time.perf_counter() - t
    if "language" in values:
        language = values["language"][0]
    else:
        # The `language` check is off; the row's `language` column needs it all the same.
        t = time.perf_counter()
        language = body_language(record.text, config.language_min_words)[0]
        timings["language"] = timings.get("language", 0.0) + time.perf_counter() - t
    relative = tuple(replace(f, file="", line=f.line - record.line) for f in found)
    return RecordResult(relative, sk.id, sk.sig, language, tuple(sorted(values.items())))


def check_file(
    source: SourceFile,
    config: Config,
    cache: RecordCache | None = None,
    *,
    index: int = 0,
    first: int = 0,
) -> tuple[FileResult, list[RecordResult]]:
    """Parse findings, file checks and record checks of one file, and its records' sketches.

    ``index`` is the file's place in the run, which the findings' record handles name, and
    ``first`` the number of the source's first record in the file (a tabular file is checked a
    batch of records at a time). Returns
    the file's result and each record's (its accepted codes left out), which the caller may
    use while the records are still in memory (a build makes their rows from them).
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
    results = [cache.get(r.text) if cache is not None else None for r in records]
    misses = [i for i, r in enumerate(results) if r is None]
    texts = [records[i].text for i in misses]
    # Their markup removed once: the comparison form and the plain text both start from it.
    t = time.perf_counter()
    stripped = [strip_markup(text) for text in texts]
    timings["markup"] = timings.get("markup", 0.0) + time.perf_counter() - t
    # The sketches of a file's new records in one batch: hashing and MinHash per call cost
    # more than the work itself for a record-sized input.
    t = time.perf_counter()
    sketches = sketch_many(texts, config.shingle_size, stripped)
    timings["sketch"] = timings.get("sketch", 0.0) + time.perf_counter() - t
    # And their languages' plain texts and English pre-checks (by numpy, in one pass).
    t = time.perf_counter()
    languages = LanguageBatch(texts, config.language_min_words, stripped)
    timings["language"] = timings.get("language", 0.0) + time.perf_counter() - t
    plan = RecordPlan.of(config)
    with languages:
        for i, sk in zip(misses, sketches, strict=True):
            results[i] = check_record(records[i], config, timings, sk, plan)
            if cache is not None:
                cache.put(records[i].text, results[i])
    done: list[RecordResult] = []
    for i, (record, result) in enumerate(zip(records, results, strict=True)):
        assert result is not None
        if record.accept and any(f.code in record.accept for f in result.findings):
            result = replace(
                result, findings=tuple(f for f in result.findings if f.code not in record.accept)
            )
        findings.extend(
            replace(f, file=source.path, line=f.line + record.line, record=(index, first + i))
            for f in result.findings
        )
        sigs[i] = result.sig
        done.append(result)
    lines = np.fromiter((r.line for r in records), dtype=np.int32, count=n)
    ids = [r.id for r in done]
    file = FileResult(
        source.path, source.header, source.sha256, source.size, lines, ids, sigs, findings,
        timings, _measured(done),
    )  # fmt: skip
    return file, done


def _measured(results: list[RecordResult]) -> dict[str, np.ndarray]:
    """Each measure's figure for every record of a file (NaN where it was not measured)."""
    out: dict[str, np.ndarray] = {}
    for i, result in enumerate(results):
        for name, value in result.measures:
            column = out.get(name)
            if column is None:
                column = out[name] = np.full(len(results), np.nan)
            number = MEASURES[name].number(value)
            if number is not None:
                column[i] = number
    return out


def check_corpus(
    results: list[FileResult],
    config: Config,
    load_texts: TextLoader,
    near_search: NearSearch | None = None,
) -> tuple[list[Finding], dict[str, float]]:
    corpus = Corpus(results, load_texts, near_search)
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
    record finding named by its record's id, which is the id of its row in the table, and by
    its number in the file where its line does not name it alone (:func:`_with_record_id`)."""
    report = Report(files=[r.path for r in results], records=sum(r.n_records for r in results))
    for found in (*(r.findings for r in results), corpus_findings):
        for f in found:
            if counts(f, config):
                report.add(_with_record_id(f, results))
    report.timings = timings
    report.measures = summarise(results, report.findings, config)
    return report.sort()


def counts(f: Finding, config: Config | None) -> bool:
    """Whether a finding counts: not configured ``off``, nor ignored for its file. The one
    definition, for the report, the rows a build makes and the findings it adds."""
    if f.severity is Severity.OFF:
        return False
    return config is None or not config.ignored(f.code, f.file)


def _with_record_id(f: Finding, results: list[FileResult]) -> Finding:
    """``f`` with its record's id; where several records start on its line (a JSON array on
    one line), its message begins with ``record N:``, the record's number in the file, as the
    place of an earlier record it names reads ``FILE:LINE (record N)``."""
    if f.id is not None or f.record is None:
        return f
    fi, ri = f.record
    number = results[fi].ordinal(ri)
    message = f.message if number is None else f"record {number}: {f.message}"
    return replace(f, id=results[fi].ids[ri], message=message)


def add_timings(total: dict[str, float], more: dict[str, float]) -> None:
    for key, value in more.items():
        total[key] = total.get(key, 0.0) + value
