"""Each survivor with every occurrence it stands for: the ``sources`` column of its row."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from curate.dedupe.plan import MATCH_NEAR, MATCHES, Plan
from curate.dedupe.policy import RowPolicy
from validation.corpus import FileResult, RecordIndex

# (record index in its file, its id, its sources, its flags) for each surviving record of a file
FileTodo = list[tuple[int, str, list[dict[str, Any]], list[str]]]


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
    have its text, so its reasons). With ``tabular`` (the table's ``sources`` has the fields),
    each occurrence also names its row and the id its source gives it.
    """
    policy = policy or RowPolicy()
    index = RecordIndex(files)
    order, starts = plan.groups()
    lead_of_run = order[starts[:-1]]  # survivors, ascending: runs are sorted by leader
    run_file = index.file_of[lead_of_run]

    def source(g: int) -> dict[str, Any]:
        fi, ri = index.where(g)
        f = files[fi]
        match = MATCHES[int(plan.match[g])]
        return {
            "file": names[fi],
            "line": int(f.lines[ri]),
            "header": f.header.text if f.header else None,
            "header_language": f.header.language if f.header else None,
            "match": match,
            "similarity": round(float(plan.similarity[g]), 6) if match == MATCH_NEAR else None,
        } | (_tabular(f, ri) if tabular else {})

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
            todo.append((ri, rid, [source(g) for g in members], policy.flags.get(rid, [])))
        yield fi, todo


def _tabular(f: FileResult, ri: int) -> dict[str, Any]:
    """The row (0 in ``rows``: none, as in JSON Lines) and source id of a record."""
    row = int(f.rows[ri]) if f.rows is not None else 0
    return {
        "row": row or None,
        "source_id": f.source_ids[ri] if f.source_ids is not None else None,
    }
