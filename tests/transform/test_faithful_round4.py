"""Eight ways text lost or changed its meaning, each with examples written for the test (and the
dev-corpus row where one exists): an unknown macro with ``{}``, a leaked template, ``\\$`` in
math, TeX quotes between dollars, TeX in prose, marks that carry meaning, a subscript after
``^*``, and mhchem formulae."""

from __future__ import annotations

import pytest

from curate.transform.clean import clean_text


def _clean(raw: str) -> tuple[str, tuple[str, ...]]:
    result = clean_text(raw)
    return result.text, result.math_kept


@pytest.mark.parametrize(
    ("raw", "clean", "kept"),
    [
        (r"we introduce \benchname{}, the first unified benchmark",
         r"we introduce \benchname{}, the first unified benchmark", r"\benchname{}"),
        (r"the Multi-Scale Transformer (\msat{}) is", r"the Multi-Scale Transformer (\msat{}) is",
         r"\msat{}"),
        (r"\RE{}CuAs$_2$ compounds", r"\RE{}CuAs₂ compounds", r"\RE{}"),
        # arXiv:2505.06642: `\LCDM{}` is kept as typed, not deleted.
        (r"in a \LCDM{} universe", r"in a \LCDM{} universe", r"\LCDM{}"),
        # An unknown macro with an argument: what it prints is unknown, so it is kept whole
        # (neurips2018:row0077, `\emc{margin}`).
        (r"The notion of \emc{margin}, minimum", r"The notion of \emc{margin}, minimum",
         r"\emc{margin}"),
    ],
)  # fmt: skip
def test_an_unknown_macro_with_a_group_is_kept_as_typed_and_flagged(
    raw: str, clean: str, kept: str
) -> None:
    assert _clean(raw) == (clean, (kept,))


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (r"the rate $\frac{dy}y$ grows", "the rate (dy)/y grows"),
        (r"the rate \frac{dy}y grows", "the rate (dy)/y grows"),
        (r"with $\frac12$ and $\frac a{b+c}$", "with 1/2 and a/(b+c)"),
        (r"a $\frac\alpha\beta$ ratio", "a α/β ratio"),
    ],
)
def test_every_argument_form_parses_and_no_template_leaks(raw: str, clean: str) -> None:
    text, kept = _clean(raw)
    assert (text, kept) == (clean, ())
    assert "%s" not in text and "{0}" not in text


def test_an_escaped_dollar_inside_math_is_a_dollar() -> None:
    assert _clean(r"grants above $\$250,000$ per year") == ("grants above $250,000 per year", ())
    assert _clean(r"costs $\$5 + x$ here") == ("costs $5 + x here", ())


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (r'like$"$ deep image prior$"$ and $``$deep decoder$"$ work',
         "like “deep image prior” and “deep decoder” work"),
        (r"the $``$best$''$ model", "the “best” model"),
        (r'he wrote $"$no$"$, then left', "he wrote “no”, then left"),
    ],
)  # fmt: skip
def test_tex_quotes_between_dollars_are_quotation_marks(raw: str, clean: str) -> None:
    assert _clean(raw) == (clean, ())


def test_primes_between_dollars_are_primes_unless_they_close_a_quote() -> None:
    # arXiv:2505.16255: `1.$''$6` is 1.6 arcseconds, not a closing quote.
    assert _clean(r"resolution (1.$''$6 or $\sim28$ pc)") == ("resolution (1.′′6 or ∼28 pc)", ())


def test_a_quote_between_two_formulas_is_not_a_quote_span() -> None:
    # `$x$'$y$`: the `$'$` in it closes one formula and opens the next; the `'` is prose.
    assert _clean(r"with $x$'$y$ and") == ("with x'y and", ())


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (r"the transform \operatorname H_{v, \epsilon}f(x) is", "the transform H_(v, ε)f(x) is"),
        (r"grows as \sqrt{n}.", "grows as √n."),
        (r"E.\thinspace M.\thinspace Stein", "E. M. Stein"),
        (r"a\enspace b\quad c\;d\,e~f", "a b c d e f"),
    ],
)
def test_tex_in_prose_is_converted_whole_and_spacing_macros_are_spaces(
    raw: str, clean: str
) -> None:
    assert _clean(raw) == (clean, ())


def test_a_prose_formula_ends_before_a_quote_of_the_prose() -> None:
    assert _clean(r"the \sqrt{n}'s growth") == ("the √n's growth", ())


def test_tex_in_prose_that_cannot_be_converted_is_kept_whole() -> None:
    text, kept = _clean(r"the map \operatorname H_{v}\Ot(x) is")
    assert kept == (r"$\operatorname H_{v}\Ot(x)$",) and kept[0] in text


def test_an_underline_is_kept_as_a_combining_low_line() -> None:
    assert _clean(r"$\underline{\mathcal C}(\Lambda)$ is stable") == ("𝒞̲(Λ) is stable", ())
    assert _clean(r"$\underline{ab}$") == ("a̲b̲", ())


@pytest.mark.parametrize(
    "raw",
    [r"$SgrA^*_{\mathrm{Keck}}$ data", r"SgrA^*_{\mathrm{Keck}} data"],
)
def test_a_subscript_after_a_starred_superscript_is_kept(raw: str) -> None:
    assert _clean(raw) == ("SgrA_(Keck)^∗ data", ())


@pytest.mark.parametrize(
    ("raw", "clean", "kept"),
    [
        (r"\ce{Na_5Co_{15.5}Te_6O_{36}} crystals", "Na₅Co₁₅.₅Te₆O₃₆ crystals", ()),
        (r"$\ce{Fe2O3}$ and \ce{NH4+}", "Fe₂O₃ and NH₄⁺", ()),
        (r"\ce{C_nH_{2n}} chains", "CₙH₂ₙ chains", ()),
        # Unicode has no subscript y: the formula is kept whole, not half converted.
        (r"\ce{Fe_{y}O_{2y}} films", r"$\ce{Fe_{y}O_{2y}}$ films", (r"$\ce{Fe_{y}O_{2y}}$",)),
    ],
)
def test_an_mhchem_formula_is_converted_whole_or_kept_whole(
    raw: str, clean: str, kept: tuple[str, ...]
) -> None:
    assert _clean(raw) == (clean, kept)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        # arXiv:2507.16957: LaTeX's verbatim text is the text as typed.
        (
            r"we present \verb|CosMomentum|, a public toolkit",
            "we present CosMomentum, a public toolkit",
        ),
        # neurips2018:row0665: `\left( … \right)` typed in prose is one formula.
        (r"regrets of near-O\left(\log^{2}T\right). This", "regrets of near-O(log²T). This"),
        (r"a \left( x + y \right) b", "a ( x + y ) b"),
    ],
)
def test_latex_own_verbatim_and_sized_delimiters_in_prose(raw: str, clean: str) -> None:
    assert _clean(raw) == (clean, ())
