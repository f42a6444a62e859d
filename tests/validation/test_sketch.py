"""The per-record sketch: ids that do not change, one answer from the batch and single paths, and
near-duplicates of the generator's ground truth found through the signatures.

Oracles written here: literal ids computed by the code before rensa (the published row ids must
not move), ``re.findall`` for the words of ASCII text, the residue triggers themselves, and the
generator's own ground truth (its pairs and their Jaccard similarity).
"""

from __future__ import annotations

import json
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from test_wordhash import real_texts

import validation.corpus
from curate.ingest.discover import collect_paths
from curate.ingest.formats.text import parse_file
from validation import normalize, sketch
from validation.corpus import Corpus, FileResult

# Ids as the numpy sketch of commit cb51761 gave them: the published row ids.
KNOWN_IDS = {
    "We study **MFSC** on graphs.": "708bf047250a2375",
    "We study <b>MFSC</b> on graphs.": "708bf047250a2375",
    "We study \\textbf{MFSC} on graphs.": "708bf047250a2375",
    "ICML 2025 论文列表 摘要": "6e8d02fc37e34d43",
    "—": "7a281783a28b02d6",  # no words: an id of the raw text
    "Café naïve ﬁne": "5d84036c18c8326a",
    "one": "7692c3ad3540bb80",
}

VARIED = [
    *KNOWN_IDS,
    "",
    "$$",
    "a b",
    "a b c",
    "The same words, the same words, the same words again and again.",
    "Mixed: `code`, [a link](https://example.org/x), &amp; <i>tags</i>, $x^2$ -- and ''quotes''.",
    "Ünïcödé wörds ﬁ and ＦＵＬＬ width and 日本語の文章も含む mixed text.",
    "snake_case under_scores __dunder__ 3.14 x1 1e-3",
]


@pytest.mark.parametrize("text,expected", list(KNOWN_IDS.items()))
def test_ids_are_unchanged(text, expected):
    assert sketch.sketch(text, 3)[0].id == expected
    assert sketch.sketch_many([text], 3)[0].id == expected


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_the_batch_and_single_paths_give_the_same_sketches(size, monkeypatch):
    texts = VARIED * 3  # repeated records, and with a small batch many ragged batches
    monkeypatch.setattr(sketch, "SKETCH_BATCH", 4)
    many = sketch.sketch_many(texts, size)
    assert len(many) == len(texts)
    for text, got in zip(texts, many, strict=True):
        one, shingles = sketch.sketch(text, size)
        assert got.id == one.id
        np.testing.assert_array_equal(got.sig, one.sig)
        assert got.sig.dtype == np.uint16 and got.sig.shape == (sketch.NUM_PERM,)
        assert got.sig.any() == bool(normalize.comparison_words(text))
        np.testing.assert_array_equal(shingles, np.unique(shingles))
    assert sketch.sketch_many([], size) == []


SPACED = ["", " ", "  a  ", "a\tb", "A  B\u00a0C", "x^{2} ", " $\\alpha$ and $x_1$ "]


def test_the_comparison_bytes_are_the_comparison_words_joined():
    # Real texts with math, markup, accents and CJK, and texts whose words end or begin
    # with separators: each form's words, split again, are the list path's.
    for text in real_texts() + VARIED + SPACED:
        words, rendered = normalize.comparison_forms(text)
        key, shown = normalize.comparison_bytes(text)
        assert key.decode("utf-8").split() == words
        assert shown.decode("utf-8").split() == rendered
        assert (shown is key) == (rendered is words)
        assert b"\0" not in key and b"\0" not in shown


def test_the_batch_path_gives_each_real_text_its_own_sketch():
    # A batch holding several records' math, markup and CJK words, cut apart in one buffer:
    # every record's id and signature are its single-record sketch.
    texts = real_texts() + SPACED
    many = sketch.sketch_many(texts, 3)
    for text, got in zip(texts, many, strict=True):
        one, _ = sketch.sketch(text, 3)
        assert got.id == one.id, text
        np.testing.assert_array_equal(got.sig, one.sig)


def test_a_batch_given_its_stripped_texts_gives_the_same_sketches():
    # check_file strips each record's markup once, for the sketch and the plain text: given
    # those, the batch must make what it makes from the raw texts alone.
    texts = real_texts() + VARIED + SPACED
    stripped = [normalize.strip_markup(t) for t in texts]
    assert sum(s != t for s, t in zip(stripped, texts, strict=True)) > 10  # markup was there
    for text, strip in zip(texts, stripped, strict=True):
        assert normalize.comparison_bytes(text, strip) == normalize.comparison_bytes(text)
    alone = sketch.sketch_many(texts, 3)
    for got, want in zip(sketch.sketch_many(texts, 3, stripped), alone, strict=True):
        assert got.id == want.id
        np.testing.assert_array_equal(got.sig, want.sig)


def test_a_signature_depends_on_the_shingle_set_only():
    rng = np.random.default_rng(7)
    shingles = np.unique(rng.integers(0, 2**63, 10_000, dtype=np.uint64))
    sig = sketch.signature(shingles)
    shuffled = rng.permutation(np.concatenate((shingles, shingles[:500])))
    np.testing.assert_array_equal(sketch.signature(shuffled), sig)
    assert sig.dtype == np.uint16 and sig.shape == (sketch.NUM_PERM,)
    assert len(set(sig.tolist())) > 100  # the low 16 bits of 126 minima are not all alike
    np.testing.assert_array_equal(sketch.signature(np.empty(0, np.uint64)), sketch.EMPTY_SIG)


def test_signatures_are_the_pinned_algorithm():
    # A known answer: a rensa release that hashes differently changes this, and then every
    # cached signature is stale (see SKETCH_VERSION).
    sig = sketch.signature(np.arange(1, 200, dtype=np.uint64))
    assert sketch.SKETCH_VERSION == "rensa-rminhash-2/seed-20250601/low16/rendered-math/lanes64"
    assert sig[:6].tolist() == [61349, 49466, 12265, 54658, 11799, 46651]  # rensa 0.5.0


def test_signatures_made_in_several_rensa_calls_are_rensa_s_one_call_answer():
    """:func:`sketch._digests` hashes a few rows per rensa call; the oracle is rensa itself,
    given every row in one call (low 16 bits of its minima)."""
    import rensa

    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 400, 3 * sketch.RENSA_ROWS + 5)  # ragged, over several calls
    shingles = rng.integers(0, 2**63, int(sizes.sum()), dtype=np.uint64)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.uint64)
    rows = rensa.RMinHash.digest_matrix_from_flat_token_hashes(
        shingles, offsets, sketch.NUM_PERM, sketch.SIGNATURE_SEED
    ).to_rows()
    expected = np.array(rows, dtype=np.uint32) & 0xFFFF
    got = sketch._digests(shingles, offsets)
    assert got.dtype == np.uint16 and got.shape == (len(sizes), sketch.NUM_PERM)
    np.testing.assert_array_equal(got, expected)


def test_importing_the_sketch_leaves_the_host_s_environment_alone():
    code = (
        "import json, os\n"
        "before = dict(os.environ)\n"
        "import validation.sketch, validation.runner\n"
        "validation.sketch.sketch_many(['some words to hash here'] * 40, 3)\n"
        "print(json.dumps(sorted(set(os.environ.items()) ^ set(before.items()))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


def test_the_estimate_follows_the_jaccard_similarity():
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**63, 400, dtype=np.uint64)
    for keep in (400, 360, 300, 200, 40):
        other = np.concatenate((base[:keep], rng.integers(0, 2**63, 400 - keep, dtype=np.uint64)))
        exact = sketch.jaccard_hashes(np.unique(base), np.unique(other))
        est = float((sketch.signature(base) == sketch.signature(other)).mean())
        assert abs(est - exact) < 0.15, (keep, exact, est)


# --- comparison words: the fast paths give exactly what the regular expressions gave -------------
def test_ascii_words_are_the_word_pattern():
    texts = [
        string.printable,
        "a_b c-d e.f 12ab __x__ \x1c\x1dy\x1fz",
        "".join(map(chr, range(128))),
    ]
    rng = np.random.default_rng(1)
    texts += ["".join(rng.choice(list(string.printable), 300)) for _ in range(200)]
    for text in texts:
        folded = text.casefold()
        assert folded.isascii()
        expected = re.findall(r"[A-Za-z0-9_]+", folded)
        assert normalize._WORD.findall(folded) == expected
        assert normalize.comparison_words(text) == normalize._WORD.findall(
            normalize.unicodedata.normalize("NFKC", normalize._strip_markup(text)).casefold()
        )


def test_known_near_duplicates_of_the_generator_are_found(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import generate

    truth_path = generate.generate(tmp_path / "c", 3000, seed=5, file_faults=dict.fromkeys(
        generate.DEFAULT_FILE_FAULTS, 0))  # fmt: skip
    texts: list[str] = []
    index: dict[tuple[str, int], int] = {}
    for path in collect_paths([tmp_path / "c"]):
        for r in parse_file(path).records:
            index[(path.name, r.line)] = len(texts)
            texts.append(r.text)
    sketches = sketch.sketch_many(texts, 3)
    n = len(texts)
    one = FileResult(
        "c", None, "", 0, np.arange(1, n + 1, dtype=np.int32), [s.id for s in sketches],
        np.stack([s.sig for s in sketches]), [],
    )  # fmt: skip
    corpus = Corpus([one], lambda keys: {k: texts[k[1]] for k in keys})
    pairs = {(earlier, later) for later, earlier, _ in corpus.near_pairs(0.8, 3)}
    parent = list(range(n))

    def root(g: int) -> int:
        while parent[g] != g:
            g = parent[g]
        return g

    first: dict[str, int] = {}
    for g, s in enumerate(sketches):
        first.setdefault(s.id, g)
    for a, b in [*pairs, *((first[s.id], g) for g, s in enumerate(sketches))]:
        parent[max(root(a), root(b))] = min(root(a), root(b))
    truth = [json.loads(x) for x in Path(truth_path).read_text().splitlines()]

    def pair(t: dict) -> tuple[int, int]:
        file, line = t["related"].rsplit(":", 1)
        return tuple(sorted((index[(file, int(line))], index[(t["file"], t["line"])])))

    near = [pair(t) for t in truth if t["code"] == "near-duplicate" and t["similarity"] >= 0.8]
    below = [pair(t) for t in truth if t["code"] == "near-duplicate" and t["similarity"] < 0.7]
    exact = [pair(t) for t in truth if t["code"] == "duplicate"]
    assert len(near) >= 10 and len(exact) >= 10
    assert all(root(a) == root(b) for a, b in near)
    assert not any(p in pairs for p in below)
    assert all(sketches[a].id == sketches[b].id for a, b in exact)


@pytest.fixture(scope="module")
def generated_corpus(tmp_path_factory) -> tuple[list[str], np.ndarray, list[str]]:
    """3,000 generated records (many share an LSH bucket, few are near-duplicates), sketched."""
    sys.path.insert(0, str(ROOT / "bench"))
    import generate

    folder = tmp_path_factory.mktemp("gen")
    generate.generate(folder / "c", 3000, seed=5, file_faults=dict.fromkeys(
        generate.DEFAULT_FILE_FAULTS, 0))  # fmt: skip
    texts = [r.text for path in collect_paths([folder / "c"]) for r in parse_file(path).records]
    sketches = sketch.sketch_many(texts, 3)
    return texts, np.stack([s.sig for s in sketches]), [s.id for s in sketches]


def corpus_of(texts: list[str], sigs: np.ndarray, ids: list[str], load) -> Corpus:  # type: ignore[no-untyped-def]
    n = len(texts)
    one = FileResult("c", None, "", 0, np.arange(1, n + 1, dtype=np.int32), list(ids),
                     sigs.copy(), [])  # fmt: skip
    return Corpus([one], load)


def test_near_pairs_fetch_the_texts_they_compare_not_every_bucket_member(generated_corpus):
    """Texts are what the search holds in memory: it asks for those of the records it compares
    exactly (foreseen by a search over the signatures), each once, not for every record that
    shares a bucket with another."""
    texts, sigs, ids = generated_corpus
    asked: list[int] = []

    def load(keys: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
        asked.extend(ri for _, ri in keys)
        return {k: texts[k[1]] for k in keys}

    compared: set[int] = set()
    real = validation.corpus.jaccard_hashes
    by_hash: dict[bytes, int] = {}

    def counted(a: np.ndarray, b: np.ndarray) -> float:
        compared.update(by_hash[x.tobytes()] for x in (a, b))
        return real(a, b)

    for g, text in enumerate(texts):
        by_hash.setdefault(sketch.shingle_hashes(normalize.comparison_words(text), 3).tobytes(), g)
    corpus = corpus_of(texts, sigs, ids, load)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(validation.corpus, "jaccard_hashes", counted)
        pairs = corpus.near_pairs(0.8, 3)
    active = corpus.first_occurrences() & sigs.any(axis=1)
    members = np.unique(sketch.bucket_members(sigs, active)[0])
    assert pairs and compared
    assert len(asked) == len(set(asked)), "a text was fetched twice"
    assert {texts[g] for g in compared} <= {texts[g] for g in asked}
    # Every record fetched has some other record whose signature estimate is within the margin
    # of the threshold (every pair of records tried); the others are never fetched.
    others = np.flatnonzero(active)
    hopeful = {
        int(g)
        for g in members
        if ((sigs[others] == sigs[g]).mean(axis=1) >= 0.8 - sketch.ESTIMATE_MARGIN).sum() > 1
    }
    assert set(asked) <= hopeful
    assert len(asked) < len(members), (len(asked), len(members))  # measured: 92 of 129


def test_a_text_the_first_search_did_not_foresee_is_fetched_with_its_file(generated_corpus):
    """The exact search may need a record the signature-only search did not name (its clusters
    can form differently): it is fetched then, with the rest of its file's bucket members, and
    the pairs are those of a search that had every text from the start."""
    texts, sigs, ids = generated_corpus
    full = corpus_of(texts, sigs, ids, lambda keys: {k: texts[k[1]] for k in keys})
    expected = full.near_pairs(0.8, 3)
    calls: list[list[int]] = []

    def forgetful(keys: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
        calls.append([ri for _, ri in keys])
        kept = keys if len(calls) > 1 else keys[::2]  # the foreseen fetch returns half
        return {k: texts[k[1]] for k in kept}

    assert corpus_of(texts, sigs, ids, forgetful).near_pairs(0.8, 3) == expected
    assert len(calls) == 2, "the one file was read once more, not once per missing record"


FORKED_AFTER_A_BATCH = """
import functools, multiprocessing
from validation.sketch import sketch_many

texts = [f"record {i} says that the words of a sentence repeat {i % 7} times " * 8
         for i in range(5000)]
sketch_many(texts, 3)  # the parent hashes first, as an in-process validation does
with multiprocessing.get_context("fork").Pool(2) as pool:
    done = pool.map_async(functools.partial(sketch_many, shingle_size=3), [texts, texts])
    print([len(x) for x in done.get(timeout=60)])
"""


@pytest.mark.parametrize("outside", [{}, {"RENSA_DOC_PAR_BATCH_SIZE": "32"}], ids=["", "setting"])
def test_a_worker_forked_after_the_parent_sketched_does_not_hang(outside):
    """rensa's native thread pool does not survive a fork: a child forked after the parent
    hashed a large batch on it waited forever for its first batch. Nor with rensa's setting
    for the smallest parallel batch (32 rows) in the environment."""
    proc = subprocess.run(
        [sys.executable, "-c", FORKED_AFTER_A_BATCH],
        cwd=ROOT, capture_output=True, text=True, timeout=180, env={**os.environ, **outside},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[5000, 5000]"


def test_math_typed_as_tex_and_as_unicode_compares_equal_for_near_duplicates():
    # One paper's abstract in two sources: TeX on one side, the rendered Unicode on the other
    # (written here; arXiv titles of the dev corpus carry `Lyman-$α$` beside `$\alpha$`).
    tex = (
        r"We bound the $\alpha$-mixing coefficient by $O(n^{-2})$ for $x_i \in \mathcal{X}$ and "
        r"show that $\beta^{2}$ controls the rate of the estimator in every regime we study."
    )
    uni = (
        "We bound the α-mixing coefficient by O(n⁻²) for xᵢ ∈ 𝒳 and "
        "show that β² controls the rate of the estimator in every regime we study."
    )
    words, rendered = normalize.comparison_forms(tex)
    assert words == normalize.comparison_words(tex) and words != rendered
    assert rendered == normalize.comparison_words(uni)
    assert normalize.comparison_forms(uni) == (rendered, rendered)
    a, shingles_a = sketch.sketch(tex, 3)
    b, shingles_b = sketch.sketch(uni, 3)
    assert sketch.jaccard_hashes(shingles_a, shingles_b) == 1.0
    np.testing.assert_array_equal(a.sig, b.sig)
    # The id keeps the form without rendering: ids do not change between releases.
    assert a.id == normalize.record_id(" ".join(normalize.comparison_words(tex)))
    assert a.id != b.id


def test_a_pair_that_differs_only_in_how_its_math_is_written_is_a_near_duplicate(tmp_path):
    from curate.pipeline.validate import validate_paths
    from validation.config import Config

    tex = (
        r"We bound the $\alpha$-mixing coefficient of the chain and show that the estimator "
        r"converges at rate $n^{-1/2}$ whenever $\beta > 0$, which we verify on three datasets."
    )
    uni = (
        "We bound the α-mixing coefficient of the chain and show that the estimator "
        "converges at rate n^(-1/2) whenever β > 0, which we verify on three datasets."
    )
    (tmp_path / "a.txt").write_text(f"ICML 2025 Papers\n\n{tex}\n\n{uni}\n", encoding="utf-8")
    run = validate_paths([tmp_path], Config())
    near = [f for f in run.report if f.code == "near-duplicate"]
    assert len(near) == 1 and near[0].line == 5 and near[0].score == 1.0
