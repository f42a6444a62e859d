"""Turn one raw abstract into plain Unicode text fit for ML training.

The source drops mix plain prose with LaTeX, Markdown and HTML residue and, now and then,
mojibake and control characters. ``clean_text`` converts markup to the text it stands for and
leaves every other character alone, so that prose, numbers, URLs and curly quotes outside
markup survive byte for byte (apart from whitespace).

How a record goes through (one pass, every step linear in the length of the text):

1. mojibake repaired (ftfy, encoding fixes only), whitespace collapsed, control and invisible
   format characters removed, HTML entities decoded;
2. **math spans** (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``, as :data:`validation.residue.MATH`
   finds them) are handed to :func:`_math_to_text` and set aside behind placeholders, so that
   nothing of the text-mode steps ever runs inside a formula;
3. the text around them is cleaned in **text mode**: HTML tags, escapes, links and URLs (set
   aside too, so a ``~`` or ``--`` in a URL is kept), TeX quotes, Markdown code and emphasis,
   citations, accents, font groups and other commands, braces, ties and dashes;
4. the placeholders are restored, then NFC and single spaces.

``tests/transform/test_text_mode.py`` checks the result with patterns of its own and
hand-labelled real abstracts, not with :mod:`validation.residue`.
"""

from __future__ import annotations

import html
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import ftfy
from pylatexenc import latexwalker
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from pylatexenc.macrospec import MacroSpec

from curate.transform import texmacros, texmath
from validation import normalize, residue, texpackages, texsymbols

__all__ = ["CleanResult", "clean_text"]


@dataclass(frozen=True, slots=True)
class CleanResult:
    """The cleaned text and what the cleaner had to do to get it.

    ``kinds`` lists the residue kinds found in the raw record, in the fixed order
    ``("latex", "markdown", "html")``, so that callers can count records per kind without
    re-running the residue checks.
    """

    text: str
    kinds: tuple[str, ...]
    fixed_mojibake: bool
    # The TeX published as it is, each distinct piece once: math spans that could not be
    # converted faithfully, and authors' own commands of the prose.
    math_kept: tuple[str, ...] = ()


# --- Step 1: mojibake -----------------------------------------------------------------------
# Only ftfy's encoding repairs are switched on. Everything that would restyle correct text is
# off: ``uncurl_quotes`` would turn the authors' “ ” ’ into ASCII quotes, ``fix_character_width``
# would fold full-width CJK punctuation (，：) of the Chinese drops into ASCII, and
# ``unescape_html`` would decode entities by its own rules instead of residue.HTML's. Line
# breaks and control characters are our own step, and Unicode normalisation is the last step,
# so ftfy's are off too. ``fix_latin_ligatures`` is the one
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


# Besides the encoding repairs, which only run on what ``ftfy.badness.is_bad`` calls bad, the
# fixes switched on above change only C1 controls (which ``residue.may_look_bad`` also
# catches), ligatures and surrogates: a text with none of them and no look of mojibake comes out
# of ftfy as it went in, and ftfy (about 1 ms an abstract) need not run.
_FTFY_CHANGES = re.compile(
    "[" + "".join(map(chr, sorted(ftfy.chardata.LIGATURES))) + "\ud800-\udfff]"
)


def _ftfy_may_change(text: str) -> bool:
    return residue.may_look_bad(text) or _FTFY_CHANGES.search(text) is not None


def _repair_mojibake(text: str) -> tuple[str, bool]:
    """Undo wrong decodings (``donâ€™t`` → ``don’t``) and say whether any was found."""
    fixed = ftfy.fix_and_explain(text, _FTFY_CONFIG)
    mojibake = any(
        action in ("encode", "decode", "transcode") or name in _MOJIBAKE_STEPS
        for action, name in fixed.explanation or ()
    )
    return fixed.text, mojibake


# --- Math spans (and text-mode commands pylatexenc knows) ----------------------------------
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


class _FailedSubstitutions(logging.Filter):
    """Counts, and keeps off the user's terminal, pylatexenc's "failed its substitution"
    warning. pylatexenc logs it when a macro's arguments do not fit its template (``\\frac{a}``
    with its second argument cut off by the end of the text) and then returns the template
    itself, ``%s/%sa``; a conversion that logged it has failed."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "failed its substitution" in record.getMessage():
            self.count += 1
            return False
        return True


_FAILED = _FailedSubstitutions()
logging.getLogger("pylatexenc.latex2text").addFilter(_FAILED)

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


def _pylatexenc(span: str) -> str | None:
    """pylatexenc's text for ``span``, or None where it fails: an error, or a template it
    could not fill."""
    source = _BARE_PERCENT.sub(r"\1\\%", span)
    failed = _FAILED.count
    try:
        converted = _L2T.latex_to_text(source, latex_context=_WALKER_CONTEXT)
    except Exception:  # pylatexenc raises assorted errors on malformed input; fall back
        return None
    return None if _FAILED.count != failed else converted


def _latex_to_text(span: str, converted: str | None = None) -> str:
    """Convert one flagged LaTeX span, falling back to ``_strip_latex`` if words would be lost;
    ``converted`` is pylatexenc's text for it where the caller has it already.

    pylatexenc is only ever given a single residue span, never the whole record, so its
    comment handling cannot swallow the prose after a ``%`` in ``50%$\\sim$90%``; inside the
    span a bare ``%`` is escaped as well.
    """
    if converted is None:
        converted = _pylatexenc(span)
    if converted is None or not _keeps_words(span, converted):
        return _strip_latex(span)
    # pylatexenc trims the inside of a formula; where the source had a space there, keep one so
    # that ``$5 and $10`` does not fuse into ``5 and10``.
    inner = _MATH_DELIMITERS.sub("", span)
    lead = " " if inner[:1].isspace() and not converted[:1].isspace() else ""
    trail = " " if inner[-1:].isspace() and not converted[-1:].isspace() else ""
    return f"{lead}{converted}{trail}"


def _math_to_text(span: str, math: str) -> texmath.MathResult:
    """The one place a math span is converted: ``span`` includes its delimiters.

    Everything outside math is text mode (below); a formula never sees the Markdown, HTML-tag,
    tie or dash rules, so `$C^*$`, `$x_i$` and `$a<b>c$` reach
    :func:`curate.transform.texmath.convert`
    whole, once, by the ``math`` policy. A span it cannot convert faithfully comes back as its
    TeX with ``kept`` set (``convert`` caches its results).
    """
    return texmath.convert(span, math)


# --- Placeholders -----------------------------------------------------------------------------
# Math, URLs, code and escaped characters are converted once and set aside behind a marker, so
# that no later text-mode step can touch them (`\\*` stays a star and is never read as
# emphasis; `a--b` in a URL stays). A marker is two plane-15 private-use characters around a
# hexadecimal index written with sixteen more of them; a record that already holds one of these
# code points is not markup-cleaned at all (never seen in practice; its text is kept as is).
_MARK = "\U000f0000"
_DIGIT0 = 0xF0010
_RESERVED = re.compile("[\U000f0000-\U000f001f]")
_PLACEHOLDER = re.compile("\U000f0000([\U000f0010-\U000f001f]+)\U000f0000")


class _Saved:
    """The strings set aside behind markers, in the order they were set aside."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.tex: list[str] = []  # TeX published as it is (an unknown command of text mode)

    def keep_tex(self, source: str) -> str:
        self.tex.append(source)
        return self.keep(source)

    def keep(self, replacement: str) -> str:
        index = format(len(self.items), "x")
        self.items.append(replacement)
        return _MARK + "".join(chr(_DIGIT0 + int(d, 16)) for d in index) + _MARK

    def restore(self, text: str) -> str:
        def back(m: re.Match[str]) -> str:
            return self.items[int("".join(format(ord(c) - _DIGIT0, "x") for c in m.group(1)), 16)]

        # A span set aside may hold another one (`R^{n \times p}`: the symbol was set aside
        # before the script around it), so markers are restored until none is left; each pass
        # goes one level deeper, and there are never more levels than items.
        for _ in range(len(self.items)):
            if _MARK not in text:
                break
            text = _PLACEHOLDER.sub(back, text)
        return text


# --- Whole-record steps: controls, entities ---------------------------------------------------
def _collapse_whitespace(text: str) -> str:
    """``re.sub(r"\\s+", " ", text)``: every run of whitespace one space, ends included.

    Done with ``str.split`` (the same whitespace as ``\\s``), several times faster than the
    regex on prose, where every single space is a match.
    """
    if normalize.is_collapsed(text):
        return text
    parts = text.split()
    if not parts:
        return " " if text else ""
    joined = " ".join(parts)
    if text[0].isspace():
        joined = " " + joined
    if text[-1].isspace():
        joined += " "
    return joined


def _drop_controls(text: str) -> str:
    """Remove control and invisible format characters (Cc, Cf): U+0008, U+200B, U+FEFF, ….

    Whitespace controls (newline, tab, CR, U+2028, …) were already turned into spaces; what is
    left has no visible form and would reach the published text unseen, so it goes whatever
    the severity of ``control-char``.
    """
    if normalize.is_printable(text):
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf"))


def _decode_entities(text: str) -> str:
    """Decode every HTML entity once, inside math too: it is transport escaping, not markup.

    Once, not to a fixed point: ``&amp;lt;`` means the text ``&lt;``.
    """
    if "&" not in text:
        return text
    return residue.HTML.sub(
        lambda m: html.unescape(m.group()) if m.group()[0] == "&" else m.group(), text
    )


# --- Text mode: HTML tags -----------------------------------------------------------------------
# Tags that break the flow of text become a space so that words on either side do not fuse;
# inline tags (<i>, <b>, <sup>, ...) vanish without a trace.
_BLOCK_TAG = re.compile(
    r"</?(?:blockquote|br|caption|d[dlt]|div|h[1-6r]|li|ol|p|pre|t(?:able|body|head|[dhr])|ul)"
    r"(?![\w-])",
    re.I,
)


def _tag_to_text(m: re.Match[str]) -> str:
    token = m.group()
    if token[0] == "&":
        return token  # decoded already; a decoded `&lt;x&gt;` is the text <x>, kept
    if token.startswith("<!--"):
        return " "
    return " " if _BLOCK_TAG.match(token) else ""


# --- Text mode: escapes, links, URLs --------------------------------------------------------
# `\\` is a line break; `\*` and `` \` `` are Markdown escapes; the rest are TeX's. Each escaped
# character is set aside so that it stays literal.
_ESCAPE = re.compile(r"\\\\|\\([*_#$%&{}]|`(?![{A-Za-z]))")
_VERB = re.compile(r"\\verb\*?([^A-Za-z\s*])(.+?)\1")
_TEX_URL = re.compile(r"\\url\s*\{([^{}]*)\}|\\href\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def _links(text: str, saved: _Saved) -> str:
    """Markdown links, ``\\url`` and ``\\href`` become ``text (url)``; bare URLs are set aside."""

    def link(label: str, url: str) -> str:
        kept = saved.keep(url)
        return kept if label.strip() == url else f"{label} ({kept})"

    if "\\" in text:
        text = _TEX_URL.sub(
            lambda m: (
                saved.keep(m.group(1)) if m.group(1) is not None else link(m.group(3), m.group(2))
            ),
            text,
        )
    if "](" in text:
        text = residue.MD_LINK.sub(lambda m: link(m.group("link_text"), m.group("link_url")), text)
    if "://" in text or "www." in text:
        text = residue.URL.sub(lambda m: saved.keep(m.group()), text)
    return text


# --- Text mode: TeX quotes ------------------------------------------------------------------
# ``x'' (or ``x" or ``x' as some authors close it) → “x”, `x' → ‘x’; a lone `` or '' → “ or ”. Each
# body stops at the next backtick, so a run of openers stays linear.
_TEX_DOUBLE = re.compile(r"``([^`]*?)(?:''|\"|[”’]|'(?![A-Za-z]))")
_TEX_SINGLE = re.compile(r"`(?=[^`'\s])([^`'\"]*)(?:'(?![A-Za-z])|’)")
# `early fusion" (an opener typed once, closed with a straight double quote): “early fusion”.
_TEX_MIXED = re.compile(r"(?<!`)`(?=[^`'\"\s])([^`'\"]*)\"")
_TEX_LONE = re.compile(r"``|(?<![\^'])''(?!')")


def _tex_quotes(text: str) -> str:
    if "`" not in text and "''" not in text:
        return text
    text = _TEX_DOUBLE.sub(r"“\1”", text)
    text = _TEX_SINGLE.sub(r"‘\1’", text)
    if "`" in text:
        text = _TEX_MIXED.sub(r"“\1”", text)
    return _TEX_LONE.sub(_lone_quote, text)


def _lone_quote(m: re.Match[str]) -> str:
    """`` opens; '' closes after a word and opens before one (''Co-teaching'' in NeurIPS 2018)."""
    if m.group() == "``":
        return "“"
    before = m.string[m.start() - 1 : m.start()]
    return "”" if before and not before.isspace() else "“"


# --- Text mode: Markdown ----------------------------------------------------------------------
# `***a** b*` and `**a *b* c**` need a second look once the inner pair is gone; three rounds
# cover the nesting Markdown allows in practice, each linear.
_EMPHASIS_ROUNDS = 3


def _emphasis_body(m: re.Match[str]) -> str:
    for group in ("star_body", "inword_body", "under_body"):
        if m.group(group) is not None:
            return m.group(group)
    return m.group()  # pragma: no cover - every alternative has a body


def _markdown(text: str, saved: _Saved) -> str:
    if "`" in text:
        text = residue.MD_CODE.sub(lambda m: saved.keep(m.group("code_body")), text)
    for _ in range(_EMPHASIS_ROUNDS):
        if "*" not in text and "_" not in text:
            break
        text, n = residue.MD_EMPHASIS.subn(_emphasis_body, text)
        if not n:
            break
    return text


# --- Text mode: TeX -----------------------------------------------------------------------------
# Citations and cross-references go with their keys and the tie or space before them
# (`memory~\citep{smith2015online}.` → `memory.`); a parenthesis holding nothing but citations
# goes too. The key is not text, and the reference it stands for is not in the record.
_CITE = (
    r"\\(?:[Cc]ite[A-Za-z]*|nocite|ref|eqref|autoref|[Cc]ref|pageref|label)\*?"
    r"(?:\s*\[[^\[\]]*\])*\s*\{[^{}]*\}"
)
# A match starts only where a run of spaces and ties starts, so a long run of `~` is scanned once.
_CITATION = re.compile(rf"(?<!\s)\s*\(\s*{_CITE}(?:[\s,;]*{_CITE})*\s*\)|(?<![\s~])[\s~]*{_CITE}")
# Accents: \'e \'{e} {\'e} \"{o} \'\i, and the letter accents \c{c} \c c \v{s} \H{o} \k{a}.
_ACCENT_MARKS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
    "d": "\u0323",
    "b": "\u0331",
}
_BASE = r"(?:\\([ij])(?![A-Za-z])|([A-Za-z]))"
_ACCENT = re.compile(
    rf"\\(['`^\"~=.])\s*(?:\{{\s*{_BASE}\s*\}}|{_BASE})"
    rf"|\\([uvHckrdb])(?:\s*\{{\s*{_BASE}\s*\}}|\s+([A-Za-z]))"
)


def _accent(m: re.Match[str]) -> str:
    mark = m.group(1) or m.group(6)
    base = next(m.group(g) for g in (2, 3, 4, 5, 7, 8, 9) if m.group(g) is not None)
    return unicodedata.normalize("NFC", base + _ACCENT_MARKS[mark])


# Commands by what they do in running text.
_FONT_SWITCHES = frozenset(
    "negthinspace "
    "it bf em sc rm tt sf sl up md itshape bfseries scshape upshape slshape mdseries normalfont "
    "rmfamily sffamily ttfamily tiny scriptsize footnotesize small normalsize large Large LARGE "
    "huge Huge noindent centering raggedright raggedleft nobreak".split()
)
_SPACES = frozenset(
    "par newline linebreak smallskip medskip bigskip hfill quad qquad thinspace enspace enskip "
    "medspace thickspace".split()
)
_UNWRAP = frozenset(
    "textbf textit emph texttt textsc textsf textrm textsl textup textmd textnormal underline "
    "uline mbox hbox makebox fbox text textsuperscript textsubscript textls ensuremath "
    "MakeUppercase MakeLowercase".split()
)
_DROP_GROUP = frozenset("begin end vspace hspace bibliographystyle".split())
_WORDS = {
    "ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å",
    "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "LaTeX": "LaTeX", "TeX": "TeX",
    "LaTeXe": "LaTeX2ε", "BibTeX": "BibTeX", "item": " • ", "S": "§", "P": "¶",
    "textasciitilde": "~", "textbackslash": "\\", "textbar": "|", "textless": "<",
    "textgreater": ">", "copyright": "©", "textregistered": "®", "texttrademark": "™",
}  # fmt: skip
_TEX_SYMBOLS = {" ": " ", ",": " ", ";": " ", ":": " ", ">": " ", "!": "", "@": "", "/": "",
                "-": "", "[": "[", "]": "]", "(": "(", ")": ")", "|": "|"}  # fmt: skip
# pylatexenc's macros that stand for a fixed string (\ldots, \dag, \alpha, \textendash, …);
# not \today (the date of the build) and not the placeholders it writes for what it drops.
_NOT_SYMBOLS = frozenset({"today"})
# Quotation commands (csquotes' `\\enquote{x}` is “x”): the marks their package prints.
# Abbreviations (cvpr.sty's `\\eg`): their text, whose final dot goes before a dot of the prose.
_ABBREVIATIONS = {m.name: m.prints for m in texpackages.entries() if m.kind == "abbreviation"}
_QUOTES = {m.name: tuple(m.prints.split("x")) for m in texpackages.entries() if m.kind == "quote"}
_PACKAGE_SYMBOLS = texpackages.symbols()


@lru_cache(maxsize=1024)
def _symbol(name: str) -> str | None:
    if name in _WORDS:
        return _WORDS[name]
    # The macros validation/texsymbols.py adds or corrects (`\\degree`, `\\micron`, `\\arcsec`,
    # astronomers' units typed in prose), and operator names, which TeX prints as themselves
    # (`10\\deg` is "10 deg").
    if name in texsymbols.ADDITIONS or name in texsymbols.OVERRIDES or name in _PACKAGE_SYMBOLS:
        return texsymbols.symbols()[name]
    if name in texmath.OPERATOR_NAMES:
        return "mod" if name == "bmod" else name
    spec = _L2T_CONTEXT.get_macro_spec(name)
    repl = getattr(spec, "simplify_repl", None)
    if name in _NOT_SYMBOLS or not isinstance(repl, str) or not repl or "%" in repl:
        return None
    if repl.startswith("<"):
        return None
    # The parser's context lists only macros that take arguments: one it does not know is a
    # plain symbol (`\ldots`, `\dag`), not something to drop to its name.
    walker_spec = _WALKER_CONTEXT.get_macro_spec(name)
    if walker_spec is not None and getattr(walker_spec, "arguments_spec_list", None):
        return None  # it takes arguments: not a plain symbol
    return repl


_TEX_TOKEN = re.compile(r"\\([A-Za-z]+)\*?|\\(.)|([{}])", re.S)
_LEADING_SPACE = re.compile(r"\s*")


def _pair_braces(tokens: list[re.Match[str]]) -> dict[int, int]:
    """Each brace token's partner (both ways); an unpaired brace has none."""
    partner: dict[int, int] = {}
    stack: list[int] = []
    for i, t in enumerate(tokens):
        if t.group(3) == "{":
            stack.append(i)
        elif t.group(3) == "}" and stack:
            j = stack.pop()
            partner[i], partner[j] = j, i
    return partner


def _tex_commands(text: str, saved: _Saved) -> str:
    """Commands and braces, in one walk over the tokens: what each stands for in running text.

    Braces are paired first (a stack; an unpaired brace is a literal character). A group that
    is an argument of a text command (``\\textbf{x}``), holds a command (``{\\it x}``) or is one
    word (BibTeX's ``{A}n``, ``Schr{ö}dinger``) loses its braces; a group with spaces or commas
    and no command is prose (``the set {0, 1}``) and keeps them. An unknown command without an
    argument (``\\XOS``, an author's own macro) is kept as TeX, backslash and all, and counted
    with the math kept: its bare name would read as a word of the prose.
    """
    tokens = list(_TEX_TOKEN.finditer(text))
    if not tokens:
        return text
    partner = _pair_braces(tokens)
    action: dict[int, str] = {}  # opening brace -> "unwrap" | "paren" | "keep" | a quote
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.start() < pos:  # inside a group that was dropped
            i += 1
            continue
        out.append(text[pos : t.start()])
        pos = t.end()
        name, symbol, brace = t.groups()
        # The brace group that follows a command directly (spaces allowed) is its argument.
        arg = i + 1 if i + 1 < len(tokens) and tokens[i + 1].group(3) == "{" else None
        if arg is not None and (text[t.end() : tokens[arg].start()].strip() or arg not in partner):
            arg = None
        if name is not None:
            if name in _FONT_SWITCHES:
                pos = _LEADING_SPACE.match(text, pos).end()  # type: ignore[union-attr]
            elif name in _SPACES:
                out.append(" ")
            elif name in _DROP_GROUP:
                out.append(" ")
                if arg is not None:
                    pos = tokens[partner[arg]].end()
            elif name == "footnote" and arg is not None:
                action[arg] = "paren"
            elif name in _QUOTES and arg is not None:
                action[arg] = name
            elif name in _UNWRAP:
                if arg is not None:
                    action[arg] = "unwrap"
            elif name in _ABBREVIATIONS:
                repl = _ABBREVIATIONS[name]
                out.append(repl[:-1] if text.startswith(".", pos) else repl)
            elif (repl := _symbol(name)) is not None:
                before = next((piece for piece in reversed(out) if piece), "")
                if repl[:1].isalpha() and len(repl) > 1 and before[-1:].isalnum():
                    out.append(" ")  # `10\deg`: an operator's name is a word of its own
                out.append(repl)
            elif arg is not None:
                converted = _known_with_argument(name, text[t.start() : tokens[partner[arg]].end()])
                if converted is not None:
                    out.append(converted)
                else:  # unknown (`\\benchname{}`, `\\ch{CH3+}`): kept as typed, like a bare one
                    out.append(saved.keep_tex(text[t.start() : tokens[partner[arg]].end()]))
                pos = tokens[partner[arg]].end()
            else:
                out.append(saved.keep_tex(t.group()))
        elif symbol is not None:
            out.append(_TEX_SYMBOLS.get(symbol, symbol))
        elif brace == "{":
            if i not in partner:
                out.append("{")
            else:
                act = action.get(i) or _bare_group(text, t.end(), tokens, i, partner[i])
                action[i] = act
                out.append({"paren": " (", "keep": "{"}.get(act, _QUOTES.get(act, ("",))[0]))
        else:  # "}"
            act = action.get(partner[i], "keep") if i in partner else "keep"
            out.append({"paren": ")", "keep": "}"}.get(act, _QUOTES.get(act, ("", ""))[-1]))
        i += 1
    out.append(text[pos:])
    return "".join(out)


def _bare_group(text: str, start: int, tokens: list[re.Match[str]], i: int, j: int) -> str:
    if j > i + 1:
        return "unwrap"  # holds a command or a nested group: TeX grouping
    inner = text[start : tokens[j].start()]
    return "unwrap" if not inner.strip() or not re.search(r"[\s,;]", inner) else "keep"


def _known_with_argument(name: str, source: str) -> str | None:
    """A macro pylatexenc knows and that takes arguments (\\sqrt{x}, \\mathcal{O} outside math)."""
    if _MARK in source or _WALKER_CONTEXT.get_macro_spec(name) is None:
        return None
    if _L2T_CONTEXT.get_macro_spec(name) is None:
        return None
    converted = _pylatexenc(source)
    if converted is None:
        return None  # kept as typed: `\\frac{a}` at the end of a text fills no fraction
    return _latex_to_text(source, converted)


_TIE = re.compile(residue.TIE)
_DASH = re.compile(residue.DASH)


# MathJax's `\\unicode{x2014}` in running text: the character it names.
_UNICODE = re.compile(r"\\unicode\s*\{\s*([xX][0-9A-Fa-f]{1,6}|[0-9]{1,7})\s*\}")


def _code_point(m: re.Match[str]) -> str:
    code = m.group(1)
    value = int(code[1:], 16) if code[0] in "xX" else int(code)
    return chr(value) if value <= 0x10FFFF else m.group()


def _tex(text: str, saved: _Saved) -> str:
    if "\\" in text:
        text = _CITATION.sub("", text)
        if "\\unicode" in text:
            text = _UNICODE.sub(_code_point, text)
        text = _ACCENT.sub(_accent, text)
    if "\\" in text or "{" in text:
        text = _tex_commands(text, saved)
    if "~" in text:
        text = _TIE.sub(" ", text)
    if "--" in text:
        text = _DASH.sub(lambda m: "—" if m.group() == "---" else "–", text)
    return text


def _text_mode(text: str, saved: _Saved) -> str:
    """Clean the text around the math spans (which are behind markers already)."""
    if "<" in text:
        text = residue.HTML.sub(_tag_to_text, text)
    if "\\verb" in text:  # LaTeX's verbatim text, `\\verb|CosMomentum|`: as typed
        text = _VERB.sub(lambda m: saved.keep(m.group(2)), text)
    if "\\" in text:
        text = _ESCAPE.sub(lambda m: " " if m.group(1) is None else saved.keep(m.group(1)), text)
    text = _links(text, saved)
    text = _tex_quotes(text)
    text = _markdown(text, saved)
    return _tex(text, saved)


# --- Normalisation ---------------------------------------------------------------------------


def _normalise(text: str) -> str:
    """NFC, then single spaces.

    NFC and not NFKC: NFC only composes (``O`` + U+0303 from ``\\tilde O`` becomes ``Õ``), so
    it never changes what a character means. NFKC would turn the math letters that LaTeX
    conversion produces on purpose (``𝒪``, ``ℳ``, ``ℝ``) into plain ``O``/``M``/``R``,
    superscripts ``x²`` into ``x2`` and full-width CJK punctuation into ASCII, losing
    information the model could use. Ligatures, the one NFKC fold we want, are undone by ftfy
    in step 1.
    """
    # ``str.split`` splits at exactly the characters ``\s`` matches
    # (tests/validation/test_hotpath.py checks every code point): the same as
    # ``re.sub(r"\s+", " ", ...).strip()``, faster.
    text = unicodedata.normalize("NFC", text)
    return text if normalize.is_collapsed(text) else " ".join(text.split())


# A symbol macro in running text with its scripts, if any (`\Omega_{m0}`, `\sigma_v`); the
# longest name first, and not a prefix of a longer command (`\in` is not `\int`).
_PROSE_SYMBOL = re.compile(
    r"\\(?:"
    + "|".join(sorted(texmath.SYMBOL_NAMES, key=lambda n: (-len(n), n)))
    + r")(?![A-Za-z])(?:[\^_](?:\{[^{}$\\\n]{1,40}\}|[A-Za-z0-9])|\^\*)*"
)


# A formula typed in prose without dollars that starts with a command only math or a package
# has (`\operatorname H_{v, \epsilon}f(x)`, `\frac{dy}y`, `\ce{H2O}`, `\SI{3}{\kilo\metre}`):
# the whole run, up to the next blank outside braces, is converted as one formula by the math
# converter, or kept whole as TeX; never half converted by text mode.
_MATH_STARTERS = sorted(
    {
        *"frac dfrac tfrac sqrt operatorname mathcal mathbb mathrm mathbf mathfrak mathscr mathsf "
        "mathit hat widehat tilde widetilde bar overline vec dot ddot left".split()
    }
    | {m.name for m in texpackages.entries() if texmacros.defines(m.name)},
    key=lambda n: (-len(n), n),
)
_PROSE_MATH = re.compile(r"\\(?=[A-Za-z])(?:" + "|".join(_MATH_STARTERS) + r")(?![A-Za-z])")
# Scripts with a command or a star inside (`SgrA^*_{\mathrm{Keck}}`), which residue.SCRIPTS
# leaves to text mode.
_PROSE_SCRIPTS = re.compile(
    r"(?=[\^_])(?<=[\w)\]])(?:\^\*|[\^_]\{(?:[^{}$\n]|\{[^{}$\n]*\}){1,60}\})+"
)


def _prose_scripts(m: re.Match[str], convert: Callable[[str], str]) -> str:
    """Only the scripts residue.SCRIPTS does not take (a command or a star in them)."""
    run = m.group()
    return convert("$" + run + "$") if "\\" in run or "^*" in run else run


def _group_end(text: str, pos: int) -> int:
    """The index after the brace group that opens at ``pos`` (-1 if it does not close)."""
    depth = 0
    for k in range(pos, min(len(text), pos + 400)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return k + 1
    return -1


def _token_end(text: str, pos: int) -> int:
    if text[pos] == "{":
        return _group_end(text, pos)
    if text[pos] == "\\":
        m = _TEX_TOKEN.match(text, pos)
        return m.end() if m else pos + 1
    return pos + 1


def _prose_run(text: str, start: int, name_end: int, name: str) -> int:
    """Where a prose formula that starts with ``\\name`` at ``start`` ends (-1: not one)."""
    pos = name_end
    if name == "left":  # `\\left( … \\right)`: blanks inside belong to the formula
        close = text.find("\\right", pos, pos + 400)
        if close < 0:
            return -1
        pos = close + len("\\right") + 1
        if pos > len(text):
            return -1  # `\\right` is the text's end: its delimiter was cut off
    for _ in range(texmath.arity(name)):  # its arguments, a blank before each allowed
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos >= len(text) or text[pos] in "$" + _MARK:
            return -1
        pos = _token_end(text, pos)
        if pos < 0:
            return -1
    while pos < len(text) and not text[pos].isspace() and text[pos] not in "$}'\"`" + _MARK:
        pos = _token_end(text, pos)
        if pos < 0:
            return -1
    while pos > name_end and text[pos - 1] in ".,;:":  # the sentence's, not the formula's
        pos -= 1
    return pos


def _set_aside_prose_math(text: str, convert: Callable[[str], str]) -> str:
    out: list[str] = []
    pos = 0
    for m in _PROSE_MATH.finditer(text):
        if m.start() < pos or text[max(0, m.start() - 2) : m.start()] in ("_{", "^{"):
            continue  # inside a script: the script is the formula (`SgrA^*_{\mathrm{Keck}}`)
        end = _prose_run(text, m.start(), m.end(), m.group()[1:])
        if end < 0:
            continue
        out += [text[pos : m.start()], convert("$" + text[m.start() : end] + "$")]
        pos = end
    return "".join(out) + text[pos:] if out else text


# Display environments typed in prose (`such that \begin{align*} \frac{1}{n} … \end{align*}`):
# text mode read them as prose (`\frac` became "%s/%s", `\|x\|` lost its bars, `\left(` became
# "left("). One that holds a single formula (no `&` alignment, no `\\` row) is that formula
# displayed, as `\[…\]` is, and is converted by the math rules (its equation number is not in
# the text); one with rows or alignment is published as its TeX, whole, and counted as math kept.
_MATH_ENVIRONMENTS = (
    "equation", "align", "gather", "multline", "eqnarray", "flalign", "alignat", "displaymath",
    "math",
)  # fmt: skip
_ENV_BEGIN = re.compile(r"\\begin\{(" + "|".join(_MATH_ENVIRONMENTS) + r")(\*?)\}")


def _set_aside_environments(text: str, keep: Callable[[str, str], str]) -> str:
    r"""``text`` with each closed math environment replaced by ``keep(environment, body)``.

    Linear: an environment whose ``\end`` is missing is not looked for again.
    """
    out: list[str] = []
    pos = 0
    unclosed: set[str] = set()
    for m in _ENV_BEGIN.finditer(text):
        name = m.group(1) + m.group(2)
        if m.start() < pos or name in unclosed:
            continue
        end_tag = f"\\end{{{name}}}"
        end = text.find(end_tag, m.end())
        if end < 0:
            unclosed.add(name)
            continue
        body = text[m.end() : end]
        end += len(end_tag)
        out += [text[pos : m.start()], keep(text[m.start() : end], body)]
        pos = end
    return "".join(out) + text[pos:] if out else text


# A formula whose text argument holds formulas of its own (`$M_{\text{$\mathrm{H\,I}$}}$`,
# `$\textit{$\underline{G}$raph …}$`): a `$` inside braces does not close the formula, as in
# TeX and in MathJax, which renders these abstracts; residue.MATH, which pairs dollars without
# reading braces, would cut it at the inner `$`. The formula is found here first, from each text
# command whose argument holds a `$`: at most 600 characters from its opening `$`, and at most
# 6,000 in all for a record, so that `"\text{$ " * N` costs no more than a few formulas.
_NESTED_TEXT = re.compile(
    r"\\(?:text(?:rm|it|bf|sf|tt|up|md|sl|normal)?|mbox|hbox)\s*(?=\{[^{}]*(?<!\\)\$)"
)
_NESTED_BUDGET = 6000


def _formula_end(text: str, pos: int, stop: int) -> int:
    """The index after the `$` that closes, outside braces, the formula whose text starts at
    ``pos``; -1 if none before ``stop`` or a brace closes what it did not open."""
    depth = 0
    k = pos
    while k < stop:
        ch = text[k]
        if ch == "\\":
            k += 2  # an escaped character (`\{`, `\$`) or a command's first letter
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return -1
        elif ch == "$" and depth == 0:
            return k + 1
        k += 1
    return -1


def _set_aside_nested_math(text: str, convert: Callable[[str], str]) -> str:
    out: list[str] = []
    pos = 0
    dollars, last = 0, -1  # unescaped dollars from `pos` on, and where the last one is
    counted = 0
    budget = _NESTED_BUDGET
    for m in _NESTED_TEXT.finditer(text):
        if m.start() < pos:
            continue
        if budget <= 0:
            break
        found = text.count("$", counted, m.start()) - text.count("\\$", counted, m.start())
        if found:
            dollars += found
            last = text.rfind("$", counted, m.start())
        counted = m.start()
        # Inside an inline formula: an odd number of dollars since the last formula set aside,
        # the last of them single (`$$` is display math, left to residue.MATH) and unescaped.
        if dollars % 2 == 0 or "$$" in text[max(0, last - 1) : last + 2] or text[last - 1] == "\\":
            continue
        stop = min(len(text), last + 1 + min(600, budget))
        budget -= stop - last - 1
        end = _formula_end(text, last + 1, stop)
        if end < 0:
            continue
        out += [text[pos:last], convert(text[last:end])]
        pos = counted = end
        dollars = 0
    return "".join(out) + text[pos:] if out else text


# A TeX quote typed between dollars (`like$"$ deep image prior$"$`, `$``$deep decoder$"$`): a
# quotation mark of the prose, not a formula (in math `"` and `` ` `` print nothing meant).
_MATH_QUOTE = re.compile(r"\s*(?<!\\)\$(``|''|\"|`|')\$\s*")
_OPENS = {"``": "“", "`": "‘"}
_CLOSES = {"''": "”", "'": "’"}


def _math_quotes(text: str) -> str:
    """Each quote span a curly quote: `` and ` open, a `"` opens and the next closes, and ''
    and ' close only a quote opened so (else they are primes: `1.$''$6` is 1.″6); an opening
    quote hugs the word after it, a closing one the word before."""
    out: list[str] = []
    pos = 0
    opened = {"double": False, "single": False}
    dollars, counted = 0, 0  # `$` before the match: odd inside a formula (`$x$'$y$`)
    for m in _MATH_QUOTE.finditer(text):
        dollars += text.count("$", counted, m.start())
        counted = m.start()
        mark = m.group(1)
        kind = "single" if mark in ("`", "'") else "double"
        opens = mark in _OPENS or (mark == '"' and not opened["double"])
        if dollars % 2 or not (opens or opened[kind]):
            continue
        counted = m.end()  # its own two dollars leave the count even
        opened[kind] = opens
        before = text[pos : m.start()]
        if opens:
            lead = " " if before and not before.endswith(("(", "[")) else ""
            out += [before, lead, _OPENS.get(mark, "“")]
        else:
            tail = " " if m.group().endswith(" ") else ""
            out += [before, _CLOSES.get(mark, "”"), tail]
        pos = m.end()
    return "".join(out) + text[pos:]


# A record escaped twice by a scraper (`$30\\%$`, `\\sqrt{\\min\\{n, \\kappa\\}}`):
# every backslash doubled, and at least one pair before what TeX escapes or names. Only a whole
# record is undone: one `\\` among single backslashes is TeX's own line break.
_DOUBLED = re.compile(r"\\\\[A-Za-z%{}$_|&#,;!]")
_PAIRS = re.compile(r"\\\\")


def _unescape_twice(text: str) -> str:
    if _DOUBLED.search(text) and "\\" not in _PAIRS.sub("", text):
        return _PAIRS.sub(lambda _m: "\\", text)
    return text


# --- The pipeline ---------------------------------------------------------------------------
def clean_text(text: str, math: str = "unicode") -> CleanResult:
    """Clean one record: mojibake, controls, HTML, math, text-mode TeX and Markdown, NFC.

    ``kinds`` names the residue kinds :mod:`validation.residue` finds in the raw record, the
    same the ``latex``/``markdown``/``html`` checks report. ``math`` is the math policy
    (``"unicode"`` or ``"tex"``, see :mod:`curate.transform.texmath`); the math spans that could
    not be
    converted faithfully are published as TeX and listed in ``math_kept``.
    """
    kinds = tuple(kind for kind in residue.KINDS if residue.has(kind, text))
    mojibake = False
    if residue.may_be_mojibake(text) and _ftfy_may_change(text):
        text, mojibake = _repair_mojibake(text)
    text = _drop_controls(_collapse_whitespace(text))
    if "\\" in text and "\\\\" in text:  # memchr first: a two-character `in` is a slow scan
        text = _unescape_twice(text)
    kept: list[str] = []
    if kinds and not _RESERVED.search(text):
        text = _decode_entities(text)
        saved = _Saved()

        def convert(span: str) -> str:
            result = _math_to_text(span, math)
            if result.kept:
                kept.append(result.text)
            return saved.keep(result.text)

        def keep_as_tex(span: str) -> str:
            kept.append(span)
            return saved.keep(span)

        def environment(span: str, body: str) -> str:
            if math == "unicode" and "&" not in body and "\\\\" not in body:
                result = _math_to_text("$$" + body + "$$", math)
                if not result.kept:
                    return saved.keep(result.text)
            return keep_as_tex(span)

        if residue.may_have("latex", text):
            if "\\begin{" in text:
                text = _set_aside_environments(text, environment)
            if '$"$' in text or "$`" in text or "$'" in text:
                text = _math_quotes(text)
            if "\\text" in text or "box{" in text:
                text = _set_aside_nested_math(text, convert)
            text = residue.MATH.sub(lambda m: convert(m.group()), text)
            # Symbols typed without dollars (`69.9\pm 1.4`, `\sigma_v`) are formulas too.
            if "\\" in text:
                text = _set_aside_prose_math(text, convert)
            if "^*" in text or "_{\\" in text or "^{\\" in text:
                text = _PROSE_SCRIPTS.sub(lambda m: _prose_scripts(m, convert), text)
            if "\\" in text:
                text = _PROSE_SYMBOL.sub(lambda m: convert(f"${m.group()}$"), text)
            # Scripts typed without dollars (`4x10^{-4}`) are formulas too: converted as one.
            if "^{" in text or "_{" in text:  # what every script starts with
                text = residue.SCRIPTS.sub(lambda m: convert(f"${m.group()}$"), text)
        text = saved.restore(_text_mode(text, saved))
        kept += [saved.restore(tex) for tex in saved.tex]  # `\\github{url}`: the URL back in
    return CleanResult(
        text=_normalise(text),
        kinds=kinds,
        fixed_mojibake=mojibake,
        math_kept=tuple(dict.fromkeys(kept)),  # each once: `\kms` five times is one finding
    )
