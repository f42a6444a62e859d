"""Rendering a report for its three readers: a person, a program and a CI log.

Rendering is separate from finding: the same :class:`Report` gives every format.
"""

from __future__ import annotations

import json
from itertools import groupby

from validation.findings import Finding, Report


def _where(f: Finding) -> str:
    return f"{f.file}:{f.line}" if f.line else f.file


def render_text(report: Report) -> str:
    """Grouped by file, each finding as ``file:line  severity  code  message``, then a summary."""
    out: list[str] = []
    for file, group in groupby(report.findings, key=lambda f: f.file):
        items = list(group)
        out.append(f"{file} ({len(items)} finding{'s' if len(items) != 1 else ''})")
        for f in items:
            extra = ""
            if f.related:
                extra += f" [related: {f.related}]"
            out.append(f"  {_where(f)}: {f.severity:<7} {f.code:<16} {f.message}{extra}")
        out.append("")
    summary = report.summary()
    by_code = summary["by_code"]
    if by_code:
        out.append("Summary by code:")
        for code, info in by_code.items():  # type: ignore[union-attr]
            out.append(f"  {code:<16} {info['severity']:<7} {info['count']}")
    out.append(
        f"{summary['files']} files, {summary['records']} records: "
        f"{summary['errors']} errors, {summary['warnings']} warnings"
    )
    return "\n".join(out) + "\n"


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    """One workflow command per finding, so GitHub annotates the offending line of the drop."""
    lines = []
    for f in report.findings:
        kind = "error" if str(f.severity) == "error" else "warning"
        props = [f"file={_escape_property(f.file)}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={_escape_property(f.code)}")
        message = f.message + (f" (related: {f.related})" if f.related else "")
        lines.append(f"::{kind} {','.join(props)}::{_escape_data(message)}")
    summary = report.summary()
    lines.append(
        f"curate validate: {summary['files']} files, {summary['records']} records, "
        f"{summary['errors']} errors, {summary['warnings']} warnings"
    )
    return "\n".join(lines) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "github": render_github}
