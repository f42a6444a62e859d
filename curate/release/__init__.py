"""Releases: where a build may write, reading a previous release, comparing two, deciding the
next version, writing the changelog, and publishing to the Hub.

The names below are the stage's API, as the pipeline and the command line use it; each lives in
the module named beside it.
"""

from __future__ import annotations

from curate.dataset.manifest import CHANGELOG
from curate.errors import NoPreviousRelease, ReleaseError, ReleaseUsageError
from curate.release.changelog import changelog_section, render_changelog
from curate.release.decide import against_previous
from curate.release.diff import (
    Diff,
    RowChange,
    counts_line,
    diff_releases,
    manifest_changes,
    render_json,
    render_text,
)
from curate.release.load import (
    HUB_PREFIX,
    Release,
    latest_tag,
    load_release,
    parse_hub_ref,
    read_folder,
    read_parquet_files,
)
from curate.release.versions import (
    VersionDecision,
    bump,
    decide_version,
    normalize_version,
    parse_version,
)

__all__ = [
    "CHANGELOG",
    "HUB_PREFIX",
    "Diff",
    "NoPreviousRelease",
    "Release",
    "ReleaseError",
    "ReleaseUsageError",
    "RowChange",
    "VersionDecision",
    "against_previous",
    "bump",
    "changelog_section",
    "counts_line",
    "decide_version",
    "diff_releases",
    "latest_tag",
    "load_release",
    "manifest_changes",
    "normalize_version",
    "parse_hub_ref",
    "parse_version",
    "read_folder",
    "read_parquet_files",
    "render_changelog",
    "render_json",
    "render_text",
]
