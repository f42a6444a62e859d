"""The corpus as the cross-file checks see it: compact per-record arrays, not records.

Each file is checked on its own (in parallel, or from the cache) and leaves behind only what
the corpus checks need: every record's line, id and MinHash signature. The texts themselves are
fetched again, through ``load_texts``, only for the few records that are near-duplicate
candidates, so the corpus of a million abstracts never has to be held in memory at once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from validation.findings import Finding, Handle, place
from validation.normalize import comparison_forms
from validation.records import Header
from validation.sketch import (
    ESTIMATE_MARGIN,
    NUM_PERM,
    bucket_members,
    jaccard_hashes,
    shingle_hashes,
)

# What one LSH bucket may offer a record to compare with: the first records of this many clusters
# found in it, and this many of its latest members. A bucket's cost grows linearly, not
# quadratically, with its size; real near-duplicate groups are far smaller than these caps.
BUCKET_CLUSTERS = 32
BUCKET_RECENT = 32
# The most candidates (best MinHash estimates first) whose exact similarity is computed.
EXACT_PER_RECORD = 8

# (file index, record index within the file) -> text
TextLoader = Callable[[list[tuple[int, int]]], dict[tuple[int, int], str]]
# A search giving what :func:`near_pairs` gives over a whole corpus (on an engine, elsewhere):
# (corpus, threshold, shingle size) -> (later, earlier, Jaccard) pairs.
NearSearch = Callable[["Corpus", float, int], list[tuple[int, int, float]]]


@dataclass
class FileResult:
    """What checking one file leaves behind for the corpus checks and the report."""

    path: str
    header: Header | None
    sha256: str
    size: int
    lines: np.ndarray  # int32[n]: each record's first line, ascending
    ids: list[str]
    sigs: np.ndarray  # uint16[n, NUM_PERM]: MinHash signatures
    findings: list[Finding]
    timings: dict[str, float] = field(default_factory=dict)
    # Each threshold measure's figure per record (float64[n], NaN where not measured).
    measures: dict[str, np.ndarray] = field(default_factory=dict)
    # A build's, for the provenance of tabular records: each record's row and the source's
    # own id (None for a text drop, whose lines say it all).
    rows: np.ndarray | None = None  # int32[n]
    source_ids: list[str | None] | None = None

    @property
    def n_records(self) -> int:
        return len(self.ids)

    def ordinal(self, ri: int) -> int | None:
        """Record ``ri``'s number in the file (1-based) where its line does not name it alone,
        several records starting there (a JSON array written on one line); else None."""
        around = self.lines[max(ri - 1, 0) : ri + 2]
        return ri + 1 if int((around == self.lines[ri]).sum()) > 1 else None

    def record_at(self, line: int, row: int | None = None) -> int | None:
        """The index of the record that starts on ``line`` (and is ``row``: see
        :func:`record_at`), or None."""
        return record_at(self.lines, self.rows, line, row)

    def relocated(self, path: str, index: int) -> FileResult:
        """The same result for the same bytes found under another path, as the run's file
        ``index`` (a cached result was made for the file it was first seen as)."""

        def moved(f: Finding) -> Finding:
            record = (index, f.record[1]) if f.record is not None else None
            return replace(f, file=path, record=record)

        return replace(self, path=path, findings=[moved(f) for f in self.findings])


def record_at(lines: np.ndarray, rows: np.ndarray | None, line: int, row: int | None) -> int | None:
    """The index of the record that starts on ``line`` among records starting at ``lines``
    (ascending), or None. Where several start on it (a JSON array written on one line) ``row``,
    the element's number, tells them apart; where it does not, there is no answer rather than
    a neighbour's."""
    lo, hi = (int(k) for k in np.searchsorted(lines, [line, line + 1]))
    if hi - lo == 1:
        return lo
    if hi - lo > 1 and row is not None and rows is not None:
        hits = np.flatnonzero(rows[lo:hi] == row)
        return lo + int(hits[0]) if len(hits) == 1 else None
    return None


class RecordIndex:
    """Every record of a run numbered 0..n-1 in file/line order, and the way back to its file.

    Stages that hold a number per record (the signatures, the dedupe plan) use these numbers;
    findings name records by :data:`~validation.findings.Handle` and are turned into numbers
    here and nowhere else.
    """

    def __init__(self, files: list[FileResult]) -> None:
        counts = [f.n_records for f in files]
        # Each file's first record's number, and the total at the end (int64[len(files) + 1]).
        self.offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.n = int(self.offsets[-1])
        self.file_of = np.repeat(np.arange(len(files)), counts) if files else np.empty(0, int)

    def where(self, g: int) -> Handle:
        fi = int(self.file_of[g])
        return fi, g - int(self.offsets[fi])

    def number(self, handle: Handle) -> int:
        return int(self.offsets[handle[0]]) + handle[1]


class Corpus(RecordIndex):
    """Every record of a run in file/line order, with global indexes 0..n-1."""

    def __init__(
        self, files: list[FileResult], load_texts: TextLoader, near_search: NearSearch | None = None
    ) -> None:
        super().__init__(files)
        self.files = files
        self._load = load_texts
        self._near_search = near_search
        self.ids = [i for f in files for i in f.ids]
        # The corpus checks are the signatures' only reader: each file's are moved into the one
        # corpus-wide array and let go there, so they are never held twice (252 MB each time
        # for a million records).
        self.sigs = np.empty((self.n, NUM_PERM), dtype=np.uint16)
        for f, start in zip(files, self.offsets[:-1], strict=True):
            self.sigs[start : start + f.n_records] = f.sigs
            f.sigs = np.empty((0, NUM_PERM), dtype=np.uint16)

    def path(self, g: int) -> str:
        return self.files[int(self.file_of[g])].path

    def line(self, g: int) -> int:
        fi, ri = self.where(g)
        return int(self.files[fi].lines[ri])

    def loc(self, g: int) -> str:
        fi, ri = self.where(g)
        return place(self.path(g), self.line(g), self.files[fi].ordinal(ri))

    def texts(self, indexes: list[int]) -> dict[int, str]:
        wanted = {self.where(g): g for g in indexes}
        loaded = self._load(sorted(wanted))
        return {wanted[k]: text for k, text in loaded.items()}

    def first_occurrences(self) -> np.ndarray:
        """True for each record that is the first with its id."""
        seen: set[str] = set()
        out = np.zeros(self.n, dtype=bool)
        for g, rid in enumerate(self.ids):
            if rid not in seen:
                seen.add(rid)
                out[g] = True
        return out

    def near_pairs(self, threshold: float, shingle_size: int) -> list[tuple[int, int, float]]:
        """(later, earlier, Jaccard) for each record with an earlier near-duplicate: the
        search of :func:`near_pairs` over the whole corpus, or the run's own search (one that
        gives the same pairs, elsewhere) when it has one."""
        search = self._near_search or search_corpus
        return search(self, threshold, shingle_size)


def search_corpus(
    corpus: Corpus, threshold: float, shingle_size: int
) -> list[tuple[int, int, float]]:
    """:func:`near_pairs` over every record of ``corpus`` that is the first with its id and
    has words, in this process."""
    active = corpus.first_occurrences() & corpus.sigs.any(axis=1)
    records, buckets = bucket_members(corpus.sigs, active)
    return near_pairs(
        records, buckets, corpus.sigs, corpus.file_of, corpus.texts, threshold, shingle_size
    )


def near_pairs(
    records: np.ndarray,
    buckets: np.ndarray,
    sigs: np.ndarray,
    file_of: np.ndarray,
    load: Callable[[list[int]], dict[int, str]],
    threshold: float,
    shingle_size: int,
) -> list[tuple[int, int, float]]:
    """(later, earlier, Jaccard) for each record with an earlier near-duplicate, among the
    bucket entries ``records`` and ``buckets`` (as :func:`~validation.sketch.bucket_members`
    gives them), with ``sigs`` and ``file_of`` indexed by record number and ``load`` giving
    texts by record number.

    LSH puts records into buckets; records are then taken in file/line order and each is
    compared with what its buckets offer: the representative (first record) of every
    cluster found in the bucket so far, and the bucket's most recent members, both capped
    (:data:`BUCKET_CLUSTERS`, :data:`BUCKET_RECENT`). The MinHash estimate drops candidates
    far below the threshold, the best remaining ones (at most :data:`EXACT_PER_RECORD`) are
    compared exactly over the two records' shingles, and only that decides. A record joins
    the cluster of its most similar earlier record (the earliest on a tie), which is the
    pair reported and the merge the build makes.

    A bucket of n records thus costs O(n) comparisons, not the n²/2 pairs of enumerating it.
    In buckets of up to :data:`BUCKET_RECENT` records every earlier member is a candidate, so
    a record with at most :data:`EXACT_PER_RECORD` plausible candidates is paired exactly as
    by comparing every pair. Exact duplicates take no part (they are the ``duplicate``
    check's).

    Texts are fetched only for the records the exact comparisons will read. A first search
    over the signatures alone, in which the estimate decides, names them; a record the
    exact search needs beyond those (its clusters formed differently) is fetched with the
    rest of its file's bucket members, so a file is read at most once more. The first
    search costs as much as the second without its exact comparisons; it spares holding
    the texts of every bucket member, a quarter of a generated corpus (672 MB for a million
    records, measured) of which about one in eight is ever compared.

    The search splits exactly by connected component of the graph in which a bucket links its
    members: what a record is offered (its buckets' recent members and cluster roots, a
    root being a record a member joined, so a neighbour), the candidates it picks and the
    state it changes (its buckets', its own root) all lie in its component, and the records of
    a component keep their order. So the entries of each component, searched on their own in
    any order of components and anywhere, give the same pairs as the whole.
    """
    if records.size == 0:
        return []
    min_estimate = threshold - ESTIMATE_MARGIN
    needed: set[int] = set()

    def by_estimate(g: int, cands: np.ndarray, est: np.ndarray) -> tuple[float, int] | None:
        needed.add(g)
        needed.update(cands.tolist())
        ok = est >= threshold
        if not ok.any():
            return None
        at = int(np.flatnonzero(ok)[0])  # best estimate first, the earliest on a tie
        return float(est[at]), int(cands[at])

    _search(records, buckets, sigs, min_estimate, by_estimate)
    texts = load(sorted(needed))
    needed.clear()
    return _exact_search(records, buckets, sigs, file_of, load, texts, threshold, shingle_size)


def _exact_search(
    records: np.ndarray,
    buckets: np.ndarray,
    sigs: np.ndarray,
    file_of: np.ndarray,
    load: Callable[[list[int]], dict[int, str]],
    texts: dict[int, str],
    threshold: float,
    shingle_size: int,
) -> list[tuple[int, int, float]]:
    """The search in which the exact Jaccard decides, over the ``texts`` the first search
    named (a text is dropped once its shingles are made)."""
    shingles: dict[int, np.ndarray] = {}
    members = np.unique(records)
    member_file = file_of[members]
    missed_files: set[int] = set()

    def shingles_of(g: int) -> np.ndarray:
        got = shingles.get(g)
        if got is None:
            if g not in texts:
                # Not foreseen: fetch every bucket member of its file that is not held yet,
                # so that a file is read at most once more (without a spool, read is parse).
                fi = int(file_of[g])
                assert fi not in missed_files, "a bucket member's text was fetched twice"
                missed_files.add(fi)
                more = members[member_file == fi].tolist()
                texts.update(load([m for m in more if m not in shingles]))
            text = texts.pop(g)
            words, rendered = comparison_forms(text)
            got = shingles[g] = shingle_hashes(rendered or words, shingle_size)
        return got

    def exactly(g: int, cands: np.ndarray, _est: np.ndarray) -> tuple[float, int] | None:
        best: tuple[float, int] | None = None
        for earlier in cands.tolist():
            score = jaccard_hashes(shingles_of(earlier), shingles_of(g))
            if score >= threshold and (best is None or (score, -earlier) > (best[0], -best[1])):
                best = (score, earlier)
        return best

    return _search(records, buckets, sigs, threshold - ESTIMATE_MARGIN, exactly)


def _search(
    records: np.ndarray,
    buckets: np.ndarray,
    sigs: np.ndarray,
    min_estimate: float,
    decide: Callable[[int, np.ndarray, np.ndarray], tuple[float, int] | None],
) -> list[tuple[int, int, float]]:
    """The search of :func:`near_pairs`, with ``decide(record, candidates, estimates)``
    picking the (score, earlier record) it joins, if any, among the candidates that the
    estimate leaves (best estimate first, at most :data:`EXACT_PER_RECORD`)."""
    parent: dict[int, int] = {}

    def root(g: int) -> int:
        # A record joins a cluster once, when it is new, so a root is always its cluster's
        # first record and the chains stay one step long.
        return parent.get(g, g)

    recent: dict[int, deque[int]] = {}
    clusters: dict[int, list[int]] = {}
    out: list[tuple[int, int, float]] = []
    bounds = np.flatnonzero(np.diff(records)) + 1
    for start, end in zip(
        np.concatenate(([0], bounds)), np.concatenate((bounds, [records.size])), strict=True
    ):
        g = int(records[start])
        mine = buckets[start:end].tolist()
        offered: set[int] = set()
        for b in mine:
            offered.update(recent.get(b, ()))
            offered.update(root(r) for r in clusters.get(b, ()))
        best: tuple[float, int] | None = None
        if offered:
            cands = np.fromiter(sorted(offered), np.int64, len(offered))
            # The share of equal signature values (count / n: the same floats as a mean).
            est = np.count_nonzero(sigs[cands] == sigs[g], axis=1) / NUM_PERM
            keep = est >= min_estimate
            if keep.any():
                cands, est = cands[keep], est[keep]
                order = np.lexsort((cands, -est))[:EXACT_PER_RECORD]
                best = decide(g, cands[order], est[order])
        if best is not None:
            out.append((g, best[1], best[0]))
            parent[g] = root(best[1])
        top = root(g)
        for b in mine:
            queue = recent.setdefault(b, deque(maxlen=BUCKET_RECENT))
            queue.append(g)
            reps = clusters.setdefault(b, [])
            if len(reps) < BUCKET_CLUSTERS and top not in reps:
                reps.append(top)
    return out
