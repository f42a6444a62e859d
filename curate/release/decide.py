"""The new release's version, decided against the previous release, and its changelog."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from curate.dataset.describe import Stamp, created
from curate.dataset.manifest import REPORT_JSON
from curate.release.changelog import changelog_section, render_changelog
from curate.release.diff import Diff, diff_releases, manifest_changes, moved_line
from curate.release.load import Release, read_parquet_files, read_positions
from curate.release.versions import decide_version

# Writes every file of the release whose bytes depend on its stamp; returns the manifest.
WriteRelease = Callable[[Stamp], dict[str, Any]]


def against_previous(
    previous: Release,
    stage: Path,
    data: list[Path],
    write_release: WriteRelease,
    *,
    requested: str | None,
    say: Callable[[str], None],
    positions: Path | None = None,
) -> tuple[str, dict[str, Any], Diff]:
    """Compare the staged build (its ``data`` files) with ``previous``, decide the version and
    write CHANGELOG.md; returns the version, the manifest and the comparison.

    The build is first written with the previous release's own stamp (its version, changelog,
    predecessor, date and toolkit): whatever still differs from the previous manifest then is
    a real change of the data, the schema, the settings or the sources, not an effect of the
    release naming itself; with no change, the build is the previous release again, byte for
    byte, and publishing it does nothing.

    Where the sources' records are (their lines and rows) is no part of a release: a build
    whose only differences are the bytes of its sources and the places its validation report
    names (sources reordered, a field the mapping drops edited) is the previous release again,
    its report and its sources' hashes included; ``positions`` (this build's, if written)
    count the records that moved.
    """
    assert previous.version is not None and previous.manifest is not None
    rows, schema = read_parquet_files(data, str(stage))
    own = Stamp.of(previous.manifest, previous.changelog)
    trial = json.loads(json.dumps(write_release(own)))
    metadata = manifest_changes(previous.manifest, trial)
    placed = read_positions(positions) if positions is not None else None
    new = Release("this build", rows, schema, trial, positions=placed)
    diff = diff_releases(previous, new, metadata=[m for m in metadata if not _placing(m)])
    restored = None
    if diff.level is None and len(diff.metadata) < len(metadata):
        restored = _as_previous(previous, stage, trial)
    if restored is not None:
        trial = restored
    else:  # a release anyway (or the previous one's files are not at hand): say it all
        diff.metadata = metadata
    decision = decide_version(previous.version, diff.level, requested, previous.version)
    if decision.note:
        say(f"note: {decision.note}")
    version = decision.version
    diff.new["version"] = version
    if version == previous.version:
        moved = moved_line(diff)
        say(f"no change since {previous.label}: version stays {version}"
            + (f"; {moved}" if moved else ""))  # fmt: skip
        return version, trial, diff
    section = changelog_section(diff, version, previous.version)
    changelog = render_changelog(section, previous.changelog)
    manifest = write_release(Stamp(version, changelog, previous.version, created()))
    say(f"{diff.level or 'no'} change since {previous.label}: version {version}")
    return version, manifest, diff


def _placing(change: str) -> bool:
    """Whether a metadata change is one of the places of the records alone: a source's bytes
    (the rows are compared on their own), or the validation report, which names lines."""
    return change == f"file {REPORT_JSON} changed" or (
        change.startswith("source ") and change.endswith(" changed")
    )


def _as_previous(previous: Release, stage: Path, trial: dict[str, Any]) -> dict[str, Any] | None:
    """The staged build made the previous release again: its validation report and its
    sources' entries restored, byte for byte; None if its report is not at hand or another
    file still differs."""
    assert previous.manifest is not None
    if previous.report is None:
        return None
    restored = {**trial, "sources": previous.manifest.get("sources")}
    restored["files"] = {**trial["files"], REPORT_JSON: previous.manifest["files"].get(REPORT_JSON)}
    same = {k: v for k, v in previous.manifest.items() if k != "local_files"}
    if restored != same:
        return None
    (stage / REPORT_JSON).write_bytes(previous.report)
    return restored
