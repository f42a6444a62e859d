"""The changelog: a section per release, newest first, written from the comparison."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from curate.release.diff import counts_line, keyed, moved_line
from validation.render import printable

if TYPE_CHECKING:
    from curate.release.diff import Diff

MAX_LISTED = 500  # per changelog section; `curate diff --format json` always lists everything


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def _md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", printable(text))


_MARKED = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}")


def _md_words(words: str) -> str:
    """A word diff (``[-old-]{+new+}``) in Markdown: removed words struck out, new ones bold."""
    out, at = [], 0
    for m in _MARKED.finditer(words):
        out.append(_md(words[at : m.start()]))
        out.append(f"~~{_md(m[1])}~~" if m[1] is not None else f"**{_md(m[2])}**")
        at = m.end()
    out.append(_md(words[at:]))
    return "".join(out)


def _code_list(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _tick(text: str) -> str:
    """Text for a code span: a backtick in it would end the span."""
    return printable(text).replace("`", "'")


def _id(diff: Diff, row_id: str) -> str:
    return _tick(keyed(diff, row_id))


def changelog_section(diff: Diff, version: str, previous: str) -> str:
    """The changelog entry of ``version``: what changed since ``previous``."""
    level = diff.level
    title = f"## {version}" + (f" ({level} release)" if level else "")
    lines = [title, ""]
    lines.append(f"Compared with {previous}: {counts_line(diff)}.")
    moved = moved_line(diff)
    if moved:
        lines.append(f"{moved[0].upper()}{moved[1:]}.")
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
    section(
        "Edited",
        [(f"`{_tick(e.source_id)}`: " if e.source_id is not None else "")
         + f"`{e.old_id}` → `{e.new_id}` ({e.similarity:.0%} similar): {_md_words(e.words)}"
         for e in diff.edited],
    )  # fmt: skip
    section("Added", [f"`{_id(diff, i)}`: {_md(e)}" for i, e in diff.added])
    section("Removed", [f"`{_id(diff, i)}`: {_md(e)}" for i, e in diff.removed])
    section(
        "Changed",
        [
            f"`{_id(diff, c.id)}` ({_code_list(c.columns)}): {_md(c.before)} → {_md(c.after)}"
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
