"""Near-duplicate detection: MinHash LSH proposes candidate pairs, exact Jaccard decides.

The LSH estimate alone both misses pairs and admits false ones, so it is only used to avoid
comparing every pair: it runs at a lower threshold than the configured one (more candidates,
higher recall) and every candidate's similarity is then computed exactly over the shingle sets.
"""

from __future__ import annotations

from datasketch import MinHash, MinHashLSH

from validation.normalize import comparison_words, jaccard, shingles

NUM_PERM = 128
# How far below the configured threshold the LSH bands are tuned, to leave room for its error.
LSH_MARGIN = 0.2
SEED = 1


def near_duplicate_pairs(
    texts: list[str], threshold: float, shingle_size: int
) -> list[tuple[int, int, float]]:
    """(later index, earlier index, Jaccard) for each text with an earlier near-duplicate.

    Exact duplicates (same comparison key) are not near-duplicates: they are left to the
    ``duplicate`` check, and only the first of a group takes part here. Each later text is
    paired with its most similar earlier text (the earliest on a tie).
    """
    lsh = MinHashLSH(threshold=max(0.1, threshold - LSH_MARGIN), num_perm=NUM_PERM)
    seen_keys: set[str] = set()
    sets: dict[int, set[str]] = {}
    out: list[tuple[int, int, float]] = []
    for i, text in enumerate(texts):
        words = comparison_words(text)
        key = " ".join(words)
        if not key or key in seen_keys:
            continue
        seen_keys.add(key)
        sh = shingles(words, shingle_size)
        mh = MinHash(num_perm=NUM_PERM, seed=SEED)
        mh.update_batch([s.encode("utf-8") for s in sh])
        best: tuple[float, int] | None = None
        for j in lsh.query(mh):
            score = jaccard(sh, sets[j])
            if score >= threshold and (best is None or (score, -j) > (best[0], -best[1])):
                best = (score, j)
        if best is not None:
            out.append((i, best[1], best[0]))
        lsh.insert(i, mh)
        sets[i] = sh
    return out
