"""Rendering a report for its readers: a person, a program, a CI log and code scanning.

Rendering is separate from finding: the same :class:`Report` gives every format.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from itertools import groupby
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from validation.findings import Finding, Report, Severity, count, parse_place


def _totals(summary: dict[str, Any], bold: bool = False) -> tuple[str, str]:
    """The files and records, and the errors and warnings, of a report's summary."""
    mark = "**" if bold else ""
    scanned = f"{count(summary['files'], 'file')}, {count(summary['records'], 'record')}"
    found = (
        f"{mark}{count(summary['errors'], 'error')}{mark}, "
        f"{mark}{count(summary['warnings'], 'warning')}{mark}"
    )
    return scanned, found


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(value: str) -> str:
    """``value`` on one line, control characters as escapes (``\\n``, ``\\x1b``): a file
    named ``x\\n::error::y`` must not start a line of its own in a log, where a CI runner reads
    it as a command, nor move the cursor of a terminal."""

    def escape(m: re.Match[str]) -> str:
        c = m[0]
        return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")

    return _CONTROL.sub(escape, value)


def _where(f: Finding) -> str:
    return printable(f"{f.file}:{f.line}" if f.line else f.file)


def listed(report: Report, cap: int) -> tuple[list[Finding], list[dict[str, Any]]]:
    """The findings a report lists, at most ``cap`` of one code in one file (0: all), in
    report order, and what it leaves out: ``{file, code, severity, omitted}`` per (file, code),
    in the order of their first findings. One record repeated a million times is one fault a
    million times; listing each made a report of 400 MB."""
    if not cap:
        return report.findings, []
    seen: Counter[tuple[str, str]] = Counter()
    kept: list[Finding] = []
    for f in report.findings:
        seen[(f.file, f.code)] += 1
        if seen[(f.file, f.code)] <= cap:
            kept.append(f)
    severity = {(f.file, f.code): str(f.severity) for f in reversed(report.findings)}
    omitted = [
        {"file": file, "code": code, "severity": severity[(file, code)], "omitted": n - cap}
        for (file, code), n in seen.items()
        if n > cap
    ]
    return kept, omitted


def render_text(report: Report, cap: int = 0) -> str:
    """Grouped by file, each finding as ``file:line  severity  code  message``, at most ``cap``
    of one code in a file (the rest counted, :func:`listed`), then a summary of all."""
    out: list[str] = []
    kept, omitted = listed(report, cap)
    in_file = Counter(f.file for f in report.findings)
    for file, group in groupby(kept, key=lambda f: f.file):
        out.append(f"{printable(file)} ({count(in_file[file], 'finding')})")
        for f in group:
            extra = ""
            if f.related:
                extra += f" [related: {f.related}]"
            out.append(
                f"  {_where(f)}: {f.severity:<7} {f.code:<16} {printable(f.message + extra)}"
            )
        for o in omitted:
            if o["file"] == file:
                out.append(f"  … and {o['omitted']:,} more {o['code']} in this file")
        out.append("")
    summary = report.summary()
    by_code = summary["by_code"]
    if by_code:
        out.append("Summary by code:")
        for code, info in by_code.items():  # type: ignore[union-attr]
            out.append(f"  {code:<16} {info['severity']:<7} {info['count']}")
    scanned, found = _totals(summary)
    out.append(f"{scanned}: {found}")
    return "\n".join(out) + "\n"


def render_json(report: Report, cap: int = 0) -> str:
    """The report as JSON, listing at most ``cap`` findings of one code in one file; those left
    out are counted under ``omitted`` (:func:`listed`), and ``summary`` counts all."""
    kept, omitted = listed(report, cap)
    if not omitted:
        out = report.to_dict()
    else:
        from dataclasses import replace

        shown = replace(report, findings=kept).to_dict()
        out = {"findings": shown.pop("findings"), "omitted": omitted, **shown}
        out["summary"] = report.summary()
    return json.dumps(out, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


# GitHub shows at most this many error annotations, and as many warning annotations, per step;
# the rest of a step's workflow commands are dropped without a word.
GITHUB_ANNOTATION_CAP = 10


def choose_annotations(findings: list[Finding], cap: int = GITHUB_ANNOTATION_CAP) -> list[Finding]:
    """The findings worth GitHub's few annotation slots, in report order.

    Each kind (errors, warnings) has its own cap. Within a kind, the first finding of every code
    comes first, so a rare code is never crowded out by a frequent one, then the remaining
    findings in report order fill what is left. Errors are written before warnings, so the cap
    can never hide an error behind warnings.
    """
    chosen: set[int] = set()
    for severity in (Severity.ERROR, Severity.WARNING):
        kind = [i for i, f in enumerate(findings) if f.severity is severity]
        seen: set[str] = set()
        firsts = []
        for i in kind:
            if findings[i].code not in seen:
                seen.add(findings[i].code)
                firsts.append(i)
        rest = [i for i in kind if i not in set(firsts)]
        chosen.update([*firsts, *rest][:cap])
    errors = [findings[i] for i in sorted(chosen) if findings[i].severity is Severity.ERROR]
    warnings = [findings[i] for i in sorted(chosen) if findings[i].severity is not Severity.ERROR]
    return errors + warnings


def _message(f: Finding) -> str:
    return f.message + (f" (related: {f.related})" if f.related else "")


def render_github(report: Report, cap: int = GITHUB_ANNOTATION_CAP) -> str:
    """Workflow commands for the findings GitHub will show, then every other finding as a line.

    GitHub keeps only ``cap`` annotations of each kind per step: :func:`choose_annotations`
    picks them, and the findings left over are still printed, in a collapsed log group, so the
    log holds all of them.
    """
    chosen = choose_annotations(report.findings, cap)
    lines = []
    for f in chosen:
        kind = "error" if f.severity is Severity.ERROR else "warning"
        props = [f"file={_escape_property(f.file)}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={_escape_property(f.code)}")
        lines.append(f"::{kind} {','.join(props)}::{_escape_data(_message(f))}")
    annotated = {id(f) for f in chosen}
    rest = [f for f in report.findings if id(f) not in annotated]
    if rest:
        lines.append(
            f"::group::{len(rest)} more {'finding' if len(rest) == 1 else 'findings'} (not "
            f"annotated: GitHub shows {cap} errors and {cap} warnings per step)"
        )
        lines += [f"{_where(f)}: {f.severity} {f.code} {printable(_message(f))}" for f in rest]
        lines.append("::endgroup::")
    summary = report.summary()
    scanned, found = _totals(summary)
    lines.append(
        f"curate validate: {scanned}, {found}" + (f"; {len(rest)} not annotated" if rest else "")
    )
    return "\n".join(lines) + "\n"


# Characters that mean something inside a line of GitHub Markdown (`$` starts math there).
_MD_SPECIAL = re.compile(r"[\\`*_\[\]<>|~$]")


def markdown_text(value: str) -> str:
    """Text shown as written in Markdown: a quoted ``**x**`` stays literal, no HTML, one line
    (control characters as :func:`printable` writes them)."""
    return _MD_SPECIAL.sub(r"\\\g<0>", printable(value))


def markdown_code(value: str) -> str:
    """Text for a one-backtick code span in a Markdown table cell: on one line, a backtick
    (which would end the span) as ``'``, and ``|`` (which would end the cell, even inside a
    span) escaped."""
    return printable(value).replace("`", "'").replace("|", "\\|")


def render_github_summary(
    report: Report,
    *,
    report_url: str | None = None,
    per_code: int = 5,
    cap: int = GITHUB_ANNOTATION_CAP,
) -> str:
    """The Markdown for ``$GITHUB_STEP_SUMMARY``: what the annotations cannot show.

    Counts by code and by file, the first ``per_code`` findings of each code with their place,
    how many findings got no annotation, and where the full report is.
    """
    summary = report.summary()
    errors, warnings = summary["errors"], summary["warnings"]
    mark = "❌" if errors else ("⚠️" if warnings else "✅")
    out = [
        f"## {mark} curate validate",
        "",
        "{}: {}.".format(*_totals(summary, bold=True)),
        "",
    ]
    not_annotated = len(report.findings) - len(choose_annotations(report.findings, cap))
    if not_annotated:
        out += [
            f"{not_annotated} of {len(report.findings)} findings are not annotated on the diff "
            f"(GitHub shows at most {cap} errors and {cap} warnings per step; every error code "
            "and every warning code has at least one annotation when there is room). "
            "All of them are listed below by code, in the job log and in the report.",
            "",
        ]
    if report_url:
        link = f"[{markdown_text(report_url)}]({report_url})"
        out += [f"Full report: {link} (artifact of this run).", ""]
    by_code = summary["by_code"]
    if by_code:
        out += ["### Findings by code", "", "| code | severity | count |", "|---|---|---:|"]
        for code, info in by_code.items():  # type: ignore[union-attr]
            out.append(f"| `{code}` | {info['severity']} | {info['count']} |")
        out += ["", "### Findings by file", "", "| file | errors | warnings |", "|---|---:|---:|"]
        per_file: Counter[tuple[str, bool]] = Counter(
            (f.file, f.severity is Severity.ERROR) for f in report.findings
        )
        for file in sorted({f.file for f in report.findings}):
            errors_in, warnings_in = per_file[(file, True)], per_file[(file, False)]
            out.append(f"| {markdown_text(file)} | {errors_in} | {warnings_in} |")
        out += ["", f"### First findings of each code (up to {per_code})", ""]
        for code in by_code:  # type: ignore[union-attr]
            items = [f for f in report.findings if f.code == code]
            out.append(f"<details><summary><code>{code}</code>: {len(items)}</summary>")
            out.append("")
            for f in items[:per_code]:
                out.append(f"- {markdown_text(_where(f))}: {markdown_text(_message(f))}")
            if len(items) > per_code:
                out.append(f"- … and {len(items) - per_code} more")
            out += ["", "</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _artifact_location(path: str) -> dict[str, str]:
    """A SARIF artifact location: relative paths stay relative (to the repository root, as
    code scanning reads them); an absolute path becomes a ``file:`` URI."""
    if PurePosixPath(path).is_absolute():
        return {"uri": PurePosixPath(path).as_uri()}
    if PureWindowsPath(path).is_absolute():
        return {"uri": PureWindowsPath(path).as_uri()}
    return {"uri": PureWindowsPath(path).as_posix()}


def _location(where: str, line: int) -> dict[str, object]:
    physical: dict[str, object] = {"artifactLocation": _artifact_location(where)}
    if line > 0:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def relative_to(report: Report, root: str | None) -> Report:
    """The report with every path inside ``root`` relative to it: code scanning and GitHub's
    annotations read paths relative to the repository (``GITHUB_WORKSPACE``), whatever folder
    the command ran in. Paths outside it are left as they are."""
    if not root:
        return report
    import os
    from dataclasses import replace

    base = os.path.realpath(root)

    def rel(path: str | None) -> str | None:
        if not path:
            return path
        found = parse_place(path)
        where, at = (found[0], f":{found[1]}{found[2]}") if found else (path, "")
        full = os.path.realpath(where)
        if full == base or not full.startswith(base + os.sep):
            return path
        return os.path.relpath(full, base).replace(os.sep, "/") + at

    findings = []
    for f in report.findings:
        related = rel(f.related)
        message = f.message.replace(f.related, related) if f.related and related else f.message
        findings.append(replace(f, file=rel(f.file) or f.file, related=related, message=message))
    return replace(report, findings=findings)


def render_sarif(report: Report, tool_version: str = "0") -> str:
    """SARIF 2.1.0 for code scanning: one rule per registered code, one result per finding."""
    import validation.checks  # noqa: F401  (fills the registry)
    from validation.registry import REGISTRY

    codes = list(REGISTRY)
    rules = [
        {
            "id": spec.code,
            "name": spec.code,
            "shortDescription": {"text": spec.description},
            "defaultConfiguration": {"level": str(spec.severity)},
        }
        for spec in REGISTRY.values()
    ]
    results = []
    for f in report.findings:
        result: dict[str, object] = {
            "ruleId": f.code,
            "level": "error" if f.severity is Severity.ERROR else "warning",
            "message": {"text": _message(f)},
            "locations": [_location(f.file, f.line)],
        }
        if f.code in REGISTRY:
            result["ruleIndex"] = codes.index(f.code)
        if f.related:
            found = parse_place(f.related)
            related = _location(*found[:2]) if found else _location(f.related, 0)
            result["relatedLocations"] = [
                {"id": 1, **related, "message": {"text": "earlier occurrence"}}
            ]
        if f.score is not None:
            name = REGISTRY[f.code].score if f.code in REGISTRY else "score"
            result["properties"] = {name: round(f.score, 4)}
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "curate",
                        "version": tool_version,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"


RENDERERS = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}
