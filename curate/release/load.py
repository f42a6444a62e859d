"""Reading a release: a build folder, a bare Parquet file, or a tagged revision on the Hub.

A release is what ``curate build`` writes (a folder with ``manifest.json`` and Parquet files), a
bare Parquet file, or a tagged revision of a dataset repository on the Hub
(``hub:ORG/NAME[@REVISION]``; without a revision, the newest ``vX.Y.Z`` tag). It is read
completely into memory: the previous release may be about to be replaced on disk by the build
that compares with it. It is held as its Parquet files' bytes, decoded where asked
(:mod:`curate.release.rows`): decoded whole, and worse as a Python dict per row, it would take
many times that, in every build that continues a large release.
"""

from __future__ import annotations

import json
import posixpath
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curate.dataset.manifest import CHANGELOG, MANIFEST, POSITIONS, REPORT_JSON
from curate.errors import NoPreviousRelease, ReleaseError, ReleaseUsageError
from curate.release import hub
from curate.release.versions import SEMVER, parse_version

if TYPE_CHECKING:
    import pyarrow as pa

    from curate.release.rows import StoredRows

HUB_PREFIX = "hub:"


@dataclass
class Release:
    """One release, read completely into memory (the previous release may be about to be
    replaced on disk by the build that compares with it)."""

    label: str
    rows: StoredRows  # its rows (ids unique), as its Parquet files hold them, in their order
    schema: list[dict[str, Any]]
    manifest: dict[str, Any] | None = None
    changelog: str | None = None
    report: bytes | None = None  # its validation-report.json, as published
    # Where each row's sources were in their files (a build folder's positions.parquet: the
    # columns `id` and `sources`, a list of structs of `file`, `line` and `row`)
    positions: pa.Table | None = None

    @property
    def fingerprint_version(self) -> int:
        """The definition of :attr:`fingerprint` (a manifest without the key: version 1)."""
        from curate.dataset.manifest import FINGERPRINT_VERSION

        if self.manifest and self.manifest.get("fingerprint"):
            return int(self.manifest.get("fingerprint_version", 1))
        return FINGERPRINT_VERSION

    @property
    def version(self) -> str | None:
        return self.manifest.get("version") if self.manifest else None

    @property
    def fingerprint(self) -> str:
        from curate.dataset.manifest import fingerprint_of, row_digests

        if self.manifest and self.manifest.get("fingerprint"):
            return str(self.manifest["fingerprint"])
        return fingerprint_of(row_digests(self.rows.read().sort_by("id")))

    def rows_of(self, ids: Iterable[Any], columns: Sequence[str]) -> dict[Any, dict[str, Any]]:
        """The rows of ``ids`` this release holds, by id, with ``id`` and those of ``columns``
        it has: only those become Python values."""
        from curate.release.rows import rows_by_id

        return rows_by_id(self.rows, ids, columns)

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "version": self.version,
            "fingerprint": self.fingerprint,
            "fingerprint_version": self.fingerprint_version,
            "rows": self.rows.num_rows,
        }


def parquet_schema(schema: pa.Schema) -> list[dict[str, Any]]:
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def read_parquet_files(paths: list[Path], label: str) -> tuple[StoredRows, list[dict[str, Any]]]:
    """The rows of ``paths``, in their order, held as the files' bytes (:class:`StoredRows`),
    and their schema as the diff lists it; refused if an id occurs twice."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from curate.release.rows import StoredRows, repeated

    if not paths:
        raise ReleaseError(f"{label}: no Parquet file")
    files, schemas = [], []
    for path in paths:
        try:
            with pa.OSFile(str(path)) as fh:  # into memory: the files may be replaced
                files.append((path.name, fh.read_buffer()))
            schemas.append(pq.read_schema(pa.BufferReader(files[-1][1])).remove_metadata())
        except (OSError, pa.ArrowException) as exc:
            raise ReleaseError(f"{label}: cannot read {path.name}: {exc}") from None
    for path, schema in zip(paths[1:], schemas[1:], strict=True):
        if not schema.equals(schemas[0]):
            raise ReleaseError(f"{label}: {path.name} has another schema than {paths[0].name}")
    if "id" not in schemas[0].names:
        raise ReleaseError(f"{label}: no `id` column, so records cannot be matched by id")
    rows = StoredRows(files, label)
    again = repeated(rows.ids)
    if again is not None:
        raise ReleaseError(f"{label}: id {rows.ids[again].as_py()} occurs more than once")
    return rows, parquet_schema(schemas[0])


def read_folder(folder: Path, label: str | None = None) -> Release:
    """A build folder: ``manifest.json`` (checked against the files) and its Parquet files."""
    from curate.io import sha256_file

    label = label or str(folder)
    manifest = None
    changelog = None
    report = None
    manifest_path = folder / MANIFEST
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ReleaseError(f"{label}: {MANIFEST} is not valid JSON: {exc}") from None
        if not isinstance(manifest, dict):
            raise ReleaseError(f"{label}: {MANIFEST} is not a JSON object")
        listed = manifest.get("files") or {}
        problem = inventory_problem(listed)
        if problem:
            raise ReleaseError(f"{label}: {MANIFEST} {problem}")
        parquet_names = sorted(name for name in listed if name.endswith(".parquet"))
        for name in [*parquet_names, *([CHANGELOG] if CHANGELOG in listed else [])]:
            path = folder / name
            if not path.is_file():
                raise ReleaseError(f"{label}: {name} is listed in {MANIFEST} but missing")
            if sha256_file(path) != listed[name].get("sha256"):
                raise ReleaseError(f"{label}: {name} does not match its sha256 in {MANIFEST}")
        paths = [folder / name for name in parquet_names]
        if CHANGELOG in listed:
            changelog = (folder / CHANGELOG).read_text(encoding="utf-8")
        if REPORT_JSON in listed and (folder / REPORT_JSON).is_file():
            report = (folder / REPORT_JSON).read_bytes()
    else:
        paths = sorted(folder.glob("data/**/*.parquet")) or sorted(folder.glob("*.parquet"))
    rows, schema = read_parquet_files(paths, label)
    positions = read_positions(folder / POSITIONS) if manifest is not None else None
    return Release(label, rows, schema, manifest, changelog, report, positions)


def read_positions(path: Path) -> pa.Table | None:
    """Where each row's sources are (``id``, ``sources``), as a build wrote them beside its
    table (None without the file, or one that does not read: it only ever adds a count of
    moves)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        return None
    try:
        return pq.read_table(path, columns=["id", "sources"])
    except (OSError, KeyError, pa.ArrowException):
        return None


def manifest_key_problem(rel: object) -> str | None:
    """Why a manifest key may not name a file of its folder, or None if it may.

    A key is joined to the folder, so anything but a plain relative path inside it would let a
    manifest read or publish a file from elsewhere (``/etc/passwd``, ``../secrets``).
    """
    if not isinstance(rel, str) or not rel:
        return f"{rel!r} is not a file name"
    if rel.startswith("/") or "\\" in rel or re.match(r"^[A-Za-z]:", rel):
        return f"{rel!r} is an absolute path"
    if any(ord(c) < 32 for c in rel):
        return f"{rel!r} holds control characters"
    parts = rel.split("/")
    if ".." in parts:
        return f"{rel!r} leaves the folder"
    if posixpath.normpath(rel) != rel or "" in parts or "." in parts:
        return f"{rel!r} is not a normalised relative path"
    return None


def inventory_problem(listed: object) -> str | None:
    """What is wrong with a manifest's ``files`` (one line), or None: it must map normalised
    relative paths to objects holding a ``sha256`` string."""
    if not isinstance(listed, dict):
        return "has no file inventory (`files` is not an object)"
    for rel, entry in listed.items():
        problem = manifest_key_problem(rel)
        if problem:
            return f"names a file outside its folder: {problem}"
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)):
            return f"lists {rel} without a sha256"
    return None


def parse_hub_ref(ref: str) -> tuple[str, str | None]:
    body = ref[len(HUB_PREFIX) :]
    repo_id, _, revision = body.partition("@")
    if not hub.REPO_ID.match(repo_id) or (_ and not revision):
        raise ReleaseUsageError(f"not a Hub reference hub:ORG/NAME[@REVISION]: {ref!r}")
    return repo_id, revision or None


def latest_tag(tags: list[str]) -> str | None:
    """The ``vX.Y.Z`` tag with the highest version."""
    versions = [(parse_version(t), t) for t in tags if t.startswith("v") and SEMVER.match(t)]
    return max(versions)[1] if versions else None


def read_hub(
    repo_id: str,
    revision: str | None,
    *,
    token: str | None = None,
    sleep: hub.Sleep | None = None,
    say: hub.Say | None = None,
) -> Release:
    """Download a release (manifest, changelog, Parquet files) into a temporary folder and read it.

    Without ``revision``: the newest ``vX.Y.Z`` tag. :class:`NoPreviousRelease` if the repository
    does not exist or holds no such tag.
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    what = f"reading hub:{repo_id}"
    with hub.reading(
        what, repo_id, token,
        not_found=lambda: NoPreviousRelease(
            f"hub:{repo_id} not found on the Hub (or not visible with these credentials)"
        ),
        no_revision=lambda: ReleaseError(f"hub:{repo_id} has no revision {revision!r}"),
    ):  # fmt: skip
        return _download(api, repo_id, revision, token, what, sleep, say)


def _download(
    api: Any,
    repo_id: str,
    revision: str | None,
    token: str | None,
    what: str,
    sleep: hub.Sleep | None,
    say: hub.Say | None,
) -> Release:
    from huggingface_hub import snapshot_download

    if revision is None:
        refs = hub.call(
            lambda: api.list_repo_refs(repo_id, repo_type="dataset"),
            what,
            sleep=sleep,
            say=say,
        )
        revision = latest_tag([t.name for t in refs.tags])
        if revision is None:
            raise NoPreviousRelease(f"hub:{repo_id} has no release tag vX.Y.Z yet")
    with tempfile.TemporaryDirectory(prefix="curate-previous-") as tmp:
        local = Path(tmp) / "release"
        hub.call(
            lambda: snapshot_download(
                repo_id,
                repo_type="dataset",
                revision=revision,
                local_dir=local,
                allow_patterns=[MANIFEST, CHANGELOG, REPORT_JSON, "*.parquet"],
                token=token,
            ),
            what,
            sleep=sleep,
            say=say,
        )
        return read_folder(local, label=f"hub:{repo_id}@{revision}")


def load_release(
    ref: str | Path,
    *,
    token: str | None = None,
    sleep: hub.Sleep | None = None,
    say: hub.Say | None = None,
) -> Release:
    """A build folder, a Parquet file or ``hub:ORG/NAME[@REVISION]``."""
    text = str(ref)
    if text.startswith(HUB_PREFIX):
        repo_id, revision = parse_hub_ref(text)
        return read_hub(repo_id, revision, token=token, sleep=sleep, say=say)
    path = Path(ref)
    if path.is_dir():
        return read_folder(path, label=text)
    if path.is_file():
        if path.suffix != ".parquet":
            raise ReleaseUsageError(f"{text}: not a build folder or a .parquet file")
        rows, schema = read_parquet_files([path], text)
        return Release(text, rows, schema)
    raise ReleaseUsageError(f"{text}: no such build folder or Parquet file")


# --- comparing ------------------------------------------------------------------------------------
