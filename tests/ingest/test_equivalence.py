"""The same records in every format give the same table.

Real abstracts (`tests/data/formats_sample.jsonl`: 135 records of the dev corpus with their ids
and titles, chosen by `bench/make_formats_sample.py`, among them the three whose abstracts hold a
CR, two holding tabs and the same-paper pair `openreview:Syjha0gAZ` / `neurips2018:row0533`) are
written as JSON Lines, gzipped JSON Lines, CSV and TSV (by polars, not by the reader under test:
quoted newlines, quotes and commas in fields), Parquet (pyarrow), a `save_to_disk` folder and a
Hub-layout folder (both by `datasets`), and built. The build of the same records' text drop
(`formats_sample.txt`, lines copied from the corpus's own drops) is the reference for `abstract`
and `id`, row for row; the formats must agree with each other on every column but the
provenance, and the provenance must point back at each record's place in its file.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import datasets
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT

from curate.pipeline.build import build
from curate.settings import from_mapping

pytestmark = pytest.mark.slow  # builds the dev corpus in every format

DATA = ROOT / "tests" / "data"
SAMPLE = DATA / "formats_sample.jsonl"
DROP = DATA / "formats_sample.txt"
TEMPLATE = ROOT / "dataset_card.md"
PARQUET = "data/train-00000-of-00001.parquet"
FIELDS = {"text": "abstract", "id": "id", "title": "title"}
MAPPING = {"mapping": {name: FIELDS for name in ("jsonl", "csv", "tsv", "parquet", "arrow")}}
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def _write(kind: str, folder: Path) -> Path:
    """The sample as ``kind``, written by a library other than the reader under test."""
    folder.mkdir(parents=True)
    frame = pl.DataFrame(RECORDS)
    if kind == "jsonl":
        path = folder / "records.jsonl"
        shutil.copy(SAMPLE, path)
    elif kind == "jsonl.gz":
        path = folder / "records.jsonl.gz"
        path.write_bytes(gzip.compress(SAMPLE.read_bytes(), mtime=0))
    elif kind == "csv":
        path = folder / "records.csv"
        frame.write_csv(path)
    elif kind == "tsv":
        path = folder / "records.tsv"
        frame.write_csv(path, separator="\t")
    elif kind == "parquet":
        path = folder / "records.parquet"
        pq.write_table(pa.Table.from_pylist(RECORDS), path, row_group_size=50)
    elif kind == "save_to_disk":
        path = folder / "dataset"
        datasets.Dataset.from_list(RECORDS).save_to_disk(str(path))
    elif kind == "hub-layout":
        path = folder / "dataset"
        (path / "data").mkdir(parents=True)
        datasets.Dataset.from_list(RECORDS).to_parquet(str(path / PARQUET))
        (path / "README.md").write_text("---\nlicense: other\n---\n# a dataset\n")
    else:
        raise ValueError(kind)
    return path


KINDS = ("jsonl", "jsonl.gz", "csv", "tsv", "parquet", "save_to_disk", "hub-layout")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("formats")


@pytest.fixture(scope="module")
def tables(root) -> dict[str, list[dict]]:
    """Each kind's built table (and the text drop's, as ``drop``), by kind; each build is
    ``dist-KIND`` in ``root``."""
    settings = from_mapping(MAPPING)
    out = {}
    for kind in ("drop", *KINDS):
        if kind == "drop":
            source = root / "drop" / "sample.txt"
            source.parent.mkdir()
            shutil.copy(DROP, source)
        else:
            source = _write(kind, root / kind)
        dist = root / f"dist-{kind}"
        build([source], dist, settings, template=TEMPLATE)
        out[kind] = pq.read_table(dist / PARQUET).to_pylist()
    return out


def test_the_jsonl_build_gives_the_drop_builds_abstracts_and_ids_row_for_row(tables):
    drop, jsonl = tables["drop"], tables["jsonl"]
    assert len(drop) == len(jsonl) >= 130  # the same-paper pair may merge: it does in both
    assert [r["id"] for r in jsonl] == [r["id"] for r in drop]
    assert [r["abstract"] for r in jsonl] == [r["abstract"] for r in drop]


def test_the_jsonl_build_keeps_the_source_ids_and_the_titles(tables):
    by_id = {r["id"]: r for r in RECORDS}
    for row in tables["jsonl"]:
        original = by_id[row["sources"][0]["source_id"]]
        assert row["title"] == original["title"]
        # abstract_raw is the field as found (a CR read as a line break, as in a drop)
        assert row["abstract_raw"] == original["abstract"].replace("\r\n", "\n").replace("\r", "\n")
    ids = [s["source_id"] for row in tables["jsonl"] for s in row["sources"]]
    assert sorted(ids) == sorted(by_id)  # every record is some row's source, once


@pytest.mark.parametrize("kind", KINDS[1:])
def test_every_format_gives_the_jsonl_table_but_for_provenance(tables, kind):
    def content(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in row.items() if k != "sources"} for row in rows]

    assert content(tables[kind]) == content(tables["jsonl"])


def _csv_lines() -> dict[str, int]:
    """The physical line each record's CSV row starts on: after the header, and after every
    line break (CRLF, CR or LF, as an editor counts them) in the rows before it."""
    lines, at = {}, 2
    for record in RECORDS:
        lines[record["id"]] = at
        at += 1 + sum(
            len(re.findall(r"\r\n|\r|\n", record[k])) for k in ("id", "title", "abstract")
        )
    return lines


@pytest.mark.parametrize("kind", KINDS)
def test_provenance_points_at_each_records_place_in_its_file(tables, root, kind):
    """The table names each occurrence's file and id; its line and row are beside it, in
    positions.parquet, in the order of ``sources``."""
    place = {r["id"]: i + 1 for i, r in enumerate(RECORDS)}  # 1-based: line or row
    csv_lines = _csv_lines()
    positions = pq.read_table(root / f"dist-{kind}" / "positions.parquet").to_pylist()
    placed = {p["id"]: p["sources"] for p in positions}
    for row in tables[kind]:
        assert row["source_id"] == row["sources"][0]["source_id"]
        for entry, places in zip(row["sources"], placed[row["id"]], strict=True):
            source = {**entry, **places}
            at = place[source["source_id"]]
            if kind.startswith("jsonl"):
                assert (source["line"], source["row"]) == (at, None)
            elif kind in ("csv", "tsv"):
                assert (source["line"], source["row"]) == (csv_lines[source["source_id"]], at)
            else:
                assert source["row"] == source["line"] == at


def test_the_extra_column_and_the_provenance_load_with_datasets_and_mlcroissant(
    tables, root, tmp_path, monkeypatch
):
    import mlcroissant as mlc

    dist = root / "dist-csv"
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loaded = datasets.load_dataset(str(dist), cache_dir=str(tmp_path / "cache"))["train"]
    assert loaded.features["title"] == datasets.Value("string")
    assert loaded.features["sources"].feature["source_id"] == datasets.Value("string")
    assert loaded.features["source_id"] == datasets.Value("string")
    assert "row" not in loaded.features["sources"].feature
    assert loaded["title"] == [r["title"] for r in tables["csv"]]
    records = list(mlc.Dataset(jsonld=str(dist / "croissant.json")).records("default"))
    titles = sorted(r["default/title"].decode() for r in records)
    assert titles == sorted(r["title"] for r in tables["csv"])
