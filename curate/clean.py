"""Turn one raw abstract into plain Unicode text fit for ML training.

The source drops mix plain prose with LaTeX, Markdown and HTML residue and, now and then,
mojibake. ``clean_text`` rewrites exactly the spans that :mod:`validation.residue` (the single
definition of residue) flags and leaves every other character alone, so that prose, numbers,
URLs and curly quotes outside markup survive byte for byte (apart from whitespace).

The guarantees, checked by ``tests/test_clean.py`` on every seed record:

* no residue of any kind is left in the output (``residue.find`` finds nothing);
* no token outside a residue span is lost;
* a record without residue comes out unchanged except for whitespace;
* cleaning is idempotent.

The cleaner reaches a fixed point by running its pass until the text stops changing: one
rewrite can expose another (``&lt;b&gt;`` unescapes to a tag, ``\\_x\\_`` to Markdown
emphasis, two ``\\$`` to a ``$...$`` pair), and idempotence then holds by construction.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import ftfy
from pylatexenc import latexwalker
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from pylatexenc.macrospec import MacroSpec

from curate import texmath
from validation import residue

__all__ = ["CleanResult", "clean_text"]


@dataclass(frozen=True, slots=True)
class CleanResult:
    """The cleaned text and what the cleaner had to do to get it.

    ``kinds`` lists the residue kinds that were found and rewritten, in the fixed order
    ``("latex", "markdown", "html")``, so that callers can count records per kind without
    re-running the residue checks on the raw text.
    """

    text: str
    kinds: tuple[str, ...]
    fixed_mojibake: bool
    # Math spans that could not be converted faithfully and are kept as their TeX source.
    math_kept: tuple[str, ...] = ()


# --- Step 1: mojibake -----------------------------------------------------------------------
# Only ftfy's encoding repairs are switched on. Everything that would restyle correct text is
# off: ``uncurl_quotes`` would turn the authors' “ ” ’ into ASCII quotes, ``fix_character_width``
# would fold full-width CJK punctuation (，：) of the Chinese drops into ASCII, and
# ``unescape_html`` would decode entities everywhere instead of only where residue.HTML flags
# them (step 2 does that, and reports the "html" kind). Line breaks, control characters and
# terminal escapes are left to the whitespace step or to the record as it is, and Unicode
# normalisation is our own step 5, so ftfy's is off too. ``fix_latin_ligatures`` is the one
# non-encoding fix kept: ﬁ/ﬂ code points are PDF-extraction artefacts that split words for a
# tokenizer, and keeping NFC (see step 5) means nothing else would undo them.
_FTFY_CONFIG = ftfy.TextFixerConfig(
    unescape_html=False,
    remove_terminal_escapes=False,
    fix_encoding=True,
    restore_byte_a0=True,
    replace_lossy_sequences=True,
    decode_inconsistent_utf8=True,
    fix_c1_controls=True,
    fix_latin_ligatures=True,
    fix_character_width=False,
    uncurl_quotes=False,
    fix_line_breaks=False,
    fix_surrogates=True,
    remove_control_chars=False,
    normalization=None,
    explain=True,
)
# ftfy's explanation steps that mean "the bytes had been decoded wrongly"; a ligature fix is
# not mojibake.
_MOJIBAKE_STEPS = frozenset(
    {"restore_byte_a0", "replace_lossy_sequences", "decode_inconsistent_utf8", "fix_c1_controls"}
)


def _repair_mojibake(text: str) -> tuple[str, bool]:
    """Undo wrong decodings (``donâ€™t`` → ``don’t``) and say whether any was found."""
    fixed = ftfy.fix_and_explain(text, _FTFY_CONFIG)
    mojibake = any(
        action in ("encode", "decode", "transcode") or name in _MOJIBAKE_STEPS
        for action, name in fixed.explanation or ()
    )
    return fixed.text, mojibake


# --- Span rewriting ------------------------------------------------------------------------


def _rewrite(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """Replace non-overlapping ``(start, end, replacement)`` spans, given in text order."""
    out: list[str] = []
    pos = 0
    for start, end, replacement in spans:
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


# --- Step 2: HTML ---------------------------------------------------------------------------
# Tags that break the flow of text become a space so that words on either side do not fuse;
# inline tags (<i>, <b>, <sup>, ...) vanish without a trace.
_BLOCK_TAG = re.compile(
    r"</?(?:blockquote|br|caption|d[dlt]|div|h[1-6r]|li|ol|p|pre|t(?:able|body|head|[dhr])|ul)"
    r"(?![\w-])",
    re.I,
)


def _html_to_text(token: str) -> str:
    if token.startswith("&"):
        return html.unescape(token)
    if token.startswith("<!--"):
        return " "
    return " " if _BLOCK_TAG.match(token) else ""


def _clean_html(text: str) -> tuple[str, bool]:
    spans = residue.find("html", text)
    if not spans:
        return text, False
    return _rewrite(text, ((s.start, s.end, _html_to_text(s.text)) for s in spans)), True


# --- Step 3: Markdown -----------------------------------------------------------------------


def _markdown_to_text(match: re.Match[str], text: str) -> str:
    """Drop the markup, keep every word: a link keeps its text and its URL.

    ``match`` was found in the text with its math masked; the words come from ``text``.
    """

    def group(name: str) -> str:
        return text[match.start(name) : match.end(name)]

    if match.group("link_url") is not None:
        label, url = group("link_text"), group("link_url")
        return url if label.strip() == url else f"{label} ({url})"
    if match.group("star") is not None:
        return group("star_body")
    if match.group("under") is not None:
        return group("under_body")
    return group("code_body")


def _crosses(start: int, end: int, spans: list[residue.Residue]) -> bool:
    """True if [start, end) overlaps one of ``spans`` without containing it whole.

    A Markdown match that cuts into a LaTeX span is formula syntax (``$x^*$ ... $y^*$`` pairs
    two stars across formulas), not emphasis; it is left for the LaTeX step, and the next pass
    looks at it again once the formula is plain text.
    """
    return any(
        start < s.end and s.start < end and not (start <= s.start and s.end <= end) for s in spans
    )


def _clean_markdown(text: str) -> tuple[str, bool]:
    latex_spans = residue.find("latex", text)
    spans = [
        (m.start(), m.end(), _markdown_to_text(m, text))
        for m in residue.MARKDOWN.finditer(residue.mask_math(text))
        if not _crosses(m.start(), m.end(), latex_spans)
    ]
    if not spans:
        return text, False
    return _rewrite(text, spans), True


# --- Step 4: LaTeX --------------------------------------------------------------------------
# pylatexenc 2.11's parser knows \texttt's argument but latex2text has no rule for it, so the
# argument is dropped (``\texttt{DReaMAD}`` → ``""``); the same holds for other text-style
# macros. Each of these keeps its argument. \LaTeX and \TeX would come back empty too.
# \epsilon and \phi map to the *symbol* code points U+03F5 ϵ / U+03D5 ϕ in pylatexenc; authors
# mean the Greek letter, which is what NFKC would give and what a tokenizer has seen, so they
# map to ε / φ (as \varepsilon / \varphi already do). \url and \href keep the URL as plain text,
# the same shape as a Markdown link.
_TEXT_MACROS = [
    "texttt",
    "textsf",
    "textnormal",
    "textup",
    "textmd",
    "textsl",
    "textsuperscript",
    "textsubscript",
    "mbox",
    "hbox",
    "operatorname",
    "boldsymbol",
    "bm",
    "mathnormal",
]
_L2T_CONTEXT = get_default_latex_context_db()
_L2T_CONTEXT.add_context_category(
    "curate-keep-arguments",
    prepend=True,
    macros=[MacroTextSpec(name, simplify_repl="%(1)s") for name in _TEXT_MACROS]
    + [
        MacroTextSpec("LaTeX", simplify_repl="LaTeX"),
        MacroTextSpec("TeX", simplify_repl="TeX"),
        MacroTextSpec("epsilon", simplify_repl="ε"),
        MacroTextSpec("phi", simplify_repl="φ"),
        MacroTextSpec("url", simplify_repl="%(1)s"),
        MacroTextSpec("href", simplify_repl="%(2)s (%(1)s)"),
    ],
)
# The parser must know the arguments of macros it lacks, or \href{u}{t} crashes latex2text.
_WALKER_CONTEXT = latexwalker.get_default_latex_context_db()
_WALKER_CONTEXT.add_context_category(
    "curate-arguments",
    prepend=True,
    macros=[MacroSpec("href", "{{")]
    + [MacroSpec(name, "{") for name in ("operatorname", "boldsymbol", "bm", "mathnormal")],
)
_L2T = LatexNodes2Text(latex_context=_L2T_CONTEXT, math_mode="text")

# A % not escaped by a backslash (an odd number of them) starts a comment for pylatexenc and
# silently eats the rest of the input.
_BARE_PERCENT = re.compile(r"(?<!\\)((?:\\\\)*)%")
# What counts as the "arguments" of a span: the span minus command names. Environment names,
# labels and lengths are syntax, not words.
_STRUCTURAL = re.compile(r"\\(?:begin|end|label|hspace|vspace)\*?\s*\{[^{}]*\}")
_COMMAND_NAME = re.compile(r"\\[A-Za-z]+\*?")
_FALLBACK_TOKEN = re.compile(rf"{_STRUCTURAL.pattern}|\\[A-Za-z]+\*?|\\.|[{{}}$~]", re.S)
_ESCAPED = "%&_#${}"
_MATH_DELIMITERS = re.compile(r"\A(?:\$\$?|\\[(\[])|(?:\$\$?|\\[)\]])\Z")


def _word_chars(text: str) -> Counter[str]:
    """Letters and digits of ``text``, compared loosely.

    NFKD plus dropping combining marks lets ``𝒪`` count as ``O``, ``ℝ`` as ``R`` and ``Õ``
    (from ``\\tilde O``) as ``O``: pylatexenc restyles letters, it must not remove them.
    """
    return Counter(ch.casefold() for ch in unicodedata.normalize("NFKD", text) if ch.isalnum())


def _keeps_words(span: str, converted: str) -> bool:
    arguments = _COMMAND_NAME.sub(" ", _STRUCTURAL.sub(" ", span))
    return not (_word_chars(arguments) - _word_chars(converted))


def _fallback_token(match: re.Match[str]) -> str:
    token = match.group()
    if len(token) == 2 and token[0] == "\\" and token[1] in _ESCAPED:
        return token[1]
    if token[0] == "\\" and token[1:2].isalpha() and "{" not in token:
        return ""  # a command name: its arguments follow and are kept
    if token in "{}$":
        return ""
    return " "  # \begin{..}, \\, \, \( \[, ~ and the like separate words


def _strip_latex(span: str) -> str:
    """The simple conversion: drop command names, braces and ``$``, keep the arguments."""
    return _FALLBACK_TOKEN.sub(_fallback_token, span)


def _latex_to_text(span: str) -> str:
    """Convert one flagged LaTeX span, falling back to ``_strip_latex`` if words would be lost.

    pylatexenc is only ever given a single residue span, never the whole record, so its
    comment handling cannot swallow the prose after a ``%`` in ``50%$\\sim$90%``; inside the
    span a bare ``%`` is escaped as well.
    """
    source = _BARE_PERCENT.sub(r"\1\\%", span)
    try:
        converted = _L2T.latex_to_text(source, latex_context=_WALKER_CONTEXT)
    except Exception:  # pylatexenc raises assorted errors on malformed input; fall back
        converted = None
    if converted is None or not _keeps_words(span, converted):
        return _strip_latex(span)
    # pylatexenc trims the inside of a formula; where the source had a space there, keep one so
    # that ``$5 and $10`` does not fuse into ``5 and10``.
    inner = _MATH_DELIMITERS.sub("", span)
    lead = " " if inner[:1].isspace() and not converted[:1].isspace() else ""
    trail = " " if inner[-1:].isspace() and not converted[-1:].isspace() else ""
    return f"{lead}{converted}{trail}"


def _clean_latex(text: str) -> tuple[str, bool]:
    """Text-mode TeX; math spans are left for :func:`_convert_math`, after the last pass."""
    spans = residue.find("latex", text)
    if not spans:
        return text, False
    rewrites = ((s.start, s.end, s.text if residue.is_math(s.text) else _latex_to_text(s.text))
                for s in spans)  # fmt: skip
    return _rewrite(text, rewrites), True


def _convert_math(text: str, math: str) -> tuple[str, tuple[str, ...]]:
    """Every math span by :func:`curate.texmath.convert`, once: its output is never cleaned
    again, so Markdown can not pair the ``_`` of two converted formulas. Returns the spans
    kept as TeX because they could not be converted faithfully."""
    spans = [s for s in residue.find("latex", text) if residue.is_math(s.text)]
    if not spans:
        return text, ()
    results = [texmath.convert(s.text, math) for s in spans]
    text = _rewrite(text, ((s.start, s.end, r.text) for s, r in zip(spans, results, strict=True)))
    return text, tuple(r.text for r in results if r.kept)


# --- Steps 5 and 6: normalisation and whitespace --------------------------------------------
_WHITESPACE = re.compile(r"\s+")


def _normalise(text: str) -> str:
    """NFC, then single spaces.

    NFC and not NFKC: NFC only composes (``O`` + U+0303 from ``\\tilde O`` becomes ``Õ``), so
    it never changes what a character means. NFKC would turn the math letters that LaTeX
    conversion produces on purpose (``𝒪``, ``ℳ``, ``ℝ``) into plain ``O``/``M``/``R``,
    superscripts ``x²`` into ``x2`` and full-width CJK punctuation into ASCII, losing
    information the model could use. Ligatures, the one NFKC fold we want, are undone by ftfy
    in step 1.
    """
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


# --- The pipeline ---------------------------------------------------------------------------
_STEPS: tuple[tuple[str, Callable[[str], tuple[str, bool]]], ...] = (
    ("html", _clean_html),
    ("markdown", _clean_markdown),
    ("latex", _clean_latex),
)
# Rewrites shorten the text (markup goes, ``&amp;`` becomes ``&``), so two or three passes reach
# the fixed point (a 4,000-input random fuzz of markup fragments never needed more); the bound
# only guards against a pathological input looping forever.
_MAX_PASSES = 10
_KINDS = tuple(kind for kind, _ in _STEPS)


def _one_pass(text: str) -> tuple[str, set[str], bool]:
    text, mojibake = _repair_mojibake(text)
    kinds: set[str] = set()
    for kind, step in _STEPS:
        text, found = step(text)
        if found:
            kinds.add(kind)
    return _normalise(text), kinds, mojibake


# --- Math -----------------------------------------------------------------------------------
# Before the passes, each math span is replaced by one character of the Supplementary Private
# Use Area-A, which no markup pattern, ftfy or pylatexenc touches, so that no text-mode step can
# change a formula, even one inside a command (`\\footnote{... $O(d\\log d)$ ...}`). After the
# passes each character is replaced by its formula converted by curate.texmath, once.
_FORMULA = 0xF0000
_FORMULA_MARK = re.compile("[\U000f0000-\U000ffffd]")


def _protect_math(text: str) -> tuple[str, list[str]]:
    if not residue.may_have("latex", text) or _FORMULA_MARK.search(text):
        return text, []
    formulas: list[str] = []

    def hide(match: re.Match[str]) -> str:
        formulas.append(match.group())
        return chr(_FORMULA + len(formulas) - 1)

    protected = residue.MATH.sub(hide, text)
    return (protected, formulas) if len(formulas) < 0xFFFD else (text, [])


def _restore_math(text: str, formulas: list[str], math: str) -> tuple[str, tuple[str, ...]] | None:
    """The formulas converted in place, or None if a text-mode rewrite lost or copied one."""
    marks = Counter(_FORMULA_MARK.findall(text))
    if len(marks) != len(formulas) or any(n != 1 for n in marks.values()):
        return None
    results = [texmath.convert(f, math) for f in formulas]
    restored = _FORMULA_MARK.sub(lambda m: results[ord(m.group()) - _FORMULA].text, text)
    return restored, tuple(r.text for r in results if r.kept)


def _passes(text: str) -> tuple[str, set[str], bool]:
    kinds: set[str] = set()
    mojibake = False
    for _ in range(_MAX_PASSES):
        cleaned, found, fixed = _one_pass(text)
        kinds |= found
        mojibake |= fixed
        if cleaned == text:
            break
        text = cleaned
    return text, kinds, mojibake


def clean_text(text: str, math: str = "unicode") -> CleanResult:
    """Clean one record: mojibake, HTML, Markdown, LaTeX, NFC, whitespace.

    ``math`` is the math policy (``"unicode"`` or ``"tex"``, see :mod:`curate.texmath`). The
    pass is repeated until the text no longer changes, so the result contains no residue that a
    rewrite exposed and ``clean_text(result.text)`` returns the same text. Math spans are
    hidden from the passes and converted once at the end; those that could not be converted
    faithfully are kept as TeX and listed in ``math_kept``.
    """
    if not residue.may_be_mojibake(text) and not any(residue.may_have(k, text) for k in _KINDS):
        return CleanResult(_normalise(text), (), False)  # most records: nothing to rewrite
    if residue.may_be_mojibake(text):
        text, mojibake = _repair_mojibake(text)  # formulas too, before they are hidden
    else:
        mojibake = False
    protected, formulas = _protect_math(text)
    cleaned, kinds, fixed = _passes(protected)
    restored = _restore_math(cleaned, formulas, math) if formulas else None
    if restored is not None:
        cleaned, kept = restored
        kinds.add("latex")
    else:  # no formula, or a text-mode rewrite dropped one: the passes on the plain record
        if formulas:
            cleaned, kinds, fixed = _passes(text)
        cleaned, kept = _convert_math(cleaned, math)
    return CleanResult(
        text=_normalise(cleaned),
        kinds=tuple(kind for kind in residue.KINDS if kind in kinds),
        fixed_mojibake=mojibake or fixed,
        math_kept=kept,
    )
