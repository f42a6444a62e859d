"""A build over a release continues it: a project made by ``curate init``, built, then built
again without ``--previous``; never a lower version, nor other content under the same version,
over the release in ``--out``.

The records are real abstracts (tests/data/formats_sample.jsonl, from the dev corpus, with
their ids); what a test expects is written in the test.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import ROOT

from curate.cli import main

SAMPLE = ROOT / "tests" / "data" / "formats_sample.jsonl"
PARQUET = "data/train-00000-of-00001.parquet"
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()][:60]
# The record edited (one word), and the one deleted near the top.
EDITED = "arXiv:2504.11526"  # "We conduct high-resolution wind-tunnel simulations …"
DELETED = RECORDS[1]["id"]
PUBLISHED = ("README.md", "croissant.json", "validation-report.json", PARQUET, "CHANGELOG.md")


def _edit(text: str) -> str:
    assert "high-resolution wind-tunnel" in text
    return text.replace("high-resolution wind-tunnel", "low-resolution wind-tunnel", 1)


def _write(project: Path, fmt: str, records: list[dict]) -> None:
    sources = project / "sources"
    if fmt == "jsonl":
        lines = [json.dumps({"paper_id": r["id"], "title": r["title"], "abstract": r["abstract"]})
                 for r in records]  # fmt: skip
        (sources / "papers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif fmt == "csv":
        with (sources / "papers.csv").open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["paper_id", "title", "abstract"])
            writer.writerows([r["id"], r["title"], r["abstract"]] for r in records)
    else:
        body = "\n\n".join(" ".join(r["abstract"].split()) for r in records)
        (sources / "papers.txt").write_text(f"ICML 2024 Papers\n\n{body}\n", encoding="utf-8")


def _project(tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "p"
    args = ["init", str(project)] + (["--format", fmt, "--text-field", "abstract"]
                                      if fmt != "text" else [])  # fmt: skip
    assert main(args) == 0
    if fmt != "text":
        config = project / "pyproject.toml"
        text = config.read_text(encoding="utf-8")
        # The user's own id and title, as a user adds them below the text field.
        text = text.replace('text = "abstract"', 'text = "abstract"\nid = "paper_id"\n'
                            'title = "title"', 1)  # fmt: skip
        config.write_text(text, encoding="utf-8")
    monkeypatch.chdir(project)
    return project


def _build(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(["build", "-q", *args]) == 0
    return capsys.readouterr().out


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in PUBLISHED if (folder / name).is_file()}


def test_a_build_over_a_release_continues_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, "jsonl", monkeypatch)
    _write(project, "jsonl", RECORDS[:30])
    _build(capsys)
    _write(project, "jsonl", RECORDS[:40])
    assert "v1.1.0" in _build(capsys)
    # A plain build after it: taken as the previous release, not a silent v1.0.0.
    out = _build(capsys)
    assert "built dist v1.1.0" in out and "bump none" in out
    assert (project / "dist" / "CHANGELOG.md").is_file()
    # A lower version over it is refused with what to do, and dist is left as it was.
    before = _files(project / "dist")
    capsys.readouterr()
    assert main(["build", "-q", "--version", "1.0.0"]) != 0
    err = capsys.readouterr().err
    assert "--version 1.0.0 goes backwards: the previous release is 1.1.0" in err
    assert _files(project / "dist") == before
    # Following an older release into it is refused too, once the version is known.
    _write(project, "jsonl", RECORDS[:35])
    _build(capsys, "--out", "old")
    capsys.readouterr()
    assert main(["build", "-q", "--previous", "old"]) == 2
    err = capsys.readouterr().err
    assert "holds v1.1.0, newer than this build's v1.0.0" in err and "--previous" in err
    assert _files(project / "dist") == before
    # The same version with other content over it is refused as well.
    _write(project, "jsonl", RECORDS[:36])
    assert main(["build", "-q", "--previous", "old"]) == 2
    assert "holds v1.1.0 with other content" in capsys.readouterr().err
    assert _files(project / "dist") == before
