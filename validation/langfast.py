"""langdetect's own answer with fewer interpreter steps: the same n-grams, draws and floats.

langdetect stays the reference detector, but in pure Python it costs 2 to 7 ms a record: over
half of it goes to reading the text one character at a time (each through ``NGram.normalize``, a
binary search of Unicode blocks) and most of the rest to multiplying a 55-language vector element
by element for every n-gram it samples. :func:`top_language` returns exactly what
``detect_langs(text)[0]`` returns with seed 0 -- the same language and the same probability, bit
for bit -- because it makes the same IEEE operations in the same order:

- the text goes through langdetect's own URL and e-mail patterns, Vietnamese normaliser, length
  limit and Latin-removal rule; each character is normalised by ``NGram.normalize`` itself,
  through a table that function fills as characters are first seen;
- n-grams are cut word by word (cached by word) by a transcription of ``NGram.add_char`` and
  ``Detector._extract_ngrams``, in the order langdetect lists them;
- the profiles are langdetect's own files in the installed package, read as its
  ``DetectorFactory`` reads them, into one matrix [n-gram, language] in that factory's language
  order;
- the draws come from a ``random.Random`` seeded as langdetect seeds its own and called in the
  same order (one ``gauss`` per trial, one ``choice`` per update);
- an update, ``prob[i] *= weight + p[i]`` for each language in langdetect, is the same addition
  and multiplication done elementwise by numpy, a block of updates one product down the columns
  of the probabilities and the block's rows; the normalisation sums the values in order (an
  accumulation: numpy's pairwise sum, and Python's compensated ``sum`` from 3.12 on, would round
  differently), then divides elementwise.

This leans on langdetect's internals (names, constants and behaviour), which is sound only
because langdetect is no longer released: the fast path runs on the version verified here
(:data:`VERIFIED_VERSION`, pinned in pyproject.toml) and any other installed version gets
langdetect's own call. ``tests/validation/test_langfast.py`` and ``bench/bench_language.py``
compare the two.
"""

from __future__ import annotations

import json
import os
import random
import re
from functools import lru_cache

import numpy as np
from langdetect import DetectorFactory, detect_langs
from langdetect.detector import Detector
from langdetect.detector_factory import PROFILES_DIRECTORY
from langdetect.lang_detect_exception import ErrorCode, LangDetectException
from langdetect.utils.ngram import NGram
from langdetect.utils.unicode_block import unicode_block

# The langdetect release whose internals this module reproduces (its last, from 2021).
VERIFIED_VERSION = "1.0.9"
SEED = 0  # the seed validation.language gives langdetect, for reproducible answers

# Characters Detector.cleaning_text counts as Latin ('A' to 'z', brackets and all) and removes
# from a text mostly in another script.
_LATIN_RANGE = dict.fromkeys(range(ord("A"), ord("z") + 1))
_LATIN_BYTES = bytes(range(ord("A"), ord("z") + 1))
_HIGH = re.compile(r"[^\x00-\u02ff]")  # what cleaning_text may count as non-Latin
# The per-word n-gram cache is emptied past this many words (about 300 bytes each).
_WORD_CACHE_LIMIT = 20_000


def installed_version() -> str | None:
    """The ``Version:`` of the langdetect distribution beside the imported package, or None.

    Read from its ``.dist-info`` folder directly: ``importlib.metadata`` costs more start-up
    time than the detection it would guard.
    """
    import langdetect

    site = os.path.dirname(os.path.dirname(os.path.abspath(langdetect.__file__)))
    try:
        names = [n for n in os.listdir(site) if n.lower().startswith("langdetect-")]
    except OSError:
        return None
    if len(names) != 1 or not names[0].endswith(".dist-info"):
        return None
    try:
        with open(os.path.join(site, names[0], "METADATA"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip()
                if not line.strip():
                    break
    except OSError:
        return None
    return None


def _counts_as_non_latin(ch: str) -> bool:
    """Detector.cleaning_text's test for a character at or above U+0300, as it is written there.

    It compares the block's number with a block name, so every such character counts,
    Vietnamese letters of Latin Extended Additional included; the same expression keeps the
    counts equal whatever ``unicode_block`` returns.
    """
    return unicode_block(ch) != "Latin Extended Additional"


class _NonLatin(dict):
    """Character -> 1 when cleaning_text counts it as non-Latin, else 0; filled on first use."""

    def __missing__(self, ch: str) -> int:
        n = self[ch] = int(ch >= "\u0300" and _counts_as_non_latin(ch))
        return n


class _Normalised(dict):
    """Code point -> ``NGram.normalize`` of its character, filled on first use by ``translate``."""

    def __missing__(self, cp: int) -> str:
        ch = self[cp] = NGram.normalize(chr(cp))
        return ch


def _profiles() -> tuple[list[str], dict[str, int], np.ndarray]:
    """langdetect's profiles as ``DetectorFactory.load_profile`` and ``add_profile`` read them.

    The files of the installed package in the same (``os.listdir``) order; the language list;
    one row per n-gram, numbered in the order the factory's map receives them; and the value
    ``add_profile`` stores, the n-gram's count over the number of n-grams of its length in the
    language (a division of integers below 2**53, the same float in numpy as in Python). Read
    here rather than through the factory, whose map of 87,598 Python lists costs 60 MB and,
    turned into a matrix, half a second; the tests hold the two equal.
    """
    langs: list[str] = []
    index: dict[str, int] = {}
    columns = []
    for filename in os.listdir(PROFILES_DIRECTORY):
        path = os.path.join(PROFILES_DIRECTORY, filename)
        if filename.startswith(".") or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            profile = json.load(f)
        langs.append(profile["name"])
        freq = profile["freq"]
        for word in freq:
            index.setdefault(word, len(index))
        grams = [w for w in freq if 1 <= len(w) <= NGram.N_GRAM]
        rows = np.fromiter(map(index.__getitem__, grams), np.intp, len(grams))
        counts = np.fromiter(map(freq.__getitem__, grams), np.float64, len(grams))
        lengths = np.fromiter(map(len, grams), np.intp, len(grams))
        totals = np.asarray(profile["n_words"], dtype=np.float64)
        columns.append((rows, counts / totals[lengths - 1]))
    matrix = np.zeros((len(index), len(langs)))
    for column, (rows, values) in enumerate(columns):
        matrix[rows, column] = values
    return langs, index, matrix


class _Model:
    """langdetect's profiles and parameters, read from the installed package once per process."""

    def __init__(self) -> None:
        self.langs, self.index, self.matrix = _profiles()
        detector = Detector(DetectorFactory())  # its defaults, read rather than copied
        if detector.prior_map is not None:
            raise RuntimeError("langdetect's default detector has a prior map")
        self.alpha: float = detector.alpha
        self.n_trial: int = detector.n_trial
        self.max_text_length: int = detector.max_text_length
        self.uniform = 1.0 / len(self.langs)
        self.normalised = _Normalised((cp, NGram.normalize(chr(cp))) for cp in range(128))
        # bytes.translate wants 256 entries; an ASCII text uses the first 128.
        self.ascii = bytes(ord(self.normalised[cp]) for cp in range(128)) + bytes(128)
        self.non_latin = _NonLatin()
        self.words: dict[str, tuple[int, ...]] = {}

    def text(self, text: str) -> str:
        """The text langdetect cuts n-grams from, before its per-character normalisation.

        ``Detector.append`` and ``cleaning_text`` also fold runs of spaces into one, which no
        n-gram sees (a second space only resets the n-gram buffer, as the first did). Each
        pattern is skipped where it cannot match, which leaves the text as its ``sub`` would.
        """
        text = Detector.URL_RE.sub(" ", text)
        if "@" in text:
            text = Detector.MAIL_RE.sub(" ", text)
        if text.isascii():  # no combining mark, nothing at or above U+0300: no Latin removed
            return text[: self.max_text_length]
        if any(mark in text for mark in NGram.DMARK_CLASS):
            text = NGram.normalize_vi(text)
        text = text[: self.max_text_length]
        high = _HIGH.findall(text)
        if not high:
            return text
        non_latin = sum(map(self.non_latin.__getitem__, high))
        # In UTF-8 the bytes A..z are those characters, never part of another one.
        data = text.encode("utf-8", "surrogatepass")
        latin = len(data) - len(data.translate(None, _LATIN_BYTES))
        if latin * 2 < non_latin:
            text = text.translate(_LATIN_RANGE)
        return text

    def normalise(self, text: str) -> str:
        """``NGram.normalize`` of every character of ``text``."""
        if text.isascii():
            return text.encode("ascii").translate(self.ascii).decode("ascii")
        return text.translate(self.normalised)

    def word_ngrams(self, word: str, spaced: bool) -> tuple[int, ...]:
        """Rows of the n-grams ``Detector._extract_ngrams`` takes from one normalised word.

        ``word`` holds no space; ``spaced`` when a space follows it. The buffer starts as after
        a space, as it does at the start of a text and after each word; the loop is
        ``NGram.add_char`` (less the normalisation, done already) and the inner loop of
        ``_extract_ngrams``.
        """
        if not word:
            return ()
        index = self.index
        out: list[int] = []
        grams = " "
        capital = False
        for ch in (word + " ") if spaced else word:
            last = grams[-1]
            if last == " ":
                grams = " "
                capital = False
            elif len(grams) >= NGram.N_GRAM:
                grams = grams[1:]
            grams += ch
            if ch.isupper():
                if last.isupper():
                    capital = True
            else:
                capital = False
            if capital:
                continue
            for n in range(1, NGram.N_GRAM + 1):
                if len(grams) < n:
                    break
                w = grams[-n:]
                if w != " " and w in index:
                    out.append(index[w])
        return tuple(out)

    def ngrams(self, text: str) -> list[int]:
        """Rows of the n-grams langdetect samples from ``text``, in its order (repeats kept)."""
        *words, tail = self.normalise(self.text(text)).split(" ")
        cache = self.words
        if len(cache) > _WORD_CACHE_LIMIT:
            cache.clear()
        out: list[int] = []
        for word in words:
            ids = cache.get(word)
            if ids is None:
                ids = cache[word] = self.word_ngrams(word, True)
            out += ids
        out += self.word_ngrams(tail, False)
        return out

    def probabilities(self, ngrams: list[int]) -> np.ndarray:
        """``Detector._detect_block``'s language probabilities for these n-gram rows.

        langdetect draws one n-gram per update and normalises after the first update and after
        every fifth one from then on; the draws of such a block are made first (they do not
        depend on the probabilities), their rows gathered and offset by the weight at once,
        then applied in order. Raises _Unsure where the elementwise forms could part from
        langdetect's loops: a negative weight (its running maximum starts at 0.0, Python's
        ``max`` does not) or a sum of zero (langdetect raises ZeroDivisionError, numpy gives
        NaN).
        """
        rnd = random.Random(SEED)  # as Detector.random after its seed(), per text (thread-safe)
        draw = rnd.choice
        gauss = rnd.gauss
        take = self.matrix.take
        product = np.multiply.reduce
        running_sum = np.add.accumulate
        largest = np.maximum.reduce
        divide = np.divide
        add = np.add
        n_trial = self.n_trial
        limit = Detector.ITERATION_LIMIT
        threshold = Detector.CONV_THRESHOLD
        langs = len(self.langs)
        langprob = np.zeros(langs)
        # Row 0: the probabilities; rows 1-5: the rows of a block's draws, offset by the weight.
        # The product down the columns is langdetect's ``prob[i] *= weight + p[i]`` for each
        # draw in order: a reduction along the first axis multiplies row after row.
        block = np.empty((6, langs))
        prob = block[0]
        rows = block[1:]
        unnormalised = np.empty(langs)
        sums = np.empty(langs)
        for _ in range(n_trial):
            prob.fill(self.uniform)
            alpha = self.alpha + gauss(0.0, 1.0) * Detector.ALPHA_WIDTH
            weight = alpha / Detector.BASE_FREQ
            if not weight >= 0.0:
                raise _Unsure
            used = block[:2]  # update 0, then blocks of updates 1-5, 6-10, ...
            take([draw(ngrams)], 0, rows[:1], "clip")
            i = 0
            while True:
                add(used[1:], weight, used[1:])  # weight + p, as langdetect adds them
                product(used, 0, None, unnormalised)
                # The sum in order, one addition after another, as _normalize_prob's loop: an
                # accumulation is sequential (numpy's sum is pairwise, and Python's own sum
                # compensates its rounding from 3.12 on: both round differently).
                total = running_sum(unnormalised, 0, None, sums)[-1]
                if not total > 0.0:
                    raise _Unsure
                # The largest quotient is the largest value's quotient: rounding is monotonic.
                top = largest(unnormalised) / total
                divide(unnormalised, total, prob)
                if top > threshold or i >= limit:
                    break
                i += 5
                used = block
                take(
                    [draw(ngrams), draw(ngrams), draw(ngrams), draw(ngrams), draw(ngrams)],
                    0,
                    rows,
                    "clip",
                )
            langprob += prob / n_trial
        return langprob


class _Unsure(Exception):
    """The elementwise forms might not give langdetect's floats for this text."""


@lru_cache(maxsize=1)
def _model() -> _Model | None:
    """The model, or None when the installed langdetect is not the version verified here."""
    if installed_version() != VERIFIED_VERSION:
        return None
    return _Model()


def _reference(text: str) -> tuple[str, float]:
    DetectorFactory.seed = SEED
    best = detect_langs(text)[0]
    return best.lang, best.prob


def top_language(text: str) -> tuple[str, float]:
    """``(lang, prob)`` of ``detect_langs(text)[0]`` with seed 0, and the same exceptions.

    Raises LangDetectException when the text holds no n-gram of any profile, and IndexError
    when no language reaches langdetect's reporting threshold, as that expression does.
    """
    model = _model()
    if model is None:
        return _reference(text)
    ngrams = model.ngrams(text)
    if not ngrams:
        raise LangDetectException(ErrorCode.CantDetectError, "No features in text.")
    try:
        prob = model.probabilities(ngrams)
    except _Unsure:
        return _reference(text)
    # _sort_probability: languages above the threshold, the most probable first, ties in
    # language order (a stable sort); argmax takes the first of equal maxima too.
    best = int(np.argmax(prob))
    if not prob[best] > Detector.PROB_THRESHOLD:
        raise IndexError("list index out of range")
    return model.langs[best], float(prob[best])
