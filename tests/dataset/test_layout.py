"""The table's layout: a split's rows cut every ``shard_size`` rows in id order, planned from the
rows of each id bucket alone; the default makes a large table several files and leaves a small
one the one file it always was; every reader sees every shard, and a release whose rows are the
same but laid out anew says so in one line."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT, SEED_FILES

import curate.dataset.layout
from curate.dataset.layout import plan
from curate.pipeline.build import build
from curate.release.publish import check_folder
from curate.settings import Settings

TEMPLATE = ROOT / "dataset_card.md"
ONE_FILE = "data/train-00000-of-00001.parquet"  # a table's one file, as it always was named
ROWS = 55  # the seed files' rows once their two exact duplicates are merged


def test_a_split_is_cut_every_n_rows_across_its_buckets():
    # buckets 0 to 3 hold 5, 0, 7 and 3 rows: shards of 4 rows take 4, 4, 4 and the last 3
    shards = plan({"0": [5], "2": [7], "3": [3]}, list("0123"), ["train"], 4)
    assert [(s.index, s.of, s.first_row, s.rows) for s in shards] == [
        (0, 4, 0, 4), (1, 4, 4, 4), (2, 4, 8, 4), (3, 4, 12, 3),
    ]  # fmt: skip
    assert [s.pieces for s in shards] == [
        (("0", 0, 4),),
        (("0", 4, 1), ("2", 0, 3)),
        (("2", 3, 4),),
        (("3", 0, 3),),
    ]
    assert shards[1].path(".parquet") == "data/train-00001-of-00004.parquet"


def test_each_split_has_its_own_shards_and_an_empty_one_still_has_a_file():
    shards = plan({"0": [2, 0], "f": [1, 0]}, list("0f"), ["train", "validation"], 10)
    assert [(s.split, s.index, s.of, s.first_row, s.rows, s.pieces) for s in shards] == [
        ("train", 0, 1, 0, 3, (("0", 0, 2), ("f", 0, 1))),
        ("validation", 0, 1, 3, 0, ()),
    ]


def _sources(root: Path) -> Path:
    src = root / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    return src


def test_a_table_below_the_default_shard_size_is_one_file_named_as_before(tmp_path):
    build([_sources(tmp_path)], tmp_path / "dist", Settings(), template=TEMPLATE)
    assert sorted(p.name for p in (tmp_path / "dist" / "data").iterdir()) == [Path(ONE_FILE).name]
    assert pq.read_metadata(tmp_path / "dist" / ONE_FILE).num_rows == ROWS


@pytest.fixture(scope="module")
def sharded(tmp_path_factory) -> Path:
    """The seeds built with a default shard size of 20 rows: three files of 20, 20, 15 rows."""
    root = tmp_path_factory.mktemp("default")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(curate.dataset.layout, "DEFAULT_SHARD_ROWS", 20)
        build([_sources(root)], root / "dist", Settings(), template=TEMPLATE)
    return root / "dist"


SHARDS = [f"data/train-0000{k}-of-00003.parquet" for k in range(3)]


def test_a_table_above_the_default_shard_size_is_several_files_of_consecutive_ids(sharded):
    assert sorted(p.relative_to(sharded).as_posix() for p in sharded.glob("data/*")) == SHARDS
    tables = [pq.read_table(sharded / f) for f in SHARDS]
    assert [t.num_rows for t in tables] == [20, 20, 15]
    ids = [i for t in tables for i in t.column("id").to_pylist()]
    assert ids == sorted(ids) and len(set(ids)) == ROWS  # each file an id range, in order


def test_every_reader_sees_every_shard(sharded, tmp_path, monkeypatch):
    import duckdb
    import pandas as pd
    import polars as pl

    ids = [i for f in SHARDS for i in pq.read_table(sharded / f).column("id").to_pylist()]
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    loaded = datasets.load_dataset(str(sharded), cache_dir=str(tmp_path / "cache"))
    assert list(loaded) == ["train"] and loaded["train"]["id"] == ids
    files = str(sharded / "data" / "*.parquet")
    assert len(pd.concat(pd.read_parquet(sharded / f) for f in SHARDS)) == ROWS
    assert pl.read_parquet(files).height == ROWS
    ((n,),) = duckdb.sql(f"select count(distinct id) from '{files}'").fetchall()
    assert n == ROWS


def test_the_card_croissant_and_manifest_describe_each_shard_as_written(sharded):
    manifest = json.loads((sharded / "manifest.json").read_text(encoding="utf-8"))
    for f in SHARDS:
        data = (sharded / f).read_bytes()
        assert manifest["files"][f] == {"sha256": hashlib.sha256(data).hexdigest(),
                                        "size": len(data)}  # fmt: skip
    assert manifest["rows"] == ROWS
    assert manifest["settings"]["shard_size"] == 0  # the default, as every release listed it
    croissant = json.loads((sharded / "croissant.json").read_text(encoding="utf-8"))
    objects = {d["contentUrl"]: d["sha256"] for d in croissant["distribution"]
               if d["@type"] == "cr:FileObject"}  # fmt: skip
    assert objects == {f: manifest["files"][f]["sha256"] for f in SHARDS}
    card = yaml.safe_load((sharded / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    assert card["configs"][0]["data_files"] == [{"split": "train", "path": "data/train-*"}]
    info = card["dataset_info"]
    assert info["splits"][0]["num_examples"] == ROWS
    assert info["download_size"] == sum((sharded / f).stat().st_size for f in SHARDS)
    assert check_folder(sharded).manifest["rows"] == ROWS  # rows and fingerprint across files


def test_the_same_rows_laid_out_anew_are_a_patch_release_that_says_so(tmp_path, monkeypatch):
    src = _sources(tmp_path)
    monkeypatch.setattr(curate.dataset.layout, "DEFAULT_SHARD_ROWS", 10**9)
    build([src], tmp_path / "v1", Settings(), template=TEMPLATE)
    monkeypatch.setattr(curate.dataset.layout, "DEFAULT_SHARD_ROWS", 20)
    again = build([src], tmp_path / "v2", Settings(), template=TEMPLATE, previous=tmp_path / "v1")
    assert again.version == "1.0.1"
    assert again.diff is not None and again.diff.level == "patch"
    assert not again.diff.data_changed
    line = f"the table's files: 1 file ({ONE_FILE}) → 3 files ({SHARDS[0]} … {SHARDS[-1]})"
    assert line in again.diff.metadata
    assert not any(m.startswith("file data/") for m in again.diff.metadata)
    assert line in (tmp_path / "v2" / "CHANGELOG.md").read_text(encoding="utf-8")
    # the same layout again is no release: the previous one, byte for byte
    same = build([src], tmp_path / "v3", Settings(), template=TEMPLATE, previous=tmp_path / "v2")
    assert same.version == "1.0.1"
    assert (tmp_path / "v3" / SHARDS[0]).read_bytes() == (tmp_path / "v2" / SHARDS[0]).read_bytes()


def test_an_empty_split_beside_shards_of_another_has_its_one_empty_file(tmp_path):
    # a share of 0.0001: only an id below 00068db8… would be in it, and no seed's is
    layout = Settings(shard_size=7, splits={"a": 0.0001, "b": 0.9999})
    build([_sources(tmp_path)], tmp_path / "dist", layout, template=TEMPLATE)
    files = sorted(p.name for p in (tmp_path / "dist" / "data").iterdir())
    assert files == ["a-00000-of-00001.parquet"] + [f"b-0000{k}-of-00008.parquet" for k in range(8)]
    rows = [pq.read_metadata(tmp_path / "dist" / "data" / f).num_rows for f in files]
    assert rows == [0, 7, 7, 7, 7, 7, 7, 7, 6]
    assert check_folder(tmp_path / "dist").manifest["rows"] == ROWS
    positions = pq.read_table(tmp_path / "dist" / "positions.parquet").column("id").to_pylist()
    assert positions == sorted(positions) and len(positions) == ROWS
