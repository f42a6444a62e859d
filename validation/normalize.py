"""The comparison form of a text: what "the same abstract" means for duplicates and record ids.

Two records are the same abstract when they say the same words, whatever their whitespace, case,
Unicode form, quote style or markup: `**MFSC**`, `<b>MFSC</b>` and `\\textbf{MFSC}` all compare as
`mfsc`. Markup is removed here with the residue patterns, not with the full cleaner, so the
checks stay independent of the cleaning library and cheap enough to run on every record.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
import unicodedata

from validation import residue, texsymbols

_COMMAND_NAME = re.compile(r"\\[A-Za-z]+\*?|\\.")
# Chinese and Japanese are written without spaces: each ideograph or kana counts as a word, as
# in most word counts of CJK text; every other run of word characters is one word.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_CJK_PUNCT = "\u3000-\u303f\uff00-\uff0f\uff1a-\uff20"  # 。，、「」：？ and the like
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}{_CJK_PUNCT}]+")
_CJK_ANY = re.compile(rf"[{_CJK}{_CJK_PUNCT}]")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_RUN = re.compile(r"\w+")
# For ASCII text ``_WORD`` is ``[A-Za-z0-9_]+``: every other byte becomes a space and the rest is
# split on spaces, the same words several times faster than the regular expression.
_ASCII_WORDS = bytes(
    b if chr(b).isascii() and (chr(b).isalnum() or chr(b) == "_") else 0x20 for b in range(256)
)


# The rendered form of math, for near-duplicates: a symbol macro is its symbol (`$\\alpha$` and
# `α` are one word), and a script mark and its braces go (`x^{2}` and `x²`, NFKC `x2`, too).
_SCRIPT_GROUP = re.compile(r"[\^_]\{([^{}]*)\}|[\^_]")


def _rendered(span: str) -> str:
    if "\\" in span:
        table = texsymbols.symbols()

        def command(m: re.Match[str]) -> str:
            name = m.group()[1:].rstrip("*")
            return table.get(name, " ") if name.isalpha() else " "

        span = _COMMAND_NAME.sub(command, span)
    return _SCRIPT_GROUP.sub(lambda m: m.group(1) or "", span).replace("$", " ")


def _strip_html_and_markdown(text: str) -> str:
    def html_sub(m: re.Match[str]) -> str:
        token = m.group()
        return html.unescape(token) if token.startswith("&") else " "

    if residue.may_have("html", text):
        text = residue.HTML.sub(html_sub, text)

    def md_sub(m: re.Match[str]) -> str:
        if m.group("link_text") is not None:
            return f"{m.group('link_text')} {m.group('link_url')}"
        for body in ("star_body", "inword_body", "under_body", "code_body", "escaped"):
            if m.group(body) is not None:
                return m.group(body)
        return m.group()

    if residue.may_have("markdown", text):
        text = residue.MARKDOWN.sub(md_sub, text)
    return text


def _stripped_latex(span: str) -> str:
    return _COMMAND_NAME.sub(" ", span).replace("$", " ")


def strip_markup(text: str) -> str:
    """``text`` with its markup removed and nothing else changed: the part the comparison form
    (:func:`comparison_bytes`) and the plain text (:func:`plain_text`) share, which a caller
    that needs both for a batch of records makes once and passes to each."""
    return _strip_markup(text)


def _strip_markup(text: str) -> str:
    text = _strip_html_and_markdown(text)
    if not residue.may_have("latex", text):
        return text
    return residue.LATEX.sub(lambda m: _stripped_latex(m.group()), text)


# Rendering changes a LaTeX span only when it holds a command or a script mark.
_RENDERS = re.compile(r"[\\^_]")


def _folded_words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return folded.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    return _unicode_words(folded)


def _unicode_words(folded: str) -> list[str]:
    if _CJK_CHAR.search(folded) is None:  # `_WORD` without a CJK character: `\w+`, faster
        return _RUN.findall(folded)
    return _WORD.findall(folded)


# The printable ASCII characters, space to tilde: ``str.isprintable`` of an ASCII text is whether
# deleting these leaves nothing, which a byte translation finds five times faster than the
# method's per-character lookup of Unicode properties.
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


def is_printable(text: str) -> bool:
    """``text.isprintable()``, for ASCII text (a flag of the string) by one byte deletion.

    Every record is tested several times (the word measure, its plain text, the control-char
    check, the cleaner), and the method's lookup cost about 5 µs a thousand characters.
    """
    if text.isascii():
        return not text.encode("ascii").translate(None, _PRINTABLE_ASCII)
    return text.isprintable()


def is_collapsed(text: str) -> bool:
    """True only if ``" ".join(text.split()) == text``, tested without splitting: printable (so
    a plain space is its only whitespace), no two spaces in a row, none at either end.

    Nearly every abstract is one such line; splitting it into a list of words only to join or
    count them again cost several of a record's microseconds at each of five places.
    """
    return is_printable(text) and "  " not in text and text[:1] != " " and text[-1:] != " "


def word_total(text: str) -> int:
    """``len(words(text))``, without making the list when the words are the spaces' gaps."""
    if is_collapsed(text) and (text.isascii() or _CJK_ANY.search(text) is None):
        return text.count(" ") + 1 if text else 0
    return len(words(text))


# What a CJK character weighs in a length limit (`min_words`, `max_words`): the median abstract
# of 749 real Chinese core-journal abstracts (tests/data/zh_abstracts.SOURCE.md) holds 1.32
# times as many characters as the median English abstract of the dev corpus holds words, 1.37
# times at the 90th percentile, and translators reckon 1.5 to 1.8 Chinese characters to an
# English word; at 1.5 characters a word the two kinds of abstract meet the same limits.
CJK_CHARS_PER_WORD = 1.5


def length_in_words(text: str) -> int:
    """The length of ``text`` in words for its length limits: a CJK character is 1/1.5 word.

    Counting each character as a word (as :func:`word_total` does, and the table's
    ``word_count``) made ordinary Chinese abstracts `too-long` against a limit meant for words.
    """
    if text.isascii() or _CJK_ANY.search(text) is None:
        return word_total(text)
    tokens = _TOKEN.findall(text)
    cjk = sum(1 for t in tokens if len(t) == 1 and _CJK_CHAR.match(t))
    return len(tokens) - cjk + math.ceil(cjk / CJK_CHARS_PER_WORD)


def words(text: str) -> list[str]:
    """The words of ``text`` for counting: whitespace-separated, and each CJK character."""
    # Without a CJK character or CJK punctuation, the words are the runs of non-whitespace,
    # which ``str.split`` finds several times faster (``\s`` and ``str.isspace`` are the same
    # set of characters; tests/validation/test_hotpath.py checks every code point).
    if text.isascii() or _CJK_ANY.search(text) is None:
        return text.split()
    return _TOKEN.findall(text)


def comparison_words(text: str) -> list[str]:
    """The words of ``text`` after removing markup, NFKC folding and case folding."""
    return _folded_words(_strip_markup(text))


def comparison_forms(text: str) -> tuple[list[str], list[str]]:
    """(``comparison_words(text)``, the same words with math read as rendered).

    Rendered, ``$\\alpha$`` is ``α`` and ``x^{2}`` is ``x²``: the form near-duplicates are
    compared in, so that one paper's abstract typed with TeX and with Unicode math compare
    equal. The record id keeps the first form, so that ids do not change from one release to
    the next. Both come from one pass over the markup; the second list is the first one itself
    when rendering changes nothing (most records).
    """
    renders = "\\" in text or "^" in text or "_" in text  # `in`: far cheaper than `_RENDERS`
    if not renders or not residue.may_have("latex", text):
        words = comparison_words(text)
        return words, words
    base = _strip_html_and_markdown(text)
    if not residue.may_have("latex", base):
        words = _folded_words(base)
        return words, words
    spans: list[tuple[int, int, str]] = []  # every span's place and rendered form
    changed = False

    def strip(m: re.Match[str]) -> str:
        nonlocal changed
        span = m.group()
        stripped = _stripped_latex(span)
        shown = _rendered(span) if _RENDERS.search(span) else stripped
        changed = changed or shown != stripped
        spans.append((m.start(), m.end(), shown))
        return stripped

    words = _folded_words(residue.LATEX.sub(strip, base))
    if not changed:
        return words, words
    rendered: list[str] = []
    pos = 0
    for start, end, shown in spans:
        rendered += (base[pos:start], shown)
        pos = end
    rendered.append(base[pos:])
    return words, _folded_words("".join(rendered))


# ``_ASCII_WORDS`` with upper-case letters lowered: for ASCII text NFKC changes nothing and
# ``casefold`` is ``lower``, so one translation folds and separates the words.
_ASCII_FOLDED_WORDS = bytes(c + 32 if 65 <= c <= 90 else c for c in _ASCII_WORDS)


def _folded_bytes(text: str) -> bytes:
    """The words of :func:`_folded_words` as UTF-8, separated by runs of spaces (any number,
    at either end too): the same words without a list of them."""
    if text.isascii():  # a flag of the string: no scan
        return text.encode("ascii").translate(_ASCII_FOLDED_WORDS)
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return folded.encode("ascii").translate(_ASCII_WORDS)
    return " ".join(_unicode_words(folded)).encode("utf-8")


def comparison_bytes(text: str, stripped: str | None = None) -> tuple[bytes, bytes]:
    """:func:`comparison_forms` as UTF-8 bytes in which the words are separated by runs of
    spaces (``b" ".join(words) == b" ".join(form.split())`` for each form), the second the
    first object itself when rendering changes nothing. ``stripped`` is
    ``strip_markup(text)`` if the caller has it.

    A comparison word holds no space and no zero byte, so a batch of these can be joined and
    cut into words by numpy at once (:mod:`validation.sketch`): making each record's list of
    word strings, only to join them again, cost more than half of a record's sketch.
    """
    renders = "\\" in text or "^" in text or "_" in text
    if renders and residue.may_have("latex", text):
        words, rendered = comparison_forms(text)
        key = " ".join(words).encode("utf-8")
        return key, key if rendered is words else " ".join(rendered).encode("utf-8")
    key = _folded_bytes(_strip_markup(text) if stripped is None else stripped)
    return key, key


def record_id(key: str) -> str:
    """A stable id: the first 16 hex digits of the SHA-256 of the comparison key.

    It depends on nothing but the words of the abstract, so it survives a change of file,
    order, drop, whitespace or markup, and the same abstract gets the same id in every release.
    """
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def plain_text(text: str, stripped: str | None = None) -> str:
    """``text`` without markup, case and punctuation kept: what a language detector should see.
    ``stripped`` is ``strip_markup(text)`` if the caller has it."""
    if stripped is None:
        stripped = _strip_markup(text)
    return stripped if is_collapsed(stripped) else " ".join(stripped.split())


def plain_text_and_words(text: str, stripped: str | None = None) -> tuple[str, int]:
    """(``plain_text(text)``, its :func:`word_total`), testing only once whether it is collapsed
    (``plain_text`` makes it so)."""
    plain = plain_text(text, stripped)
    if plain.isascii() or _CJK_ANY.search(plain) is None:
        return plain, plain.count(" ") + 1 if plain else 0
    return plain, len(words(plain))
