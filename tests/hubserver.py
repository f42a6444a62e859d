"""A local, in-memory fake of the Hugging Face Hub HTTP API, for tests.

The fake speaks enough of the real Hub protocol that the *real* ``huggingface_hub.HfApi`` client
(``create_repo``, ``upload_folder``/``create_commit`` over the legacy LFS protocol, ``create_tag``,
``list_repo_refs``, ...) and the *real* ``datasets.load_dataset("org/name", revision=...)`` work
against it. It listens on 127.0.0.1 only, on a free port.

Usage (pytest)::

    from hubserver import FakeHub, fake_hub  # noqa: F401  (the fixture must be imported)
    # (ruff then reports F811 on every `fake_hub` parameter; `fake_hub = hubserver.fake_hub`
    #  after `import hubserver` avoids that)

    def test_something(fake_hub: FakeHub):
        api = HfApi()  # endpoint and token come from the patched environment
        api.create_repo("org/name", repo_type="dataset")
        ...
        assert fake_hub.repo("org/name").files("v1.0.0")["README.md"] == b"..."
        fake_hub.fail("POST", r"/commit/", status=500)   # next commit answers 500 once
        fake_hub.token = None                            # turn auth checks off

Usage (standalone)::

    with FakeHub(token="hf_x") as hub:
        api = HfApi(endpoint=hub.url, token="hf_x")

The fixture ``fake_hub`` also patches the module-level constants of ``huggingface_hub`` and
``datasets`` that are frozen at import time (endpoint, URL templates, cache dirs, timeouts, Xet,
telemetry, offline mode), so the real clients talk to the fake and nothing reaches the network.

State is inspectable (``hub.repos``, ``hub.repo(id).commits``/``.tags``/``.branches``,
``hub.requests``, ``hub.unknown_requests``) and faults can be injected (``hub.fail(...)``).
"""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import hashlib
import json
import logging
import re
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlencode

import pytest
import yaml
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

logger = logging.getLogger("hubserver")

FAKE_TOKEN = "hf_fakehubtesttoken0000000000000000000"
FAKE_USER = "fake-user"
REPO_TYPES_PLURAL = {"models": "model", "datasets": "dataset", "spaces": "space"}
URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}

# What the Hub puts in `.gitattributes` of a freshly created repo (abridged): LFS patterns.
DEFAULT_GITATTRIBUTES = (
    "\n".join(
        f"{pattern} filter=lfs diff=lfs merge=lfs -text"
        for pattern in (
            "*.7z",
            "*.arrow",
            "*.bin",
            "*.bz2",
            "*.ckpt",
            "*.ftz",
            "*.gz",
            "*.h5",
            "*.joblib",
            "*.lfs.*",
            "*.lz4",
            "*.mds",
            "*.mlmodel",
            "*.model",
            "*.msgpack",
            "*.npy",
            "*.npz",
            "*.onnx",
            "*.ot",
            "*.parquet",
            "*.pb",
            "*.pickle",
            "*.pkl",
            "*.pt",
            "*.pth",
            "*.rar",
            "*.safetensors",
            "saved_model/**/*",
            "*.tar.*",
            "*.tar",
            "*.tflite",
            "*.tgz",
            "*.wasm",
            "*.xz",
            "*.zip",
            "*.zst",
            "*tfevents*",
            "*.mp3",
            "*.ogg",
            "*.wav",
            "*.flac",
            "*.jpg",
            "*.jpeg",
            "*.png",
            "*.webp",
            "*.gif",
            "*.mp4",
            "*.webm",
        )
    )
    + "\n"
).encode()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def git_blob_oid(data: bytes) -> str:
    """The git object id of a blob (same as ``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n"
    ).encode()


# --------------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Blob:
    """One file version. ``lfs`` tells whether it was committed as an LFS pointer."""

    data: bytes
    lfs: bool = False

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def pointer(self) -> bytes:
        return lfs_pointer(self.sha256, len(self.data))

    @property
    def oid(self) -> str:
        """Git object id as the Hub reports it (for LFS files: the oid of the pointer file)."""
        return git_blob_oid(self.pointer if self.lfs else self.data)

    @property
    def etag(self) -> str:
        """What the Hub sends as (X-Linked-)ETag: git oid for regular files, sha256 for LFS."""
        return self.sha256 if self.lfs else self.oid


@dataclass
class Commit:
    sha: str
    parents: list[str]
    title: str
    description: str
    tree: dict[str, Blob]
    date: str
    author: str = FAKE_USER

    @property
    def message(self) -> str:
        return self.title

    @property
    def files(self) -> dict[str, bytes]:
        """The full file tree at this commit, ``{path: bytes}``."""
        return {path: blob.data for path, blob in sorted(self.tree.items())}

    @property
    def lfs_paths(self) -> set[str]:
        return {path for path, blob in self.tree.items() if blob.lfs}


@dataclass
class Tag:
    name: str
    target: str  # commit sha
    message: str | None = None


@dataclass
class FakeRepo:
    repo_id: str
    repo_type: str = "dataset"
    private: bool = False
    created_at: str = field(default_factory=_now)
    commits: dict[str, Commit] = field(default_factory=dict)  # sha -> commit, insertion-ordered
    branches: dict[str, str] = field(default_factory=dict)  # name -> sha
    tags: dict[str, Tag] = field(default_factory=dict)
    pull_requests: dict[int, str] = field(default_factory=dict)  # num -> sha
    lfs_objects: dict[str, bytes] = field(default_factory=dict)  # sha256 -> content

    # -- inspection helpers ------------------------------------------------------------------------
    @property
    def commit_list(self) -> list[Commit]:
        """All commits, oldest first."""
        return list(self.commits.values())

    def resolve(self, revision: str) -> str | None:
        """Branch / tag / ``refs/...`` / full or short sha -> commit sha (None if unknown)."""
        rev = revision
        if rev.startswith("refs/heads/"):
            return self.branches.get(rev[len("refs/heads/") :])
        if rev.startswith("refs/tags/"):
            tag = self.tags.get(rev[len("refs/tags/") :])
            return tag.target if tag else None
        if m := re.fullmatch(r"refs/pr/(\d+)", rev):
            return self.pull_requests.get(int(m.group(1)))
        if rev in self.branches:
            return self.branches[rev]
        if rev in self.tags:
            return self.tags[rev].target
        if rev in self.commits:
            return rev
        if re.fullmatch(r"[0-9a-f]{7,39}", rev):
            matches = [sha for sha in self.commits if sha.startswith(rev)]
            if len(matches) == 1:
                return matches[0]
        return None

    def commit(self, revision: str = "main") -> Commit:
        sha = self.resolve(revision)
        if sha is None:
            raise KeyError(f"unknown revision {revision!r} in {self.repo_type} {self.repo_id}")
        return self.commits[sha]

    def head(self, branch: str = "main") -> Commit:
        return self.commits[self.branches[branch]]

    def files(self, revision: str = "main") -> dict[str, bytes]:
        return self.commit(revision).files

    def tag_targets(self) -> dict[str, str]:
        return {name: tag.target for name, tag in self.tags.items()}

    def history(self, revision: str = "main") -> list[Commit]:
        """First-parent history, newest first."""
        out: list[Commit] = []
        sha: str | None = self.resolve(revision)
        while sha is not None:
            commit = self.commits[sha]
            out.append(commit)
            sha = commit.parents[0] if commit.parents else None
        return out


@dataclass
class RequestRecord:
    method: str
    path: str  # decoded path
    raw_uri: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int = 0
    injected: bool = False  # answered by an injected fault
    route: str | None = None  # name of the handler, None if unknown

    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        flag = " [injected]" if self.injected else ""
        return f"<{self.method} {self.raw_uri} -> {self.status}{flag}>"


@dataclass
class Fault:
    method: str | None
    pattern: re.Pattern[str]
    status: int
    remaining: int | None  # None = forever
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hits: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.remaining is not None and self.remaining <= 0:
            return False
        if self.method is not None and self.method.upper() != method:
            return False
        return self.pattern.search(path) is not None


class HubError(Exception):
    def __init__(
        self, status: int, message: str, code: str | None = None, headers: dict | None = None
    ):
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, headers or {}


# --------------------------------------------------------------------------------------------------
# Server
# --------------------------------------------------------------------------------------------------


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs) -> None:  # werkzeug logs every request otherwise
        pass


class FakeHub:
    """In-memory fake of the Hugging Face Hub HTTP API.

    Args:
        token: if set, write endpoints (and any request carrying a different bearer token) need
            ``Authorization: Bearer <token>`` or get a 401. Private repos need it to be read.
        require_auth_for_reads: if True, every endpoint needs the token.
        lfs_threshold: files at least this big are uploaded as LFS (the Hub uses 10 MB).
        tree_page_size: entries per page of ``/tree`` listings (Link-header pagination).
    """

    def __init__(
        self,
        token: str | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        require_auth_for_reads: bool = False,
        lfs_threshold: int = 10 * 1024 * 1024,
        tree_page_size: int = 1000,
    ) -> None:
        self.token = token
        self.require_auth_for_reads = require_auth_for_reads
        self.lfs_threshold = lfs_threshold
        self.tree_page_size = tree_page_size
        self.repos: dict[tuple[str, str], FakeRepo] = {}
        self.requests: list[RequestRecord] = []
        self.faults: list[Fault] = []
        self.blocked_hosts: list[str] = []  # filled by the fixture's network guard
        self._lock = threading.RLock()
        self._host, self._port = host, port
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> FakeHub:
        self._server = make_server(
            self._host, self._port, self._wsgi, threaded=True, request_handler=_QuietHandler
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="FakeHub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "FakeHub not started"
        return f"http://{self._host}:{self._server.server_port}"

    endpoint = url

    # -- inspection / setup API --------------------------------------------------------------------
    def repo(self, repo_id: str, repo_type: str = "dataset") -> FakeRepo:
        return self.repos[(repo_type, repo_id)]

    def add_repo(self, repo_id: str, repo_type: str = "dataset", private: bool = False) -> FakeRepo:
        """Create a repo directly (like the Hub does: one 'initial commit' with .gitattributes)."""
        with self._lock:
            if (repo_type, repo_id) in self.repos:
                return self.repos[(repo_type, repo_id)]
            repo = FakeRepo(repo_id=repo_id, repo_type=repo_type, private=private)
            self.repos[(repo_type, repo_id)] = repo
            sha = self._new_commit(
                repo,
                None,
                "initial commit",
                "",
                {".gitattributes": Blob(DEFAULT_GITATTRIBUTES)},
                author="system",
            )
            repo.branches["main"] = sha
            return repo

    def fail(
        self,
        method: str | None,
        path_regex: str,
        status: int = 500,
        times: int | None = 1,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Fault:
        """Make the next ``times`` requests (None = all) matching ``method`` (None = any) and
        ``re.search(path_regex, decoded_path)`` answer ``status``."""
        fault = Fault(
            method=method.upper() if method else None,
            pattern=re.compile(path_regex),
            status=status,
            remaining=times,
            body=json_body if json_body is not None else {"error": f"FakeHub injected {status}"},
            headers=dict(headers or {}),
        )
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def calls(
        self, method: str | None = None, path_regex: str | None = None
    ) -> list[RequestRecord]:
        """Logged requests, optionally filtered by method and ``re.search`` on the decoded path."""
        with self._lock:
            return [
                r
                for r in self.requests
                if (method is None or r.method == method.upper())
                and (path_regex is None or re.search(path_regex, r.path))
            ]

    @property
    def unknown_requests(self) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.requests if r.route is None]

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- WSGI plumbing -----------------------------------------------------------------------------
    def _wsgi(self, environ: dict, start_response: Any) -> Any:
        request = Request(environ)
        raw_uri = environ.get("RAW_URI") or environ.get("REQUEST_URI") or request.full_path
        body = request.get_data()
        record = RequestRecord(
            method=request.method,
            path=request.path,
            raw_uri=raw_uri,
            query={k: request.args.getlist(k) for k in request.args},
            headers=dict(request.headers),
            body=body,
        )
        with self._lock:
            self.requests.append(record)
        try:
            response = self._dispatch(request, record, raw_uri.split("?", 1)[0])
        except HubError as err:
            response = self._error_response(err)
        except Exception as err:  # a bug in the fake: make it loud
            logger.exception("FakeHub crashed on %s %s", request.method, raw_uri)
            response = self._error_response(HubError(500, f"FakeHub internal error: {err!r}"))
        record.status = response.status_code
        return response(environ, start_response)

    @staticmethod
    def _json(data: Any, status: int = 200, headers: dict | None = None) -> Response:
        return Response(
            json.dumps(data), status=status, headers=headers, content_type="application/json"
        )

    def _error_response(self, err: HubError) -> Response:
        headers = {"X-Error-Message": err.message, **err.headers}
        if err.code:
            headers["X-Error-Code"] = err.code
        return self._json({"error": err.message}, status=err.status, headers=headers)

    def _dispatch(self, request: Request, record: RequestRecord, raw_path: str) -> Response:
        method = request.method
        # 1. injected faults
        with self._lock:
            for fault in self.faults:
                if fault.matches(method, request.path):
                    fault.hits += 1
                    if fault.remaining is not None:
                        fault.remaining -= 1
                    record.injected, record.route = True, "fault"
                    body = fault.body
                    if isinstance(body, (dict, list)):
                        return self._json(body, status=fault.status, headers=fault.headers)
                    return Response(str(body), status=fault.status, headers=fault.headers)

        # 2. routing (on the raw path so that %2F inside a revision stays one segment)
        segs = [unquote(s) for s in raw_path.split("/")[1:]]
        route = self._route(method, segs)
        if route is None:
            msg = f"FakeHub: no route for {method} {raw_path}"
            logger.warning(msg)
            print(msg, file=sys.stderr)
            raise HubError(404, msg)
        name, handler, kwargs, is_write = route
        record.route = name

        # 3. auth (before the repo lookup, like the Hub: a bad token is a 401 even for a missing
        # repo), then resolve the repo key to the repo (404 RepoNotFound if missing)
        repo_key = kwargs.get("repo")
        with self._lock:
            existing = self.repos.get(repo_key) if repo_key else None
        self._check_auth(request, is_write, existing)
        if repo_key:
            kwargs["repo"] = self._get_repo(*repo_key)
        return handler(request, **kwargs)

    def _check_auth(self, request: Request, is_write: bool, repo: FakeRepo | None) -> None:
        if self.token is None:
            return
        auth = request.headers.get("Authorization")
        bearer = auth[len("Bearer ") :] if auth and auth.startswith("Bearer ") else None
        if bearer is not None and bearer != self.token:
            raise HubError(401, "Invalid credentials in Authorization header")
        if bearer is None:
            if is_write or self.require_auth_for_reads:
                raise HubError(401, "Invalid credentials in Authorization header")
            if repo is not None and repo.private:
                # The Hub hides private repos from anonymous users: 401 + RepoNotFound.
                raise HubError(401, "Repository not found", code="RepoNotFound")

    def _route(self, method: str, s: list[str]):
        """-> (name, handler, kwargs, is_write) or None. ``kwargs["repo"]`` is a (type, id) key."""
        n = len(s)
        if n >= 2 and s[0] == "api":
            if s[1:] == ["validate-yaml"] and method == "POST":
                return "validate-yaml", self._validate_yaml, {}, False
            if s[1:] == ["whoami-v2"] and method == "GET":
                return "whoami", self._whoami, {}, True  # needs a token, like the Hub
            if s[1:] == ["agent-harnesses"] and method == "GET":
                return "agent-harnesses", self._agent_harnesses, {}, False
            if s[1:] == ["repos", "create"] and method == "POST":
                return "create-repo", self._create_repo, {}, True
            if s[1:] == ["repos", "delete"] and method == "DELETE":
                return "delete-repo", self._delete_repo, {}, True
            if n >= 4 and s[1] in REPO_TYPES_PLURAL:
                repo_type, repo_id, rest = REPO_TYPES_PLURAL[s[1]], f"{s[2]}/{s[3]}", s[4:]
                return self._route_repo_api(method, repo_type, repo_id, rest)
            return None

        # LFS batch: /{prefix}{ns}/{name}.git/info/lfs/objects/batch
        if n >= 7 and s[-4:] == ["info", "lfs", "objects", "batch"] and method == "POST":
            repo_type, rest = self._split_prefix(s)
            if len(rest) == 6 and rest[1].endswith(".git"):
                repo_id = f"{rest[0]}/{rest[1][: -len('.git')]}"
                return "lfs-batch", self._lfs_batch, {"repo": (repo_type, repo_id)}, True
            return None

        # fake LFS storage (stands in for S3 presigned URLs: no auth)
        if n == 5 and s[0] == "__fake_lfs" and method == "PUT":
            repo_key = (s[1], f"{s[2]}/{s[3]}")
            return "lfs-put", self._lfs_put, {"repo": repo_key, "oid": s[4]}, False
        if n == 4 and s[0] == "__fake_lfs_verify" and method == "POST":
            return "lfs-verify", self._lfs_verify, {"repo": (s[1], f"{s[2]}/{s[3]}")}, True

        # resolve: /{prefix}{ns}/{name}/resolve/{rev}/{path...}
        if method in ("GET", "HEAD"):
            repo_type, rest = self._split_prefix(s)
            if len(rest) >= 5 and rest[2] == "resolve":
                repo_key = (repo_type, f"{rest[0]}/{rest[1]}")
                kwargs = {"repo": repo_key, "rev": rest[3], "path": "/".join(rest[4:])}
                return "resolve", self._resolve_file, kwargs, False
        return None

    @staticmethod
    def _split_prefix(s: list[str]) -> tuple[str, list[str]]:
        if s and s[0] in ("datasets", "spaces"):
            return REPO_TYPES_PLURAL[s[0]], s[1:]
        return "model", s

    def _route_repo_api(self, method: str, repo_type: str, repo_id: str, rest: list[str]):
        kw: dict[str, Any] = {"repo": (repo_type, repo_id)}  # looked up after the auth check
        head, tail = (rest[0], rest[1:]) if rest else (None, [])
        if head is None and method == "GET":
            return "info", self._repo_info, {**kw, "rev": None}, False
        if head == "revision" and len(tail) == 1 and method == "GET":
            return "info", self._repo_info, {**kw, "rev": tail[0]}, False
        if head == "refs" and not tail and method == "GET":
            return "refs", self._refs, kw, False
        if head == "commits" and len(tail) == 1 and method == "GET":
            return "commits", self._commits, {**kw, "rev": tail[0]}, False
        if head == "tree" and len(tail) >= 1 and method == "GET":
            return "tree", self._tree, {**kw, "rev": tail[0], "path": "/".join(tail[1:])}, False
        if head == "paths-info" and len(tail) == 1 and method == "POST":
            return "paths-info", self._paths_info, {**kw, "rev": tail[0]}, False
        if head == "preupload" and len(tail) == 1 and method == "POST":
            return "preupload", self._preupload, {**kw, "rev": tail[0]}, True
        if head == "commit" and len(tail) == 1 and method == "POST":
            return "commit", self._commit, {**kw, "rev": tail[0]}, True
        if head == "tag" and len(tail) == 1 and method == "POST":
            return "create-tag", self._create_tag, {**kw, "rev": tail[0]}, True
        if head == "tag" and len(tail) == 1 and method == "DELETE":
            return "delete-tag", self._delete_tag, {**kw, "tag": tail[0]}, True
        if head == "branch" and len(tail) == 1 and method == "POST":
            return "create-branch", self._create_branch, {**kw, "branch": tail[0]}, True
        if head == "branch" and len(tail) == 1 and method == "DELETE":
            return "delete-branch", self._delete_branch, {**kw, "branch": tail[0]}, True
        if head == "settings" and not tail and method == "PUT":
            return "settings", self._settings, kw, True
        return None

    # -- helpers -----------------------------------------------------------------------------------
    def _get_repo(self, repo_type: str, repo_id: str) -> FakeRepo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None:
            # The Hub answers 401 for unknown repos when anonymous, 404 otherwise; both carry
            # X-Error-Code: RepoNotFound, which the client maps to RepositoryNotFoundError.
            raise HubError(404, "Repository not found", code="RepoNotFound")
        return repo

    def _resolve_rev(self, repo: FakeRepo, rev: str) -> Commit:
        sha = repo.resolve(rev)
        if sha is None:
            raise HubError(404, f"Invalid rev id: {rev}", code="RevisionNotFound")
        return repo.commits[sha]

    def _new_commit(
        self,
        repo: FakeRepo,
        parent: str | None,
        title: str,
        description: str,
        tree: dict[str, Blob],
        author: str = FAKE_USER,
    ) -> str:
        h = hashlib.sha1()
        h.update(f"{repo.repo_type}/{repo.repo_id}\n{parent}\n{len(repo.commits)}\n".encode())
        h.update(f"{title}\n{description}\n".encode())
        for path, blob in sorted(tree.items()):
            h.update(f"{path}\0{blob.oid}\n".encode())
        sha = h.hexdigest()
        repo.commits[sha] = Commit(
            sha=sha,
            parents=[parent] if parent else [],
            title=title,
            description=description,
            tree=dict(tree),
            date=_now(),
            author=author,
        )
        return sha

    @staticmethod
    def _body_json(request: Request) -> Any:
        try:
            return json.loads(request.get_data() or b"{}")
        except json.JSONDecodeError as err:
            raise HubError(400, f"Invalid JSON body: {err}") from err

    def _dirs(self, tree: dict[str, Blob]) -> set[str]:
        dirs: set[str] = set()
        for path in tree:
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        return dirs

    def _tree_oid(self, tree: dict[str, Blob], directory: str) -> str:
        prefix = directory + "/"
        h = hashlib.sha1(b"tree\0")
        for path, blob in sorted(tree.items()):
            if path.startswith(prefix):
                h.update(f"{path}\0{blob.oid}\n".encode())
        return h.hexdigest()

    def _last_commit(self, repo: FakeRepo, commit: Commit, path: str, is_dir: bool) -> dict:
        def snapshot(c: Commit):
            if is_dir:
                return {p: b.oid for p, b in c.tree.items() if p.startswith(path + "/")}
            blob = c.tree.get(path)
            return blob.oid if blob else None

        current, last = snapshot(commit), commit
        for older in repo.history(commit.sha)[1:]:
            if snapshot(older) != current:
                break
            last = older
        return {"id": last.sha, "title": last.title, "date": last.date}

    def _entry(
        self, repo: FakeRepo, commit: Commit, path: str, expand: bool
    ) -> dict[str, Any] | None:
        blob = commit.tree.get(path)
        if blob is not None:
            entry: dict[str, Any] = {
                "type": "file",
                "oid": blob.oid,
                "size": len(blob.data),
                "path": path,
            }
            if blob.lfs:
                entry["lfs"] = {
                    "oid": blob.sha256,
                    "size": len(blob.data),
                    "pointerSize": len(blob.pointer),
                }
            if expand:
                entry["lastCommit"] = self._last_commit(repo, commit, path, is_dir=False)
            return entry
        if path in self._dirs(commit.tree):
            entry = {
                "type": "directory",
                "oid": self._tree_oid(commit.tree, path),
                "size": 0,
                "path": path,
            }
            if expand:
                entry["lastCommit"] = self._last_commit(repo, commit, path, is_dir=True)
            return entry
        return None

    @staticmethod
    def _card_data(commit: Commit) -> dict | None:
        blob = commit.tree.get("README.md")
        if blob is None:
            return None
        text = blob.data.decode("utf-8", errors="replace")
        match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", text, re.DOTALL)
        if not match:
            return None
        try:
            data = yaml.safe_load(match.group(1))
        except yaml.YAMLError:
            return None
        return data if isinstance(data, dict) else None

    def _gitattributes_lfs_patterns(self, tree: dict[str, Blob]) -> list[str]:
        blob = tree.get(".gitattributes")
        if blob is None:
            return []
        patterns = []
        for line in blob.data.decode("utf-8", errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 2 and not parts[0].startswith("#") and "filter=lfs" in parts[1:]:
                patterns.append(parts[0])
        return patterns

    def _is_lfs(self, tree: dict[str, Blob], path: str, sample: bytes, size: int) -> bool:
        if path == ".gitattributes":
            return False
        if size >= self.lfs_threshold:
            return True
        name = path.rsplit("/", 1)[-1]
        for pattern in self._gitattributes_lfs_patterns(tree):
            target = path if "/" in pattern.strip("/") else name
            if fnmatch.fnmatchcase(target, pattern.lstrip("/")):
                return True
        if b"\0" in sample:
            return True  # binary content
        try:
            sample.decode("utf-8")
        except UnicodeDecodeError as err:
            # a multi-byte char cut at the end of the 512-byte sample is still text
            return err.start < len(sample) - 3
        return False

    # -- handlers: misc ----------------------------------------------------------------------------
    def _validate_yaml(self, request: Request) -> Response:
        content = self._body_json(request).get("content", "")
        match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", content, re.DOTALL)
        if match:
            try:
                data = yaml.safe_load(match.group(1))
            except yaml.YAMLError as err:
                return self._json(
                    {"errors": [{"message": f"Invalid YAML: {err}"}], "warnings": []}, 400
                )
            if data is not None and not isinstance(data, dict):
                return self._json(
                    {"errors": [{"message": "YAML metadata must be a mapping"}], "warnings": []},
                    400,
                )
        return self._json({"errors": [], "warnings": []})

    def _whoami(self, request: Request) -> Response:
        return self._json(
            {
                "type": "user",
                "id": "0" * 24,
                "name": FAKE_USER,
                "fullname": "Fake User",
                "orgs": [],
                "auth": {
                    "type": "access_token",
                    "accessToken": {"displayName": "fake", "role": "write"},
                },
            }
        )

    def _agent_harnesses(self, request: Request) -> Response:
        return self._json({"standardEnvVars": [], "harnesses": {}})

    # -- handlers: repos ---------------------------------------------------------------------------
    def _create_repo(self, request: Request) -> Response:
        payload = self._body_json(request)
        name, org = payload.get("name"), payload.get("organization") or FAKE_USER
        repo_type = payload.get("type") or "model"
        if not name or repo_type not in URL_PREFIX:
            raise HubError(400, "Invalid repo name or type")
        repo_id = f"{org}/{name}"
        private = payload.get("visibility", "private" if payload.get("private") else "public")
        url = f"{self.url}/{URL_PREFIX[repo_type]}{repo_id}"
        with self._lock:
            if (repo_type, repo_id) in self.repos:
                return self._json(
                    {"error": f"You already created this {repo_type} repo", "url": url}, 409
                )
            self.add_repo(repo_id, repo_type, private=private == "private")
        return self._json({"url": url, "name": repo_id, "id": repo_id})

    def _delete_repo(self, request: Request) -> Response:
        payload = self._body_json(request)
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload.get('organization') or FAKE_USER}/{payload.get('name')}"
        with self._lock:
            self._get_repo(repo_type, repo_id)
            del self.repos[(repo_type, repo_id)]
        return Response("", status=200)

    def _settings(self, request: Request, repo: FakeRepo) -> Response:
        payload = self._body_json(request)
        with self._lock:
            if "private" in payload:
                repo.private = bool(payload["private"])
            if "visibility" in payload:
                repo.private = payload["visibility"] == "private"
        return self._json({})

    def _repo_info(self, request: Request, repo: FakeRepo, rev: str | None) -> Response:
        with self._lock:
            commit = self._resolve_rev(repo, rev or "main")
            blobs = request.args.get("blobs", "").lower() in ("1", "true")
            siblings = []
            for path, blob in sorted(commit.tree.items()):
                sibling: dict[str, Any] = {"rfilename": path}
                if blobs:
                    sibling.update(size=len(blob.data), blobId=blob.oid)
                    if blob.lfs:
                        sibling["lfs"] = {
                            "size": len(blob.data),
                            "sha256": blob.sha256,
                            "pointerSize": len(blob.pointer),
                        }
                siblings.append(sibling)
            author = repo.repo_id.split("/")[0]
            info: dict[str, Any] = {
                "_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24],
                "id": repo.repo_id,
                "author": author,
                "sha": commit.sha,
                "createdAt": repo.created_at,
                "lastModified": commit.date,
                "private": repo.private,
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "siblings": siblings,
                "usedStorage": sum(len(b.data) for b in commit.tree.values()),
            }
            if repo.repo_type == "model":
                info["modelId"] = repo.repo_id
            card = self._card_data(commit)
            if card is not None:
                info["cardData"] = card
        return self._json(info)

    def _refs(self, request: Request, repo: FakeRepo) -> Response:
        with self._lock:
            data: dict[str, Any] = {
                "branches": [
                    {"name": n, "ref": f"refs/heads/{n}", "targetCommit": sha}
                    for n, sha in repo.branches.items()
                ],
                "converts": [],
                "tags": [
                    {"name": t.name, "ref": f"refs/tags/{t.name}", "targetCommit": t.target}
                    for t in repo.tags.values()
                ],
            }
            if request.args.get("include_prs"):
                data["pullRequests"] = [
                    {"name": f"refs/pr/{num}", "ref": f"refs/pr/{num}", "targetCommit": sha}
                    for num, sha in repo.pull_requests.items()
                ]
        return self._json(data)

    def _commits(self, request: Request, repo: FakeRepo, rev: str) -> Response:
        with self._lock:
            commit = self._resolve_rev(repo, rev)
            items = [
                {
                    "id": c.sha,
                    "title": c.title,
                    "message": c.description,
                    "authors": [{"user": c.author, "avatar": ""}],
                    "date": c.date,
                }
                for c in repo.history(commit.sha)
            ]
        return self._json(items)

    def _tree(self, request: Request, repo: FakeRepo, rev: str, path: str) -> Response:
        recursive = request.args.get("recursive", "").lower() in ("1", "true")
        expand = request.args.get("expand", "").lower() in ("1", "true")
        cursor = int(request.args.get("cursor", "0") or 0)
        path = path.strip("/")
        with self._lock:
            commit = self._resolve_rev(repo, rev)
            if path and path not in self._dirs(commit.tree):
                raise HubError(
                    404,
                    f"Entry not found: {path}",
                    code="EntryNotFound",
                    headers={"X-Repo-Commit": commit.sha},
                )
            prefix = path + "/" if path else ""
            candidates = set(commit.tree) | self._dirs(commit.tree)
            paths = sorted(
                p
                for p in candidates
                if p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])
            )
            page = paths[cursor : cursor + self.tree_page_size]
            entries = [self._entry(repo, commit, p, expand) for p in page]
        headers = {}
        if cursor + self.tree_page_size < len(paths):
            params = dict(request.args)
            params["cursor"] = str(cursor + self.tree_page_size)
            next_url = f"{self.url}{request.path}?{urlencode(params)}"
            headers["Link"] = f'<{next_url}>; rel="next"'
        return self._json(entries, headers=headers)

    def _paths_info(self, request: Request, repo: FakeRepo, rev: str) -> Response:
        if request.mimetype == "application/json":
            payload = self._body_json(request)
            paths, expand = payload.get("paths", []), bool(payload.get("expand"))
        else:
            paths = request.form.getlist("paths")
            expand = request.form.get("expand", "").lower() in ("1", "true")
        with self._lock:
            commit = self._resolve_rev(repo, rev)
            entries = [self._entry(repo, commit, p.strip("/"), expand) for p in paths]
        return self._json([e for e in entries if e is not None])

    # -- handlers: upload --------------------------------------------------------------------------
    def _preupload(self, request: Request, repo: FakeRepo, rev: str) -> Response:
        payload = self._body_json(request)
        with self._lock:
            sha = repo.resolve(rev)
            if sha is None and not request.args.get("create_pr"):
                raise HubError(404, f"Invalid rev id: {rev}", code="RevisionNotFound")
            tree = repo.commits[sha].tree if sha else {}
            files = []
            for f in payload.get("files", []):
                sample = base64.b64decode(f.get("sample", ""))
                is_lfs = self._is_lfs(tree, f["path"], sample, int(f.get("size", 0)))
                existing = tree.get(f["path"])
                oid = None
                if existing is not None:
                    oid = existing.sha256 if is_lfs else git_blob_oid(existing.data)
                files.append(
                    {
                        "path": f["path"],
                        "uploadMode": "lfs" if is_lfs else "regular",
                        "shouldIgnore": False,
                        "oid": oid,
                    }
                )
        return self._json({"files": files, "commitOid": sha})

    def _lfs_batch(self, request: Request, repo: FakeRepo) -> Response:
        payload = self._body_json(request)
        if payload.get("operation") != "upload":
            raise HubError(400, "FakeHub only supports the LFS 'upload' operation")
        repo_type, (ns, name) = repo.repo_type, repo.repo_id.split("/")
        objects = []
        with self._lock:
            for obj in payload.get("objects", []):
                oid, size = obj["oid"], int(obj["size"])
                out: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
                if oid not in repo.lfs_objects:
                    out["actions"] = {
                        "upload": {
                            "href": f"{self.url}/__fake_lfs/{repo_type}/{ns}/{name}/{oid}",
                            "header": {},
                            "expires_at": "2999-01-01T00:00:00Z",
                        },
                        "verify": {
                            "href": f"{self.url}/__fake_lfs_verify/{repo_type}/{ns}/{name}",
                            "header": {},
                        },
                    }
                objects.append(out)
        return self._json(
            {"transfer": "basic", "objects": objects, "hash_algo": "sha256"},
            headers={"Content-Type": "application/vnd.git-lfs+json"},
        )

    def _lfs_put(self, request: Request, repo: FakeRepo, oid: str) -> Response:
        data = request.get_data()
        actual = hashlib.sha256(data).hexdigest()
        if actual != oid:
            raise HubError(400, f"sha256 mismatch: url says {oid}, content is {actual}")
        with self._lock:
            repo.lfs_objects[oid] = data
        return Response("", status=200, headers={"ETag": f'"{hashlib.md5(data).hexdigest()}"'})

    def _lfs_verify(self, request: Request, repo: FakeRepo) -> Response:
        payload = self._body_json(request)
        with self._lock:
            data = repo.lfs_objects.get(payload.get("oid"))
        if data is None or len(data) != payload.get("size"):
            raise HubError(404, f"LFS object {payload.get('oid')} not found / wrong size")
        return self._json({"success": True})

    def _commit(self, request: Request, repo: FakeRepo, rev: str) -> Response:
        lines = [json.loads(line) for line in request.get_data().splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HubError(400, "First NDJSON line must be the commit header")
        header = lines[0]["value"]
        create_pr = request.args.get("create_pr") in ("1", "true")
        with self._lock:
            if rev not in repo.branches and not rev.startswith("refs/heads/"):
                if repo.resolve(rev) is None:
                    raise HubError(404, f"Invalid rev id: {rev}", code="RevisionNotFound")
                if not create_pr:
                    raise HubError(400, f"Can only commit to a branch, not to {rev}")
            branch = rev.removeprefix("refs/heads/")
            if branch not in repo.branches:
                raise HubError(404, f"Invalid rev id: {rev}", code="RevisionNotFound")
            head = repo.branches[branch]
            parent = header.get("parentCommit")
            if parent:
                parent_sha = repo.resolve(parent)
                if parent_sha is None:
                    raise HubError(404, f"Invalid parent commit {parent}", code="RevisionNotFound")
                if not create_pr and parent_sha != head:
                    raise HubError(
                        412, "A commit has happened since. Please refresh and try again."
                    )
                head = parent_sha
            tree = dict(repo.commits[head].tree)
            for item in lines[1:]:
                key, value = item.get("key"), item.get("value", {})
                path = value.get("path", "").strip("/")
                if key == "file":
                    if value.get("encoding", "base64") == "base64":
                        content = base64.b64decode(value["content"])
                    else:
                        content = value["content"].encode()
                    tree[path] = Blob(content, lfs=False)
                elif key == "lfsFile":
                    data = repo.lfs_objects.get(value["oid"])
                    if data is None:
                        raise HubError(
                            422, f"LFS object {value['oid']} for {path} was never uploaded"
                        )
                    tree[path] = Blob(data, lfs=True)
                elif key == "deletedFile":
                    if path not in tree:
                        raise HubError(
                            404,
                            f"A file with this name doesn't exist: {path}",
                            code="EntryNotFound",
                        )
                    del tree[path]
                elif key == "deletedFolder":
                    doomed = [p for p in tree if p.startswith(path + "/")]
                    if not doomed:
                        raise HubError(
                            404,
                            f"A folder with this name doesn't exist: {path}",
                            code="EntryNotFound",
                        )
                    for p in doomed:
                        del tree[p]
                else:
                    raise HubError(400, f"FakeHub: unsupported commit operation {key!r}")
            sha = self._new_commit(
                repo, head, header.get("summary", ""), header.get("description", ""), tree
            )
            prefix = f"{self.url}/{URL_PREFIX[repo.repo_type]}{repo.repo_id}"
            pr_url = None
            if create_pr:
                num = max(repo.pull_requests, default=0) + 1
                repo.pull_requests[num] = sha
                pr_url = f"{prefix}/discussions/{num}"
            else:
                repo.branches[branch] = sha
        return self._json(
            {
                "success": True,
                "commitOid": sha,
                "commitUrl": f"{prefix}/commit/{sha}",
                "commitMessage": header.get("summary", ""),
                "pullRequestUrl": pr_url,
                "hookOutput": "",
            }
        )

    # -- handlers: refs ----------------------------------------------------------------------------
    def _create_tag(self, request: Request, repo: FakeRepo, rev: str) -> Response:
        payload = self._body_json(request)
        tag = payload.get("tag")
        if not tag:
            raise HubError(400, "Missing tag name")
        with self._lock:
            commit = self._resolve_rev(repo, rev)
            if tag in repo.tags:
                raise HubError(409, f"Tag {tag} already exists")
            repo.tags[tag] = Tag(tag, commit.sha, payload.get("message"))
        return self._json({"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": commit.sha})

    def _delete_tag(self, request: Request, repo: FakeRepo, tag: str) -> Response:
        with self._lock:
            if tag not in repo.tags:
                raise HubError(404, f"Invalid rev id: {tag}", code="RevisionNotFound")
            del repo.tags[tag]
        return Response("", status=200)

    def _create_branch(self, request: Request, repo: FakeRepo, branch: str) -> Response:
        payload = self._body_json(request) if request.get_data() else {}
        with self._lock:
            if branch in repo.branches:
                raise HubError(409, f"Reference refs/heads/{branch} already exists")
            start = payload.get("startingPoint") or "main"
            repo.branches[branch] = self._resolve_rev(repo, start).sha
        return self._json({})

    def _delete_branch(self, request: Request, repo: FakeRepo, branch: str) -> Response:
        with self._lock:
            if branch not in repo.branches:
                raise HubError(404, f"Invalid rev id: {branch}", code="RevisionNotFound")
            if branch == "main":
                raise HubError(403, "Cannot delete the default branch")
            del repo.branches[branch]
        return Response("", status=200)

    # -- handlers: downloads -----------------------------------------------------------------------
    def _resolve_file(self, request: Request, repo: FakeRepo, rev: str, path: str) -> Response:
        with self._lock:
            commit = self._resolve_rev(repo, rev)
            blob = commit.tree.get(path)
        if blob is None:
            raise HubError(
                404, "Entry not found", code="EntryNotFound", headers={"X-Repo-Commit": commit.sha}
            )
        data, size = blob.data, len(blob.data)
        headers = {
            "X-Repo-Commit": commit.sha,
            "ETag": f'"{blob.etag}"',
            "Accept-Ranges": "bytes",
            "Content-Disposition": f"inline; filename*=UTF-8''{quote(path.rsplit('/', 1)[-1])}",
        }
        if blob.lfs:
            headers["X-Linked-Etag"] = f'"{blob.sha256}"'
            headers["X-Linked-Size"] = str(size)
        status = 200
        range_header = request.headers.get("Range")
        if range_header:
            m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", range_header)
            if not m or (not m.group(1) and not m.group(2)):
                raise HubError(416, f"Unsupported range {range_header!r}")
            if m.group(1):
                start = int(m.group(1))
                end = int(m.group(2)) if m.group(2) else size - 1
            else:  # suffix range
                start, end = max(0, size - int(m.group(2))), size - 1
            end = min(end, size - 1)
            if start >= size or start > end:
                return Response(
                    "", status=416, headers={**headers, "Content-Range": f"bytes */{size}"}
                )
            data = data[start : end + 1]
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            status = 206
        return Response(
            data, status=status, headers=headers, content_type="application/octet-stream"
        )


# --------------------------------------------------------------------------------------------------
# Pytest fixtures
# --------------------------------------------------------------------------------------------------


def patch_clients(
    monkeypatch: pytest.MonkeyPatch, hub: FakeHub, home: Path, token: str | None = FAKE_TOKEN
) -> None:
    """Point huggingface_hub + datasets at ``hub`` and isolate every cache under ``home``.

    Both libraries read HF_ENDPOINT, cache dirs and several flags into module constants at import
    time, so setting env vars is not enough once they are imported: patch the constants too.
    """
    import datasets.config as dconfig
    import huggingface_hub.constants as hconst
    from huggingface_hub.utils import _detect_agent, _http

    url = hub.url
    home.mkdir(parents=True, exist_ok=True)
    hub_cache = home / "hub"
    ds_cache = home / "datasets"

    env = {
        "HF_ENDPOINT": url,
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(hub_cache),
        "HF_ASSETS_CACHE": str(home / "assets"),
        "HF_XET_CACHE": str(home / "xet"),
        "HF_TOKEN_PATH": str(home / "token"),
        "HF_DATASETS_CACHE": str(ds_cache),
        "HF_MODULES_CACHE": str(home / "modules"),
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_DISABLE_UPDATE_CHECK": "1",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
        "HF_HUB_ETAG_TIMEOUT": "5",
        "HF_HUB_DOWNLOAD_TIMEOUT": "5",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in (
        "HF_HUB_OFFLINE",
        "HF_DATASETS_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "HUGGING_FACE_HUB_TOKEN",
        "HF_OIDC_RESOURCE",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN",
        "HUGGINGFACE_CO_STAGING",
        "HF_HUB_ENABLE_HF_TRANSFER",
    ):
        monkeypatch.delenv(key, raising=False)
    if token is None:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    else:
        monkeypatch.setenv("HF_TOKEN", token)

    # huggingface_hub: constants frozen at import time
    for name, value in {
        "ENDPOINT": url,
        "HUGGINGFACE_CO_URL_TEMPLATE": url + "/{repo_id}/resolve/{revision}/{filename}",
        "HF_URL_HOSTS": hconst.HF_URL_HOSTS | {"127.0.0.1"},
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(hub_cache),
        "HUGGINGFACE_HUB_CACHE": str(hub_cache),
        "HF_ASSETS_CACHE": str(home / "assets"),
        "HUGGINGFACE_ASSETS_CACHE": str(home / "assets"),
        "HF_XET_CACHE": str(home / "xet"),
        "HF_TOKEN_PATH": str(home / "token"),
        "HF_STORED_TOKENS_PATH": str(home / "stored_tokens"),
        "AGENT_HARNESSES_PATH": str(home / ".agent_harnesses.json"),
        "CHECK_FOR_UPDATE_DONE_PATH": str(home / ".check_for_update_done"),
        "HF_HUB_DISABLE_XET": True,
        "HF_HUB_DISABLE_TELEMETRY": True,
        "HF_HUB_DISABLE_UPDATE_CHECK": True,
        "HF_HUB_DISABLE_PROGRESS_BARS": True,
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": False,
        "HF_HUB_OFFLINE": False,
        "HF_HUB_ETAG_TIMEOUT": 5,
        "HF_HUB_DOWNLOAD_TIMEOUT": 5,
    }.items():
        monkeypatch.setattr(hconst, name, value, raising=False)
    # origins to which redirects are followed with the auth header (huggingface_hub 2.2 and
    # later; before, there is no such list to extend)
    if hasattr(_http, "_HUB_ORIGINS"):
        monkeypatch.setattr(_http, "_HUB_ORIGINS", _http._HUB_ORIGINS | {_http._url_origin(url)})
    # hf_raise_for_status maps a 401 on /api/{type}s/... or /.../resolve/... to
    # RepositoryNotFoundError, but its regex only accepts https:// URLs: accept http:// too so
    # errors classify as they would against https://huggingface.co.
    monkeypatch.setattr(
        _http,
        "REPO_API_REGEX",
        re.compile(
            _http.REPO_API_REGEX.pattern.replace("^https://", "^https?://"),
            _http.REPO_API_REGEX.flags,
        ),
    )
    # never fetch the AI-agent registry from the network
    monkeypatch.setattr(_detect_agent, "_registry", _detect_agent._EMPTY_REGISTRY, raising=False)

    # datasets: constants frozen at import time
    for name, value in {
        "HF_ENDPOINT": url,
        "HUB_DATASETS_URL": url + "/datasets/{repo_id}/resolve/{revision}/{path}",
        "HF_CACHE_HOME": str(home),
        "HF_DATASETS_CACHE": ds_cache,
        "HF_MODULES_CACHE": home / "modules",
        "DOWNLOADED_DATASETS_PATH": ds_cache / "downloads",
        "EXTRACTED_DATASETS_PATH": ds_cache / "downloads" / "extracted",
        "HF_HUB_OFFLINE": False,
        "HF_DATASETS_OFFLINE": False,
        "HF_UPDATE_DOWNLOAD_COUNTS": False,
        "USE_PARQUET_EXPORT": False,
    }.items():
        monkeypatch.setattr(dconfig, name, value, raising=False)


_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def block_network(monkeypatch: pytest.MonkeyPatch, hub: FakeHub | None = None) -> None:
    """Make every name resolution / connection to a non-loopback host fail fast (and record the
    host in ``hub.blocked_hosts``), so nothing silently falls back to the real network."""
    real_getaddrinfo = socket.getaddrinfo

    def guarded_getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and name not in _LOCAL_HOSTS:
            if hub is not None:
                hub.blocked_hosts.append(name)
            msg = f"FakeHub fixture blocks network access to {name!r}"
            logger.warning(msg)
            raise socket.gaierror(socket.EAI_NONAME, msg)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)


def _reset_client_state() -> None:
    """Drop pooled connections and cached filesystem instances bound to an old endpoint."""
    from huggingface_hub import HfFileSystem
    from huggingface_hub.utils import close_session

    close_session()
    HfFileSystem.clear_instance_cache()


@pytest.fixture
def fake_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A started :class:`FakeHub` (token-protected with ``FAKE_TOKEN``, which is also exported as
    ``HF_TOKEN``), with huggingface_hub/datasets pointed at it and all caches under tmp_path."""
    hub = FakeHub(token=FAKE_TOKEN).start()
    try:
        patch_clients(monkeypatch, hub, tmp_path / "hf_home")
        block_network(monkeypatch, hub)
        _reset_client_state()
        yield hub
    finally:
        with contextlib.suppress(Exception):
            _reset_client_state()
        hub.stop()
        if hub.unknown_requests:
            logger.warning("FakeHub got unknown requests: %s", hub.unknown_requests)
        if hub.blocked_hosts:
            logger.warning("Blocked network access to: %s", sorted(set(hub.blocked_hosts)))


# --- servers that are not a Hub at all ------------------------------------------------------------
class BrokenHub:
    """A stand-in at ``url`` that fails the way a network does, for timeout and deadline tests.

    ``mode``: ``"refused"`` (nothing listens on the port), ``"silent"`` (connections are
    accepted and never answered), ``"html"`` (every request gets ``200`` and an HTML page, like
    a captive portal or a proxy's login page). Listens on 127.0.0.1 only; :meth:`stop` (or
    leaving the ``with`` block) closes every socket, and a silent server closes its connections
    by itself after ``lifetime`` seconds in any case.
    """

    def __init__(self, mode: str, lifetime: float = 60.0) -> None:
        if mode not in {"refused", "silent", "html"}:
            raise ValueError(mode)
        self.mode, self.lifetime = mode, lifetime
        self.accepted = 0
        self._sock: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> BrokenHub:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        if self.mode == "refused":
            sock.close()  # the port was free a moment ago and nothing listens on it now
            return self
        sock.listen(16)
        sock.settimeout(0.1)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        ends = _monotonic() + self.lifetime
        assert self._sock is not None
        while not self._stop.is_set() and _monotonic() < ends:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.accepted += 1
            if self.mode == "silent":
                self._conns.append(conn)  # hold it open, say nothing
                continue
            with contextlib.suppress(OSError):
                conn.settimeout(2)
                conn.recv(65536)
                body = b"<html><body>Please log in to the network</body></html>"
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                    + b"Content-Length: %d\r\n\r\n" % len(body)
                    + body
                )
            conn.close()
        self._close_all()

    def _close_all(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.close()
        self._conns.clear()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._close_all()

    def __enter__(self) -> BrokenHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _monotonic() -> float:
    import time

    return time.monotonic()
