"""The fake Hub in hubserver.py works with the real huggingface_hub and datasets clients."""

from __future__ import annotations

import hashlib
import io
import json
import time
from pathlib import Path

import hubserver
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hubserver import FAKE_TOKEN, FakeHub
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import (
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

# Re-export the fixture (a plain `from hubserver import fake_hub` works too, but ruff then flags
# every test parameter named `fake_hub` as F811).
fake_hub = hubserver.fake_hub

REPO = "org/name"

README = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*.parquet
---

# A tiny test dataset
"""


def parquet_bytes(rows: list[dict]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    return buf.getvalue()


ROWS_V1 = [{"id": 1, "text": "hello"}, {"id": 2, "text": "world"}]
ROWS_V2 = [{"id": 1, "text": "hello"}, {"id": 2, "text": "brave new"}, {"id": 3, "text": "world"}]


def write_folder(root: Path, rows: list[dict]) -> dict[str, bytes]:
    files = {
        "README.md": README.encode(),
        "data/train-00000-of-00001.parquet": parquet_bytes(rows),
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return files


def publish_v1(api: HfApi, tmp_path: Path) -> dict[str, bytes]:
    api.create_repo(REPO, repo_type="dataset", private=False, exist_ok=True)
    files = write_folder(tmp_path / "v1", ROWS_V1)
    api.upload_folder(
        repo_id=REPO,
        repo_type="dataset",
        folder_path=tmp_path / "v1",
        commit_message="Release v1.0.0",
    )
    api.create_tag(REPO, tag="v1.0.0", tag_message="first", repo_type="dataset")
    return files


def test_upload_folder_and_tag(fake_hub: FakeHub, tmp_path: Path) -> None:
    api = HfApi()
    assert api.endpoint == fake_hub.url
    files = publish_v1(api, tmp_path)

    repo = fake_hub.repo(REPO)
    head = repo.head()
    assert head.message == "Release v1.0.0"
    assert head.parents == [repo.commit_list[0].sha]  # on top of the "initial commit"
    for path, data in files.items():
        assert head.files[path] == data
    assert set(head.files) == {".gitattributes", *files}
    assert head.lfs_paths == {"data/train-00000-of-00001.parquet"}  # README went inline
    assert repo.tag_targets() == {"v1.0.0": head.sha}
    assert repo.tags["v1.0.0"].message == "first"

    # the upload went through validate-yaml, preupload, LFS batch + PUT + verify, commit
    routes = [r.route for r in fake_hub.requests]
    for route in (
        "create-repo",
        "validate-yaml",
        "preupload",
        "lfs-batch",
        "lfs-put",
        "lfs-verify",
        "commit",
        "create-tag",
    ):
        assert route in routes, route
    lfs_put = fake_hub.calls("PUT", r"^/__fake_lfs/")[0]
    assert "Authorization" not in lfs_put.headers  # presigned-URL style: no token sent
    commit_req = fake_hub.calls("POST", r"/commit/main$")[0]
    assert commit_req.headers["Authorization"] == f"Bearer {FAKE_TOKEN}"
    keys = [json.loads(line)["key"] for line in commit_req.body.splitlines()]
    assert keys == ["header", "file", "lfsFile"]
    assert not fake_hub.unknown_requests

    # read API
    info = api.dataset_info(REPO, revision="v1.0.0", files_metadata=True)
    assert info.sha == head.sha
    siblings = {s.rfilename: s for s in info.siblings}
    assert set(siblings) == set(head.files)
    parquet = files["data/train-00000-of-00001.parquet"]
    lfs = siblings["data/train-00000-of-00001.parquet"].lfs
    assert lfs is not None and lfs.sha256 == hashlib.sha256(parquet).hexdigest()
    assert info.card_data is not None and info.card_data.configs[0]["config_name"] == "default"
    assert api.repo_exists(REPO, repo_type="dataset")
    assert not api.repo_exists("org/missing", repo_type="dataset")
    refs = api.list_repo_refs(REPO, repo_type="dataset")
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", head.sha)]
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1.0.0", head.sha)]
    assert sorted(api.list_repo_files(REPO, repo_type="dataset", revision="v1.0.0")) == sorted(
        head.files
    )
    commits = api.list_repo_commits(REPO, repo_type="dataset")
    assert [c.title for c in commits] == ["Release v1.0.0", "initial commit"]
    [entry] = api.get_paths_info(REPO, ["README.md"], repo_type="dataset", revision=head.sha)
    assert entry.size == len(README.encode())
    path = api.hf_hub_download(
        REPO, "data/train-00000-of-00001.parquet", repo_type="dataset", revision="v1.0.0"
    )
    assert Path(path).read_bytes() == parquet


def test_load_dataset_by_tag(fake_hub: FakeHub, tmp_path: Path) -> None:
    import datasets

    api = HfApi()
    publish_v1(api, tmp_path)
    ds = datasets.load_dataset(REPO, revision="v1.0.0")
    assert list(ds) == ["train"]
    assert ds["train"].to_list() == ROWS_V1

    # second release: a changed parquet file, committed with create_commit this time
    v2 = parquet_bytes(ROWS_V2)
    info = api.create_commit(
        REPO,
        repo_type="dataset",
        operations=[CommitOperationAdd("data/train-00000-of-00001.parquet", v2)],
        commit_message="Release v1.1.0",
    )
    api.create_tag(REPO, tag="v1.1.0", repo_type="dataset")
    repo = fake_hub.repo(REPO)
    assert repo.tag_targets() == {"v1.0.0": repo.commit_list[1].sha, "v1.1.0": info.oid}
    assert repo.files("v1.1.0")["data/train-00000-of-00001.parquet"] == v2
    assert repo.files("v1.1.0")["README.md"] == README.encode()  # carried over

    assert datasets.load_dataset(REPO, revision="v1.0.0")["train"].to_list() == ROWS_V1
    assert datasets.load_dataset(REPO, revision="v1.1.0")["train"].to_list() == ROWS_V2
    assert datasets.load_dataset(REPO, revision=info.oid)["train"].to_list() == ROWS_V2
    assert not fake_hub.unknown_requests, fake_hub.unknown_requests
    assert not fake_hub.blocked_hosts  # nothing tried to reach the real network


def test_commit_is_not_retried_on_500(fake_hub: FakeHub) -> None:
    """create_commit POSTs /commit once with a plain session call (no http_backoff), so a 5xx
    surfaces immediately; nothing is committed and a second call succeeds."""
    api = HfApi()
    api.create_repo(REPO, repo_type="dataset")
    fault = fake_hub.fail("POST", r"/api/datasets/org/name/commit/", status=500)
    ops = [CommitOperationAdd("a.txt", b"a")]
    with pytest.raises(HfHubHTTPError) as excinfo:
        api.create_commit(REPO, repo_type="dataset", operations=ops, commit_message="m")
    assert excinfo.value.response.status_code == 500
    assert type(excinfo.value) is HfHubHTTPError
    assert fault.hits == 1 and len(fake_hub.calls("POST", r"/commit/")) == 1
    assert len(fake_hub.repo(REPO).commits) == 1  # only the initial commit

    ops = [CommitOperationAdd("a.txt", b"a")]
    api.create_commit(REPO, repo_type="dataset", operations=ops, commit_message="m")
    assert fake_hub.repo(REPO).files()["a.txt"] == b"a"


def test_preupload_and_lfs_are_retried_on_5xx_and_429(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """preupload, the LFS batch and the LFS PUT go through http_backoff (retries on
    408/429/500/502/503/504); sleep is stubbed to keep the test fast."""
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    api = HfApi()
    api.create_repo(REPO, repo_type="dataset")
    fake_hub.fail("POST", r"/preupload/", status=503)
    fake_hub.fail(
        "POST", r"\.git/info/lfs/objects/batch$", status=429, headers={"Retry-After": "2"}
    )
    fake_hub.fail("PUT", r"^/__fake_lfs/", status=500)
    api.upload_file(
        path_or_fileobj=b"\0binary", path_in_repo="x.bin", repo_id=REPO, repo_type="dataset"
    )
    assert fake_hub.repo(REPO).files()["x.bin"] == b"\0binary"
    assert [r.status for r in fake_hub.calls(None, "/preupload/")] == [503, 200]
    assert [r.status for r in fake_hub.calls(None, "lfs/objects/batch")] == [429, 200]
    assert [r.status for r in fake_hub.calls("PUT", "__fake_lfs")] == [500, 200]
    assert sorted(sleeps) == [1, 1, 3]  # base wait 1s (x2), Retry-After + 1s


def test_tag_errors_are_not_retried(fake_hub: FakeHub, tmp_path: Path) -> None:
    api = HfApi()
    publish_v1(api, tmp_path)
    target = fake_hub.repo(REPO).tags["v1.0.0"].target

    with pytest.raises(HfHubHTTPError) as excinfo:
        api.create_tag(REPO, tag="v1.0.0", repo_type="dataset")
    assert excinfo.value.response.status_code == 409
    assert type(excinfo.value) is HfHubHTTPError
    api.create_tag(REPO, tag="v1.0.0", repo_type="dataset", exist_ok=True)  # swallowed
    assert fake_hub.repo(REPO).tags["v1.0.0"].target == target

    fake_hub.fail("POST", r"/tag/", status=502)
    with pytest.raises(HfHubHTTPError) as excinfo:
        api.create_tag(REPO, tag="v2", repo_type="dataset")
    assert excinfo.value.response.status_code == 502
    assert len(fake_hub.calls("POST", r"/tag/")) == 4  # 2 from publish/exist_ok, 1 409, 1 502

    with pytest.raises(RevisionNotFoundError):
        api.create_tag(REPO, tag="v3", revision="no-such-branch", repo_type="dataset")

    api.delete_tag(REPO, tag="v1.0.0", repo_type="dataset")
    assert "v1.0.0" not in fake_hub.repo(REPO).tags
    with pytest.raises(RevisionNotFoundError):
        api.delete_tag(REPO, tag="v1.0.0", repo_type="dataset")


def test_auth_errors(fake_hub: FakeHub) -> None:
    # wrong token -> 401 "Invalid credentials" -> plain HfHubHTTPError
    bad = HfApi(token="hf_wrong")
    with pytest.raises(HfHubHTTPError) as excinfo:
        bad.create_repo(REPO, repo_type="dataset")
    assert excinfo.value.response.status_code == 401
    assert type(excinfo.value) is HfHubHTTPError
    assert not fake_hub.repos

    api = HfApi()
    api.create_repo(REPO, repo_type="dataset", private=True)
    assert fake_hub.repo(REPO).private

    # anonymous write -> 401
    anon = HfApi(token=False)
    with pytest.raises(HfHubHTTPError) as excinfo:
        anon.create_tag(REPO, tag="v0", repo_type="dataset")
    assert excinfo.value.response.status_code == 401
    # anonymous read of a private repo -> 401 + X-Error-Code: RepoNotFound (as the Hub does)
    with pytest.raises(RepositoryNotFoundError) as excinfo:
        anon.dataset_info(REPO)
    assert excinfo.value.response.status_code == 401
    assert not anon.repo_exists(REPO, repo_type="dataset")

    # injected 401 / 403: not retried. A bare 401 on /api/{type}s/... is reported as
    # RepositoryNotFoundError (the Hub answers 401 for private/missing repos); 403 is plain.
    fake_hub.fail("GET", r"/refs$", status=401, times=None)
    fake_hub.fail("POST", r"/preupload/", status=403)
    with pytest.raises(RepositoryNotFoundError) as excinfo:
        api.list_repo_refs(REPO, repo_type="dataset")
    assert excinfo.value.response.status_code == 401
    with pytest.raises(HfHubHTTPError) as excinfo:
        api.upload_file(path_or_fileobj=b"x", path_in_repo="x", repo_id=REPO, repo_type="dataset")
    assert excinfo.value.response.status_code == 403
    assert type(excinfo.value) is HfHubHTTPError
    assert len(fake_hub.calls("POST", "/preupload/")) == 1


def test_missing_things(fake_hub: FakeHub) -> None:
    api = HfApi()
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info("org/missing")
    api.create_repo(REPO, repo_type="dataset")
    with pytest.raises(RevisionNotFoundError):
        api.dataset_info(REPO, revision="v9")
    # create_repo again: 409 swallowed by exist_ok
    api.create_repo(REPO, repo_type="dataset", exist_ok=True)
    with pytest.raises(HfHubHTTPError) as excinfo:
        api.create_repo(REPO, repo_type="dataset")
    assert excinfo.value.response.status_code == 409
    assert not fake_hub.unknown_requests  # 404s above were answered by known routes
    fake_hub.clear_log()
    with pytest.raises(HfHubHTTPError) as excinfo:
        api.super_squash_history(REPO, repo_type="dataset")  # not implemented by the fake
    assert excinfo.value.response.status_code == 404
    assert [r.path for r in fake_hub.unknown_requests] == [
        "/api/datasets/org/name/super-squash/main"
    ]


def test_download_head_is_retried_once_nothing_is_cached(
    fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hf_hub_download's first HEAD has no retries (fast fallback to the local cache); with
    nothing cached and a retryable status it issues the HEAD again, this time with backoff."""
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    api = HfApi()
    files = publish_v1(api, tmp_path)
    fake_hub.fail("HEAD", r"/resolve/v1\.0\.0/README\.md$", status=500, times=2)
    path = api.hf_hub_download(REPO, "README.md", repo_type="dataset", revision="v1.0.0")
    assert Path(path).read_bytes() == files["README.md"]
    assert [r.status for r in fake_hub.calls("HEAD", r"/README\.md$")] == [500, 500, 200]
    assert sleeps == [1]
