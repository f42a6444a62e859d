"""What the attack suite shares: real abstracts of the dev corpus to put around a hostile
record, and ``curate validate`` run as a user runs it, its JSON report parsed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from curate.cli import main

SAMPLE = {
    r["id"]: r
    for r in map(json.loads, (ROOT / "tests/data/formats_sample.jsonl").read_text().splitlines())
}
# openreview:JNN6QHhLHB and openreview:QhqQJqe0Wq: two real abstracts, no near-duplicates.
GOOD = [SAMPLE["openreview:JNN6QHhLHB"], SAMPLE["openreview:QhqQJqe0Wq"]]
MAPPING = """
[mapping.jsonl]
text = "abstract"
id = "id"
columns = { score = "float64", tags = "list<string>" }
[mapping.csv]
text = "abstract"
id = "id"
columns = { score = "float64", tags = "list<string>" }
[mapping.parquet]
text = "abstract"
[mapping.arrow]
text = "abstract"
"""


def validate(folder: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:
    """``curate validate FOLDER --format json`` in this process: its exit status and report
    (a traceback on stderr fails the test)."""
    config = folder.parent / "curate.toml"
    if not config.exists():
        config.write_text(MAPPING)
    status = main(["validate", str(folder), "--format", "json", "--config", str(config),
                   "--no-cache", *extra])  # fmt: skip
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return status, json.loads(out)


def errors(report: dict) -> list[tuple[str, str, int]]:
    """Each error of a report as (code, file name, line)."""
    return [
        (f["code"], f["file"].rsplit("/", 1)[-1], f["line"])
        for f in report["findings"]
        if f["severity"] == "error"
    ]
