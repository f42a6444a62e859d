"""``--out`` in storage: the prefix's previous release is followed as a local folder's is, a
prefix holding anything else is refused untouched, a failed build leaves the prefix as it was,
and what an interrupted build left beside it is finished or removed. Against moto's S3 server
on 127.0.0.1 (`tests/s3server.py`), through the command line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import s3server
from conftest import SEED_FILES, all_files

from curate.cli import main
from curate.dataset.manifest import STAGING_MARKER
from curate.release import bucket

s3 = s3server.s3
SEEDS = {p.name: p.read_bytes() for p in SEED_FILES}


def _error(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("curate: error")]


def _build(*args: str) -> int:
    return main(["build", *args, "--no-cache"])


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, s3: s3server.S3Server) -> Path:
    monkeypatch.chdir(tmp_path)
    s3.use(monkeypatch)
    return tmp_path


def test_a_second_build_follows_the_release_the_prefix_holds_as_a_folder_s_is(
    s3: s3server.S3Server, here: Path
) -> None:
    first = s3.put("follow/v1", SEEDS)
    more = dict(SEEDS)
    seed = SEED_FILES[0].read_text(encoding="utf-8").split("\n")
    more["extra.txt"] = "\n".join([seed[0], "", seed[2], ""]).encode("utf-8")  # one more file
    second = s3.put("follow/v2", more)
    local = here / "local"
    local.mkdir()
    for name, data in SEEDS.items():
        (local / name).write_bytes(data)
    assert _build(str(local), "--out", "dist") == 0
    (local / "extra.txt").write_bytes(more["extra.txt"])
    assert _build(str(local), "--out", "dist") == 0

    assert _build(first, "--out", "s3://data/follow/dist") == 0
    assert json.loads(s3.files("follow/dist")["manifest.json"])["version"] == "1.0.0"
    assert _build(second, "--out", "s3://data/follow/dist") == 0
    expected = all_files(here / "dist")
    assert json.loads(expected["manifest.json"])["version"] != "1.0.0"  # it moved on
    assert s3.files("follow/dist") == expected
    assert [k for k in s3.keys_under("follow/") if k.startswith("follow/.")] == []


def test_a_prefix_holding_other_objects_is_refused_and_left_as_it_was(
    s3: s3server.S3Server, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = s3.put("theirs/drops", SEEDS)
    s3.put("theirs/dist", {"notes.txt": b"mine"})
    assert _build(source, "--out", "s3://data/theirs/dist") == 2
    assert _error(capsys) == [
        "curate: error: --out s3://data/theirs/dist holds files that are not from a curate "
        "build: notes.txt; choose another folder, or --force to move them aside (kept, never "
        "deleted)"
    ]
    assert _build(source, "--out", "s3://data/theirs/dist", "--force") == 2
    assert "--force is not offered for storage" in _error(capsys)[0]
    assert s3.keys_under("theirs/") == [
        "theirs/dist/notes.txt",
        *[f"theirs/drops/{n}" for n in sorted(SEEDS)],
    ]


def test_an_edited_release_in_the_prefix_is_not_ours_any_more(
    s3: s3server.S3Server, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = s3.put("edited/drops", SEEDS)
    assert _build(source, "--out", "s3://data/edited/dist") == 0
    s3.put("edited/dist", {"README.md": b"# my own card\n"})
    before = s3.files("edited/dist")
    assert _build(source, "--out", "s3://data/edited/dist") == 2
    assert "README.md (changed since the build)" in _error(capsys)[0]
    assert s3.files("edited/dist") == before


def test_a_refused_build_leaves_the_prefix_and_nothing_beside_it(
    s3: s3server.S3Server, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = s3.put("refused/drops", SEEDS)
    assert _build(source, "--out", "s3://data/refused/dist") == 0
    before = s3.files("refused/dist")
    broken = s3.put("refused/broken", {**SEEDS, "bad.txt": b"\xff\xfe not UTF-8\n"})
    assert _build(broken, "--out", "s3://data/refused/dist") == 1
    assert "s3://data/refused/dist left as it was" in capsys.readouterr().err
    assert s3.files("refused/dist") == before
    assert [k for k in s3.keys_under("refused/") if k.startswith("refused/.")] == []


def test_where_a_release_may_not_go_is_refused_before_any_work(
    s3: s3server.S3Server, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = s3.put("where/drops", SEEDS)
    assert _build(source, "--out", "s3://data") == 2
    assert _error(capsys) == [
        "curate: error: --out s3://data: give a prefix in the bucket, not the bucket itself"
    ]
    assert _build(source, "--out", "s3://data/where") == 2
    assert "would hold, or be inside, the source s3://data/where/drops" in _error(capsys)[0]
    assert _build(source, "--out", "s3://no-such-bucket/dist") == 2
    assert _error(capsys) == [
        "curate: error: --out s3://no-such-bucket/dist: cannot write: no such bucket"
    ]
    assert s3.keys_under("where/") == [f"where/drops/{n}" for n in sorted(SEEDS)]


def test_an_interrupted_copy_in_is_finished_and_a_partial_upload_removed(
    s3: s3server.S3Server, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = s3.put("killed/drops", SEEDS)
    assert _build(source, "--out", "s3://data/killed/dist") == 0
    release = s3.files("killed/dist")
    # What a build killed mid-copy leaves: its whole release beside the prefix, and the
    # prefix half copied (here: the manifest missing); and one killed mid-upload.
    s3.admin.delete_object(Bucket="data", Key="killed/dist/manifest.json")
    s3.put("killed/.dist.build-aaaa", {"README.md": b"half", STAGING_MARKER: b""})
    s3.put("killed/.dist.build-bbbb", {**release, STAGING_MARKER: b"", bucket.COMPLETE: b""})
    assert _build(source, "--out", "s3://data/killed/dist") == 0
    err = capsys.readouterr().err
    assert "removed .dist.build-aaaa, left by an interrupted build" in err
    assert "copied .dist.build-bbbb into s3://data/killed/dist" in err
    assert s3.files("killed/dist") == release  # the same sources: the same release again
    assert [k for k in s3.keys_under("killed/") if k.startswith("killed/.")] == []
