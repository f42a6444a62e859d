"""The new release's version, decided against the previous release, and its changelog."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from curate.dataset.describe import Stamp, created
from curate.release.changelog import changelog_section, render_changelog
from curate.release.diff import Diff, diff_releases, manifest_changes
from curate.release.load import Release, read_parquet_files
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
) -> tuple[str, dict[str, Any], Diff]:
    """Compare the staged build (its ``data`` files) with ``previous``, decide the version and
    write CHANGELOG.md; returns the version, the manifest and the comparison.

    The build is first written with the previous release's own stamp (its version, changelog,
    predecessor, date and toolkit): whatever still differs from the previous manifest then is
    a real change of the data, the schema, the settings or the sources, not an effect of the
    release naming itself; with no change, the build is the previous release again, byte for
    byte, and publishing it does nothing.
    """
    assert previous.version is not None and previous.manifest is not None
    rows, schema, arrow = read_parquet_files(data, str(stage))
    own = Stamp.of(previous.manifest, previous.changelog)
    trial = json.loads(json.dumps(write_release(own)))
    metadata = manifest_changes(previous.manifest, trial)
    new = Release("this build", rows, schema, trial, arrow=arrow)
    diff = diff_releases(previous, new, metadata=metadata)
    decision = decide_version(previous.version, diff.level, requested, previous.version)
    if decision.note:
        say(f"note: {decision.note}")
    version = decision.version
    diff.new["version"] = version
    if version == previous.version:
        say(f"no change since {previous.label}: version stays {version}")
        return version, trial, diff
    section = changelog_section(diff, version, previous.version)
    changelog = render_changelog(section, previous.changelog)
    manifest = write_release(Stamp(version, changelog, previous.version, created()))
    say(f"{diff.level or 'no'} change since {previous.label}: version {version}")
    return version, manifest, diff
