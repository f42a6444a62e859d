"""The fast detector gives langdetect's own answers: the same language and probability, bit for bit.

The oracle is the installed langdetect itself (``detect_langs(text)[0]`` with seed 0, as
``validation.language.detect`` called it), run here on every text; nothing expected is computed
by ``validation.langfast``. Texts: a fixed sample of the dev corpus
(``tests/data/language_sample.jsonl``, made by ``bench/make_language_sample.py``, each with its
id), a generated corpus with many non-English records, hand-written texts in other scripts and
edge cases, and random strings mixing the character classes langdetect treats specially.
``bench/bench_language.py`` runs the same comparison on every dev-corpus record.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from importlib.metadata import version

import numpy as np
import pytest
from conftest import ROOT
from langdetect import DetectorFactory, detect_langs
from langdetect import detector_factory as reference_factory
from langdetect.lang_detect_exception import LangDetectException

from curate.ingest.discover import collect_paths
from curate.ingest.formats.text import parse_file
from validation import langfast
from validation.language import detect, looks_english
from validation.normalize import plain_text

SAMPLE = [
    json.loads(line)
    for line in (ROOT / "tests" / "data" / "language_sample.jsonl").read_text("utf-8").splitlines()
    if line
]


def reference(text: str) -> tuple[str, str] | str:
    """langdetect's answer as (language, exact hex of the probability), or its exception's name."""
    DetectorFactory.seed = 0
    try:
        best = detect_langs(text)[0]
    except (LangDetectException, IndexError) as e:
        return type(e).__name__
    return best.lang, best.prob.hex()


def fast(text: str) -> tuple[str, str] | str:
    try:
        lang, prob = langfast.top_language(text)
    except (LangDetectException, IndexError) as e:
        return type(e).__name__
    return lang, prob.hex()


def detector_input(item: dict) -> str:
    """The check's input (``plain_text``) for records and titles; raw abstracts as written."""
    return item["text"] if item["kind"] == "raw" else plain_text(item["text"])


def mismatches(texts: list[str]) -> list[tuple[int, object, object]]:
    out = []
    for i, text in enumerate(texts):
        expected, got = reference(text), fast(text)
        if got != expected:
            out.append((i, expected, got))
    return out


def test_the_installed_langdetect_is_the_verified_release():
    """An upgrade must be verified again (the fast path reproduces 1.0.9's internals)."""
    assert version("langdetect") == langfast.installed_version() == langfast.VERIFIED_VERSION
    assert langfast._model() is not None  # the fast path is the one in use


def test_the_model_holds_langdetects_profiles_in_its_language_order():
    reference_factory.init_factory()
    factory = reference_factory._factory
    model = langfast._model()
    assert model.langs == factory.langlist and len(model.langs) == 55
    assert list(model.index) == list(factory.word_lang_prob_map)
    assert np.array_equal(model.matrix, np.array(list(factory.word_lang_prob_map.values())))


@pytest.mark.slow
def test_identical_answers_on_the_dev_corpus_sample():
    texts = [detector_input(item) for item in SAMPLE]
    assert len(texts) == 315 and {i["kind"] for i in SAMPLE} == {"record", "title", "raw"}
    bad = [(SAMPLE[i]["id"], SAMPLE[i]["kind"], e, g) for i, e, g in mismatches(texts)]
    assert bad == []


@pytest.mark.slow
def test_identical_answers_on_a_generated_corpus_with_many_non_english_records(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import generate

    no_file_faults = dict.fromkeys(generate.DEFAULT_FILE_FAULTS, 0)
    generate.generate(
        tmp_path / "c", 1000, seed=7, rates={"language": 0.3}, file_faults=no_file_faults
    )
    plains = [
        plain_text(r.text) for p in collect_paths([tmp_path / "c"]) for r in parse_file(p).records
    ]
    # Every record the language check sends to langdetect, and every fifth of the others.
    texts = [t for i, t in enumerate(plains) if not looks_english(t) or i % 5 == 0]
    answers = [reference(t) for t in texts]
    assert {a[0] for a in answers if isinstance(a, tuple)} >= {"de", "fr", "es", "it", "pt", "en"}
    assert sum(a[0].startswith("zh") for a in answers if isinstance(a, tuple)) >= 20
    assert mismatches(texts) == []


ENGLISH = SAMPLE[0]["text"]
CHINESE = "我们提出了一种训练深度神经网络的新方法。"
GERMAN = "Wir schlagen eine neue Methode zum Trainieren tiefer neuronaler Netze vor."
FRENCH = "Nous proposons une nouvelle méthode pour entraîner des réseaux de neurones profonds."
HANDWRITTEN = [
    "",
    " ",
    "   \n\t ",
    "12345 678.9 (2024) [3]",
    "!!! ??? ... --- ***",
    "ICML 2025 Papers",  # langdetect says Catalan
    "ICML 2025 论文列表",  # langdetect says Korean
    "ICML 2025 論文一覧",
    "a",
    "A",
    "AB",
    "NASA JPL ESA",
    "ABc DEf GHi jKL",
    "The NeurIPS and ICML venues",
    "曜",  # normalised to a representative no profile holds
    "莱",
    "«»° \u00a0",
    "https://example.org/path?q=1 someone@example.com",
    "Write to first.last@example.co.uk for the code",
    "Мы предлагаем новый метод обучения нейронных сетей с малым числом примеров.",
    "Пропонуємо новий метод навчання нейронних мереж.",
    "Προτείνουμε μια νέα μέθοδο για την εκπαίδευση νευρωνικών δικτύων.",
    "نقترح طريقة جديدة لتدريب الشبكات العصبية العميقة.",
    "ما یک روش جدید برای آموزش شبکه‌های عصبی پیشنهاد می‌کنیم.",  # Farsi yeh
    "אנו מציעים שיטה חדשה לאימון רשתות עצביות.",
    "हम गहरे तंत्रिका नेटवर्क के प्रशिक्षण के लिए एक नई विधि प्रस्तावित करते हैं।",
    "เราเสนอวิธีการใหม่สำหรับการฝึกโครงข่ายประสาทเทียม",
    "우리는 심층 신경망을 학습하는 새로운 방법을 제안한다.",
    CHINESE,
    "我們提出了一種訓練深度神經網路的新方法。",
    "本論文では、深層ニューラルネットワークを学習する新しい手法を提案する。",
    "ㄅㄆㄇㄈ 注音符號",
    "Chúng tôi đề xuất một phương pháp mới để huấn luyện mạng nơ-ron sâu.",
    # The same Vietnamese with decomposed marks (what normalize_vi recomposes).
    "Chu\u0301ng to\u0302i \u0111e\u0302\u0300 xua\u0302\u0301t mo\u0323\u0302t phuong pha\u0301p",
    "Propunem o metodă nouă: învățare și țintă (ș, ț with commas; ş, ţ with cedillas).",
    "Derin sinir ağlarını eğitmek için yeni bir yöntem öneriyoruz.",
    GERMAN,
    FRENCH,
    "Deep learning 深度学习 is 一种 method, e.g. ニューラル networks — “quoted” … ‰",
    "😀 🚀 🎉 emoji only 😀",
    "a lone surrogate \udcff from a file decoded with surrogateescape, and Ünïcödé",
    "中文" * 40 + " English words between " + "日本語のテキスト" * 20,
    # Longer than langdetect's 10,000-character limit: what lies beyond it must not count.
    (ENGLISH + " ") * (10_000 // len(ENGLISH) + 1) + "Wir schlagen eine neue Methode vor. " * 50,
]


@pytest.mark.parametrize("text", HANDWRITTEN, ids=lambda t: repr(t[:24]))
def test_identical_answers_on_handwritten_texts(text):
    assert fast(text) == reference(text)


# Character classes langdetect's normalisation and cleaning treat apart (Basic Latin letters and
# non-letters, Latin-1 exclusions, Romanian comma letters, Vietnamese vowels and combining marks,
# Latin Extended Additional, Arabic and Farsi yeh, kana, bopomofo, CJK classes, Hangul, general
# punctuation, characters beyond the BMP), and whole words in one script.
CLASSES = [
    string.ascii_lowercase * 3,
    string.ascii_uppercase,
    string.digits + string.punctuation,
    "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿßÀÉÎÖÜ«»°\u00a0¿¡",
    "ąćęłńśźżčďěňřšťůžőűşţșțğıİ",
    "aeiouyAEIOUYâêôăơư\u0300\u0301\u0303\u0309\u0323",
    "ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ",
    "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔ",
    "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДЁЖ",
    "ابتثجحخدذرزسشصضطظعغفقكلمنهوييی",
    "אבגדהוזחטיכלמנסעפצקרשת",
    "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह",
    "กขคงจฉชซญดตถทธนบปผพฟภมยรลวศษสหอฮ",
    "가나다라마바사아자차카타파하한국어학습",
    "あいうえおかきくけこアイウエオカキクケコー",
    "ㄅㄆㄇㄈㄉㄊㄋㄌ",
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会曜莱",
    "—–‘’“”…•‰′″。、「」・\u3000",
    "😀🚀🎉\U00010400",
]


def random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        home = rng.choice(CLASSES)  # most words in one class, so that some texts converge
        words = []
        for _ in range(rng.randint(0, 30)):
            chars = home if rng.random() < 0.7 else rng.choice(CLASSES)
            word = "".join(rng.choice(chars) for _ in range(rng.randint(1, 8)))
            if rng.random() < 0.05:
                word = rng.choice(["http://ex.org/a?b", "me@ex.org", "  ", "\n", "ABC"]) + word
            words.append(word)
        out.append(rng.choice([" ", " ", " ", "", "  "]).join(words))
    return out


FUZZ = random_texts(400, seed=21)


@pytest.mark.slow
def test_identical_answers_on_random_mixed_script_texts():
    assert mismatches(FUZZ) == []


@pytest.mark.slow
def test_identical_ngrams_and_probability_vectors():
    """Below the answer: the same sampled n-grams in the same order, the same 55 probabilities."""
    reference_factory.init_factory()
    model = langfast._model()
    texts = [detector_input(item) for item in SAMPLE[::10]] + FUZZ[:150] + HANDWRITTEN
    compared = 0
    DetectorFactory.seed = 0
    for text in texts:
        detector = reference_factory._factory.create()
        detector.append(text)
        detector.cleaning_text()
        expected = detector._extract_ngrams()
        got = model.ngrams(text)
        assert got == [model.index[w] for w in expected], text[:60]
        if expected:
            detector._detect_block()
            assert model.probabilities(got).tobytes() == np.array(detector.langprob).tobytes()
            compared += 1
    assert compared > 150


def test_the_word_cache_does_not_change_answers(monkeypatch):
    monkeypatch.setattr(langfast, "_WORD_CACHE_LIMIT", 1)  # emptied at every text
    texts = [detector_input(item) for item in SAMPLE[:20]] + FUZZ[:20]
    assert mismatches(texts) == []


def test_detect_gives_langdetects_answer_with_chinese_folded_and_no_answer_as_none():
    detect.cache_clear()
    DetectorFactory.seed = 0
    best = detect_langs(CHINESE)[0]
    assert best.lang == "zh-cn"
    assert detect(CHINESE) == ("zh", best.prob)
    best = detect_langs(GERMAN)[0]
    assert detect(GERMAN) == (best.lang, best.prob) and best.lang == "de"
    assert detect("12345") == (None, 0.0)
    assert detect("") == (None, 0.0)


def test_an_unverified_langdetect_gets_langdetects_own_call(monkeypatch):
    calls = []
    real = langfast._reference
    monkeypatch.setattr(langfast, "installed_version", lambda: "1.0.10")
    monkeypatch.setattr(langfast, "_reference", lambda t: calls.append(t) or real(t))
    langfast._model.cache_clear()
    try:
        assert fast(FRENCH) == reference(FRENCH)
        assert calls == [FRENCH]
    finally:
        langfast._model.cache_clear()
    monkeypatch.undo()
    assert langfast._model() is not None


def test_a_text_the_elementwise_forms_cannot_vouch_for_gets_langdetects_own_call(monkeypatch):
    """A negative weight (impossible at langdetect's alpha) is handed to langdetect itself."""
    calls = []
    real = langfast._reference
    monkeypatch.setattr(langfast._model(), "alpha", -1.0)
    monkeypatch.setattr(langfast, "_reference", lambda t: calls.append(t) or real(t))
    assert fast(GERMAN) == reference(GERMAN)
    assert calls == [GERMAN]


def test_a_cold_validate_of_english_drops_loads_neither_langdetect_nor_the_model(tmp_path):
    """The English pre-check answers every bundled record, so neither is imported."""
    code = (
        "import sys\n"
        "from curate.pipeline.validate import validate_paths\n"
        "from validation.config import Config\n"
        "from pathlib import Path\n"
        "validate_paths([Path('sources')], Config())\n"
        "print(sorted(m for m in sys.modules if 'langdetect' in m or m == 'validation.langfast'))\n"
        "print('validation.checks' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"CURATE_CACHE_DIR": str(tmp_path / "cache"), "PATH": ""},
    )  # fmt: skip
    assert run.stdout.split("\n")[:2] == ["[]", "True"]
