"""Merging exact and near duplicates, keeping every occurrence in the survivor's provenance.

Exact duplicates are records with the same id (the hash of the comparison key the ``duplicate``
check uses) and near-duplicates the pairs the ``near-duplicate`` check reported, so what the
report warns about is exactly what the build merges. The survivor of a group is the record the
build prefers (:func:`curate.pipeline.build.survivor_preference`, which ranks every member of a
group by the ``keep`` policy, the previous release and content, so that no two tie and the
survivor never depends on the records' places); without a preference, the first.
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
        index = np.arange(self.leader.size)
        order = np.lexsort((index, self.leader != index, self.leader))
        if order.size == 0:  # no record at all: no run (not one empty run)
            return order, np.zeros(1, dtype=np.int64)
        leaders = self.leader[order]
        starts = np.flatnonzero(np.concatenate(([True], leaders[1:] != leaders[:-1])))
        return order, np.append(starts, order.size)


MATCHES = (MATCH_ORIGINAL, MATCH_EXACT, MATCH_NEAR)


def plan(
    ids: list[str],
    near_pairs: list[tuple[int, int, float]],
    *,
    merge_near: bool = True,
    prefer: np.ndarray | None = None,
) -> Plan:
    """Group records by id, and near-duplicates with the group of their earlier partner; then
    each group's survivor is its member of the highest ``prefer`` (the first of them on a tie;
    without ``prefer``, the first)."""
    first = _group(ids, near_pairs, merge_near)
    return first if prefer is None else _prefer(first, ids, prefer)


def _group(ids: list[str], near_pairs: list[tuple[int, int, float]], merge_near: bool) -> Plan:
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


def _prefer(groups: Plan, ids: list[str], prefer: np.ndarray) -> Plan:
    """The same groups, each led by its preferred member: the others are exact duplicates of
    it (same id) or near ones (with the similarity that joined them; the old leader and its
    exact copies with the one that joined the new leader to them)."""
    leader, match, similarity = groups.leader.copy(), groups.match.copy(), groups.similarity.copy()
    order, starts = groups.groups()
    for k in range(len(starts) - 1):
        members = order[starts[k] : starts[k + 1]]
        if members.size < 2:
            continue
        best = int(members[np.argmax(prefer[members])])  # argmax: the first of equal maxima
        if best == int(members[0]):
            continue
        leader[members] = best
        # What joined best's text to the group: its own pair, or that of an exact copy of it.
        same = [m for m in members.tolist() if ids[m] == ids[best] and not np.isnan(similarity[m])]
        joined = similarity[same[0]] if same else np.nan
        for m in members.tolist():
            if m == best:
                match[m], similarity[m] = 0, np.nan
            elif ids[m] == ids[best]:
                match[m], similarity[m] = 1, np.nan
            else:  # a near member, or the old leader and its exact copies: joined by best's pair
                if np.isnan(similarity[m]):
                    similarity[m] = joined
                match[m] = 2
    exact = int(np.count_nonzero(match == 1))
    return Plan(leader, match, similarity, exact, int(np.count_nonzero(match == 2)))
