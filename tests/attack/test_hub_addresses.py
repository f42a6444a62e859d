"""`hf://` addresses that try to leave their cache folder, against the real huggingface_hub
client and the local fake Hub (tests/hubserver.py): a revision or name the Hub would refuse
is a usage error (exit 2) before anything is fetched, no snapshot lands outside its own
dataset's folder, and findings name the address, never the cache path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import hubserver
import pytest
from hostile import GOOD
from hubserver import FakeHub
from huggingface_hub import HfApi

from curate.cli import main

fake_hub = hubserver.fake_hub


def _dataset(api: HfApi, repo: str, name: str, lines: list[dict], tmp_path: Path) -> None:
    folder = tmp_path / "up" / repo
    folder.mkdir(parents=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in lines))
    api.create_repo(repo, repo_type="dataset")
    api.upload_folder(repo_id=repo, repo_type="dataset", folder_path=folder)


@pytest.mark.parametrize(
    ("revision", "why"),
    [("..", "is no branch, tag or commit name"), (".", "is no branch, tag or commit name"),
     ("a/../../x", "is no branch, tag or commit name"), ("v1:x", "is no branch, tag")],
)  # fmt: skip
def test_a_revision_that_leaves_the_cache_folder_is_a_usage_error(
    revision, why, fake_hub: FakeHub, tmp_path, capsys
):
    api = HfApi()
    # Another dataset of the organisation, already in the cache: "@.." read its file.
    _dataset(api, "org/private", "secret.jsonl", [{"abstract": "the secret " * 5}], tmp_path)
    _dataset(api, "org/public", "data.jsonl", [GOOD[0]], tmp_path)
    (tmp_path / "curate.toml").write_text('[mapping.jsonl]\ntext = "abstract"\n')
    config = ["--config", str(tmp_path / "curate.toml")]
    assert main(["validate", "hf://datasets/org/private", *config]) == 0
    capsys.readouterr()

    status = main(["validate", f"hf://datasets/org/public@{revision}", "--format", "json", *config])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and why in err and "Traceback" not in err, err
    assert "secret" not in out + err
    cache = Path(os.environ["CURATE_CACHE_DIR"]) / "hub"
    assert sorted(p.name for p in (cache / "org").iterdir()) == ["private"]


def test_a_name_over_96_characters_is_a_usage_error(fake_hub: FakeHub, capsys):
    status = main(["validate", f"hf://datasets/org/{'n' * 97}", "--no-cache"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "at most 96 characters" in err, err
    assert "HFValidationError" not in err


def test_findings_name_the_address_not_the_cache(fake_hub: FakeHub, tmp_path, capsys):
    api = HfApi()
    _dataset(api, "org/public", "data.jsonl", [GOOD[0], {"abstract": 7}], tmp_path)
    (tmp_path / "curate.toml").write_text('[mapping.jsonl]\ntext = "abstract"\n')
    status = main(["validate", "hf://datasets/org/public", "--format", "json",
                   "--config", str(tmp_path / "curate.toml")])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1
    report = json.loads(out)
    assert [f["file"] for f in report["findings"]] == ["hf://datasets/org/public/data.jsonl"]
    assert os.environ["CURATE_CACHE_DIR"] not in out


def test_a_hub_address_of_a_model_is_named_as_given(capsys):
    assert main(["validate", "hf://models/org/name", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hf://models/org/name: only Hub datasets" in err, err
