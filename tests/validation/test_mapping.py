"""The field mapping: `[tool.curate.mapping]`, per format or per glob, checked when it is read,
and part of what keys the validation cache (it decides what records a file yields)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from curate.pipeline.validate import validate_paths
from curate.settings import from_mapping, load_settings
from validation.config import ConfigError
from validation.mapping import Column, FieldMap, extra_columns, mapping_for, parse

RECORDS = [
    json.loads(x) for x in (ROOT / "tests/data/formats_sample.jsonl").read_text().splitlines()
]


def test_an_entry_with_every_key():
    (entry,) = parse({"csv": {
        "text": "Abstract", "id": "forum", "title": "Title", "venue": "conf", "year": "Year",
        "language": "lang", "default-venue": "ICLR", "default_year": 2021, "delimiter": ";",
        "columns": {"authors": "list<string>", "n_cites": {"field": "Citations", "type": "int64"}},
    }}).values()  # fmt: skip
    assert entry == FieldMap(
        "Abstract", "forum", "Title", "conf", "Year", "lang", "ICLR", 2021,
        (Column("authors", "authors", "list<string>"), Column("n_cites", "Citations", "int64")),
        ";",
    )  # fmt: skip
    assert [c.name for c in entry.carried()] == ["title", "authors", "n_cites"]


def test_a_glob_wins_over_its_format_and_the_first_glob_over_later_ones():
    mapping = parse({
        "jsonl": {"text": "abstract"},
        "arxiv/*.jsonl": {"text": "summary"},
        "*.jsonl": {"text": "body"},
    })  # fmt: skip
    assert mapping_for(mapping, "src/arxiv/a.jsonl", "jsonl").text == "summary"
    assert mapping_for(mapping, "src/other/a.jsonl", "jsonl").text == "body"
    assert mapping_for(mapping, "src/a.jsonl.gz", "jsonl").text == "abstract"
    assert mapping_for(mapping, "src/a.csv", "csv") == FieldMap()  # the default: `text`


def test_entries_fill_one_column_each_with_one_type():
    mapping = parse(
        {"jsonl": {"title": "title"}, "csv": {"title": "Title", "columns": {"n": "int32"}}}
    )
    assert extra_columns(mapping) == (("title", "string"), ("n", "int32"))
    with pytest.raises(ValueError, match="'n' is int32 in csv and int64 in jsonl"):
        parse({"csv": {"columns": {"n": "int32"}}, "jsonl": {"columns": {"n": "int64"}}})


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"jsonl": {"txt": "abstract"}}, "unknown key 'txt'"),
        ({"jsonl": {"text": 3}}, "text must be a field name"),
        ({"jsonl": {"default_year": "2024"}}, "default_year must be an integer"),
        ({"jsonl": {"columns": {"Title": "string"}}}, "'Title' is not a column name"),
        ({"jsonl": {"columns": {"n": "integer"}}}, "the type must be one of string, int32"),
        ({"jsonl": {"title": "t", "columns": {"title": "string"}}}, "column 'title' twice"),
        ({"csv": {"delimiter": ", "}}, "delimiter must be one character"),
        ({"xml": {"text": "abstract"}}, "'xml' is no source format with fields"),
        ({"text": {"text": "abstract"}}, "'text' is no source format with fields"),
        ({"jsonl": {"columns": {"venue": "string"}}}, "the extra column 'venue' would replace"),
    ],
)
def test_a_wrong_entry_is_an_error_naming_the_file_and_the_key(table, message):
    with pytest.raises(ConfigError, match=message) as raised:
        from_mapping({"mapping": table}, "my/curate.toml")
    assert str(raised.value).startswith("my/curate.toml: ")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "src" / "a").mkdir(parents=True)
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS[:20])
    (tmp_path / "src" / "a" / "x.jsonl").write_text(lines)
    (tmp_path / "src" / "b.jsonl").write_text(lines)
    return tmp_path


def run(project, mapping: str):
    (project / "curate.toml").write_text(mapping)
    checks = load_settings(project / "curate.toml").checks
    return validate_paths([project / "src"], checks, cache_dir=project / "cache")


def test_the_mapping_keys_the_cache(project):
    first = run(project, '[mapping.jsonl]\ntext = "abstract"\n')
    assert first.report.records == 40 and first.cache_hits == 0
    same = run(project, '[mapping.jsonl]\ntext = "abstract"\n')
    assert (same.cache_hits, same.cache_misses) == (2, 0)
    other = run(project, '[mapping.jsonl]\ntext = "title"\n')
    assert other.cache_hits == 0 and other.report.records == 40


def test_the_same_bytes_mapped_otherwise_are_not_taken_for_each_other(project):
    run(project, '[mapping.jsonl]\ntext = "abstract"\n')
    # b.jsonl holds the bytes of a/x.jsonl; a glob now maps it otherwise: its records differ
    again = run(
        project, '[mapping."b.jsonl"]\ntext = "title"\n[mapping.jsonl]\ntext = "abstract"\n'
    )
    ids = {f.path.rsplit("/", 1)[1]: set(f.ids) for f in again.files}
    assert len(ids["x.jsonl"]) == len(ids["b.jsonl"]) == 20
    assert ids["x.jsonl"].isdisjoint(ids["b.jsonl"])  # b.jsonl's records are its titles
