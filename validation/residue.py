"""What counts as LaTeX, Markdown and HTML residue in plain text.

This is the one definition of residue: the ``latex``/``markdown``/``html`` checks report these
matches, the cleaner rewrites exactly these spans, and the cleaner's invariant is that these
patterns find nothing in its output.
"""

from __future__ import annotations

import re
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
_MATH_SYNTAX = r"[\\^_{}=<>]"
_LATEX_MATH = (
    r"(?<!\\)\$\$.+?(?<!\\)\$\$"
    r"|(?<!\\)\$(?!\s*\$)"
    rf"(?:[^$]+?(?<![\\\s])|\s*[A-Za-z]\s*|(?=[^$]*?{_MATH_SYNTAX})[^$]+?(?<!\\))"
    r"\$"
)
_LATEX_DELIMITED = r"\\\((?:.+?)\\\)|\\\[(?:.+?)\\\]"
# The spans in which TeX is math: Markdown and HTML are never looked for inside them
# (`$C^*$-algebras`, `$x_i$ ... $y_i$` and `$\partial<Q>$` are formulas, not emphasis or tags).
MATH = re.compile(f"{_LATEX_MATH}|{_LATEX_DELIMITED}", re.S)
# A command: \name, its optional [..] and {..} arguments (one level of nesting is enough for
# abstracts); environments (\begin{x}...\end{x}) are commands too.
_BRACED = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
_LATEX_COMMAND = rf"\\[A-Za-z]+\*?(?:\[[^\]]*\])?(?:{_BRACED})*"
# Escapes, spacing commands, `\\` and accents such as \'e and \"o.
_LATEX_ESCAPE = r"\\\\|\\[%&_#${},;!]|\\['\"^`~=.][A-Za-z]"
LATEX = re.compile("|".join((_LATEX_MATH, _LATEX_DELIMITED, _LATEX_COMMAND, _LATEX_ESCAPE)), re.S)

# --- Markdown ---------------------------------------------------------------------------------
# Emphasis only opens after a start, space or punctuation other than a word character, so that
# `a*b`, `2*3*4` and `x^*` stay arithmetic; the content must not start or end with a space.
_MD_STAR = (
    r"(?<![\w*\\])(?P<star>\*{1,3})(?=[^\s*])"
    r"(?P<star_body>[^*]+?|.+?)(?<=[^\s*\\])(?P=star)(?!\*)"
)
_MD_UNDER = (
    r"(?<![\w_\\/])(?P<under>_{1,3})(?=[^\s_])"
    r"(?P<under_body>.+?)(?<=[^\s_\\])(?P=under)(?![\w_])"
)
_MD_CODE = r"(?<!`)(?P<tick>`+)(?P<code_body>[^`]+?)(?P=tick)(?!`)"
_MD_LINK = r"!?\[(?P<link_text>[^\[\]]+)\]\((?P<link_url>[^()\s]+(?:\([^()\s]*\)[^()\s]*)*)\)"
MARKDOWN = re.compile("|".join((_MD_LINK, _MD_STAR, _MD_UNDER, _MD_CODE)), re.S)

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


# Every residue of a kind contains one of these characters; a text without any of them is
# clean of that kind, and the (much slower) pattern need not run. Most abstracts hit this path.
TRIGGERS = {
    "latex": re.compile(r"[$\\]"),
    "markdown": re.compile(r"[*_`\[]"),
    "html": re.compile(r"[<&]"),
}


def may_have(kind: str, text: str) -> bool:
    return TRIGGERS[kind].search(text) is not None


# Mojibake always leaves a character outside ASCII and the common typographic punctuation
# (UTF-8 lead bytes decode to Ã, â, Â, Ä, ...): text without one needs no ftfy pass. Not
# residue, but the same kind of cheap gate, shared by the mojibake check and the cleaner.
_MOJIBAKE_SUSPECT = re.compile(r"[^\x00-\x7f\u2018\u2019\u201c\u201d\u2013\u2014\u2026]")


def may_be_mojibake(text: str) -> bool:
    return _MOJIBAKE_SUSPECT.search(text) is not None


# What a math span is replaced by before Markdown and HTML are looked for: a private-use
# character, neither a word character nor a blank nor markup, one per character so that
# offsets stay those of the text.
MATH_MASK = "\ue000"


def mask_math(text: str) -> str:
    """``text`` with every math span blanked out by :data:`MATH_MASK`, offsets unchanged."""
    if not may_have("latex", text):
        return text
    return MATH.sub(lambda m: MATH_MASK * len(m.group()), text)


def is_math(span: str) -> bool:
    """True if ``span`` (a LaTeX residue span) is a whole math span."""
    return MATH.fullmatch(span) is not None


def find(kind: str, text: str) -> list[Residue]:
    """Every residue span of ``kind`` ('latex', 'markdown' or 'html') in ``text``.

    Markdown and HTML are looked for outside math spans only.
    """
    if not may_have(kind, text):
        return []
    if kind == "latex":
        return [Residue(kind, m.start(), m.end(), m.group()) for m in LATEX.finditer(text)]
    if kind == "markdown":
        masked = mask_math(text)
        return [Residue(kind, m.start(), m.end(), text[m.start() : m.end()])
                for m in MARKDOWN.finditer(masked)]  # fmt: skip
    if kind == "html":
        masked = mask_math(text)
        return [
            Residue(kind, m.start(), m.end(), text[m.start() : m.end()])
            for m in HTML.finditer(masked)
            if not m.group().startswith("&") or _is_entity(m.group())
        ]
    raise ValueError(f"unknown residue kind {kind!r}")


KINDS = ("latex", "markdown", "html")


def has_any(text: str) -> bool:
    return any(find(kind, text) for kind in KINDS)
