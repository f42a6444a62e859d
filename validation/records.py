"""The parsed form of a source drop, as the checks see it.

Parsing (in ``curate.ingest.formats.text``) produces these; checks only read them. A record keeps
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
