"""Language identification: langdetect as the reference, with a cheap pre-check for English.

langdetect samples n-grams at random; without a fixed seed the same text can get different
answers on different runs, which would make reports and builds irreproducible. It also costs
about 2 ms per abstract, which dominates validation of a large corpus where nearly every record
is English. The pre-check answers "English" only for text in Latin script in which English
function words make up a large share of the words, a signal no other language gives; anything
else goes to langdetect. The benchmark (bench/bench_scale.py) measures the agreement of the
two paths on every record of its corpus.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

# English function words that are not also common words of other Latin-script languages
# ("a", "on", "in", "an", "also", "was", "die", "de", "la" and the like are left out on purpose).
_ENGLISH = frozenset(
    "the of and to that for with we this are by our which from these be can it as its "
    "their has have been were not such than into more while both between through "
    "when how what where however they them only other each".split()
)
_WORD = re.compile(r"[A-Za-z]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
FAST_MIN_WORDS = 20
FAST_MIN_SHARE = 0.12


# The words of ``_WORD`` (runs of ASCII letters), lower-cased, in one pass over bytes: every
# character outside ASCII becomes `?` and every byte but a letter a space, so ``split`` finds
# exactly the runs ``_WORD.findall`` finds (several times faster than the regex and a loop).
_LOWER_LETTERS = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32 for c in range(256))
_ENGLISH_BYTES = frozenset(w.encode("ascii") for w in _ENGLISH)


def looks_english(text: str) -> bool:
    """True when ``text`` is clearly English: long enough, Latin script, many function words."""
    words = text.encode("ascii", "replace").translate(_LOWER_LETTERS).split()
    if len(words) < FAST_MIN_WORDS:
        return False
    if not text.isascii():
        ascii_letters = sum(map(len, words))
        other_letters = sum(ch.isalpha() for ch in _NON_ASCII.findall(text))
        if ascii_letters < 0.97 * (ascii_letters + other_letters):
            return False  # more than a trace of non-ASCII letters: accents, other scripts
    hits = sum(map(_ENGLISH_BYTES.__contains__, words))
    return hits >= FAST_MIN_SHARE * len(words)


# The lanes (8 bytes, little-endian, zero-padded) of the function words: a word of at most 8
# letters is one of them exactly when its own lane is one of these.
_ENGLISH_LANES = sorted(int.from_bytes(w, "little") for w in _ENGLISH_BYTES)
_LOW_BYTES = [(1 << 8 * r) - 1 for r in range(9)]


def looks_english_many(texts: Sequence[str]) -> list[bool]:
    """``[looks_english(t) for t in texts]``, the words of all of them found by numpy at once.

    The per-text form splits each text into a list of words only to count them and look each up
    in a set: most of the pre-check's time. Here the texts' translated bytes are joined into one
    buffer, and each word's start, length and first 8 bytes (all of a function word) are read
    by a fixed number of array operations; only a text with characters outside ASCII takes a
    Python step more, to count its other letters as :func:`looks_english` does.
    """
    import numpy as np

    if not texts:
        return []
    joined = b"".join((
        b"\0", b"\0".join([t.encode("ascii", "replace").translate(_LOWER_LETTERS) for t in texts]),
        bytes(9),
    ))  # fmt: skip
    buf = np.frombuffer(joined, np.uint8)
    letter = buf > 0x20  # a lower-case letter; the rest are spaces and the zero separators
    edges = np.flatnonzero(letter[1:] != letter[:-1]) + 1
    starts, lengths = edges[0::2], edges[1::2] - edges[0::2]
    bounds = np.searchsorted(starts, np.flatnonzero(buf[: buf.size - 8] == 0))
    counts = np.diff(bounds)
    lanes = np.ndarray((buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))
    low = np.array(_LOW_BYTES, dtype=np.uint64)
    first = lanes[starts] & low[np.minimum(lengths, 8)]
    hit = (lengths <= 8) & np.isin(first, np.array(_ENGLISH_LANES, dtype=np.uint64))
    hits = np.add.reduceat(np.append(hit, False).astype(np.int64), bounds[:-1]) * (counts > 0)
    letters = np.add.reduceat(np.append(lengths, 0), bounds[:-1]) * (counts > 0)
    # The same float comparison as the per-text form: a share of the word count, in doubles.
    english = (counts >= FAST_MIN_WORDS) & (hits >= FAST_MIN_SHARE * counts.astype(np.float64))
    out = english.tolist()
    for i, text in enumerate(texts):
        if out[i] and not text.isascii():
            ascii_letters = int(letters[i])
            other_letters = sum(ch.isalpha() for ch in _NON_ASCII.findall(text))
            out[i] = not ascii_letters < 0.97 * (ascii_letters + other_letters)
    return out


@lru_cache(maxsize=4096)
def detect(text: str) -> tuple[str | None, float]:
    """(most probable language, its probability) by langdetect; (None, 0.0) without an answer."""
    # Imported here, not at the top: loading langdetect costs start-up time that commands
    # which never detect a language (``curate --help``) should not pay. ``top_language`` is
    # ``detect_langs(text)[0]`` with seed 0, the same answer bit for bit, computed faster.
    from langdetect.lang_detect_exception import LangDetectException

    from validation.langfast import top_language

    try:
        lang, prob = top_language(text)
    except (LangDetectException, IndexError):  # no features; no language above langdetect's 0.1
        return None, 0.0
    if lang.startswith("zh"):
        lang = "zh"
    return lang, prob


# --- Script first ---------------------------------------------------------------------------
# langdetect reads character n-grams and can be wrong about the script itself: of 749 real
# Chinese journal abstracts (tests/data/zh_abstracts.jsonl's source), it called 117 Korean and
# 10 Vietnamese. Han text without a single Hangul syllable is not Korean, and text with kana is
# Japanese, whatever an n-gram model says; so the script decides first, as it does for headers
# (validation/headers.py), and langdetect only chooses among the languages of a script that
# several share (Latin, Cyrillic, Arabic, Devanagari).
_SCRIPT_OF_NAME = (
    ("CJK UNIFIED IDEOGRAPH", "han"), ("CJK COMPATIBILITY IDEOGRAPH", "han"),
    ("HIRAGANA", "kana"), ("KATAKANA", "kana"), ("HALFWIDTH KATAKANA", "kana"),
    ("HANGUL", "hangul"), ("LATIN", "latin"), ("CYRILLIC", "cyrillic"), ("GREEK", "greek"),
    ("ARABIC", "arabic"), ("HEBREW", "hebrew"), ("THAI", "thai"), ("DEVANAGARI", "devanagari"),
    ("BENGALI", "bengali"), ("GURMUKHI", "gurmukhi"), ("GUJARATI", "gujarati"),
    ("TAMIL", "tamil"), ("TELUGU", "telugu"), ("KANNADA", "kannada"),
    ("MALAYALAM", "malayalam"), ("GEORGIAN", "georgian"), ("ARMENIAN", "armenian"),
)  # fmt: skip
# Scripts written by (nearly) one language: the script is the answer.
SCRIPT_LANGUAGE = {
    "hangul": "ko", "kana": "ja", "han": "zh", "greek": "el", "hebrew": "he", "thai": "th",
    "bengali": "bn", "gurmukhi": "pa", "gujarati": "gu", "tamil": "ta", "telugu": "te",
    "kannada": "kn", "malayalam": "ml", "georgian": "ka", "armenian": "hy",
}  # fmt: skip
# Scripts several languages share: langdetect chooses, among these (its own codes).
SCRIPT_LANGUAGES = {
    "cyrillic": ("ru", "uk", "bg", "mk"),
    "arabic": ("ar", "fa", "ur"),
    "devanagari": ("hi", "mr", "ne"),
}
# Every answer the body check can give: langdetect's profiles (its `zh-cn` and `zh-tw` read as
# `zh`) and the languages a script names. A `languages` setting outside these can never match.
LANGDETECT_LANGUAGES = (
    "af ar bg bn ca cs cy da de el en es et fa fi fr gu he hi hr hu id it ja kn ko lt lv mk ml "
    "mr ne nl no pa pl pt ro ru sk sl so sq sv sw ta te th tl tr uk ur vi zh"
).split()
DETECTABLE = frozenset(
    (
        *LANGDETECT_LANGUAGES,
        *SCRIPT_LANGUAGE.values(),
        *(x for v in SCRIPT_LANGUAGES.values() for x in v),
    )
)
# CJK text is dense: one ideograph carries about what a Latin word does, so a Chinese abstract
# holding English terms (`聚氯乙烯(PVC)/纳米二氧化硅(Nano-SiO2)`) has more Latin letters than its
# share of the text. It is CJK when at least this share of its letters are ideographs, kana or
# Hangul syllables; any other script must hold the majority of the letters.
CJK_SHARE = 0.3
_CJK_SCRIPTS = ("han", "kana", "hangul")


@lru_cache(maxsize=4096)
def _script_of(ch: str) -> str | None:
    name = unicodedata.name(ch, "")
    return next((script for prefix, script in _SCRIPT_OF_NAME if name.startswith(prefix)), None)


def letters_by_script(text: str) -> Counter[str]:
    """How many letters of ``text`` each script has (ASCII letters count as Latin at once)."""
    counts: Counter[str] = Counter()
    ascii_letters = sum(ch.isascii() and ch.isalpha() for ch in text)
    if ascii_letters:
        counts["latin"] = ascii_letters
    if not text.isascii():
        counts.update(
            script
            for ch in text
            if not ch.isascii() and ch.isalpha() and (script := _script_of(ch)) is not None
        )
    return counts


def script_language(text: str) -> tuple[str | None, tuple[str, ...]]:
    """(the language the script of ``text`` names, or None; the languages it leaves to choose
    from, empty when any): by the rules above."""
    counts = letters_by_script(text)
    total = sum(counts.values())
    if not total:
        return None, ()
    cjk = sum(counts[s] for s in _CJK_SCRIPTS)
    if cjk >= CJK_SHARE * total:
        if counts["hangul"] and counts["hangul"] >= counts["kana"]:
            return "ko", ()
        return ("ja" if counts["kana"] else "zh"), ()
    script, n = counts.most_common(1)[0]
    if n * 2 <= total:
        return None, ()
    if script in SCRIPT_LANGUAGE:
        return SCRIPT_LANGUAGE[script], ()
    return None, SCRIPT_LANGUAGES.get(script, ())


def language_of(text: str) -> tuple[str | None, float | None]:
    """The language of ``text``: the pre-check's "en" or the script's (probability unknown:
    None), or langdetect's, among the languages of the text's script."""
    english = _batch.english.get(text)
    if english is None:
        english = looks_english(text)
    if english:
        return "en", None
    by_script, among = script_language(text)
    if by_script is not None:
        return by_script, None
    if among:
        return detect_among(text, among)
    return detect(text)


@lru_cache(maxsize=4096)
def detect_among(text: str, languages: tuple[str, ...]) -> tuple[str | None, float | None]:
    """langdetect's most probable language of ``text`` among ``languages`` (the languages of
    its script); (the first of them, None) when it proposes none of them."""
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0
    try:
        ranked = detect_langs(text)
    except LangDetectException:
        return languages[0], None
    best = next((c for c in ranked if c.lang in languages), None)
    return (best.lang, float(best.prob)) if best is not None else (languages[0], None)


@lru_cache(maxsize=16)
def body_language(text: str, min_words: int) -> tuple[str | None, float | None]:
    """The language of a record's raw ``text``, as the ``language`` check and the row see it.

    Markup is stripped first (a detector reading ``\\mathbb`` sees no language); a record of
    fewer than ``min_words`` words gets no answer, ``(None, None)``. Cached by text so that the
    check and the record's row, made in the same visit, detect once.
    """
    from validation.normalize import plain_text_and_words

    known = _batch.plain.get(text)
    plain, words = known if known is not None else plain_text_and_words(text)
    if words < min_words:
        return None, None
    return language_of(plain)


class LanguageBatch:
    """What :func:`body_language` needs of a batch of texts, worked out for all of them ahead of
    their records' checks: each raw text's plain form and word count, and each plain text's
    English pre-check (by :func:`looks_english_many`). Within ``with batch:`` the answers come
    from here; they are the same as without it."""

    def __init__(
        self, texts: Sequence[str] = (), min_words: int = 0, stripped: Sequence[str] | None = None
    ) -> None:
        """``stripped``: ``normalize.strip_markup`` of each text, if the caller made it."""
        self.plain: dict[str, tuple[str, int]] = {}
        if texts:
            from validation.normalize import plain_text_and_words

            if stripped is None:
                self.plain = {t: plain_text_and_words(t) for t in texts}
            else:
                pairs = zip(texts, stripped, strict=True)
                self.plain = {t: plain_text_and_words(t, s) for t, s in pairs}
        long = [plain for plain, words in self.plain.values() if words >= min_words]
        self.english = dict(zip(long, looks_english_many(long), strict=True))

    def __enter__(self) -> LanguageBatch:
        global _batch
        _batch = self
        return self

    def __exit__(self, *exc: object) -> None:
        global _batch
        _batch = _NO_BATCH


def batch_word_total(text: str) -> int | None:
    """``normalize.word_total(text)`` if the current batch counted it: when ``text`` is its own
    plain text (no markup, one line of single spaces: most records), the batch's count of that
    is this count, and the words measure need not count again (about 4 µs a record)."""
    known = _batch.plain.get(text)
    if known is None or known[0] is not text:
        return None
    return known[1]


_NO_BATCH = LanguageBatch()
_batch = _NO_BATCH
