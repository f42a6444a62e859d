"""Merging exact and near duplicates, keeping every occurrence in the survivor's provenance.

The survivor of a group is its first record in file/line order. Exact duplicates are records
with the same id (the hash of the comparison key the ``duplicate`` check uses) and
near-duplicates the pairs the ``near-duplicate`` check reported, so what the report warns about
is exactly what the build merges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MATCH_ORIGINAL, MATCH_EXACT, MATCH_NEAR = "original", "exact", "near"


@dataclass
class Plan:
    """Which records survive, and which survivor every record merged into.

    Computed from record ids and near-duplicate pairs alone (global indexes in file/line order)
    and held as three flat arrays, so planning a million records needs neither their text nor a
    million Python objects.
    """

    leader: np.ndarray  # int64[n]: the surviving record each record belongs to (itself if first)
    match: np.ndarray  # int8[n]: index into MATCHES
    similarity: np.ndarray  # float64[n]: Jaccard to the earlier partner, for near matches
    exact_merged: int
    near_merged: int

    @property
    def survivors(self) -> np.ndarray:
        return np.flatnonzero(self.leader == np.arange(self.leader.size))

    def groups(self) -> tuple[np.ndarray, np.ndarray]:
        """Every record ordered by (survivor, position), and where each survivor's run starts.

        ``order[starts[k]:starts[k+1]]`` are the members of the k-th survivor, the survivor first
        (it is the earliest of its group) and the others in file/line order.
        """
        order = np.lexsort((np.arange(self.leader.size), self.leader))
        if order.size == 0:  # no record at all: no run (not one empty run)
            return order, np.zeros(1, dtype=np.int64)
        leaders = self.leader[order]
        starts = np.flatnonzero(np.concatenate(([True], leaders[1:] != leaders[:-1])))
        return order, np.append(starts, order.size)


MATCHES = (MATCH_ORIGINAL, MATCH_EXACT, MATCH_NEAR)


def plan(
    ids: list[str], near_pairs: list[tuple[int, int, float]], *, merge_near: bool = True
) -> Plan:
    """Group records by id, and near-duplicates with the group of their earlier partner."""
    n = len(ids)
    leader = np.arange(n, dtype=np.int64)
    match = np.zeros(n, dtype=np.int8)
    similarity = np.full(n, np.nan)
    leader_of_id: dict[str, int] = {}
    near = {later: (earlier, score) for later, earlier, score in near_pairs}
    exact = near_count = 0
    for g, rid in enumerate(ids):
        lead = leader_of_id.get(rid)
        if lead is not None:
            leader[g], match[g] = lead, 1
            exact += 1
            continue
        if merge_near and g in near:
            earlier, score = near[g]
            leader[g], match[g], similarity[g] = leader[earlier], 2, score
            leader_of_id[rid] = int(leader[earlier])
            near_count += 1
            continue
        leader_of_id[rid] = g
    return Plan(leader, match, similarity, exact, near_count)
