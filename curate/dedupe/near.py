"""The near-duplicate search on an engine, with the same pairs as the search in one process.

The search of :func:`validation.corpus.near_pairs` splits exactly by connected component of
the LSH buckets (its docstring says why), so it runs as three steps:

1. the shuffle by band key: each LSH band's values, a task per band, give that band's
   buckets (:func:`validation.sketch.band_runs`); joined in band order they are the entries
   :func:`validation.sketch.bucket_members` gives in one process;
2. in the main process, the connected components of those entries (a union-find over a few
   entries per bucketed record), packed in order into a few tasks per worker;
3. each task searches its components with :func:`validation.corpus.near_pairs` itself, reading
   the texts of the records it compares from where they are (the spool of their file: a
   build's; ``curate validate`` has none and searches in the main process) and computing
   their exact Jaccard similarity there.

The pairs of the tasks, joined and sorted by record, are the list the one-process search
gives, pair for pair and float for float. The main process holds what it holds anyway (the
signatures and ids of the corpus checks), plus the entries; no text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from curate import storage
from curate.ingest import formats
from validation.config import Config
from validation.corpus import Corpus, NearSearch, near_pairs, search_corpus
from validation.sketch import BANDS, ROWS, band_hash, band_runs, join_bands

if TYPE_CHECKING:
    from curate.engine import Engine

# Below this many records to search, the main process searches them itself: tasks and their
# arguments cost more than the search.
PARALLEL_MIN_RECORDS = 50_000
TASKS_PER_WORKER = 4  # component tasks per worker: small enough to even out their sizes
Pairs = list[tuple[int, int, float]]


@dataclass(frozen=True)
class TextSource:
    """Where the texts of a run's records are: each file's spool in a build, else the file
    itself (read again with its format). A callable :data:`validation.corpus.TextLoader` that
    can be sent to a worker."""

    spools: list[str | None]
    paths: list[str]
    formats: list[str]
    config: Config

    def __call__(self, keys: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
        by_file: dict[int, list[int]] = {}
        for fi, ri in keys:
            by_file.setdefault(fi, []).append(ri)
        out = {}
        for fi, indexes in by_file.items():
            spool = self.spools[fi] if self.spools else None
            if spool is not None:
                from curate.transform.rows import raw_texts

                texts = raw_texts(spool, indexes)
                out.update(zip([(fi, ri) for ri in indexes], texts, strict=True))
                continue
            # Only the records asked for: a 1 GB JSONL file is not read whole for them.
            texts = formats.texts(
                self.formats[fi], storage.local_or_uri(self.paths[fi]), self.config, indexes
            )
            out.update(((fi, ri), texts[ri]) for ri in indexes)
        return out


@dataclass(frozen=True)
class BandTask:
    """One band's signature values (ROWS columns) of the records searched."""

    values: np.ndarray  # uint16[n, ROWS]


def band_buckets(task: BandTask) -> tuple[np.ndarray, np.ndarray]:
    """The task of step 1: (position, bucket) of the band's shared values."""
    return band_runs(band_hash(task.values, 0))


@dataclass(frozen=True)
class ComponentTask:
    """Some whole components of the buckets, records renumbered 0.. in corpus order."""

    numbers: np.ndarray  # int64[k]: each record's number in the corpus, ascending
    records: np.ndarray  # the components' bucket entries, by the new numbers
    buckets: np.ndarray
    sigs: np.ndarray  # uint16[k, NUM_PERM]
    files: np.ndarray  # int64[k]: each record's file
    handles: list[tuple[int, int]]  # each record's (file, record in file)
    texts: TextSource
    threshold: float
    shingle_size: int


def search_components(task: ComponentTask) -> Pairs:
    """The task of step 3: the pairs of its components, by corpus numbers."""
    handles = task.handles

    def load(wanted: list[int]) -> dict[int, str]:
        got = task.texts([handles[i] for i in wanted])
        return {i: got[handles[i]] for i in wanted}

    pairs = near_pairs(
        task.records, task.buckets, task.sigs, task.files, load, task.threshold,
        task.shingle_size,
    )  # fmt: skip
    numbers = task.numbers
    return [(int(numbers[a]), int(numbers[b]), score) for a, b, score in pairs]


def components(records: np.ndarray, buckets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(members, component): the records of the entries, ascending, and the component of
    each, numbered 0.. in the order of their first record."""
    members = np.unique(records)
    local = np.searchsorted(members, records)
    parent = np.arange(members.size).tolist()

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    order = np.argsort(buckets, kind="stable")
    by_bucket, linked = buckets[order], local[order]
    starts = np.flatnonzero(np.concatenate(([True], by_bucket[1:] != by_bucket[:-1])))
    ends = np.concatenate((starts[1:], [by_bucket.size]))
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        first = find(linked[start])
        for x in linked[start + 1 : end].tolist():
            other = find(x)
            if other != first:
                # The smaller root wins, so a root is its component's first record.
                first, other = min(first, other), max(first, other)
                parent[other] = first
    roots = np.fromiter((find(x) for x in range(members.size)), np.int64, members.size)
    _, label = np.unique(roots, return_inverse=True)  # roots ascending: by first record
    return members, label.astype(np.int64)


def _component_tasks(
    corpus: Corpus,
    records: np.ndarray,
    buckets: np.ndarray,
    tasks: int,
    make: dict[str, object],
) -> Iterator[ComponentTask]:
    """Whole components, consecutive in the order of their first record, packed into about
    ``tasks`` tasks of similar size."""
    members, label = components(records, buckets)
    sizes = np.bincount(label)
    target = max(1, -(-members.size // tasks))
    task_of_component = np.empty(sizes.size, np.int64)
    t = filled = 0
    for c, size in enumerate(sizes.tolist()):
        task_of_component[c] = t
        filled += size
        if filled >= target:
            t, filled = t + 1, 0
    task_of_member = task_of_component[label]
    task_of_entry = task_of_member[np.searchsorted(members, records)]
    for k in range(int(task_of_member.max()) + 1):
        numbers = members[task_of_member == k]
        mine = task_of_entry == k
        fi = corpus.file_of[numbers].astype(np.int64)
        handles = [(int(f), int(g - corpus.offsets[f])) for f, g in zip(fi, numbers, strict=True)]
        yield ComponentTask(
            numbers, np.searchsorted(numbers, records[mine]), buckets[mine],
            corpus.sigs[numbers], fi, handles, **make,
        )  # fmt: skip


def engine_search(engine: Engine, texts: TextSource) -> NearSearch:
    """The near-duplicate search of a run on ``engine``, reading texts from ``texts``."""

    def search(corpus: Corpus, threshold: float, shingle_size: int) -> Pairs:
        active = corpus.first_occurrences() & corpus.sigs.any(axis=1)
        idx = np.flatnonzero(active)
        # Without a spool (`curate validate`), a task would read its records' texts by
        # parsing their drops again, every task most drops: the main process, which reads a
        # drop at most twice, searches instead.
        spooled = any(s is not None for s in texts.spools)
        if not spooled or idx.size < PARALLEL_MIN_RECORDS or engine.workers < 2:
            return search_corpus(corpus, threshold, shingle_size)
        bands = [
            BandTask(corpus.sigs[idx, band * ROWS : (band + 1) * ROWS]) for band in range(BANDS)
        ]
        runs = list(engine.map(band_buckets, bands))
        records, buckets = join_bands(idx, runs)
        if records.size == 0:
            return []
        make = {"texts": texts, "threshold": threshold, "shingle_size": shingle_size}
        tasks = _component_tasks(corpus, records, buckets, TASKS_PER_WORKER * engine.workers,
                                 make)  # fmt: skip
        pairs: Pairs = []
        for found in engine.map(search_components, tasks, ahead=2 * engine.workers):
            pairs.extend(found)
        pairs.sort()
        return pairs

    return search
