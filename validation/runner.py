"""Running every registered check over parsed files, in one pass, into one report."""

from __future__ import annotations

from collections.abc import Callable

from validation import checks as _checks  # noqa: F401  (fills the registry)
from validation.config import Config
from validation.findings import Report
from validation.records import SourceFile
from validation.registry import checks


def run_checks(
    files: list[SourceFile],
    config: Config,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> Report:
    """All findings of ``files``: parse findings, then file, record and corpus checks.

    ``files`` must be in path order; "earlier" in duplicate checks means earlier in that order.
    """
    report = Report(files=[f.path for f in files], records=sum(len(f.records) for f in files))
    for source in files:
        report.extend(source.findings)
    for spec in checks("file"):
        for source in files:
            report.extend(spec.func(source, config))  # type: ignore[misc]
    record_checks = [spec.func for spec in checks("record")]
    for source in files:
        for record in source.records:
            for func in record_checks:
                report.extend(func(record, config))  # type: ignore[misc]
        if progress is not None:
            progress(source.path, len(source.records))
    for spec in checks("corpus"):
        report.extend(spec.func(files, config))  # type: ignore[misc]
    return report.sort()
