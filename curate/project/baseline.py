"""Baselines: accept today's findings so that CI fails only on new ones (``--baseline``).

A finding is recognised by what stays put when a drop is edited elsewhere: its code, its file's
name and, for a finding about a record, the record's id (a hash of its words), else its message.
Line numbers are left out on purpose: adding an abstract above would shift them all. The same
key may be accepted several times (a count), so a second copy of an accepted fault is new.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from curate.errors import UsageError
from curate.io import atomic_write_text
from validation.findings import Finding, Report

FORMAT = "curate-baseline/1"


def finding_key(f: Finding) -> tuple[str, str, str]:
    return (f.code, Path(f.file).name, f"id:{f.id}" if f.id else f"message:{f.message}")


def write_baseline(path: str | Path, report: Report) -> int:
    """Write every finding of ``report`` to ``path``; returns how many."""
    keys = sorted(finding_key(f) for f in report.findings)
    entries = [{"code": c, "file": name, "key": k} for c, name, k in keys]
    atomic_write_text(
        path,
        json.dumps({"format": FORMAT, "findings": entries}, ensure_ascii=False, indent=2) + "\n",
    )
    return len(entries)


def read_baseline(path: str | Path) -> Counter[tuple[str, str, str]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file")
        return Counter((e["code"], e["file"], e["key"]) for e in data["findings"])
    except FileNotFoundError:
        raise UsageError(
            f"{path}: baseline file not found (make one with --write-baseline)"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: not a usable baseline: {exc}") from None


def apply_baseline(report: Report, path: str | Path) -> Report:
    """The report without the findings the baseline accepts (counted in ``baselined``)."""
    accepted = read_baseline(path)
    kept = []
    for f in report.findings:
        key = finding_key(f)
        if accepted[key] > 0:
            accepted[key] -= 1
        else:
            kept.append(f)
    return Report(
        findings=kept,
        files=report.files,
        records=report.records,
        timings=report.timings,
        baselined=len(report.findings) - len(kept),
        measures=report.measures,  # what the checks measured, the baseline's findings too
    )
