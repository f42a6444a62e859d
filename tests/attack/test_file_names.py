"""A file name is the user's, and may hold anything a file system allows: a newline, `|`, `*`,
`_`, `#`. Each human format shows it as written, on its one line: text and the CI log escape
the newline (a line of its own in a GitHub log is a workflow command), Markdown (the card's
table of sources, the changelog, the step summary) escapes what would end a cell or start a
heading, and the HTML report is escaped by its template."""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT

from curate.cli import main

NAME = "a|b*_x\n# y.txt"
SHOWN = "a|b*_x\\n# y.txt"  # how text and the log show it: the newline as an escape
DROP = ROOT / "tests/data/formats_sample.txt"  # real abstracts with LaTeX residue: warnings


@pytest.fixture
def src(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    shutil.copy(DROP, folder / NAME)
    return folder


def _lines_about_the_file(out: str) -> list[str]:
    return [line for line in out.splitlines() if "y.txt" in line]


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_text_and_the_ci_log_keep_the_name_on_its_line(src, capsys, fmt):
    main(["validate", str(src), "--format", fmt, "--no-cache"])
    out = capsys.readouterr().out
    lines = _lines_about_the_file(out)
    assert len(lines) > 10  # every finding, annotated or listed in the log group
    assert not [line for line in out.splitlines() if line.startswith("# y.txt")]
    if fmt == "text":
        assert all(SHOWN in line for line in lines)
    else:
        annotations = [line for line in lines if line.startswith("::")]
        assert annotations and all("a|b*_x%0A# y.txt" in line for line in annotations)
        assert all(SHOWN in line for line in lines if not line.startswith("::"))


def test_the_step_summary_keeps_the_table_whole(src, tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    main(["validate", str(src), "--format", "github", "--no-cache"])
    capsys.readouterr()
    rows = [line for line in summary.read_text().splitlines() if "y.txt" in line]
    assert rows and not [line for line in summary.read_text().splitlines()
                         if line.startswith("# y.txt")]  # fmt: skip
    assert r"/a\|b\*\_x\\n# y.txt | 0 | 70 |" in summary.read_text()  # the cell, then the counts


def test_the_card_changelog_and_html_show_the_name_as_written(tmp_path):
    src, out = tmp_path / "src", tmp_path / "dist"
    src.mkdir()
    shutil.copy(DROP, src / "plain.txt")
    assert main(["build", str(src), "--out", str(out), "--no-cache"]) == 0
    # A second release with the file added: the changelog names it under Metadata.
    lines = DROP.read_text().splitlines(keepends=True)
    (src / NAME).write_text(lines[0] + "\n" + "".join(lines[2:40]))
    assert main(["build", str(src), "--out", str(out), "--no-cache"]) == 0
    card = (out / "README.md").read_text()
    assert not [line for line in card.splitlines() if line.startswith("# y.txt")]
    # In a code span of a table cell: `|` escaped (GitHub reads it as the cell's end even
    # there), the newline as an escape.
    row = [line for line in card.splitlines() if "y.txt" in line]
    assert row and all(line.startswith("| `a\\|b*_x\\n# y.txt` |") for line in row), row
    changelog = (out / "CHANGELOG.md").read_text()
    assert r"source a\|b\*\_x\\n\# y.txt added" in changelog, changelog
    assert not [line for line in changelog.splitlines() if line.startswith("# y.txt")]
    html = (out / "report.html").read_text()
    assert "<h1># y.txt" not in html and "<h1>y.txt" not in html
