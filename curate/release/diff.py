"""Releases: read one, compare two, decide the next version and write the changelog.

A release is what ``curate build`` writes (a folder with ``manifest.json`` and Parquet files), a
bare Parquet file, or a tagged revision of a dataset repository on the Hub
(``hub:ORG/NAME[@REVISION]``; without a revision, the newest ``vX.Y.Z`` tag).

Two releases are compared by ``id`` (the stable id derived from the normalised text): ids only in
the new one were added, ids only in the old one removed, ids in both whose columns differ changed.
The schema is compared from the Parquet files. The version bump follows from the comparison:

- major: the schema changed (a column added, removed, retyped, reordered or its nullability);
- minor: records were added or removed;
- patch: only text or metadata changed (a record's columns, the card, the settings, ...);
- none: nothing changed, and the build is the previous release again.
"""

from __future__ import annotations

import json
import posixpath
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curate.release import hub

if TYPE_CHECKING:
    import pyarrow as pa

CHANGELOG = "CHANGELOG.md"
MANIFEST = "manifest.json"
HUB_PREFIX = "hub:"
SEMVER = re.compile(r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
LEVELS = ("major", "minor", "patch")
EXCERPT = 80
MAX_LISTED = 500  # per changelog section; `curate diff --format json` always lists everything
VERSION_INDEPENDENT = {"version", "files"}  # manifest keys that change with the version alone


class ReleaseError(Exception):
    """A release that cannot be read, or a version that cannot be used."""


class ReleaseUsageError(ReleaseError):
    """The reference itself is wrong (no such path, malformed ``hub:`` reference)."""


class NoPreviousRelease(ReleaseError):
    """The Hub repository does not exist or has no ``vX.Y.Z`` tag yet."""


# --- versions -------------------------------------------------------------------------------------
def parse_version(text: str) -> tuple[int, int, int]:
    match = SEMVER.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ReleaseUsageError(f"not a semantic version X.Y.Z: {text!r}")
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def format_version(parts: tuple[int, int, int]) -> str:
    return ".".join(str(p) for p in parts)


def normalize_version(text: str) -> str:
    return format_version(parse_version(text))


def bump(version: str, level: str) -> str:
    major, minor, patch = parse_version(version)
    if level == "major":
        return format_version((major + 1, 0, 0))
    if level == "minor":
        return format_version((major, minor + 1, 0))
    if level == "patch":
        return format_version((major, minor, patch + 1))
    raise ValueError(f"unknown bump level {level!r}")


def level_between(old: str, new: str) -> str | None:
    """The bump that leads from ``old`` to ``new`` (None if equal)."""
    a, b = parse_version(old), parse_version(new)
    for i, level in enumerate(LEVELS):
        if a[i] != b[i]:
            return level
    return None


@dataclass(frozen=True)
class VersionDecision:
    version: str
    level: str | None  # what the changes call for
    note: str | None = None  # a warning for people (a smaller bump than the changes call for)


def decide_version(
    previous: str | None, level: str | None, requested: str | None, default: str
) -> VersionDecision:
    """The version of a new build.

    Without a previous release it is ``requested`` or the configured ``default``. With one it is
    the previous version bumped by ``level`` (unchanged if nothing changed), unless ``requested``
    overrides it; an override may not go backwards, nor reuse the previous version for content
    that differs from it.
    """
    if previous is None:
        return VersionDecision(normalize_version(requested or default), level)
    prev = normalize_version(previous)
    if requested is None:
        return VersionDecision(bump(prev, level) if level else prev, level)
    wanted = normalize_version(requested)
    if parse_version(wanted) < parse_version(prev):
        raise ReleaseError(f"--version {wanted} goes backwards: the previous release is {prev}")
    if wanted == prev and level is not None:
        raise ReleaseError(
            f"--version {wanted} is the previous release's version, but the content differs "
            f"({level} change); use {bump(prev, level)} or later"
        )
    note = None
    given = level_between(prev, wanted)
    if level is not None and given is not None and LEVELS.index(given) > LEVELS.index(level):
        note = (
            f"--version {wanted} is a {given} bump, but the changes call for a {level} bump "
            f"({bump(prev, level)})"
        )
    return VersionDecision(wanted, level, note)


# --- reading a release ----------------------------------------------------------------------------
@dataclass
class Release:
    """One release, read completely into memory (the previous release may be about to be
    replaced on disk by the build that compares with it)."""

    label: str
    rows: dict[str, dict[str, Any]]
    schema: list[dict[str, Any]]
    manifest: dict[str, Any] | None = None
    changelog: str | None = None

    @property
    def version(self) -> str | None:
        return self.manifest.get("version") if self.manifest else None

    @property
    def fingerprint(self) -> str:
        from curate.release.output import canonical_fingerprint

        if self.manifest and self.manifest.get("fingerprint"):
            return str(self.manifest["fingerprint"])
        return canonical_fingerprint([self.rows[k] for k in sorted(self.rows)])

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "version": self.version,
            "fingerprint": self.fingerprint,
            "rows": len(self.rows),
        }


def parquet_schema(schema: pa.Schema) -> list[dict[str, Any]]:
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def read_parquet_files(paths: list[Path], label: str) -> tuple[dict, list[dict[str, Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not paths:
        raise ReleaseError(f"{label}: no Parquet file")
    tables = []
    for path in paths:
        try:
            tables.append(pq.read_table(path))
        except (OSError, pa.ArrowException) as exc:
            raise ReleaseError(f"{label}: cannot read {path.name}: {exc}") from None
    schema = tables[0].schema.remove_metadata()
    for path, table in zip(paths[1:], tables[1:], strict=True):
        if not table.schema.remove_metadata().equals(schema):
            raise ReleaseError(f"{label}: {path.name} has another schema than {paths[0].name}")
    if "id" not in schema.names:
        raise ReleaseError(f"{label}: no `id` column, so records cannot be matched by id")
    rows: dict[str, dict[str, Any]] = {}
    for table in tables:
        for row in table.to_pylist():
            key = row["id"]
            if key in rows:
                raise ReleaseError(f"{label}: id {key} occurs more than once")
            rows[key] = row
    return rows, parquet_schema(schema)


def read_folder(folder: Path, label: str | None = None) -> Release:
    """A build folder: ``manifest.json`` (checked against the files) and its Parquet files."""
    from curate.release.output import sha256_file

    label = label or str(folder)
    manifest = None
    changelog = None
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
    else:
        paths = sorted(folder.glob("data/**/*.parquet")) or sorted(folder.glob("*.parquet"))
    rows, schema = read_parquet_files(paths, label)
    return Release(label, rows, schema, manifest, changelog)


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
    from huggingface_hub.errors import (
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    api = HfApi(token=token)
    what = f"reading hub:{repo_id}"
    try:
        with hub.connection(what):
            return _download(api, repo_id, revision, token, what, sleep, say)
    except RepositoryNotFoundError as exc:
        if token and hub.status_of(exc) == 401:
            raise hub.auth_error(exc, what, repo_id) or hub.HubError(str(exc)) from None
        raise NoPreviousRelease(
            f"hub:{repo_id} not found on the Hub (or not visible with these credentials)"
        ) from None
    except RevisionNotFoundError:
        raise ReleaseError(f"hub:{repo_id} has no revision {revision!r}") from None
    except HfHubHTTPError as exc:
        raise (
            hub.auth_error(exc, what, repo_id) or hub.HubError(hub.describe(exc, what, token))
        ) from None
    except hub.HubError:
        raise
    except Exception as exc:
        if hub.is_transient(exc):  # raised inside huggingface_hub's worker threads
            raise hub.HubError(hub.describe(hub._unwrap(exc), what, token)) from None
        raise


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
                allow_patterns=[MANIFEST, CHANGELOG, "*.parquet"],
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
def _one_line(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def excerpt(value: Any, width: int = EXCERPT) -> str:
    text = _one_line(value)
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def change_excerpt(before: Any, after: Any, width: int = EXCERPT // 2) -> tuple[str, str]:
    """Short excerpts of ``before`` and ``after`` around the first place they differ."""
    a, b = _one_line(before), _one_line(after)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    lead = max(0, start - width // 3)

    def cut(text: str) -> str:
        piece = text[lead : lead + width]
        return ("…" if lead else "") + piece + ("…" if lead + width < len(text) else "")

    return cut(a), cut(b)


@dataclass
class RowChange:
    id: str
    columns: list[str]
    before: str
    after: str


@dataclass
class Diff:
    old: dict[str, Any]
    new: dict[str, Any]
    added: list[tuple[str, str]] = field(default_factory=list)  # (id, excerpt)
    removed: list[tuple[str, str]] = field(default_factory=list)
    changed: list[RowChange] = field(default_factory=list)
    schema: list[str] = field(default_factory=list)
    metadata: list[str] = field(default_factory=list)

    @property
    def data_changed(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.schema)

    @property
    def level(self) -> str | None:
        if self.schema:
            return "major"
        if self.added or self.removed:
            return "minor"
        if self.changed or self.metadata:
            return "patch"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "level": self.level,
            "counts": {
                "old_rows": self.old["rows"],
                "new_rows": self.new["rows"],
                "added": len(self.added),
                "removed": len(self.removed),
                "changed": len(self.changed),
            },
            "schema": self.schema,
            "added": [{"id": i, "excerpt": e} for i, e in self.added],
            "removed": [{"id": i, "excerpt": e} for i, e in self.removed],
            "changed": [
                {"id": c.id, "columns": c.columns, "before": c.before, "after": c.after}
                for c in self.changed
            ],
            "metadata": self.metadata,
        }


def schema_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    before = {c["name"]: c for c in old}
    after = {c["name"]: c for c in new}
    out = []
    for c in new:
        if c["name"] not in before:
            out.append(f"column `{c['name']}` added ({c['type']})")
    for c in old:
        if c["name"] not in after:
            out.append(f"column `{c['name']}` removed ({c['type']})")
    for c in new:
        b = before.get(c["name"])
        if b is None:
            continue
        if b["type"] != c["type"]:
            out.append(f"column `{c['name']}` type {b['type']} → {c['type']}")
        if b.get("nullable") != c.get("nullable"):
            state = "nullable" if c.get("nullable") else "not nullable"
            out.append(f"column `{c['name']}` is now {state}")
    common_old = [c["name"] for c in old if c["name"] in after]
    common_new = [c["name"] for c in new if c["name"] in before]
    if common_old != common_new:
        out.append("columns reordered: " + ", ".join(f"`{n}`" for n in common_new))
    return out


def _text_column(row: dict[str, Any]) -> str:
    for name in ("abstract", "text"):
        if isinstance(row.get(name), str):
            return name
    return next((k for k, v in row.items() if k != "id" and isinstance(v, str)), "id")


def manifest_changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """What differs between two manifests besides the rows, the schema and the version."""
    if not old or not new:
        return []
    out = []
    old_files, new_files = old.get("files") or {}, new.get("files") or {}
    for name in sorted(set(old_files) | set(new_files)):
        if name not in old_files:
            out.append(f"file {name} added")
        elif name not in new_files:
            out.append(f"file {name} removed")
        elif old_files[name].get("sha256") != new_files[name].get("sha256"):
            out.append(f"file {name} changed")
    # local_files: the hash of the build's own report page, which is not part of the release
    skip = VERSION_INDEPENDENT | {"fingerprint", "rows", "schema", "local_files"}
    for key in sorted((set(old) | set(new)) - skip):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for sub in sorted(set(a) | set(b)):
                if a.get(sub) != b.get(sub):
                    out.append(
                        f"{key}.{sub}: {excerpt(a.get(sub), 40)} → {excerpt(b.get(sub), 40)}"
                    )
        elif key == "sources" and isinstance(a, list) and isinstance(b, list):
            names_a = {s.get("name"): s.get("sha256") for s in a}
            names_b = {s.get("name"): s.get("sha256") for s in b}
            for name in sorted(set(names_a) | set(names_b)):
                if name not in names_a:
                    out.append(f"source {name} added")
                elif name not in names_b:
                    out.append(f"source {name} removed")
                elif names_a[name] != names_b[name]:
                    out.append(f"source {name} changed")
        else:
            out.append(f"{key}: {excerpt(a, 40)} → {excerpt(b, 40)}")
    return out


def diff_releases(old: Release, new: Release, *, metadata: list[str] | None = None) -> Diff:
    """``new`` compared with ``old``. ``metadata`` overrides the manifest comparison (the build
    passes what differs once the version is set aside)."""
    diff = Diff(old=old.summary(), new=new.summary())
    old_ids, new_ids = set(old.rows), set(new.rows)
    for key in sorted(new_ids - old_ids):
        row = new.rows[key]
        diff.added.append((key, excerpt(row.get(_text_column(row)))))
    for key in sorted(old_ids - new_ids):
        row = old.rows[key]
        diff.removed.append((key, excerpt(row.get(_text_column(row)))))
    for key in sorted(old_ids & new_ids):
        a, b = old.rows[key], new.rows[key]
        columns = [c for c in dict.fromkeys([*a, *b]) if a.get(c) != b.get(c)]
        if not columns:
            continue
        shown = next((c for c in ("abstract", "abstract_raw", "text") if c in columns), columns[0])
        before, after = change_excerpt(a.get(shown), b.get(shown))
        diff.changed.append(RowChange(key, columns, before, after))
    diff.schema = schema_changes(old.schema, new.schema)
    diff.metadata = (
        metadata if metadata is not None else manifest_changes(old.manifest, new.manifest)
    )
    return diff


# --- rendering ------------------------------------------------------------------------------------
def _name(summary: dict[str, Any]) -> str:
    return f"{summary['label']} (v{summary['version']})" if summary["version"] else summary["label"]


def counts_line(diff: Diff) -> str:
    return (
        f"{diff.old['rows']} → {diff.new['rows']} records: {len(diff.added)} added, "
        f"{len(diff.removed)} removed, {len(diff.changed)} changed"
    )


def render_text(diff: Diff, limit: int | None = 50) -> str:
    """The terminal summary of ``curate diff``."""
    lines = [f"{_name(diff.old)} → {_name(diff.new)}", counts_line(diff)]
    lines.append("schema: " + ("; ".join(diff.schema) if diff.schema else "unchanged"))
    lines.append(f"bump: {diff.level or 'none (identical content)'}")

    def section(title: str, items: list[str]) -> None:
        if not items:
            return
        lines.append(f"{title} ({len(items)}):")
        shown = items if limit is None else items[:limit]
        lines.extend(f"  {item}" for item in shown)
        if len(shown) < len(items):
            lines.append(f"  … and {len(items) - len(shown)} more (--format json lists all)")

    section("added", [f"+ {i}  {e}" for i, e in diff.added])
    section("removed", [f"- {i}  {e}" for i, e in diff.removed])
    section(
        "changed",
        [f"~ {c.id}  [{', '.join(c.columns)}]  {c.before}  →  {c.after}" for c in diff.changed],
    )
    section("metadata", diff.metadata)
    return "\n".join(lines) + "\n"


def render_json(diff: Diff) -> str:
    return json.dumps(diff.to_dict(), ensure_ascii=False, indent=2) + "\n"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def _md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _code_list(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def changelog_section(diff: Diff, version: str, previous: str) -> str:
    """The changelog entry of ``version``: what changed since ``previous``."""
    level = diff.level
    title = f"## {version}" + (f" ({level} release)" if level else "")
    lines = [title, ""]
    lines.append(f"Compared with {previous}: {counts_line(diff)}.")
    lines.append(f"Content fingerprint `{diff.new['fingerprint']}`.")
    if not level:
        lines += ["", "No change to the records, the schema or the metadata."]

    def section(heading: str, items: list[str]) -> None:
        if not items:
            return
        lines.extend(["", f"### {heading} ({len(items)})", ""])
        lines.extend(f"- {item}" for item in items[:MAX_LISTED])
        if len(items) > MAX_LISTED:
            lines.append(
                f"- … and {len(items) - MAX_LISTED} more: `curate diff --format json` lists all"
            )

    section("Schema changes", diff.schema)
    section("Added", [f"`{i}`: {_md(e)}" for i, e in diff.added])
    section("Removed", [f"`{i}`: {_md(e)}" for i, e in diff.removed])
    section(
        "Changed",
        [
            f"`{c.id}` ({_code_list(c.columns)}): {_md(c.before)} → {_md(c.after)}"
            for c in diff.changed
        ],
    )
    section("Metadata", [_md(m) for m in diff.metadata])
    return "\n".join(lines) + "\n"


def render_changelog(section: str, previous_changelog: str | None) -> str:
    """``CHANGELOG.md``: the new entry on top of the previous release's entries."""
    older = ""
    if previous_changelog:
        older = re.sub(r"\A# Changelog\s*\n", "", previous_changelog).strip("\n")
    parts = ["# Changelog", section.rstrip("\n")]
    if older:
        parts.append(older)
    return "\n\n".join(parts) + "\n"
