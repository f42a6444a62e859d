"""Comparing two releases record by record.

Two releases are compared by ``id`` (the stable id derived from the normalised text): ids only in
the new one were added, ids only in the old one removed, ids in both whose columns differ changed.
The schema is compared from the Parquet files, and the manifests for changes of metadata; the
level of the biggest change decides the version bump (:mod:`curate.release.versions`). The rows
are matched and compared in Arrow (:mod:`curate.release.rows`); only those added, removed or
changed become Python values, so a release of a million records costs no dict per record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from curate.dataset.manifest import DATA
from curate.release import rows
from curate.release.load import Release
from curate.release.rows import compared

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
class Edit:
    """A record whose text was edited: its id changed (the id is a hash of the words), but its
    new text is a near-duplicate of the old one."""

    old_id: str
    new_id: str
    similarity: float  # word-shingle Jaccard of the two texts
    words: str  # the word diff: ``[-removed-]{+added+}`` with a few words around each change
    source_id: str | None = None  # the id the sources give the record, which matched them


@dataclass
class Diff:
    old: dict[str, Any]
    new: dict[str, Any]
    added: list[tuple[str, str]] = field(default_factory=list)  # (id, excerpt)
    removed: list[tuple[str, str]] = field(default_factory=list)
    changed: list[RowChange] = field(default_factory=list)
    edited: list[Edit] = field(default_factory=list)  # neither in added nor in removed
    schema: list[str] = field(default_factory=list)
    metadata: list[str] = field(default_factory=list)
    # Records the same in both whose sources are at other lines or rows of their files (None:
    # a side without positions); never a change of the release, whose table names no places.
    moved: int | None = None
    source_ids: dict[str, str] = field(default_factory=dict)  # row id -> its sources' own id

    @property
    def data_changed(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.edited or self.schema)

    @property
    def level(self) -> str | None:
        if self.schema:
            return "major"
        if self.added or self.removed:
            return "minor"
        if self.changed or self.edited or self.metadata:
            return "patch"  # an edit is a text change of the same record, like a changed one
        return None

    def _own(self, row_id: str) -> dict[str, str]:
        own = self.source_ids.get(row_id)
        return {SOURCE_ID: own} if own is not None else {}

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
                "edited": len(self.edited),
                "moved": self.moved,
            },
            "schema": self.schema,
            "added": [{"id": i, **self._own(i), "excerpt": e} for i, e in self.added],
            "removed": [{"id": i, **self._own(i), "excerpt": e} for i, e in self.removed],
            "changed": [
                {
                    "id": c.id,
                    **self._own(c.id),
                    "columns": c.columns,
                    "before": c.before,
                    "after": c.after,
                }
                for c in self.changed
            ],
            "edited": [
                {
                    "old_id": e.old_id,
                    "new_id": e.new_id,
                    "similarity": round(e.similarity, 4),
                    "words": e.words,
                    **({SOURCE_ID: e.source_id} if e.source_id is not None else {}),
                }
                for e in self.edited
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


def _places(release: Release) -> Any:
    """Where each row's sources are, in its table's order (:func:`rows.places`), or None: no
    positions, or ones that do not read as places (they only ever add a count of moves)."""
    import pyarrow as pa

    try:
        return rows.places(release.rows, release.positions)
    except (pa.ArrowException, TypeError, KeyError):
        return None


def _text_column(row: dict[str, Any]) -> str:
    for name in ("abstract", "text"):
        if isinstance(row.get(name), str):
            return name
    return next((k for k, v in row.items() if k != "id" and isinstance(v, str)), "id")


def _files(names: list[str]) -> str:
    """A table's files in a line: their count, and the first and last."""
    if not names:
        return "no file"
    if len(names) == 1:
        return f"1 file ({names[0]})"
    return f"{len(names)} files ({names[0]} … {names[-1]})"


def manifest_changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """What differs between two manifests besides the rows, the schema and the version."""
    if not old or not new:
        return []
    out = []
    old_files, new_files = old.get("files") or {}, new.get("files") or {}
    # The table's files added or removed (its rows laid out in other shards or splits) are
    # one line: the rows themselves are compared on their own.
    tables = [sorted(n for n in f if n.startswith(DATA)) for f in (old_files, new_files)]
    if set(tables[0]) != set(tables[1]):
        out.append(f"the table's files: {_files(tables[0])} → {_files(tables[1])}")
    for name in sorted(set(old_files) | set(new_files)):
        if name.startswith(DATA) and not (name in old_files and name in new_files):
            continue
        if name not in old_files:
            out.append(f"file {name} added")
        elif name not in new_files:
            out.append(f"file {name} removed")
        elif old_files[name].get("sha256") != new_files[name].get("sha256"):
            out.append(f"file {name} changed")
    # local_files: the hash of the build's own report page, which is not part of the release
    skip = VERSION_INDEPENDENT | {"fingerprint", "fingerprint_version", "rows", "schema"}
    skip |= {"local_files"}
    before, after = (m.get("fingerprint_version", 1) for m in (old, new))
    if before != after:
        out.append(
            f"the content fingerprint is defined anew (version {before} → {after}), so the "
            "fingerprints differ; the rows were compared one by one"
        )
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
    matched = rows.match(old.rows.ids, new.rows.ids)
    removed = {r["id"]: r for r in old.rows.take(matched.removed)}
    added = {r["id"]: r for r in new.rows.take(matched.added)}
    by_key = same_source_id(removed, added)
    diff.edited = sorted(
        by_key + edits(
            {k: v for k, v in removed.items() if k not in {e.old_id for e in by_key}},
            {k: v for k, v in added.items() if k not in {e.new_id for e in by_key}},
        ),
        key=lambda e: e.new_id,
    )  # fmt: skip
    edited_old = {e.old_id for e in diff.edited}
    edited_new = {e.new_id for e in diff.edited}
    for key in sorted(added.keys() - edited_new):
        row = added[key]
        diff.added.append((key, excerpt(row.get(_text_column(row)))))
    for key in sorted(removed.keys() - edited_old):
        row = removed[key]
        diff.removed.append((key, excerpt(row.get(_text_column(row)))))
    changed, at = _changed(old, new, matched)
    diff.changed = [c for c, _ in changed]
    fresh = added | {c.id: row for c, row in changed}  # the new rows of changed records
    for by_id, keys in (
        (fresh, [k for k, _ in diff.added] + [c.id for c in diff.changed]),
        (removed, [k for k, _ in diff.removed]),
    ):
        diff.source_ids |= {k: str(by_id[k][SOURCE_ID]) for k in keys
                            if by_id[k].get(SOURCE_ID) is not None}  # fmt: skip
    before, after = _places(old), _places(new)
    if before is not None and after is not None:
        moves = rows.moved(before, after, matched)
        moves[at] = False  # a changed record is counted as changed, not as moved
        diff.moved = int(moves.sum())
    diff.schema = schema_changes(old.schema, new.schema)
    diff.metadata = (
        metadata if metadata is not None else manifest_changes(old.manifest, new.manifest)
    )
    return diff


def _changed(
    old: Release, new: Release, matched: rows.Matched
) -> tuple[list[tuple[RowChange, dict[str, Any]]], list[int]]:
    """The records in both whose columns differ, by id, each with its new row; and their
    positions in ``matched``. Arrow finds the rows that may differ; only those are compared
    as Python values, column by column, as ever."""
    # A column only one side has is a schema change, said once, not a change of each row.
    columns = [c for c in old.rows.column_names if c in new.rows.column_names]
    maybe = rows.differing(old.rows, new.rows, matched, columns)
    befores = old.rows.take(matched.old[maybe])
    afters = new.rows.take(matched.new[maybe])
    found = []
    for at, a, b in zip(maybe.tolist(), befores, afters, strict=True):
        differ = [c for c in a if c in b and compared(c, a[c]) != compared(c, b[c])]
        if not differ:
            continue
        text = _text_column(a)
        shown = next((c for c in (text, f"{text}_raw") if c in differ), differ[0])
        before, after = change_excerpt(a.get(shown), b.get(shown))
        found.append((a["id"], RowChange(a["id"], differ, before, after), b, at))
    found.sort(key=lambda f: f[0])
    return [(change, row) for _, change, row, _ in found], [at for *_, at in found]


# An added record is an edit of a removed one at or above this word 3-shingle similarity: the
# near-duplicate threshold, so that an edit is what the build would merge as the same abstract.
EDIT_SIMILARITY = 0.8
EDIT_SHINGLE = 3
WORD_CONTEXT = 4  # words shown around each change of a word diff


def _raw(row: dict[str, Any]) -> str:
    text = _text_column(row)
    value = row.get(f"{text}_raw", row.get(text))
    return value if isinstance(value, str) else _one_line(value)


SOURCE_ID = "source_id"  # the column of the sources' own id (curate.dataset.table.SOURCE_ID)


def same_source_id(
    removed: dict[str, dict[str, Any]], added: dict[str, dict[str, Any]]
) -> list[Edit]:
    """The added records that are edits of removed ones by the id their sources give them:
    one record on each side with that ``source_id``, whatever their similarity (an edit
    changes the table's ``id``, a hash of the text, not the user's key)."""

    def keyed(rows: dict[str, dict[str, Any]]) -> dict[str, str]:
        seen: dict[str, list[str]] = {}
        for rid, row in rows.items():
            if row.get(SOURCE_ID) is not None:
                seen.setdefault(str(row[SOURCE_ID]), []).append(rid)
        return {key: ids[0] for key, ids in seen.items() if len(ids) == 1}

    before, after = keyed(removed), keyed(added)
    out = []
    for key in sorted(before.keys() & after.keys()):
        a, b = _raw(removed[before[key]]), _raw(added[after[key]])
        out.append(Edit(before[key], after[key], _similarity(a, b), word_diff(a, b), key))
    return out


def _similarity(a: str, b: str) -> float:
    from validation.normalize import comparison_words
    from validation.sketch import jaccard_hashes, shingle_hashes

    return float(jaccard_hashes(
        shingle_hashes(comparison_words(a), EDIT_SHINGLE),
        shingle_hashes(comparison_words(b), EDIT_SHINGLE),
    ))  # fmt: skip


def edits(removed: dict[str, dict[str, Any]], added: dict[str, dict[str, Any]]) -> list[Edit]:
    """The added records that are edits of removed ones, one to one: candidates from MinHash
    LSH over both sets' texts (validation's sketches), the similarity computed exactly, each
    pair taken best first (then by ids), so the answer is the same on every run."""
    if not removed or not added:
        return []
    from validation.normalize import comparison_words
    from validation.sketch import bucket_members, jaccard_hashes, shingle_hashes, sketch_many

    old_ids, new_ids = sorted(removed), sorted(added)
    texts = [_raw(removed[k]) for k in old_ids] + [_raw(added[k]) for k in new_ids]
    sigs = np.stack([s.sig for s in sketch_many(texts, EDIT_SHINGLE)])
    records, buckets = bucket_members(sigs, np.ones(len(texts), dtype=bool))
    members: dict[int, list[int]] = {}
    for r, b in zip(records.tolist(), buckets.tolist(), strict=True):
        members.setdefault(b, []).append(r)
    n_old = len(old_ids)
    pairs = {(a, b) for group in members.values() for a in group if a < n_old
             for b in group if b >= n_old}  # fmt: skip
    shingles = {}

    def of(k: int) -> np.ndarray:
        if k not in shingles:
            shingles[k] = shingle_hashes(comparison_words(texts[k]), EDIT_SHINGLE)
        return shingles[k]

    scored = sorted(
        (-score, old_ids[a], new_ids[b - n_old], a, b)
        for a, b in pairs
        if (score := jaccard_hashes(of(a), of(b))) >= EDIT_SIMILARITY
    )
    taken_old: set[int] = set()
    taken_new: set[int] = set()
    out = []
    for neg, old_id, new_id, a, b in scored:
        if a in taken_old or b in taken_new:
            continue
        taken_old.add(a)
        taken_new.add(b)
        own = added[new_id].get(SOURCE_ID)
        edit = Edit(old_id, new_id, -neg, word_diff(texts[a], texts[b]))
        edit.source_id = own if own is not None and own == removed[old_id].get(SOURCE_ID) else None
        out.append(edit)
    return sorted(out, key=lambda e: e.new_id)


def word_diff(before: str, after: str, context: int = WORD_CONTEXT) -> str:
    """What changed, word by word, as ``git diff --word-diff`` writes it: ``[-old-]{+new+}``,
    with ``context`` words around each change and ``…`` for what is left out between."""
    import difflib

    a, b = before.split(), after.split()
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    parts: list[str] = []
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal":
            words = a[i1:i2]
            first, last = k == 0, k == len(ops) - 1
            if len(words) > 2 * context or first or last:
                head = [] if first else words[:context]
                tail = [] if last else words[-context:]
                if (first or last) and len(words) <= context:
                    head, tail = ([] if first else words), (words if first else [])
                parts += [*head, "…", *tail] if len(words) > len(head) + len(tail) else words
            else:
                parts += words
            continue
        if i2 > i1:
            parts.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            parts.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(parts)


# --- rendering ------------------------------------------------------------------------------------
def _name(summary: dict[str, Any]) -> str:
    return f"{summary['label']} (v{summary['version']})" if summary["version"] else summary["label"]


def counts_line(diff: Diff) -> str:
    edited = f"{len(diff.edited)} edited, " if diff.edited else ""
    return (
        f"{diff.old['rows']} → {diff.new['rows']} records: {edited}{len(diff.added)} added, "
        f"{len(diff.removed)} removed, {len(diff.changed)} changed"
    )


def moved_line(diff: Diff) -> str | None:
    """The one line for records that only moved: their places are not part of a release."""
    if not diff.moved:
        return None
    what = "record" if diff.moved == 1 else "records"
    return f"{diff.moved} {what} moved within their files (not a change: the table names no lines)"


def keyed(diff: Diff, row_id: str) -> str:
    """A row's id, with the id its sources give it where the table has one."""
    own = diff.source_ids.get(row_id)
    return f"{row_id} ({own})" if own is not None else row_id


def edit_line(e: Edit) -> str:
    own = f"{e.source_id}: " if e.source_id is not None else ""
    return f"{own}{e.old_id} → {e.new_id}  ({e.similarity:.0%} similar)"


def render_text(diff: Diff, limit: int | None = 50) -> str:
    """The terminal summary of ``curate diff``."""
    lines = [f"{_name(diff.old)} → {_name(diff.new)}", counts_line(diff)]
    moved = moved_line(diff)
    if moved:
        lines.append(moved)
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

    section("edited", [f"~ {edit_line(e)}  {e.words}" for e in diff.edited])
    section("added", [f"+ {keyed(diff, i)}  {e}" for i, e in diff.added])
    section("removed", [f"- {keyed(diff, i)}  {e}" for i, e in diff.removed])
    section(
        "changed",
        [f"~ {keyed(diff, c.id)}  [{', '.join(c.columns)}]  {c.before}  →  {c.after}"
         for c in diff.changed],
    )  # fmt: skip
    section("metadata", diff.metadata)
    return "\n".join(lines) + "\n"


def render_json(diff: Diff) -> str:
    return json.dumps(diff.to_dict(), ensure_ascii=False, indent=2) + "\n"
