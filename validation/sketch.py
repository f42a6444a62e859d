"""Compact fingerprints of a record for the corpus-wide duplicate checks.

A corpus of a million abstracts cannot be compared as Python strings or shingle sets held in
memory, so each record is reduced, once, to an id (the hash of its comparison key, for exact
duplicates) and a MinHash signature of 126 16-bit values (252 bytes, for near-duplicates). Both
fit numpy arrays, and both can be cached by record content. From the signatures come the LSH
band hashes that propose candidate pairs, and an estimate of each candidate's similarity that
discards the hopeless ones; the similarity of every remaining pair is then computed exactly.

Shingles are hashed to 64 bits: each word gets a 64-bit hash of its UTF-8 bytes
(:func:`word_hashes`, computed by numpy for every word of a batch at once) and a shingle's words'
hashes are combined arithmetically, which is an order of magnitude cheaper than hashing each
shingle string. A batch's words are never Python strings: each record's comparison form is one
byte string (:func:`validation.normalize.comparison_bytes`), and numpy finds the words of all of
them, and the id keys with single spaces, in one buffer. The exact Jaccard similarity of two
records is then computed over these hash sets (a collision needs two different shingles to agree
on 64 bits).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import rensa

from validation.normalize import comparison_bytes, comparison_forms, record_id

NUM_PERM = 126
BANDS = 21
ROWS = NUM_PERM // BANDS  # 6: P(candidate) is 0.998 at Jaccard 0.8, 2e-5 at Jaccard 0.1
SIGNATURE_SEED = 20250601
# What a signature depends on besides this file: the MinHash algorithm of rensa (its
# ALGORITHM_VERSION, pinned in pyproject.toml). Anything caching signatures keys on this.
# "rendered-math": shingles of the words with math read as rendered (``normalize``'s render);
# "lanes64": the word hash of :func:`word_hashes` (before it, CRC-32 of each word).
SKETCH_VERSION = (
    f"rensa-rminhash-{rensa.RMinHash.ALGORITHM_VERSION}/seed-{SIGNATURE_SEED}/low16/rendered-math"
    "/lanes64"
)
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
EMPTY_SIG = np.zeros(NUM_PERM, dtype=np.uint16)
# How far below the threshold a signature estimate may fall and the pair still be checked
# exactly: 0.2 is more than five standard deviations of a 126-value estimate near 0.8.
ESTIMATE_MARGIN = 0.2


@dataclass(frozen=True, slots=True)
class Sketch:
    id: str
    sig: np.ndarray  # uint16[NUM_PERM]; all zero for a record without words


# The word hash (:func:`word_hashes`). Its constants are MurmurHash3's 64-bit finalizer (fmix64)
# and two odd constants of xxHash64 for the lane number and the length.
_FMIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))
_LANE_KEY = np.uint64(0x9E3779B185EBCA87)
_SECOND_LANE_KEY = np.uint64(2 * 0x9E3779B185EBCA87 % 2**64)
_LENGTH_KEY = np.uint64(0xC2B2AE3D27D4EB4F)
_LOW_BYTES = np.array([(1 << 8 * r) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)
_33 = np.uint64(33)


def _fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's finalizer, in place: a bijection of 64-bit values in which every input bit
    flips about half of the output bits."""
    x ^= x >> _33
    x *= _FMIX[0]
    x ^= x >> _33
    x *= _FMIX[1]
    x ^= x >> _33
    return x


def word_hashes(joined: str, count: int) -> np.ndarray:
    """uint64[count]: the hash of each of the ``count`` words of ``joined`` (the words joined by
    single spaces; a comparison word never holds one).

    A word of n UTF-8 bytes is read as m = max(1, ceil(n / 8)) little-endian 64-bit lanes x_k,
    the last padded with zero bytes, and hashed to
    fmix64(n * LENGTH_KEY + sum over k of fmix64(x_k ^ (k + 1) * LANE_KEY)), modulo 2**64.
    So every word of every record of a batch is hashed by a fixed number of numpy operations
    over all of their bytes at once, whatever the words' lengths, instead of a Python step per
    word (a dictionary of CRC-32 values before), with no dependence on the process, the
    platform's byte order or Python's ``hash``. Two different words of at most 8 bytes and the
    same length never collide (fmix64 is a bijection); other pairs agree with a probability of
    about 2**-64, where two words' 32-bit CRCs agreed with one of 2**-32.
    """
    if count == 0:
        return np.empty(0, dtype=np.uint64)
    # A space before the first word and after the last, so that every word lies between two,
    # and zero bytes after them: a lane may be read from any byte of the text.
    buf = np.frombuffer(b"".join((b" ", joined.encode("utf-8"), b" " + bytes(8))), np.uint8)
    spaces = np.flatnonzero(buf == 0x20)
    if spaces.size != count + 1:
        raise ValueError(
            f"{count} words need {count - 1} spaces between them, not {spaces.size - 2}"
        )
    starts = spaces[:-1] + 1
    return _hash_words(buf, starts, spaces[1:] - starts)


def _hash_words(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """:func:`word_hashes` of the words ``buf[starts[i]:starts[i] + lengths[i]]`` (uint8 ``buf``
    with at least 8 bytes after the last word's first byte)."""
    # lanes[i]: the 8 bytes from byte i on, as one little-endian value (an unaligned view).
    lanes = np.ndarray((buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))
    # (Integer arrays wrap around silently: no overflow to ignore.)
    acc = lanes[starts] & _LOW_BYTES[np.minimum(lengths, 8)]
    acc ^= _LANE_KEY
    _fmix64(acc)
    long = np.flatnonzero(lengths > 8)
    if long.size:  # the lanes after the first, of every longer word at once
        at, left = starts[long] + 8, lengths[long] - 8
        if left.max() <= 8:  # one more lane each: words of up to 16 bytes, most records
            x = lanes[at] & _LOW_BYTES[left]
            x ^= _SECOND_LANE_KEY
            acc[long] += _fmix64(x)
        else:
            more = (left + 7) >> 3
            first = np.cumsum(more) - more
            k = np.arange(int(more.sum())) - np.repeat(first, more)  # lane number - 1
            rest = np.minimum(np.repeat(left, more) - 8 * k, 8)
            x = lanes[np.repeat(at, more) + 8 * k] & _LOW_BYTES[rest]
            x ^= (k + 2).astype(np.uint64) * _LANE_KEY
            acc[long] += np.add.reduceat(_fmix64(x), first)
    acc += lengths.astype(np.uint64) * _LENGTH_KEY
    return _fmix64(acc)


def _shingle_prefixes(h: np.ndarray, size: int) -> list[np.ndarray]:
    """``out[k][i]``: the hash of the (k+1)-gram of word hashes starting at ``h[i]``."""
    out = []
    acc = np.zeros(h.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(size):
            n = h.size - k
            acc = (acc[:n] ^ h[k : k + n]) * _MIX[k % len(_MIX)]
            acc ^= acc >> np.uint64(29)
            out.append(acc)
    return out


def shingle_hashes(words: list[str], size: int) -> np.ndarray:
    """The sorted, unique 64-bit hashes of the word ``size``-grams of ``words``."""
    return _joined_shingle_hashes(" ".join(words), len(words), size)


def _joined_shingle_hashes(joined: str, count: int, size: int) -> np.ndarray:
    """:func:`shingle_hashes` of the ``count`` words ``joined`` by spaces."""
    if count == 0:
        return np.empty(0, dtype=np.uint64)
    size = max(1, min(size, count))
    # Sorted, then repeats dropped: numpy 2.4's np.unique hashes first (about 4 times slower
    # for a record's few hundred values).
    out = np.sort(_shingle_prefixes(word_hashes(joined, count), size)[-1])
    return out[np.concatenate(([True], out[1:] != out[:-1]))]


def jaccard_hashes(a: np.ndarray, b: np.ndarray) -> float:
    """The Jaccard similarity of two sorted, unique hash arrays (as :func:`shingle_hashes` makes).

    A binary search of the smaller in the larger: no concatenation and sort per pair.
    """
    if a.size == 0 and b.size == 0:
        return 1.0
    if a.size > b.size:
        a, b = b, a
    if a.size == 0:
        return 0.0
    at = np.searchsorted(b, a)
    at[at == b.size] = 0
    inter = int(np.count_nonzero(b[at] == a))
    return inter / (a.size + b.size - inter)


# Rows per rensa call. rensa hashes a call of many rows on its pool of native threads (rayon);
# a worker process forked after that pool started inherits a pool whose threads do not exist in
# it, and its first such call waits for them forever (measured: a build's worker hung on its
# first file). rensa never uses the pool for fewer rows than its floor for
# RENSA_DOC_PAR_BATCH_SIZE (32 in 0.5), whatever the environment says, so every call here
# hashes on the calling thread: our parallelism is one process per core anyway, and the host
# process's environment is left alone (tests/validation/test_sketch.py).
RENSA_ROWS = 31


def _digests(shingles: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """uint16[rows, NUM_PERM]: the signature of each row ``shingles[offsets[i]:offsets[i+1]]``.

    rensa's MinHash of pre-hashed tokens (126 seeded permutations of each 64-bit shingle hash,
    the minimum of each as 32 bits), cut to the low 16 bits: the minimum of a record's few
    hundred 32-bit values is small, so its high bits are mostly zero and its low bits random.
    A repeated shingle changes no minimum, so rows need not be unique.
    """
    n = len(offsets) - 1
    # rensa gives a matrix's rows only as lists of Python ints (no buffer): each is appended to
    # one C array of them all, read by numpy once (about 1 µs a row less than a numpy
    # conversion of each call's rows).
    flat = array("I")
    for lo in range(0, n, RENSA_ROWS):
        hi = min(lo + RENSA_ROWS, n)
        start = offsets[lo]
        rows = rensa.RMinHash.digest_matrix_from_flat_token_hashes(
            shingles[start : offsets[hi]], offsets[lo : hi + 1] - start, NUM_PERM, SIGNATURE_SEED
        ).to_rows()
        for row in rows:
            flat.extend(row)
    return np.frombuffer(flat, np.uintc).reshape(n, NUM_PERM).astype(np.uint16)


def signature(shingles: np.ndarray) -> np.ndarray:
    """The MinHash signature of a shingle set, each value cut to 16 bits.

    Memory grows with the shingles only, not with shingles x permutations: a 10 MB record
    costs its hash array and one 126-value row.
    """
    if shingles.size == 0:
        return EMPTY_SIG
    shingles = np.ascontiguousarray(shingles, dtype=np.uint64)
    return _digests(shingles, np.array([0, shingles.size], dtype=np.uint64))[0]


def band_hash(sigs: np.ndarray, band: int, index: np.ndarray | None = None) -> np.ndarray:
    """uint64[n]: a hash of band ``band`` (ROWS signature values) of every signature (or of
    the signatures at ``index``), for LSH.

    One band at a time: all bands at once as 64-bit values would take 4 times the signatures'
    memory again, a gigabyte for a million records.
    """
    cols = slice(band * ROWS, (band + 1) * ROWS)
    rows = (sigs[:, cols] if index is None else sigs[index, cols]).astype(np.uint64)
    with np.errstate(over="ignore"):
        return np.bitwise_xor.reduce(rows * _BAND_MIX, axis=1) * _MIX[0]


def _empty_id(text: str) -> str:
    # Nothing to compare but the characters themselves ("—", "$$"): ids from the raw text, so
    # only identical ones count as duplicates, and no near-duplicates at all.
    return record_id("\0" + " ".join(text.split()))


def sketch(text: str, shingle_size: int) -> tuple[Sketch, np.ndarray]:
    """The record's sketch, and its shingle hashes for callers that need them now."""
    words, rendered = comparison_forms(text)
    if not words:
        return Sketch(_empty_id(text), EMPTY_SIG), np.empty(0, dtype=np.uint64)
    key = " ".join(words)
    compared = rendered or words
    joined = key if compared is words else " ".join(compared)
    shingles = _joined_shingle_hashes(joined, len(compared), shingle_size)
    return Sketch(record_id(key), signature(shingles)), shingles


SKETCH_BATCH = 512  # records per rensa call in :func:`sketch_many`: a few MB of arrays at most


def sketch_many(
    texts: Sequence[str], shingle_size: int, stripped: Sequence[str] | None = None
) -> list[Sketch]:
    """``[sketch(t, shingle_size)[0] for t in texts]``, the same values, computed in batches.

    The shingles of a batch of records are hashed as one array and their signatures made in
    one call, so the per-record cost is the work itself, not numpy's and rensa's per-call
    overhead. Each ``sig`` is a row of a batch's matrix (read-only use only). ``stripped``
    holds ``normalize.strip_markup`` of each text, if the caller made it for another use too.
    """
    out: list[Sketch] = []
    for start in range(0, len(texts), SKETCH_BATCH):
        end = start + SKETCH_BATCH
        part = None if stripped is None else stripped[start:end]
        out.extend(_sketch_batch(texts[start:end], shingle_size, part))
    return out


def _words_of(forms: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(buffer, starts, lengths, counts): where each word of each of ``forms`` lies in one
    buffer holding them all, and how many words each form has.

    The forms are joined with a zero byte before, between and after them (with 8 more after
    the last, for :func:`_hash_words`' lanes); a word is a run of bytes above the space, which
    is every byte of a comparison word and neither of the separators.
    """
    joined = b"".join((b"\0", b"\0".join(forms), bytes(9)))
    buf = np.frombuffer(joined, np.uint8)
    word = buf > 0x20
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1  # alternately a word's start and end
    starts = edges[0::2]
    separators = np.flatnonzero(buf[: len(joined) - 8] == 0)
    counts = np.diff(np.searchsorted(starts, separators))
    return buf, starts, edges[1::2] - starts, counts


def _keys(
    buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, counts: np.ndarray
) -> list[bytes]:
    """Each form of :func:`_words_of`'s buffer with its words joined by single spaces."""
    keep = buf > 0x20
    keep[buf == 0] = True  # the separators, to cut the forms apart again
    keep[-8:] = False
    # The space after every word but the last of its form (within a form the byte after a
    # word is a space).
    inner = np.ones(starts.size, dtype=bool)
    inner[np.cumsum(counts)[counts > 0] - 1] = False
    keep[(starts + lengths)[inner]] = True
    return buf[keep].tobytes().split(b"\0")[1:-1]


def _sketch_batch(
    texts: Sequence[str], shingle_size: int, stripped: Sequence[str] | None
) -> list[Sketch]:
    if stripped is None:
        forms = [comparison_bytes(t) for t in texts]
    else:
        forms = [comparison_bytes(t, s) for t, s in zip(texts, stripped, strict=True)]
    buf, starts, lengths, counts = _words_of([key for key, _rendered in forms])
    keys = _keys(buf, starts, lengths, counts)
    sigs = np.zeros((len(texts), NUM_PERM), dtype=np.uint16)
    full = np.flatnonzero(counts)
    if full.size:
        # The words shingled: the rendered form's where rendering changes them (and leaves
        # any), else the key's, which are in the buffer already.
        rendered = [i for i in full.tolist() if forms[i][1] is not forms[i][0]]
        if rendered:
            shingled = [key for key, _rendered in forms]
            for i in rendered:
                shingled[i] = forms[i][1]
            buf, starts, lengths, other = _words_of(shingled)
            empty = np.flatnonzero((other == 0) & (counts > 0))
            if empty.size:  # rendered to nothing: the key's words (`rendered or words`)
                for i in empty.tolist():
                    shingled[i] = forms[i][0]
                buf, starts, lengths, other = _words_of(shingled)
            counts = other
        sigs[full] = _signatures(_hash_words(buf, starts, lengths), counts[full], shingle_size)
    return [
        Sketch(record_id(key.decode("utf-8")), sigs[i]) if key else Sketch(_empty_id(t), EMPTY_SIG)
        for i, (t, key) in enumerate(zip(texts, keys, strict=True))
    ]


def _signatures(h: np.ndarray, lens: np.ndarray, shingle_size: int) -> np.ndarray:
    """uint16[len(lens), NUM_PERM]: the signatures of records of ``lens`` (all > 0) words whose
    word hashes ``h`` holds one record after another."""
    size = max(1, min(shingle_size, int(lens.max())))
    prefixes = _shingle_prefixes(h, size)
    # Each record's shingles, gathered from the flat prefixes: a record of L words has
    # L - s + 1 shingles of s = min(size, L) words, the first at its first word.
    sizes = np.minimum(lens, size)
    shingle_counts = lens - sizes + 1
    firsts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    ends = np.cumsum(shingle_counts)
    pos = np.repeat(firsts - (ends - shingle_counts), shingle_counts) + np.arange(int(ends[-1]))
    shingles = np.empty(pos.size, dtype=np.uint64)
    kind = np.repeat(sizes, shingle_counts)
    for s in range(1, size + 1):
        pick = kind == s
        if pick.any():
            shingles[pick] = prefixes[s - 1][pos[pick]]
    return _digests(shingles, np.concatenate(([0], ends)).astype(np.uint64))


def bucket_members(sigs: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(record, bucket) for every ``active`` record that shares an LSH band with another one.

    A bucket is one band value held by two or more records; bucket numbers are global over the
    bands. Done with a sort per band instead of a hash table per band, and without enumerating
    the pairs of a bucket: a bucket of n records costs n entries here, not n²/2 pairs. The
    result is sorted by record, then bucket.
    """
    idx = np.flatnonzero(active)
    if idx.size < 2:
        return join_bands(idx, [])
    # Each band is read from the signatures where they are: a copy of the active ones would
    # be all of them again (252 MB for a million records).
    index = None if idx.size == len(sigs) else idx
    return join_bands(idx, [band_runs(band_hash(sigs, band, index)) for band in range(BANDS)])


def band_runs(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The buckets of one band: (position, bucket) for every position of ``hashes`` whose value
    another position shares, buckets numbered 0.. in the order of their values. Each band is
    independent of the others, so they can be computed anywhere (one band is one key range of
    the shuffle by band key)."""
    empty = np.empty(0, dtype=np.int64)
    order = np.argsort(hashes, kind="stable")
    values = hashes[order]
    same = values[1:] == values[:-1]
    if not same.any():
        return empty, empty
    # Runs of equal values, as [start, end) in sorted order.
    edges = np.diff(np.concatenate(([0], same.astype(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1) + 1
    lengths = ends - starts
    positions = np.repeat(starts - np.cumsum(np.concatenate(([0], lengths[:-1]))), lengths)
    positions += np.arange(lengths.sum())
    return order[positions].astype(np.int64), np.repeat(np.arange(starts.size), lengths)


def join_bands(
    idx: np.ndarray, runs: list[tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bucket_members` from each band's :func:`band_runs`, in band order, over the
    records ``idx`` the bands' positions index: buckets numbered on across the bands, the
    entries sorted by record, then bucket."""
    records: list[np.ndarray] = []
    buckets: list[np.ndarray] = []
    next_bucket = 0
    for positions, local in runs:
        if positions.size == 0:
            continue
        records.append(idx[positions])
        buckets.append(local + next_bucket)
        next_bucket += int(local[-1]) + 1
    if not records:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    rec, bkt = np.concatenate(records), np.concatenate(buckets)
    order = np.lexsort((bkt, rec))
    return rec[order].astype(np.int64), bkt[order].astype(np.int64)
