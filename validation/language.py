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


def language_of(text: str) -> tuple[str | None, float | None]:
    """The language of ``text``: the pre-check's "en" (probability unknown) or langdetect's."""
    if looks_english(text):
        return "en", None
    return detect(text)


@lru_cache(maxsize=16)
def body_language(text: str, min_words: int) -> tuple[str | None, float | None]:
    """The language of a record's raw ``text``, as the ``language`` check and the row see it.

    Markup is stripped first (a detector reading ``\\mathbb`` sees no language); a record of
    fewer than ``min_words`` words gets no answer, ``(None, None)``. Cached by text so that the
    check and the record's row, made in the same visit, detect once.
    """
    from validation.normalize import plain_text, word_total

    plain = plain_text(text)
    if word_total(plain) < min_words:
        return None, None
    return language_of(plain)
