"""`curate init --format FORMAT --text-field FIELD`: a project for sources with fields, that
builds as soon as they are in sources/."""

from __future__ import annotations

import shutil

import polars as pl
import pyarrow.parquet as pq
from conftest import ROOT

from curate.cli import main
from curate.settings import load_settings

SAMPLE = ROOT / "tests" / "data" / "formats_sample.jsonl"


def test_a_jsonl_project_builds_its_sources(tmp_path, capsys, monkeypatch):
    project = tmp_path / "p"
    assert main(["init", str(project), "--format", "jsonl", "--text-field", "abstract"]) == 0
    out = capsys.readouterr().out
    assert "copy your jsonl files (*.jsonl, *.jsonl.gz, *.json) into sources/" in out
    mapping = load_settings(project / "pyproject.toml").checks.mapping
    assert mapping["jsonl"].text == "abstract" and mapping["jsonl"].id is None
    shutil.copy(SAMPLE, project / "sources" / "papers.jsonl")
    monkeypatch.chdir(project)
    assert main(["build"]) == 0
    rows = pq.read_table(project / "dist/data/train-00000-of-00001.parquet").num_rows
    assert rows >= 130


def test_a_csv_project_and_its_mapping(tmp_path, capsys):
    project = tmp_path / "p"
    assert main(["init", str(project), "--format", "csv", "--text-field", "Abstract"]) == 0
    frame = pl.read_ndjson(SAMPLE).rename({"abstract": "Abstract"})
    frame.write_csv(project / "sources" / "papers.csv")
    settings = ["--config", str(project / "pyproject.toml")]
    assert main(["validate", str(project / "sources"), "--no-cache", *settings]) == 0
    assert "135 records" in capsys.readouterr().out


def test_a_text_field_is_for_a_format_with_fields(tmp_path, capsys):
    assert main(["init", str(tmp_path / "p"), "--text-field", "abstract"]) == 2
    assert "--text-field is for a format with fields" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()
