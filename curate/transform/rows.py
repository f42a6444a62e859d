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

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from curate.dataset.table import Contract, contract_for
from curate.transform.clean import clean_text
from validation import normalize, residue
from validation.config import Config
from validation.findings import Severity
from validation.records import Record
from validation.registry import row_policy_of
from validation.runner import RecordResult, counts

MADE = "_made"  # false for a record without a row: only its raw text is spooled
MATH_KEPT = "_math_kept"  # the math spans the cleaner kept as TeX (`math-kept` findings)


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


def content_row(record: Record, result: RecordResult, math: str) -> dict[str, Any]:
    """The row of one record without its flags and sources; ``_math_kept`` lists the math
    spans published as TeX because they could not be converted."""
    cleaned = clean_text(record.text, math=math)
    venue, year = record.venue_year
    return {
        "id": result.id,
        "abstract": cleaned.text,
        "abstract_raw": record.text,
        "venue": venue,
        "year": year,
        # A tabular source's own language field, where the mapping names one, else langdetect's.
        "language": record.language if record.language is not None else result.language,
        "word_count": normalize.word_total(cleaned.text),
        "char_count": len(cleaned.text),
        "has_math": has_math(record.text),
        "markup": list(cleaned.kinds),
        **dict(record.extra),
        MADE: True,
        MATH_KEPT: list(cleaned.math_kept),
    }


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
        self.schema = spool_schema(contract_for(config, tabular=False))
        self._writer: ipc.RecordBatchFileWriter | None = None

    def write(self, path: str, records: list[Record], results: list[RecordResult]) -> None:
        """Make the rows of some of the file's records, in file order, and spool them."""
        config, cleaning = self.config, self.cleaning
        rows = [
            content_row(record, result, cleaning.math)
            if gets_row(path, result, config, cleaning)
            else {"id": result.id, "abstract_raw": record.text, MADE: False}
            for record, result in zip(records, results, strict=True)
        ]
        if not rows:
            return
        if self._writer is None:
            self._writer = ipc.new_file(self.target, self.schema)
        self._writer.write_table(pa.Table.from_pylist(rows, schema=self.schema))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


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
