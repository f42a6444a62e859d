"""chemformula (Clemens Niederberger's package): one chemical compound, ``\\ch{CH3+}``.

Read from the chemformula manual (``chemformula-manual.tex``, version 4.17 of 2022/01/23,
github.com/cgnieder/chemformula, the source of CTAN's ``chemformula-manual.pdf``): section 4
"Compounds" ("All numbers in a compound are treated as subscripts": ``\\ch{H2SO4}``; ``_``
sets one explicitly), "Charges and Other Superscripts" ("If a compound ends with a plus or
minus sign it will be treated as charge sign and typeset as superscript": ``\\ch{AB+}``;
``\\ch{SO4^2-}``). Only a single compound is converted, which chemformula and mhchem print
alike: a blank separates parts of other kinds (stoichiometric factors, arrows, text), a ``+``
or ``-`` inside a compound is a bond (``\\ch{CH3-CH3}``), ``.`` and ``*`` make adducts, and a
leading ``^`` an isotope, all of which stay TeX.
"""

SOURCE = "chemformula-manual.tex (chemformula 4.17), github.com/cgnieder/chemformula"
PACKAGE = "chemformula"
ROWS = [
    ("ch", "CH₃⁺", "ch", "\\ch{CH3+}"),
    ("ch", "H₂SO₄", "ch", "\\ch{H2SO4}"),
    ("ch", "SO₄²⁻", "ch", "\\ch{SO4^2-}"),
    ("ch", "[Cu(NH₃)₄]²⁺", "ch", "\\ch{[Cu(NH3)4]^2+}"),
    ("ch", "(NH₄)₂S", "ch", "\\ch{(NH4)2S}"),
]
