"""A record's row, made in the same visit as its checks, and kept on disk until the corpus is known.

A build reads each file once: the per-file task parses it, checks every record and, with the
records and their results still in memory, cleans each record and makes what its row can have
before the corpus-wide steps decide which records survive: everything but ``flags`` and
``sources``. What the checks computed (the id, the language) is what the row uses. The rows of
a file are spooled to one Arrow file, record by record in file order, so that the main process
holds none of them; after deduplication and the row policies, :mod:`curate.dataset.assemble`
takes the survivors' rows from the spool and adds their provenance.

A record whose own findings stop the build (an error) or drop its row (a ``drop`` row policy)
gets no row, only its raw text, which the near-duplicate check reads from the spool too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from curate.dataset.table import Contract, contract_for
from curate.transform.clean import CleanResult, clean_text
from validation import normalize, residue
from validation.config import Config
from validation.findings import Severity
from validation.records import Record
from validation.registry import row_policy_of
from validation.runner import RecordResult, counts

MADE = "_made"  # false for a record without a row: only its raw text is spooled
MATH_KEPT = "_math_kept"  # the math spans the cleaner kept as TeX (`math-kept` findings)
# Rows per record batch of a spool file: assembly reads a spool a batch at a time.
SPOOL_BATCH_ROWS = 2_000


def spool_schema(contract: Contract) -> pa.Schema:
    """The spool's columns: what a row has before the corpus is known (the table's but `flags`
    and `sources`, which come after; the mapping's extra columns included), and what making
    the row reports."""
    return pa.schema(
        [pa.field(f.name, f.type) for f in contract.schema if f.name not in ("flags", "sources")]
        + [pa.field(MADE, pa.bool_()), pa.field(MATH_KEPT, pa.list_(pa.string()))]
    )


def has_math(raw: str) -> bool:
    return any(
        span.text.startswith(("$", "\\(", "\\[", "\\begin")) for span in residue.find("latex", raw)
    )


def content_columns(
    records: list[Record],
    results: list[RecordResult],
    made: list[bool],
    math: str,
    extra: list[str],
    where: str = "",
) -> dict[str, list[Any]]:
    """The rows of some records without their flags and sources, as the spool's columns: a
    list of values per column, never a dict per row. A record not ``made`` has only its id and
    raw text; ``_math_kept`` lists the math spans published as TeX because they could not be
    converted; ``extra`` names the columns the field mapping carries."""
    rows = [(r, res) if m else None for r, res, m in zip(records, results, made, strict=True)]
    cleaned = [_cleaned(row[0], math, where) if row else None for row in rows]
    places = [row[0].venue_year if row else (None, None) for row in rows]
    fields = [dict(row[0].extra) if row and row[0].extra else {} for row in rows]
    return {
        "id": [res.id for res in results],
        "abstract": [c.text if c else None for c in cleaned],
        "abstract_raw": [r.text for r in records],
        "venue": [v for v, _ in places],
        "year": [y for _, y in places],
        # A tabular source's own language field, where the mapping names one, else langdetect's.
        "language": [
            (row[0].language if row[0].language is not None else row[1].language) if row else None
            for row in rows
        ],
        "word_count": [
            _word_count(c.text, r, res) if c else None
            for c, r, res in zip(cleaned, records, results, strict=True)
        ],
        "char_count": [len(c.text) if c else None for c in cleaned],
        "has_math": [has_math(row[0].text) if row else None for row in rows],
        "markup": [list(c.kinds) if c else None for c in cleaned],
        **{name: [f.get(name) for f in fields] for name in extra},
        MADE: made,
        MATH_KEPT: [list(c.math_kept) if c else None for c in cleaned],
    }  # fmt: skip


def _word_count(clean: str, record: Record, result: RecordResult) -> int:
    """``normalize.word_total(clean)``; for an ASCII record the cleaner left as it was (most of
    them), the words measure the checks took of it already (the same count without CJK)."""
    if clean is record.text and clean.isascii():
        for name, value in result.measures:
            if name == "words":
                return value
    return normalize.word_total(clean)


class CleaningFault(RuntimeError):
    """The cleaner failed on one record: a fault of curate's, not of the record. It names the
    record, so that the fault can be reported with it and the record found; without it one
    record stopped the build with a bare ``IndexError`` and no file or line."""


def _cleaned(record: Record, math: str, where: str) -> CleanResult:
    try:
        return clean_text(record.text, math=math)
    except Exception as exc:
        raise CleaningFault(
            f"cleaning the record at {where}:{record.line} failed ({type(exc).__name__}: {exc}); "
            "this is a fault of curate's cleaner, please report it with that record"
        ) from exc


@dataclass(frozen=True)
class Cleaning:
    """What making a row needs beyond the checks' settings: how math is written, and the row
    policies that keep a record's row out of the table (the build's settings)."""

    math: str = "unicode"
    row_policy: Mapping[str, str] = field(default_factory=dict)


def gets_row(path: str, result: RecordResult, config: Config, cleaning: Cleaning) -> bool:
    """False when the record's own findings refuse the build or drop its row.

    The same rules as the report (:func:`validation.runner.counts`) and as
    :func:`curate.dedupe.policy.decide_rows`; a record judged wrongly here is caught there, as
    a row missing from the spool.
    """
    for f in result.findings:
        if not counts(replace(f, file=path), config):
            continue
        if f.severity is Severity.ERROR or row_policy_of(f.code, cleaning.row_policy) == "drop":
            return False
    return True


class Spool:
    """One file's spool of rows, written a batch of records at a time (a tabular file is
    checked that way), and made only once there is a row: a file without records has none."""

    def __init__(self, target: Path, config: Config, cleaning: Cleaning) -> None:
        self.target = target
        self.config = config
        self.cleaning = cleaning
        contract = contract_for(config, tabular=False)
        self.schema = spool_schema(contract)
        self.extra = list(contract.extra)
        self._writer: ipc.RecordBatchFileWriter | None = None

    def write(self, path: str, records: list[Record], results: list[RecordResult]) -> None:
        """Make the rows of some of the file's records, in file order, and spool them."""
        if not records:
            return
        config, cleaning = self.config, self.cleaning
        made = [gets_row(path, result, config, cleaning) for result in results]
        columns = content_columns(records, results, made, cleaning.math, self.extra, path)
        if self._writer is None:
            self._writer = ipc.new_file(self.target, self.schema)
        self._writer.write_table(
            pa.table(columns, schema=self.schema), max_chunksize=SPOOL_BATCH_ROWS
        )

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def spool_files(path: str | Path) -> list[Path]:
    """The files of one file's spool, in file order: itself, or a file read in parts its
    folder's, one a part with rows."""
    return sorted(Path(path).glob("*.arrow")) if Path(path).is_dir() else [Path(path)]


def take_spool(path: str | Path, records: Sequence[int]) -> pa.Table:
    """Some rows of one file's spool, by their index in it, ascending: read a record batch at a
    time (:data:`SPOOL_BATCH_ROWS` rows at most) and only the batches that hold one of them, so
    that what is held beyond the rows taken is one batch, not the file (a memory map's pages
    count as the process's memory while it is open)."""
    import numpy as np

    wanted = np.asarray(records, np.int64)
    taken: list[pa.Table] = []
    first = high = 0
    schema = None
    for part in spool_files(path):
        with pa.OSFile(str(part)) as source:
            reader = ipc.open_file(source)
            schema = reader.schema
            for i in range(reader.num_record_batches):
                batch = reader.get_batch(i)
                low, high = np.searchsorted(wanted, [first, first + batch.num_rows])
                if high > low:
                    rows = pa.Table.from_batches([batch]).take(pa.array(wanted[low:high] - first))
                    taken.append(rows.combine_chunks())  # its own buffers, not the batch's
                first += batch.num_rows
                if high == len(wanted):  # past the last row wanted: no more batches to read
                    break
        if high == len(wanted):
            break
    if taken:
        return pa.concat_tables(taken)
    assert schema is not None, "a spool has a file"
    return schema.empty_table()


def read_spool(path: str | Path) -> pa.Table:
    """A file's spooled rows, memory-mapped: reading a column costs only that column. A file
    read in parts has a folder of spools, one a part with rows, in file order: their rows
    are the file's, in order, joined without a copy."""
    if Path(path).is_dir():
        parts = sorted(Path(path).glob("*.arrow"))
        return pa.concat_tables([ipc.open_file(pa.memory_map(str(p))).read_all() for p in parts])
    return ipc.open_file(pa.memory_map(str(path))).read_all()


def raw_texts(spool: str | Path, records: list[int]) -> list[str]:
    """The raw texts of some records of one file (by their index in it), from its spool file:
    what the near-duplicate check and the report read instead of parsing the drop again."""
    raw = read_spool(spool).column("abstract_raw")
    return [raw[ri].as_py() for ri in records]
