"""A fault of the cleaner on one record names that record: before, one record cut off after
``\\right`` stopped the whole build with ``IndexError: string index out of range`` and no file
or line, so neither the user nor a bug report could say which record it was."""

from __future__ import annotations

from pathlib import Path

import curate.transform.rows
from curate.cli import main
from curate.transform.clean import clean_text

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "dataset_card.md"
BODY = (
    "We study a family of language models trained on public data and report what each of them"
    " learns, how quickly it learns it, and which of its errors persist after training"
)
FAULTY = (
    "The faulty record: every word of it is one the cleaner is made to fail on, for the test,"
    " which then checks that the build names this record by its file and its line"
)


def test_a_cleaner_fault_names_the_record_and_writes_nothing(tmp_path, monkeypatch, capsys):
    drops = tmp_path / "drops"
    drops.mkdir()
    (drops / "a.txt").write_text(
        f"ICML 2025 Papers\n\n{BODY} first.\n\n{FAULTY}.\n\n{BODY} third.\n", encoding="utf-8"
    )

    def faulty(text: str, math: str = "unicode"):
        if text.startswith("The faulty record"):
            raise IndexError("string index out of range")
        return clean_text(text, math=math)

    monkeypatch.setattr(curate.transform.rows, "clean_text", faulty)
    out = tmp_path / "dist"
    args = ["build", str(drops), "--out", str(out), "--engine", "serial", "--no-cache"]
    code = main([*args, "--template", str(TEMPLATE), "--allow-first-release", "-q"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert f"the record at {drops / 'a.txt'}:5 failed" in err
    assert "IndexError: string index out of range" in err
    assert "fault of curate's cleaner" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
