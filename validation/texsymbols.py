"""What TeX's symbol macros stand for: ``\\alpha`` is ``α``, ``\\neg`` is ``¬``.

One table for the two places that need it: the math converter (``curate/texmath.py``) writes
these characters, and the comparison form of a record (:mod:`validation.normalize`) reads a
formula the same way, so that ``$\\alpha$-helix`` and ``α-helix`` of the same paper compare
equal. ``validation/`` never imports ``curate``, so the table lives here.

The base is pylatexenc's table of macros that stand for a fixed string (a library that is kept
up to date; about 830 names), loaded only when a text holds a command. On top of it, as data:

* :data:`OVERRIDES`, where pylatexenc's character is not the one authors mean (``\\epsilon`` is
  the letter ε, not the lunate symbol ϵ; ``\\eth`` is ð);
* :data:`ADDITIONS`, macros pylatexenc does not know, each checked against the code point
  unicode-math gives the same name (``unicode-math-table.tex``) where it has one, and against
  pandoc's reading (``bench/bench_math.py --tables``); and the astronomy journals' unit macros
  (AASTeX and A&A define ``\\sun``, ``\\degr``, ``\\arcmin``, ``\\arcsec``), common in arXiv
  abstracts.
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
    "ast": "∗",
    "le": "≤",
    "ge": "≥",
    "leqslant": "⩽",
    "geqslant": "⩾",
    "lvert": "|",
    "rvert": "|",
    "vert": "|",
    "Vert": "‖",
    "lVert": "‖",
    "rVert": "‖",
    "mid": "|",
    "colon": ":",
    "dots": "…",
    "ldots": "…",
    "cdots": "⋯",
    "top": "⊤",
    "bot": "⊥",
    "thicksim": "∼",
    "circledast": "⊛",
    "triangleq": "≜",
    "varpi": "ϖ",
    "varrho": "ϱ",
    "AA": "Å",
    "degree": "°",
    "eth": "ð",  # pylatexenc: ƪ (U+01AA), a letter of another alphabet
}

ADDITIONS: dict[str, str] = {
    # unicode-math's names (and plain TeX's) that pylatexenc lacks.
    "neg": "¬",
    "lnot": "¬",
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
    "hslash": "ℏ",
    "nexists": "∄",
    "varnothing": "∅",
    "complement": "∁",
    "iff": "⟺",
    "implies": "⟹",
    "impliedby": "⟸",
    "gets": "←",
    "restriction": "↾",
    "lightning": "↯",
    "lbrack": "[",
    "rbrack": "]",
    "lparen": "(",
    "rparen": ")",
    "llbracket": "⟦",
    "rrbracket": "⟧",
    "Vdash": "⊩",
    "vDash": "⊨",
    "nvdash": "⊬",
    "nvDash": "⊭",
    "upharpoonright": "↾",
    "medbullet": "•",
    "dotsc": "…",
    "dotsb": "⋯",
    "dotsm": "⋯",
    "dotsi": "⋯",
    "dotso": "…",
    "hdots": "…",
    # Astronomy (AASTeX, A&A): the Sun, degrees and arc units.
    "sun": "⊙",
    "Sun": "⊙",
    "earth": "⊕",
    "degr": "°",
    "arcdeg": "°",
    "arcmin": "′",
    "arcsec": "″",
    "micron": "μm",
    "angstrom": "Å",
}


@lru_cache(maxsize=1)
def symbols() -> dict[str, str]:
    """Macro name (without the backslash) → the text it stands for; macros without arguments.

    Loaded on first use: importing pylatexenc costs start-up time that a text without a
    command never needs.
    """
    from pylatexenc.latex2text import get_default_latex_context_db

    table: dict[str, str] = {}
    for spec in get_default_latex_context_db().iter_macro_specs():
        repl = getattr(spec, "simplify_repl", None)
        if isinstance(repl, str) and "%" not in repl and repl.strip():
            table.setdefault(spec.macroname, repl)
    table.update(OVERRIDES)
    table.update(ADDITIONS)
    return table
