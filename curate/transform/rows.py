"""A record's row, made in the same visit as its checks, and kept on disk until the corpus is known.

A build visits each file once: a worker parses it, checks every record, and right away cleans
the record and makes what its row can have before the corpus-wide steps decide which records
survive: everything but ``flags`` and ``sources``. What the checks computed (the id, the
language) is what the row uses. The rows of a file are spooled to one Arrow file, record by
record in file order, so that the main process holds none of them; after deduplication and the
row policies, :mod:`curate.dataset.assemble` takes the survivors' rows from the spool and adds their
provenance.

A record whose own findings stop the build (an error) or drop its row (a ``drop`` row policy)
gets no row, only its raw text, which the near-duplicate check reads from the spool too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from curate.dataset.table import ARROW_SCHEMA
from curate.transform.clean import clean_text
from validation import normalize, residue
from validation.config import Config
from validation.findings import Severity
from validation.records import Record
from validation.registry import row_policy_of
from validation.runner import RecordResult

# The columns a row has before the corpus is known; `flags` and `sources` come after.
CONTENT = [f.name for f in ARROW_SCHEMA if f.name not in ("flags", "sources")]
MADE = "_made"  # false for a record without a row: only its raw text is spooled
MATH_KEPT = "_math_kept"  # the math spans the cleaner kept as TeX (`math-kept` findings)
SPOOL_SCHEMA = pa.schema(
    [pa.field(name, ARROW_SCHEMA.field(name).type) for name in CONTENT]
    + [pa.field(MADE, pa.bool_()), pa.field(MATH_KEPT, pa.list_(pa.string()))]
)


def has_math(raw: str) -> bool:
    return any(
        span.text.startswith(("$", "\\(", "\\[", "\\begin")) for span in residue.find("latex", raw)
    )


def content_row(record: Record, result: RecordResult, config: Config) -> dict[str, Any]:
    """The row of one record without its flags and sources; ``_math_kept`` lists the math
    spans published as TeX because they could not be converted."""
    cleaned = clean_text(record.text, math=config.math)
    header = record.header
    return {
        "id": result.id,
        "abstract": cleaned.text,
        "abstract_raw": record.text,
        "venue": header.venue if header else None,
        "year": header.year if header else None,
        "language": result.language,
        "word_count": normalize.word_total(cleaned.text),
        "char_count": len(cleaned.text),
        "has_math": has_math(record.text),
        "markup": list(cleaned.kinds),
        MADE: True,
        MATH_KEPT: list(cleaned.math_kept),
    }


def gets_row(path: str, result: RecordResult, config: Config) -> bool:
    """False when the record's own findings refuse the build or drop its row.

    The same rules as the report (a finding ``off`` or ignored for the file does not count)
    and as :func:`curate.dataset.assemble.decide_rows`; a record judged wrongly here is caught
    there,
    as a row missing from the spool.
    """
    for f in result.findings:
        if f.severity is Severity.OFF or config.ignored(f.code, path):
            continue
        if f.severity is Severity.ERROR or row_policy_of(f.code, config) == "drop":
            return False
    return True


@dataclass
class RowSpool:
    """The visitor that makes a file's rows as its records are checked (see
    :data:`validation.runner.RecordVisitor`), then writes them to ``target``."""

    path: str
    config: Config
    target: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def __call__(self, record: Record, result: RecordResult) -> None:
        t = time.perf_counter()
        if gets_row(self.path, result, self.config):
            self.rows.append(content_row(record, result, self.config))
        else:
            self.rows.append({"id": result.id, "abstract_raw": record.text, MADE: False})
        self.seconds += time.perf_counter() - t

    def write(self) -> None:
        if not self.rows:
            return
        table = pa.Table.from_pylist(self.rows, schema=SPOOL_SCHEMA)
        with ipc.new_file(self.target, SPOOL_SCHEMA) as writer:
            writer.write_table(table)
        self.rows = []


def spool_path(spool: Path, file_index: int) -> Path:
    return spool / f"{file_index:07d}.arrow"


def read_spool(path: Path) -> pa.Table:
    """A file's spooled rows, memory-mapped: reading a column costs only that column."""
    return ipc.open_file(pa.memory_map(str(path))).read_all()


def raw_texts(spool: Path, file_index: int, records: list[int]) -> list[str]:
    """The raw texts of some records of one file (by their index in it), from its spool: what
    the near-duplicate check and the report read instead of parsing the drop again."""
    raw = read_spool(spool_path(spool, file_index)).column("abstract_raw")
    return [raw[ri].as_py() for ri in records]
