"""The fast paths of the per-record work give exactly what the slower forms they replace gave.

Each fast path (substring tests instead of a trigger regex, ``str.split`` instead of a
whitespace or word regex, bytes instead of a per-word loop) is checked against the regex or
loop it replaces, written out here, on every text of the test data; and ``clean_text`` on
excerpts of the dev corpus (``../shared/corpus/real-dev``, quoted with their ids) against
literal expected outputs.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections import Counter

import pytest
from conftest import ROOT

from curate.transform.clean import _collapse_whitespace, clean_text
from validation import language, normalize, residue
from validation.language import looks_english


def _texts() -> list[str]:
    """Every abstract of the test data and of the bundled drops, and some odd strings."""
    texts = []
    for name in ("record_checks_labelled.jsonl", "residue_labelled.jsonl", "math_sample.jsonl"):
        for line in (ROOT / "tests" / "data" / name).read_text("utf-8").splitlines():
            item = json.loads(line)
            texts.append(item.get("text") or item["abstract"])
    for path in sorted((ROOT / "sources").glob("*.txt")):
        texts += [p for p in re.split(r"\n\s*\n", path.read_text("utf-8")) if p.strip()]
    texts += ["", " ", "\t\n", "a", "--", "''", "'", "-", "x--y", "it's", "a\u00a0b", "\u3000"]
    texts += ["\u2028lead", "trail\u2029", " both ", "İstanbul the of", "x\ud800y the", "ou让work"]
    return texts


TEXTS = _texts()


def test_str_split_and_regex_whitespace_are_the_same_characters() -> None:
    """What the ``str.split`` fast paths rely on: ``\\s`` is ``str.isspace``, code point by
    code point, for ``split`` and ``strip`` alike."""
    space = re.compile(r"\s")
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        assert bool(space.match(ch)) == ch.isspace() == (len(f"a{ch}b".split()) == 2), hex(code)
        assert (f"{ch}a".strip() == "a") == ch.isspace(), hex(code)


def test_is_printable_is_the_method() -> None:
    """The byte deletion answers as ``str.isprintable`` does: every code point alone, and beside
    printable ASCII (the deletion runs only on ASCII text, the method on the rest)."""
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        assert normalize.is_printable(ch) == ch.isprintable(), hex(code)
        assert normalize.is_printable(f"a {ch}~") == f"a {ch}~".isprintable(), hex(code)
    for text in TEXTS:
        assert normalize.is_printable(text) == text.isprintable(), repr(text[:40])


_TRIGGERS = {
    "latex": re.compile(r"[$\\~`{]|--|''"),
    "markdown": re.compile(r"[*_`\[]"),
    "html": re.compile(r"[<&]"),
}


@pytest.mark.parametrize("kind", residue.KINDS)
def test_may_have_is_the_trigger_pattern(kind: str) -> None:
    singles = [chr(c) for c in range(128)] + ["--", "''", "-'", "'-", "- -", "' '"]
    for text in TEXTS + singles:
        assert residue.may_have(kind, text) == bool(_TRIGGERS[kind].search(text)), text[:80]


def test_may_be_mojibake_is_the_suspect_pattern() -> None:
    suspect = re.compile(r"[^\x00-\x7f\u2018\u2019\u201c\u201d\u2013\u2014\u2026]")
    for text in [*TEXTS, "naÃ¯ve", "model’s", "“x”", "\x7f", "\x80"]:
        assert residue.may_be_mojibake(text) == bool(suspect.search(text)), text[:80]


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}\u3000-\u303f\uff00-\uff0f\uff1a-\uff20]+")


def test_words_is_the_token_pattern() -> None:
    for text in TEXTS:
        assert normalize.words(text) == _TOKEN.findall(text), text[:80]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # openreview:THPjMr2r0S has one Chinese character inside an English word.
        (
            "Unlike traditional ZO-SGD methods, ou让work expands",
            ["Unlike", "traditional", "ZO-SGD", "methods,", "ou", "让", "work", "expands"],
        ),
        ("论文列表，ICML 2025", ["论", "文", "列", "表", "ICML", "2025"]),
        # openreview:qUSa3F79am: a no-break space separates words.
        ("Language Optimization\u00a0(PALO), combines", ["Language", "Optimization", "(PALO),",
                                                         "combines"]),
    ],
)  # fmt: skip
def test_words_examples(text: str, expected: list[str]) -> None:
    assert normalize.words(text) == expected


_ENGLISH = frozenset(
    "the of and to that for with we this are by our which from these be can it as its "
    "their has have been were not such than into more while both between through "
    "when how what where however they them only other each".split()
)


def _looks_english_by_regex(text: str) -> bool:
    """The pre-check as a regex and a loop over words: what the bytes version must equal."""
    words = re.findall(r"[A-Za-z]+", text)
    if len(words) < 20:
        return False
    if not text.isascii():
        ascii_letters = sum(map(len, words))
        other = sum(ch.isalpha() for ch in re.findall(r"[^\x00-\x7f]", text))
        if ascii_letters < 0.97 * (ascii_letters + other):
            return False
    return sum(1 for w in words if w.lower() in _ENGLISH) >= 0.12 * len(words)


def test_looks_english_is_the_word_loop() -> None:
    long_non_ascii = "The İstanbul model of the x\ud800y and ﬂexible naïve " * 4
    for text in [*TEXTS, long_non_ascii, "THE OF AND TO " * 6, "the" * 30]:
        for variant in (text, normalize.plain_text(text)):
            assert looks_english(variant) == _looks_english_by_regex(variant), variant[:80]
    assert looks_english("THE OF AND TO " * 6)
    assert not looks_english("the" * 30)  # one word, not 30


def test_the_batch_pre_check_is_the_word_loop() -> None:
    # Every text at once and in small batches: texts of fewer than 20 words, non-ASCII letters
    # around the 0.97 share, words of exactly 8 letters and longer, and a function word glued
    # to the next ("thethe") all answer as the loop does.
    odd = [
        "The İstanbul model of the x\ud800y and ﬂexible naïve " * 4,
        "THE OF AND TO " * 6, "the" * 30, "between however throughs " * 10,
        "thethe ofof and " * 10, ("the of and to é " * 8) + "word " * 20,
    ]  # fmt: skip
    texts = [t for text in TEXTS + odd for t in (text, normalize.plain_text(text))]
    expected = [_looks_english_by_regex(t) for t in texts]
    assert language.looks_english_many(texts) == expected
    assert [
        x for i in range(0, len(texts), 7) for x in language.looks_english_many(texts[i : i + 7])
    ] == expected
    assert language.looks_english_many([]) == []


def test_a_language_batch_gives_body_language_s_own_answers() -> None:
    texts = [*TEXTS, "Эта статья описывает новый метод анализа данных и его свойства." * 3]
    for min_words in (0, 3, 20):
        language.body_language.cache_clear()
        alone = [language.body_language(t, min_words) for t in texts]
        language.body_language.cache_clear()
        with language.LanguageBatch(texts, min_words):
            together = [language.body_language(t, min_words) for t in texts]
        assert together == alone
        # Given each text's markup stripped (check_file strips once for this and the sketch).
        stripped = [normalize.strip_markup(t) for t in texts]
        batch = language.LanguageBatch(texts, min_words, stripped)
        assert batch.plain == language.LanguageBatch(texts, min_words).plain
        language.body_language.cache_clear()
        with batch:
            assert [language.body_language(t, min_words) for t in texts] == alone
            # The words measure reads the batch's count where a text is its own plain text
            # (a text given twice is counted again: the batch keeps one of the two objects).
            from validation.checks import _word_count

            repeated = {t for t, n in Counter(texts).items() if n > 1}
            plain = [
                t
                for t in texts
                if normalize.is_collapsed(t)
                and not any(residue.may_have(k, t) for k in residue.KINDS)
                and t not in repeated
            ]
            assert len(plain) > 100
            assert all(language.batch_word_total(t) is not None for t in plain)
            for text in texts:
                assert _word_count.__wrapped__(text) == normalize.length_in_words(text)
    for text in TEXTS:
        plain = normalize.plain_text(text)
        assert normalize.plain_text_and_words(text) == (plain, normalize.word_total(plain))


@pytest.mark.parametrize(
    "text", ["", " ", "  \t\n ", "a", " a", "a ", "\u2028a\u00a0 \tb\u3000", "a\r\nb  c"]
)
def test_collapse_whitespace_is_the_regex(text: str) -> None:
    assert _collapse_whitespace(text) == re.sub(r"\s+", " ", text)


_WHITESPACE_CASES = [
    "a  b",
    " a",
    "a ",
    "a\tb",
    "a\nb",
    "a\u00a0b",
    "a\u2028b",
    "a\x85b",
    "a\u3000b",
    "a\u200bb",
    "a\x1fb",
    "中文 字",
    "中文  字",
    "。 a",
    "x\u0303 y",
    "e\u0301 ok",
    "",
    " ",
    "one",
]


@pytest.mark.parametrize("text", TEXTS + _WHITESPACE_CASES)
def test_collapsed_fast_paths_are_split_and_join(text: str) -> None:
    """``is_collapsed`` may only say yes where splitting and joining changes nothing, and every
    fast path built on it gives what the split-and-join form it skips gives."""
    import unicodedata

    from curate.transform.clean import _normalise

    if normalize.is_collapsed(text):
        assert " ".join(text.split()) == text
    assert normalize.word_total(text) == len(normalize.words(text))
    assert normalize.plain_text(text) == " ".join(normalize._strip_markup(text).split())
    assert _collapse_whitespace(text) == re.sub(r"\s+", " ", text)
    assert _normalise(text) == " ".join(unicodedata.normalize("NFC", text).split())


def test_the_collapsed_fast_path_is_the_common_case() -> None:
    """Measured, so that the fast paths are not dead code: every abstract of the bundled drops
    is one collapsed line (as 99 % of the dev corpus's and the generated ones are)."""
    abstracts = [
        part
        for path in sorted((ROOT / "sources").glob("*.txt"))
        for part in path.read_text("utf-8").split("\n\n")[1:]
        if part.strip()
    ]
    assert len(abstracts) == 57
    assert all(normalize.is_collapsed(t.strip("\n")) for t in abstracts)


# Excerpts of the dev corpus (``records.jsonl.gz``, by id), and what ``clean_text`` makes of them
# with math="unicode" and math="tex".
CLEAN_CASES = [
    (  # a script typed in prose (no dollars), hard-wrapped by arXiv
        "arXiv:2507.05881",
        "Its\nbrightness suggests a maximum radius of ~10km (A/0.05)^{-1/2} for an asteroid\n"
        "with an albedo A.",
        "Its brightness suggests a maximum radius of ~10km (A/0.05)^(-1/2) for an asteroid with "
        "an albedo A.",
        "Its brightness suggests a maximum radius of ~10km (A/0.05)$^{-1/2}$ for an asteroid "
        "with an albedo A.",
        ("latex",),
    ),
    (  # two scripts on one symbol; `10^6` without braces is left alone
        "arXiv:2504.15277",
        "factor, Q^{'}_{*}, of 10^6, we predict ~ 5 - 10 detections.",
        "factor, Q_∗′, of 10^6, we predict ~ 5 - 10 detections.",
        "factor, Q$^{'}_{*}$, of 10^6, we predict ~ 5 - 10 detections.",
        ("latex",),
    ),
    (  # a no-break space: whitespace, one space in the output; no markup at all
        "openreview:qUSa3F79am",
        "Our method, Policy Adaptation via Language Optimization\u00a0(PALO), combines",
        "Our method, Policy Adaptation via Language Optimization (PALO), combines",
        "Our method, Policy Adaptation via Language Optimization (PALO), combines",
        (),
    ),
    (  # blanks at both ends (PMLR's BibTeX)
        "pmlr:v247/dmitriev24a",
        " In this paper, we provide lower bounds for Differentially Private (DP) Online Learning"
        " algorithms. \n  ",
        "In this paper, we provide lower bounds for Differentially Private (DP) Online Learning "
        "algorithms.",
        "In this paper, we provide lower bounds for Differentially Private (DP) Online Learning "
        "algorithms.",
        (),
    ),
    (  # a CR before a lone dollar, which is a price, not math
        "openreview:VE3yWXt3KB",
        "For under \r$20 USD, our attack extracts the entire projection matrix",
        "For under $20 USD, our attack extracts the entire projection matrix",
        "For under $20 USD, our attack extracts the entire projection matrix",
        (),
    ),
    (  # a PDF ligature, undone by ftfy, which is not mojibake
        "openreview:rJr4kfWCb",
        "a multi-layered and highly \ufb02exible architecture, with a custom CNN",
        "a multi-layered and highly flexible architecture, with a custom CNN",
        "a multi-layered and highly flexible architecture, with a custom CNN",
        (),
    ),
]


@pytest.mark.parametrize(
    ("record_id", "raw", "as_unicode", "as_tex", "kinds"),
    CLEAN_CASES,
    ids=[case[0] for case in CLEAN_CASES],
)
def test_clean_text_on_dev_corpus_excerpts(
    record_id: str, raw: str, as_unicode: str, as_tex: str, kinds: tuple[str, ...]
) -> None:
    for math, expected in (("unicode", as_unicode), ("tex", as_tex)):
        result = clean_text(raw, math=math)
        assert (result.text, result.kinds, result.fixed_mojibake, result.math_kept) == (
            expected,
            kinds,
            False,
            (),
        ), math


def _all_chars_in(item: tuple, allowed) -> bool:
    """Whether the one-character pattern ``item`` (of ``re._parser``) only matches ``allowed``."""
    import re._constants as c  # the parser's own vocabulary

    op, av = item
    if op is c.LITERAL:
        return allowed(av, av)
    if op is not c.IN:
        return False
    for sub_op, sub_av in av:
        if sub_op is c.LITERAL and allowed(sub_av, sub_av):
            continue
        if sub_op is c.RANGE and allowed(*sub_av):
            continue
        return False  # a negated class, \w, \s and the like
    return True


def test_ftfy_badness_needs_two_non_ascii_characters_side_by_side() -> None:
    """What ``residue.may_look_bad`` relies on, read off ftfy's pattern itself: each alternative
    holds two neighbouring characters outside ASCII, or one C1 control, Œ, œ, Ã or Â."""
    import re._constants as c
    import re._parser

    import ftfy.badness

    special = {*range(0x80, 0xA0), ord("Œ"), ord("œ"), ord("Ã"), ord("Â")}
    pattern = ftfy.badness.BADNESS_RE
    (top,) = re._parser.parse(pattern.pattern, pattern.flags).data
    assert top[0] is c.BRANCH
    branches = top[1][1]
    assert len(branches) > 30
    for branch in branches:
        items = list(branch.data)
        one = any(_all_chars_in(i, lambda lo, hi: set(range(lo, hi + 1)) <= special) for i in items)
        two = any(
            _all_chars_in(a, lambda lo, hi: lo >= 0x80)
            and _all_chars_in(b, lambda lo, hi: lo >= 0x80)
            for a, b in itertools.pairwise(items)
        )
        assert one or two, branch


@pytest.mark.parametrize(
    "text",
    ["naÃ¯ve", "modelâ€™s", "Ã©tÃ©", "cÅ“ur", "a\x85b", "Î±Î²", "doesnâ€™t", "Ã ", "sÃ³"],
)
def test_mojibake_examples_pass_the_pre_tests(text: str) -> None:
    import ftfy.badness

    assert ftfy.badness.is_bad(text)
    assert residue.may_be_mojibake(text) and residue.may_look_bad(text)


def test_may_look_bad_is_never_false_where_ftfy_finds_mojibake() -> None:
    import ftfy.badness

    for text in TEXTS:
        if ftfy.badness.is_bad(text):
            assert residue.may_look_bad(text), text[:80]


def _has_words_slowly(text: str) -> bool:
    """``has_words`` without its fast answer: the markup removed, then a letter or digit."""
    from validation.checks import _KEY_COMMANDS, _WORD_CHAR

    if not any(residue.may_have(kind, text) for kind in residue.KINDS):
        return _WORD_CHAR.search(text) is not None
    return _WORD_CHAR.search(normalize.plain_text(_KEY_COMMANDS.sub(" ", text))) is not None


@pytest.mark.parametrize(
    "extra",
    ["", " <!-- a hidden comment --> ", " \\cite{smith jones} ", " cite this <b>x</b> ", " <br> "],
)
def test_has_words_fast_answer_is_the_slow_one(extra: str) -> None:
    from validation.checks import has_words

    texts = [*TEXTS, "<!-- two words -->", "\\cite{two words}", "<!-- a -->cite", "cite it"]
    for text in texts:
        assert has_words(text + extra) == _has_words_slowly(text + extra), repr(text[:60])
