"""The symbol table shared by the math converter and the comparison form."""

from __future__ import annotations

import unicodedata
from datetime import date
from importlib.metadata import version

import pytest
from pylatexenc.latex2text import get_default_latex_context_db

from validation import texsymbols
from validation.texsymbols_pylatexenc import COPIED_FROM, PYLATEXENC


def test_the_copy_of_pylatexencs_table_is_the_librarys() -> None:
    table: dict[str, str] = {}
    for spec in get_default_latex_context_db().iter_macro_specs():
        repl = getattr(spec, "simplify_repl", None)
        if isinstance(repl, str) and "%" not in repl and repl.strip():
            table.setdefault(spec.macroname, repl)
    # \today is the date of the run, no symbol: the copy leaves it out (it held the day it
    # was copied, and this test failed on every other day).
    today = table.pop("today", None)
    assert today in (None, date.today().strftime("%B %-d, %Y"))
    assert "today" not in PYLATEXENC
    if version("pylatexenc") == COPIED_FROM:
        assert table == PYLATEXENC
    else:
        # An older release the floor allows (2.6 lacks \exp): the copy is still the data
        # curate uses, so the library's table must be part of it, no entry with another value.
        assert table.items() <= PYLATEXENC.items()


def test_additions_are_new_and_overrides_change_something() -> None:
    assert not set(texsymbols.ADDITIONS) & set(PYLATEXENC)
    for name, char in texsymbols.OVERRIDES.items():
        assert PYLATEXENC.get(name) != char, name


@pytest.mark.parametrize(
    ("name", "unicode_name"),
    [
        # The code points unicode-math (unicode-math-table.tex) gives these names.
        ("neg", "NOT SIGN"),
        ("Re", "BLACK-LETTER CAPITAL R"),
        ("Im", "BLACK-LETTER CAPITAL I"),
        ("coloneq", "COLON EQUALS"),
        ("models", "MODELS"),
        ("checkmark", "CHECK MARK"),
        ("ddagger", "DOUBLE DAGGER"),
        ("lll", "VERY MUCH LESS-THAN"),
        ("ggg", "VERY MUCH GREATER-THAN"),
        ("eqsim", "MINUS TILDE"),
        ("ncong", "NEITHER APPROXIMATELY NOR ACTUALLY EQUAL TO"),
        ("nsim", "NOT TILDE"),
        ("bigsqcup", "N-ARY SQUARE UNION OPERATOR"),
        ("biguplus", "N-ARY UNION OPERATOR WITH PLUS"),
        ("bigstar", "BLACK STAR"),
        ("eth", "LATIN SMALL LETTER ETH"),
        # The Sun and arc units of AASTeX and A&A.
        ("sun", "CIRCLED DOT OPERATOR"),
        ("arcmin", "PRIME"),
        ("arcsec", "DOUBLE PRIME"),
        ("degr", "DEGREE SIGN"),
    ],
)
def test_what_a_name_stands_for(name: str, unicode_name: str) -> None:
    assert unicodedata.name(texsymbols.symbols()[name]) == unicode_name


def test_citations_and_references_are_no_symbols() -> None:
    table = texsymbols.symbols()
    assert not texsymbols.NOT_SYMBOLS & set(table)
    assert not [
        name for name, text in table.items() if "<" in text and ">" in text and len(text) > 1
    ]
