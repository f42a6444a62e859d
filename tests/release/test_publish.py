"""`curate publish` against the local fake Hub, driven through the real huggingface_hub client,
and read back with the real `datasets.load_dataset`."""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import replace
from pathlib import Path

import datasets
import hubserver
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES
from hubserver import FakeHub
from huggingface_hub import CommitOperationAdd, HfApi

from curate.cli import main
from curate.pipeline.build import build
from curate.settings import Settings

fake_hub = hubserver.fake_hub

REPO = "org/name"
PARQUET = "data/train-00000-of-00001.parquet"
TEMPLATE = ROOT / "dataset_card.md"
CONFIG = replace(Settings(), repo_id=REPO)
NEW_ABSTRACT = (
    "We study the curation of scientific abstracts for language model training and show that "
    "stable identifiers derived from normalised text make releases comparable record by record."
)
RELEASE_FILES = {"README.md", "croissant.json", PARQUET, "validation-report.json", "manifest.json"}


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    """v1.0.0 from the bundled sources, v1.1.0 with one abstract added (built against v1)."""
    root = tmp_path_factory.mktemp("pub")
    src = root / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    build([src], root / "v1", CONFIG, template=TEMPLATE)
    (src / "zz.txt").write_text(f"ICML 2025 Papers\n\n{NEW_ABSTRACT}\n", encoding="utf-8")
    build([src], root / "v2", CONFIG, template=TEMPLATE, previous=root / "v1")
    return {"v1": root / "v1", "v2": root / "v2", "src": src}


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """No real waiting: every backoff sleep (ours and huggingface_hub's) is recorded instead."""
    recorded: list[float] = []
    monkeypatch.setattr(time, "sleep", recorded.append)
    return recorded


def folder_files(folder: Path) -> dict[str, bytes]:
    """The files of a build that a release holds: all but its local ones (report.html,
    positions.parquet), which are never uploaded, and the manifest without their hashes."""
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in ("report.html", "positions.parquet")
    }
    manifest = json.loads(files["manifest.json"])
    assert set(manifest.pop("local_files")) >= {"report.html", "positions.parquet"}
    files["manifest.json"] = (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode()
    return files


def publish(folder: Path, *extra: str) -> int:
    return main(["publish", str(folder), "--repo-id", REPO, *extra])


def test_publish_round_trip_and_load_by_tag(fake_hub: FakeHub, builds, sleeps, capsys):
    assert publish(builds["v1"]) == 0
    out = capsys.readouterr().out
    repo = fake_hub.repo(REPO)
    head = repo.head()
    assert f"published {REPO} v1.0.0 (commit {head.sha})" in out
    # one commit on top of the Hub's initial commit, carrying exactly the folder, tagged by sha
    assert [c.message for c in repo.commit_list] == ["initial commit", "Release v1.0.0"]
    assert "fingerprint: " in head.description
    assert head.files == {
        ".gitattributes": repo.commit_list[0].files[".gitattributes"],
        **folder_files(builds["v1"]),
    }
    assert set(folder_files(builds["v1"])) == RELEASE_FILES
    assert (builds["v1"] / "report.html").is_file() and "report.html" not in head.files
    assert repo.tag_targets() == {"v1.0.0": head.sha}
    assert repo.tags["v1.0.0"].message == "curate release 1.0.0"
    assert not repo.private
    tag_call = fake_hub.calls("POST", r"/tag/")[0]
    assert tag_call.path.endswith(f"/tag/{head.sha}")  # tagged by sha, not by "main"
    assert len(fake_hub.calls("POST", r"/commit/")) == 1
    assert sleeps == []

    # the second release: CHANGELOG.md appears, the first tag keeps its content
    assert publish(builds["v2"]) == 0
    v2_sha = repo.head().sha
    assert repo.tag_targets() == {"v1.0.0": head.sha, "v1.1.0": v2_sha}
    assert repo.files("v1.1.0") == {
        ".gitattributes": repo.files("v1.0.0")[".gitattributes"],
        **folder_files(builds["v2"]),
    }
    assert repo.files("v1.0.0") == head.files
    assert repo.commit(v2_sha).message == "Release v1.1.0"

    # the consumer's side: each tag loads exactly its release
    for tag, folder in (("v1.0.0", builds["v1"]), ("v1.1.0", builds["v2"])):
        ds = datasets.load_dataset(REPO, revision=tag, split="train")
        assert ds.to_list() == pq.read_table(folder / PARQUET).to_pylist()
    assert datasets.load_dataset(REPO, revision="v1.0.0", split="train").num_rows == 55
    assert datasets.load_dataset(REPO, revision="v1.1.0", split="train").num_rows == 56
    assert not fake_hub.unknown_requests and not fake_hub.blocked_hosts


def test_republishing_identical_content_is_a_no_op(fake_hub: FakeHub, builds, capsys):
    assert publish(builds["v1"]) == 0
    commits = len(fake_hub.repo(REPO).commits)
    fake_hub.clear_log()
    capsys.readouterr()
    assert publish(builds["v1"]) == 0
    captured = capsys.readouterr()
    assert "already published with this content: no-op" in captured.out
    assert "nothing to do" in captured.err
    assert len(fake_hub.repo(REPO).commits) == commits
    assert [r.method for r in fake_hub.requests if r.method == "POST"] == []


def test_a_rebuild_from_reordered_sources_is_the_published_release(
    fake_hub: FakeHub, builds, tmp_path, capsys
):
    """The drops' abstracts in the reverse order, rebuilt over the published v1: the same
    release (its report and manifest included), which publishing finds already there."""
    assert publish(builds["v1"]) == 0
    src = tmp_path / "src"
    src.mkdir()
    for seed in SEED_FILES:
        header, _, body = seed.read_text(encoding="utf-8").partition("\n\n")
        records = body.rstrip("\n").split("\n\n")
        (src / seed.name).write_text(header + "\n\n" + "\n\n".join(records[::-1]) + "\n")
    out = tmp_path / "dist"
    shutil.copytree(builds["v1"], out)
    result = build([src], out, CONFIG, template=TEMPLATE)
    assert result.version == "1.0.0" and result.diff is not None and result.diff.level is None
    assert result.diff.moved and result.diff.moved > 40
    assert folder_files(out) == folder_files(builds["v1"])
    assert (out / "report.html").read_bytes() != (builds["v1"] / "report.html").read_bytes()
    capsys.readouterr()
    assert publish(out) == 0
    assert "nothing to do" in capsys.readouterr().err


def test_existing_tag_with_other_content_is_refused(fake_hub: FakeHub, builds, tmp_path, capsys):
    assert publish(builds["v1"]) == 0
    # Another 1.0.0, different content: the tag exists and must not change.
    other = tmp_path / "other"
    build([builds["src"]], other, CONFIG, template=TEMPLATE)
    before = (len(fake_hub.repo(REPO).commits), fake_hub.repo(REPO).tag_targets())
    capsys.readouterr()
    assert publish(other) == 1
    err = capsys.readouterr().err
    assert "tag v1.0.0 already exists on org/name with different content" in err
    assert "data/train-00000-of-00001.parquet differs" in err
    assert (len(fake_hub.repo(REPO).commits), fake_hub.repo(REPO).tag_targets()) == before


def test_older_version_than_the_latest_tag_is_refused(fake_hub: FakeHub, builds, capsys):
    assert publish(builds["v2"]) == 0
    capsys.readouterr()
    assert publish(builds["v1"]) == 1
    assert "already has v1.1.0, newer than v1.0.0" in capsys.readouterr().err
    assert fake_hub.repo(REPO).tag_targets().keys() == {"v1.1.0"}


def test_dry_run_changes_nothing(fake_hub: FakeHub, builds, capsys):
    assert publish(builds["v1"], "--dry-run", "--private") == 0
    captured = capsys.readouterr()
    assert "dry run: nothing was changed" in captured.out
    assert "would create dataset repo org/name (private)" in captured.err
    assert "would upload 5 files" in captured.err and "'Release v1.0.0'" in captured.err
    assert PARQUET in captured.err and "would tag that commit v1.0.0" in captured.err
    assert not fake_hub.repos
    assert {r.method for r in fake_hub.requests} <= {"GET", "HEAD"}

    # against an existing repo: files of the previous release that go away are named
    assert publish(builds["v1"]) == 0
    api = HfApi()
    api.create_commit(
        REPO,
        repo_type="dataset",
        commit_message="stray",
        operations=[CommitOperationAdd("notes.txt", b"old notes")],
    )
    commits = len(fake_hub.repo(REPO).commits)
    capsys.readouterr()
    assert publish(builds["v2"], "--dry-run") == 0
    err = capsys.readouterr().err
    assert "would delete notes.txt (not in this release)" in err
    assert len(fake_hub.repo(REPO).commits) == commits and "v1.1.0" not in fake_hub.repo(REPO).tags


def test_files_the_release_no_longer_has_are_deleted(fake_hub: FakeHub, builds):
    assert publish(builds["v1"]) == 0
    HfApi().create_commit(
        REPO,
        repo_type="dataset",
        commit_message="stray",
        operations=[CommitOperationAdd("data/old-shard.parquet", b"PAR1")],
    )
    assert publish(builds["v2"]) == 0
    files = fake_hub.repo(REPO).files("v1.1.0")
    assert "data/old-shard.parquet" not in files
    assert set(files) == RELEASE_FILES | {"CHANGELOG.md", ".gitattributes"}


def test_commit_500_then_success(fake_hub: FakeHub, builds, sleeps, capsys):
    fault = fake_hub.fail("POST", r"/api/datasets/org/name/commit/main$", status=500)
    assert publish(builds["v1"]) == 0
    assert fault.hits == 1
    assert [r.status for r in fake_hub.calls("POST", r"/commit/")] == [500, 200]
    repo = fake_hub.repo(REPO)
    assert [c.message for c in repo.commit_list] == ["initial commit", "Release v1.0.0"]
    assert repo.tag_targets() == {"v1.0.0": repo.head().sha}
    assert sleeps == [1]
    assert "committing to org/name: HTTP 500; retry 1/5 in 1s" in capsys.readouterr().err


def test_rate_limit_on_tag_and_info_are_retried(fake_hub: FakeHub, builds, sleeps):
    fake_hub.fail("GET", r"^/api/datasets/org/name$", status=503)
    fake_hub.fail("POST", r"/tag/", status=429, headers={"Retry-After": "3"})
    assert publish(builds["v1"]) == 0
    assert fake_hub.repo(REPO).tag_targets() == {"v1.0.0": fake_hub.repo(REPO).head().sha}
    assert 3.0 in sleeps and 1 in sleeps


def test_commit_failing_for_good_publishes_nothing(fake_hub: FakeHub, builds, sleeps, capsys):
    fake_hub.add_repo(REPO)
    fake_hub.fail("POST", r"/commit/", status=503, times=None)
    assert publish(builds["v1"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 503" in err and "nothing was published (no commit, no tag)" in err
    assert "Traceback" not in err
    repo = fake_hub.repo(REPO)
    assert [c.message for c in repo.commit_list] == ["initial commit"] and not repo.tags
    assert len(fake_hub.calls("POST", r"/commit/")) == 6  # 1 try + 5 retries
    assert sleeps == [1, 2, 4, 8, 8]


def test_tag_failing_for_good_leaves_an_untagged_commit_that_a_rerun_tags(
    fake_hub: FakeHub, builds, sleeps, capsys
):
    fault = fake_hub.fail("POST", r"/tag/", status=502, times=None)
    assert publish(builds["v1"]) == 1
    err = capsys.readouterr().err
    repo = fake_hub.repo(REPO)
    sha = repo.head().sha
    assert f"The commit {sha[:12]} is on main of org/name but untagged" in err
    assert "run the same `curate publish` again to add the tag v1.0.0" in err
    assert not repo.tags

    fault.remaining = 0
    fake_hub.clear_log()
    assert publish(builds["v1"]) == 0
    assert repo.tag_targets() == {"v1.0.0": sha}
    assert fake_hub.calls("POST", r"/commit/") == []  # only the tag was added
    assert datasets.load_dataset(REPO, revision="v1.0.0", split="train").num_rows == 55


def test_commit_that_landed_despite_a_502_is_not_made_twice(fake_hub: FakeHub, builds, sleeps):
    """A proxy may answer 5xx after the Hub wrote the commit: the retry must notice."""
    real = fake_hub._commit
    first = True

    def commit_then_fail_once(request, repo, rev):
        nonlocal first
        response = real(request, repo, rev)
        if first:
            first = False
            raise hubserver.HubError(502, "Bad gateway")
        return response

    fake_hub._commit = commit_then_fail_once  # type: ignore[method-assign]
    assert publish(builds["v1"]) == 0
    repo = fake_hub.repo(REPO)
    assert [c.message for c in repo.commit_list] == ["initial commit", "Release v1.0.0"]
    assert repo.tag_targets() == {"v1.0.0": repo.head().sha}
    assert len(fake_hub.calls("POST", r"/commit/")) == 1


def test_wrong_token_gives_one_line_and_never_shows_the_token(
    fake_hub: FakeHub, builds, monkeypatch, capsys, caplog, tmp_path
):
    secret = "hf_DistinctiveSecretToken1234567890abcd"
    monkeypatch.setenv("HF_TOKEN", secret)
    caplog.set_level(logging.DEBUG)
    folder = tmp_path / "v1"
    shutil.copytree(builds["v1"], folder)
    assert publish(folder) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("curate: error")]
    assert len(lines) == 1 and "HTTP 401" in lines[0] and "hf auth login" in lines[0]
    assert "HF_TOKEN" in lines[0] and "Traceback" not in err
    assert not fake_hub.repos

    # the right token, and still it appears nowhere: not on the terminal, not in the logs,
    # not in any file (the build folder, the caches)
    fake_hub.token = secret
    assert publish(folder) == 0
    assert publish(folder, "--dry-run") == 0
    captured = capsys.readouterr()
    assert fake_hub.repo(REPO).tags
    assert secret not in captured.out + captured.err
    assert all(secret not in r.getMessage() for r in caplog.records)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert fake_hub.calls("POST", r"/commit/")[-1].headers["Authorization"] == f"Bearer {secret}"


def test_forbidden_and_missing_token(fake_hub: FakeHub, builds, monkeypatch, capsys):
    fake_hub.fail("POST", r"/repos/create$", status=403, times=None)
    assert publish(builds["v1"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 403" in err and "hf auth login" in err and len(err.strip().splitlines()) <= 3
    monkeypatch.delenv("HF_TOKEN")
    assert publish(builds["v1"]) == 1
    assert "not logged in to the Hugging Face Hub" in capsys.readouterr().err
    assert not fake_hub.repos


def test_private_flag(fake_hub: FakeHub, builds, capsys):
    # The fake asks for a token on the LFS storage URL of a private repo, where the Hub hands
    # out presigned URLs: switch its auth off for this test.
    fake_hub.token = None
    assert publish(builds["v1"], "--private") == 0
    assert fake_hub.repo(REPO).private
    fake_hub.repo(REPO).private = False
    capsys.readouterr()
    assert publish(builds["v2"], "--private") == 1
    assert "exists and is public" in capsys.readouterr().err
    assert "v1.1.0" not in fake_hub.repo(REPO).tags


def test_folders_that_may_not_be_published(fake_hub: FakeHub, builds, tmp_path, capsys):
    def copy(name: str) -> Path:
        folder = tmp_path / name
        shutil.copytree(builds["v1"], folder)
        return folder

    errors = copy("errors")
    report = json.loads((errors / "validation-report.json").read_text())
    report["summary"]["errors"] = 1
    (errors / "validation-report.json").write_text(json.dumps(report))
    assert publish(errors) == 1
    err = capsys.readouterr().err
    assert "does not match its sha256" in err  # editing the report breaks the manifest first
    manifest = json.loads((errors / "manifest.json").read_text())
    from curate.io import sha256_file

    manifest["files"]["validation-report.json"]["sha256"] = sha256_file(
        errors / "validation-report.json"
    )
    (errors / "manifest.json").write_text(json.dumps(manifest))
    assert publish(errors) == 1
    assert "holds 1 validation error(s)" in capsys.readouterr().err

    tampered = copy("tampered")
    with (tampered / PARQUET).open("ab") as fh:
        fh.write(b"\0")
    assert publish(tampered) == 1
    assert f"{PARQUET} does not match its sha256 in manifest.json" in capsys.readouterr().err

    extra = copy("extra")
    (extra / "notes.txt").write_text("scratch")
    assert publish(extra) == 1
    assert "notes.txt is not listed in manifest.json" in capsys.readouterr().err

    assert main(["publish", str(builds["v1"]), "--repo-id", "other/repo"]) == 1
    assert "was built for org/name" in capsys.readouterr().err
    assert main(["publish", str(tmp_path / "missing"), "--repo-id", REPO]) == 2
    assert main(["publish", str(builds["v1"]), "--repo-id", "not-a-repo"]) == 2
    assert not fake_hub.repos and fake_hub.requests == []  # refused before any request


def test_previous_release_from_the_hub(fake_hub: FakeHub, builds, tmp_path, capsys):
    out = tmp_path / "out"
    src = builds["src"]
    # no repo yet: an error, unless the first release is allowed
    args = ["build", str(src), "--out", str(out), "--template", str(TEMPLATE)]
    assert main([*args, "--previous", f"hub:{REPO}"]) == 1
    assert "not found on the Hub" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--previous", f"hub:{REPO}", "--allow-first-release"]) == 0
    assert json.loads((out / "manifest.json").read_text())["version"] == "1.0.0"

    assert publish(builds["v1"]) == 0
    # the newest vX.Y.Z tag is the previous release; an explicit revision works too
    result = main([*args, "--previous", f"hub:{REPO}"])
    assert result == 0
    captured = capsys.readouterr()
    assert "since v1.0.0: 55 → 56 records: 1 added" in captured.out
    changelog = (out / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## 1.1.0 (minor release)" in changelog
    assert main([*args, "--previous", f"hub:{REPO}@v1.0.0"]) == 0
    assert main([*args, "--previous", f"hub:{REPO}@v9.9.9"]) == 1
    assert "has no revision 'v9.9.9'" in capsys.readouterr().err
    assert main(["diff", f"hub:{REPO}@v1.0.0", str(builds["v2"]), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["added"] == 1


def test_lfs_upload_failing_for_good_publishes_nothing(fake_hub: FakeHub, builds, sleeps, capsys):
    fake_hub.fail("PUT", r"^/__fake_lfs/", status=500, times=None)
    assert publish(builds["v1"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 500" in err and "nothing was published" in err and "Traceback" not in err
    repo = fake_hub.repo(REPO)  # created, but holding no commit of ours and no tag
    assert [c.message for c in repo.commit_list] == ["initial commit"] and not repo.tags


def test_an_edit_and_unchanged_rebuilds_against_the_hub(
    fake_hub: FakeHub, tmp_path, sleeps, capsys
):
    """Through the fake Hub: v1.0.0 published; a one-word edit of one abstract is 1 edited
    (not 1 removed and 1 added) with its word diff, in the changelog and in `curate diff`; it
    is published as 1.0.1; two unchanged rebuilds against the Hub keep 1.0.1, and publishing
    them does nothing."""
    src = tmp_path / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    build([src], tmp_path / "v1", CONFIG, template=TEMPLATE)
    assert publish(tmp_path / "v1") == 0
    seed = src / SEED_FILES[0].name
    text = seed.read_text(encoding="utf-8")
    assert " novel " in text
    seed.write_text(text.replace(" novel ", " new ", 1), encoding="utf-8")
    edited = build([src], tmp_path / "v2", CONFIG, template=TEMPLATE, previous=f"hub:{REPO}")
    assert edited.version == "1.0.1"
    assert (len(edited.diff.edited), edited.diff.added, edited.diff.removed) == (1, [], [])
    assert "[-novel-] {+new+}" in edited.diff.edited[0].words
    changelog = (tmp_path / "v2" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "### Edited (1)" in changelog and "~~novel~~ **new**" in changelog
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "v1"), str(tmp_path / "v2")]) == 0
    out = capsys.readouterr().out
    assert "1 edited" in out and "[-novel-] {+new+}" in out
    assert publish(tmp_path / "v2") == 0
    for k in range(2):
        again = build([src], tmp_path / f"again{k}", CONFIG, template=TEMPLATE,
                      previous=f"hub:{REPO}")  # fmt: skip
        assert again.version == "1.0.1" and again.diff.level is None
        capsys.readouterr()
        assert publish(tmp_path / f"again{k}") == 0
        assert "already published with this content: no-op" in capsys.readouterr().out


def test_a_build_with_its_own_text_column_publishes_and_loads(
    fake_hub: FakeHub, builds, tmp_path, capsys
):
    """The fingerprint is over the table as published: with `text_column = "text"` it was
    computed over the columns' internal names, and publish refused every such build ("the
    Parquet's content does not match the fingerprint in manifest.json")."""
    settings = replace(CONFIG, text_column="text", noun=("document", "documents"))
    build([builds["src"]], tmp_path / "dist", settings, template=TEMPLATE)
    capsys.readouterr()
    assert publish(tmp_path / "dist") == 0, capsys.readouterr().err
    ds = datasets.load_dataset(REPO, revision="v1.0.0", split="train")
    assert ds.column_names[:3] == ["id", "text", "text_raw"]
    assert ds.to_list() == pq.read_table(tmp_path / "dist" / PARQUET).to_pylist()
