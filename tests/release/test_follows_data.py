"""Releases follow the data: a project made by ``curate init`` for JSON Lines, CSV or text
drops, built, then its sources shuffled, a record near the top deleted and one edited, each
through the command line. Positions in the files are no part of a release: a shuffle gives
the previous release again, byte for byte; the changelog and ``curate diff`` lead with the
edit and its word diff and sum up the moves in one line; a plain ``curate build`` over a
release continues it.

The records are real abstracts (tests/data/formats_sample.jsonl, from the dev corpus, with
their ids); what a test expects is written in the test.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pyarrow.parquet as pq
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


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "text"])
def test_a_shuffle_is_no_release_and_an_edit_leads_the_changelog(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, fmt, monkeypatch)
    _write(project, fmt, RECORDS)
    assert "built dist v1.0.0" in _build(capsys)
    v1 = _files(project / "dist")
    manifest = json.loads((project / "dist" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] == "1.0.0"
    table = pq.read_table(project / "dist" / PARQUET)
    place = table.schema.field("sources").type.value_type
    assert "line" not in place.names and "row" not in place.names

    # Shuffled, as an export without ORDER BY is: the same release, byte for byte.
    shuffled = RECORDS[:]
    random.Random(7).shuffle(shuffled)
    _write(project, fmt, shuffled)
    out = _build(capsys)
    assert "v1.0.0" in out and "bump none" in out
    assert _files(project / "dist") == v1 and "CHANGELOG.md" not in v1

    # The second record deleted (every line below it moves) and one word of one record edited.
    edited = [dict(r, abstract=_edit(r["abstract"])) if r["id"] == EDITED else r
              for r in shuffled if r["id"] != DELETED]  # fmt: skip
    _write(project, fmt, edited)
    out = _build(capsys)
    assert "v1.1.0" in out, out  # a record removed: minor
    assert "1 edited, 0 added, 1 removed, 0 changed" in out
    changelog = (project / "dist" / "CHANGELOG.md").read_text(encoding="utf-8")
    section = changelog.split("## 1.1.0")[1].split("\n## ")[0]
    # The edit comes first, with its word diff; the moves are one line, never listed.
    assert section.index("### Edited (1)") < section.index("### Removed (1)")
    assert "~~high-resolution~~ **low-resolution**" in section
    assert "records moved within their files" in section
    assert "### Changed" not in section


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "text"])
def test_curate_diff_leads_with_the_edit_and_counts_the_moves(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, fmt, monkeypatch)
    _write(project, fmt, RECORDS)
    _build(capsys, "--out", "v1")
    changed = [dict(r, abstract=_edit(r["abstract"])) if r["id"] == EDITED else r
               for r in RECORDS if r["id"] != DELETED]  # fmt: skip
    _write(project, fmt, changed)
    _build(capsys, "--out", "v2")
    capsys.readouterr()
    assert main(["diff", "v1", "v2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "60 → 59 records: 1 edited, 0 added, 1 removed, 0 changed"
    # All but the first record are one line higher: one summary line, not 58 changes.
    assert (
        lines[2] == "58 records moved within their files (not a change: the table names no lines)"
    )
    assert lines[5] == "edited (1):"
    edit = lines[6]
    assert "[-high-resolution-] {+low-resolution+}" in edit
    if fmt != "text":
        assert edit.lstrip().startswith(f"~ {EDITED}: ")  # the user's own id names it
    else:
        assert EDITED not in edit  # a text drop has no id of its own


def test_the_users_id_is_a_column_and_matches_an_edit_across_releases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, "jsonl", monkeypatch)
    _write(project, "jsonl", RECORDS)
    _build(capsys, "--out", "v1")
    table = pq.read_table(project / "v1" / PARQUET)
    field = table.schema.field("source_id")
    assert str(field.type) == "string" and field.nullable
    rows = {r["source_id"]: r for r in table.to_pylist()}
    assert set(rows) == {r["id"] for r in RECORDS}
    before = rows[EDITED]["id"]
    # Rewritten beyond what the text-similarity match would call an edit: half the words.
    words = rows[EDITED]["abstract_raw"].split()
    rewritten = " ".join(words[: len(words) // 2]) + " We report a different result entirely here."
    _write(project, "jsonl", [dict(r, abstract=rewritten) if r["id"] == EDITED else r
                              for r in RECORDS])  # fmt: skip
    out = _build(capsys, "--out", "v2", "--previous", "v1")
    assert "1 edited, 0 added, 0 removed, 0 changed" in out and "v1.0.1" in out
    capsys.readouterr()
    assert main(["diff", "v1", "v2", "--format", "json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    (edit,) = diff["edited"]
    assert (edit["source_id"], edit["old_id"]) == (EDITED, before)
    assert edit["new_id"] != before and edit["similarity"] < 0.8
    assert not diff["added"] and not diff["removed"]


def test_the_survivor_of_a_near_pair_does_not_follow_line_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, "jsonl", monkeypatch)
    one = RECORDS[0]
    near = dict(one, id="copy:1", abstract=one["abstract"].replace("We conduct", "We perform", 1))
    records = [one, *RECORDS[2:20], near]
    _write(project, "jsonl", records)
    _build(capsys, "--out", "a")
    _write(project, "jsonl", list(reversed(records)))
    _build(capsys, "--out", "b")
    assert (project / "a" / PARQUET).read_bytes() == (project / "b" / PARQUET).read_bytes()
    kept = [r for r in pq.read_table(project / "a" / PARQUET).to_pylist() if len(r["sources"]) > 1]
    (row,) = kept
    assert [s["match"] for s in row["sources"]] == ["original", "near"]


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
    # A source path that does not exist is the one line said, before anything about --out.
    assert main(["build", "no-such-folder"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["curate: error: no such file or folder: no-such-folder"], err
    assert _files(project / "dist") == before


def test_the_reports_duplicate_cards_name_the_users_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same abstract under two paper ids (an export that lists a paper twice): the card of
    the merged row names each copy by its line and by its id."""
    project = _project(tmp_path, "jsonl", monkeypatch)
    again = dict(RECORDS[0], id="arXiv:2504.11526v2")
    _write(project, "jsonl", [*RECORDS[:10], again])
    _build(capsys)
    page = (project / "dist" / "report.html").read_text(encoding="utf-8")
    assert "papers.jsonl:1 (id arXiv:2504.11526)" in page
    assert "papers.jsonl:11 (id arXiv:2504.11526v2)" in page
    (row,) = [r for r in pq.read_table(project / "dist" / PARQUET).to_pylist()
              if len(r["sources"]) > 1]  # fmt: skip
    assert row["source_id"] == "arXiv:2504.11526"  # the smaller of the two, wherever it is
