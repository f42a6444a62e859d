"""``curate build``: validate, clean, deduplicate and write a deterministic dataset folder.

The build is a short list of named stages, each a function of what the ones before it made:

1. ``_request``: every usage error, before any work (where the build goes, the version, the
   previous release, the card template);
2. claim the output folder (:func:`curate.release.output.claim`): a staging folder that
   replaces it only if everything below succeeds;
3. ``_validate``: discover and scan every file once on the engine (parse, check, and make each
   record's row into a spool), then the corpus checks; errors refuse the build;
4. ``_decide``: the near-duplicate pairs to merge and each record's row policy, read from the
   report;
5. :func:`curate.dedupe.plan.plan`: which records survive, and what each merged into;
6. ``_assemble``: the survivors' rows with their provenance, sorted by id and handed to the
   table writer (tasks on the engine);
7. ``_describe``: card, Croissant, the published report, changelog and manifest, with the
   version decided against the previous release;
8. ``_write_page``: the HTML report, kept beside the release.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from curate import engine as engines
from curate import release, storage
from curate.dataset import describe
from curate.dataset.assemble import Assembled, assemble
from curate.dataset.card import template_path as card_template_path
from curate.dataset.layout import Layout
from curate.dataset.manifest import MANIFEST, POSITIONS, REJECTED, REPORT_HTML, write_json
from curate.dataset.table import Contract, TableContractBroken, contract_for
from curate.dedupe.plan import Plan, plan
from curate.dedupe.policy import NearPair, RowPolicy, decide_rows, near_pairs
from curate.ingest.discover import refuse_missing
from curate.io import sha256_file
from curate.pipeline.validate import ValidationRun, validate_paths
from curate.release import bucket, output
from curate.report.html import Place, RecordTexts, place_of, render_report
from curate.scan.kept import KeptScans
from curate.scan.run import Rows, stderr_warning
from curate.settings import Settings
from curate.transform.rows import Cleaning, raw_texts
from validation.corpus import RecordIndex
from validation.findings import Report, Severity, count
from validation.runner import counts

Progress = Callable[[str], None]


class BuildRefused(Exception):
    """The sources failed validation (or the near-duplicate policy): nothing was written."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class BuildResult:
    out: Path | storage.Uri
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


@dataclass(frozen=True)
class _Request:
    target: Path
    template: Path
    previous: release.Release | None
    held: dict[str, Any] | None = None  # the manifest of the release --out holds
    mirror: bucket.Mirror | None = None  # --out in storage: the local folder standing for it


@dataclass(frozen=True)
class _Decision:
    pairs: list[NearPair]
    policy: RowPolicy
    dropped: list[dict[str, Any]]


def build(
    paths: list[str | Path],
    out: str | Path,
    settings: Settings,
    *,
    version: str | None = None,
    progress: Progress | None = None,
    template: str | Path | None = None,
    previous: release.Release | str | Path | None = None,
    jobs: int | None = None,
    engine: str | engines.Engine = engines.DEFAULT,
    cache_dir: str | Path | None = None,
    verbose: bool = False,
    on_file: Callable[[str, int], None] | None = None,
    force: bool = False,
    warn: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build the dataset folder ``out`` from the drops in ``paths``.

    With ``previous`` (a :class:`~curate.release.Release`, a build folder or ``hub:ORG/NAME``)
    the version is the previous one bumped by what changed, and ``CHANGELOG.md`` says what did;
    ``version`` then overrides the bump but may not go backwards. Without it the version is
    ``version`` or the configured one. ``on_file(path, records)`` is called as each file is
    checked (the CLI's progress bar), ``warn`` with a warning about the run (default: a line on
    stderr); ``engine`` is where the tasks run: a registered engine's
    name (with ``jobs`` workers), or an engine, which the caller then closes.

    ``out`` must be new, empty or a previous build (:func:`curate.release.output.output_target`);
    ``force`` moves anything else there aside, kept, instead of refusing.
    """
    say = progress or (lambda _msg: None)
    request = _request(paths, out, settings, version, previous, template, say, force)
    checked = on_file or (
        (lambda p, n: say(f"checked {p} ({count(n, 'record')})")) if verbose else None
    )
    timings: dict[str, float] = {}
    runner = engines.make(engine, jobs) if isinstance(engine, str) else engine
    try:
        with (
            _kept(cache_dir, settings, warn) as kept,
            _claim(request, force, say, runner.close) as stage,
        ):
            # The build's working folder is inside the stage: a failed build removes it with
            # it. With a cache, the scan's spools are in the cache folder instead, by content.
            spool = Path(tempfile.mkdtemp(prefix=".rows-", dir=stage))
            started = time.perf_counter()
            rows = Rows(spool, Cleaning(settings.math, settings.row_policy), kept)
            run = _validate(paths, settings, runner, rows, cache_dir, checked, say, warn)
            contract = _contract(settings, run)
            decision = _decide(run, settings, say)
            validated = time.perf_counter()
            groups = _plan(run, decision, settings, request.previous, say)
            timings["validate (wall)"] = validated - started
            timings["dedupe plan"] = time.perf_counter() - validated
            table = _assemble(
                run, groups, decision, settings, runner, stage, say, contract, spool / POSITIONS
            )
            timings.update(table.timings)
            report = _with_build_findings(run.report, table, settings)
            described = time.perf_counter()
            version, manifest, diff = _describe(
                stage, request, settings, run, groups, decision, table, report, spool.name,
                version, say, _published(contract, settings),
            )  # fmt: skip
            local = _local_file(stage, spool / POSITIONS)
            if settings.rejected:
                local |= _write_rejected(stage, run, decision, settings)
            _write_page(stage, manifest, run, table, spool, local)
        timings["card, croissant, manifest (wall)"] = time.perf_counter() - described
    finally:
        if isinstance(engine, str):
            runner.close()
    say(f"wrote {out}")
    return BuildResult(
        storage.Uri(str(out)) if storage.is_uri(out) else Path(out), version,
        run.report.records, table.rows, groups.exact_merged, groups.near_merged,
        table.fingerprint, report, manifest, diff,
        request.previous.version if request.previous is not None else None,
        {**run.report.timings, **timings},
    )  # fmt: skip


def _request(
    paths: list[str | Path],
    out: str | Path,
    settings: Settings,
    version: str | None,
    previous: release.Release | str | Path | None,
    template: str | Path | None,
    say: Progress,
    force: bool = False,
) -> _Request:
    """Every usage error, before any work: the sources, where the build goes, the version, the
    template."""
    refuse_missing(paths)
    mirror = None
    if storage.is_uri(out):  # the checks below, and the build, on a local copy of the prefix
        mirror = bucket.mirror(str(out), [str(p) for p in paths], force=force, say=say)
        out = mirror.folder
    with bucket.standing_in(mirror, keep=True):
        return _checked(paths, out, settings, version, previous, template, say, mirror)


def _checked(
    paths: list[str | Path],
    out: str | Path,
    settings: Settings,
    version: str | None,
    previous: release.Release | str | Path | None,
    template: str | Path | None,
    say: Progress,
    mirror: bucket.Mirror | None,
) -> _Request:
    target = output.output_target(out, [Path(p) for p in paths if not storage.is_uri(p)])
    out = mirror.uri.uri if mirror is not None else out  # as messages and labels name it
    if version is not None:
        release.parse_version(version)
    held = output.release_in(target)
    if previous is None and held is not None:
        previous = _release_in_out(target, out, held["version"], say)
    elif previous is not None and not isinstance(previous, release.Release):
        previous = release.load_release(previous, say=say)
    if held is not None and previous is not None and previous.version != held["version"]:
        say(f"note: --out {out} holds v{held['version']}: this build follows {previous.label} "
            "instead, and its CHANGELOG.md replaces the one there")  # fmt: skip
    if previous is not None and previous.version is None:
        raise release.ReleaseUsageError(
            f"{previous.label}: not a release (no manifest.json with a version), "
            "so there is no version to bump; use a build folder or hub:ORG/NAME"
        )
    if previous is not None and version is not None:
        release.decide_version(previous.version, None, version, previous.version)
    return _Request(target, card_template_path(settings, template), previous, held, mirror)


@contextmanager
def _claim(
    request: _Request, force: bool, say: Progress, on_abort: Callable[[], None]
) -> Iterator[Path]:
    """The output folder claimed for the build (:func:`curate.release.output.claim`); for
    ``--out`` in storage, the local folder standing for the prefix, then uploaded in its place
    (:mod:`curate.release.bucket`)."""
    with bucket.standing_in(request.mirror):
        with output.claim(request.target, force=force, say=say, on_abort=on_abort) as stage:
            yield stage
        if request.mirror is not None:
            bucket.publish(request.mirror, say)


def _release_in_out(target: Path, out: str | Path, held: str, say: Progress) -> release.Release:
    """The release ``--out`` holds, taken as the previous one: a build over it continues its
    versions and changelog, never writes a lower version over it or drops its changelog."""
    try:
        found = release.load_release(target, say=say)
    except release.ReleaseError as exc:
        raise release.ReleaseUsageError(
            f"{exc}; --out {out} holds release v{held}, which a build takes as the previous "
            "one: restore it, remove it, or pass --previous REF and another --out"
        ) from None
    found.label = str(out)
    say(f"--out {out} holds v{held}: taken as the previous release (--previous REF to "
        "compare with another)")  # fmt: skip
    return found


@contextmanager
def _kept(
    cache_dir: str | Path | None, settings: Settings, warn: Callable[[str], None] | None
) -> Iterator[KeptScans | None]:
    """The scans kept in the cache folder (none without a cache: ``--no-cache``), so that a
    build interrupted or refused part-way scans only the files it had not scanned; pruned to
    this build's if the block succeeds."""
    if cache_dir is None or storage.is_uri(cache_dir):
        yield None
        return
    cleaning = {"math": settings.math, "row_policy": dict(settings.row_policy)}
    kept = KeptScans(cache_dir, settings.checks, cleaning, warn or stderr_warning)
    try:
        yield kept
        kept.prune()
    finally:
        kept.close()


def _validate(
    paths: list[str | Path],
    settings: Settings,
    runner: engines.Engine,
    rows: Rows,
    cache_dir: str | Path | None,
    checked: Callable[[str, int], None] | None,
    say: Progress,
    warn: Callable[[str], None] | None,
) -> ValidationRun:
    """Every file scanned once (its checks, and its records' rows into a spool: ``rows``),
    unless its scan is kept, then the corpus checks; refused on any error."""
    run = validate_paths(
        paths, settings.checks, engine=runner, cache_dir=cache_dir, progress=checked,
        rows=rows, split_bytes=settings.split_bytes,
        **({"warn": warn} if warn is not None else {}),
    )  # fmt: skip
    report = run.report
    reused = f" (the scans of {count(run.reused, 'file')} reused)" if run.reused else ""
    say(f"validated {count(len(run.files), 'file')}, {count(report.records, 'record')}{reused}")
    if report.errors:
        raise BuildRefused(f"validation found {count(len(report.errors), 'error')}", report)
    return run


def _contract(settings: Settings, run: ValidationRun) -> Contract:
    """The table's columns: the mapping's extra ones, and a row and source id in `sources`
    once a source is not a text drop."""
    formats = run.formats
    return contract_for(
        settings.checks,
        any(f != "text" for f in formats),
        headers=any(f == "text" for f in formats),
    )


def _decide(run: ValidationRun, settings: Settings, say: Progress) -> _Decision:
    """The near-duplicate pairs to merge and each record's row policy, from the report."""
    report = run.report
    found = [f for f in report if f.code == "near-duplicate"]
    if settings.near_duplicates == "fail" and found:
        raise BuildRefused(
            f"{len(found)} near-duplicates and near_duplicates = 'fail'",
            Report(findings=found, files=report.files, records=report.records),
        )
    pairs = near_pairs(report, RecordIndex(run.files))
    policy, dropped = decide_rows(report, run.files, run.names, settings.row_policy)
    if policy.dropped:
        pairs = policy.keeps(pairs, [i for f in run.files for i in f.ids])
        say(f"row policy: {count(len(dropped), 'record')} dropped")
    return _Decision(pairs, policy, dropped)


def _plan(
    run: ValidationRun,
    decision: _Decision,
    settings: Settings,
    previous: release.Release | None,
    say: Progress,
) -> Plan:
    """Each record's survivor: exact and (with ``merge``) near duplicates grouped, the
    survivor of each group chosen by :func:`survivor_preference`."""
    ids = [i for f in run.files for i in f.ids]
    prefer = survivor_preference(
        settings.keep, run, previous, decision.pairs, f"{settings.text_column}_raw"
    )
    merge_near = settings.near_duplicates == "merge"
    groups = plan(ids, decision.pairs, merge_near=merge_near, prefer=prefer)
    say(f"deduplicated: {groups.exact_merged} exact and {groups.near_merged} near "
        "duplicates merged")  # fmt: skip
    return groups


def survivor_preference(
    keep: str,
    run: ValidationRun,
    previous: release.Release | None,
    pairs: list[NearPair],
    raw_column: str = "abstract_raw",
) -> np.ndarray:
    """How much each record is preferred as its duplicate group's survivor (higher first), so
    that the survivor never depends on where the records are in their files.

    Only the records of a group of more than one are ranked (an id seen twice, a near pair);
    for them, in turn: ``keep``'s own preference (``longest``: the longest raw text;
    ``earliest-release``: the copy the previous release published, then one of a file it was
    built from), then the copy the previous release published (the same id, raw text and
    file; the same id and raw text; the same id), then their
    content: the smaller id, the smaller raw text, the file's name, the source's own id. Two
    records equal in all of that give the same row. ``raw_column`` is the previous release's
    raw text column (``text_column``_raw).
    """
    counts: dict[str, int] = {}
    ids = [i for f in run.files for i in f.ids]
    for rid in ids:
        counts[rid] = counts.get(rid, 0) + 1
    grouped = {g for g, rid in enumerate(ids) if counts[rid] > 1}
    grouped |= {g for a, b, _ in pairs for g in (a, b)}
    prefer = np.zeros(len(ids))
    if not grouped:
        return prefer
    index = RecordIndex(run.files)
    wanted: dict[int, list[int]] = {}
    for g in sorted(grouped):
        fi, ri = index.where(g)
        wanted.setdefault(fi, []).append(ri)
    raw: dict[int, str] = {}
    for fi, records in wanted.items():
        spool = run.spools[fi]
        texts = raw_texts(spool, records) if spool is not None else [""] * len(records)
        base = int(index.offsets[fi])
        raw.update((base + ri, text) for ri, text in zip(records, texts, strict=True))
    # Only the ids of these groups, and the two columns asked about, become Python values.
    asked = sorted({ids[g] for g in grouped})
    rows = previous.rows_of(asked, (raw_column, "sources")) if previous is not None else {}
    old_files = (
        {s.get("name") for s in (previous.manifest or {}).get("sources", [])}
        if (previous is not None)
        else set()
    )

    def key(g: int) -> tuple[Any, ...]:
        fi, ri = index.where(g)
        f, rid, text = run.files[fi], ids[g], raw[g]
        own = f.source_ids[ri] if f.source_ids is not None else None
        published = rows.get(rid) or {}
        same = published.get(raw_column) == text
        kept = (published.get("sources") or [{}])[0].get("file") == run.names[fi]
        stable = (not (same and kept), not same, not published)
        if keep == "longest":
            policy: tuple[Any, ...] = (-len(text),)
        elif keep == "earliest-release":
            policy = (*stable, run.names[fi] not in old_files)
        else:
            policy = ()
        return (*policy, *stable, rid, text, run.names[fi], own or "")

    ranked = sorted(grouped, key=key)
    prefer[ranked] = np.arange(len(ranked), 0, -1, dtype=np.float64)
    return prefer


def _assemble(
    run: ValidationRun,
    groups: Plan,
    decision: _Decision,
    settings: Settings,
    runner: engines.Engine,
    stage: Path,
    say: Progress,
    contract: Contract,
    positions: Path,
) -> Assembled:
    """The survivors' rows, with provenance and flags, in id order into the table writer, and
    where their sources are into ``positions``."""
    try:
        return assemble(
            run.files, run.names, run.spools, groups, decision.policy, settings.checks,
            settings.math,
            Layout.of(
                stage, shard_size=settings.shard_size, splits=settings.splits or None,
                schema=_published(contract, settings).schema,
            ),
            scratch=stage, engine=runner, say=say, contract=contract, positions=positions,
            published=_published(contract, settings).schema.names,
        )  # fmt: skip
    except TableContractBroken as exc:
        raise BuildRefused(str(exc), run.report) from None


def _with_build_findings(report: Report, table: Assembled, settings: Settings) -> Report:
    """The report with the build's own findings (math kept as TeX), counted like the checks'
    (the card's ``math_kept`` still counts every span kept); refused if one is an error."""
    shown = [f for f in table.math_kept if counts(f, settings.checks)]
    report.extend(shown)
    report.sort()
    kept_errors = [f for f in shown if f.severity is Severity.ERROR]
    if kept_errors:
        raise BuildRefused(f"{len(kept_errors)} math spans kept as TeX", report)
    return report


def _describe(
    stage: Path,
    request: _Request,
    settings: Settings,
    run: ValidationRun,
    groups: Plan,
    decision: _Decision,
    table: Assembled,
    report: Report,
    spool: str,
    version: str | None,
    say: Progress,
    contract: Contract,
) -> tuple[str, dict[str, Any], release.Diff | None]:
    """Card, Croissant, published report, changelog and manifest, at the version decided
    against the previous release (or the requested or configured one)."""
    previous = request.previous
    facts = describe.facts(
        settings, request.template, table, groups, run.files, run.names, report,
        decision.dropped, spool=spool, contract=contract,
    )  # fmt: skip

    def write(stamp: describe.Stamp) -> dict[str, Any]:
        return describe.write(stage, facts, stamp)

    if previous is None:
        chosen = release.decide_version(None, None, version, settings.version).version
        manifest, diff = write(describe.Stamp(chosen, created=describe.created())), None
    else:
        data = [stage / f.path for f in table.files]
        chosen, manifest, diff = release.against_previous(
            previous, stage, data, write, requested=version, say=say,
            positions=stage / spool / POSITIONS,
        )  # fmt: skip
    _over_held(request, chosen, manifest)
    write_json(stage / MANIFEST, manifest)
    return chosen, manifest, diff


def _local_file(stage: Path, made: Path) -> dict[str, dict[str, Any]]:
    """A file the build made in its working folder, moved beside the release (local: listed
    under the manifest's local_files, never uploaded); returns its local_files entry."""
    if not made.is_file():
        return {}
    made.rename(stage / made.name)
    path = stage / made.name
    return {made.name: {"sha256": sha256_file(path), "size": path.stat().st_size}}


def _over_held(request: _Request, chosen: str, manifest: dict[str, Any]) -> None:
    """Refuse to replace the release --out holds with a lower version, or with other content
    under its version (two releases of one version): the build followed another release."""
    held = request.held
    if held is None:
        return
    version = held["version"]
    what = None
    if release.parse_version(version) > release.parse_version(chosen):
        what = f"holds v{version}, newer than this build's v{chosen}"
    elif version == chosen and held.get("fingerprint") != manifest.get("fingerprint"):
        what = f"holds v{version} with other content"
    if what:
        raise release.ReleaseUsageError(
            f"--out {request.target} {what}: a build never writes over a release that way; "
            f"pass --previous {request.target} to follow it, or choose another --out"
        )


def _published(contract: Contract, settings: Settings) -> Contract:
    """The table as its readers see it: the text columns by ``text_column``, the
    descriptions by ``noun``."""
    return contract.named(settings.text_column, settings.noun[0])


def _write_rejected(
    stage: Path, run: ValidationRun, decision: _Decision, settings: Settings
) -> dict[str, dict[str, Any]]:
    """rejected.parquet: every record the row policies dropped, with its reasons and its raw
    text (from the spool), in the order of the report's list; returns its local_files entry."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = _spooled_texts(run)({place_of(d) for d in decision.dropped})
    table = pa.table(
        {
            "id": [d["id"] for d in decision.dropped],
            "file": [d["file"] for d in decision.dropped],
            "line": pa.array([d["line"] for d in decision.dropped], pa.int32()),
            "reasons": [d["reasons"] for d in decision.dropped],
            f"{settings.text_column}_raw": [texts.get(place_of(d)) for d in decision.dropped],
        }
    )
    path = stage / REJECTED
    pq.write_table(table, path, compression="zstd")
    return {REJECTED: {"sha256": sha256_file(path), "size": path.stat().st_size}}


def _write_page(
    stage: Path,
    manifest: dict[str, Any],
    run: ValidationRun,
    table: Assembled,
    spool: Path,
    local: dict[str, dict[str, Any]],
) -> None:
    """The page for people. It is not part of the release: it is rendered from the manifest,
    is not in its ``files``, and publish does not upload it. Its hash goes under
    ``local_files`` (beside ``local``'s), so the next build recognises the page as ours and may
    replace it."""
    changed = np.concatenate(table.changed) if table.changed else np.empty(0, np.int64)
    page = render_report(stage, record_texts=_spooled_texts(run), changed=changed)
    data = page.encode("utf-8")
    shutil.rmtree(spool)  # before the swap: the spool is not part of the build
    manifest["local_files"] = {
        REPORT_HTML: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)},
        **local,
    }
    write_json(stage / MANIFEST, manifest)
    (stage / REPORT_HTML).write_bytes(data)


def _spooled_texts(run: ValidationRun) -> RecordTexts:
    """The raw texts of records by their place, read from the spool of their rows."""
    index = {name: i for i, name in enumerate(run.names)}

    def texts(wanted: set[Place]) -> dict[Place, str]:
        out: dict[Place, str] = {}
        by_file: dict[int, list[Place]] = {}
        for place in wanted:
            if place[0] in index:
                by_file.setdefault(index[place[0]], []).append(place)
        for fi, places in sorted(by_file.items()):
            f = run.files[fi]
            at = {place: f.record_at(place[1], place[2]) for place in places}
            found = [place for place, ri in at.items() if ri is not None]
            spool = run.spools[fi]
            if not found or spool is None:
                continue
            out.update(zip(found, raw_texts(spool, [at[k] for k in found]), strict=True))
        return out

    return texts
