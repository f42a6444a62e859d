"""The checks. Each is small, named by the finding code it reports, and changes nothing.

Importing this module fills :data:`validation.registry.REGISTRY`; the order of registration is
the order of the README's table.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from validation import normalize, residue
from validation.corpus import Corpus
from validation.findings import Finding, Severity
from validation.language import batch_word_total, body_language, detect
from validation.records import Record, SourceFile
from validation.registry import (
    finding,
    register,
    register_code,
    register_measure,
    severity_of,
)

if TYPE_CHECKING:
    from validation.config import Config

# --- codes emitted by parsing -------------------------------------------------------------------
register_code("encoding", "error", "bytes are not valid UTF-8 (a binary file included)")
register_code("bom", "warning", "the file starts with a UTF-8 byte-order mark")
register_code("line-endings", "warning", "CR or CRLF line endings")
register_code("empty-file", "error", "no records (an empty file, or a header alone)")
register_code("header-missing", "error", "line 1 is not a header (for example it is an abstract)")
register_code("unreadable", "error", "the file cannot be read at all (permissions, I/O error)")
register_code("outside-link", "error", "a symlink in a source folder points outside the folders")
register_code("file-too-large", "error", "the file is larger than max_file_bytes; it is not read")
register_code("record-too-large", "error", "a record is longer than max_record_chars")
# ... by the readers of tabular sources (JSONL, CSV/TSV, Parquet, Arrow)
register_code("invalid-json", "error", "a JSONL line or a JSON file that is not JSON, or no object")
register_code(
    "invalid-row", "error", "a CSV/TSV row with the wrong number of fields, or bad quoting"
)
register_code("text-field", "error", "the mapped text field is missing, null, empty or no string")
register_code(
    "field-type", "error", "a mapped field or an extra column has a value of the wrong type"
)
register_code(
    "field-missing", "warning",
    "no record of a file has a mapped field (other than the text and the id)",
)  # fmt: skip
register_code("id-field", "error", "no record of a file has the mapped id field")
register_code("file-truncated", "error", "a compressed or Parquet file ends early or is damaged")
register_code("duplicate-key", "error", "a JSON object names one field twice (the last is kept)")


def _excerpt(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _allow(setting: str, allowed: tuple[str, ...], lang: str | None) -> str:
    """How to allow ``lang`` too: the setting as the config file would have it ("" when no
    language was told)."""
    if lang is None:
        return ""
    listed = ", ".join(f'"{x}"' for x in (*allowed, lang))
    return f" (to allow it: {setting} = [{listed}])"


# --- file checks ----------------------------------------------------------------------------------
@register("header-language", "error", "file", "the header's language is not an allowed one",
          score="probability")  # fmt: skip
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
        f"header {header.text!r} {detail}; allowed: {allowed}"
        + _allow("header_languages", config.header_languages, header.language),
        config,
        score=header.language_score,
    )


@register("record-mismatch", "error", "file",
          "a tabular record's venue or year is not a configured one")  # fmt: skip
def check_record_mismatch(source: SourceFile, config: Config) -> Iterator[Finding]:
    """The venue and year of each record of a tabular source (its mapped fields, or the
    mapping's defaults) against ``venues``/``years`` (else ``venue``/``year``): what
    ``header-mismatch`` is for text drops. Unset, any is accepted: a tabular source has no
    header whose majority could be taken."""
    if source.header is not None:
        return
    venues = config.venues if config.venues is not None else _one(config.venue)
    years = config.years if config.years is not None else _one(config.year)
    if not venues and not years:
        return
    allowed = {v.casefold() for v in venues}
    for record in source.records:
        problems = []
        if venues and record.venue is not None and record.venue.casefold() not in allowed:
            problems.append(f"venue {record.venue!r} is not one of {', '.join(venues)}")
        if years and record.year is not None and record.year not in years:
            problems.append(f"year {record.year} is not one of {', '.join(map(str, years))}")
        if problems:
            message = "; ".join(problems) + " (the configured venues and years)"
            yield finding("record-mismatch", record.file, record.line, message, config)


def _one(value: str | int | None) -> tuple:
    return () if value is None else (value,)


# --- record checks --------------------------------------------------------------------------------
@lru_cache(maxsize=8)
def _word_count(text: str) -> int:
    if text.isascii():  # no CJK character: its length in words is its word total
        counted = batch_word_total(text)
        if counted is not None:
            return counted
    return normalize.length_in_words(text)


def word_count(record: Record) -> int:
    """Words of the record, counted once for the checks that all need them (a CJK character
    weighs 1/1.5 word: see :data:`validation.normalize.CJK_CHARS_PER_WORD`)."""
    return _word_count(record.text)


@register_measure("words", "words of the record (a CJK character 1/1.5 of one)")
def measure_words(record: Record, config: Config) -> int:
    return word_count(record)


@register_measure("language", "probability of the detected language", lambda v: v[1])
def measure_language(record: Record, config: Config) -> tuple[str | None, float | None]:
    """The body language and langdetect's probability (None where the script or the English
    pre-check answered, and for a record too short to tell)."""
    return body_language(record.text, config.language_min_words)


@register("language", "error", "record", "a record is not in the expected language",
          version=2, measure="language", threshold="languages", score="probability")  # fmt: skip
def check_language(
    record: Record, config: Config, measured: tuple[str | None, float | None]
) -> Iterator[Finding]:
    lang, prob = measured
    if lang is None and prob is None:  # too short to tell
        return
    if lang in config.languages:
        return
    if prob is None and lang == "en":  # the English pre-check answered, and English is not
        lang, prob = detect(normalize.plain_text(record.text))  # allowed: ask langdetect
    how = "by its script" if prob is None else f"p={prob:.2f}"
    expected = ", ".join(config.languages)
    yield finding(
        "language",
        record.file,
        record.line,
        f"detected language {lang or 'unknown'!r} ({how}); expected {expected}"
        + _allow("languages", config.languages, lang),
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


@register("latex", "warning", "record", "LaTeX residue: math, commands, escapes, environments",
          version=2)  # fmt: skip
def check_latex(record: Record, config: Config) -> Iterator[Finding]:
    return _residue_findings("latex", "LaTeX", record, config)


@register("markdown", "warning", "record", "Markdown residue: emphasis, inline code, links",
          version=2)  # fmt: skip
def check_markdown(record: Record, config: Config) -> Iterator[Finding]:
    return _residue_findings("markdown", "Markdown", record, config)


@register("html", "warning", "record", "HTML tags or entities")
def check_html(record: Record, config: Config) -> Iterator[Finding]:
    return _residue_findings("html", "HTML", record, config)


@register("mojibake", "error", "record", "text garbled by a wrong decoding, as ftfy recognises it",
          version=2)  # fmt: skip
def check_mojibake(record: Record, config: Config) -> Iterator[Finding]:
    text = record.text
    if not residue.may_be_mojibake(text):
        return
    lost = text.find("\ufffd")
    if lost >= 0:  # bytes a decoder could not read, replaced: no repair brings them back
        yield finding(
            "mojibake",
            record.file,
            record.line_at(lost),
            f"U+FFFD REPLACEMENT CHARACTER in {_excerpt(text[max(0, lost - 20) : lost + 20], 40)!r}"
            ": bytes lost in a wrong decoding; the text must be taken again from its source",
            config,
        )
        return
    if not residue.may_look_bad(text):
        return
    # Here, past the cheap gate: only text that may be mojibake pays for importing ftfy (see
    # bench_startup; a cold validate of a clean drop imports none).
    import ftfy

    if not ftfy.badness.is_bad(text):
        return
    fixed = ftfy.fix_encoding(text)
    if fixed == text:
        # Garbled in a way ftfy cannot undo (a byte lost, a code page it does not guess:
        # `na╔¿ve`): still garbled; on the 7,627 real abstracts of the dev corpus and 749
        # Chinese ones, ftfy calls none bad.
        bad = ftfy.badness.BADNESS_RE.search(text)
        start = bad.start() if bad is not None else 0
        yield finding(
            "mojibake",
            record.file,
            record.line_at(start),
            f"mojibake: {text[start : start + 12].split(' ')[0]!r} looks like a wrong decoding "
            "that ftfy cannot repair",
            config,
        )
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
    # Printable: no Cc, Cf, Zl, Zp (nor Zs other than space), nothing to see.
    if normalize.is_printable(record.text):
        return
    seen: dict[int, list[str]] = {}
    for i, ch in enumerate(record.text):
        if _is_control(ch):
            names = seen.setdefault(record.line_at(i), [])
            label = f"U+{ord(ch):04X} {unicodedata.name(ch, 'control')}"
            if label not in names:
                names.append(label)
    # What becomes of the character: an error refuses the build, a warning lets it remove it.
    fix = (
        "the build removes it from the text"
        if severity_of("control-char", config) != Severity.ERROR
        else 'as a warning ([tool.curate.severity] control-char = "warning") the build removes '
        "it from the text"
    )
    for line, names in sorted(seen.items()):
        yield finding(
            "control-char", record.file, line, f"invisible character {', '.join(names)}; {fix}",
            config,
        )  # fmt: skip


# A record is a placeholder, not an abstract, when it is short and *starts* with one of these
# phrases: anchoring at the start and capping the length keeps real abstracts that merely say
# "not available", "forthcoming" or "withdrawn" somewhere (29 in the dev corpus) out of it.
_PLACEHOLDER_MAX_WORDS = 60
_PLACEHOLDER = re.compile(
    r"""^[\W_]*(?:
      (?:this|the)\s+(?:paper|article|manuscript|submission|preprint|work|abstract|version|report)
        \b[^.]{0,60}?\b(?:has|have|had|was|is|is\s+being)\s+(?:been\s+)?
        (?:withdrawn|retracted|removed|superseded)
    | (?:paper|article|manuscript|submission|preprint|abstract)\s+(?:withdrawn|retracted|removed)
    | (?:withdrawn|retracted)(?:[\W_]*$|\s*[.:;,(\[–—-]
        |\s+(?:due|by|because|at|as|since|for|after|from|on|upon|pending)\b
        |\s+(?:paper|article|manuscript|submission|preprint|abstract)\b)
    | (?:the\s+)?authors?\s+(?:has|have|had)\s+(?:withdrawn|retracted)
    | (?:abstract|summary)\s*(?:is\s+|was\s+)?[:.\-–—]?\s*
        (?:not\s+(?:yet\s+)?(?:available|provided|given|applicable)|unavailable|missing|
           forthcoming|pending|to\s+follow|to\s+come|coming\s+soon|withheld|n/?a\b|tb[ad]\b)
    | no\s+abstract(?:\s*(?:[.!:;,)\]*_-]|$)
        |\s+(?:is\s+|was\s+)?(?:yet\s+)?(?:available|provided|given|submitted|supplied))
    | comments?\s*:
    | arxiv\s+admin\s+note\s*:[^.]{0,80}?\b(?:withdrawn|removed|retracted)
    | (?:we|i|the\s+authors?)\s+(?:have\s+|has\s+)?(?:decided\s+to\s+)?
        (?:withdraw|withdrew|withdrawn|retract|retracted)\s+(?:this|the|our)\s+
        (?:paper|article|manuscript|submission|preprint|work)\b
    | (?:an?\s+|the\s+)?(?:abstract|summary)\b[^.]{0,40}?\b(?:is|was)\s+(?:currently\s+)?
        (?:not\s+(?:yet\s+)?(?:available|provided)|unavailable|missing)
    | (?:not\s+(?:yet\s+)?available|unavailable|not\s+applicable|not\s+provided)[\W_]*$
    | lorem\s+ipsum\b
    | (?:tb[ad]|n/?a|none|null|nil|todo|to\s+be\s+(?:announced|determined|added|provided|written)|
         coming\s+soon|abstract|summary|placeholder|test|x{3,}|\?+)[\W_]*$
    )""",
    re.I | re.X,
)


def placeholder_text(text: str) -> str | None:
    """The text without markup if ``text`` is a placeholder (a withdrawal notice, "No abstract"…).

    Such a record passes every other check and would be published as a training row.
    """
    if _word_count(text) > _PLACEHOLDER_MAX_WORDS:
        return None
    plain = normalize.plain_text(text)
    return plain if _PLACEHOLDER.match(plain) else None


# Citation and reference keys are not words of the abstract: the cleaner drops them with the
# command, so a record holding only `\cite{smith20}` cleans to nothing too.
_KEY_COMMANDS = re.compile(r"\\(?:[a-z]*cite[a-z]*|[a-z]*ref|label)\*?(?:\[[^\]]*\])*\{[^{}]*\}")
_WORD_CHAR = re.compile(r"[^\W_]")
_LETTER_PAIR = re.compile(r"(?:^|\s)[^\W\d_]+\s+[^\W\d_]+(?=\s|$)")


def has_words(text: str) -> bool:
    """Whether ``text`` keeps a letter or digit once markup (tags, entities, TeX) is removed.

    A record without one (`<br>`, `&nbsp;`, `\\emph{}`) cleans to an empty abstract, which the
    table cannot hold: it must stop validation, not crash the build.
    """
    # Two neighbouring tokens made only of letters are words whatever the markup around them
    # (a tag, an entity, a command or a formula always brings a `<`, `&`, `\\` or `$` into its
    # token), except inside an HTML comment or a citation: the fast answer for most records.
    # (Each four-character search behind a memchr for its first character: a comment starts
    # with `<`, a citation command with a backslash.)
    comment = "<" in text and "<!--" in text
    citation = "\\" in text and "cite" in text
    if not comment and not citation and _LETTER_PAIR.search(text):
        return True
    if not any(residue.may_have(kind, text) for kind in residue.KINDS):
        return _WORD_CHAR.search(text) is not None
    return _WORD_CHAR.search(normalize.plain_text(_KEY_COMMANDS.sub(" ", text))) is not None


@register("empty-record", "error", "record", "no words once markup is removed",
          row_policy="drop")  # fmt: skip
def check_empty_record(record: Record, config: Config) -> Iterator[Finding]:
    if not has_words(record.text):
        yield finding(
            "empty-record",
            record.file,
            record.line,
            f"no words once markup is removed: {record.text[:60]!r}; the build cannot "
            "make a row of it (remove it or write its abstract)",
            config,
        )


@register("placeholder", "warning", "record",
          "a placeholder instead of an abstract (withdrawn, not available, TBD)", version=2,
          row_policy="drop")  # fmt: skip
def check_placeholder(record: Record, config: Config) -> Iterator[Finding]:
    plain = placeholder_text(record.text)
    if plain is not None:
        yield finding(
            "placeholder",
            record.file,
            record.line,
            f"a placeholder, not an abstract: {_excerpt(plain)!r}",
            config,
        )


@register("too-short", "warning", "record", "fewer words than the minimum", version=3,
          row_policy="drop", measure="words", threshold="min_words")  # fmt: skip
def check_too_short(record: Record, config: Config, n: int) -> Iterator[Finding]:
    if n >= config.min_words:
        return
    # One fault, one finding: an empty record or a placeholder has its own, more precise code.
    if not has_words(record.text) or placeholder_text(record.text) is not None:
        return
    yield finding(
        "too-short",
        record.file,
        record.line,
        f"{n} words, fewer than {config.min_words}: {_excerpt(record.text)!r}",
        config,
    )


# Two abstracts merged by a missing blank line show where they meet: a line that ends a sentence
# and is not a wrap (a whole paragraph on one line, or the next word would have fitted on it),
# followed by a capital. A real abstract can have such a paragraph break too; what tells a merge
# apart is that it is the record's only hard break and that both sides are abstract-sized and
# share little vocabulary. On the dev corpus, of its real abstracts split at a paragraph break,
# 3.5 % (12 of 344) pass the size and vocabulary tests, and 92 % of pairs of consecutive
# abstracts do; on the labelled sample (tests/data) 35 of 40 merges are caught and 1 of 50 real
# abstracts written with their line breaks is taken for one.
_MERGE_PART_MIN_WORDS = 100
_MERGE_MAX_SHARED = 0.25
_WRAP_MAX = 200  # no one hard-wraps text wider than this: a longer line is a whole paragraph
_CONTENT_WORD = re.compile(r"[^\W\d_]{4,}")
_COMMON_WORDS = frozenset(
    "this that with from which these their have been were such also than into more other "
    "between both each only over under using used based show shows results paper propose "
    "proposed method methods approach model models data work study learning while when where "
    "however those what about across well first second through many most some several three "
    "high large small they them then thus there here further given being does".split()
)


def _shared_vocabulary(left: str, right: str) -> float:
    a = {w for w in _CONTENT_WORD.findall(left.lower()) if w not in _COMMON_WORDS}
    b = {w for w in _CONTENT_WORD.findall(right.lower()) if w not in _COMMON_WORDS}
    return len(a & b) / max(1, min(len(a), len(b)))


def merge_point(record: Record) -> int | None:
    """Offset in ``record.text`` where a second abstract seems to start, or None."""
    if not record.line_starts:
        return None
    text = record.text
    starts = (0, *record.line_starts, len(text) + 1)
    lines = [text[starts[i] : starts[i + 1] - 1] for i in range(len(starts) - 1)]
    width = max(len(line) for line in lines[:-1])
    hard = [
        i
        for i in range(len(lines) - 1)
        if len(lines[i]) > _WRAP_MAX
        # A line of only a no-break space or the like is no blank line to the parser: it has
        # no first word, and cannot have been pushed down by a wrap.
        or len(lines[i]) + 1 + len((lines[i + 1].split(None, 1) or [""])[0]) <= width
    ]
    # A record with several hard breaks is laid out a paragraph (or a sentence) a line: its
    # breaks say nothing about a merge. A merge of two abstracts shows exactly one.
    if len(hard) != 1:
        return None
    (i,) = hard
    before, after = lines[i].rstrip(), lines[i + 1]
    if not after[:1].isupper() or not before.rstrip(_CLOSERS).endswith(_TERMINAL):
        return None
    left, right = text[: starts[i + 1]], text[starts[i + 1] :]
    if (
        len(normalize.words(left)) >= _MERGE_PART_MIN_WORDS
        and len(normalize.words(right)) >= _MERGE_PART_MIN_WORDS
        and _shared_vocabulary(left, right) < _MERGE_MAX_SHARED
    ):
        return starts[i + 1]
    return None


@register("too-long", "warning", "record",
          "more words than the maximum, or two abstracts merged", version=3,
          row_policy="flag", measure="words", threshold="max_words")  # fmt: skip
def check_too_long(record: Record, config: Config, n: int) -> Iterator[Finding]:
    at = merge_point(record)
    if at is not None:
        yield finding(
            "too-long",
            record.file,
            record.line,
            f"two abstracts without a blank line between them? A second one seems to start on "
            f"line {record.line_at(at)}: {_excerpt(record.text[at:], 40)!r} ({n} words in all)",
            config,
        )
    elif n > config.max_words:
        yield finding(
            "too-long",
            record.file,
            record.line,
            f"{n} words, more than {config.max_words}: perhaps two abstracts without a blank "
            "line between them",
            config,
        )


# --- truncated ---
# A missing final full stop is common in real abstracts (about 0.8 % of the dev corpus) and is
# not a cut. A record is called truncated only on positive evidence that the text goes on:
# it ends with a word that cannot end an English sentence, with dangling punctuation, with an
# abbreviation that announces more, with a one-letter fragment, or inside a bracket or math.
_CLOSERS = "\"'”’»)]}*_`"
_TERMINAL = (".", "!", "?", "…", "。", "！", "？")
# Matched against the last token only: a URL, or a bare domain such as `hy-motion.github.io//`.
_URL_END = re.compile(
    r"\S*?(?:https?://|www\.)\S+$|[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?:[/:#?]\S*)?$"
)
_TRAILING_MARKUP = re.compile(r"(?:&(?:#\d+|#[xX][0-9A-Fa-f]+|[A-Za-z]+);|''|[\s\"'”’»)\]}*_`])+$")
_FUNCTION_WORDS = frozenset(
    # articles, possessives, prepositions, conjunctions, relatives, auxiliaries, `to`
    "a an the our their its his her my your whose "
    "of for to in on at by with from into onto via per than as like between among within "
    "without toward towards across against during despite including "
    "and or nor but yet because although though whereas while if whether unless "
    "that which who whom where when "
    "is are was were be been being has have had can could may might must shall should will "
    "would does did very".split()
)
_ANNOUNCING = re.compile(r"(?:\be\.g|\bi\.e|\bcf|\bvs|\bviz)\.$", re.I)
_DANGLING = (",", ";", ":", "-", "–", "—", "/", "&", "+", "=", "(", "[", "{", "\\")
_WORD = re.compile(r"[^\W\d_]+")
_SENTENCE_END = re.compile(r"[.!?]\s+")
_MATH_SPAN = re.compile(r"(?<!\\)\$\$.*?(?<!\\)\$\$|(?<!\\)\$.*?(?<!\\)\$", re.S)
_OPEN = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def _opens_more_than_closes(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch in _OPEN:
            depth = max(0, depth + _OPEN[ch])
    return depth > 0


def truncation(text: str) -> str | None:
    """Why ``text`` looks cut off, or None. Reads only the end of the text (and its brackets
    when it lacks a full stop), so it stays cheap on every record."""
    text = text.rstrip()
    if text.endswith(_TERMINAL) and not _ANNOUNCING.search(text[-5:]):
        return None  # the common case, answered from the last characters
    if not text or _URL_END.match(text.rsplit(None, 1)[-1]):
        return None
    core = _TRAILING_MARKUP.sub("", text[-80:])
    if not core.strip():
        return None
    if _ANNOUNCING.search(core):
        return f"ends with {core.rsplit(None, 1)[-1]!r}, which announces more"
    if core.endswith(_TERMINAL) or _URL_END.match(core.rsplit(None, 1)[-1]):
        return None
    if core.endswith(_DANGLING) and not core.endswith("\\\\"):
        return f"ends with {core[-1]!r}"
    word = core.rsplit(None, 1)[-1]
    if _WORD.fullmatch(word):
        if word.lower() in _FUNCTION_WORDS:
            return f"ends with {word!r}, a word that cannot end a sentence"
        if len(word) == 1 and word.islower():
            return f"ends with the fragment {word!r}"
    # Brackets and `$` are counted in the last, unfinished sentence only: an author's stray
    # bracket or a formula split around one earlier on says nothing about the end.
    last_sentence = _SENTENCE_END.split(text)[-1]
    # A sentence of one to three words that has only begun (`… is limited. Empirical`); a
    # bracketed remark such as `(abridged)` is not one.
    opening = last_sentence.split()
    if len(opening) <= 3 and last_sentence[:1].isalpha() and len(opening) < len(text.split()):
        return f"ends with a sentence only begun: {last_sentence!r}"
    outside_math = _MATH_SPAN.sub(" ", last_sentence).replace("\\$", "")
    if "$" in outside_math:
        return "ends inside a `$…$` formula"
    if _opens_more_than_closes(outside_math):
        return "ends inside an open bracket"
    return None


@register("truncated", "warning", "record", "the text stops mid-sentence", version=2,
          row_policy="flag")  # fmt: skip
def check_truncated(record: Record, config: Config) -> Iterator[Finding]:
    why = truncation(record.text)
    if why is None or not has_words(record.text):  # an empty record has its own code
        return
    text = record.text.rstrip()
    yield finding(
        "truncated",
        record.file,
        record.line_at(len(text) - 1),
        f"ends mid-sentence ({why}): …{text[-40:]!r}",
        config,
    )


# --- corpus checks --------------------------------------------------------------------------------
def _majority(values: list, key: Callable[[Any], Any], what: str, files: int) -> tuple[set, str]:
    """The one value most files name, as the first file names it, when more files name it
    than any other; a tie is no majority, and then any value is accepted (empty set)."""
    counts = Counter(key(v) for v in values)
    ranked = counts.most_common(2)
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return set(), ""
    top = ranked[0][0]
    shown = next(v for v in values if key(v) == top)
    return {top}, f"the {what} of {counts[top]} of {files} files ({shown!r})"


@register("header-mismatch", "error", "corpus",
          "the header's venue or year disagrees with the drop", version=2)  # fmt: skip
def check_header_mismatch(corpus: Corpus, config: Config) -> Iterator[Finding]:
    """Venue and year each checked against, in turn: the configured list (``venues``,
    ``years``; an empty list accepts any), the configured single value (``venue``, ``year``),
    or else the majority of the drop's files (a tie is none, and accepts every value)."""
    headed = [(f.path, f.header) for f in corpus.files if f.header is not None]
    if not headed:
        return
    hint = "; set venues = [...] and years = [...] to accept several"
    if config.venues is not None:
        allowed_venues = {v.casefold() for v in config.venues}
        venue_why = "the configured venues (" + ", ".join(config.venues) + ")"
    elif config.venue is not None:
        allowed_venues = {config.venue.casefold()}
        venue_why = f"the configured venue ({config.venue!r})"
    else:
        allowed_venues, venue_why = _majority(
            [h.venue for _, h in headed], str.casefold, "venue", len(headed)
        )
    if config.years is not None:
        allowed_years = set(config.years)
        year_why = "the configured years (" + ", ".join(map(str, config.years)) + ")"
    elif config.year is not None:
        allowed_years, year_why = {config.year}, f"the configured year ({config.year})"
    else:
        allowed_years, year_why = _majority(
            [h.year for _, h in headed], lambda y: y, "year", len(headed)
        )
    for path, h in headed:
        problems = []
        if allowed_venues and h.venue.casefold() not in allowed_venues:
            problems.append(f"venue {h.venue!r} differs from {venue_why}")
        if allowed_years and h.year not in allowed_years:
            problems.append(f"year {h.year} differs from {year_why}")
        if problems:
            extra = hint if config.venues is None and config.years is None else ""
            yield finding(
                "header-mismatch",
                path,
                1,
                f"header {h.text!r}: " + "; ".join(problems) + extra,
                config,
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
                record=corpus.where(g),
                related_record=corpus.where(first[rid]),
            )
        else:
            first[rid] = g


@register(
    "near-duplicate",
    "warning",
    "corpus",
    "word-shingle Jaccard similarity to an earlier record at or above the threshold",
    score="similarity",
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
            record=corpus.where(later),
            related_record=corpus.where(earlier),
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
