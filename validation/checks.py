"""The checks. Each is small, named by the finding code it reports, and changes nothing.

Importing this module fills :data:`validation.registry.REGISTRY`; the order of registration is
the order of the README's table.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

import ftfy

from validation import normalize, residue
from validation.config import Config
from validation.corpus import Corpus
from validation.findings import Finding
from validation.language import detect, language_of
from validation.records import Record, SourceFile
from validation.registry import finding, register, register_code

# --- codes emitted by parsing -------------------------------------------------------------------
register_code("encoding", "error", "bytes are not valid UTF-8 (a binary file included)")
register_code("bom", "warning", "the file starts with a UTF-8 byte-order mark")
register_code("line-endings", "warning", "CR or CRLF line endings")
register_code("empty-file", "error", "no records (an empty file, or a header alone)")
register_code("header-missing", "error", "line 1 is not a header (for example it is an abstract)")
register_code("unreadable", "error", "the file cannot be read at all (permissions, I/O error)")


def _excerpt(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# --- file checks ----------------------------------------------------------------------------------
@register("header-language", "error", "file", "the header's language is not an allowed one")
def check_header_language(source: SourceFile, config: Config) -> Iterator[Finding]:
    header = source.header
    if header is None or header.language in config.header_languages:
        return
    allowed = ", ".join(config.header_languages)
    if header.language is None:
        detail = "names no list phrase, so its language cannot be told"
    else:
        how = header.language_source
        if header.language_score is not None:
            how += f", p={header.language_score:.2f}"
        detail = f"is in {header.language!r} ({how})"
    yield finding(
        "header-language",
        source.path,
        1,
        f"header {header.text!r} {detail}; allowed: {allowed}",
        config,
        score=header.language_score,
    )


# --- record checks --------------------------------------------------------------------------------
@lru_cache(maxsize=8)
def _word_count(text: str) -> int:
    return len(normalize.words(text))


def word_count(record: Record) -> int:
    """Words of the record, counted once for the checks that all need them."""
    return _word_count(record.text)


@register("language", "error", "record", "a record is not in the expected language")
def check_language(record: Record, config: Config) -> Iterator[Finding]:
    plain = normalize.plain_text(record.text)
    if len(normalize.words(plain)) < config.language_min_words:
        return
    lang, prob = language_of(plain)
    if lang in config.languages:
        return
    if prob is None:  # the English pre-check answered, and English is not allowed: ask langdetect
        lang, prob = detect(plain)
    expected = ", ".join(config.languages)
    yield finding(
        "language",
        record.file,
        record.line,
        f"detected language {lang or 'unknown'!r} (p={prob:.2f}); expected {expected}",
        config,
        score=prob,
    )


def _residue_findings(code: str, label: str, record: Record, config: Config) -> Iterator[Finding]:
    by_line: dict[int, list[str]] = {}
    for span in residue.find(code, record.text):
        by_line.setdefault(record.line_at(span.start), []).append(span.text)
    for line, spans in sorted(by_line.items()):
        shown = ", ".join(f"`{_excerpt(s, 40)}`" for s in spans[:3])
        more = f" and {len(spans) - 3} more" if len(spans) > 3 else ""
        yield finding(code, record.file, line, f"{label} residue: {shown}{more}", config)


@register("latex", "warning", "record", "LaTeX residue: math, commands, escapes, environments")
def check_latex(record: Record, config: Config) -> Iterator[Finding]:
    return _residue_findings("latex", "LaTeX", record, config)


@register("markdown", "warning", "record", "Markdown residue: emphasis, inline code, links")
def check_markdown(record: Record, config: Config) -> Iterator[Finding]:
    return _residue_findings("markdown", "Markdown", record, config)


@register("html", "warning", "record", "HTML tags or entities")
def check_html(record: Record, config: Config) -> Iterator[Finding]:
    return _residue_findings("html", "HTML", record, config)


@register("mojibake", "error", "record", "text garbled by a wrong decoding, as ftfy recognises it")
def check_mojibake(record: Record, config: Config) -> Iterator[Finding]:
    text = record.text
    if not residue.may_be_mojibake(text) or not ftfy.badness.is_bad(text):
        return
    fixed = ftfy.fix_encoding(text)
    if fixed == text:
        return
    start = next(i for i, (a, b) in enumerate(zip(text, fixed, strict=False)) if a != b)
    bad = text[start : start + 12].split(" ")[0] or text[start : start + 3]
    good = fixed[start : start + 12].split(" ")[0]
    yield finding(
        "mojibake",
        record.file,
        record.line_at(start),
        f"mojibake: {bad!r} looks like a wrong decoding of {good!r}",
        config,
    )


_ALLOWED_CONTROLS = {"\n", "\t"}


def _is_control(ch: str) -> bool:
    if ch in _ALLOWED_CONTROLS:
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


@register("control-char", "error", "record", "control or invisible format characters")
def check_control_chars(record: Record, config: Config) -> Iterator[Finding]:
    if record.text.isprintable():  # no Cc, Cf, Zl, Zp (nor Zs other than space): nothing to see
        return
    seen: dict[int, list[str]] = {}
    for i, ch in enumerate(record.text):
        if _is_control(ch):
            names = seen.setdefault(record.line_at(i), [])
            label = f"U+{ord(ch):04X} {unicodedata.name(ch, 'control')}"
            if label not in names:
                names.append(label)
    for line, names in sorted(seen.items()):
        yield finding(
            "control-char", record.file, line, "invisible character " + ", ".join(names), config
        )


@register("too-short", "warning", "record", "fewer words than the minimum (a placeholder)")
def check_too_short(record: Record, config: Config) -> Iterator[Finding]:
    n = word_count(record)
    if n < config.min_words:
        yield finding(
            "too-short",
            record.file,
            record.line,
            f"{n} words, fewer than {config.min_words}: {_excerpt(record.text)!r}",
            config,
        )


@register("too-long", "warning", "record", "more words than the maximum (two abstracts merged?)")
def check_too_long(record: Record, config: Config) -> Iterator[Finding]:
    n = word_count(record)
    if n > config.max_words:
        yield finding(
            "too-long",
            record.file,
            record.line,
            f"{n} words, more than {config.max_words}: perhaps two abstracts without a blank "
            "line between them",
            config,
        )


_CLOSERS = "\"'”’»)]}*_`"
_TERMINAL = (".", "!", "?", "…", "。", "！", "？")
_URL_END = re.compile(r"(?:https?://|www\.)\S+$")


@register("truncated", "warning", "record", "the text stops mid-sentence")
def check_truncated(record: Record, config: Config) -> Iterator[Finding]:
    text = record.text.rstrip()
    if not text or _URL_END.search(text):
        return
    core = text.rstrip(_CLOSERS + " ")
    if core.endswith(_TERMINAL) or _URL_END.search(core):
        return
    yield finding(
        "truncated",
        record.file,
        record.line_at(len(text) - 1),
        f"ends mid-sentence: …{text[-40:]!r}",
        config,
    )


# --- corpus checks --------------------------------------------------------------------------------
@register("header-mismatch", "error", "corpus",
          "the header's venue or year disagrees with the drop")  # fmt: skip
def check_header_mismatch(corpus: Corpus, config: Config) -> Iterator[Finding]:
    headed = [(f.path, f.header) for f in corpus.files if f.header is not None]
    if not headed:
        return
    venues = Counter(h.venue.casefold() for _, h in headed)
    years = Counter(h.year for _, h in headed)
    if config.venue is not None:
        venue, venue_why = config.venue.casefold(), "the configured venue"
    else:
        venue = venues.most_common(1)[0][0]
        venue_why = f"the venue of {venues[venue]} of {len(headed)} files"
    if config.year is not None:
        year, year_why = config.year, "the configured year"
    else:
        year = years.most_common(1)[0][0]
        year_why = f"the year of {years[year]} of {len(headed)} files"
    for path, h in headed:
        problems = []
        if h.venue.casefold() != venue:
            problems.append(f"venue {h.venue!r} differs from {venue_why} ({venue.upper()!r})")
        if h.year != year:
            problems.append(f"year {h.year} differs from {year_why} ({year})")
        if problems:
            yield finding(
                "header-mismatch", path, 1, f"header {h.text!r}: " + "; ".join(problems), config
            )


@register(
    "duplicate", "warning", "corpus", "a record's text equals an earlier record's (normalised)"
)
def check_duplicates(corpus: Corpus, config: Config) -> Iterator[Finding]:
    first: dict[str, int] = {}
    for g, rid in enumerate(corpus.ids):
        if rid in first:
            original = corpus.loc(first[rid])
            yield finding(
                "duplicate",
                corpus.path(g),
                corpus.line(g),
                f"same abstract as {original} (equal after normalising whitespace, case, "
                "Unicode and markup)",
                config,
                related=original,
            )
        else:
            first[rid] = g


@register(
    "near-duplicate",
    "warning",
    "corpus",
    "word-shingle Jaccard similarity to an earlier record at or above the threshold",
)
def check_near_duplicates(corpus: Corpus, config: Config) -> Iterator[Finding]:
    for later, earlier, score in corpus.near_pairs(
        config.near_duplicate_threshold, config.shingle_size
    ):
        original = corpus.loc(earlier)
        yield finding(
            "near-duplicate",
            corpus.path(later),
            corpus.line(later),
            f"{score:.0%} similar to {original} (word {config.shingle_size}-shingle Jaccard, "
            f"threshold {config.near_duplicate_threshold:.2f})",
            config,
            related=original,
            score=score,
        )


@register("schema", "error", "file", "the parsed record table breaks its pandera schema")
def check_schema(source: SourceFile, config: Config) -> Iterator[Finding]:
    from validation.schema import schema_findings

    return schema_findings(source, config)


# --- codes emitted by the build -----------------------------------------------------------------
register_code(
    "math-kept",
    "warning",
    "a math span could not be converted faithfully and is published as its TeX source",
    scope="build",
)
