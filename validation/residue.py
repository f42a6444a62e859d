"""What counts as LaTeX, Markdown and HTML residue in plain text.

This is the one definition of residue: the ``latex``/``markdown``/``html`` checks report these
matches, the cleaner rewrites exactly these spans, and the cleaner's invariant is that these
patterns find nothing in its output.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.entities import html5

# --- Math ---------------------------------------------------------------------------------------
# Math first (it may contain commands), then \( \) and \[ \], then commands and escapes.
# An inline `$` pairs with the next `$`. The span is math when the closing `$` has no blank
# before it (half of Pandoc's rule; the other half, no blank after the opening `$`, breaks a
# seed), or, with blanks inside the dollars (`$ x $`, `$M < $`, `$ \delta $`), when what is
# between them is a single letter or holds TeX syntax (`\ ^ _ { } = < >`). So prices stay
# text: `costs $5 and $10` has a blank before its second `$` and no TeX between. Formulas
# may touch (`$z$$>$5`, `$L_X$$-$SFR`): `$$` opens display math only where it also closes it.
# Every inline alternative stays inside `[^$]`, so an opening `$` scans at most to the next
# `$` and a run of dollars (`"$ " * 24000`) stays linear.
_MATH_SYNTAX = r"[\\^_{}=<>]"
# The body of an inline formula: up to the first `$` not escaped (an unrolled loop, possessive:
# it cannot cross an unescaped `$`, so nothing to try again). An escaped `\$` is part of it
# (`$\$250,000$`).
_BODY = r"[^$\\]*+(?:\\.[^$\\]*+)*+"
_LATEX_MATH = (
    r"(?<!\\)\$\$.+?(?<!\\)\$\$"
    r"|(?<!\\)\$(?!\s*\$)"
    rf"(?:{_BODY}(?<![\\\s])|\s*[A-Za-z]\s*|(?=[^$]*?{_MATH_SYNTAX}){_BODY}(?<!\\))"
    r"\$"
)
# The body of \( \) and \[ \] never holds another opener, so an unclosed `\(` scans only to the
# next one and a run of them stays linear.
_LATEX_DELIMITED = r"\\\((?:[^\\]|\\[^()])+?\\\)|\\\[(?:[^\\]|\\[^\[\]])+?\\\]"
# The math spans alone: what the cleaner hands to the math converter and what the Markdown and
# HTML checks look past (`$C^*$`, `$\partial<Q>$` are formula syntax, not emphasis or tags).
MATH = re.compile(rf"(?=[$\\])(?:{_LATEX_MATH}|{_LATEX_DELIMITED})", re.S)
# A command: \name, its optional [..] and {..} arguments (three levels of nesting are enough
# for abstracts; the possessive runs keep an unclosed `{` from backtracking); environments
# (\begin{x}...\end{x}) are commands too.
_BRACED = r"\{(?:[^{}]++|\{(?:[^{}]++|\{[^{}]*+\})*+\})*+\}"
_LATEX_COMMAND = rf"\\[A-Za-z]+\*?(?:\[[^\]]*\])?(?:{_BRACED})*"
# Escapes, spacing commands (`\ `, `\,`, `\@`), `\\` and accents, bare or braced: \'e, \"{o},
# \'{\i}.
_LATEX_ESCAPE = r"\\\\|\\[%&_#${},;!:@/ -]|\\['\"^`~=.](?:\{\\?[A-Za-z]?\}|\\?[A-Za-z])"
# Text-mode typography that TeX rewrites: ``quotes'' (and ''quotes'', but not the arcseconds
# of `5^''`) and `single' quotes, ties (`Fig.~3`;
# `z~2` after a one-letter name before a digit means "about" and is prose), and -- / ---
# (not a `--flag`, not `<!--`/`-->`, not a rule of four or more dashes).
TEX_QUOTE = r"``|(?<![\^'])''(?!')|`(?=[^`'\s])[^`'\"]*(?:'(?![A-Za-z])|\")"
TIE = r"(?<=\S)~(?!(?<=(?<![A-Za-z])[A-Za-z]~)\d)(?=\S)"
DASH = r"(?<![-!<])(?:---|--(?![A-Za-z])|(?<=\S)--)(?![->])"
# A one-word brace group in running text is TeX grouping (BibTeX's case braces, `{faster}` left
# by a stripped `\emph`); `x^{2}`, `a_{ij}` and set braces `{0, 1}` are not this.
TEX_GROUP = r"(?<![\w^_\\])\{[A-Za-z][a-z]+\}"
# Sub- and superscripts typed in prose without dollars (`4x10^{-4}`, `km s^{-1}`, `HC_{3}N`,
# `0.277^{+0.017}_{-0.015}`) are math all the same: one or two braced scripts right after a
# word, `)` or `]`, each at most 40 characters, so a failed opener costs a bounded scan.
SCRIPT = r"(?<=[\w)\]])(?:[\^_]\{[^{}$\\\n]{1,40}\}){1,2}"
SCRIPTS = re.compile(SCRIPT)
# Every alternative starts with one of a few characters; saying so up front lets the regex
# engine skip every other position at once (about twice as fast on real abstracts).
LATEX = re.compile(
    r"(?=[$\\`'~{^_-])(?:"
    + "|".join(
        (
            _LATEX_MATH,
            _LATEX_DELIMITED,
            _LATEX_COMMAND,
            _LATEX_ESCAPE,
            TEX_QUOTE,
            TIE,
            DASH,
            TEX_GROUP,
            SCRIPT,
        )
    )
    + ")",
    re.S,
)

# --- Markdown ---------------------------------------------------------------------------------
# Emphasis only opens after a start, space or punctuation other than a word character, so that
# `a*b`, `2*3*4` and `x^*` stay arithmetic; the content must not start or end with a space and
# holds no marker of its own kind, so that every opener scans at most to the next marker and
# the pattern stays linear on `" *a" * 24000`. `**` may also open inside a word (`Pr**o**tein`,
# `Fin**e**-tuning`, and `***O**pen-world …*` inside out) around a run without spaces;
# `x**2 + y**2` is not that.
_MD_STAR = (
    r"(?<![\w*\\^])(?P<star>\*{1,3})(?=[^\s*])"
    r"(?P<star_body>[^*]+)(?<=[^\s*\\])(?P=star)(?!\*)"
)
_MD_INWORD = r"(?<=[\w*])\*\*(?P<inword_body>[^\s*]+)(?<!\\)\*\*(?!\*)"
_MD_UNDER = (
    r"(?<![\w_\\/])(?P<under>_{1,3})(?=[^\s_])"
    r"(?P<under_body>[^_]+)(?<=[^\s_\\])(?P=under)(?![\w_])"
)
# Code spans hold no quote: ``edge of stability'', ``dark" and `x' are TeX quotes, not code.
_MD_CODE = r"(?<![`\\])(?P<tick>`+)(?P<code_body>[^`'\"]+)(?P=tick)(?!`)"
# A link's target must look like one (a scheme, www., a path, an anchor or a dotted host), so
# that `[CI](1-0)` in an astronomy abstract is not a link.
_MD_LINK_URL = r"(?:[A-Za-z][\w+.-]*:|www\.|[/#.]|[\w-]+\.[\w-]+)[^()\s]*(?:\([^()\s]*\)[^()\s]*)*"
_MD_LINK = rf"!?\[(?P<link_text>[^\[\]]+)\]\((?P<link_url>{_MD_LINK_URL})\)"
# Backslash escapes that only Markdown uses (\_ and \# are TeX's too, \[ opens display math,
# \`{e} is a grave accent).
_MD_ESCAPE = r"\\(?P<escaped>\*|`(?![{A-Za-z]))"
MARKDOWN = re.compile(
    r"(?=[!\[*_`\\])(?:"
    + "|".join((_MD_LINK, _MD_STAR, _MD_INWORD, _MD_UNDER, _MD_CODE, _MD_ESCAPE))
    + ")",
    re.S,
)

# The parts the cleaner applies one at a time (links first, then code, then emphasis).
MD_LINK = re.compile(_MD_LINK)
MD_CODE = re.compile(_MD_CODE)
MD_EMPHASIS = re.compile("|".join((_MD_STAR, _MD_INWORD, _MD_UNDER)), re.S)

# --- HTML -------------------------------------------------------------------------------------
# Only real element names count as tags, so that `a<b and c>d` in a formula is left alone.
_HTML_NAMES = (
    "a|abbr|b|big|blockquote|br|caption|center|cite|code|dd|del|div|dl|dt|em|font|h[1-6]|hr|i|"
    "img|ins|kbd|li|mark|math|mi|mn|mo|mrow|msub|msup|ol|p|pre|q|s|samp|small|span|strike|strong|"
    "sub|sup|table|tbody|td|th|thead|tr|tt|u|ul|var|wbr"
)
_HTML_TAG = (
    rf"</?(?:{_HTML_NAMES})(?![\w-])"
    r"(?:\s+[A-Za-z_:][-\w:.]*\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))*\s*/?>"
)
_HTML_COMMENT = r"<!--.*?-->"
_HTML_ENTITY = r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
HTML = re.compile("|".join((_HTML_COMMENT, _HTML_TAG, _HTML_ENTITY)), re.S | re.I)

# A URL is text, not markup: a `~`, `--`, `_x_` or `*` inside one is left alone.
_URL_CHAR = r"[^\s<>\"'`{}|\\^]"
_URL_END = r"[^\s<>\"'`{}|\\^.,;:!?*_)\]]"  # a sentence's full stop or `*` is not the URL's
URL = re.compile(
    rf"(?=[hfw])(?:(?:https?|ftp)://{_URL_CHAR}*{_URL_END}|www\.[\w-]+\.{_URL_CHAR}*{_URL_END})"
)


@dataclass(frozen=True, slots=True)
class Residue:
    kind: str
    start: int
    end: int
    text: str


def _is_entity(token: str) -> bool:
    if token.startswith("&#"):
        return True
    return token[1:] in html5


# Every residue of a kind contains one of a few characters; a text without any of them is clean
# of that kind, and the (much slower) pattern need not run. Most abstracts take this path. The
# tests are substring searches, several times faster than a regex scan (``in`` is a memchr over
# the string); ``tests/validation/test_hotpath.py`` holds them to the character classes they
# stand for. A two-character ``in`` is no memchr but a slower scan (about 2 µs an abstract):
# ``--`` is looked for by the regex engine's literal search, in half the time, and ``''`` only
# in the fifth of abstracts with an apostrophe at all. A record meets this test five times.
_DASHES = re.compile("--")
_QUOTES = re.compile("''")
_TRIGGER_TESTS = {
    "latex": lambda text: (
        "$" in text
        or "\\" in text
        or "~" in text
        or "`" in text
        or "{" in text
        or _DASHES.search(text) is not None
        or ("'" in text and _QUOTES.search(text) is not None)
    ),
    "markdown": lambda text: "*" in text or "_" in text or "`" in text or "[" in text,
    "html": lambda text: "<" in text or "&" in text,
}


def may_have(kind: str, text: str) -> bool:
    return _TRIGGER_TESTS[kind](text)


# Mojibake always leaves a character outside ASCII and the common typographic punctuation
# (UTF-8 lead bytes decode to Ã, â, Â, Ä, ...): text without one needs no ftfy pass. Not
# residue, but the same kind of cheap gate, shared by the mojibake check and the cleaner.
_MOJIBAKE_SUSPECT = re.compile(r"[^\x00-\x7f\u2018\u2019\u201c\u201d\u2013\u2014\u2026]")


def may_be_mojibake(text: str) -> bool:
    return not text.isascii() and _MOJIBAKE_SUSPECT.search(text) is not None


# ftfy's test for mojibake (``ftfy.badness.is_bad``: a search for its ``BADNESS_RE``) is slow,
# about 1 ms on an abstract with an accent or an arrow. Every alternative of that pattern holds
# two characters outside ASCII side by side, or a C1 control, Œ, œ, Ã or Â
# (tests/validation/test_hotpath.py checks this on the pattern itself), so a text with none of
# these is not bad.
_MAYBE_BAD = re.compile("[\x80-\x9f\u0152\u0153\u00c3\u00c2]|[^\x00-\x7f]{2}")


def may_look_bad(text: str) -> bool:
    """False only when ``ftfy.badness.is_bad(text)`` is False (a necessary condition, cheap)."""
    return not text.isascii() and _MAYBE_BAD.search(text) is not None


def _without(
    matches: Iterable[re.Match[str]], spans: list[tuple[int, int]], *, inside_only: bool
) -> Iterator[re.Match[str]]:
    """The matches that do not overlap (or, with ``inside_only``, lie within) any of ``spans``.

    ``spans`` come from one ``finditer``, so they are sorted and disjoint; one forward walk.
    """
    i = 0
    for m in matches:
        start, end = m.span()
        while i < len(spans) and spans[i][1] <= start:
            i += 1
        if i < len(spans):
            lo, hi = spans[i]
            if (lo <= start and end <= hi) if inside_only else lo < end:
                continue
        yield m


def _matches(kind: str, text: str) -> Iterator[re.Match[str]]:
    """The residue matches of ``kind``, lazily: math and URL spans are only computed if needed."""
    if not may_have(kind, text):
        return
    pattern = _PATTERNS.get(kind)
    if pattern is None:
        raise ValueError(f"unknown residue kind {kind!r}")
    found: Iterator[re.Match[str]] = pattern.finditer(text)
    first = next(found, None)
    if first is None:
        return
    found = itertools.chain((first,), found)
    if kind != "latex" and may_have("latex", text):
        found = _without(found, [m.span() for m in MATH.finditer(text)], inside_only=False)
    if kind != "html" and ("://" in text or "www." in text):
        found = _without(found, [m.span() for m in URL.finditer(text)], inside_only=True)
    for m in found:
        if kind != "html" or m.group()[0] != "&" or _is_entity(m.group()):
            yield m


def find(kind: str, text: str) -> list[Residue]:
    """Every residue span of ``kind`` ('latex', 'markdown' or 'html') in ``text``.

    Markdown and HTML are never looked for inside a math span (`$C^*$`, `$x_i$ ... $y_i$`,
    `$\\partial<Q>$`), and LaTeX and Markdown not inside a URL, where `~`, `--`, `_` are text.
    """
    return [Residue(kind, m.start(), m.end(), m.group()) for m in _matches(kind, text)]


def has(kind: str, text: str) -> bool:
    """Whether ``find(kind, text)`` would find anything; stops at the first span."""
    return next(_matches(kind, text), None) is not None


_PATTERNS = {"latex": LATEX, "markdown": MARKDOWN, "html": HTML}


KINDS = ("latex", "markdown", "html")


def has_any(text: str) -> bool:
    return any(has(kind, text) for kind in KINDS)
