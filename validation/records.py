"""The parsed form of a source file, as the checks see it.

Parsing (in ``curate.ingest.formats``) produces these; checks only read them. A record keeps
its text
exactly as found (hard-wrapped lines joined with single spaces) and enough position data to
point a finding at the physical line where a fault sits, not just where the record starts.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from validation.findings import Finding


@dataclass(frozen=True, slots=True)
class Header:
    """The header line of a drop: provenance for every record in the file."""

    text: str
    venue: str
    year: int
    phrase: str
    language: str | None
    language_source: str  # "registry", "script", "langdetect" or "none"
    language_score: float | None = None


@dataclass(frozen=True, slots=True)
class Record:
    file: str
    line: int
    text: str
    header: Header | None = None
    # Offsets in ``text`` at which the 2nd, 3rd, ... physical line of the record starts.
    line_starts: tuple[int, ...] = ()
    # Codes accepted for this record by an inline marker line (``# curate: accept CODE``).
    accept: tuple[str, ...] = ()
    # What a tabular source (JSONL, CSV, Parquet, Arrow) says of the record, through its field
    # mapping: its row (CSV, Parquet and Arrow; ``line`` is then the row's first line, or the
    # row itself in a binary file), the source's own id, its venue, year and language, and the
    # values of the extra columns it carries. A text drop has none of these: its header does.
    row: int | None = None
    source_id: str | None = None
    venue: str | None = None
    year: int | None = None
    language: str | None = None
    extra: tuple[tuple[str, object], ...] = ()

    @property
    def venue_year(self) -> tuple[str | None, int | None]:
        """The record's venue and year: its own, else its file's header's."""
        if self.header is None:
            return self.venue, self.year
        return (
            self.venue if self.venue is not None else self.header.venue,
            self.year if self.year is not None else self.header.year,
        )

    def line_at(self, offset: int) -> int:
        """The physical line holding character ``offset`` of ``text``."""
        return self.line + bisect.bisect_right(self.line_starts, offset)


@dataclass
class SourceFile:
    """One drop file: its records, and what parsing found wrong with its bytes and layout."""

    path: str
    records: list[Record] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    header: Header | None = None
    sha256: str = ""
    size: int = 0
