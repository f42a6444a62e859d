"""`curate publish` uploads its own folder and nothing else, and only bytes it has checked.

Each manifest here is doctored the way a careless user or an attacker would (an absolute key, a
`../` key, a symlink, a Parquet file flipped and re-hashed): each is refused before a single
request reaches the Hub, so no repository is created.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import hubserver
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES
from hubserver import FakeHub

from curate.cli import main
from curate.pipeline.build import build
from curate.release.publish import publish
from curate.settings import Settings

fake_hub = hubserver.fake_hub

REPO = "org/name"
PARQUET = "data/train-00000-of-00001.parquet"
CONFIG = replace(Settings(), repo_id=REPO)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("safety")
    src = root / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    build([src], root / "dist", CONFIG, template=ROOT / "dataset_card.md")
    return root / "dist"


@pytest.fixture
def folder(built, tmp_path) -> Path:
    out = tmp_path / "release"
    shutil.copytree(built, out)
    return out


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def edit_manifest(folder: Path, change) -> None:  # type: ignore[no-untyped-def]
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def rehash(folder: Path, *names: str) -> None:
    """Update the manifest's sha256 of ``names`` to what is on disk, as a forger would."""

    def change(manifest: dict) -> None:
        for name in names:
            data = (folder / name).read_bytes()
            manifest["files"][name] = {"sha256": sha(data), "size": len(data)}

    edit_manifest(folder, change)


def refused(fake_hub: FakeHub, folder: Path, capsys) -> str:
    assert main(["publish", str(folder), "--repo-id", REPO]) == 1
    err = capsys.readouterr().err
    assert err.startswith("curate: publish refused: ") and err.count("\n") == 1
    assert "Traceback" not in err
    assert not fake_hub.repos and fake_hub.requests == []  # nothing created, nothing asked
    return err


def test_the_untouched_build_is_published(fake_hub: FakeHub, folder, capsys):
    assert main(["publish", str(folder), "--repo-id", REPO]) == 0
    files = fake_hub.repo(REPO).files("v1.0.0")
    assert files[PARQUET] == (folder / PARQUET).read_bytes()


def test_an_absolute_key_is_refused(fake_hub: FakeHub, folder, capsys):
    outside = folder.parent / "secret.txt"
    outside.write_text("not yours\n")
    edit_manifest(
        folder, lambda m: m["files"].update({str(outside): {"sha256": sha(outside.read_bytes())}})
    )
    err = refused(fake_hub, folder, capsys)
    assert "is an absolute path" in err and str(outside) in err


def test_a_parent_key_is_refused(fake_hub: FakeHub, folder, capsys):
    outside = folder.parent / "secret.txt"
    outside.write_text("not yours\n")
    key = "../secret.txt"
    edit_manifest(folder, lambda m: m["files"].update({key: {"sha256": sha(b"not yours\n")}}))
    assert "leaves the folder" in refused(fake_hub, folder, capsys)


@pytest.mark.parametrize("key", ["data/../README.md", "./README.md", "data//x.parquet", ""])
def test_a_key_that_is_not_normalised_is_refused(fake_hub: FakeHub, folder, capsys, key):
    edit_manifest(folder, lambda m: m["files"].update({key: {"sha256": "0" * 64}}))
    err = refused(fake_hub, folder, capsys)
    assert "leaves the folder" in err or "not a normalised" in err or "not a file name" in err


def test_a_symlinked_file_is_refused(fake_hub: FakeHub, folder, capsys):
    outside = folder.parent / "secret.txt"
    outside.write_bytes((folder / "README.md").read_bytes())  # same bytes: the sha256 agrees
    (folder / "README.md").unlink()
    os.symlink(outside, folder / "README.md")
    assert "README.md is a symlink" in refused(fake_hub, folder, capsys)


def test_a_symlinked_folder_is_refused(fake_hub: FakeHub, folder, capsys):
    elsewhere = folder.parent / "elsewhere"
    shutil.move(folder / "data", elsewhere)
    os.symlink(elsewhere, folder / "data")
    assert "data/ is a symlink" in refused(fake_hub, folder, capsys)


def test_an_unlisted_symlink_is_refused(fake_hub: FakeHub, folder, capsys):
    os.symlink("/etc/hostname", folder / "extra")
    assert "extra is a symlink" in refused(fake_hub, folder, capsys)


def test_a_manifest_of_the_wrong_shape_is_refused(fake_hub: FakeHub, folder, capsys):
    edit_manifest(folder, lambda m: m["files"].update({"README.md": "abc"}))
    assert "README.md: its entry has no sha256" in refused(fake_hub, folder, capsys)
    edit_manifest(folder, lambda m: m.update(files=["README.md"]))
    assert "no file inventory" in refused(fake_hub, folder, capsys)
    (folder / "manifest.json").write_text("[1, 2]")
    assert "no file inventory" in refused(fake_hub, folder, capsys)


def test_a_file_swapped_after_the_check_is_not_what_is_uploaded(fake_hub: FakeHub, folder):
    checked = (folder / "README.md").read_bytes()

    def say(message: str) -> None:
        if "checked against manifest.json" in message:  # the check is done: swap the file
            (folder / "README.md").write_text("swapped in after the check\n")

    result = publish(folder, REPO, say=say)
    assert result.action == "published"
    assert (folder / "README.md").read_text() == "swapped in after the check\n"
    assert fake_hub.repo(REPO).files("v1.0.0")["README.md"] == checked


def test_a_flipped_parquet_with_a_forged_hash_is_refused(fake_hub: FakeHub, folder, capsys):
    path = folder / PARQUET
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF  # in the middle of the column chunks
    path.write_bytes(bytes(data))
    rehash(folder, PARQUET)
    # the Croissant file is forged too, so only the Parquet check stands in the way
    croissant = json.loads((folder / "croissant.json").read_text())
    croissant["distribution"][0]["sha256"] = sha(bytes(data))
    (folder / "croissant.json").write_text(json.dumps(croissant))
    rehash(folder, "croissant.json")
    err = refused(fake_hub, folder, capsys)
    assert "does not read back as Parquet" in err or "fingerprint" in err


def test_a_readable_parquet_that_lost_a_row_is_refused(fake_hub: FakeHub, folder, capsys):
    path = folder / PARQUET
    table = pq.read_table(path)
    pq.write_table(table.slice(1), path)
    rehash(folder, PARQUET)
    croissant = json.loads((folder / "croissant.json").read_text())
    croissant["distribution"][0]["sha256"] = sha(path.read_bytes())
    (folder / "croissant.json").write_text(json.dumps(croissant))
    rehash(folder, "croissant.json")
    err = refused(fake_hub, folder, capsys)
    assert (
        f"the Parquet holds {table.num_rows - 1} rows, manifest.json says {table.num_rows}" in err
    )
    assert "does not match the fingerprint" in err


def test_a_croissant_file_with_another_hash_is_refused(fake_hub: FakeHub, folder, capsys):
    croissant = json.loads((folder / "croissant.json").read_text())
    croissant["distribution"][0]["sha256"] = "0" * 64
    (folder / "croissant.json").write_text(json.dumps(croissant))
    rehash(folder, "croissant.json")
    assert f"croissant.json gives another sha256 for {PARQUET}" in refused(fake_hub, folder, capsys)
