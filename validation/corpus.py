"""The corpus as the cross-file checks see it: compact per-record arrays, not records.

Each file is checked on its own (in parallel, or from the cache) and leaves behind only what
the corpus checks need: every record's line, id and MinHash signature. The texts themselves are
fetched again, through ``load_texts``, only for the few records that are near-duplicate
candidates, so the corpus of a million abstracts never has to be held in memory at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from validation.findings import Finding
from validation.normalize import comparison_words
from validation.records import Header
from validation.sketch import (
    ESTIMATE_MARGIN,
    NUM_PERM,
    candidate_pairs,
    jaccard_hashes,
    shingle_hashes,
)

# (file index, record index within the file) -> text
TextLoader = Callable[[list[tuple[int, int]]], dict[tuple[int, int], str]]


@dataclass
class FileResult:
    """What checking one file leaves behind for the corpus checks and the report."""

    path: str
    header: Header | None
    sha256: str
    size: int
    lines: np.ndarray  # int32[n]
    ids: list[str]
    sigs: np.ndarray  # uint16[n, NUM_PERM]: MinHash signatures
    findings: list[Finding]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def n_records(self) -> int:
        return len(self.ids)

    def relocated(self, path: str) -> FileResult:
        """The same result for the same bytes found under another path."""
        if path == self.path:
            return self
        return replace(self, path=path, findings=[replace(f, file=path) for f in self.findings])


def record_offsets(files: list[FileResult]) -> np.ndarray:
    """Global index of each file's first record, and the total at the end (int64[len+1])."""
    return np.concatenate(([0], np.cumsum([f.n_records for f in files]))).astype(np.int64)


class Corpus:
    """Every record of a run in file/line order, with global indexes 0..n-1."""

    def __init__(self, files: list[FileResult], load_texts: TextLoader) -> None:
        self.files = files
        self._load = load_texts
        counts = [f.n_records for f in files]
        self.offsets = record_offsets(files)
        self.n = int(self.offsets[-1])
        self.file_of = np.repeat(np.arange(len(files)), counts) if files else np.empty(0, int)
        self.ids = [i for f in files for i in f.ids]
        self.sigs = (
            np.concatenate([f.sigs for f in files])
            if self.n
            else np.empty((0, NUM_PERM), dtype=np.uint16)
        )

    def where(self, g: int) -> tuple[int, int]:
        fi = int(self.file_of[g])
        return fi, g - int(self.offsets[fi])

    def path(self, g: int) -> str:
        return self.files[int(self.file_of[g])].path

    def line(self, g: int) -> int:
        fi, ri = self.where(g)
        return int(self.files[fi].lines[ri])

    def loc(self, g: int) -> str:
        return f"{self.path(g)}:{self.line(g)}"

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
        """(later, earlier, Jaccard) for each record with an earlier near-duplicate.

        LSH proposes the candidates and their MinHash estimate drops those far below the
        threshold; the Jaccard similarity of each remaining pair is then computed exactly over
        the two records' shingles, and only that decides. Exact duplicates take no part (they
        are the ``duplicate`` check's), and each later record is paired with its most similar
        earlier record, the earliest on a tie.
        """
        has_words = self.sigs.any(axis=1)
        pairs = candidate_pairs(
            self.sigs, self.first_occurrences() & has_words, threshold - ESTIMATE_MARGIN
        )
        if pairs.size == 0:
            return []
        needed = np.unique(pairs).tolist()
        texts = self.texts(needed)
        shingles = {g: shingle_hashes(comparison_words(texts[g]), shingle_size) for g in needed}
        best: dict[int, tuple[float, int]] = {}
        for earlier, later in pairs.tolist():
            score = jaccard_hashes(shingles[earlier], shingles[later])
            if score < threshold:
                continue
            current = best.get(later)
            if current is None or (score, -earlier) > (current[0], -current[1]):
                best[later] = (score, earlier)
        return [(later, earlier, score) for later, (score, earlier) in sorted(best.items())]
