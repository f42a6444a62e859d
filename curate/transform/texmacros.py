"""The macros of published packages (:mod:`validation.texpackages`) in a formula, by kind.

The tables say what each macro is and what its package prints; this module reads each kind's
arguments once: AASTeX's ``\\ion``, siunitx's quantities, numbers and units, physics' Dirac
notation, braces and derivatives, mhchem's formulae, amsmath's ``\\binom``. Whatever a kind
cannot write faithfully raises the converter's ``Unfaithful``, and the formula is kept as TeX.
Output is built by joining strings, never from format templates, so nothing of the code's own
can reach the text.
"""

from __future__ import annotations

import re
from typing import Any

from validation import texpackages
from validation.texpackages import siunitx

__all__ = ["arity", "defines", "render"]

_TABLE = texpackages.by_name()
_KINDS_WITH_ARGUMENTS = frozenset(
    "ion fraction binom argument accent operator delimited quantity units number range angle "
    "differential derivative ce ch".split()
)
_ARITY = {"ion": 2, "fraction": 2, "binom": 2, "argument": 1, "accent": 1, "ce": 1, "ch": 1}
_ACCENT_MARKS = {"va": "\u20d7", "vectorarrow": "\u20d7", "vu": "\u0302", "vectorunit": "\u0302"}

Token = tuple[str, object]


def defines(name: str) -> bool:
    """A package macro this module renders (symbols are in the symbol table already)."""
    macro = _TABLE.get(name)
    return macro is not None and macro.kind in _KINDS_WITH_ARGUMENTS


def arity(name: str) -> int:
    """How many arguments the macro takes when it is itself an argument (``M_\\ion{…}{…}``)."""
    macro = _TABLE.get(name)
    return _ARITY.get(macro.kind, 0) if macro is not None else 0


def render(name: str, tokens: list[Token], i: int, pieces: list[Any], hooks: Any) -> int:
    """Append what ``\\name`` (``tokens[i - 1]``) prints to ``pieces``; the index after it."""
    kind = _TABLE[name].kind
    if kind in ("argument", "accent", "operator", "fraction", "binom", "ion"):
        return _simple(kind, name, tokens, i, pieces, hooks)
    if kind == "delimited":
        return _delimited(name, tokens, i, pieces, hooks)
    if kind in ("differential", "derivative"):
        return _derivative(name, tokens, i, pieces, hooks)
    if kind in ("ce", "ch"):
        j = hooks.skip_blanks(tokens, i)
        if kind == "ch" and not (j < len(tokens) and tokens[j][0] == "g"):
            raise hooks.Unfaithful("\\ch without its braced formula")  # `\ch[options]{…}`
        arg, i = hooks.argument(tokens, i)
        if kind == "ch" and not _CH_COMPOUND.fullmatch(_shape(arg)):
            raise hooks.Unfaithful("\\ch of more than one compound")
        pieces.append(_ce(arg, hooks))
        return i
    return _siunitx(kind, name, tokens, i, pieces, hooks)


def _simple(kind: str, name: str, tokens: list[Token], i: int, pieces: list[Any], h: Any) -> int:
    if kind == "operator":
        pieces.append(h.Op(_TABLE[name].prints))
        return i
    first, i = h.argument(tokens, i)
    if kind == "argument":
        pieces.append(h.render(first))
    elif kind == "accent":
        pieces.append(h.accented(_ACCENT_MARKS[name], h.render(first), name))
    else:
        second, i = h.argument(tokens, i)
        a, b = h.render(first).strip(), h.render(second).strip()
        if kind == "fraction":
            pieces.append(h.Frac(h.operand(a) + "/" + h.operand(b)))
        elif kind == "binom":
            pieces.append("(" + a + " choose " + b + ")")
        else:  # ion: the element, a space and the stage in Roman numerals
            if a and re.fullmatch(r"[ivxIVX]+", b):  # the numeral typed as such: `{ii}`
                pieces.append(a + " " + b.upper())
            elif not a or not b.isdigit() or not 0 < int(b) < 40:
                raise h.Unfaithful("\\ion with a stage that is not a number")
            else:
                pieces.append(a + " " + _roman(int(b)))
    return i


def _roman(n: int) -> str:
    out = []
    for value, letters in ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)


# physics' and braket's notations: (fewest, most arguments, how they are put together).
def _join_bar(args: list[str]) -> str:
    return "|".join(args)


def _expectation(args: list[str]) -> str:
    """``\\expval{A}`` is ⟨A⟩; ``\\expval{A}{\\psi}`` is ⟨ψ|A|ψ⟩."""
    if len(args) == 1:
        return "⟨" + args[0] + "⟩"
    return "⟨" + args[1] + "|" + args[0] + "|" + args[1] + "⟩"


_DELIMITED = {
    "ket": (1, 1, lambda a: "|" + a[0] + "⟩"),
    "bra": (1, 1, lambda a: "⟨" + a[0] + "|"),
    "braket": (1, 2, lambda a: "⟨" + _join_bar(a) + "⟩"),
    "ip": (2, 2, lambda a: "⟨" + _join_bar(a) + "⟩"),
    "innerproduct": (2, 2, lambda a: "⟨" + _join_bar(a) + "⟩"),
    "ketbra": (2, 2, lambda a: "|" + a[0] + "⟩⟨" + a[1] + "|"),
    "dyad": (2, 2, lambda a: "|" + a[0] + "⟩⟨" + a[1] + "|"),
    "outerproduct": (2, 2, lambda a: "|" + a[0] + "⟩⟨" + a[1] + "|"),
    "expval": (1, 2, lambda a: _expectation(a)),
    "ev": (1, 2, lambda a: _expectation(a)),
    "expectationvalue": (1, 2, lambda a: _expectation(a)),
    "mel": (3, 3, lambda a: "⟨" + _join_bar(a) + "⟩"),
    "matrixel": (3, 3, lambda a: "⟨" + _join_bar(a) + "⟩"),
    "abs": (1, 1, lambda a: "|" + a[0] + "|"),
    "absolutevalue": (1, 1, lambda a: "|" + a[0] + "|"),
    "norm": (1, 1, lambda a: "‖" + a[0] + "‖"),
    "order": (1, 1, lambda a: "O(" + a[0] + ")"),
    "comm": (2, 2, lambda a: "[" + ", ".join(a) + "]"),
    "commutator": (2, 2, lambda a: "[" + ", ".join(a) + "]"),
    "acomm": (2, 2, lambda a: "{" + ", ".join(a) + "}"),
    "anticommutator": (2, 2, lambda a: "{" + ", ".join(a) + "}"),
    "pb": (2, 2, lambda a: "{" + ", ".join(a) + "}"),
    "pqty": (1, 1, lambda a: "(" + a[0] + ")"),
    "bqty": (1, 1, lambda a: "[" + a[0] + "]"),
    "Bqty": (1, 1, lambda a: "{" + a[0] + "}"),
    "vqty": (1, 1, lambda a: "|" + a[0] + "|"),
}  # fmt: skip


def _groups(tokens: list[Token], i: int, fewest: int, most: int, h: Any) -> tuple[list[str], int]:
    """``fewest`` arguments, then more while a braced group follows (``\\braket{a}{b}``)."""
    args: list[str] = []
    while len(args) < most:
        j = h.skip_blanks(tokens, i)
        if len(args) >= fewest and not (j < len(tokens) and tokens[j][0] == "g"):
            break
        if not (j < len(tokens) and tokens[j][0] == "g") and (
            most > 1 or not (j < len(tokens) and str(tokens[j][1]).isalnum())
        ):  # `\ev(x)`, `\comm{A} B`: physics takes braced arguments
            raise h.Unfaithful("an argument without braces")
        arg, i = h.argument(tokens, i)
        args.append(h.render(arg).strip())
    return args, i


def _delimited(name: str, tokens: list[Token], i: int, pieces: list[Any], h: Any) -> int:
    if i < len(tokens) and tokens[i] == ("c", "*"):  # `\abs*{x}`: sizing only
        i += 1
    fewest, most, made = _DELIMITED[name]
    args, i = _groups(tokens, i, fewest, most, h)
    pieces.append(made(args))
    return i


def _bracket_index(tokens: list[Token], i: int, h: Any) -> tuple[str, int]:
    """An optional ``[n]`` (a derivative's order): its text and the index after it."""
    j = h.skip_blanks(tokens, i)
    if j < len(tokens) and tokens[j] == ("c", "["):
        for k in range(j + 1, len(tokens)):
            if tokens[k] == ("c", "]"):
                return h.render(tokens[j + 1 : k]).strip(), k + 1
        raise h.Unfaithful("unclosed [")
    return "", i


def _power(text: str, h: Any) -> str:
    if not text:
        return ""
    if all(ch in h.SUPERSCRIPTS for ch in text):
        return "".join(h.SUPERSCRIPTS[ch] for ch in text)
    return "^" + h.operand(text)


def _derivative(name: str, tokens: list[Token], i: int, pieces: list[Any], h: Any) -> int:
    """physics' ``\\dd{x}`` (dx), ``\\dv{f}{x}`` (df/dx), ``\\pdv{f}{x}{y}`` (∂²f/∂x∂y)."""
    order, i = _bracket_index(tokens, i, h)
    d = "∂" if name in ("pdv", "partialderivative") else "d"
    if _TABLE[name].kind == "differential":
        j = h.skip_blanks(tokens, i)
        body = ""
        if j < len(tokens) and tokens[j][0] == "g":
            arg, i = h.argument(tokens, i)
            body = h.render(arg).strip()
        pieces.append(h.Op(d + _power(order, h) + body) if body else d + _power(order, h))
        return i
    args, i = _groups(tokens, i, 1, 3 if d == "∂" else 2, h)
    if len(args) == 1:  # `\dv{x}`: the operator d/dx
        pieces.append(h.Frac(d + _power(order, h) + "/" + d + args[0] + _power(order, h)))
        return i
    f, xs = args[0], args[1:]
    n = order or (str(len(xs)) if len(xs) > 1 else "")
    below = "".join(d + x + (_power(order, h) if len(xs) == 1 else "") for x in xs)
    pieces.append(h.Frac(d + _power(n, h) + h.operand(f) + "/" + below))
    return i


# --- siunitx ------------------------------------------------------------------------------------
_NUMBER = re.compile(
    r"(?P<sign>[-+−]?)\s*(?P<value>\d*(?:[.,]\d*)?)\s*(?P<unc>\(\d+(?:[.,]\d+)?\))?"
    r"(?:\s*\+-\s*(?P<pm>\d*(?:[.,]\d*)?))?"
    r"(?:\s*[eEdD]\s*(?P<exp>[-+]?\d+))?"
)
_CLOSE_UNITS = frozenset("° ′ ″".split())


def _number(text: str, h: Any) -> str:
    """siunitx's number: ``1.5e-3`` is ``1.5 × 10⁻³``, ``1.2 +- 0.3`` is ``1.2 ± 0.3``;
    products (``2 x 3``) and the ``\\pm`` symbol as typed."""
    parts = [p.strip() for p in re.split(r"\s*[x×]\s*", text.replace("±", "+-").strip())]
    out = []
    for part in parts:
        m = _NUMBER.fullmatch(part)
        if not m or not (m.group("value") or m.group("exp")):
            raise h.Unfaithful(f"\\num{{{text}}}")
        sign = "−" if m.group("sign") in ("-", "−") else m.group("sign")
        piece = sign + m.group("value") + (m.group("unc") or "")
        if m.group("pm") is not None:
            piece += " ± " + m.group("pm")
        if m.group("exp") is not None:
            power = "10" + _power(m.group("exp").lstrip("+"), h)
            piece = power if not m.group("value") else piece + " × " + power
        out.append(piece)
    return " × ".join(out)


def _units(arg: list[Token], h: Any) -> str:
    """siunitx's units: prefixes join their unit, ``\\per`` makes the next power negative,
    units are separated by a space; a literal unit (``km.s^{-1}``) reads ``.`` and ``~`` as
    the separator."""
    if all(kind != "m" for kind, _ in arg):
        literal = [("c", " ") if t in (("c", "."), ("c", "~")) else t for t in arg]
        return " ".join(h.render(literal).split())
    units: list[list[str]] = []  # [symbol, power]
    prefix, per, before = "", False, ""
    k = 0
    while k < len(arg):
        kind, value = arg[k]
        k += 1
        if kind == "c" and str(value).isspace():
            continue
        name = str(value)
        if kind != "m":
            raise h.Unfaithful(f"{name!r} among unit macros")
        if name in siunitx.PREFIXES:
            prefix += siunitx.PREFIXES[name]
        elif name in siunitx.UNITS:
            power = before or "1"
            units.append([prefix + siunitx.UNITS[name], "-" + power if per else power])
            prefix, per, before = "", False, ""
        elif name == "per":
            per = True
        elif name in ("square", "cubic"):
            before = "2" if name == "square" else "3"
        elif name in ("squared", "cubed", "tothe") and units:
            if name == "tothe":
                got, k = h.argument(arg, k)
                power = h.render(got).strip()
            else:
                power = "2" if name == "squared" else "3"
            units[-1][1] = ("-" if units[-1][1].startswith("-") else "") + power
        elif name == "raiseto":
            got, k = h.argument(arg, k)
            before = h.render(got).strip()
        else:
            raise h.Unfaithful(f"\\{name} in units")
    if not units or prefix or per or before:
        raise h.Unfaithful("incomplete units")
    return " ".join(s + ("" if p == "1" else _power(p, h)) for s, p in units)


def _quantity(number: str, units: str) -> str:
    if units in _CLOSE_UNITS:
        return number + units
    return number + " " + units


def _skip_options(tokens: list[Token], i: int, h: Any) -> int:
    """siunitx's ``[options]`` change only how the output looks."""
    _text, i = _bracket_index(tokens, i, h)
    return i


def _siunitx(kind: str, name: str, tokens: list[Token], i: int, pieces: list[Any], h: Any) -> int:
    i = _skip_options(tokens, i, h)
    if kind == "quantity":
        j = h.skip_blanks(tokens, i)
        if j < len(tokens) and tokens[j][0] == "c":  # physics' `\qty(x)`, `\qty[x]`, `\qty|x|`
            return _physics_qty(tokens, j, pieces, h)
        first, i = h.argument(tokens, i)
        k = h.skip_blanks(tokens, i)
        if k < len(tokens) and tokens[k][0] == "g":  # siunitx: number and units
            units, i = h.argument(tokens, i)
            pieces.append(_quantity(_number(h.render(first), h), _units(units, h)))
        else:  # physics' `\qty{x}`: braces
            pieces.append("{" + h.render(first).strip() + "}")
        return i
    if kind == "units":
        arg, i = h.argument(tokens, i)
        pieces.append(_units(arg, h))
    elif kind == "number":
        arg, i = h.argument(tokens, i)
        pieces.append(_number(h.render(arg), h))
    elif kind == "angle":
        arg, i = h.argument(tokens, i)
        parts = h.render(arg).split(";")
        if not 0 < len(parts) <= 3:
            raise h.Unfaithful("\\ang")
        pieces.append(
            "".join(_number(p, h) + m for p, m in zip(parts, "°′″", strict=False) if p.strip())
        )
    else:  # range: `\SIrange{10}{20}{\kelvin}` is "10 K to 20 K" (range-phrase "to")
        low, i = h.argument(tokens, i)
        high, i = h.argument(tokens, i)
        a, b = _number(h.render(low), h), _number(h.render(high), h)
        if name == "numrange":
            pieces.append(a + " to " + b)
        else:
            units, i = h.argument(tokens, i)
            u = _units(units, h)
            pieces.append(_quantity(a, u) + " to " + _quantity(b, u))
    return i


_PAIRS = {"(": ")", "[": "]", "|": "|"}


def _physics_qty(tokens: list[Token], j: int, pieces: list[Any], h: Any) -> int:
    opening = str(tokens[j][1])
    if opening not in _PAIRS:
        raise h.Unfaithful(f"\\qty{opening}")
    closing, depth = _PAIRS[opening], 0
    for k in range(j + 1, len(tokens)):
        if tokens[k] == ("c", closing) and depth == 0:
            pieces.append(opening + h.render(tokens[j + 1 : k]).strip() + closing)
            return k + 1
        if opening != "|" and tokens[k][0] == "c":
            depth += {opening: 1, closing: -1}.get(str(tokens[k][1]), 0)
    raise h.Unfaithful("unclosed \\qty")


# --- mhchem and chemformula ---------------------------------------------------------------------
# chemformula's `\ch{…}` where it prints what mhchem's `\ce{…}` does: one compound, no blank, a
# letter or bracket first, a charge only at the end or after `^` (validation/texpackages/
# chemformula.py). `G` stands for a braced group, which only a script may take.
_CH_COMPOUND = re.compile(r"[A-Za-z(\[](?:[A-Za-z0-9()\[\]]|_G|_\d+)*(?:\^G|\^\d*[+-]|[+-])?")


def _shape(arg: list[Token]) -> str:
    """The argument's characters, a group as ``G`` and a macro as ``\\``."""
    return "".join({"g": "G", "m": "\\"}.get(kind, str(value)) for kind, value in arg)


_ARROWS = (("<=>", "⇌"), ("<->", "↔"), ("->", "→"), ("<-", "←"))


def _ce(arg: list[Token], h: Any) -> str:
    """A formula whole in Unicode scripts, or Unfaithful (kept whole): never half and half."""
    out: list[str] = []
    prev = "start"  # start | space | letter | sub | close | digit
    k = 0
    while k < len(arg):
        kind, value = arg[k]
        k += 1
        ch = str(value)
        if kind != "c":
            raise h.Unfaithful("\\ce with " + ("a group" if kind == "g" else "\\" + ch))
        rest = "".join(str(v) for _, v in arg[k - 1 : k + 2] if isinstance(v, str))
        arrow = next((a for a in _ARROWS if rest.startswith(a[0])), None)
        if arrow is not None:
            k += len(arrow[0]) - 1
            if k < len(arg) and arg[k] == ("c", "["):
                raise h.Unfaithful("\\ce arrow with a label")
            out.append(arrow[1])
            prev = "space"
        elif ch in "_^":
            script, k = _ce_script(arg, k, ch, h)
            out.append(script)
            prev = "sub"
        elif ch.isdigit() or (ch == "." and prev == "sub"):
            sub = prev in ("letter", "close", "sub")
            out.append(h.SUBSCRIPTS[ch] if sub and ch.isdigit() else ch)
            prev = "sub" if sub else "digit"
        elif ch in "+-" and prev in ("letter", "sub", "close") and _ends_word(arg, k):
            out.append(h.SUPERSCRIPTS[ch])
            prev = "sub"
        elif ch.isalpha():
            out.append(ch)
            prev = "letter"
        elif ch in ")]":
            out.append(ch)
            prev = "close"
        elif ch.isspace() or ch in "+=([-":
            out.append(ch)
            prev = "space" if ch.isspace() else "start"
        elif ch == "*":
            out.append("·")
            prev = "start"
        else:
            raise h.Unfaithful(f"{ch!r} in \\ce")
    return "".join(out).strip()


def _ends_word(arg: list[Token], k: int) -> bool:
    return k >= len(arg) or (arg[k][0] == "c" and (str(arg[k][1]).isspace() or arg[k][1] in ")]"))


def _ce_script(arg: list[Token], k: int, mark: str, h: Any) -> tuple[str, int]:
    """``_5``, ``_{15.5}``, ``^2-``, ``^{2+}``: every character in its script form (a decimal
    point stays on the line, as mhchem prints it)."""
    table = h.SUBSCRIPTS if mark == "_" else h.SUPERSCRIPTS
    if k < len(arg) and arg[k][0] == "g":
        chars = [str(v) for kind, v in arg[k][1] if kind == "c"]  # type: ignore[union-attr]
        if len(chars) != len(arg[k][1]):  # type: ignore[arg-type]
            raise h.Unfaithful("a command in a \\ce script")
        k += 1
    else:
        chars = []
        while (
            k < len(arg)
            and arg[k][0] == "c"
            and (str(arg[k][1]).isdigit() or (mark == "^" and arg[k][1] in "+-") or not chars)
        ):
            chars.append(str(arg[k][1]))
            k += 1
    text = "".join(chars).strip()
    if not text or not all(ch in table or ch == "." for ch in text):
        raise h.Unfaithful(f"\\ce script {text!r}")
    return "".join(table.get(ch, ch) for ch in text), k
