"""A source replaced or rewritten while it is read: its digest is of the bytes its rows came
from, or the file is refused, so neither the manifest nor the validation cache ever pairs
one file's rows with another's digest.

The file is changed between two batches of the real reader (`formats.parts`, the records a
batch at a time, as the scan task reads them), which is where a build's read of a large file
can be overtaken by a writer."""

from __future__ import annotations

import hashlib
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import GOOD

from curate.ingest import formats
from validation.config import Config
from validation.mapping import parse

CONFIG = Config(mapping=parse({f: {"text": "abstract"} for f in ("parquet", "jsonl", "csv")}))


def _texts(n: int) -> list[str]:
    return [f"{GOOD[i % 2]['abstract']} (copy {i})" for i in range(n)]


def _write(path, n: int) -> None:
    if path.suffix == ".parquet":
        pq.write_table(pa.table({"abstract": _texts(n)}), path, row_group_size=5_000)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({"abstract": t}) + "\n" for t in _texts(n)))
    else:
        path.write_text("abstract\n" + "".join(f'"{t}"\n' for t in _texts(n)))


def _read_changing(path, change):
    batches = formats.parts(path.suffix.lstrip("."), path, CONFIG)
    records = len(next(batches).records)
    change()
    *rest, last = list(batches)
    return records + sum(len(p.records) for p in rest) + len(last.records), last


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".csv"])
def test_a_source_replaced_while_read_gets_the_digest_of_the_rows_read(suffix, tmp_path):
    path = tmp_path / f"a{suffix}"
    _write(path, 12_000)
    old = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size
    new = tmp_path / f"new{suffix}"
    _write(new, 1_000)

    records, last = _read_changing(path, lambda: os.replace(new, path))
    assert records == 12_000  # the rows of the file that was opened
    assert (last.sha256, last.size) == old  # not the new file's, which the path names now
    assert not [f for f in last.findings if f.code == "unreadable"]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_a_source_rewritten_in_place_while_read_is_refused_and_not_cached(suffix, tmp_path):
    path = tmp_path / f"a{suffix}"
    _write(path, 12_000)

    def rewrite() -> None:
        with path.open("r+b") as fh:  # the same file, cut short: what `>` in a shell does
            fh.truncate(path.stat().st_size // 2)

    _, last = _read_changing(path, rewrite)
    assert last.sha256 == ""  # no digest: the scan caches nothing for it
    (refused,) = [f for f in last.findings if f.code == "unreadable"]
    assert refused.line == 0 and "changed while it was read" in refused.message
