"""What the report's findings decide for the table: the near-duplicate pairs to merge, and each
record's row policy (kept, flagged or dropped).

Both are read from the report rather than computed again: the report is the one statement of
what was found (a finding ``off`` or ignored for its file is not in it), and the build acts on
exactly that. Findings name their records by handle, so nothing here reads ``file:line`` back
out of a message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validation.corpus import FileResult, RecordIndex
from validation.findings import Report
from validation.registry import REGISTRY, row_policy_of

NearPair = tuple[int, int, float]  # (later record, earlier record, Jaccard), by record number


def near_pairs(report: Report, index: RecordIndex) -> list[NearPair]:
    """The near-duplicate pairs the report holds, as record numbers."""
    return [
        (index.number(f.record), index.number(f.related_record), float(f.score or 0.0))
        for f in report
        if f.code == "near-duplicate" and f.record is not None and f.related_record is not None
    ]


@dataclass(frozen=True)
class RowPolicy:
    """What the row policies decided, by record id: its flags, and whether it is dropped."""

    flags: dict[str, list[str]] = field(default_factory=dict)
    dropped: frozenset[str] = frozenset()

    def keeps(self, pairs: list[NearPair], ids: list[str]) -> list[NearPair]:
        """The pairs neither of whose records is dropped: a dropped record is nobody's
        near-duplicate, and must not absorb a kept one."""
        if not self.dropped:
            return pairs
        return [p for p in pairs if ids[p[0]] not in self.dropped and ids[p[1]] not in self.dropped]


def decide_rows(
    report: Report,
    files: list[FileResult],
    names: list[str],
    overrides: Mapping[str, str] | None = None,
) -> tuple[RowPolicy, list[dict[str, Any]]]:
    """Apply each code's row policy (``overrides``, else the registry's) to the records the
    report's findings name.

    Returns the policy and the dropped records as the report lists them (file name, line, id,
    the codes that dropped it), one entry per occurrence, in file/line order. ``names`` are
    the files' names relative to their source folder, as provenance gives them.
    """
    flags: dict[str, set[str]] = {}
    drops: dict[tuple[str, int, int, str], set[str]] = {}
    for f in report.findings:
        if f.id is None or f.record is None or REGISTRY[f.code].scope != "record":
            continue  # only a record's own text decides its row (duplicates are merged)
        policy = row_policy_of(f.code, overrides)
        if policy == "flag":
            flags.setdefault(f.id, set()).add(f.code)
        elif policy == "drop":
            fi, ri = f.record
            where = (names[fi], int(files[fi].lines[ri]), _row(files[fi], ri), f.id)
            drops.setdefault(where, set()).add(f.code)
    dropped_ids = frozenset(rid for *_, rid in drops)
    listed = [
        {"id": rid, "file": name, "line": line, **({"row": row} if row >= 0 else {}),
         "reasons": sorted(codes)}
        for (name, line, row, rid), codes in sorted(drops.items())
    ]  # fmt: skip
    policy = RowPolicy({rid: sorted(c) for rid, c in flags.items() if rid not in dropped_ids},
                       dropped_ids)  # fmt: skip
    return policy, listed


def _row(file: FileResult, ri: int) -> int:
    """Record ``ri``'s row where its line does not name it alone (several records of a JSON
    array written on one line), which the report then lists beside the line; else -1."""
    if file.rows is None or file.ordinal(ri) is None:
        return -1
    return int(file.rows[ri])
