"""Compact fingerprints of a record for the corpus-wide duplicate checks.

A corpus of a million abstracts cannot be compared as Python strings or shingle sets held in
memory, so each record is reduced, once, to an id (the hash of its comparison key, for exact
duplicates) and a few LSH band hashes of its MinHash signature (for near-duplicate candidates).
Both are plain integers that fit numpy arrays, and both can be cached by record content.

Shingles are hashed to 64 bits: word hashes are computed once per word with CRC-32 and combined
arithmetically, which is an order of magnitude cheaper than hashing each shingle string, and
the exact Jaccard similarity of two records is then computed over these hash sets (a collision
needs two different shingles to agree on 64 bits).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from validation.normalize import comparison_words, record_id

NUM_PERM = 126
BANDS = 21
ROWS = NUM_PERM // BANDS  # 6: P(candidate) is 0.998 at Jaccard 0.8, 2e-5 at Jaccard 0.1
_MASK61 = np.uint64((1 << 61) - 1)
_rng = np.random.default_rng(20250601)
_A = _rng.integers(1, 1 << 61, size=NUM_PERM, dtype=np.uint64) | np.uint64(1)
_B = _rng.integers(0, 1 << 61, size=NUM_PERM, dtype=np.uint64)
_MIX = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
    np.uint64(0x27D4EB2F165667C5),
    np.uint64(0x85EBCA77C2B2AE63),
)
_BAND_MIX = np.array(
    [np.uint64(0x100000001B3) ** np.uint64(k + 1) for k in range(ROWS)], dtype=np.uint64
)
EMPTY_BANDS = np.zeros(BANDS, dtype=np.uint64)


@dataclass(frozen=True, slots=True)
class Sketch:
    id: str
    bands: np.ndarray  # uint64[BANDS]; all zero for a record without words


_word_hashes: dict[str, int] = {}


def _word_hash(word: str) -> int:
    h = _word_hashes.get(word)
    if h is None:
        h = _word_hashes[word] = zlib.crc32(word.encode("utf-8"))
        if len(_word_hashes) > 2_000_000:  # a vocabulary that large is not prose; start over
            _word_hashes.clear()
    return h


def shingle_hashes(words: list[str], size: int) -> np.ndarray:
    """The sorted, unique 64-bit hashes of the word ``size``-grams of ``words``."""
    if not words:
        return np.empty(0, dtype=np.uint64)
    h = np.fromiter(map(_word_hash, words), np.uint64, len(words))
    size = max(1, min(size, len(words)))
    n = len(words) - size + 1
    acc = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(size):
            acc = (acc ^ h[k : k + n]) * _MIX[k % len(_MIX)]
            acc ^= acc >> np.uint64(29)
    return np.unique(acc)


def jaccard_hashes(a: np.ndarray, b: np.ndarray) -> float:
    if a.size == 0 and b.size == 0:
        return 1.0
    inter = np.intersect1d(a, b, assume_unique=True).size
    return inter / (a.size + b.size - inter)


def band_hashes(shingles: np.ndarray) -> np.ndarray:
    if shingles.size == 0:
        return EMPTY_BANDS
    with np.errstate(over="ignore"):
        x = (shingles & _MASK61)[:, None]
        sig = ((x * _A + _B) >> np.uint64(3)).min(axis=0)  # universal hash per permutation
        rows = sig.reshape(BANDS, ROWS) * _BAND_MIX
    out = np.bitwise_xor.reduce(rows, axis=1)
    return out


def sketch(text: str, shingle_size: int) -> tuple[Sketch, np.ndarray]:
    """The record's sketch, and its shingle hashes for callers that need them now."""
    words = comparison_words(text)
    if not words:
        # Nothing to compare but the characters themselves ("—", "$$"): ids from the raw text,
        # so only identical ones count as duplicates, and no near-duplicates at all.
        return Sketch(record_id("\0" + " ".join(text.split())), EMPTY_BANDS), np.empty(
            0, dtype=np.uint64
        )
    shingles = shingle_hashes(words, shingle_size)
    return Sketch(record_id(" ".join(words)), band_hashes(shingles)), shingles


def candidate_pairs(bands: np.ndarray, active: np.ndarray) -> np.ndarray:
    """(earlier, later) index pairs that share at least one band hash, among ``active`` rows.

    Done with a sort per band instead of a hash table per band: a million records cost a few
    hundred megabytes of integers rather than tens of millions of dict entries.
    """
    idx = np.flatnonzero(active)
    if idx.size < 2:
        return np.empty((0, 2), dtype=np.int64)
    found: list[np.ndarray] = []
    for band in range(bands.shape[1]):
        values = bands[idx, band]
        order = np.argsort(values, kind="stable")
        sorted_vals = values[order]
        same = sorted_vals[1:] == sorted_vals[:-1]
        if not same.any():
            continue
        # Runs of equal values: [start, end] in sorted order; pair every two members of a run.
        edges = np.diff(np.concatenate(([0], same.astype(np.int8), [0])))
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        for s, e in zip(starts, ends, strict=True):
            members = np.sort(idx[order[s : e + 1]])
            i, j = np.triu_indices(members.size, k=1)
            found.append(np.stack([members[i], members[j]], axis=1))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found), axis=0)
