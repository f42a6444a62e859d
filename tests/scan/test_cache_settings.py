"""The validation cache is keyed by the checks' settings alone: what the dataset is called, its
card, its Hub repository or how its text is cleaned never throws cached results away; a
threshold of a check does."""

from __future__ import annotations

import shutil

import pytest
from conftest import SEED_FILES

from curate.pipeline.validate import validate_paths
from curate.settings import load_settings


@pytest.fixture
def project(tmp_path):
    (tmp_path / "sources").mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, tmp_path / "sources" / seed.name)
    return tmp_path


def run(project, settings_text: str):
    (project / "curate.toml").write_text(settings_text, encoding="utf-8")
    checks = load_settings(project / "curate.toml").checks
    return validate_paths([project / "sources"], checks, cache_dir=project / "cache")


@pytest.mark.parametrize(
    "edit",
    [
        'description = "Another description of the same data."',
        'dataset_name = "Renamed"',
        'repo_id = "someone/elsewhere"',
        'license = "cc-by-4.0"',
        'math = "tex"',
        'near_duplicates = "keep"',
        '[row_policy]\ntruncated = "drop"',
    ],
)
def test_a_card_hub_or_cleaning_setting_keeps_every_cache_hit(project, edit):
    first = run(project, 'description = "The data."\n')
    assert first.cache_hits == 0 and first.cache_misses > len(SEED_FILES)  # files and records
    again = run(project, edit + "\n")
    assert (again.cache_hits, again.cache_misses) == (len(SEED_FILES), 0)
    assert again.report.to_dict() == first.report.to_dict()


@pytest.mark.parametrize("edit", ["min_words = 5", "near_duplicate_threshold = 0.9",
                                  '[severity]\nlatex = "off"'])  # fmt: skip
def test_a_check_setting_invalidates_the_cache(project, edit):
    run(project, "")
    again = run(project, edit + "\n")
    assert again.cache_hits == 0
