"""The report's word diff: what the cleaner removed and a merged copy added, marked.

The diff aligns words alone and places the whitespace after; the marks expected here are the
ones the page showed when it aligned whitespace runs as tokens too (written out by hand from
that page), so the faster alignment marks these texts as before. How its time grows with the
texts' length is measured in ``bench/bench_report_diff.py``, not here.
"""

from __future__ import annotations

import html
import re

import pytest

from curate.report import html as report_html
from curate.report.html import _diff

CASES = [
    # markup the cleaner removed
    (
        "We use \\emph{robust} methods.",
        "We use robust methods.",
        "We use <del>\\emph{robust}</del> methods.",
        "We use <ins>robust</ins> methods.",
    ),
    # a word replaced in a merged copy
    (
        "the model is trained on a large dataset of images",
        "the model is trained on a small dataset of images",
        "the model is trained on a <del>large</del> dataset of images",
        "the model is trained on a <ins>small</ins> dataset of images",
    ),
    # a word added, then a word removed: its space goes with it
    (
        "we study the problem",
        "we study the hard problem",
        "we study the problem",
        "we study the <ins>hard </ins>problem",
    ),
    (
        "we study the hard problem",
        "we study the problem",
        "we study the <del>hard </del>problem",
        "we study the problem",
    ),
    # whitespace alone changed, between words that are kept
    ("a  b\nc d", "a b c d", "a<del>  </del>b<del>\n</del>c d", "a<ins> </ins>b<ins> </ins>c d"),
    ("  padded text \n", "padded text", "<del>  </del>padded text<del> \n</del>", "padded text"),
    # text is escaped, inside marks and out
    ("x &lt; y & z", "x < y & z", "x <del>&amp;lt;</del> y &amp; z", "x <ins>&lt;</ins> y &amp; z"),
    # nothing in common; nothing before; nothing changed
    (
        "one two three",
        "four five six",
        "<del>one</del> <del>two</del> <del>three</del>",
        "<ins>four</ins> <ins>five</ins> <ins>six</ins>",
    ),
    ("", "new text", "", "<ins>new text</ins>"),
    ("same text", "same text", "same text", "same text"),
    # arXiv:2507.21278 in the dev corpus: hard-wrapped lines joined, inline math rendered
    (
        "In arXiv:2505.18900 it was claimed that an apparent evolution of the dark\nenergy "
        "equation of state occurs within the standard $\\Lambda$CDM cosmological\nmodel.",
        "In arXiv:2505.18900 it was claimed that an apparent evolution of the dark energy "
        "equation of state occurs within the standard ΛCDM cosmological model.",
        "In arXiv:2505.18900 it was claimed that an apparent evolution of the dark<del>\n</del>"
        "energy equation of state occurs within the standard <del>$\\Lambda$CDM</del> "
        "cosmological<del>\n</del>model.",
        "In arXiv:2505.18900 it was claimed that an apparent evolution of the dark<ins> </ins>"
        "energy equation of state occurs within the standard <ins>ΛCDM</ins> "
        "cosmological<ins> </ins>model.",
    ),
]


@pytest.mark.parametrize(("raw", "clean", "left", "right"), CASES)
def test_the_marks_are_the_same_as_when_whitespace_was_aligned_too(raw, clean, left, right):
    assert _diff(raw, clean) == (left, right)


def test_a_word_kept_between_changes_is_not_marked():
    """Aligning whitespace runs as tokens matched a space where a kept word was, and marked
    the word as both removed and added; words alone keep it."""
    left, right = _diff(
        "The model is trained on a dataset of human-drawn images.",
        "The model is trained on a of robust human-drawn images.",
    )
    assert left == "The model is trained on a <del>dataset </del>of human-drawn images."
    assert right == "The model is trained on a of<ins> robust</ins> human-drawn images."


def _unmarked(marked: str) -> str:
    return html.unescape(re.sub(r"</?(?:del|ins)>", "", marked))


def test_texts_past_the_bound_keep_their_common_ends_and_give_back_both_texts(monkeypatch):
    monkeypatch.setattr(report_html, "DIFF_PAIRS", 4)  # the five common words are past it
    raw = "alpha beta gamma one two three four five six seven omega psi"
    clean = "alpha beta gamma eins zwei drei vier fünf sechs sieben omega psi"
    left, right = _diff(raw, clean)
    # the middle is not aligned on its words: it is one gap between the common ends
    removed = " ".join(f"<del>{w}</del>" for w in raw.split()[3:10])
    added = " ".join(f"<ins>{w}</ins>" for w in clean.split()[3:10])
    assert left == f"alpha beta gamma {removed} omega psi"
    assert right == f"alpha beta gamma {added} omega psi"
    # past the bound with the ends in common too, a middle within it is still aligned word by word
    left, right = _diff(raw, raw.replace("four", "FOUR"))
    assert left == "alpha beta gamma one two three <del>four</del> five six seven omega psi"
    assert (_unmarked(left), _unmarked(right)) == (raw, raw.replace("four", "FOUR"))


def test_a_long_gap_is_one_replacement(monkeypatch):
    monkeypatch.setattr(report_html, "GAP_TOKENS", 3)
    left, right = _diff("keep a b c d keep", "keep w x y z keep")
    assert left == "keep <del>a b c d</del> keep"
    assert right == "keep <ins>w x y z</ins> keep"


@pytest.mark.parametrize(
    "text",
    ["", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "a\u00a0b", "a\u2028b", "中文 字 x", "x\n y"],
)
def test_the_tokens_of_a_one_line_text_are_the_token_pattern_s(text):
    assert report_html._tokens(text) == report_html._TOKEN.findall(text)


def test_the_tokens_of_real_abstracts_are_the_token_pattern_s():
    import json

    from conftest import ROOT

    texts = [
        json.loads(line)["text"]
        for name in ("residue_labelled", "record_checks_labelled")
        for line in (ROOT / "tests" / "data" / f"{name}.jsonl").read_text("utf-8").splitlines()
    ]
    assert sum(report_html.normalize.is_collapsed(t) for t in texts) > len(texts) // 2
    for text in texts:
        assert report_html._tokens(text) == report_html._TOKEN.findall(text)


def test_equal_words_and_empty_or_equal_gaps_are_marked_as_the_matcher_marks_them():
    # The shortcuts: equal word lists are one block, a gap with an empty or equal side one
    # opcode; the marks are those the matcher's alignment gives (written out by hand).
    assert _diff("a  b\tc", "a b c") == (
        "a<del>  </del>b<del>\t</del>c",
        "a<ins> </ins>b<ins> </ins>c",
    )
    assert _diff("x  y", "x y") == ("x<del>  </del>y", "x<ins> </ins>y")
    assert _diff("same words", "same words") == ("same words", "same words")
    assert _diff("one two", "one new two") == ("one two", "one <ins>new </ins>two")
    assert _diff("one old two", "one two") == ("one <del>old </del>two", "one two")
