"""One fault repeated in one file is listed `max_findings_listed` times (1,000) and counted
after that: a 0.7 MB `.jsonl.gz` of one record 1,036,269 times gave a report of 404 MB. The
summary, the exit status and a baseline count every finding."""

from __future__ import annotations

import json

import pytest
from hostile import GOOD, validate

from curate.cli import main

COPIES = 2_500  # one real abstract (openreview:JNN6QHhLHB), line after line


@pytest.fixture
def src(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    line = json.dumps(GOOD[0]) + "\n"
    (folder / "same.jsonl").write_text(line * COPIES + json.dumps(GOOD[1]) + "\n")
    return folder


def _by_code(report: dict) -> dict[str, int]:
    return {code: info["count"] for code, info in report["summary"]["by_code"].items()}


def test_the_json_report_lists_a_thousand_of_each_and_counts_the_rest(src, capsys):
    status, report = validate(src, capsys)
    counts = _by_code(report)
    repeated = [c for c, n in counts.items() if n == COPIES - 1]  # every copy after the first
    assert repeated, counts
    for code in repeated:
        listed = [f for f in report["findings"] if f["code"] == code]
        assert len(listed) == 1000
        assert {"file": listed[0]["file"], "code": code, "severity": listed[0]["severity"],
                "omitted": COPIES - 1 - 1000} in report["omitted"]  # fmt: skip
    # The summary counts all; the listed and the omitted add up to it.
    assert sum(o["omitted"] for o in report["omitted"]) + len(report["findings"]) == sum(
        counts.values()
    )
    assert report["summary"]["errors"] + report["summary"]["warnings"] == sum(counts.values())
    assert status == (1 if report["summary"]["errors"] else 0)


def test_the_text_report_says_how_many_more(src, capsys):
    config = src.parent / "curate.toml"
    validate(src, capsys)  # writes the mapping
    config.write_text(config.read_text().replace("[mapping.jsonl]", "max_findings_listed = 10\n"
                                                 "[mapping.jsonl]"))  # fmt: skip
    main(["validate", str(src), "--config", str(config), "--no-cache"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f"same.jsonl ({COPIES} findings)")  # the file's, all counted
    listed = [line for line in lines if " warning duplicate " in " ".join(line.split())]
    assert len(listed) == 10
    assert f"  … and {COPIES - 1 - 10:,} more duplicate in this file" in lines
    # The summary by code counts every finding.
    assert "  duplicate        warning " + str(COPIES - 1) in lines


def test_a_baseline_and_the_exit_status_count_every_finding(src, tmp_path, capsys):
    validate(src, capsys)
    config = src.parent / "curate.toml"
    config.write_text("max_findings_listed = 10\n" + config.read_text())
    baseline = tmp_path / "baseline.json"
    assert main(["validate", str(src), "--config", str(config), "--no-cache",
                 "--write-baseline", str(baseline)]) == 0  # fmt: skip
    capsys.readouterr()
    status, report = validate(src, capsys, "--baseline", str(baseline))
    assert status == 0 and report["findings"] == [] and "omitted" not in report
    assert report["summary"]["baselined"] >= COPIES - 1
