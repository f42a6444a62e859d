"""amsmath and amssymb (and latexsym): what pylatexenc's table lacks.

Read from the AMS's ``amsldoc.pdf`` (User's Guide for the amsmath Package, version 2.1,
sections 4.1 "Dots", 4.4 "Binomial coefficients", 3.13 "Boxed formulas", 4.3 "Operator
names") and ``amssymb``'s symbol list (``amssymb.sty`` / ``amsfonts``' ``amssymb.pdf``, "The
AMS symbols"), with the code points unicode-math's ``unicode-math-table.tex`` gives the same
names. Every other AMS symbol is in :mod:`validation.texsymbols_pylatexenc` already.
"""

SOURCE = (
    "amsldoc.pdf (amsmath 2.1) and amssymb.pdf (amsfonts 3.04), "
    "CTAN macros/latex/required/amsmath, fonts/amsfonts"
)
PACKAGE = "amsmath/amssymb"
ROWS = [
    ("Finv", "Ⅎ"),
    ("Game", "⅁"),
    ("shortmid", "∣"),
    ("shortparallel", "∥"),
    ("iiiint", "⨌"),
    ("varsubsetneq", "⊊"),
    ("Bbbk", "𝕜"),
    ("varpropto", "∝"),
    ("diagdown", "╲"),
    ("dashrightarrow", "⇢"),
    ("dashleftarrow", "⇠"),
    ("leadsto", "⇝"),
    ("bigodot", "⨀"),
    ("Join", "⨝"),
    # amsmath's \binom prints n over k in parentheses: read aloud, "n choose k".
    ("binom", "(n choose k)", "binom", "\\binom{n}{k}"),
    ("dbinom", "(n choose k)", "binom", "\\dbinom{n}{k}"),
    ("tbinom", "(n choose k)", "binom", "\\tbinom{n}{k}"),
    # \boxed draws a frame around its formula, which says nothing more.
    ("boxed", "x = 1", "argument", "\\boxed{x = 1}"),
    ("injlim", "inj lim", "operator"),
    ("projlim", "proj lim", "operator"),
]
