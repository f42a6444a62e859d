"""Merging exact and near duplicates, keeping every occurrence in the survivor's provenance.

The survivor of a group is its first record in file/line order. Exact duplicates are records
with the same id (the hash of the comparison key the ``duplicate`` check uses) and
near-duplicates the pairs the ``near-duplicate`` check reported, so what the report warns about
is exactly what the build merges.
"""

from __future__ import annotations

from dataclasses import dataclass

MATCH_ORIGINAL, MATCH_EXACT, MATCH_NEAR = "original", "exact", "near"


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
