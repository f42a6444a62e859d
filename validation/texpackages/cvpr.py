"""cvpr.sty (the CVPR and ICCV author kit of the Computer Vision Foundation): abbreviations.

Read from ``cvpr.sty`` of the author kit (github.com/cvpr-org/author-kit, the definitions after
``\\DeclareRobustCommand\\onedot``): ``\\def\\eg{\\emph{e.g}\\onedot}``, where ``\\onedot``
writes the final dot unless a dot follows (``\\eg.`` is ``e.g.``, never ``e.g..``) and xspace
keeps the space after it. Machine-learning papers of every venue copy these definitions
whole, so ``\\eg`` means ``e.g.`` wherever it is met; the emphasis is typography.
"""

SOURCE = "cvpr.sty (CVPR/ICCV author kit), github.com/cvpr-org/author-kit"
PACKAGE = "cvpr"
# The example is the macro before a comma: it prints its final dot.
ROWS = [
    ("eg", "e.g.", "abbreviation"),
    ("Eg", "E.g.", "abbreviation"),
    ("ie", "i.e.", "abbreviation"),
    ("Ie", "I.e.", "abbreviation"),
    ("cf", "cf.", "abbreviation"),
    ("Cf", "Cf.", "abbreviation"),
    ("etc", "etc.", "abbreviation"),
    ("vs", "vs.", "abbreviation"),
    ("wrt", "w.r.t.", "abbreviation"),
    ("dof", "d.o.f.", "abbreviation"),
    ("iid", "i.i.d.", "abbreviation"),
    ("wolog", "w.l.o.g.", "abbreviation"),
    ("viz", "viz.", "abbreviation"),
    ("etal", "et al.", "abbreviation"),
]
