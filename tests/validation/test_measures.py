"""Measure, then decide: the threshold checks measure every record first, decide from the
measurement, and the report carries each measure's distribution beside its thresholds."""

from __future__ import annotations

import dataclasses
import json

import pytest

from curate.cli import main
from curate.pipeline.validate import validate_paths
from validation import registry
from validation.config import Config
from validation.measures import distribution, percentile


def words(n: int, start: int = 0) -> str:
    return " ".join(f"word{k}" for k in range(start, start + n)) + "."


@pytest.fixture
def drop(tmp_path):
    """Five records of 3, 25, 30, 40 and 500 words, counted here by construction."""
    folder = tmp_path / "d"
    folder.mkdir()
    body = "\n\n".join(words(n, 1000 * i) for i, n in enumerate([3, 25, 30, 40, 500]))
    (folder / "a.txt").write_text(f"ICML 2025 Papers\n\n{body}\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1, 2, 3, 4, 5, 6], 0.5, 3),  # nearest rank: ceil(3) = the 3rd value
        ([1, 2, 3, 4, 5, 6], 0.1, 1),
        ([1, 2, 3, 4, 5, 6], 0.9, 6),  # ceil(5.4) = the 6th
        (list(range(1, 11)), 0.9, 9),
        (list(range(1, 11)), 0.0, 1),
        (list(range(1, 11)), 1.0, 10),
        ([7], 0.5, 7),
        ([], 0.5, 0),
    ],
)
def test_the_percentile_is_the_nearest_rank(values, q, expected):
    assert percentile(values, q) == expected


def test_the_distribution_of_one_to_six():
    assert distribution([1, 2, 3, 4, 5, 6]) == {
        "min": 1, "p10": 1, "median": 3, "p90": 6, "max": 6
    }  # fmt: skip


def test_the_report_carries_the_word_counts_beside_both_thresholds(drop):
    report = validate_paths([drop], Config(severity={"language": "off"}), jobs=1).report
    measured = report.measures["words"]
    assert (measured["records"], measured["min"], measured["median"], measured["max"]) == (
        5, 3, 30, 500
    )  # fmt: skip
    assert measured["checks"] == {
        "too-short": {"setting": "min_words", "threshold": 20, "findings": 1},
        "too-long": {"setting": "max_words", "threshold": 400, "findings": 1},
    }


def test_a_check_decides_from_the_measurement(drop, monkeypatch):
    """Make the measure say 1,000 words for every record: too-long fires on all of them and
    too-short on none, whatever the text holds."""
    big = dataclasses.replace(registry.MEASURES["words"], func=lambda record, config: 1000)
    monkeypatch.setitem(registry.MEASURES, "words", big)
    report = validate_paths([drop], Config(severity={"language": "off"}), jobs=1).report
    assert sum(f.code == "too-long" for f in report) == 5
    assert sum(f.code == "too-short" for f in report) == 0
    assert report.measures["words"]["min"] == 1000


def test_the_json_report_holds_the_measures(drop, tmp_path, capsys):
    config = tmp_path / "curate.toml"
    config.write_text('[severity]\nlanguage = "off"\n', encoding="utf-8")
    assert main(["validate", str(drop), "--format", "json", "--no-cache", "--config",
                 str(config)]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert data["measures"]["words"]["checks"]["too-long"]["findings"] == 1
    assert data["measures"]["words"]["records"] == 5


def test_a_cached_run_reports_the_same_measures(drop, tmp_path):
    cache = tmp_path / "cache"
    cold = validate_paths([drop], Config(), jobs=1, cache_dir=cache).report
    warm = validate_paths([drop], Config(), jobs=1, cache_dir=cache)
    assert warm.cache_hits == 1
    assert warm.report.measures == cold.measures
