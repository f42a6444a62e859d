"""Each survivor with every occurrence it stands for: the ``sources`` column of its row."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from curate.dedupe.plan import MATCH_NEAR, MATCHES, Plan
from curate.dedupe.policy import RowPolicy
from validation.corpus import FileResult, RecordIndex

# (record index in its file, its id, its sources, its flags, the place of each of its sources:
# line and row) for each surviving record of a file
FileTodo = list[tuple[int, str, list[dict[str, Any]], list[str], list[dict[str, Any]]]]


def _content_order(entry: tuple[dict[str, Any], dict[str, Any]]) -> tuple[Any, ...]:
    """An occurrence's place among the merged ones: by what it says (file, source id, match,
    similarity, header), never by where it is in its file, so a reordered source gives the
    same ``sources``; occurrences alike in all of that differ only in their places."""
    s = entry[0]
    return tuple((v is None, "" if v is None else v) for v in (
        s["file"], s.get("source_id"), s["match"], s["similarity"], s["header"],
        s["header_language"],
    ))  # fmt: skip


def todo_by_file(
    files: list[FileResult],
    names: list[str],
    plan: Plan,
    policy: RowPolicy | None = None,
    *,
    tabular: bool = False,
) -> Iterator[tuple[int, FileTodo]]:
    """For each file in order, its surviving records with the provenance of every occurrence.

    Made one file at a time, so the provenance of a million records is never all in memory.
    A survivor ``policy`` drops is left out with the exact duplicates merged into it (they
    have its text, so its reasons). With ``tabular`` (the table's ``sources`` has the field),
    each occurrence also names the id its source gives it. The survivor comes first, the
    others in the order of their content (:func:`_content_order`); each occurrence's line
    and row are given apart, in the same order.
    """
    policy = policy or RowPolicy()
    index = RecordIndex(files)
    order, starts = plan.groups()
    lead_of_run = order[starts[:-1]]  # survivors, ascending: runs are sorted by leader
    run_file = index.file_of[lead_of_run]

    def source(g: int) -> tuple[dict[str, Any], dict[str, Any]]:
        fi, ri = index.where(g)
        f = files[fi]
        match = MATCHES[int(plan.match[g])]
        entry = {
            "file": names[fi],
            "header": f.header.text if f.header else None,
            "header_language": f.header.language if f.header else None,
            "match": match,
            "similarity": round(float(plan.similarity[g]), 6) if match == MATCH_NEAR else None,
        }
        if tabular:
            entry["source_id"] = f.source_ids[ri] if f.source_ids is not None else None
        row = int(f.rows[ri]) if f.rows is not None else 0  # 0: none, as in JSON Lines
        return entry, {"line": int(f.lines[ri]), "row": row or None}

    # The survivors' runs of each file: the runs are in survivor order, so a file's are one span.
    bounds = np.searchsorted(run_file, np.arange(len(files) + 1))
    for fi in range(len(files)):
        runs = range(int(bounds[fi]), int(bounds[fi + 1]))
        if not runs:
            continue
        todo: FileTodo = []
        for k in runs:
            members = order[starts[k] : starts[k + 1]].tolist()
            ri = members[0] - int(index.offsets[fi])
            rid = files[fi].ids[ri]
            if rid in policy.dropped:
                continue
            entries = [source(members[0]), *sorted(map(source, members[1:]), key=_content_order)]
            todo.append((
                ri, rid, [s for s, _ in entries], policy.flags.get(rid, []),
                [p for _, p in entries],
            ))  # fmt: skip
        yield fi, todo
