"""``curate build``: validate, clean, deduplicate, and export a deterministic dataset folder."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from curate import __version__
from curate.dataset.assemble import TableContractBroken, assemble, decide_rows
from curate.dataset.card import length_stats, license_url, render_card
from curate.dataset.card import template_path as card_template_path
from curate.dataset.croissant import croissant_metadata, write_croissant
from curate.dataset.table import ARROW_SCHEMA
from curate.dedupe.plan import plan
from curate.engine.local import Workers, default_jobs
from curate.ingest.formats.text import display
from curate.release import diff as release
from curate.release import output as export
from curate.report.html import REPORT_HTML, RecordTexts, render_report
from curate.scan.run import validate_paths
from curate.transform.rows import raw_texts
from validation import residue
from validation.config import Config
from validation.corpus import FileResult, record_offsets
from validation.findings import Finding, Report, Severity
from validation.render import render_json

Progress = Callable[[str], None]


class BuildRefused(Exception):
    """The sources failed validation (or the near-duplicate policy): nothing was written."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class BuildResult:
    out: Path
    version: str
    records_in: int
    records_out: int
    exact_merged: int
    near_merged: int
    fingerprint: str
    report: Report
    manifest: dict[str, Any]
    diff: release.Diff | None = None  # against the previous release, if one was given
    previous_version: str | None = None
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage


def _near_pairs(
    files: list[FileResult], report: Report
) -> tuple[list[tuple[int, int, float]], list[Finding]]:
    """The near-duplicate pairs the validation run found, as global record indexes.

    They are read back from the report rather than computed again: the report is the one
    statement of what is a near-duplicate, and the build must merge exactly that.
    """
    file_index = {f.path: i for i, f in enumerate(files)}
    offsets = record_offsets(files)

    def index(path: str, line: int) -> int:
        fi = file_index[path]
        return int(offsets[fi] + np.searchsorted(files[fi].lines, line))

    findings = [f for f in report if f.code == "near-duplicate"]
    pairs = []
    for f in findings:
        path, _, line = str(f.related).rpartition(":")
        pairs.append((index(f.file, f.line), index(path, int(line)), float(f.score or 0.0)))
    return pairs, findings


def _spooled_texts(files: list[FileResult], names: list[str], rows: Path) -> RecordTexts:
    """The raw texts of records by (file name, line), read from the spool of their rows."""
    index = {name: i for i, name in enumerate(names)}

    def texts(wanted: set[tuple[str, int]]) -> dict[str, str]:
        out: dict[str, str] = {}
        by_file: dict[int, list[int]] = {}
        for name, line in wanted:
            if name in index:
                by_file.setdefault(index[name], []).append(line)
        for fi, lines in sorted(by_file.items()):
            known = files[fi].lines
            at = {int(line): int(np.searchsorted(known, line)) for line in lines}
            found = [line for line, k in at.items() if k < len(known) and known[k] == line]
            texts = raw_texts(rows, fi, [at[line] for line in found])
            for line, text in zip(found, texts, strict=True):
                out[f"{names[fi]}:{line}"] = text
        return out

    return texts


def _source_entries(files: list[FileResult], names: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "sha256": f.sha256,
            "size": f.size,
            "header": f.header.text if f.header else None,
            "header_language": f.header.language if f.header else None,
            "records": f.n_records,
        }
        for f, name in zip(files, names, strict=True)
    ]


def _published_report(report: Report, names: dict[str, str]) -> Report:
    """The report as published: files by their name in the table, never by a local path.

    ``names`` maps each local path to its path relative to the source folder; a message that
    quotes a local path (a duplicate's "same abstract as PATH:LINE") is rewritten the same way.
    """

    def name(loc: str | None) -> str | None:
        if loc is None:
            return None
        path, _, line = loc.rpartition(":")
        return f"{names.get(path, display(path))}:{line}" if path else names.get(loc, loc)

    findings = []
    for f in report.findings:
        message = f.message
        if f.related:
            message = message.replace(f.related, name(f.related) or "")
        file = names.get(f.file, display(f.file))
        findings.append(replace(f, file=file, related=name(f.related), message=message))
    return Report(findings=findings, files=[names.get(p, display(p)) for p in report.files],
                  records=report.records)  # fmt: skip


def _created() -> str | None:
    """Build time only when SOURCE_DATE_EPOCH asks for it: wall-clock time breaks determinism."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return None
    return datetime.fromtimestamp(int(epoch), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build(
    paths: list[str | Path],
    out: str | Path,
    config: Config,
    *,
    version: str | None = None,
    progress: Progress | None = None,
    template: str | Path | None = None,
    previous: release.Release | str | Path | None = None,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
    verbose: bool = False,
    on_file: Callable[[str, int], None] | None = None,
    force: bool = False,
) -> BuildResult:
    """Build the dataset folder ``out`` from the drops in ``paths``.

    With ``previous`` (a :class:`~curate.release.diff.Release`, a build folder or ``hub:ORG/NAME``)
    the version is the previous one bumped by what changed, and ``CHANGELOG.md`` says what did;
    ``version`` then overrides the bump but may not go backwards. Without it the version is
    ``version`` or the configured one. ``on_file(path, records)`` is called as each file is
    checked (the CLI's progress bar).

    ``out`` must be new, empty or a previous build (see
    :func:`curate.release.output.output_target`);
    ``force`` moves anything else there aside, kept, instead of refusing.
    """
    say = progress or (lambda _msg: None)
    # Usage errors first, before any work: where the build goes, the version, the template.
    target = export.output_target(out, [Path(p) for p in paths])
    out = Path(out)
    if version is not None:
        release.parse_version(version)
    if previous is not None and not isinstance(previous, release.Release):
        previous = release.load_release(previous, say=say)
    if previous is not None and previous.version is None:
        raise release.ReleaseUsageError(
            f"{previous.label}: not a release (no manifest.json with a version), "
            "so there is no version to bump; use a build folder or hub:ORG/NAME"
        )
    if previous is not None and version is not None:
        release.decide_version(previous.version, None, version, previous.version)
    template_path = card_template_path(config, template)  # before the long part, not after it
    with export.output_lock(target):
        export.recover(target, say)
        export.check_output(target, force=force)
        return _build_locked(
            paths, out, target, config, version=version, say=say, template_path=template_path,
            previous=previous, jobs=jobs, cache_dir=cache_dir, verbose=verbose, force=force,
            on_file=on_file,
        )  # fmt: skip


def _build_locked(
    paths: list[str | Path],
    out: Path,
    target: Path,
    config: Config,
    *,
    version: str | None,
    say: Progress,
    template_path: Path,
    previous: release.Release | None,
    jobs: int | None,
    cache_dir: str | Path | None,
    verbose: bool,
    force: bool,
    on_file: Callable[[str, int], None] | None,
) -> BuildResult:
    jobs = default_jobs() if jobs is None else max(1, jobs)
    workers = Workers(jobs)  # started by validation while this process is small, reused after
    try:
        with export.staged_folder(target, force=force, say=say, on_abort=workers.close) as stage:
            # Validation makes every record's row in the same visit as its checks, into the
            # spool `rows`; assembly takes the survivors' rows from there (curate.transform.rows).
            # The
            # spool is inside the stage: a failed build removes it with the stage.
            rows = Path(tempfile.mkdtemp(prefix=".rows-", dir=stage))
            started = time.perf_counter()
            run = validate_paths(
                paths,
                config,
                jobs=jobs,
                workers=workers,
                cache_dir=cache_dir,
                progress=on_file
                or ((lambda path, n: say(f"checked {path} ({n} records)")) if verbose else None),
                rows=rows,
            )
            report, files = run.report, run.files
            records_in = report.records
            say(f"validated {len(files)} files, {records_in} records")
            if report.errors:
                raise BuildRefused(f"validation found {len(report.errors)} errors", report)
            pairs, near_findings = _near_pairs(files, report)
            if config.near_duplicates == "fail" and near_findings:
                raise BuildRefused(
                    f"{len(near_findings)} near-duplicates and near_duplicates = 'fail'",
                    Report(findings=near_findings, files=report.files, records=report.records),
                )
            ids = [i for f in files for i in f.ids]
            policy, dropped = decide_rows(report, files, config, run.names)
            if policy.dropped:
                # A dropped record is nobody's near-duplicate: it must not absorb a kept one.
                pairs = [p for p in pairs if ids[p[0]] not in policy.dropped
                         and ids[p[1]] not in policy.dropped]  # fmt: skip
                say(f"row policy: {len(dropped)} records dropped")
            validated = time.perf_counter()
            groups = plan(ids, pairs, merge_near=config.near_duplicates == "merge")
            timings = {
                "validate (wall)": validated - started,
                "dedupe plan": time.perf_counter() - validated,
            }
            say(
                f"deduplicated: {groups.exact_merged} exact and {groups.near_merged} near "
                "duplicates merged"
            )
            if previous is None:
                version = release.decide_version(None, None, version, config.version).version
            parquet = stage / export.PARQUET_PATH
            try:
                table = assemble(
                    files, groups, config, parquet, jobs=jobs, workers=workers, say=say,
                    policy=policy, names=run.names, spool=rows,
                )  # fmt: skip
            except TableContractBroken as exc:
                raise BuildRefused(str(exc), report) from None
            timings.update(table.timings)
            # Reported like the checks' findings: not when `off` or ignored for the file (10's
            # rule control); the card's `math_kept` still counts every span kept as TeX.
            shown = [
                f
                for f in table.math_kept
                if f.severity is not Severity.OFF and not config.ignored(f.code, f.file)
            ]
            report.extend(shown)
            report.sort()
            kept_errors = [f for f in shown if f.severity is Severity.ERROR]
            if kept_errors:
                raise BuildRefused(f"{len(kept_errors)} math spans kept as TeX", report)
            metadata_started = time.perf_counter()
            fingerprint = table.fingerprint
            sources = _source_entries(files, run.names)
            word_counts = np.concatenate(table.word_counts) if table.word_counts else np.empty(0)
            base_stats = {
                "rows": table.rows,
                "records_in": records_in,
                "exact_merged": groups.exact_merged,
                "near_merged": groups.near_merged,
                "fingerprint": fingerprint,
                "venues": ", ".join(sorted(table.venues)),
                "sources": sources,
                "length": length_stats(word_counts.tolist()),
                "markup": {k: table.markup[k] for k in residue.KINDS},
                "has_math": table.has_math,
                "flagged": table.flagged,
                "flags": dict(sorted(table.flags.items())),
                "dropped": len(dropped),
                "dropped_by_reason": dict(
                    sorted(Counter(c for d in dropped for c in d["reasons"]).items())
                ),
                "math_kept": len(table.math_kept),
            }
            languages = sorted(table.languages)
            local = {f.path: n for f, n in zip(files, run.names, strict=True)}
            published = _published_report(report, local)
            published.dropped = dropped
            published_report = render_json(published)

            def write_release(release_version: str, changelog: str | None) -> dict[str, Any]:
                """Every file whose bytes depend on the version; returns the manifest to write."""
                stats = {
                    **base_stats,
                    "version": release_version,
                    "changelog": changelog is not None,
                    "previous_version": previous.version if previous is not None else None,
                }
                card = render_card(
                    config,
                    template=template_path,
                    languages=languages,
                    stats=stats,
                    num_bytes=table.num_bytes,
                    download_size=parquet.stat().st_size,
                )
                (stage / "README.md").write_text(card, encoding="utf-8")
                write_croissant(
                    stage / "croissant.json",
                    croissant_metadata(
                        name=config.dataset_name,
                        description=config.description
                        or f"{config.dataset_name}: cleaned, deduplicated text records.",
                        version=release_version,
                        license=license_url(config) or config.license,
                        url=config.homepage or f"https://huggingface.co/datasets/{config.repo_id}",
                        citation=config.citation,
                        creators=list(config.creators),
                        parquet_relpath=export.PARQUET_PATH,
                        parquet_sha256=export.sha256_file(parquet),
                        num_rows=table.rows,
                        date_published=_created(),
                    ),
                )
                (stage / "validation-report.json").write_text(published_report, encoding="utf-8")
                changelog_path = stage / release.CHANGELOG
                if changelog is None:
                    changelog_path.unlink(missing_ok=True)
                else:
                    changelog_path.write_text(changelog, encoding="utf-8")
                manifest = {
                    "name": config.dataset_name,
                    "repo_id": config.repo_id,
                    "version": release_version,
                    "fingerprint": fingerprint,
                    "rows": table.rows,
                    "records_in": records_in,
                    "rows_dropped": len(dropped),
                    "rows_flagged": table.flagged,
                    "duplicates_merged": {"exact": groups.exact_merged, "near": groups.near_merged},
                    "schema": [{"name": f.name, "type": str(f.type)} for f in ARROW_SCHEMA],
                    "files": export.file_inventory(
                        stage, exclude={"manifest.json"}, skip=rows.name
                    ),
                    "sources": sources,
                    "toolkit": {"curate": __version__},
                    "settings": config.as_dict(),
                }
                created = _created()
                if created:
                    manifest["created"] = created
                return manifest

            diff = None
            if previous is None:
                manifest = write_release(version, None)
            else:
                version, manifest, diff = _versioned_release(
                    previous, stage, parquet, write_release, requested=version, say=say
                )
            export.write_json(stage / "manifest.json", manifest)
            # The page for people is not part of the release: it is rendered from the manifest,
            # is not in its `files`, and publish does not upload it. Its hash goes under
            # `local_files`, so the next build recognises the page as ours and may replace it.
            changed = np.concatenate(table.changed) if table.changed else np.empty(0, np.int64)
            page = render_report(
                stage, record_texts=_spooled_texts(files, run.names, rows), changed=changed
            )
            page = page.encode("utf-8")
            shutil.rmtree(rows)  # before the swap: the spool is not part of the build
            manifest["local_files"] = {
                REPORT_HTML: {"sha256": hashlib.sha256(page).hexdigest(), "size": len(page)}
            }
            export.write_json(stage / "manifest.json", manifest)
            (stage / REPORT_HTML).write_bytes(page)
        timings["card, croissant, manifest (wall)"] = time.perf_counter() - metadata_started
        say(f"wrote {out}")
        return BuildResult(
            out=out,
            version=version,
            records_in=records_in,
            records_out=table.rows,
            exact_merged=groups.exact_merged,
            near_merged=groups.near_merged,
            fingerprint=fingerprint,
            report=report,
            manifest=manifest,
            diff=diff,
            previous_version=previous.version if previous is not None else None,
            timings={**run.report.timings, **timings},
        )
    finally:
        workers.close()


def _versioned_release(
    previous: release.Release,
    stage: Path,
    parquet: Path,
    write_release: Callable[[str, str | None], dict[str, Any]],
    *,
    requested: str | None,
    say: Progress,
) -> tuple[str, dict[str, Any], release.Diff]:
    """Compare the staged build with ``previous``, decide the version and write CHANGELOG.md.

    The build is first written as if it were the previous release again (its version, its
    changelog): whatever still differs from the previous manifest then is a real change of the
    metadata, not an effect of the version number.
    """
    assert previous.version is not None
    rows, schema = release.read_parquet_files([parquet], str(stage))
    trial = json.loads(json.dumps(write_release(previous.version, previous.changelog)))
    metadata = release.manifest_changes(previous.manifest, trial)
    new = release.Release("this build", rows, schema, trial)
    diff = release.diff_releases(previous, new, metadata=metadata)
    decision = release.decide_version(previous.version, diff.level, requested, previous.version)
    if decision.note:
        say(f"note: {decision.note}")
    version = decision.version
    diff.new["version"] = version
    if version == previous.version:
        say(f"no change since {previous.label}: version stays {version}")
        return version, trial, diff
    section = release.changelog_section(diff, version, previous.version)
    changelog = release.render_changelog(section, previous.changelog)
    manifest = write_release(version, changelog)
    say(f"{diff.level or 'no'} change since {previous.label}: version {version}")
    return version, manifest, diff
