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
import heapq
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from curate.dataset.manifest import CROISSANT, MANIFEST, REPORT_HTML
from curate.dataset.manifest import REPORT_JSON as REPORT
from curate.errors import ReleaseUsageError
from curate.release import hub
from curate.release.load import latest_tag, manifest_key_problem
from curate.release.versions import SEMVER, parse_version
from validation.findings import count

IGNORED_REMOTE = {".gitattributes"}  # created by the Hub with the repository


class PublishError(Exception):
    """Publishing was refused or failed; the message says why in one line."""


@dataclass
class LocalFile:
    path: str
    sha256: str
    size: int
    git_oid: str  # what the Hub reports as the blob id of a file stored in git (not LFS)
    data: bytes = field(default=b"", repr=False)  # the checked bytes: exactly what is uploaded


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
    plan: list[str] = field(default_factory=list)


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# --- the local folder -----------------------------------------------------------------------------
def _read_inside(folder: Path, rel: str) -> bytes:
    """The bytes of ``folder/rel``, read once, refusing symlinks anywhere on the way.

    Every parent is checked with ``lstat`` and the file is opened with ``O_NOFOLLOW`` and checked
    with ``fstat`` on the open descriptor, so what is checked is what was read.
    """
    here = folder
    for part in rel.split("/")[:-1]:
        here = here / part
        st = os.lstat(here)
        if stat.S_ISLNK(st.st_mode):
            raise PublishError(f"{rel}: {part}/ is a symlink; publish uploads only its own files")
        if not stat.S_ISDIR(st.st_mode):
            raise PublishError(f"{rel}: {part} is not a folder")
    path = folder / rel
    if stat.S_ISLNK(os.lstat(path).st_mode):
        raise PublishError(f"{rel} is a symlink; publish uploads only its own files")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PublishError(f"{rel} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def _present(folder: Path) -> tuple[set[str], list[str]]:
    """Every regular file under ``folder`` (relative, POSIX), and every symlink met on the way.

    Symlinked folders are not descended into: they are reported, never followed.
    """
    files: set[str] = set()
    links: list[str] = []
    for root, dirs, names in os.walk(folder):
        base = Path(root)
        for name in [*dirs, *names]:
            if (base / name).is_symlink():
                links.append((base / name).relative_to(folder).as_posix())
        dirs[:] = sorted(d for d in dirs if not (base / d).is_symlink())
        files.update(
            (base / n).relative_to(folder).as_posix() for n in names if not (base / n).is_symlink()
        )
    return files, sorted(links)


def _check_parquet(files: dict[str, LocalFile], manifest: dict[str, Any]) -> list[str]:
    """The Parquet files must read back and hold the manifest's rows and fingerprint.

    A sha256 in the manifest proves only that the manifest was written after the file; a file
    flipped and re-hashed would pass it and be published unreadable.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from curate.dataset.manifest import FINGERPRINT_VERSIONS, row_digests

    parquet = sorted(rel for rel in files if rel.endswith(".parquet"))
    if not parquet:
        return ["no Parquet file is listed"]
    rows = 0
    digest = hashlib.sha256()

    readers = {}
    for rel in parquet:
        try:
            readers[rel] = pq.ParquetFile(pa.BufferReader(files[rel].data))
        except (OSError, ValueError, pa.ArrowException) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return [f"{rel} does not read back as Parquet ({first})"]

    version = manifest.get("fingerprint_version", 1)
    if version not in FINGERPRINT_VERSIONS:
        return [f"{MANIFEST} has a fingerprint_version this curate does not know: {version!r}"]

    def digests(rel: str) -> Iterator[tuple[str, str]]:
        for batch in readers[rel].iter_batches(batch_size=10_000):
            table = pa.Table.from_batches([batch])
            ids = table.column("id").to_pylist()
            yield from zip(ids, row_digests(table, version), strict=True)

    # The fingerprint is over every row in id order; each file (a shard, a split) is in id
    # order, so the files are merged as they are read.
    try:
        for _, row_hash in heapq.merge(*(digests(rel) for rel in parquet)):
            rows += 1
            digest.update(row_hash.encode())
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [f"a Parquet file does not read back as Parquet ({first})"]
    problems = []
    if manifest.get("rows") != rows:
        problems.append(f"the Parquet holds {rows} rows, {MANIFEST} says {manifest.get('rows')!r}")
    if manifest.get("fingerprint") != digest.hexdigest():
        problems.append(f"the Parquet's content does not match the fingerprint in {MANIFEST}")
    return problems


def _check_croissant(files: dict[str, LocalFile]) -> list[str]:
    """Every file ``croissant.json`` describes must be in the folder with the sha256 it gives."""
    entry = files.get(CROISSANT)
    if entry is None:
        return [f"{CROISSANT} is not listed in {MANIFEST}"]
    try:
        meta = json.loads(entry.data.decode("utf-8"))
        objects = [d for d in meta.get("distribution", []) if d.get("contentUrl")]
    except (ValueError, UnicodeDecodeError, AttributeError, TypeError):
        return [f"{CROISSANT} is not a Croissant JSON object"]
    problems = []
    for obj in objects:
        rel, sha = obj.get("contentUrl"), obj.get("sha256")
        mine = files.get(rel) if isinstance(rel, str) else None
        if mine is None:
            problems.append(f"{CROISSANT} describes {rel!r}, which is not in the release")
        elif sha != mine.sha256:
            problems.append(f"{CROISSANT} gives another sha256 for {rel}")
    return problems


def check_folder(folder: str | Path) -> LocalRelease:
    """The folder as a release, or :class:`PublishError` saying why it may not be published.

    Every file is read once, here, and the bytes checked are the bytes :func:`publish` uploads:
    a file changed on disk after this check is not what reaches the Hub.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ReleaseUsageError(f"{folder}: no such folder")
    manifest, manifest_bytes = _read_manifest(folder)
    local = manifest.get("local_files")
    files = _read_listed(folder, manifest["files"], local if isinstance(local, dict) else ())
    _check_report(folder, files)
    problems = _check_parquet(files, manifest) + _check_croissant(files)
    if problems:
        raise PublishError(f"{folder} is not a sound release: " + "; ".join(problems))
    manifest_bytes = published_manifest(manifest, manifest_bytes)
    sha = hashlib.sha256(manifest_bytes).hexdigest()
    files[MANIFEST] = LocalFile(
        MANIFEST, sha, len(manifest_bytes), git_blob_oid(manifest_bytes), manifest_bytes
    )
    return LocalRelease(folder, manifest, files)


def published_manifest(manifest: dict[str, Any], data: bytes) -> bytes:
    """The manifest as uploaded: without ``local_files``, the hashes of the files that stay
    beside the build (its page, the places of its records), which change when the sources are
    only reordered; a release that does not change is then the same bytes on the Hub."""
    if "local_files" not in manifest:
        return data
    kept = {k: v for k, v in manifest.items() if k != "local_files"}
    return (json.dumps(kept, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _read_manifest(folder: Path) -> tuple[dict[str, Any], bytes]:
    """The folder's manifest, refused unless it lists only files publish may upload."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file() and not manifest_path.is_symlink():
        raise PublishError(f"{folder} has no {MANIFEST}: it is not a `curate build` folder")
    try:
        manifest_bytes = _read_inside(folder, MANIFEST)
        manifest = json.loads(manifest_bytes.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise PublishError(f"{manifest_path}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise PublishError(f"{manifest_path}: cannot be read ({exc.strerror})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise PublishError(f"{manifest_path}: no file inventory")
    version = manifest.get("version")
    if not isinstance(version, str) or not SEMVER.match(version) or version.startswith("v"):
        raise PublishError(f"{manifest_path}: version {version!r} is not X.Y.Z")
    listed: dict[str, Any] = manifest["files"]
    bad_keys = [p for p in (manifest_key_problem(rel) for rel in listed) if p]
    if MANIFEST in listed:
        bad_keys.append(f"{MANIFEST} lists itself")
    bad_keys += [
        f"{rel}: its entry has no sha256"
        for rel, entry in listed.items()
        if isinstance(rel, str)
        and not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str))
    ]
    if bad_keys:
        raise PublishError(
            f"{manifest_path} names files publish will not upload: " + "; ".join(bad_keys[:5])
        )
    if REPORT not in listed:
        raise PublishError(f"{folder} has no {REPORT}: refusing to publish an unchecked build")
    return manifest, manifest_bytes


def _read_listed(
    folder: Path, listed: dict[str, Any], local: Iterable[str] = ()
) -> dict[str, LocalFile]:
    """Every file the manifest lists, read once and held to its sha256; nothing else there."""
    problems = []
    files: dict[str, LocalFile] = {}
    for rel in sorted(listed):
        try:
            data = _read_inside(folder, rel)
        except FileNotFoundError:
            problems.append(f"{rel} is missing")
            continue
        except PublishError as exc:
            problems.append(str(exc))
            continue
        except OSError as exc:
            problems.append(f"{rel} cannot be read ({exc.strerror})")
            continue
        sha = hashlib.sha256(data).hexdigest()
        if sha != listed[rel]["sha256"]:
            problems.append(f"{rel} does not match its sha256 in {MANIFEST}")
        files[rel] = LocalFile(rel, sha, len(data), git_blob_oid(data), data)
    present, links = _present(folder)
    problems += [f"{rel} is a symlink; publish uploads only its own files" for rel in links]
    # The build's local files (its page, rejected rows) stay on this side: never uploaded.
    extra = sorted(present - set(listed) - {MANIFEST, REPORT_HTML, *local})
    problems += [f"{rel} is not listed in {MANIFEST}" for rel in extra]
    if problems:
        raise PublishError(
            f"{folder} is not the folder its manifest describes: "
            + "; ".join(dict.fromkeys(problems))
        )
    return files


def _check_report(folder: Path, files: dict[str, LocalFile]) -> None:
    """Refuse a build whose own validation report holds an error."""
    try:
        report = json.loads(files[REPORT].data.decode("utf-8"))
        summary = report["summary"]
        errors = int(summary["errors"])
        flagged = [f for f in report.get("findings", []) if f.get("severity") == "error"]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PublishError(f"{folder / REPORT}: cannot read its summary ({exc})") from None
    errors = max(errors, len(flagged))
    if errors:
        raise PublishError(
            f"{folder / REPORT} holds {errors} validation error(s): fix the sources and rebuild"
        )


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

    Raises :class:`PublishError` for a refusal, :class:`curate.release.hub.HubAuthError` for
    credentials the Hub does not accept, :class:`curate.release.hub.HubError` when the Hub keeps
    failing.
    """
    say = say or (lambda _msg: None)
    if not hub.REPO_ID.match(repo_id):
        raise ReleaseUsageError(f"--repo-id must be ORG/NAME, got {repo_id!r}")
    local = check_folder(folder)
    built_for = local.manifest.get("repo_id")
    if built_for and built_for != repo_id:
        raise PublishError(
            f"{local.folder} was built for {built_for} (its card and Croissant file name it); "
            f"set repo_id = {repo_id!r} in the settings and rebuild, or publish to {built_for}"
        )
    checked = count(len(local.files), "file")
    say(f"{local.folder}: v{local.version}, {checked} checked against {MANIFEST}")

    with hub.connection(f"publishing to {repo_id}"):
        return _publish(local, repo_id, private, dry_run, token, say, sleep)


def _publish(
    local: LocalRelease,
    repo_id: str,
    private: bool,
    dry_run: bool,
    token: str | None,
    say: hub.Say,
    sleep: hub.Sleep | None,
) -> PublishResult:
    """The Hub side of :func:`publish`, run inside :func:`curate.release.hub.connection`."""
    token = token or get_token()
    if not token and not dry_run:
        raise hub.HubAuthError(f"not logged in to the Hugging Face Hub; {hub.LOGIN_HINT}")
    session = _Session(repo_id, token, sleep, say)
    result = PublishResult(repo_id, local.version, local.tag, action="dry-run" if dry_run else "")

    info = session.info()
    head: str | None = None
    remote: list[Any] = []
    plan_repo = None
    if info is None:
        plan_repo = f"create dataset repo {repo_id} ({'private' if private else 'public'})"
    else:
        settled = _against_existing(session, local, info, private, dry_run, result)
        if isinstance(settled, PublishResult):
            return settled
        head, remote = settled

    stale = sorted(
        e.path
        for e in remote
        if hasattr(e, "blob_id") and e.path not in IGNORED_REMOTE and e.path not in local.files
    )
    message = f"Release v{local.version}"
    total = sum(f.size for f in local.files.values())
    result.plan = [
        *([plan_repo] if plan_repo else []),
        f"upload {count(len(local.files), 'file')} ({_size(total)}) in one commit {message!r}"
        + (f" on top of main@{head[:12]}" if head else ""),
        *[f"  {f.path}  {_size(f.size)}  sha256 {f.sha256[:16]}" for f in local.files.values()],
        *[f"delete {path} (not in this release)" for path in stale],
        f"tag that commit {local.tag}",
    ]
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
        say(f"created dataset repo {repo_id}")
        head = session.run(session.head, f"reading {repo_id}")
    assert head is not None

    sha = _commit(session, local, head, stale, message)
    result.commit = sha
    say(f"committed {count(len(local.files), 'file')} to {repo_id}: {sha[:12]} {message!r}")
    _tag(session, local, sha)
    result.action = "published"
    say(f"tagged {sha[:12]} as {local.tag}")
    return result


def _against_existing(
    session: _Session,
    local: LocalRelease,
    info: Any,
    private: bool,
    dry_run: bool,
    result: PublishResult,
) -> PublishResult | tuple[str, list[Any]]:
    """What an existing repository allows: the finished result when there is nothing to
    upload (already published, or only the tag missing), else its head and its files."""
    repo_id, say = session.repo_id, session.say
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
    return head, remote


def _commit(
    session: _Session, local: LocalRelease, head: str, stale: list[str], message: str
) -> str:
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=rel, path_or_fileobj=f.data)
        for rel, f in local.files.items()
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
