"""Validation of source drops: parse every file, run every check, one report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from curate.parse import collect_paths, parse_file
from validation.config import Config
from validation.findings import Report
from validation.records import SourceFile
from validation.runner import run_checks


def validate_paths(
    paths: Iterable[str | Path],
    config: Config,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> tuple[list[SourceFile], Report]:
    """Parse and check the drops at ``paths``; raises ``UsageError`` for a missing path."""
    files = [parse_file(p, config) for p in collect_paths(paths)]
    return files, run_checks(files, config, progress=progress)
