"""Comparing two releases record by record.

Two releases are compared by ``id`` (the stable id derived from the normalised text): ids only in
the new one were added, ids only in the old one removed, ids in both whose columns differ changed.
The schema is compared from the Parquet files, and the manifests for changes of metadata; the
level of the biggest change decides the version bump (:mod:`curate.release.versions`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from curate.release.load import Release

EXCERPT = 80
VERSION_INDEPENDENT = {"version", "files"}  # manifest keys that change with the version alone


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
