"""GitHub outputs: which findings get GitHub's few annotations, the job summary, and SARIF.

The seed sources have 25 warnings (2 duplicate, 15 latex, 8 markdown) and no error: counted by
hand once; the tests add errors of their own to them.
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from conftest import ROOT

from curate import __version__
from curate.cli import main
from validation.findings import Finding, Report, Severity
from validation.render import choose_annotations, render_github, render_github_summary

DATA = ROOT / "tests" / "data"
COMMAND = re.compile(r"^::(error|warning) file=([^,]*)(?:,line=(\d+))?,title=([^:]*)::", re.M)


def _finding(code: str, severity: str, file: str, line: int) -> Finding:
    return Finding(code, Severity(severity), file, line, f"{code} at {line}")


def _big_report() -> Report:
    """30 latex warnings, then 1 truncated warning; 14 encoding errors, then 1 schema error."""
    findings = [_finding("latex", "warning", "a.txt", i) for i in range(1, 31)]
    findings.append(_finding("truncated", "warning", "a.txt", 99))
    findings += [_finding("encoding", "error", f"b{i:02}.txt", 1) for i in range(14)]
    findings.append(_finding("schema", "error", "z.txt", 0))
    return Report(findings=findings, files=["a.txt", "z.txt"], records=40)


def test_annotations_keep_every_code_and_put_errors_first():
    report = _big_report()
    out = render_github(report)
    commands = COMMAND.findall(out)
    kinds = [kind for kind, *_ in commands]
    assert kinds.count("error") == 10 and kinds.count("warning") == 10  # GitHub's caps
    assert kinds == ["error"] * 10 + ["warning"] * 10  # errors before warnings
    codes = {code for *_, code in commands}
    assert {"schema", "truncated", "encoding", "latex"} <= codes  # a rare code is not crowded out
    # every finding not annotated is still in the log, as a plain line, and counted
    not_annotated = 46 - 20
    assert f"::group::{not_annotated} more findings" in out
    assert f"; {not_annotated} not annotated" in out
    plain = out.split("::group::", 1)[1].split("::endgroup::", 1)[0].splitlines()[1:]
    assert len(plain) == not_annotated
    assert all(not line.startswith("::") for line in plain)
    assert "b13.txt:1: error encoding encoding at 1" in plain  # the 14th encoding error
    assert "a.txt:30: warning latex latex at 30" in plain


def test_choice_within_the_cap_is_in_report_order_and_keeps_everything_when_it_fits():
    small = [_finding("latex", "warning", "a.txt", 3), _finding("encoding", "error", "b.txt", 1)]
    assert choose_annotations(small) == [small[1], small[0]]
    report = _big_report()
    chosen = choose_annotations(report.findings)
    errors = [f for f in chosen if f.severity is Severity.ERROR]
    assert errors[0].file == "b00.txt" and errors[-1].file == "z.txt"  # schema kept, 9 encoding
    assert [f.file for f in errors[:-1]] == [f"b{i:02}.txt" for i in range(9)]


def test_messages_are_escaped_in_commands_and_literal_in_the_summary():
    f = Finding("latex", Severity.WARNING, "a,b:c.txt", 2, "residue `50\\%` and **bold** | x\nnext")
    report = Report(findings=[f], files=["a,b:c.txt"], records=1)
    (line,) = [x for x in render_github(report).splitlines() if x.startswith("::")]
    assert line == (
        "::warning file=a%2Cb%3Ac.txt,line=2,title=latex::residue `50\\%25` and **bold** | x%0Anext"
    )
    md = render_github_summary(report)
    # The newline as an escape (shown as \n), as text and the log show it: never dropped.
    assert "residue \\`50\\\\%\\` and \\*\\*bold\\*\\* \\| x\\\\nnext" in md


def test_step_summary_is_appended_with_counts_first_findings_and_the_report_link(
    drop, tmp_path, monkeypatch, capsys
):
    drop("zz_binary.txt", b"ICML 2025 Papers\n\n\xff\xfe broken bytes\n")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/repo")
    monkeypatch.setenv("GITHUB_RUN_ID", "42")
    code = main(["validate", str(drop.folder), "--format", "github", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 1
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("earlier step\n## ❌ curate validate")  # appended, not overwritten
    assert "4 files, 57 records: **1 error**, **25 warnings**." in md
    for row in ("| `duplicate` | warning | 2 |", "| `latex` | warning | 15 |",
                "| `markdown` | warning | 8 |", "| `encoding` | error | 1 |"):  # fmt: skip
        assert row in md
    assert "<summary><code>latex</code>: 15</summary>" in md
    assert md.count("- … and 10 more") == 1  # latex: 5 shown, 10 more
    assert "15 of 26 findings are not annotated" in md
    assert "(https://github.com/org/repo/actions/runs/42#artifacts)" in md
    # the encoding error has its annotation, at its line
    assert re.search(r"^::error file=[^,]*zz_binary\.txt,line=3,title=encoding::", out, re.M)
    assert len(COMMAND.findall(out)) == 11


def test_no_summary_file_without_the_variable(drop, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["validate", str(drop.folder), "--format", "github"]) == 0
    assert "## " not in capsys.readouterr().out


def _schema() -> dict:
    return json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def test_sarif_validates_against_the_official_schema(drop, capsys):
    drop("zz_binary.txt", b"ICML 2025 Papers\n\n\xff\xfe broken bytes\n")
    code = main(["validate", str(drop.folder), "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    assert code == 1
    jsonschema.Draft4Validator(_schema()).validate(sarif)
    (run,) = sarif["runs"]
    assert run["tool"]["driver"]["name"] == "curate"
    assert run["tool"]["driver"]["version"] == __version__
    results = run["results"]
    assert len(results) == 26
    levels = [r["level"] for r in results]
    assert levels.count("error") == 1 and levels.count("warning") == 25
    rules = run["tool"]["driver"]["rules"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    # the known duplicate: 001 line 5 repeats 000 line 25 (read by hand in the seeds)
    (dup,) = [
        r
        for r in results
        if r["ruleId"] == "duplicate"
        and r["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    ]
    where = dup["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert where.endswith("/001_4aa885bbda26af6d.txt")
    related = dup["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"].endswith("/000_06b61cfca4c53418.txt")
    assert related["region"]["startLine"] == 25


def test_the_schema_check_is_live():
    """A result without a message is not SARIF: the validator used above does catch it."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(_schema()).validate(bad)


def test_sarif_uris_relative_stay_relative(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_bytes(b"ICML 2025 Papers\n\n\x00 control\n")
    main(["validate", "d", "--format", "sarif", "--no-cache"])
    sarif = json.loads(capsys.readouterr().out)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in sarif["runs"][0]["results"]}  # fmt: skip
    assert uris == {"d/x.txt"}
