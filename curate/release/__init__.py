"""Releases: where a build may write, reading a previous release, comparing two, deciding the
next version, writing the changelog, and publishing to the Hub.

The names below are the stage's API, as the pipeline and the command line use it. Each lives in
the module named in :data:`_API` and is imported on first use (PEP 562), so importing one
module of the stage never imports the others through this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from curate.dataset.manifest import CHANGELOG
    from curate.errors import NoPreviousRelease, ReleaseError, ReleaseUsageError
    from curate.release.changelog import changelog_section, render_changelog
    from curate.release.decide import against_previous
    from curate.release.diff import (
        Diff,
        Edit,
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

_API = {
    "CHANGELOG": "curate.dataset.manifest",
    "NoPreviousRelease": "curate.errors",
    "ReleaseError": "curate.errors",
    "ReleaseUsageError": "curate.errors",
    "changelog_section": "curate.release.changelog",
    "render_changelog": "curate.release.changelog",
    "against_previous": "curate.release.decide",
    "Diff": "curate.release.diff",
    "Edit": "curate.release.diff",
    "RowChange": "curate.release.diff",
    "counts_line": "curate.release.diff",
    "diff_releases": "curate.release.diff",
    "manifest_changes": "curate.release.diff",
    "render_json": "curate.release.diff",
    "render_text": "curate.release.diff",
    "HUB_PREFIX": "curate.release.load",
    "Release": "curate.release.load",
    "latest_tag": "curate.release.load",
    "load_release": "curate.release.load",
    "parse_hub_ref": "curate.release.load",
    "read_folder": "curate.release.load",
    "read_parquet_files": "curate.release.load",
    "VersionDecision": "curate.release.versions",
    "bump": "curate.release.versions",
    "decide_version": "curate.release.versions",
    "normalize_version": "curate.release.versions",
    "parse_version": "curate.release.versions",
}
__all__ = [
    "CHANGELOG",
    "HUB_PREFIX",
    "Diff",
    "Edit",
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


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'curate.release' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
