"""AASTeX (the American Astronomical Society's class): its astronomy symbols and units.

Read from ``aastex631.cls`` (AASTeX 6.3.1, github.com/AASJournals/AASTeX60, ``cls/``, the
definitions after ``\\newcommand\\phn``): ``\\sun`` is ``\\odot``, ``\\arcsec`` is
``$^{\\prime\\prime}$``, ``\\fdg`` a degree sign over the decimal point, ``\\ion{Fe}{2}`` the
element, a space and the stage in Roman numerals. A&A's ``aa.cls`` and MNRAS's ``mnras.cls``
define the same names for the same signs. The class defines no ``\\kms`` nor ``\\Msun``:
those are authors' own.
"""

SOURCE = (
    "aastex631.cls (AASTeX 6.3.1), github.com/AASJournals/AASTeX60/blob/master/cls/aastex631.cls"
)
PACKAGE = "aastex"
ROWS = [
    ("sun", "⊙"),  # \newcommand\sun{\odot}
    ("Sun", "⊙"),
    ("Sol", "⊙"),
    ("earth", "⊕"),  # \newcommand\earth{\oplus}
    ("Earth", "⊕"),
    ("Terra", "⊕"),
    ("degr", "°"),  # \degr is \arcdeg, $^\circ$
    ("arcdeg", "°"),
    ("arcmin", "′"),  # $^\prime$
    ("arcsec", "″"),  # $^{\prime\prime}$
    # A unit over the decimal point: `12\fh5` is 12.ʰ5.
    ("fd", ".ᵈ"),
    ("fh", ".ʰ"),
    ("fm", ".ᵐ"),
    ("fs", ".ˢ"),
    ("fdg", ".°"),
    ("farcm", ".′"),
    ("farcs", ".″"),
    ("fp", ".ᵖ"),
    ("micron", "μm"),  # \mbox{$\mu$m}
    # Not \la, \ga, \sq, \ub, \bv, \vr, \ur: the class defines them too (≲, ≳, □,
    # U−B, B−V, V−R, U−R), but authors of other fields define the same short names for
    # themselves (\bv a bold v, \la a λ), and an abstract does not say its class.
    ("onehalf", "½"),  # \slantfrac{1}{2}
    ("onethird", "⅓"),
    ("twothirds", "⅔"),
    ("onequarter", "¼"),
    ("threequarters", "¾"),
    ("ubvr", "UBVR"),  # $U\!BV\!R$
    ("nodata", "⋯"),  # ~$\cdots$~
    ("diameter", "⌀"),
    ("ion", "Fe II", "ion", "\\ion{Fe}{2}"),  # #1$\;$\rmfamily\@Roman{#2}
    ("case", "1/2", "fraction", "\\case{1}{2}"),  # \mbox{$\frac{#1}{#2}$}
    ("slantfrac", "3/4", "fraction", "\\slantfrac{3}{4}"),
]
