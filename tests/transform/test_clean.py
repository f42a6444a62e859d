"""Tests for curate.transform.clean: hand-written examples and invariants on every seed record."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from curate.transform.clean import CleanResult, clean_text
from validation import residue

SOURCES = ROOT / "sources"


def _seed_records() -> list[tuple[str, str]]:
    """(id, record) for every abstract: line 1 is a header, then paragraphs split on blank lines."""
    records = []
    for path in sorted(SOURCES.glob("*.txt")):
        header, _, body = path.read_text(encoding="utf-8").partition("\n")
        assert header.startswith("ICML 2025"), path
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
        records += [(f"{path.stem[:3]}-{i:02d}", p) for i, p in enumerate(paragraphs)]
    return records


RECORDS = _seed_records()
IDS = [record_id for record_id, _ in RECORDS]
PLAIN = [(record_id, text) for record_id, text in RECORDS if not residue.has_any(text)]
CLEANED = {record_id: clean_text(text) for record_id, text in RECORDS}


def _outside_tokens(text: str) -> list[str]:
    """Whitespace tokens of ``text`` once every residue span of any kind is blanked out."""
    chars = list(text)
    for kind in residue.KINDS:
        for span in residue.find(kind, text):
            chars[span.start : span.end] = " " * (span.end - span.start)
    return "".join(chars).split()


def test_seed_files_parse_into_57_records() -> None:
    assert len(RECORDS) == 57
    assert len(PLAIN) == 36  # so 21 records carry residue


# --- Invariants on every seed record ---------------------------------------------------------


@pytest.mark.parametrize(("record_id", "raw"), RECORDS, ids=IDS)
def test_no_residue_left(record_id: str, raw: str) -> None:
    out = CLEANED[record_id].text
    for kind in residue.KINDS:
        assert residue.find(kind, out) == [], kind


@pytest.mark.parametrize(("record_id", "raw"), RECORDS, ids=IDS)
def test_no_word_outside_markup_is_lost(record_id: str, raw: str) -> None:
    """Every token outside residue spans appears in the output, in the original order."""
    out = CLEANED[record_id].text
    pos = 0
    for token in _outside_tokens(raw):
        found = out.find(token, pos)
        assert found >= 0, (token, out[pos : pos + 80])
        pos = found + len(token)


@pytest.mark.parametrize(("record_id", "raw"), PLAIN, ids=[record_id for record_id, _ in PLAIN])
def test_record_without_residue_is_unchanged_but_for_whitespace(record_id: str, raw: str) -> None:
    result = CLEANED[record_id]
    assert result.text == " ".join(raw.split())
    assert result.kinds == ()
    assert result.fixed_mojibake is False


@pytest.mark.parametrize(("record_id", "raw"), RECORDS, ids=IDS)
def test_idempotent(record_id: str, raw: str) -> None:
    once = CLEANED[record_id]
    twice = clean_text(once.text)
    assert twice.text == once.text
    assert twice.kinds == ()


@pytest.mark.parametrize(("record_id", "raw"), RECORDS, ids=IDS)
def test_kinds_are_the_residue_found_in_the_raw_record(record_id: str, raw: str) -> None:
    assert CLEANED[record_id].kinds == tuple(k for k in residue.KINDS if residue.find(k, raw))


def _cleaned_containing(needle: str) -> str:
    """The cleaned text of the first seed record containing ``needle`` (some recur across drops)."""
    record_id = next(record_id for record_id, text in RECORDS if needle in text)
    return CLEANED[record_id].text


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("DReaMAD", "DReaMAD"),
        ("59.24%", "achieving a 59.24% improvement while requiring only 2.11%"),
        ("zpwdev/MFSC", "MFSC"),
        ("zpwdev/MFSC", "available at https://github.com/zpwdev/MFSC."),
        ("modelgo.li", "https://www.modelgo.li/"),
        ("ShizheHu", "https://github.com/ShizheHu."),
        ("Aalto-QuML", "https://github.com/Aalto-QuML/PIPE"),
        ("FoPE", "Fourier Position Embedding (FoPE)"),
        ("$\\sim$", "by using only 50%∼90% of the attention heads. Moreover"),
        ("\\underline{Fu}", "FUML"),
        ("9.86\\%", "9.86% in AUROC"),
    ],
)
def test_seed_words_survive(needle: str, expected: str) -> None:
    assert expected in _cleaned_containing(needle)


def test_seed_dreamad_record_reads_naturally() -> None:
    out = _cleaned_containing("DReaMAD")
    assert "$" not in out and "\\" not in out
    assert "MetaNIM Arena" in out


def test_seed_mfsc_link_url_appears_once() -> None:
    out = _cleaned_containing("zpwdev/MFSC")
    assert out.count("https://github.com/zpwdev/MFSC") == 1


# --- Named examples, expected output written by hand ----------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # LaTeX
        (r"converges at rate $\mathcal{O}(1/T)$.", "converges at rate 𝒪(1/T)."),
        (r"on \emph{out-of-distribution} data", "on out-of-distribution data"),
        (r"improved by 9.3\%. The results", "improved by 9.3%. The results"),
        (r"using only 50%$\sim$90% of the heads", "using only 50%∼90% of the heads"),
        (r"we propose \textbf{FUML}.", "we propose FUML."),
        (r"\underline{Fu}sion \underline{M}ulti-view", "Fusion Multi-view"),
        (r"an $\epsilon$-optimal policy", "an ε-optimal policy"),
        (r"we introduce \texttt{DReaMAD}", "we introduce DReaMAD"),
        (r"($\texttt{\textbf{DReaMAD}}$)", "(DReaMAD)"),
        (r"in $\sqrt{T}$ rounds", "in √T rounds"),  # math: curate/texmath.py
        (
            r"reduces latency by 20\% and 30% of cost while keeping accuracy",
            "reduces latency by 20% and 30% of cost while keeping accuracy",
        ),
        (r"with $50%$ of the data, more text", "with 50% of the data, more text"),
        # Markdown
        ("**M**ulti-view **F**eature", "Multi-view Feature"),
        (
            "we propose ***Fourier Position Embedding (FoPE)***.",
            "we propose Fourier Position Embedding (FoPE).",
        ),
        ("the *Decoupled SGDA* method", "the Decoupled SGDA method"),
        ("achieving a **59.24%** improvement", "achieving a 59.24% improvement"),
        (
            "Code: [https://github.com/zpwdev/MFSC](https://github.com/zpwdev/MFSC).",
            "Code: https://github.com/zpwdev/MFSC.",
        ),
        (
            "see [our code](https://example.org/repo) now",
            "see our code (https://example.org/repo) now",
        ),
        ("run `pip install curate` first", "run pip install curate first"),
        ("a*b", "a*b"),
        ("2*3*4", "2*3*4"),
        ("x^*", "x^*"),
        # HTML
        ("<i>x</i> &amp; y", "x & y"),
        ("line one<br>line two<p>new paragraph", "line one line two new paragraph"),
        # Mojibake and text that must not be restyled
        ("donâ€™t", "don’t"),
        ("cafÃ©", "café"),
        ("“quoted” and ‘single’ don’t", "“quoted” and ‘single’ don’t"),
        ("论文列表，测试：ＡＢＣ", "论文列表，测试：ＡＢＣ"),
        ("x² and 𝒪", "x² and 𝒪"),
        # Whitespace
        ("  spaced \n\t out  ", "spaced out"),
    ],
)
def test_named_examples(raw: str, expected: str) -> None:
    assert clean_text(raw).text == expected


def test_result_fields() -> None:
    result = clean_text(r"<b>x</b> **y** $z$ donâ€™t")
    assert result == CleanResult(
        text="x y z don’t", kinds=("latex", "markdown", "html"), fixed_mojibake=True
    )
    assert clean_text("plain text").kinds == ()
    assert clean_text("plain text").fixed_mojibake is False
    with pytest.raises(AttributeError):
        result.text = "changed"  # type: ignore[misc]


def test_citation_goes_with_its_key() -> None:
    # A citation key is not text; tests/transform/test_text_mode.py has the real examples.
    assert clean_text(r"as shown in \citealp{Vaswani2017}.").text == "as shown in."


def test_formula_stars_are_not_emphasis() -> None:
    # The two stars belong to two formulas; only *emph* is Markdown.
    assert clean_text(r"$x^*$ and $y^*$ with *emph*").text == "x^∗ and y^∗ with emph"


def test_ligatures_are_repaired_without_counting_as_mojibake() -> None:
    result = clean_text("we ﬁnd")
    assert result.text == "we find"
    assert result.fixed_mojibake is False


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # A rewrite can expose new residue; the cleaner runs to a fixed point.
        ("&lt;b&gt;bold&lt;/b&gt; text", "bold text"),
        (r"costs \$5 and \$10", "costs $5 and $10"),  # prices survive: no math span
        (r"see \href{https://a.org}{the site}", "see the site (https://a.org)"),
        (r"\LaTeX{} sources", "LaTeX sources"),
    ],
)
def test_exposed_residue_is_cleaned_too(raw: str, expected: str) -> None:
    result = clean_text(raw)
    assert result.text == expected
    assert not residue.has_any(result.text)
    assert clean_text(result.text).text == result.text
