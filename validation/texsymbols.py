"""What TeX's symbol macros stand for: ``\\alpha`` is ``α``, ``\\neg`` is ``¬``.

One table for the two places that need it: the math converter (``curate/texmath.py``) writes
these characters, and the comparison form of a record (:mod:`validation.normalize`) reads a
formula the same way, so that ``$\\alpha$-helix`` and ``α-helix`` of the same paper compare
equal. ``validation/`` never imports ``curate``, so the table lives here.

The base is pylatexenc's table of macros that stand for a fixed string (a library that is kept
up to date; 830 names), copied as data into :mod:`validation.texsymbols_pylatexenc` so that
validation never imports pylatexenc (a test holds the copy equal to the library). On top of it:

* :data:`OVERRIDES`, where pylatexenc's character is not the one authors mean (``\\epsilon`` is
  the letter ε, not the lunate symbol ϵ; ``\\eth`` is ð);
* :data:`ADDITIONS`, macros pylatexenc does not know, each checked against the code point
  unicode-math gives the same name (``unicode-math-table.tex``) where it has one, and against
  pandoc's reading (``bench/bench_math.py --tables``);
* the symbols of published classes and packages (:mod:`validation.texpackages`: AASTeX's
  ``\\sun``, ``\\degr``, ``\\arcsec``, amssymb's additions, physics' ``\\grad``). AASTeX's
  ``\\sun`` is the solar symbol ⊙; unicode-math's and pandoc's is ☼, a weather sun, which no
  astronomer means.

Where the tables differ otherwise (14 more of the 331 names shared with unicode-math, 35 more
of the 482 pandoc converts), it is a glyph variant of one symbol (``\\cdot`` U+00B7 or U+22C5,
``\\perp`` ⊥ or ⟂, ``\\longrightarrow`` ⟶ or →); pandoc's ``\\backslash`` is ∖ (set minus).
"""

from __future__ import annotations

from functools import lru_cache

OVERRIDES: dict[str, str] = {
    # pylatexenc maps these to the lunate/symbol variants U+03F5 and U+03D5; authors mean the
    # letters, as curate/clean.py decides for text mode too.
    "epsilon": "ε",
    "phi": "φ",
    "ne": "≠",
    "prime": "′",
    "colon": ":",
    "bot": "⊥",
    "thicksim": "∼",
    "degree": "°",
    "dotsb": "⋯",  # pylatexenc: …
    "dotsm": "⋯",  # pylatexenc: …
    "dotsi": "⋯",  # pylatexenc: …
    "eth": "ð",  # pylatexenc: ƪ (U+01AA), a letter of another alphabet
}

ADDITIONS: dict[str, str] = {
    # unicode-math's names (and plain TeX's) that pylatexenc lacks.
    "neg": "¬",
    "land": "∧",
    "lor": "∨",
    "Re": "ℜ",
    "Im": "ℑ",
    "coloneq": "≔",
    "coloneqq": "≔",
    "eqqcolon": "≕",
    "models": "⊧",
    "checkmark": "✓",
    "ddagger": "‡",
    "lll": "⋘",
    "ggg": "⋙",
    "eqsim": "≂",
    "ncong": "≇",
    "nsim": "≁",
    "bigsqcup": "⨆",
    "biguplus": "⨄",
    "clubsuit": "♣",
    "heartsuit": "♡",
    "spadesuit": "♠",
    "diamondsuit": "♢",
    "bigstar": "★",
    "imath": "ı",
    "jmath": "ȷ",
    "iff": "⟺",
    "implies": "⟹",
    "impliedby": "⟸",
    "gets": "←",
    "restriction": "↾",
    "lbrack": "[",
    "rbrack": "]",
    "lparen": "(",
    "rparen": ")",
    "llbracket": "⟦",
    "rrbracket": "⟧",
    "vDash": "⊨",
    "medbullet": "•",
    "hdots": "…",
    "angstrom": "Å",  # unicode-math's \\Angstrom; astronomers type it in lower case
}


# Citations and cross-references are no symbols: they take an argument, and pylatexenc's
# "text" for them is a placeholder of its own (``<cit.>``, ``<ref>``), which a formula that holds
# one (``$x \\cite{a}$``) wrote into the row. Inside math they are unknown macros: kept as typed.
NOT_SYMBOLS = frozenset(("Cref", "autoref", "cite", "citep", "citet", "cref", "eqref", "ref"))


@lru_cache(maxsize=1)
def symbols() -> dict[str, str]:
    """Macro name (without the backslash) → the text it stands for; macros without arguments."""
    from validation import texpackages
    from validation.texsymbols_pylatexenc import PYLATEXENC

    table = {**PYLATEXENC, **OVERRIDES, **ADDITIONS, **texpackages.symbols()}
    return {name: text for name, text in table.items() if name not in NOT_SYMBOLS}
