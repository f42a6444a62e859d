"""mhchem (Martin Hensel's package): chemical formulae (``\\ce{H2O}`` is ``H₂O``).

Read from the mhchem manual (``mhchem.pdf``, version 4, CTAN macros/latex/contrib/mhchem),
sections "Chemical formulae" (a number after an element or a closing bracket is a subscript:
``\\ce{H2O}``; ``_`` and ``^`` set one explicitly: ``\\ce{Na_5Co_{15.5}O_{36}}``), "Charges"
(``\\ce{Ca^2+}``, ``\\ce{SO4^2-}``, a final ``+`` or ``-``: ``\\ce{H+}``), "Stoichiometric
numbers" (``\\ce{2H2O}``: a leading number stays on the line) and "Reaction arrows" (``->``,
``<-``, ``<->``, ``<=>``). The converter writes a formula whole in Unicode sub- and
superscripts or, when one part has none (a letter index, ``\\ce{NO_x}``), keeps it whole as TeX.
"""

SOURCE = "mhchem.pdf (mhchem 4), CTAN macros/latex/contrib/mhchem"
PACKAGE = "mhchem"
ROWS = [
    ("ce", "Na₅Co₁₅.₅Te₆O₃₆", "ce", "\\ce{Na_5Co_{15.5}Te_6O_{36}}"),
    ("ce", "H₂O", "ce", "\\ce{H2O}"),
    ("ce", "SO₄²⁻", "ce", "\\ce{SO4^2-}"),
    ("ce", "Ca²⁺", "ce", "\\ce{Ca^{2+}}"),
    ("ce", "2H₂ + O₂ → 2H₂O", "ce", "\\ce{2H2 + O2 -> 2H2O}"),
    ("ce", "CuSO₄·5H₂O", "ce", "\\ce{CuSO4*5H2O}"),
]
