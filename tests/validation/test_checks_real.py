"""Record checks on real text: `truncated`, `too-long`, `placeholder`, `empty-record`.

The labelled sample (`tests/data/record_checks_labelled.jsonl`, made by
`bench/make_checks_sample.py` from the dev corpus; each example keeps its id) is run through the
real parser and checks in one drop, and each check's precision and recall are measured against
the labels written there by hand, never against the checks' own output.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from curate.pipeline.validate import validate_paths
from validation.config import Config

SAMPLE = [
    json.loads(line)
    for line in (ROOT / "tests" / "data" / "record_checks_labelled.jsonl")
    .read_text("utf-8")
    .split("\n")
    if line
]
LABEL_OF_CODE = {"truncated": "truncated", "too-long": "too_long", "placeholder": "placeholder"}


@pytest.fixture(scope="module")
def fired(tmp_path_factory) -> dict[str, set[int]]:
    """For each code, the indices of the sample's examples it fired on (one validation run)."""
    folder = tmp_path_factory.mktemp("real")
    lines = ["Mixed 2024 Papers", ""]
    start_of: dict[int, int] = {}
    for i, item in enumerate(SAMPLE):
        start_of[len(lines) + 1] = i
        lines += item["text"].split("\n")
        lines.append("")
    (folder / "sample.txt").write_text("\n".join(lines), encoding="utf-8")
    report = validate_paths([folder], Config()).report
    # Record-level codes point at the record's first line: map it back to the example.
    out: dict[str, set[int]] = {code: set() for code in LABEL_OF_CODE}
    for f in report:
        if f.code in ("too-long", "placeholder"):
            out[f.code].add(start_of[f.line])
        elif f.code == "truncated":  # points at the last line of the record
            out[f.code].add(max(i for s, i in start_of.items() if s <= f.line))
    return out


def _scores(code: str, fired: dict[str, set[int]]) -> tuple[float, float, list[str], list[str]]:
    label = LABEL_OF_CODE[code]
    yes = {i for i, item in enumerate(SAMPLE) if item["labels"][label]}
    hits = fired[code]
    false_pos = [SAMPLE[i]["id"] for i in sorted(hits - yes)]
    missed = [SAMPLE[i]["id"] for i in sorted(yes - hits)]
    precision = len(hits & yes) / len(hits) if hits else 0.0
    recall = len(hits & yes) / len(yes)
    return precision, recall, false_pos, missed


def test_the_sample_holds_what_it_claims():
    kinds = {item["kind"] for item in SAMPLE}
    assert kinds == {"record", "paragraphs", "wrapped", "merged", "handwritten"}
    assert sum(item["labels"]["truncated"] for item in SAMPLE) == 4
    assert sum(item["labels"]["too_long"] for item in SAMPLE) == 40
    assert sum(item["labels"]["placeholder"] for item in SAMPLE) == 20


def test_truncated_precision_on_real_abstracts(fired):
    precision, recall, false_pos, missed = _scores("truncated", fired)
    assert precision >= 0.9, false_pos
    # arXiv:2505.20821 ("…a new practicable method for identifying") ends in a content word:
    # no sign but the meaning tells it from a missing full stop.
    assert missed == ["arXiv:2505.20821"]
    assert recall == 0.75


def test_truncated_no_longer_fires_on_math_abridged_brackets_or_a_missing_stop(fired):
    examples = {item["id"]: i for i, item in enumerate(SAMPLE) if item["kind"] == "record"}
    for rid in (
        "openreview:CKCzfU9YKE",  # "… running time exponential in $1/\tau^{2}.$"
        "neurips2018:row0381",  # "… \leq \alpha \mathsf{OPT}_k(A) + \tau.$"
        "arXiv:2504.13020",  # "… ground-based optical data. (Abridged)"
        "arXiv:2506.06014",  # "… a different origin. [abridged]" (and `(4.35$\pm 0.24)`)
        "pmlr:v247/cohen24b",  # "… {\em private online prediction}. \end{itemize}"
        "neurips2018:row0448",  # "… a ``simulator.&#39;&#39;"
        "openreview:ma7McOiCZY",  # "… Videos and website: hy-motion.github.io//"
        "openreview:KjazcKPMME",  # "… trustworthy AI systems" (only the full stop is missing)
    ):
        assert examples[rid] not in fired["truncated"], rid


def test_too_long_finds_merged_abstracts_and_spares_real_paragraphs(fired):
    precision, recall, false_pos, missed = _scores("too-long", fired)
    assert precision >= 0.9, false_pos
    assert recall >= 0.85, missed


def test_placeholder_precision_and_recall(fired):
    precision, recall, false_pos, missed = _scores("placeholder", fired)
    assert precision == 1.0, false_pos  # no real abstract that mentions the phrases
    assert recall == 1.0, missed


def _validate_one(drop, body: str):
    drop("zz.txt", "ICML 2025 Papers\n\n" + body + "\n")
    report = validate_paths([drop.folder], Config()).report
    return sorted(
        (f.code, f.line) for f in report if f.file.endswith("zz.txt") and f.code in RECORD_CODES
    )


RECORD_CODES = {"truncated", "too-long", "too-short", "placeholder", "empty-record"}


ABSTRACT = (
    "We study how small language models can learn arithmetic from very few examples, and we "
    "propose a curriculum that orders training problems by the number of carries they need. "
    "It halves the data required to reach high accuracy on four model sizes."
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # Real cut endings of the dev corpus (ids in the sample).
        (ABSTRACT + " Our code is available at", [("truncated", 3)]),  # openreview:ar174skI9u
        (ABSTRACT + " We compare it with the observations,", [("truncated", 3)]),  # 2507.08436
        (ABSTRACT + " and characterize s", [("truncated", 3)]),  # openreview:HJr4QJ26W
        (ABSTRACT + " We fit the model (with a prior on", [("truncated", 3)]),
        (ABSTRACT + " The rate is $O(n^{-1/2}", [("truncated", 3)]),
        (ABSTRACT + " Other tasks, e.g.", [("truncated", 3)]),
        (ABSTRACT + " Empirical", [("truncated", 3)]),  # a sentence only begun
        (ABSTRACT + " [Abstract abridged]", []),  # arXiv:2505.08272
        (ABSTRACT[:-1], []),  # only the full stop is missing
        (ABSTRACT + " (abridged)", []),
        (ABSTRACT + " The bound is $O(\\sqrt{T})$", []),
        (ABSTRACT + " Code: https://example.org/code", []),
    ],
)
def test_truncated_examples(drop, body, expected):
    assert _validate_one(drop, body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "This paper has been withdrawn by the authors.",
        "Withdrawn due to a crucial error in Lemma 3.",
        "Abstract not available.",
        "<p>No abstract.</p>",
        "TBD",
    ],
)
def test_placeholder_is_a_warning_and_not_also_too_short(drop, body):
    drop("zz.txt", "ICML 2025 Papers\n\n" + body + "\n")
    report = validate_paths([drop.folder], Config()).report
    ours = [(f.code, f.line, str(f.severity)) for f in report if f.code in RECORD_CODES]
    assert ours == [("placeholder", 3, "warning")]


def test_a_real_abstract_that_mentions_withdrawal_is_not_a_placeholder(drop):
    # Anchored at the start and short is not enough: the phrase must be the notice itself. (The
    # real abstracts that say "not available" later on, e.g. neurips2018:row0997, are in the
    # labelled sample.)
    assert _validate_one(drop, "Withdrawn patients " + ABSTRACT) == []


@pytest.mark.parametrize(
    "body", ["<br>", "&nbsp;", "\\emph{}", "\u00a0\u00a0", "\\cite{smith2015online}", "—"]
)
def test_a_record_with_no_words_is_an_error(drop, body):
    codes = _validate_one(drop, body)
    assert ("empty-record", 3) in codes
    assert not {"too-short", "truncated", "placeholder"} & {c for c, _ in codes}


def test_build_refuses_a_record_with_no_words_without_a_traceback(drop, tmp_path):
    drop("zz.txt", "ICML 2025 Papers\n\n" + ABSTRACT + "\n\n<br>\n\n&nbsp;\n")
    out = tmp_path / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "curate.cli", "build", str(drop.folder), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "zz.txt:5: error   empty-record" in proc.stdout
    assert "zz.txt:7: error   empty-record" in proc.stdout
    assert "build refused" in proc.stderr
    assert not out.exists()


def test_too_long_names_the_line_where_the_second_abstract_starts(drop):
    by_id = {item["id"]: item["text"] for item in SAMPLE if item["kind"] == "record"}
    first, second = by_id["neurips2018:row0997"], by_id["openreview:Bk8ZcAxR-"]
    drop("zz.txt", "ICML 2025 Papers\n\n" + first + "\n" + second + "\n")
    report = validate_paths([drop.folder], Config()).report
    (f,) = [f for f in report if f.code == "too-long"]
    assert f.line == 3  # record-level codes point at the record's first line
    assert "start on line 4" in f.message
    assert second[:20] in f.message


def test_a_line_of_only_a_no_break_space_inside_a_record_is_no_crash(tmp_path):
    """A line holding only U+00A0 (or a form feed, or U+3000) is not blank to the parser, so
    it stays inside its record; the too-long check's merge detector once raised IndexError on
    it and `curate validate` stopped with exit 3."""
    from curate.cli import main

    for filler in ("\u00a0", "\u3000", "\x0c"):
        drop = tmp_path / f"drop-{ord(filler)}"
        drop.mkdir()
        (drop / "a.txt").write_text(
            "ICML 2025 Papers\n\nWe study a problem of the kind that is studied often.\n"
            f"{filler}\nIt is a record with a line holding only a no-break space.\n",
            encoding="utf-8",
        )
        assert main(["validate", str(drop), "--no-cache", "-q"]) in (0, 1)
