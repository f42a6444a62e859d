"""The files that describe the table: the dataset card, Croissant metadata, the published
validation report, the changelog and the manifest.

What they say is gathered once (:class:`Facts`) from the stages before; :func:`write` then
writes every file whose bytes depend on the release's :class:`Stamp` (its version, changelog,
the release it follows, when and by what it was made), so the release stage can write them
once with the previous release's own stamp (whatever then differs from it is a real change,
and a build with none is that release again, byte for byte) and once with the new one.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from curate.dataset.assemble import Assembled
from curate.dataset.card import UNNAMED, length_stats, license_url, render_card
from curate.dataset.croissant import Part, croissant_metadata, write_croissant
from curate.dataset.manifest import (
    CARD,
    CHANGELOG,
    CROISSANT,
    FINGERPRINT_VERSION,
    MANIFEST,
    REPORT_JSON,
    STAGING_MARKER,
    file_inventory,
)
from curate.dataset.table import TEXT, Contract
from curate.dedupe.plan import Plan
from curate.io import display
from curate.settings import Settings
from curate.version import version as toolkit_version
from validation import residue
from validation.corpus import FileResult
from validation.findings import Report, parse_place
from validation.render import markdown_code, markdown_text, render_json


@dataclass(frozen=True)
class Stamp:
    """What a release says of itself rather than of its data."""

    version: str
    changelog: str | None = None
    follows: str | None = None  # the version of the release it follows
    created: str | None = None  # SOURCE_DATE_EPOCH as a date, if it was set
    toolkit: str | None = None  # the curate that made it (default: this one)

    @classmethod
    def of(cls, manifest: dict[str, Any], changelog: str | None) -> Stamp:
        """The stamp of a previous release, as its manifest records it."""
        made_by = manifest.get("toolkit")
        return cls(
            str(manifest["version"]),
            changelog,
            manifest.get("previous_version"),
            manifest.get("created"),
            made_by.get("curate") if isinstance(made_by, dict) else None,
        )


@dataclass(frozen=True)
class Facts:
    """What the descriptive files say, whatever the version."""

    settings: Settings
    template: Path
    table: Assembled
    plan: Plan
    records_in: int
    dropped: list[dict[str, Any]]
    sources: list[dict[str, Any]]
    report_json: str  # the published validation report
    spool: str  # the scan's working folder in the stage, which no file list names
    contract: Contract = TEXT  # the table's columns


def facts(
    settings: Settings,
    template: Path,
    table: Assembled,
    plan: Plan,
    files: list[FileResult],
    names: list[str],
    report: Report,
    dropped: list[dict[str, Any]],
    *,
    spool: str,
    contract: Contract = TEXT,
) -> Facts:
    local = {f.path: n for f, n in zip(files, names, strict=True)}
    published = published_report(report, local)
    published.dropped = dropped
    published.kept_macros = [
        {"macro": name, "rows": n}
        for name, n in sorted(table.kept_macros.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return Facts(
        settings, template, table, plan, report.records, dropped, source_entries(files, names),
        render_json(published), spool, contract,
    )  # fmt: skip


def source_entries(files: list[FileResult], names: list[str]) -> list[dict[str, Any]]:
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


def published_report(report: Report, names: dict[str, str]) -> Report:
    """The report as published: files by their name in the table, never by a local path.

    ``names`` maps each local path to its path relative to the source folder; a message that
    quotes a local path (a duplicate's "same abstract as PATH:LINE") is rewritten the same way.
    """

    def name(loc: str | None) -> str | None:
        if loc is None:
            return None
        found = parse_place(loc)
        if found is None:
            return names.get(loc, loc)
        path, line, rest = found
        return f"{names.get(path, display(path))}:{line}{rest}"

    findings = []
    for f in report.findings:
        message = f.message
        if f.related:
            message = message.replace(f.related, name(f.related) or "")
        file = names.get(f.file, display(f.file))
        findings.append(replace(f, file=file, related=name(f.related), message=message))
    files = [names.get(p, display(p)) for p in report.files]
    return Report(findings=findings, files=files, records=report.records, measures=report.measures)


def created() -> str | None:
    """Build time only when SOURCE_DATE_EPOCH asks for it: wall-clock time breaks determinism."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return None
    return datetime.fromtimestamp(int(epoch), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def venues_phrase(pairs: set[tuple[str, int | None]], listed: int = 6) -> str:
    """The venues and years of the records, for the card's first sentence: each pair while
    there are at most ``listed`` (``ICML 2024, NeurIPS 2018``), else the venues and the span of
    years (``AAAI, ACL, … and NeurIPS, 2005–2024``), so that 10 venues over 20 years are still
    one sentence; more than 10 venues are counted past the first eight."""
    if len(pairs) <= listed:
        return ", ".join(sorted(f"{v} {y}" if y is not None else v for v, y in pairs))
    names = sorted({v for v, _ in pairs})
    if len(names) > 10:
        shown = f"{len(names)} venues ({', '.join(names[:8])} and {len(names) - 8} more)"
    else:
        shown = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    years = sorted({y for _, y in pairs if y is not None})
    if not years:
        return shown
    if len(years) == 1:
        return f"{shown}, {years[0]}"
    if years[-1] - years[0] + 1 == len(years):
        return f"{shown}, {years[0]}–{years[-1]}"
    return f"{shown}, {len(years)} years from {years[0]} to {years[-1]}"


def croissant_license(s: Settings) -> str | None:
    """The licence as Croissant has it: its URL (SPDX's page, or ``license_link``), else the
    Hub's name for it, else ``license_name``; nothing for a licence not stated."""
    url = license_url(s)
    if url is not None:
        return url
    if s.license == "unknown":
        return None
    return s.license_name if s.license == "other" else s.license


def _card_source(s: dict[str, Any]) -> dict[str, Any]:
    """A source as the card's table shows it: the name in a code span of a cell, the header
    as text in one, so a file named `a|b\n# y.txt` ends no cell, row or table. A source
    without a header (any file but a text drop) has none to show: a dash, in a project's own
    card template too, never Python's "None"."""
    keys = ("header", "header_language")
    shown = {k: "—" if s[k] is None else markdown_text(s[k]) for k in keys}
    return {**s, "name": markdown_code(s["name"]), **shown}


def _stats(f: Facts) -> dict[str, Any]:
    table, plan = f.table, f.plan
    word_counts = np.concatenate(table.word_counts) if table.word_counts else np.empty(0)
    return {
        "rows": table.rows,
        "records_in": f.records_in,
        "exact_merged": plan.exact_merged,
        "near_merged": plan.near_merged,
        "fingerprint": table.fingerprint,
        "venues": venues_phrase(table.venues),
        "sources": [_card_source(s) for s in f.sources],
        "headers": any(s["header"] is not None for s in f.sources),
        "length": length_stats(word_counts.tolist()),
        "markup": {k: table.markup[k] for k in residue.KINDS},
        "has_math": table.has_math,
        "flagged": table.flagged,
        "flags": dict(sorted(table.flags.items())),
        "dropped": len(f.dropped),
        "dropped_by_reason": dict(
            sorted(Counter(c for d in f.dropped for c in d["reasons"]).items())
        ),
        "math_kept": len(table.math_kept),
    }


def write(stage: Path, f: Facts, stamp: Stamp) -> dict[str, Any]:
    """Every file whose bytes depend on the stamp; returns the manifest to write."""
    s = f.settings
    version, changelog = stamp.version, stamp.changelog
    files = f.table.files
    names = list(dict.fromkeys(d.split for d in files))
    splits = None
    if names != ["train"]:  # held-out splits: each with its own size and rows
        splits = [(n, sum(d.nbytes for d in files if d.split == n),
                   sum(d.rows for d in files if d.split == n)) for n in names]  # fmt: skip
    shas = {d.path: d.sha256 for d in files}  # the writers' own summaries: no file read again
    stats = {
        **_stats(f),
        "version": version,
        "changelog": changelog is not None,
        "previous_version": stamp.follows,
    }
    card = render_card(
        s,
        template=f.template,
        languages=sorted(f.table.languages),
        stats=stats,
        num_bytes=f.table.num_bytes,
        download_size=sum(d.size for d in files),
        splits=splits,
        contract=f.contract,
    )
    (stage / CARD).write_text(card, encoding="utf-8")
    write_croissant(
        stage / CROISSANT,
        croissant_metadata(
            name=s.dataset_name or UNNAMED,
            description=s.description
            or f"{s.dataset_name or UNNAMED}: cleaned, deduplicated text records.",
            version=version,
            license=croissant_license(s),
            url=s.homepage
            or (f"https://huggingface.co/datasets/{s.repo_id}" if s.repo_id else None),
            citation=s.citation,
            creators=list(s.creators),
            parquet_relpath=files[0].path,
            parquet_sha256=shas[files[0].path],
            num_rows=f.table.rows,
            date_published=stamp.created,
            parts=[Part(d.path, shas[d.path], d.split, d.rows) for d in files],
            schema=f.contract.schema,
            descriptions=f.contract.descriptions,
            languages=sorted(f.table.languages),
            noun=s.noun[0],
        ),
    )
    (stage / REPORT_JSON).write_text(f.report_json, encoding="utf-8")
    changelog_path = stage / CHANGELOG
    if changelog is None:
        changelog_path.unlink(missing_ok=True)
    else:
        changelog_path.write_text(changelog, encoding="utf-8")
    return _manifest(stage, f, stamp)


def _manifest(stage: Path, f: Facts, stamp: Stamp) -> dict[str, Any]:
    s = f.settings
    manifest = {
        "name": s.dataset_name,
        "repo_id": s.repo_id,
        "version": stamp.version,
        "fingerprint": f.table.fingerprint,
        "fingerprint_version": FINGERPRINT_VERSION,
        "rows": f.table.rows,
        "records_in": f.records_in,
        "rows_dropped": len(f.dropped),
        "rows_flagged": f.table.flagged,
        "duplicates_merged": {"exact": f.plan.exact_merged, "near": f.plan.near_merged},
        "schema": [{"name": c.name, "type": str(c.type)} for c in f.contract.schema],
        "files": file_inventory(
            stage,
            exclude={MANIFEST, STAGING_MARKER},
            skip=f.spool,
            known={d.path: {"sha256": d.sha256, "size": d.size} for d in f.table.files},
        ),
        "sources": f.sources,
        "toolkit": {"curate": stamp.toolkit or toolkit_version()},
        "settings": s.as_dict(),
    }
    if stamp.follows:
        manifest["previous_version"] = stamp.follows
    if stamp.created:
        manifest["created"] = stamp.created
    return manifest
