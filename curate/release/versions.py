"""Semantic versions of releases, and the version a new build gets.

The bump follows from what changed since the previous release:

- major: the schema changed (a column added, removed, retyped, reordered or its nullability);
- minor: records were added or removed;
- patch: only text or metadata changed (a record's columns, the card, the settings, ...);
- none: nothing changed, and the build is the previous release again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from curate.errors import ReleaseError, ReleaseUsageError

SEMVER = re.compile(r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
LEVELS = ("major", "minor", "patch")


def parse_version(text: str) -> tuple[int, int, int]:
    match = SEMVER.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ReleaseUsageError(f"not a semantic version X.Y.Z: {text!r}")
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def format_version(parts: tuple[int, int, int]) -> str:
    return ".".join(str(p) for p in parts)


def normalize_version(text: str) -> str:
    return format_version(parse_version(text))


def bump(version: str, level: str) -> str:
    major, minor, patch = parse_version(version)
    if level == "major":
        return format_version((major + 1, 0, 0))
    if level == "minor":
        return format_version((major, minor + 1, 0))
    if level == "patch":
        return format_version((major, minor, patch + 1))
    raise ValueError(f"unknown bump level {level!r}")


def level_between(old: str, new: str) -> str | None:
    """The bump that leads from ``old`` to ``new`` (None if equal)."""
    a, b = parse_version(old), parse_version(new)
    for i, level in enumerate(LEVELS):
        if a[i] != b[i]:
            return level
    return None


@dataclass(frozen=True)
class VersionDecision:
    version: str
    level: str | None  # what the changes call for
    note: str | None = None  # a warning for people (a smaller bump than the changes call for)


def decide_version(
    previous: str | None, level: str | None, requested: str | None, default: str
) -> VersionDecision:
    """The version of a new build.

    Without a previous release it is ``requested`` or the configured ``default``. With one it is
    the previous version bumped by ``level`` (unchanged if nothing changed), unless ``requested``
    overrides it; an override may not go backwards, nor reuse the previous version for content
    that differs from it.
    """
    if previous is None:
        return VersionDecision(normalize_version(requested or default), level)
    prev = normalize_version(previous)
    if requested is None:
        return VersionDecision(bump(prev, level) if level else prev, level)
    wanted = normalize_version(requested)
    if parse_version(wanted) < parse_version(prev):
        raise ReleaseError(f"--version {wanted} goes backwards: the previous release is {prev}")
    if wanted == prev and level is not None:
        raise ReleaseError(
            f"--version {wanted} is the previous release's version, but the content differs "
            f"({level} change); use {bump(prev, level)} or later"
        )
    note = None
    given = level_between(prev, wanted)
    if level is not None and given is not None and LEVELS.index(given) > LEVELS.index(level):
        note = (
            f"--version {wanted} is a {given} bump, but the changes call for a {level} bump "
            f"({bump(prev, level)})"
        )
    return VersionDecision(wanted, level, note)
