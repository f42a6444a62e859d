"""Placeholders and mojibake of kinds the dev corpus does not hold (examples written here)."""

from __future__ import annotations

import pytest

from validation.checks import check_mojibake, check_placeholder
from validation.config import Config
from validation.records import Record
from validation.registry import REGISTRY


def _record(text: str) -> Record:
    return Record(file="x.txt", line=3, text=text, line_starts=())


@pytest.mark.parametrize(
    "text",
    [
        "arXiv admin note: This submission has been withdrawn by arXiv administrators due to "
        "inappropriate text overlap with external sources.",
        "We have decided to withdraw this paper because of an error in the proof of Theorem 2.",
        "The authors withdrew this paper.",
        "An abstract is not available for this content so please use the link above.",
        "The abstract of this paper is currently unavailable.",
        "Not available.",
        "Not applicable",
    ],
)
def test_placeholders_of_other_wordings_are_placeholders(text: str) -> None:
    record = _record(text)
    assert [f.code for f in check_placeholder(record, Config())] == ["placeholder"]
    assert list(REGISTRY["too-short"].run(record, Config())) == []  # one fault, one finding


@pytest.mark.parametrize(
    "text",
    [
        "We withdraw the claim of the previous version and show instead that the bound holds "
        "for all n in the regime we study here.",
        "Data not available in earlier surveys are now provided by the new instrument.",
    ],
)
def test_abstracts_that_say_withdraw_or_not_available_are_not(text: str) -> None:
    assert list(check_placeholder(_record(text), Config())) == []


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # A decoding that dropped bytes: U+FFFD stands where they were.
        ("The authors\ufffd results show that the model\ufffds accuracy is high.", "U+FFFD"),
        # Code page 437 read as UTF-8 (`naïve`, `modèle`): ftfy sees it is bad, cannot undo it.
        ("the na\u2554\u00bfve baseline and the mod\u2534\u00e9le of the data", "cannot repair"),
        # The kind ftfy repairs, as before.
        ("We study the rÃ©gime of small Ã©nergies where the effect is largest.", "'égime'"),
    ],
)
def test_garbled_text_is_mojibake(text: str, shown: str) -> None:
    found = list(check_mojibake(_record(text), Config()))
    assert len(found) == 1 and shown in found[0].message


def test_correct_text_with_symbols_is_not_mojibake() -> None:
    text = "The résumé of the modèle: ≤ 5 % of Å-scale “features” — naïve and Schrödinger’s."
    assert list(check_mojibake(_record(text), Config())) == []
