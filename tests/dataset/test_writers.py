"""Shards and splits: the table in files of ``shard_size`` rows and in held-out splits decided by
a hash of the id; the same bytes on every run, and every reader (datasets, mlcroissant, the
card, the manifest, publish's own check) sees every file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT, SEED_FILES, all_files

from curate.pipeline.build import build
from curate.release.publish import check_folder
from curate.settings import Settings

TEMPLATE = ROOT / "dataset_card.md"
LAYOUT = Settings(shard_size=20, splits={"validation": 0.2, "train": 0.8})


def expected_split(row_id: str) -> str:
    """Written here from the rule the docs state: the id's first 8 hex digits as a fraction,
    cut by the shares in the order of the split names (train 0.8, then validation)."""
    return "train" if int(row_id[:8], 16) / 16**8 < 0.8 else "validation"


@pytest.fixture(scope="module")
def sharded(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sharded")
    (root / "src").mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, root / "src" / seed.name)
    build([root / "src"], root / "dist", LAYOUT, template=TEMPLATE)
    return root


def parquet_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in (folder / "data").glob("*.parquet"))


def test_rows_go_to_their_split_in_shards_of_the_size_given(sharded):
    dist = sharded / "dist"
    files = parquet_files(dist)
    by_split: dict[str, list[str]] = {}
    for rel in files:
        table = pq.read_table(dist / rel)
        split, _, rest = Path(rel).stem.partition("-")
        k, _, total = rest.partition("-of-")
        assert int(k) < int(total) == sum(f.startswith(f"data/{split}-") for f in files)
        ids = table.column("id").to_pylist()
        assert ids == sorted(ids)  # each file in id order
        assert all(expected_split(i) == split for i in ids)
        assert table.num_rows <= 20
        by_split.setdefault(split, []).extend(ids)
    assert set(by_split) == {"train", "validation"}
    assert sum(map(len, by_split.values())) == 55
    # every shard but each split's last is full
    for split in by_split:
        sizes = [pq.read_metadata(dist / f).num_rows for f in files if f"/{split}-" in f]
        assert all(n == 20 for n in sizes[:-1])


def test_the_same_bytes_on_every_run(sharded):
    build([sharded / "src"], sharded / "again", LAYOUT, template=TEMPLATE)
    assert all_files(sharded / "dist") == all_files(sharded / "again")


def test_datasets_sees_the_splits(sharded):
    loaded = datasets.load_dataset(str(sharded / "dist"))
    truth = {s: sum(expected_split(i) == s for i in loaded[s]["id"]) for s in loaded}
    assert set(loaded) == {"train", "validation"}
    assert {s: len(loaded[s]) for s in loaded} == truth
    assert sum(truth.values()) == 55


def test_the_card_croissant_and_manifest_list_every_file(sharded):
    import mlcroissant as mlc

    dist = sharded / "dist"
    files = parquet_files(dist)
    card = yaml.safe_load((dist / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    (config,) = card["configs"]
    assert config["data_files"] == [
        {"split": "train", "path": "data/train-*"},
        {"split": "validation", "path": "data/validation-*"},
    ]
    counts = {s["name"]: s["num_examples"] for s in card["dataset_info"]["splits"]}
    rows = {s: sum(pq.read_metadata(dist / f).num_rows for f in files if f"/{s}-" in f)
            for s in counts}  # fmt: skip
    assert counts == rows
    manifest = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
    assert set(files) <= set(manifest["files"])
    croissant = json.loads((dist / "croissant.json").read_text(encoding="utf-8"))
    objects = {d["contentUrl"]: d["sha256"] for d in croissant["distribution"]
               if d["@type"] == "cr:FileObject"}  # fmt: skip
    assert objects == {f: manifest["files"][f]["sha256"] for f in files}
    dataset = mlc.Dataset(jsonld=str(dist / "croissant.json"))
    for split, n in rows.items():
        records = list(dataset.records(record_set=split))
        assert len(records) == n
        assert all(expected_split(r[f"{split}/id"].decode()) == split for r in records)


def test_publish_checks_the_fingerprint_across_the_files(sharded):
    local = check_folder(sharded / "dist")  # raises if rows or fingerprint disagree
    assert local.manifest["rows"] == 55
