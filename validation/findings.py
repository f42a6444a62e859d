"""The findings model: what a check says, and the collector that keeps every finding of a run.

Like mlcroissant's ``Issues``, a run collects everything in one pass instead of stopping at the
first fault, so one broken file never hides what is wrong with the others.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum


def count(n: int, noun: str) -> str:
    """``1 file``, ``2 files``: a count a person reads says its noun in the right number."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'latex'?)`` when ``name`` is close to one of ``known``, else ``""``:
    a misspelt key, code or field is then one edit away from right."""
    import difflib

    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    OFF = "off"  # configured off: the check does not run and nothing is reported


# Which record a finding is about: (index of its file in the run, index of the record in the
# file). Later stages follow it to the record's id, row and text; reports show files and lines.
Handle = tuple[int, int]
# A record's place as a message names it: ``PATH:LINE``, and ``PATH:LINE (record N)`` where
# several records of the file start on that line (a JSON array written on one line).
_PLACE = re.compile(r"(?P<path>.*):(?P<line>\d+)(?P<rest> \(record \d+\))?", re.DOTALL)


def place(path: str, line: int, record: int | None = None) -> str:
    """``PATH:LINE``, with `` (record N)`` (``record``, 1-based in its file) when given: the
    one spelling of a record's place in messages, which :func:`parse_place` reads back."""
    return f"{path}:{line}" + (f" (record {record})" if record is not None else "")


def parse_place(text: str) -> tuple[str, int, str] | None:
    """The path, line and the rest (`` (record N)`` or ``""``) of a :func:`place`; None for
    text that is none."""
    m = _PLACE.fullmatch(text)
    return (m["path"], int(m["line"]), m["rest"] or "") if m and m["path"] else None


@dataclass(frozen=True, slots=True)
class Finding:
    """One fault at one place. ``line`` is 1-based; 0 means the file as a whole.

    ``record`` and ``related_record`` are the handles of the record the finding is about and of
    the earlier record it duplicates: how the build finds them without reading ``file:line``
    back out of text. They are not part of the finding's JSON.
    """

    code: str
    severity: Severity
    file: str
    line: int
    message: str
    related: str | None = None
    score: float | None = None
    # The id of the record (and table row) the finding is about; None for file findings.
    id: str | None = None
    record: Handle | None = None
    related_record: Handle | None = None

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.file, self.line, self.code, self.message)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["severity"] = str(self.severity)
        if self.related is None:
            del out["related"]
        if self.score is None:
            del out["score"]
        else:
            out["score"] = round(self.score, 4)
        if self.id is None:
            del out["id"]
        del out["record"], out["related_record"]
        return out


@dataclass
class Report:
    """Every finding of one validation run, in file/line order once :meth:`sorted` is called."""

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    records: int = 0
    # Seconds per stage (parse, each check code, ...): for benchmarks and --verbose, not output.
    timings: dict[str, float] = field(default_factory=dict)
    # Findings left out of this report: by a baseline (``--baseline``). Counted, not hidden.
    baselined: int = 0
    # Records the build left out by row policy: {id, file, line, reasons}.
    dropped: list[dict[str, object]] = field(default_factory=list)
    # The macros of the TeX the build published as it is (`math-kept`): {macro, rows}, the
    # most frequent first.
    kept_macros: list[dict[str, object]] = field(default_factory=list)
    # What the threshold checks measured, by measure: the distribution and each threshold
    # (see validation.measures.summarise).
    measures: dict[str, object] = field(default_factory=dict)

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def extend(self, findings: Iterable[Finding]) -> None:
        self.findings.extend(findings)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def sort(self) -> Report:
        self.findings.sort(key=Finding.sort_key)
        return self

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    def failed(self, strict: bool = False) -> bool:
        """Errors fail a run; with ``strict`` warnings do too."""
        return bool(self.errors) or (strict and bool(self.warnings))

    def summary(self) -> dict[str, object]:
        by_code: Counter[tuple[str, str]] = Counter(
            (f.code, str(f.severity)) for f in self.findings
        )
        return {
            "files": len(self.files),
            "records": self.records,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            **({"baselined": self.baselined} if self.baselined else {}),
            "by_code": {
                code: {"severity": sev, "count": n} for (code, sev), n in sorted(by_code.items())
            },
        }

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
        }
        if self.measures:
            out["measures"] = self.measures
        if self.dropped:
            out["dropped"] = self.dropped
        if self.kept_macros:
            out["kept_macros"] = self.kept_macros
        return out
