"""The sketch's word hash, against a reference written here in plain Python from its definition
(``validation.sketch.word_hashes``): the UTF-8 bytes of a word as 8-byte little-endian lanes,
each lane mixed with MurmurHash3's finalizer, summed, and the sum mixed with the length.

Real words: every word of the dev-corpus excerpts under tests/data (both comparison forms, so the
words of rendered math too: ``δχ2``, ``λλ1548``), their accented words (``gröbner``,
``łojasiewicz``, ``déjàvu``) and the Chinese abstracts of zh_abstracts.jsonl (each ideograph a
word). The shingle hashes of whole records are held to a reference too, and the batch path to
the single one.
"""

from __future__ import annotations

import itertools
import json
import os
import string
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from validation import normalize, sketch

MASK = 2**64 - 1


def fmix64(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK
    return x ^ (x >> 33)


def reference_word_hash(word: str) -> int:
    data = word.encode("utf-8")
    total = 0
    for k in range(max(1, -(-len(data) // 8))):
        lane = int.from_bytes(data[8 * k : 8 * k + 8], "little")  # short: zero-padded
        total += fmix64(lane ^ ((k + 1) * 0x9E3779B185EBCA87 & MASK))
    return fmix64((total + len(data) * 0xC2B2AE3D27D4EB4F) & MASK)


def reference_shingles(words: list[str], size: int) -> list[int]:
    """The sorted shingle hashes: each run of ``size`` word hashes (of all the words when there
    are fewer) folded left to right with the five odd constants of ``_MIX``."""
    mix = [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5,
           0x85EBCA77C2B2AE63]  # fmt: skip
    hashes = [reference_word_hash(w) for w in words]
    size = max(1, min(size, len(words)))
    out = set()
    for i in range(len(words) - size + 1):
        acc = 0
        for k in range(size):
            acc = ((acc ^ hashes[i + k]) * mix[k % 5]) & MASK
            acc ^= acc >> 29
        out.add(acc)
    return sorted(out)


def real_texts() -> list[str]:
    texts = []
    for name in ("math_sample", "residue_labelled", "record_checks_labelled", "zh_abstracts"):
        for line in (ROOT / "tests" / "data" / f"{name}.jsonl").read_text("utf-8").splitlines():
            row = json.loads(line)
            texts.append(row.get("text") or row["abstract"])
    return texts


EDGES = [
    "",  # no words
    "— $$",  # no words either
    "Word",  # one word
    "Two words",  # fewer words than the shingle size
    "x " * 40,  # one word repeated: one shingle
    "ﬁne Ünïcödé ＦＵＬＬ 日本語の文章 naïve",  # NFKC, accents, CJK
    "pneumonoultramicroscopicsilicovolcanoconiosis " + "a" * 1000 + " 𝒳",  # many lanes
]


def test_word_hashes_are_the_reference_on_real_words():
    words = sorted(
        {w for t in real_texts() for form in normalize.comparison_forms(t) for w in form}
    )
    got = sketch.word_hashes(" ".join(words), len(words))
    assert got.dtype == np.uint64
    assert got.tolist() == [reference_word_hash(w) for w in words]
    # What the sample holds: accented, Greek and rendered-math, CJK words; 1, 2 and 3 lanes.
    for word in ("gröbner", "łojasiewicz", "δχ2", "λλ1548", "采", "electrocardiograms"):
        assert word in words
    assert {min(3, -(-len(w.encode()) // 8)) for w in words} == {1, 2, 3}


def test_known_answers():
    """Pinned values (from the reference above): a change here changes every signature, and
    needs a new SKETCH_VERSION."""
    known = {
        "": 0x7387C01C9328E5DB,
        "a": 0x828ED67E2040A038,
        "mfsc": 0x0636182E0ACBBA9E,
        "gröbner": 0x16B7B8FBDB5F74D9,  # 8 bytes: one lane
        "采": 0x1A334DB6D5842315,
        "abcdefghijklmnopq": 0x800CA27FECC0F1E8,  # three lanes
    }
    words = list(known)
    assert [reference_word_hash(w) for w in words] == list(known.values())
    assert sketch.word_hashes(" ".join(words), len(words)).tolist() == list(known.values())


def test_every_length_and_neighbour():
    """Lengths on both sides of every lane boundary, ASCII and multi-byte, each hashed alone
    and among others: a word's hash depends on its own bytes only."""
    rng = np.random.default_rng(5)
    alphabet = list(string.ascii_letters + string.digits) + list("éßøλж日本")
    words = ["".join(rng.choice(alphabet, n)) for n in [*range(41), 63, 64, 65, 1000]]
    expected = [reference_word_hash(w) for w in words]
    assert sketch.word_hashes(" ".join(words), len(words)).tolist() == expected
    shuffled = rng.permutation(len(words))
    together = sketch.word_hashes(" ".join(words[i] for i in shuffled), len(words))
    assert together.tolist() == [expected[i] for i in shuffled]
    assert [int(sketch.word_hashes(w, 1)[0]) for w in words] == expected


@pytest.mark.slow
def test_short_words_of_one_length_never_collide():
    """Up to 8 bytes a word is one lane, and both mixes are bijections: every 1-, 2- and 3-byte
    word of letters and digits, and a million random 8-byte ones, get hashes of their own."""
    chars = string.ascii_lowercase + string.digits
    words = [*chars, *map("".join, itertools.product(chars, repeat=2)),
             *map("".join, itertools.product(chars, repeat=3))]  # fmt: skip
    got = sketch.word_hashes(" ".join(words), len(words))
    assert np.unique(got).size == len(words)
    rng = np.random.default_rng(8)
    lanes = rng.integers(0x21, 0x7F, (1_000_000, 8), dtype=np.uint8).view("<u8").ravel()
    eight = np.unique(lanes).astype("<u8").view(np.uint8).reshape(-1, 8)
    assert len(eight) > 999_000  # (nearly all distinct)
    spaced = np.hstack([eight, np.full((len(eight), 1), 0x20, np.uint8)]).tobytes()[:-1]
    got = sketch.word_hashes(spaced.decode("ascii"), len(eight))
    assert np.unique(got).size == len(eight)


def test_the_hash_is_the_same_in_every_process():
    code = (
        "import json\n"
        "from validation.sketch import word_hashes\n"
        "print(json.dumps(word_hashes('gröbner δχ2 采 ﬁne x', 5).tolist()))"
    )
    outs = set()
    for seed in ("0", "1", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                                capture_output=True, text=True).stdout)  # fmt: skip
    assert len(outs) == 1
    words = ["gröbner", "δχ2", "采", "ﬁne", "x"]
    assert json.loads(outs.pop()) == [reference_word_hash(w) for w in words]


@pytest.mark.parametrize("size", [1, 3, 5])
def test_shingles_are_the_reference_and_the_batch_is_the_single_path(size, monkeypatch):
    texts = [*EDGES, *real_texts()]
    monkeypatch.setattr(sketch, "SKETCH_BATCH", 37)  # ragged batches
    many = sketch.sketch_many(texts, size)
    for text, batched in zip(texts, many, strict=True):
        words, rendered = normalize.comparison_forms(text)
        one, shingles = sketch.sketch(text, size)
        assert shingles.tolist() == (reference_shingles(rendered or words, size) if words else [])
        assert batched.id == one.id
        np.testing.assert_array_equal(batched.sig, one.sig)
        np.testing.assert_array_equal(sketch.shingle_hashes(rendered or words, size), shingles)


def test_words_with_a_space_are_refused():
    with pytest.raises(ValueError, match="spaces"):
        sketch.word_hashes("two words", 1)
    assert sketch.word_hashes("", 0).size == 0
    assert sketch.word_hashes("", 1).tolist() == [reference_word_hash("")]
