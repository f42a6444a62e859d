"""The language of a record is decided by its script first, langdetect only within a script.

Real text: tests/data/zh_abstracts.jsonl (Chinese core-journal abstracts, see its SOURCE note);
langdetect alone calls many of them Korean, Vietnamese or Catalan. Expected languages are
written here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from curate.pipeline.validate import validate_paths
from validation.checks import word_count
from validation.config import Config
from validation.language import body_language, detect, script_language
from validation.normalize import plain_text, word_total
from validation.records import Record
from validation.registry import REGISTRY

ZH = [
    json.loads(line)
    for line in (ROOT / "tests" / "data" / "zh_abstracts.jsonl").read_text("utf-8").splitlines()
]


def test_the_sample_holds_what_langdetect_gets_wrong() -> None:
    # The oracle for the fix is langdetect itself: on these texts it answers Korean & co.
    answers = [detect(plain_text(r["abstract"]))[0] for r in ZH]
    assert answers == [r["langdetect"] for r in ZH]
    assert answers.count("ko") >= 20 and sum(a != "zh" for a in answers) >= 29


@pytest.mark.parametrize("record", ZH, ids=[r["id"] for r in ZH])
def test_chinese_abstracts_are_chinese(record: dict) -> None:
    assert body_language(record["abstract"], 8)[0] == "zh"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # Han without Hangul is not Korean; kana is Japanese; Hangul is Korean (written here).
        ("本文提出一种基于深度学习的图像分割方法,实验结果表明该方法有效.", "zh"),
        ("本研究では、深層学習を用いた画像分割手法を提案する。実験により有効性を示した。", "ja"),
        ("본 논문에서는 딥러닝 기반의 영상 분할 방법을 제안한다. 실험 결과 효과적이다.", "ko"),
        ("Το άρθρο αυτό παρουσιάζει μια νέα μέθοδο ανάλυσης δεδομένων.", "el"),
        ("บทความนี้นำเสนอวิธีการใหม่สำหรับการวิเคราะห์ข้อมูล", "th"),
    ],
)
def test_the_script_decides(text: str, language: str) -> None:
    assert script_language(text)[0] == language


def test_a_shared_script_is_left_to_langdetect_among_its_languages() -> None:
    lang, among = script_language("Эта статья описывает новый метод анализа данных.")
    assert lang is None and "ru" in among
    assert (
        body_language("Эта статья описывает новый метод анализа данных и его свойства.", 3)[0]
        in among
    )


def test_an_english_abstract_with_a_few_chinese_characters_is_english() -> None:
    text = (
        "We collected the survey in Beijing (北京) and Shanghai (上海) and find that the "
        "effect of the policy on the households that we observed is small but significant."
    )
    assert script_language(text)[0] is None
    assert body_language(text, 8)[0] == "en"


def _drop(tmp_path: Path, records: list[str]) -> Path:
    folder = tmp_path / "drops"
    folder.mkdir()
    (folder / "zh.txt").write_text(
        "ICML 2025 论文列表\n\n" + "\n\n".join(records) + "\n", encoding="utf-8"
    )
    return folder


def test_a_drop_of_chinese_abstracts_validates_with_languages_zh(tmp_path: Path) -> None:
    run = validate_paths([_drop(tmp_path, [r["abstract"] for r in ZH])], Config(languages=["zh"]))
    codes = [f.code for f in run.report]
    assert "language" not in codes, [f.message for f in run.report if f.code == "language"]
    assert "too-long" not in codes and "too-short" not in codes


def test_chinese_abstracts_are_reported_as_chinese_not_korean(tmp_path: Path) -> None:
    run = validate_paths([_drop(tmp_path, [r["abstract"] for r in ZH])], Config())
    messages = [f.message for f in run.report if f.code == "language"]
    assert len(messages) == len(ZH)
    assert all("'zh' (by its script)" in m for m in messages)


def test_length_limits_weigh_a_cjk_character_as_two_thirds_of_a_word() -> None:
    long = [r["abstract"] for r in ZH if word_total(r["abstract"]) > 400]
    assert len(long) >= 4  # each character a word, these were `too-long`
    for text in long:
        record = Record(file="zh.txt", line=3, text=text, line_starts=())
        assert 250 < word_count(record) < 400
        assert list(REGISTRY["too-long"].run(record, Config())) == []
        assert list(REGISTRY["too-long"].run(record, Config(max_words=200)))


def test_every_language_langdetect_can_name_is_one_the_setting_accepts():
    from importlib.resources import files

    from validation.language import DETECTABLE

    profiles = {p.name for p in files("langdetect").joinpath("profiles").iterdir()}
    assert {p.split("-")[0] for p in profiles} <= DETECTABLE
    assert {"ko", "ja", "zh", "hy", "ka"} <= DETECTABLE  # decided by the script alone
