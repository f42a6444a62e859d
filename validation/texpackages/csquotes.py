"""csquotes (Philipp Lehman's and Joseph Wright's package): quotation commands.

Read from the csquotes manual (``csquotes.pdf``, version 5.2, CTAN macros/latex/contrib/
csquotes), section 3.1 "Quoting regular text": ``\\enquote{text}`` prints the text between the
outer quotation marks of the document's language (English: “ ”), ``\\enquote*`` between the
inner ones (‘ ’). ``\\textquote`` takes the same argument after an optional citation.
"""

SOURCE = "csquotes.pdf (csquotes 5.2), CTAN macros/latex/contrib/csquotes, section 3.1"
PACKAGE = "csquotes"
# The example's text is `x`: what the command prints is the marks around it.
ROWS = [
    ("enquote", "“x”", "quote", "\\enquote{x}"),
    ("textquote", "“x”", "quote", "\\textquote{x}"),
]
