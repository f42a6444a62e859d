"""`curate publish` that fails writes its one line to a log, not huggingface_hub's progress
bars: on a stderr that is no terminal (CI, a pipe, a file) they are turned off, as they are
when HF_HUB_DISABLE_PROGRESS_BARS is set. The fake Hub refuses every commit."""

from __future__ import annotations

import importlib
import shutil
import time
from dataclasses import replace

import hubserver
import huggingface_hub.constants as hconst
import pytest
from conftest import ROOT, SEED_FILES
from hubserver import FakeHub

from curate.cli import main
from curate.pipeline.build import build
from curate.settings import Settings

fake_hub = hubserver.fake_hub
# The module (huggingface_hub.utils exports its class under the same name).
hf_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
REPO = "org/name"


@pytest.fixture
def bars_as_a_user_has_them(monkeypatch):
    """huggingface_hub's progress bars as they are where nothing turns them off (the fake
    Hub's fixture sets HF_HUB_DISABLE_PROGRESS_BARS for every other test)."""
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setattr(hconst, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    monkeypatch.setattr(hf_tqdm, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    monkeypatch.setattr(hf_tqdm, "progress_bar_states", {})
    monkeypatch.setattr(time, "sleep", lambda _: None)  # the retries' backoff


def test_a_failing_commit_prints_one_line_and_no_progress_bar(
    fake_hub: FakeHub, bars_as_a_user_has_them, tmp_path, capsys
):
    src = tmp_path / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    build([src], tmp_path / "v1", replace(Settings(), repo_id=REPO),
          template=ROOT / "dataset_card.md")  # fmt: skip
    capsys.readouterr()
    fake_hub.add_repo(REPO)
    fake_hub.fail("POST", r"/commit/", status=503, times=None)
    assert main(["publish", str(tmp_path / "v1"), "--repo-id", REPO]) == 1
    err = capsys.readouterr().err
    assert "nothing was published (no commit, no tag)" in err
    assert "\r" not in err and "it/s" not in err and "%|" not in err, err
    # Every line is curate's: what it checked, each retry, and the failure.
    assert all(line.startswith("curate: ") for line in err.splitlines()), err
    assert err.splitlines()[-1].startswith("curate: error: committing to org/name failed")
