"""The package macro tables (validation/texpackages): every entry loads, names its package and
the documentation it was read from, and converts its example to what the package prints."""

from __future__ import annotations

import pytest

from curate.transform.clean import clean_text
from curate.transform.texmath import convert
from validation import texpackages
from validation.texpackages import (
    aastex,
    amsmath,
    chemformula,
    csquotes,
    cvpr,
    mhchem,
    physics,
    siunitx,
)

MODULES = (aastex, amsmath, chemformula, csquotes, cvpr, mhchem, physics, siunitx)
ENTRIES = texpackages.entries()


def test_every_package_module_has_its_source_and_entries() -> None:
    for module in MODULES:
        assert module.SOURCE and module.PACKAGE and module.ROWS
        mine = [m for m in ENTRIES if m.package == module.PACKAGE]
        assert len(mine) == len(module.ROWS) and all(m.source == module.SOURCE for m in mine)
    assert len(ENTRIES) == sum(len(m.ROWS) for m in MODULES)


# Text-mode commands (quotations, abbreviations) are converted in prose; the rest in math.
TEXT_KINDS = ("quote", "abbreviation")
MATH = [m for m in ENTRIES if m.kind not in TEXT_KINDS]
TEXT = [m for m in ENTRIES if m.kind in TEXT_KINDS]


@pytest.mark.parametrize("macro", MATH, ids=lambda m: f"{m.package}:{m.example}")
def test_every_entry_converts_to_what_its_package_prints(macro: texpackages.Macro) -> None:
    assert macro.name and macro.prints and "\\" + macro.name in macro.example
    result = convert("$" + macro.example + "$")
    assert not result.kept, result.text
    assert result.text == macro.prints


@pytest.mark.parametrize("macro", TEXT, ids=lambda m: f"{m.package}:{m.example}")
def test_every_text_entry_converts_to_what_its_package_prints(macro: texpackages.Macro) -> None:
    result = clean_text("we call them " + macro.example + " here")
    assert result.text == "we call them " + macro.prints + " here" and result.math_kept == ()


def test_an_abbreviation_writes_its_dot_once() -> None:
    # openreview:1otaE496Vm, neurips2018:row0037 (cvpr.sty's \eg, copied into many papers).
    assert clean_text(r"tasks, \eg, parsing and \ie. not \etal").text == (
        "tasks, e.g., parsing and i.e. not et al."
    )


def test_a_quotation_command_keeps_its_words_between_curly_quotes() -> None:
    # openreview:rJ5C67-C- (csquotes' \enquote).
    raw = r"as \enquote{sets of individuals} or \enquote{item sets}"
    assert clean_text(raw).text == "as “sets of individuals” or “item sets”"


def test_a_name_two_packages_define_has_one_kind() -> None:
    kinds: dict[str, set[str]] = {}
    for m in ENTRIES:
        kinds.setdefault(m.name, set()).add(m.kind)
    assert {n: k for n, k in kinds.items() if len(k) > 1} == {}


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        # Written for the test, in prose and in math: the same conversion.
        (r"a \ion{Fe}{2} line and $\ion{C}{4}$", "a Fe II line and C IV"),
        (r"the \ion{He}{ii} line", "the He II line"),
        (
            r"at \SI{3}{\kilo\metre\per\second} and \qty{2.5}{\micro\metre}",
            "at 3 km s⁻¹ and 2.5 μm",
        ),
        (r"\num{6.02e23} atoms, \si{\watt\per\square\metre}", "6.02 × 10²³ atoms, W m⁻²"),
        (r"near \SI{5}{\degree} off", "near 5° off"),
        (r"$\ket{0} + \bra{1}$ and $\braket{\psi}{\phi}$", "|0⟩ + ⟨1| and ⟨ψ|φ⟩"),
        (r"$\abs{x}$, $\norm{v}$ and $\dd{x}$", "|x|, ‖v‖ and dx"),
        (r"$\qty(\frac{a}{b})$ is", "(a/b) is"),
        (r"water \ce{H2O} and \ce{SO4^2-} ions", "water H₂O and SO₄²⁻ ions"),
        (r"the Sun ($M_\sun$) at 5\arcsec and 2\farcm5", "the Sun (M_⊙) at 5″ and 2.′5"),
        # chemformula's one compound (arXiv:2505.22314, in prose; the others written here).
        (r"In contrast, \ch{CH3+} and PAHs are found", "In contrast, CH₃⁺ and PAHs are found"),
        (r"$\ch{Ca^{2+}}$ and \ch{(NH4)2SO4} salts", "Ca²⁺ and (NH₄)₂SO₄ salts"),
    ],
)
def test_package_macros_convert_in_prose_and_math(raw: str, clean: str) -> None:
    result = clean_text(raw)
    assert result.text == clean and result.math_kept == ()


@pytest.mark.parametrize(
    "raw",
    [
        r"with \ce{A ->[H2O] B} here",  # an arrow with a label: kept whole, never half
        r"the \SI{3}{\kms} speed",  # an author's unit inside siunitx's command
        r"an $\ev(x)$ value",  # physics takes braces: `(` is not its argument
        # chemformula where it prints what mhchem does not: a bond, a stoichiometric factor (a
        # subscript in chemformula), parts separated by blanks, an adduct, an isotope, options.
        r"ethane \ch{CH3-CH3} gas",
        r"the \ch{2H2O} term",
        r"the \ch{A + B} reaction",
        r"gypsum \ch{CaSO4.H2O} here",
        r"the \ch{^{14}C} isotope",
        r"the \ch[font-series=bx]{H2O} molecule",
    ],
)
def test_what_a_package_macro_cannot_write_faithfully_is_kept_whole(raw: str) -> None:
    result = clean_text(raw)
    assert len(result.math_kept) == 1 and result.math_kept[0].startswith("$\\")
    assert result.math_kept[0] in result.text
