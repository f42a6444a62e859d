"""Sources on the Hub: `hf://datasets/ORG/NAME[@REVISION]`, fetched through huggingface_hub from
the local fake Hub (127.0.0.1 only), read like a local folder and named by their address."""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets
import hubserver
import pyarrow.parquet as pq
from conftest import ROOT
from hubserver import FakeHub
from huggingface_hub import HfApi

from curate.cli import main

fake_hub = hubserver.fake_hub
REPO = "someone/abstracts"
RECORDS = [
    json.loads(x) for x in (ROOT / "tests/data/formats_sample.jsonl").read_text().splitlines()
]
CONFIG = '[mapping.parquet]\ntext = "abstract"\nid = "id"\ntitle = "title"\n'


def upload(tmp_path: Path) -> str:
    """A Hub-layout dataset (`datasets` wrote its Parquet file), tagged v1: its commit."""
    folder = tmp_path / "upload"
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_list(RECORDS[:40]).to_parquet(
        str(folder / "data/train-00000-of-00001.parquet")
    )
    (folder / "README.md").write_text("---\nlicense: other\n---\n# Abstracts\n")
    api = HfApi()
    api.create_repo(REPO, repo_type="dataset")
    api.upload_folder(repo_id=REPO, repo_type="dataset", folder_path=folder)
    api.create_tag(REPO, tag="v1", repo_type="dataset")
    return api.dataset_info(REPO, revision="v1").sha


def test_validate_and_build_a_hub_dataset(fake_hub: FakeHub, tmp_path, capsys):
    upload(tmp_path)
    (tmp_path / "curate.toml").write_text(CONFIG)
    config = ["--config", str(tmp_path / "curate.toml")]
    address = f"hf://datasets/{REPO}@v1"
    status = main(["validate", address, "--format", "json", *config])
    report = json.loads(capsys.readouterr().out)
    assert status == 0, report
    assert report["summary"]["records"] == 40
    assert main(["build", address, "--out", str(tmp_path / "dist"), *config]) == 0
    rows = pq.read_table(tmp_path / "dist/data/train-00000-of-00001.parquet").to_pylist()
    files = {s["file"] for row in rows for s in row["sources"]}
    assert files == {f"{address}/data/train-00000-of-00001.parquet"}
    assert sorted(s["source_id"] for row in rows for s in row["sources"]) == sorted(
        r["id"] for r in RECORDS[:40]
    )
    manifest = json.loads((tmp_path / "dist/manifest.json").read_text())
    assert [s["name"] for s in manifest["sources"]] == sorted(files)
    # the card was not fetched: no format claims it
    cached = Path(os.environ["CURATE_CACHE_DIR"]) / "hub" / REPO / "v1"
    assert (cached / "data/train-00000-of-00001.parquet").is_file()
    assert not (cached / "README.md").exists()


def test_a_missing_dataset_or_revision_is_one_line(fake_hub: FakeHub, tmp_path, capsys):
    upload(tmp_path)
    capsys.readouterr()
    for address, message in (
        ("hf://datasets/someone/missing", "no such dataset on the Hub"),
        (f"hf://datasets/{REPO}@v9", "the dataset has no revision 'v9'"),
        ("hf://datasets/not a repo", "not a Hub dataset"),
    ):
        assert main(["validate", address, "--no-cache"]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("\n") == 1 and message in err, err
