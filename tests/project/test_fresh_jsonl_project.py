"""A fresh project made by ``curate init --format jsonl``, used as someone with their own JSON
Lines export would: the source folder they keep their data in, the config file their repository
already has, and messages that say the fix (the line of a bad key, the key or field meant, the
setting that allows a language, what to do outside any project, counts in the right number).

The records are real (tests/data/formats_sample.jsonl, tests/data/zh_abstracts.jsonl), written
as an export with the user's own field names (``paper_id``, ``abstract``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from curate.cli import main

SAMPLE = ROOT / "tests" / "data" / "formats_sample.jsonl"
CHINESE = ROOT / "tests" / "data" / "zh_abstracts.jsonl"


def export(path: Path, records: list[dict], **extra: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            row = {"paper_id": r["id"], "title": r.get("title"), "abstract": r["abstract"]}
            fh.write(json.dumps({**row, **extra}, ensure_ascii=False) + "\n")


def sample(n: int) -> list[dict]:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[:n]
    return [json.loads(line) for line in lines]


def plain(n: int) -> list[dict]:
    """Records without markup, so that no residue warning is among the findings."""
    marks = ("$", "\\", "*", "_", "<", "&", "`", "#", "~", "--", "''")
    clean = [r for r in sample(135) if not any(m in r["abstract"] for m in marks)]
    return clean[:n]


def init(capsys, *args: str) -> str:
    assert main(["init", *args, "--format", "jsonl", "--text-field", "abstract"]) == 0
    return capsys.readouterr().out


def set_keys(config: Path, *lines: str, table: str = "[tool.curate]") -> None:
    """Add ``lines`` right under ``table`` of the config, as a user would."""
    text = config.read_text(encoding="utf-8")
    head = f"{table}\n"
    assert head in text
    config.write_text(text.replace(head, head + "".join(f"{ln}\n" for ln in lines), 1), "utf-8")


def line_of(config: Path, start: str) -> int:
    lines = config.read_text(encoding="utf-8").splitlines()
    return next(n for n, ln in enumerate(lines, 1) if ln.startswith(start))


# --- any folder ------------------------------------------------------------------------------


def test_the_source_folder_is_a_setting_every_command_and_the_workflow_follow(
    tmp_path, capsys, monkeypatch
):
    project = tmp_path / "papers"
    out = init(capsys, str(project), "--sources", "data/raw")
    assert "into data/raw/, then `curate build`" in out
    assert (project / "data" / "raw" / ".gitkeep").is_file() and not (project / "sources").exists()
    config = (project / "pyproject.toml").read_text(encoding="utf-8")
    assert 'sources = "data/raw"' in config and "in data/raw/, then:" in config
    workflow = yaml.safe_load((project / ".github/workflows/validate.yml").read_text("utf-8"))
    assert workflow[True]["pull_request"]["paths"] == ["data/raw/**", "pyproject.toml"]
    export(project / "data" / "raw" / "papers.jsonl", sample(30))
    monkeypatch.chdir(project)
    assert main(["config", "--get", "sources"]) == 0
    assert capsys.readouterr().out.strip() == '["data/raw"]'
    assert main(["validate", "--no-cache"]) == 0
    assert "1 file, 30 records: 0 errors, 23 warnings" in capsys.readouterr().out
    monkeypatch.chdir(project / "data")  # from a subfolder: the project's folder still
    assert main(["build", "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert "validated 1 file, 30 records" in captured.err
    assert "built ../dist v1.0.0: 30 records in" in captured.out
    manifest = json.loads((project / "dist" / "manifest.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in manifest["sources"]] == ["papers.jsonl"]
    assert "sources" not in manifest["settings"]  # where the files are is no part of the data


def test_in_a_repository_with_its_own_pyproject_the_workflow_triggers_on_curate_toml(
    tmp_path, capsys
):
    repo = tmp_path / "repo"
    (repo / "data" / "raw").mkdir(parents=True)  # where the repository keeps its data already
    export(repo / "data" / "raw" / "papers.jsonl", plain(3))
    (repo / "pyproject.toml").write_text('[project]\nname = "analysis"\n', encoding="utf-8")
    init(capsys, str(repo), "--sources", "data/raw")
    assert sorted(p.name for p in (repo / "data" / "raw").iterdir()) == ["papers.jsonl"]
    assert 'sources = "data/raw"' in (repo / "curate.toml").read_text(encoding="utf-8")
    workflow = yaml.safe_load((repo / ".github/workflows/validate.yml").read_text("utf-8"))
    assert workflow[True]["pull_request"]["paths"] == ["data/raw/**", "curate.toml"]
    assert (repo / "pyproject.toml").read_text("utf-8") == '[project]\nname = "analysis"\n'
    assert main(["validate", "--config", str(repo / "curate.toml"), "--no-cache"]) == 0
    assert "1 file, 3 records: 0 errors, 0 warnings" in capsys.readouterr().out


@pytest.mark.parametrize("folder", ["../elsewhere", "/abs/data", "data/*"])
def test_a_source_folder_outside_the_project_or_with_glob_characters_is_refused(
    tmp_path, capsys, folder
):
    assert main(["init", str(tmp_path / "p"), "--sources", folder]) == 2
    assert f"--sources {folder!r}" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_a_configured_folder_that_is_missing_is_named_with_its_setting(
    tmp_path, capsys, monkeypatch
):
    project = tmp_path / "p"
    init(capsys, str(project))
    set_keys(project / "pyproject.toml", 'sources = ["data/raw", "data/extra"]')
    export(project / "data" / "raw" / "a.jsonl", sample(3))
    monkeypatch.chdir(project)
    assert main(["validate", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "no such folder: data/extra (sources of " in err and "pass a PATH" in err


def test_outside_any_project_validate_says_no_configuration_was_found(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 2
    err = capsys.readouterr().err
    assert "no configuration found" in err and "`curate init`" in err and "PATH" in err
    assert "no such file or folder" not in err


# --- messages that say the fix ---------------------------------------------------------------


def test_a_misspelt_key_has_its_line_and_the_key_meant(tmp_path, capsys):
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    set_keys(config, "near_duplicate_treshold = 0.9")
    assert main(["validate", str(project / "sources"), "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"curate: error: {config}:{line_of(config, 'near_duplicate_treshold')}: unknown option "
        "[tool.curate] 'near_duplicate_treshold' (did you mean 'near_duplicate_threshold'?)"
    )


def test_a_misspelt_code_or_mapping_key_in_curate_toml_is_named_as_that_file_has_it(
    tmp_path, capsys
):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "analysis"\n', encoding="utf-8")
    init(capsys, str(repo))
    config = repo / "curate.toml"
    original = config.read_text(encoding="utf-8")
    set_keys(config, "[severity]", 'latx = "off"', table='# "legacy-*.txt" = ["latex", "markdown"]')
    assert main(["validate", str(repo / "sources"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"curate.toml:{line_of(config, 'latx')}: [severity] unknown finding code 'latx' " in err
    assert "(did you mean 'latex'?)" in err and "tool.curate" not in err
    config.write_text(original, encoding="utf-8")
    set_keys(config, 'idd = "paper_id"', table="[mapping.jsonl]")
    assert main(["validate", str(repo / "sources"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"curate.toml:{line_of(config, 'idd')}: [mapping.jsonl] unknown key 'idd'" in err
    assert "(did you mean 'id'?)" in err


def test_a_mapped_id_no_record_has_is_an_error_listing_the_fields_the_file_has(tmp_path, capsys):
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    set_keys(config, 'id = "paperid"', 'venue = "venu"', table="[tool.curate.mapping.jsonl]")
    export(project / "sources" / "papers.jsonl", plain(5), venue="ICML")
    assert main(["validate", str(project / "sources"), "--config", str(config), "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert (
        "error   id-field         no record of the file has the mapped id field 'paperid' "
        "(did you mean 'paper_id'?) (its fields: 'paper_id', 'title', 'abstract', 'venue')"
    ) in out
    assert "'venu' (for venue) (did you mean 'venue'?): published as null" in out
    assert "1 file, 5 records: 1 error, 1 warning" in out


def test_a_misspelt_text_field_is_one_error_with_the_field_meant(tmp_path, capsys):
    project = tmp_path / "p"
    assert main(["init", str(project), "--format", "jsonl", "--text-field", "abstracts"]) == 0
    export(project / "sources" / "papers.jsonl", sample(4))
    settings = ["--config", str(project / "pyproject.toml"), "--no-cache"]
    assert main(["validate", str(project / "sources"), *settings]) == 1
    out = capsys.readouterr().out
    assert "text field 'abstracts' (did you mean 'abstract'?) (4 read" in out


def test_a_language_error_names_the_setting_that_allows_it(tmp_path, capsys):
    project = tmp_path / "p"
    init(capsys, str(project))
    chinese = json.loads(CHINESE.read_text(encoding="utf-8").splitlines()[0])
    export(project / "sources" / "papers.jsonl", [*sample(3), chinese])
    settings = ["--config", str(project / "pyproject.toml"), "--no-cache"]
    assert main(["validate", str(project / "sources"), *settings]) == 1
    out = capsys.readouterr().out
    assert "papers.jsonl:4: error   language" in out
    assert 'expected en (to allow it: languages = ["en", "zh"])' in out
    set_keys(project / "pyproject.toml", 'languages = ["en", "zh"]')
    assert main(["validate", str(project / "sources"), *settings]) == 0


# --- metadata in the dataset's own words -----------------------------------------------------

VENUES = ["AAAI", "ACL", "CVPR", "EMNLP", "ICCV", "ICLR", "ICML", "IJCAI", "KDD", "NeurIPS"]
CITATION = "@misc{papers2025,\n  title = {Papers},\n  year = {2025}\n}"


def built_project(tmp_path: Path, capsys, monkeypatch, *settings: str) -> Path:
    """A JSONL project of 135 real abstracts and 2 in Chinese, 10 venues over 20 years, its
    mapping naming the export's own fields; built into dist/."""
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    set_keys(config, 'languages = ["en", "zh"]', *settings)
    set_keys(config, 'id = "paper_id"', 'venue = "venue"', 'year = "year"',
             table="[tool.curate.mapping.jsonl]")  # fmt: skip
    chinese = [json.loads(ln) for ln in CHINESE.read_text(encoding="utf-8").splitlines()[:2]]
    with (project / "sources" / "papers.jsonl").open("w", encoding="utf-8") as fh:
        for n, r in enumerate([*sample(135), *chinese]):
            row = {"paper_id": r["id"], "abstract": r["abstract"],
                   "venue": VENUES[n % 10], "year": 2005 + (n * 7) % 20}  # fmt: skip
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1748736000")  # 2025-06-01
    assert main(["build", "--no-cache"]) == 0
    capsys.readouterr()
    return project / "dist"


def test_the_card_speaks_of_files_without_headers_and_where_each_value_came_from(
    tmp_path, capsys, monkeypatch
):
    card = (built_project(tmp_path, capsys, monkeypatch) / "README.md").read_text("utf-8")
    assert "None" not in card and "drop's header" not in card
    assert "### Source files\n\n| File | Records |\n|---|---|\n| `papers.jsonl` | 137 |\n" in card
    first = card.split("\n# p\n", 1)[1].strip().split("\n\n")[0]
    assert first.startswith(
        "Abstracts from AAAI, ACL, CVPR, EMNLP, ICCV, ICLR, ICML, IJCAI, KDD and NeurIPS, "
        "2005–2024, cleaned for\n"
    )  # one sentence, whatever the number of venue-year pairs (here 20)
    assert "| `venue` | `string` | Venue of the record, from the source's field `venue`; " in card
    assert "| `year` | `int32` | Year of the record, from the source's field `year`; " in card


def test_a_default_venue_is_named_as_the_origin_of_the_column(tmp_path, capsys, monkeypatch):
    project = tmp_path / "p"
    init(capsys, str(project))
    set_keys(project / "pyproject.toml", 'default_venue = "arXiv"', 'language = "lang"',
             table="[tool.curate.mapping.jsonl]")  # fmt: skip
    export(project / "sources" / "papers.jsonl", sample(20), lang="en")
    monkeypatch.chdir(project)
    assert main(["build", "--no-cache"]) == 0
    card = (project / "dist" / "README.md").read_text(encoding="utf-8")
    assert (
        "| `venue` | `string` | Venue of the record, 'arXiv', as the field mapping's "
        "`default_venue` says; null where none applies. |"
    ) in card
    no_year = "Year: null, as no source names one (map a field to `year`)."
    assert f"| `year` | `int32` | {no_year} |" in card
    assert "Abstracts from arXiv, cleaned for" in card
    assert (
        "| `language` | `string` | Language of the abstract (ISO 639-1): from the source's "
        "field `lang`, else by script or langdetect. |"
    ) in card
    croissant = json.loads((project / "dist" / "croissant.json").read_text(encoding="utf-8"))
    assert "license" not in croissant  # not stated: no word stands in for one
    assert "datePublished" not in croissant  # SOURCE_DATE_EPOCH is not set


def test_croissant_has_the_licence_url_the_languages_and_the_date_and_validates_clean(
    tmp_path, capsys, monkeypatch
):
    citation = f'citation = """{CITATION}"""'
    dist = built_project(tmp_path, capsys, monkeypatch, 'license = "cc-by-4.0"', citation)
    meta = json.loads((dist / "croissant.json").read_text(encoding="utf-8"))
    assert meta["license"] == "https://spdx.org/licenses/CC-BY-4.0.html"
    assert meta["inLanguage"] == ["en", "zh"]
    assert meta["datePublished"] == "2025-06-01T00:00:00Z"
    assert meta["citeAs"] == CITATION
    card = yaml.safe_load((dist / "README.md").read_text("utf-8").split("---\n")[1])
    assert card["language"] == ["en", "zh"]
    # The real validator, any network attempt failing fast: no warning, no error.
    exe = Path(sys.executable).parent / "mlcroissant"
    proxy = "http://127.0.0.1:9"
    env = {**os.environ, "HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "NO_PROXY": "",
           "CROISSANT_CACHE": str(tmp_path / "croissant-cache")}  # fmt: skip
    proc = subprocess.run(
        [str(exe), "validate", "--jsonld", str(dist / "croissant.json")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and "Done." in proc.stderr, proc.stderr
    assert "warning" not in proc.stderr.lower() and "error" not in proc.stderr.lower()


# --- the text column's name and the noun are settings ----------------------------------------


def test_the_text_column_and_the_noun_are_what_every_output_calls_them(
    tmp_path, capsys, monkeypatch
):
    import datasets
    import pyarrow.parquet as pq

    project = tmp_path / "p"
    init(capsys, str(project))
    set_keys(project / "pyproject.toml", 'text_column = "text"', 'noun = "documents"')
    export(project / "sources" / "papers.jsonl", sample(40))
    monkeypatch.chdir(project)
    assert main(["build", "--no-cache"]) == 0
    dist = project / "dist"
    parquet = dist / "data" / "train-00000-of-00001.parquet"
    assert pq.read_schema(parquet).names[:3] == ["id", "text", "text_raw"]
    loaded = datasets.load_dataset("parquet", data_files=str(parquet), split="train")
    assert "abstract" not in loaded.features and loaded.features["text_raw"].dtype == "string"
    raw = {r["id"]: r["abstract"] for r in sample(40)}
    assert sorted(loaded["text_raw"]) == sorted(raw.values())
    card = (dist / "README.md").read_text(encoding="utf-8")
    features = yaml.safe_load(card.split("---\n")[1])["dataset_info"]["features"]
    assert [f["name"] for f in features][:3] == ["id", "text", "text_raw"]
    assert "Documents in the source files | 40 |" in card
    assert "(`text_raw`) next to the plain-text version (`text`)" in card
    assert "| `text` | `string` | The document as plain Unicode text" in card
    assert "### Length of `text` in words" in card and "too short to be a document" in card
    assert "abstract" not in card.replace("scientific-abstracts", "")
    croissant = json.loads((dist / "croissant.json").read_text(encoding="utf-8"))
    (records,) = croissant["recordSet"]
    assert records["description"] == "One record per document (40 records)."
    assert [f["name"] for f in records["field"]][:3] == ["id", "text", "text_raw"]
    manifest = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["text_column"] == "text"
    assert [c["name"] for c in manifest["schema"]][:3] == ["id", "text", "text_raw"]
    page = (dist / "report.html").read_text(encoding="utf-8")
    assert "Document lengths" in page and "Abstract" not in page

    # A release after one edit: the diff names the columns as the table does.
    (tmp_path / "v1").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(project / "sources"), "--config", str(project / "pyproject.toml"),
                 "--out", str(tmp_path / "v1" / "dist"), "--no-cache"]) == 0  # fmt: skip
    records = sample(40)
    records[3] = {**records[3], "abstract": records[3]["abstract"].replace(" the ", " our ", 1)}
    export(project / "sources" / "papers.jsonl", records)
    capsys.readouterr()
    assert main(["build", str(project / "sources"), "--config", str(project / "pyproject.toml"),
                 "--out", str(tmp_path / "v2"), "--previous", str(tmp_path / "v1" / "dist"),
                 "--no-cache"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "v1" / "dist"), str(tmp_path / "v2")]) == 0
    out = capsys.readouterr().out
    assert "1 edited, 0 added, 0 removed, 0 changed" in out
    assert "[-the-] {+our+}" in out and "abstract" not in out


def test_a_text_column_that_takes_another_columns_name_is_refused(tmp_path, capsys):
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    set_keys(config, 'text_column = "language"')
    assert main(["validate", str(project / "sources"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml:{line_of(config, 'text_column')}: [tool.curate] text_column" in err
    assert "already has a column 'language'" in err


def test_a_settings_change_renews_the_cache_with_a_note_only_under_verbose(
    tmp_path, capsys, monkeypatch
):
    project = tmp_path / "p"
    init(capsys, str(project))
    export(project / "sources" / "papers.jsonl", plain(3))
    monkeypatch.chdir(project)
    monkeypatch.setenv("CURATE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["validate"]) == 0
    set_keys(project / "pyproject.toml", "min_words = 10")
    capsys.readouterr()
    assert main(["validate"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "1 file, 3 records: 0 errors, 0 warnings" in captured.out
    set_keys(project / "pyproject.toml", "max_words = 500")
    assert main(["validate", "-v"]) == 0
    err = capsys.readouterr().err
    assert "curate: note: cache" in err and "stale" in err and "warning:" not in err


def test_the_python_api_reads_the_configured_source_folder(tmp_path, capsys, monkeypatch):
    import curate

    project = tmp_path / "p"
    init(capsys, str(project), "--sources", "data/raw")
    export(project / "data" / "raw" / "papers.jsonl", plain(4))
    monkeypatch.chdir(project)
    assert curate.validate_drops().records == 4
    assert curate.build_dataset(out=tmp_path / "dist").records_out == 4


def test_a_text_column_named_like_the_source_id_column_is_refused(tmp_path, capsys):
    """With a mapped id the table has a `source_id` column: a text column of that name made a
    Parquet file with two `source_id` columns, which pyarrow then refused to read."""
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    set_keys(config, 'text_column = "source_id"')
    set_keys(config, 'id = "paper_id"', table="[tool.curate.mapping.jsonl]")
    export(project / "sources" / "papers.jsonl", plain(3))
    assert main(["validate", str(project / "sources"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml:{line_of(config, 'text_column')}: [tool.curate] text_column" in err
    assert "already has a column 'source_id'" in err


def test_a_repo_id_that_is_no_hub_repository_is_a_usage_error_at_its_line(tmp_path, capsys):
    """It was taken as it was: the card told readers to `load_dataset("my data")`, and publish
    then blamed a `--repo-id` nobody had given."""
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('repo_id = "your-org/p"', 'repo_id = "my data"'), "utf-8")
    export(project / "sources" / "papers.jsonl", plain(3))
    assert main(["build", str(project / "sources"), "--config", str(config),
                 "--out", str(tmp_path / "dist")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert f"pyproject.toml:{line_of(config, 'repo_id')}: " in err and "'my data'" in err
    assert "ORG/NAME" in err and not (tmp_path / "dist").exists()


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ('["english"]', "'english' is no language code the check knows; codes are ISO 639-1"),
        ('["en", "EN"]', "'EN' is no language code the check knows (did you mean 'en'?)"),
        ('["en-US"]', "'en-US' is no language code the check knows (did you mean 'en'?)"),
        ("[]", 'languages must be at least one language code (to check none: '
               '[tool.curate.severity] language = "off"), got []'),
    ],
)  # fmt: skip
def test_a_language_the_check_cannot_answer_is_a_usage_error(tmp_path, capsys, written, said):
    """`languages = ["english"]` was taken: every English record of the file then became a
    `language` error, "expected english (to allow it: languages = ["english", "en"])"."""
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    set_keys(config, f"languages = {written}")
    export(project / "sources" / "papers.jsonl", plain(3))
    assert main(["validate", str(project / "sources"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml:{line_of(config, 'languages = ')}: [tool.curate] " in err
    assert said in err and err.count("\n") == 1


def test_a_singular_noun_is_a_usage_error_that_shows_both_forms(tmp_path, capsys):
    """`noun = "document"` was read as the plural: the card said "Document in the source files"
    and "Document that are equal after normalisation"."""
    project = tmp_path / "p"
    init(capsys, str(project))
    config = project / "pyproject.toml"
    set_keys(config, 'noun = "document"')
    export(project / "sources" / "papers.jsonl", plain(3))
    assert main(["validate", str(project / "sources"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml:{line_of(config, 'noun = ')}: [tool.curate] noun must be " in err
    assert '("documents"), or ["singular", "plural"] (["document", "documents"]' in err
