"""Math spans (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``) to text that keeps their meaning.

Two policies (``[tool.curate] math``):

* ``"unicode"``: plain Unicode. Grouping is kept (``n^{-2/5}`` → ``n^(-2/5)``; ``m^{-1}`` →
  ``m⁻¹`` where every character has a superscript), accents stay on their symbol
  (``\\widetilde{\\mathcal{O}}`` → ``𝒪̃``), operator names keep their spaces (``k \\log{n}`` →
  ``k log n``), known sets become symbols (``\\R`` → ``ℝ``); a formula with an author's own
  macro (``\\Ot``, defined in the paper, not in the abstract) is kept as TeX, since its bare
  name would read as a word (docs/cleaning.md).
* ``"tex"``: the span as normalised TeX between ``$…$`` (one space for each run of blanks).

Why a converter of our own on pylatexenc's *parser*: chosen by measurement
(``bench/bench_math.py --converters``, the 13,798 math spans of the dev corpus, each judged by
the bench's own checker): pylatexenc's ``latex2text`` changed the meaning of 2,747 spans
(grouping, accents, unknown macros), flatlatex 1,472, unicodeit 882, pandoc's texmath
(``pypandoc-binary``, batched 500 spans per process) 408 at about 2,000 spans/s, this module
none, converting 13,727 and keeping 71 as TeX, at about 7,000 spans/s; and pandoc would add a
155 MiB binary and a process per batch.
pylatexenc's ``LatexWalker`` does the hard part (braces, macros, environments, comments); the
rendering below is small, and everything it does not know how to render faithfully raises
:class:`Unfaithful`, so the span is **kept as its TeX source and counted** instead of being
emptied or garbled.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from pylatexenc import latexwalker, macrospec

from curate.settings import MATH_POLICIES
from curate.transform import texmacros as packages
from validation import texsymbols

__all__ = ["MATH_POLICIES", "OPERATOR_NAMES", "MathResult", "convert"]


@dataclass(frozen=True, slots=True)
class MathResult:
    """One converted span; ``kept`` says it could not be converted and is its TeX source."""

    text: str
    kept: bool


class Unfaithful(Exception):
    """The span holds something this converter cannot render without changing its meaning."""


# --- Tables ---------------------------------------------------------------------------------
_SYMBOLS = texsymbols.symbols()
# The names of symbol macros, for the cleaner: `\pm`, `\alpha`, `\leq` typed in prose without
# dollars are math all the same (text mode would print `69.9pm 1.4`).
SYMBOL_NAMES = frozenset(
    name
    for name, symbol in _SYMBOLS.items()
    if name.isalpha()
    and len(symbol) == 1
    and (unicodedata.category(symbol) == "Sm" or "GREEK" in unicodedata.name(symbol, ""))
) | {"cdot"}
_OPERATORS = frozenset(
    "log ln lg exp sin cos tan cot sec csc sinh cosh tanh coth arcsin arccos arctan min max sup "
    "inf lim liminf limsup det deg dim ker hom arg gcd Pr mod bmod".split()
)
OPERATOR_NAMES = _OPERATORS  # for the cleaner: TeX prints them as their names
_SETS = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ"}
_SETS.update({k * 2: v for k, v in _SETS.items()})  # \RR, \NN, ...
_ALPHABETS = {
    "mathbb": "DOUBLE-STRUCK",
    "mathbbm": "DOUBLE-STRUCK",
    "mathcal": "SCRIPT",
    "mathscr": "SCRIPT",
    "mathfrak": "FRAKTUR",
    # amsfonts' old names take an argument like the new ones (`\\Bbb R`, `\\frak{p}`).
    "Bbb": "DOUBLE-STRUCK",
    "frak": "FRAKTUR",
}
# LaTeX 2.09's switch: `{\\cal N}` styles the rest of its group; `\\cal{O}` reads as `\\mathcal{O}`.
_SWITCHES = {"cal": "SCRIPT"}
# Letters that Unicode encoded before the mathematical alphanumerics block; the block has
# holes where they would be.
_LETTERLIKE = {
    ("DOUBLE-STRUCK", "C"): "ℂ",
    ("DOUBLE-STRUCK", "H"): "ℍ",
    ("DOUBLE-STRUCK", "N"): "ℕ",
    ("DOUBLE-STRUCK", "P"): "ℙ",
    ("DOUBLE-STRUCK", "Q"): "ℚ",
    ("DOUBLE-STRUCK", "R"): "ℝ",
    ("DOUBLE-STRUCK", "Z"): "ℤ",
    ("SCRIPT", "B"): "ℬ",
    ("SCRIPT", "E"): "ℰ",
    ("SCRIPT", "F"): "ℱ",
    ("SCRIPT", "H"): "ℋ",
    ("SCRIPT", "I"): "ℐ",
    ("SCRIPT", "L"): "ℒ",
    ("SCRIPT", "M"): "ℳ",
    ("SCRIPT", "R"): "ℛ",
    ("SCRIPT", "e"): "ℯ",
    ("SCRIPT", "g"): "ℊ",
    ("SCRIPT", "o"): "ℴ",
    ("FRAKTUR", "C"): "ℭ",
    ("FRAKTUR", "H"): "ℌ",
    ("FRAKTUR", "I"): "ℑ",
    ("FRAKTUR", "R"): "ℜ",
    ("FRAKTUR", "Z"): "ℨ",
}
_ACCENTS = {
    "tilde": "\u0303",
    "widetilde": "\u0303",
    "Tilde": "\u0303",
    "hat": "\u0302",
    "widehat": "\u0302",
    "bar": "\u0304",
    "overline": "\u0305",
    "dot": "\u0307",
    "ddot": "\u0308",
    "vec": "\u20d7",
    "check": "\u030c",
    "breve": "\u0306",
    "mathring": "\u030a",
    "acute": "\u0301",
    "grave": "\u0300",
    "dddot": "\u20db",
    "overrightarrow": "\u20d7",
    "overleftarrow": "\u20d6",
    "underbar": "\u0331",
    # `\\underline{\\mathcal C}` names another object than 𝒞 (the stable category): the
    # line is kept, as U+0332 under each symbol.
    "underline": "\u0332",
    "r": "\u030a",  # the text accent, typed in math by astronomers: `\\r{A}` is Å
}
# Macros whose argument is text in another font: the font carries no meaning we can keep in
# plain text (bold vectors are the one loss, and the same letter in bold is rarely a different
# quantity in an abstract).
_KEEP_ARGUMENT = frozenset(
    "text textrm textit textbf textsf texttt textnormal textup textmd textsl textsc emph mathrm "
    "mathit mathbf mathsf mathtt mathnormal boldsymbol bm mbox hbox smash pmb".split()
)
# Sizes, styles and spacing that change only how the formula looks.
_IGNORED = frozenset(
    "left right middle big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr "
    "displaystyle textstyle scriptstyle scriptscriptstyle limits nolimits allowbreak rm it bf "
    "tt sf small normalsize footnotesize large Large mathstrut strut".split()
)
_SPACES = {",": " ", ";": " ", ":": " ", ">": " ", " ": " ", "quad": " ", "qquad": " ", "!": "",
           "thinspace": " ", "enspace": " ", "enskip": " ", "medspace": " ", "thickspace": " ",
           "negthinspace": ""}  # fmt: skip
_ESCAPES = {"{": "{", "}": "}", "%": "%", "$": "$", "#": "#", "&": "&", "|": "‖", "_": "_"}
_FRACTIONS = frozenset(("frac", "tfrac", "dfrac", "nicefrac", "cfrac"))
# Delimiters around an argument: braket's and physics' notations, standard in quantum papers.
_DELIMITED = {"pmod": (" (mod ", ")"), "pod": (" (", ")")}

_SUPERSCRIPTS = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWβγδφχθ",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵝᵞᵟᵠᵡᶿ",
        strict=True,
    )
)
_SUPERSCRIPTS["−"] = "⁻"
_SUBSCRIPTS = dict(
    zip(
        "0123456789+-=()aehijklmnoprstuvxβγρφχ",
        "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ",
        strict=True,
    )
)
_SUBSCRIPTS["−"] = "₋"
_PRIMES = frozenset("'′″‴")
_ROOTS = {"2": "√", "3": "∛", "4": "∜"}


# --- Parsing ----------------------------------------------------------------------------------
def _walker_context() -> macrospec.LatexContextDb:
    """A context that knows no macro's arguments: the renderer takes them itself, so that
    ``\\frac{dy}y`` and ``\\XOS{x}`` are read the same way whatever pylatexenc knows."""
    db = macrospec.LatexContextDb()
    db.set_unknown_macro_spec(macrospec.MacroSpec(""))
    db.set_unknown_environment_spec(macrospec.EnvironmentSpec(""))
    db.set_unknown_specials_spec(macrospec.SpecialsSpec(""))
    return db


_CONTEXT = _walker_context()
_BARE_PERCENT = re.compile(r"(?<!\\)((?:\\\\)*)%")
# In an inline formula `\\` (a new row) before a letter or `{ } | %` means nothing: it is a
# command escaped twice by a scraper among single ones (`$\\mathrm{SE}(3)$`,
# openreview:clqzoCrulY; `\\{2, 4\\}`, openreview:S3xqyEaST9).
_DOUBLED = re.compile(r"\\\\(?=[A-Za-z{}|%])")
_OPEN = re.compile(r"\A(?:\$\$|\$|\\\(|\\\[)")
_CLOSE = re.compile(r"(?:\$\$|\$|\\\)|\\\])\Z")
_BLANKS = re.compile(r"\s+")
# Without these a span is plain characters, and the parser has nothing to do.
_SYNTAX = re.compile(r"[\\{}^_&#%~$]")
# `'` in math is a prime (`f'`, `90''` arcseconds): ′, never the ASCII quote that reads as a
# TeX closing quote in plain text.
_PLAIN = {"*": "∗", "<": " < ", "'": "′"}
_ONLY_SPACE = re.compile(r"(?:\s|~|\\[,;:! ]|\\q?quad)*")

_ASCII_WORD = re.compile(r"[A-Za-z]*")
# A token is (kind, value): ("c", char), ("g", [tokens]) for a {group}, ("m", name).
Token = tuple[str, object]


# Commands whose argument is text, where `$…$` is a formula again (`M_{\text{$\mathrm{H\,I}$}}`).
_TEXT_COMMANDS = frozenset(
    "text textrm textit textbf textsf texttt textup textmd textsl textnormal mbox hbox".split()
)


def _tokens(nodes: list[latexwalker.LatexNode], text_argument: bool = False) -> list[Token]:
    """The formula as tokens; ``text_argument``: the nodes are a text command's argument, whose
    inline formulas are math inside the math (a group of their own)."""
    out: list[Token] = []
    after_text = False  # the previous node is a text command: a group next is its argument
    for node in nodes:
        follows_text, after_text = after_text, False
        if node.isNodeType(latexwalker.LatexCharsNode):
            out.extend(("c", ch) for ch in node.chars)
        elif node.isNodeType(latexwalker.LatexGroupNode):
            if node.delimiters != ("{", "}"):
                raise Unfaithful("bracket group")
            out.append(("g", _tokens(node.nodelist, follows_text)))
        elif (
            text_argument
            and node.isNodeType(latexwalker.LatexMathNode)
            and node.delimiters == ("$", "$")
        ):
            out.append(("g", _tokens(node.nodelist)))
        elif node.isNodeType(latexwalker.LatexMacroNode):
            after_text = node.macroname in _TEXT_COMMANDS
            name = node.macroname
            # TeX ends a control word at the first character that is not an ASCII letter:
            # `\\hbarω` is `\\hbar ω`, where pylatexenc reads one macro `hbarω`.
            word = _ASCII_WORD.match(name).group()  # type: ignore[union-attr]
            if word and word != name:
                out.append(("m", word))
                out.extend(("c", ch) for ch in name[len(word) :])
            else:
                out.append(("m", name))
            out.extend(("c", ch) for ch in node.macro_post_space)
        elif node.isNodeType(latexwalker.LatexSpecialsNode):
            out.extend(("c", ch) for ch in node.specials_chars)
        else:  # environments, comments, nested math
            raise Unfaithful(type(node).__name__)
    return out


def _parse(inner: str) -> list[Token]:
    walker = latexwalker.LatexWalker(inner, latex_context=_CONTEXT, tolerant_parsing=False)
    try:
        nodes, _pos, _len = walker.get_latex_nodes(
            parsing_state=walker.make_parsing_state(in_math_mode=True)
        )
    except latexwalker.LatexWalkerError as exc:
        raise Unfaithful(str(exc)) from None
    return _tokens(nodes)


# --- Rendering --------------------------------------------------------------------------------
@dataclass(slots=True)
class _Op:
    """An operator or macro name: it needs a space where it would touch a letter or digit."""

    name: str


@dataclass(slots=True)
class _Frac:
    """``a/b``: wrapped in parentheses unless it is the whole formula or already wrapped, so
    that ``s\\log\\frac ds`` reads ``s log(d/s)``, not ``(s log d)/s``."""

    text: str


@dataclass(slots=True)
class _Script:
    """A sub- or superscript; ``open`` when it is written ``_w`` or ``^x`` (a mark and one
    symbol), which a letter right after it would seem to continue (``∑_wP`` for
    ``\\sum_wP``), so a space keeps them apart."""

    text: str
    marked: bool
    open: bool


Piece = str | _Op | _Frac | _Script


def _unwrap_fractions(pieces: list[Piece]) -> list[Piece]:
    solid = [k for k, p in enumerate(pieces) if not (isinstance(p, str) and not p.strip())]
    out: list[Piece] = []
    for k, piece in enumerate(pieces):
        if isinstance(piece, _Frac):
            before = [pieces[j] for j in solid if j < k]
            after = [pieces[j] for j in solid if j > k]
            opened = before and isinstance(before[-1], str) and before[-1].endswith("(")
            closed = after and isinstance(after[0], str) and after[0].startswith(")")
            alone = not before and not after
            piece = piece.text if alone or (opened and closed) else f"({piece.text})"
        out.append(piece)
    return out


def _join(pieces: list[Piece]) -> str:
    out: list[str] = []
    prev_op = False
    prev_open = False
    for piece in _unwrap_fractions(pieces):
        if isinstance(piece, _Script):
            text = piece.text
        else:
            text = piece.name if isinstance(piece, _Op) else piece
        if not text:
            continue
        touching = (
            out and out[-1] and out[-1][-1].isalnum() and text[0].isalnum()
        ) and not isinstance(piece, _Script)
        continues = prev_open and (text[0].isalnum() or _is_script_char(text[0]))
        if continues or (touching and (isinstance(piece, _Op) or prev_op)):
            out.append(" ")
        out.append(text)
        prev_op = isinstance(piece, _Op)
        prev_open = isinstance(piece, _Script) and piece.open
    return "".join(out)


def _is_script_char(ch: str) -> bool:
    return ch in _PRIMES or unicodedata.decomposition(ch).startswith(("<super>", "<sub>"))


def _skip_blanks(tokens: list[Token], i: int) -> int:
    while i < len(tokens) and tokens[i][0] == "c" and str(tokens[i][1]).isspace():
        i += 1
    return i


def arity(name: str) -> int:
    """How many arguments ``\\name`` takes, for the cleaner's prose formulas."""
    return _arity(name)


def _arity(name: str) -> int:
    if name in _FRACTIONS or name == "textcolor":
        return 2
    one = ("operatorname", "sqrt", "not", "unicode", "color", "mathversion")
    tables = (_KEEP_ARGUMENT, _ALPHABETS, _ACCENTS, _DELIMITED)
    if name in one or any(name in table for table in tables):
        return 1
    return packages.arity(name)


def _argument(tokens: list[Token], i: int) -> tuple[list[Token], int]:
    """TeX's rule: the next group, or the next single token; a macro brings its own arguments
    (``M_\\mathrm{200c}`` is ``M_{\\mathrm{200c}}``)."""
    i = _skip_blanks(tokens, i)
    if i >= len(tokens):
        raise Unfaithful("missing argument")
    kind, value = tokens[i]
    if kind == "g":
        return list(value), i + 1  # type: ignore[call-overload]
    taken = [tokens[i]]
    i += 1
    if kind == "m":
        for _ in range(_arity(str(value))):
            arg, i = _argument(tokens, i)
            taken.append(("g", arg))
    return taken, i


def _atomic(text: str) -> bool:
    """Needs no parentheses as an operand: one character (with its marks) or a whole number
    (``10^10.85`` could be read as ``(10^10).85``, so a decimal is wrapped)."""
    return len(unicodedata.normalize("NFC", text)) == 1 or (text.isascii() and text.isdigit())


def _wrapped(text: str) -> bool:
    """``(…)`` whose parentheses pair with each other."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for k, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and k < len(text) - 1:
            return False
    return True


def _operand(text: str) -> str:
    text = text.strip()
    if not text:
        raise Unfaithful("empty operand")
    return text if _atomic(text) or _wrapped(text) else f"({text})"


def _script(mark: str, text: str, marked: bool = False) -> _Script:
    """``x^{2}`` → ``x²`` where every character has a script form, else ``^`` and the operand,
    wrapped unless it is one symbol (``^(-1/2)``, ``_(7⁴)``); ``marked`` forces the second
    form, for a pair of scripts one of which needs it (``P_c^x``, never ``P_cˣ``)."""
    text = text.strip()
    if not text:
        raise Unfaithful("empty script")
    if mark == "^" and all(ch in _PRIMES for ch in text):
        return _Script(text.replace("'", "′"), False, False)
    table = _SUPERSCRIPTS if mark == "^" else _SUBSCRIPTS
    if not marked and all(ch in table for ch in text):
        return _Script("".join(table[ch] for ch in text), False, False)
    operand = _operand(text)
    return _Script(mark + operand, True, not _wrapped(operand))


def _scripts(sub: str | None, sup: str | None) -> _Script:
    """Both scripts of one base, the subscript first (``x_b^a``), in one form."""
    parts = [(m, t) for m, t in (("_", sub), ("^", sup)) if t is not None]
    made = [_script(m, t) for m, t in parts]
    if len(made) == 2 and any(p.marked for p in made):
        made = [_script(m, t, marked=True) for m, t in parts]
    return _Script("".join(p.text for p in made), made[-1].marked, made[-1].open)


def _styled(alphabet: str, text: str) -> str:
    """Letters and digits in ``alphabet``; accents, operators and brackets as they are
    (``\\mathcal{\\tilde{O}}`` is 𝒪̃, ``{\\cal O}(n)`` keeps its parentheses)."""
    out = []
    for ch in unicodedata.normalize("NFD", text):
        if ch.isspace():
            continue
        if not ch.isalnum():
            out.append(ch)
            continue
        if (alphabet, ch) in _LETTERLIKE:
            out.append(_LETTERLIKE[alphabet, ch])
            continue
        case = "CAPITAL" if ch.isupper() else "SMALL"
        try:
            out.append(unicodedata.lookup(f"MATHEMATICAL {alphabet} {case} {ch.upper()}"))
        except KeyError:
            if alphabet == "DOUBLE-STRUCK" and ch.isdigit():
                out.append(unicodedata.lookup(f"MATHEMATICAL DOUBLE-STRUCK DIGIT {_DIGITS[ch]}"))
            else:
                raise Unfaithful(f"no {alphabet} form of {ch!r}") from None
    return "".join(out)


_DIGITS = dict(
    zip("0123456789", "ZERO ONE TWO THREE FOUR FIVE SIX SEVEN EIGHT NINE".split(), strict=True)
)


def _accented(mark: str, text: str, name: str) -> str:
    text = unicodedata.normalize("NFC", text.strip())
    if len(text) == 1:
        return text + mark
    # One symbol with its scripts (`\\bar{K^0}`, the antikaon): the mark goes on the symbol.
    if len(text) > 1 and all(_is_script_char(ch) for ch in text[1:]):
        return text[0] + mark + text[1:]
    if len(text) > 2 and text[1] in "^_" and (_atomic(text[2:]) or _wrapped(text[2:])):
        return text[0] + mark + text[1:]
    if name in ("overline", "underline") and text:  # a line over several symbols: one each
        return "".join(ch + mark for ch in text if not ch.isspace())
    raise Unfaithful(f"\\{name} over several symbols")


def _render(tokens: list[Token]) -> str:
    if ("m", "over") in tokens:  # plain TeX's `{a \\over b}`: the whole group is the fraction
        k = tokens.index(("m", "over"))
        if ("m", "over") in tokens[k + 1 :]:
            raise Unfaithful("two \\over in one group")
        num, den = _render(tokens[:k]), _render(tokens[k + 1 :])
        return _join([_Frac(f"{_operand(num)}/{_operand(den)}")])
    pieces: list[Piece] = []
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        i += 1
        if kind == "g":
            group: list[Token] = value  # type: ignore[assignment]
            if len(group) == 1 and group[0][0] == "m" and group[0][1] in _OPERATORS:
                pieces.append(_Op(str(group[0][1])))  # `20{\\deg}` is still an operator
            else:
                pieces.append(_render(group))
        elif kind == "c" or (value == "_" and i < len(tokens) and tokens[i][0] == "g"):
            # `\\_{…}` is Markdown's escape of a subscript (OpenReview renders Markdown before
            # MathJax): `p\\_{Y|X}` (openreview:AVEc9LvSlO) is p_{Y|X}. Before a letter it is
            # an underscore, as in TeX: `inspect\\_evals` is a name.
            i = _character(str(value), tokens, i, pieces)
        else:
            i = _command(str(value), tokens, i, pieces)
    return _join(pieces)


def _character(ch: str, tokens: list[Token], i: int, pieces: list[Piece]) -> int:
    """A character of the formula (``tokens[i - 1]``): scripts, and the few with a meaning."""
    if ch in "^_":
        if i < len(tokens) and tokens[i][0] != "g" and tokens[i] in _SWITCH_OR_BLANK:
            i = _font_switch_script(tokens, i)  # `_\\rm{…}`, rare: looked at only then
        arg, i = _argument(tokens, i)
        first = _render(arg)
        other = "_" if ch == "^" else "^"
        j = _skip_blanks(tokens, i)
        second = None
        if j < len(tokens) and tokens[j] == ("c", other):
            # x^a_b is x_b^a: the subscript first, so that its `_` follows the base
            # and never a `)`, where it could open Markdown emphasis in plain text.
            arg, i = _argument(tokens, j + 1)
            second = _render(arg)
        sub, sup = (first, second) if ch == "_" else (second, first)
        pieces.append(_scripts(sub, sup))
    elif ch in _PLAIN:
        pieces.append(_PLAIN[ch])  # ∗, ′ and a spaced < (never the start of a tag)
    elif ch == "~":
        pieces.append(" ")
    elif ch in "&#":
        raise Unfaithful(f"{ch!r} in math")
    else:
        pieces.append(ch)
    return i


# LaTeX 2.09's font switches, which take no argument.
_OLD_FONTS = frozenset("rm bf it sf tt".split())
_SWITCH_OR_BLANK = frozenset([("c", " ")] + [("m", name) for name in _OLD_FONTS])


def _font_switch_script(tokens: list[Token], i: int) -> int:
    """Where a script's argument starts: after a font switch (``M_\\rm{\\ast}``) when a group
    ends the formula after it. MathJax, which renders arXiv's and OpenReview's abstracts, takes
    the group for the script; TeX stops at the switch ("Missing { inserted") and puts the rest
    of the formula in the script: here both are the group. Before more of the formula the two
    readings differ, and the empty script keeps the formula as TeX."""
    j = _skip_blanks(tokens, i)
    if j < len(tokens) and tokens[j][0] == "m" and tokens[j][1] in _OLD_FONTS:
        k = _skip_blanks(tokens, j + 1)
        if k < len(tokens) and tokens[k][0] == "g" and _skip_blanks(tokens, k + 1) == len(tokens):
            return k
    return i


def _command(name: str, tokens: list[Token], i: int, pieces: list[Piece]) -> int:
    """A control word or symbol (``tokens[i - 1]``): what it stands for, appended to
    ``pieces``; returns the index after its arguments."""
    if name in _IGNORED:
        if name in ("left", "right", "middle") and i < len(tokens) and tokens[i] == ("c", "."):
            i += 1
    elif name in _SPACES:
        pieces.append(_SPACES[name])
    elif name in _ESCAPES:
        pieces.append(_ESCAPES[name])
    elif name in _KEEP_ARGUMENT:
        arg, i = _argument(tokens, i)
        pieces.append(_render(arg))
    elif name == "operatorname":
        if i < len(tokens) and tokens[i] == ("c", "*"):  # \operatorname*: limits below
            i += 1
        arg, i = _argument(tokens, i)
        pieces.append(_Op(_render(arg).strip()))
    elif name in _OPERATORS:
        pieces.append(_Op("mod" if name == "bmod" else name))
    elif name in _ALPHABETS:
        arg, i = _argument(tokens, i)
        pieces.append(_styled(_ALPHABETS[name], _render(arg)))
    elif name in _SWITCHES:
        j = _skip_blanks(tokens, i)
        if j < len(tokens) and tokens[j][0] == "g":  # `\cal{O}`: as `\mathcal{O}`
            arg, i = _argument(tokens, i)
        else:  # `{\cal N}`: the rest of the group
            arg, i = tokens[i:], len(tokens)
        pieces.append(_styled(_SWITCHES[name], _render(arg)))
    elif name == "mathversion":  # `\mathversion{bold}`: a font for the whole formula
        _version, i = _argument(tokens, i)
    elif name in _DELIMITED:
        i = _delimited(name, tokens, i, pieces)
    elif name in _SETS:
        pieces.append(_SETS[name])
    elif name in _ACCENTS:
        arg, i = _argument(tokens, i)
        pieces.append(_accented(_ACCENTS[name], _render(arg), name))
    elif name in _FRACTIONS:
        num, i = _argument(tokens, i)
        den, i = _argument(tokens, i)
        pieces.append(_Frac(f"{_operand(_render(num))}/{_operand(_render(den))}"))
    elif name in ("sqrt", "not", "unicode", "textcolor", "color"):
        i = _with_argument(name, tokens, i, pieces)
    elif name in _SYMBOLS:
        symbol = _SYMBOLS[name]
        pieces.append(_Op(symbol) if symbol.isalpha() and len(symbol) > 1 else symbol)
    elif packages.defines(name):
        i = packages.render(name, tokens, i, pieces, _Hooks)
    elif len(name) == 1 and not name.isalpha():
        raise Unfaithful(f"\\{name}")  # \\ (a new row) and the like
    else:
        # An author's own macro (`\\Ot`, `\\norm`-like ones defined in the paper): what it
        # stands for is not in the abstract, and its bare name would read as a word.
        raise Unfaithful(f"unknown macro \\{name}")
    return i


def _delimited(name: str, tokens: list[Token], i: int, pieces: list[Piece]) -> int:
    left, right = _DELIMITED[name]
    if i < len(tokens) and tokens[i] == ("c", "*"):  # physics' `\abs*{x}`: sizing
        i += 1
    arg, i = _argument(tokens, i)
    pieces.append(left + _render(arg).strip() + right)
    return i


def _with_argument(name: str, tokens: list[Token], i: int, pieces: list[Piece]) -> int:
    """Roots, negation, ``\\unicode`` and colours."""
    if name == "sqrt":
        root = "√"
        j = _skip_blanks(tokens, i)
        if j < len(tokens) and tokens[j] == ("c", "["):
            close = tokens.index(("c", "]"), j) if ("c", "]") in tokens[j:] else -1
            index = _render(tokens[j + 1 : close]).strip() if close > j else ""
            if index not in _ROOTS:
                raise Unfaithful(f"root of index {index!r}")
            root, i = _ROOTS[index], close + 1
        arg, i = _argument(tokens, i)
        pieces.append(root + _operand(_render(arg)))
    elif name == "not":
        arg, i = _argument(tokens, i)
        pieces.append(_render(arg) + "\u0338")
    elif name == "unicode":
        arg, i = _argument(tokens, i)
        code = _render(arg).strip()
        try:
            pieces.append(chr(int(code[1:], 16) if code[:1] in "xX" else int(code)))
        except ValueError:
            raise Unfaithful(f"\\unicode{{{code}}}") from None
    else:  # textcolor, color
        _colour, i = _argument(tokens, i)
        if name == "textcolor":
            arg, i = _argument(tokens, i)
            pieces.append(_render(arg))
    return i


class _Hooks:
    """The renderer's parts that the package macros (:mod:`curate.transform.texmacros`) use."""

    argument = staticmethod(_argument)
    render = staticmethod(_render)
    skip_blanks = staticmethod(_skip_blanks)
    script = staticmethod(_script)
    accented = staticmethod(_accented)
    operand = staticmethod(_operand)
    Op = _Op
    Frac = _Frac
    Unfaithful = Unfaithful
    SUPERSCRIPTS = _SUPERSCRIPTS
    SUBSCRIPTS = _SUBSCRIPTS


# --- The two policies -------------------------------------------------------------------------
def _split(span: str) -> tuple[str, str, str]:
    opening = _OPEN.match(span)
    closing = _CLOSE.search(span)
    if not opening or not closing or closing.start() < opening.end():
        raise ValueError(f"not a math span: {span!r}")
    return opening.group(), span[opening.end() : closing.start()], closing.group()


def _as_tex(inner: str) -> str:
    return "$" + _BLANKS.sub(" ", inner).strip() + "$"


@lru_cache(maxsize=65536)
def convert(span: str, policy: str = "unicode") -> MathResult:
    """Convert one math span, delimiters included, by ``policy`` (``"unicode"`` or ``"tex"``).

    What cannot be converted faithfully comes back as its TeX between ``$…$`` with
    ``kept=True``; the caller counts it. In ``"tex"`` mode a span is kept (and counted) only
    when it does not parse as TeX.
    """
    if policy not in MATH_POLICIES:
        raise ValueError(f"unknown math policy {policy!r}")
    opening, inner, _close = _split(span)
    inner = html.unescape(inner) if "&" in inner else inner
    if opening in ("$", "\\(") and "\\\\" in inner:
        inner = _DOUBLED.sub(r"\\", inner)
    source = _BARE_PERCENT.sub(r"\1\\%", inner)
    if policy == "unicode" and not _SYNTAX.search(inner):  # `$z$`, `$4.0<z<11.4$`: no parser
        text = _BLANKS.sub(" ", "".join(_PLAIN.get(ch, ch) for ch in inner)).strip()
        if text:
            lead = " " if inner[:1].isspace() else ""
            trail = " " if inner[-1:].isspace() else ""
            return MathResult(f"{lead}{unicodedata.normalize('NFC', text)}{trail}", kept=False)
    try:
        tokens = _parse(source)
        if policy == "tex":
            return MathResult(_as_tex(source), kept=False)
        text = _BLANKS.sub(" ", _render(tokens)).strip()
    except (Unfaithful, RecursionError):
        return MathResult(_as_tex(inner), kept=True)
    if not text:
        if _ONLY_SPACE.fullmatch(inner):  # `$\\,$`: a space typed in math
            return MathResult(" ", kept=False)
        return MathResult(_as_tex(inner), kept=True)
    # Keep a blank the source had between the span and its neighbours (``$5 and $10``).
    lead = " " if inner[:1].isspace() else ""
    trail = " " if inner[-1:].isspace() else ""
    return MathResult(f"{lead}{unicodedata.normalize('NFC', text)}{trail}", kept=False)
