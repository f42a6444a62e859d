"""Merging exact and near duplicates, keeping every occurrence in the survivor's provenance.

The survivor of a group is its first record in file/line order. Exact duplicates use the same
comparison key as the ``duplicate`` check and near-duplicates the same pairs as the
``near-duplicate`` check, so what the report warns about is exactly what the build merges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from validation.normalize import comparison_key
from validation.records import Record

MATCH_ORIGINAL, MATCH_EXACT, MATCH_NEAR = "original", "exact", "near"


@dataclass(frozen=True, slots=True)
class Occurrence:
    record: Record
    match: str
    similarity: float | None = None


@dataclass
class Group:
    key: str
    occurrences: list[Occurrence] = field(default_factory=list)

    @property
    def survivor(self) -> Record:
        return self.occurrences[0].record


@dataclass
class DedupeResult:
    groups: list[Group]
    exact_merged: int
    near_merged: int
    near_kept: list[tuple[Record, Record, float]]


def dedupe(
    records: list[Record],
    near_pairs: list[tuple[int, int, float]],
    *,
    merge_near: bool = True,
) -> DedupeResult:
    """Group ``records`` (in file/line order) into one group per surviving record.

    ``near_pairs`` are (later, earlier, similarity) index pairs as returned by
    :func:`validation.neardup.near_duplicate_pairs`; with ``merge_near`` the later record joins
    the group its earlier partner belongs to, otherwise it stays a record of its own.
    """
    by_key: dict[str, Group] = {}
    group_of: dict[int, Group] = {}
    groups: list[Group] = []
    near = {later: (earlier, score) for later, earlier, score in near_pairs}
    exact = near_count = 0
    kept: list[tuple[Record, Record, float]] = []
    for i, record in enumerate(records):
        key = comparison_key(record.text)
        if key in by_key:
            group = by_key[key]
            group.occurrences.append(Occurrence(record, MATCH_EXACT))
            group_of[i] = group
            exact += 1
            continue
        if i in near:
            earlier, score = near[i]
            if merge_near:
                group = group_of[earlier]
                group.occurrences.append(Occurrence(record, MATCH_NEAR, score))
                by_key[key] = group
                group_of[i] = group
                near_count += 1
                continue
            kept.append((record, records[earlier], score))
        group = Group(key, [Occurrence(record, MATCH_ORIGINAL)])
        by_key[key] = group
        group_of[i] = group
        groups.append(group)
    return DedupeResult(groups, exact, near_count, kept)


@dataclass
class Plan:
    """Which records survive, and every occurrence each survivor stands for.

    Computed from record ids and near-duplicate pairs alone (global indexes in file/line order),
    so planning a million records needs no record text in memory.
    """

    members: dict[int, list[tuple[int, str, float | None]]]  # survivor -> (index, match, sim)
    exact_merged: int
    near_merged: int
    near_kept: list[tuple[int, int, float]]


def plan(
    ids: list[str], near_pairs: list[tuple[int, int, float]], *, merge_near: bool = True
) -> Plan:
    """Group records by id, and near-duplicates with the group of their earlier partner."""
    leader_of_id: dict[str, int] = {}
    leader: list[int] = [0] * len(ids)
    members: dict[int, list[tuple[int, str, float | None]]] = {}
    near = {later: (earlier, score) for later, earlier, score in near_pairs}
    exact = near_count = 0
    kept: list[tuple[int, int, float]] = []
    for g, rid in enumerate(ids):
        if rid in leader_of_id:
            lead = leader_of_id[rid]
            members[lead].append((g, MATCH_EXACT, None))
            leader[g] = lead
            exact += 1
            continue
        if g in near:
            earlier, score = near[g]
            if merge_near:
                lead = leader[earlier]
                members[lead].append((g, MATCH_NEAR, score))
                leader_of_id[rid] = lead
                leader[g] = lead
                near_count += 1
                continue
            kept.append((g, earlier, score))
        leader_of_id[rid] = g
        leader[g] = g
        members[g] = [(g, MATCH_ORIGINAL, None)]
    return Plan(members, exact, near_count, kept)
