"""The table's layout: which split a row is in, and which of a split's rows each file holds.

Both are functions of the rows alone, never of how they arrived or what ran the tasks, so every
engine writes the same files:

- a row's split is decided by its id (a hash of its words): the first eight hex digits as a
  fraction of 16⁸, against the splits' cumulative shares in the order of their names. A split
  is so a range of ids, and a record stays in its split from release to release;
- a split's rows, in id order, are cut every ``shard_size`` rows (:data:`DEFAULT_SHARD_ROWS`
  unless set): a shard is a range of ids, and every shard but a split's last is full. A split
  of fewer rows is one file, named as a table of one file always was
  (``data/train-00000-of-00001.parquet``).

The shards are planned from the rows of each id bucket (:func:`plan`), which the assembly
tasks count as they write them, before any row is read again; each shard is then written by a
task of its own (:func:`curate.dataset.assemble.write_shard`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curate.dataset.manifest import DATA
from curate.dataset.writers import DEFAULT as DEFAULT_WRITER

# 100,000 rows a file: about 90 MB of Parquet for the real abstracts of the dev corpus (860 bytes
# a row), under the 500 MB a shard the Hub's own uploads keep to, and five row groups of the
# writer's 20,000. A table below it stays one file; a million rows make ten, a task each.
DEFAULT_SHARD_ROWS = 100_000
ONE_SPLIT = {"train": 1.0}


@dataclass(frozen=True)
class Layout:
    """How and where the table's files are written: the staging folder, the writer, the
    table's schema as published, rows a shard (0: :data:`DEFAULT_SHARD_ROWS`) and the splits
    with their shares, in the order of their names."""

    folder: str
    writer: str = DEFAULT_WRITER
    schema: pa.Schema | None = None
    shard_size: int = 0
    splits: tuple[tuple[str, float], ...] = tuple(ONE_SPLIT.items())

    @classmethod
    def of(
        cls, folder: Path, *, shard_size: int = 0, splits: Mapping[str, float] | None = None,
        schema: pa.Schema | None = None, writer: str = DEFAULT_WRITER,
    ) -> Layout:  # fmt: skip
        chosen = splits or ONE_SPLIT
        shares = tuple((k, chosen[k]) for k in sorted(chosen))
        return cls(str(folder), writer, schema, shard_size, shares)

    @property
    def shard_rows(self) -> int:
        return self.shard_size or DEFAULT_SHARD_ROWS

    @property
    def shares(self) -> dict[str, float]:
        return dict(self.splits)


def split_of(ids: pa.Array | pa.ChunkedArray, splits: Mapping[str, float]) -> np.ndarray:
    """The index of each id's split in ``splits`` (in the order of their names)."""
    if len(splits) == 1:
        return np.zeros(len(ids), dtype=np.int64)
    head = pc.utf8_slice_codeunits(ids, 0, 8).to_pylist()
    where = np.fromiter((int(h, 16) for h in head), dtype=np.float64, count=len(head)) / 16**8
    bounds = np.cumsum(list(splits.values()))[:-1]  # the last split takes the rest
    return np.searchsorted(bounds, where, side="right")


# Rows of one bucket a shard takes: the bucket (an id prefix), how many of its rows of the
# shard's split come before them, and how many it takes, in id order.
Piece = tuple[str, int, int]


@dataclass(frozen=True)
class Shard:
    """One file of the table: a range of one split's rows, in id order."""

    split: str
    index: int
    of: int  # the split's files
    first_row: int  # the number of its first row in the table (splits in order, then ids)
    rows: int
    pieces: tuple[Piece, ...]

    def path(self, suffix: str) -> str:
        """Its name in the release, as the Hub's loaders find a split's files."""
        return f"{DATA}{self.split}-{self.index:05d}-of-{self.of:05d}{suffix}"


def plan(
    counts: Mapping[str, Sequence[int]], buckets: Sequence[str], splits: Sequence[str], rows: int
) -> list[Shard]:
    """The shards of every split, in order, from ``counts`` (a bucket's rows in each split);
    an empty split still has its file."""
    shards: list[Shard] = []
    first = 0
    for s, split in enumerate(splits):
        sizes = [(b, int(counts[b][s])) for b in buckets if b in counts and counts[b][s]]
        total = sum(n for _, n in sizes)
        of = max(1, -(-total // rows))
        ranges = [(k * rows, min((k + 1) * rows, total)) for k in range(of)]
        taken: list[list[Piece]] = [[] for _ in ranges]
        start, k = 0, 0
        for bucket, n in sizes:
            while k < of and ranges[k][1] <= start:
                k += 1
            j = k
            while j < of and ranges[j][0] < start + n:
                lo, hi = max(ranges[j][0], start), min(ranges[j][1], start + n)
                taken[j].append((bucket, lo - start, hi - lo))
                j += 1
            start += n
        for k, (lo, hi) in enumerate(ranges):
            shards.append(Shard(split, k, of, first + lo, hi - lo, tuple(taken[k])))
        first += total
    return shards
