"""``curate publish``: push a build folder to a dataset repository on the Hub as a tagged release.

The order of operations is what keeps a release whole:

1. check the folder (no validation errors, every file matches its sha256 in ``manifest.json``,
   no file the manifest does not list), before anything touches the network;
2. read the repository: its visibility, its tags, and the files at ``main``;
3. refuse if the tag ``v{version}`` exists with other content, or a newer release is tagged; do
   nothing if the tag already holds this content;
4. create the repository if it is missing, then upload every file in **one** commit (deleting
   files of the previous release that this one no longer has) on top of the ``main`` that was
   read in step 2;
5. only then tag that commit, by its sha.

Commits are atomic on the Hub, so a failure in step 4 leaves the repository as it was. If step 5
fails, the commit is on ``main`` untagged, and running ``publish`` again finds this content at
``main`` and only adds the tag.

The token comes from ``HF_TOKEN`` or the ``hf auth login`` store, via huggingface_hub; it is
handed to the client and never printed, logged or written.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from curate import hub
from curate.export import sha256_file
from curate.release import MANIFEST, SEMVER, ReleaseUsageError, latest_tag, parse_version
from curate.report import REPORT_HTML

REPORT = "validation-report.json"
IGNORED_REMOTE = {".gitattributes"}  # created by the Hub with the repository


class PublishError(Exception):
    """Publishing was refused or failed; the message says why in one line."""


@dataclass
class LocalFile:
    path: str
    sha256: str
    size: int
    git_oid: str  # what the Hub reports as the blob id of a file stored in git (not LFS)


@dataclass
class LocalRelease:
    folder: Path
    manifest: dict[str, Any]
    files: dict[str, LocalFile]

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    @property
    def tag(self) -> str:
        return f"v{self.version}"


@dataclass
class PublishResult:
    repo_id: str
    version: str
    tag: str
    action: str  # "published", "tagged", "unchanged", "dry-run"
    commit: str | None = None
    created_repo: bool = False
    uploaded: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# --- the local folder -----------------------------------------------------------------------------
def check_folder(folder: str | Path) -> LocalRelease:
    """The folder as a release, or :class:`PublishError` saying why it may not be published."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ReleaseUsageError(f"{folder}: no such folder")
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise PublishError(f"{folder} has no {MANIFEST}: it is not a `curate build` folder")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise PublishError(f"{manifest_path}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise PublishError(f"{manifest_path}: no file inventory")
    version = manifest.get("version")
    if not isinstance(version, str) or not SEMVER.match(version) or version.startswith("v"):
        raise PublishError(f"{manifest_path}: version {version!r} is not X.Y.Z")

    listed: dict[str, Any] = manifest["files"]
    if REPORT not in listed:
        raise PublishError(f"{folder} has no {REPORT}: refusing to publish an unchecked build")
    problems = []
    for rel in sorted(listed):
        path = folder / rel
        if not path.is_file():
            problems.append(f"{rel} is missing")
        elif sha256_file(path) != listed[rel].get("sha256"):
            problems.append(f"{rel} does not match its sha256 in {MANIFEST}")
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    extra = sorted(present - set(listed) - {MANIFEST, REPORT_HTML})  # the page is not uploaded
    problems += [f"{rel} is not listed in {MANIFEST}" for rel in extra]
    if problems:
        raise PublishError(
            f"{folder} is not the folder its manifest describes: " + "; ".join(problems)
        )

    try:
        report = json.loads((folder / REPORT).read_text(encoding="utf-8"))
        summary = report["summary"]
        errors = int(summary["errors"])
    except (ValueError, KeyError, TypeError) as exc:
        raise PublishError(f"{folder / REPORT}: cannot read its summary ({exc})") from None
    flagged = [f for f in report.get("findings", []) if f.get("severity") == "error"]
    errors = max(errors, len(flagged))
    if errors:
        raise PublishError(
            f"{folder / REPORT} holds {errors} validation error(s): fix the sources and rebuild"
        )

    files = {}
    for rel in [*sorted(listed), MANIFEST]:
        data = (folder / rel).read_bytes()
        files[rel] = LocalFile(rel, hashlib.sha256(data).hexdigest(), len(data), git_blob_oid(data))
    return LocalRelease(folder, manifest, files)


# --- the Hub side ---------------------------------------------------------------------------------
def differences(local: LocalRelease, remote: list[Any]) -> list[str]:
    """How the files of a Hub revision (``list_repo_tree`` entries) differ from ``local``."""
    tree = {e.path: e for e in remote if hasattr(e, "blob_id") and e.path not in IGNORED_REMOTE}
    out = []
    for rel, mine in local.files.items():
        theirs = tree.get(rel)
        if theirs is None:
            out.append(f"{rel} missing")
            continue
        lfs = getattr(theirs, "lfs", None)
        same = lfs.sha256 == mine.sha256 if lfs is not None else theirs.blob_id == mine.git_oid
        if not same:
            out.append(f"{rel} differs")
    out += [f"{rel} not in this release" for rel in sorted(set(tree) - set(local.files))]
    return out


class _Session:
    """The calls publish makes, each retried and each failure turned into one plain line."""

    def __init__(
        self, repo_id: str, token: str | None, sleep: hub.Sleep | None, say: hub.Say
    ) -> None:
        self.repo_id, self.token, self.sleep, self.say = repo_id, token, sleep, say
        self.api = HfApi(token=token)

    def run(self, fn, what: str, recovered=None):  # type: ignore[no-untyped-def]
        try:
            return hub.call(fn, what, sleep=self.sleep, say=self.say, recovered=recovered)
        except HfHubHTTPError as exc:
            raise self.error(exc, what) from None
        except Exception as exc:
            # huggingface_hub wraps a failed LFS upload (already retried by it) in RuntimeError
            cause = exc.__cause__
            if isinstance(cause, HfHubHTTPError):
                raise self.error(cause, what) from None
            if hub.is_transient(exc) or hub.is_transient(cause or exc):
                raise hub.HubError(hub.describe(cause or exc, what, self.token)) from None
            raise

    def error(self, exc: BaseException, what: str) -> hub.HubError:
        return hub.auth_error(exc, what, self.repo_id) or hub.HubError(
            hub.describe(exc, what, self.token)
        )

    def info(self) -> Any | None:
        """The repository's info at ``main``, or None if it does not exist (for this token)."""
        what = f"reading {self.repo_id}"
        try:
            return hub.call(
                lambda: self.api.dataset_info(self.repo_id),
                what,
                sleep=self.sleep,
                say=self.say,
            )
        except RepositoryNotFoundError as exc:
            if self.token and hub.status_of(exc) == 401:
                raise self.error(exc, what) from None
            return None
        except HfHubHTTPError as exc:
            raise self.error(exc, what) from None

    def tags(self) -> dict[str, str]:
        refs = self.run(
            lambda: self.api.list_repo_refs(self.repo_id, repo_type="dataset"),
            f"listing the tags of {self.repo_id}",
        )
        return {t.name: t.target_commit for t in refs.tags}

    def tree(self, revision: str) -> list[Any]:
        return self.run(
            lambda: list(
                self.api.list_repo_tree(
                    self.repo_id, recursive=True, revision=revision, repo_type="dataset"
                )
            ),
            f"listing the files of {self.repo_id}@{revision[:12]}",
        )

    def head(self) -> str:
        return str(self.info().sha)  # type: ignore[union-attr]


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return f"{n} B"


def publish(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    dry_run: bool = False,
    token: str | None = None,
    say: hub.Say | None = None,
    sleep: hub.Sleep | None = None,
) -> PublishResult:
    """Publish the build ``folder`` to the dataset repository ``repo_id`` as tag ``v{version}``.

    Raises :class:`PublishError` for a refusal, :class:`curate.hub.HubAuthError` for
    credentials the Hub does not accept, :class:`curate.hub.HubError` when the Hub keeps failing.
    """
    say = say or (lambda _msg: None)
    if not hub.REPO_ID.match(repo_id):
        raise ReleaseUsageError(f"--repo-id must be ORG/NAME, got {repo_id!r}")
    local = check_folder(folder)
    built_for = local.manifest.get("repo_id")
    if built_for and built_for != repo_id:
        raise PublishError(
            f"{local.folder} was built for {built_for} (its card and Croissant file name it); "
            f"set repo_id = {repo_id!r} in [tool.curate] and rebuild, or publish to {built_for}"
        )
    say(f"{local.folder}: v{local.version}, {len(local.files)} files checked against {MANIFEST}")

    token = token or get_token()
    if not token and not dry_run:
        raise hub.HubAuthError(f"not logged in to the Hugging Face Hub; {hub.LOGIN_HINT}")
    session = _Session(repo_id, token, sleep, say)
    result = PublishResult(repo_id, local.version, local.tag, action="dry-run" if dry_run else "")

    info = session.info()
    head: str | None = None
    if info is None:
        plan_repo = f"create dataset repo {repo_id} ({'private' if private else 'public'})"
        remote: list[Any] = []
    else:
        if private and not info.private:
            raise PublishError(
                f"--private was given but {repo_id} exists and is public; make it private on "
                "the Hub first, or publish without --private"
            )
        head = str(info.sha)
        tags = session.tags()
        if local.tag in tags:
            diffs = differences(local, session.tree(tags[local.tag]))
            if not diffs:
                result.action, result.commit = "unchanged", tags[local.tag]
                say(f"{repo_id}@{local.tag} already holds exactly this release: nothing to do")
                return result
            raise PublishError(
                f"tag {local.tag} already exists on {repo_id} with different content ("
                + "; ".join(diffs[:5])
                + (f"; {len(diffs) - 5} more" if len(diffs) > 5 else "")
                + "): a published release never changes; rebuild with a higher version"
            )
        newest = latest_tag(list(tags))
        if newest and parse_version(newest) > parse_version(local.version):
            raise PublishError(
                f"{repo_id} already has {newest}, newer than {local.tag}: publishing would move "
                "main back to an older release"
            )
        remote = session.tree(head)
        if not differences(local, remote):
            # The commit of an earlier run landed but its tag did not: only the tag is missing.
            plan = f"tag {head[:12]} (main, which already holds this release) as {local.tag}"
            result.plan = [plan]
            if dry_run:
                say(f"would {plan}")
                return result
            _tag(session, local, head)
            result.action, result.commit = "tagged", head
            say(f"tagged {repo_id}@{head[:12]} as {local.tag}")
            return result
        plan_repo = None

    stale = sorted(
        e.path
        for e in remote
        if hasattr(e, "blob_id") and e.path not in IGNORED_REMOTE and e.path not in local.files
    )
    message = f"Release v{local.version}"
    total = sum(f.size for f in local.files.values())
    result.plan = [
        *([plan_repo] if plan_repo else []),
        f"upload {len(local.files)} files ({_size(total)}) in one commit {message!r}"
        + (f" on top of main@{head[:12]}" if head else ""),
        *[f"  {f.path}  {_size(f.size)}  sha256 {f.sha256[:16]}" for f in local.files.values()],
        *[f"delete {path} (not in this release)" for path in stale],
        f"tag that commit {local.tag}",
    ]
    result.uploaded = list(local.files)
    result.deleted = stale
    if dry_run:
        for line in result.plan:
            say(f"would {line}" if not line.startswith("  ") else line)
        return result

    if info is None:
        session.run(
            lambda: session.api.create_repo(
                repo_id, repo_type="dataset", private=private, exist_ok=True
            ),
            f"creating {repo_id}",
        )
        result.created_repo = True
        say(f"created dataset repo {repo_id}")
        head = session.run(session.head, f"reading {repo_id}")
    assert head is not None

    sha = _commit(session, local, head, stale, message)
    result.commit = sha
    say(f"committed {len(local.files)} files to {repo_id}: {sha[:12]} {message!r}")
    _tag(session, local, sha)
    result.action = "published"
    say(f"tagged {sha[:12]} as {local.tag}")
    return result


def _commit(
    session: _Session, local: LocalRelease, head: str, stale: list[str], message: str
) -> str:
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(local.folder / rel))
        for rel in local.files
    ]
    operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
    description = (
        f"curate release {local.version}\n\n"
        f"fingerprint: {local.manifest.get('fingerprint')}\n"
        f"rows: {local.manifest.get('rows')}\n"
    )

    def attempt() -> str:
        # Operations hold upload state; a retry starts from fresh ones.
        ops = [
            CommitOperationAdd(path_in_repo=op.path_in_repo, path_or_fileobj=op.path_or_fileobj)
            if isinstance(op, CommitOperationAdd)
            else op
            for op in operations
        ]
        info = session.api.create_commit(
            session.repo_id,
            repo_type="dataset",
            operations=ops,
            commit_message=message,
            commit_description=description,
            parent_commit=head,  # if main moved since we read it, the Hub refuses (412)
        )
        return str(info.oid)  # type: ignore[union-attr]

    def landed() -> str | None:
        """After a failed attempt: did the commit happen anyway (a 5xx after the Hub wrote it)?"""
        now = session.head()
        if now != head and not differences(local, session.tree(now)):
            return now
        return None

    try:
        return str(session.run(attempt, f"committing to {session.repo_id}", recovered=landed))
    except hub.HubError as exc:
        if isinstance(exc, hub.HubAuthError):
            raise
        raise hub.HubError(f"{exc}; nothing was published (no commit, no tag)") from None


def _tag(session: _Session, local: LocalRelease, sha: str) -> None:
    def attempt() -> str:
        session.api.create_tag(
            session.repo_id,
            tag=local.tag,
            revision=sha,
            tag_message=f"curate release {local.version}",
            repo_type="dataset",
        )
        return sha

    def tagged() -> str | None:
        return sha if session.tags().get(local.tag) == sha else None

    what = f"tagging {sha[:12]} as {local.tag}"
    try:
        session.run(attempt, what, recovered=tagged)
    except hub.HubError as exc:
        # a 409 after a retried 5xx: the earlier attempt created the tag after all
        try:
            if tagged():
                return
        except Exception:
            pass  # the original error is the one worth reporting
        raise type(exc)(
            f"{exc}. The commit {sha[:12]} is on main of {session.repo_id} but untagged; run "
            f"the same `curate publish` again to add the tag {local.tag}"
        ) from None
