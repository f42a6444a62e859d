"""A macro whose arguments the text ends before (an abstract cut off mid-formula, as the
``truncated`` check finds them) is kept as typed and flagged: pylatexenc cannot fill its
template then, returns the template itself (``\\frac{a}`` became ``%s/%sa``) and logs a warning
that reached the user's terminal."""

from __future__ import annotations

import logging

import pytest

from curate.transform.clean import clean_text


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        (r"the gain is \frac{a}", r"\frac{a}"),
        (r"an algorithm that uses $\frac{k}{\alpha", r"\frac{k}"),
        (r"a bound of $\Theta\left(\frac{k}{\alpha^2\min", r"\frac{k}"),
    ],
)
def test_a_fraction_cut_off_by_the_end_of_the_text_is_kept(
    raw: str, kept: str, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    with caplog.at_level(logging.DEBUG):
        result = clean_text(raw)
    assert "%s" not in result.text
    assert kept in result.text
    assert kept in result.math_kept
    assert not [r for r in caplog.records if "substitution" in r.getMessage()]
    assert "substitution" not in capfd.readouterr().err


def test_a_whole_fraction_beside_it_is_still_converted() -> None:
    assert clean_text(r"we find \frac{a}{b} and \sqrt{x}").text == "we find a/b and √x"
