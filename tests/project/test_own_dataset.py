"""Curate for anyone's dataset: config found up the tree, the dataset described in config, several
venues and years, header phrases, rule control (off, per-file ignores, inline accept, baseline),
row policies (drop, flag) and publishing to the repository the build was made for.

The drops are real abstracts (see tests/data/anyone/SOURCE.md); what a test expects is written
in the test (texts, ids read back from the Parquet by their raw text, YAML parsed with PyYAML),
never computed by the code under test.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import datasets
import hubserver
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT
from hubserver import FakeHub

from curate.cli import main
from curate.settings import find_config, load_config, load_settings_file
from validation.config import ConfigError

fake_hub = hubserver.fake_hub

DATA = ROOT / "tests" / "data" / "anyone"
PARQUET = "data/train-00000-of-00001.parquet"
CITATION = (
    "@misc{mixedabstracts2024,\n"
    "  title = {Mixed ML abstracts},\n"
    "  author = {Doe, Jane},\n"
    "  year = {2024}\n"
    "}"
)
OTHER_KIND = f'''
[tool.curate]
dataset_name = "Mixed ML Abstracts"
repo_id = "someone/mixed-ml-abstracts"
description = "Abstracts of NeurIPS 2018 and ICML 2024 papers, for a retrieval experiment."
license = "cc-by-4.0"
citation = """{CITATION}"""
creators = ["Jane Doe", "John Roe"]
homepage = "https://example.org/mixed"
task_categories = ["text-retrieval"]
tags = ["abstracts", "machine-learning"]
venues = ["NeurIPS", "ICML"]
years = [2018, 2024]
'''
# A placeholder (hand-written, the kind of text the checks exist for) and a real abstract cut
# mid-sentence (openreview:FCmWhJQ14I, its first 40 words).
PLACEHOLDER = "Abstract not available."


def _truncated() -> str:
    first = (DATA / "icml-2024.txt").read_text(encoding="utf-8").split("\n")[2]
    return " ".join(first.split()[:35])  # ends "… sophisticated in": cut


def _project(root: Path, config: str, *, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(config, encoding="utf-8")
    sources = root / "sources"
    sources.mkdir()
    for name in ("icml-2024.txt", "neurips-2018.txt"):
        shutil.copy(DATA / name, sources / name)
    for name, text in (files or {}).items():
        (sources / name).write_text(text, encoding="utf-8")
    (root / "notes").mkdir()
    return root


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


@pytest.fixture(scope="module")
def other_kind(tmp_path_factory) -> Path:
    """The other-kind dataset, built by `curate build` run from a subfolder of the project."""
    root = _project(tmp_path_factory.mktemp("other") / "mixed", OTHER_KIND)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root / "notes")
        mp.setenv("SOURCE_DATE_EPOCH", "1717200000")  # 2024-06-01T00:00:00Z
        mp.setenv("CURATE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        assert main(["build"]) == 0
    return root / "dist"


def test_config_is_found_from_a_subfolder_and_paths_resolve_in_the_project(other_kind):
    # `curate build` ran in notes/: it read ../pyproject.toml, ../sources, and wrote ../dist.
    manifest = json.loads((other_kind / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["repo_id"] == "someone/mixed-ml-abstracts"
    assert sorted(s["name"] for s in manifest["sources"]) == ["icml-2024.txt", "neurips-2018.txt"]


def test_several_venues_and_years_build_into_one_dataset(other_kind):
    table = datasets.load_dataset(str(other_kind), split="train")
    assert sorted({(r["venue"], r["year"]) for r in table}) == [("ICML", 2024), ("NeurIPS", 2018)]
    assert len(table) == 6


def test_card_yaml_and_prose_carry_the_configured_description(other_kind):
    card = (other_kind / "README.md").read_text(encoding="utf-8")
    meta = _front_matter(card)
    assert meta["license"] == "cc-by-4.0"
    assert "license_name" not in meta and "license_link" not in meta  # only for "other"
    assert meta["pretty_name"] == "Mixed ML Abstracts"
    assert meta["task_categories"] == ["text-retrieval"]
    assert meta["tags"] == ["abstracts", "machine-learning"]
    assert "# Mixed ML Abstracts" in card
    assert "Abstracts of NeurIPS 2018 and ICML 2024 papers, for a retrieval experiment." in card
    assert f"## Citation\n\n```bibtex\n{CITATION}\n```" in card
    assert "- Jane Doe\n- John Roe" in card
    assert "## Uses and limitations" in card
    assert "https://spdx.org/licenses/CC-BY-4.0.html" in card


def test_croissant_carries_it_and_mlcroissant_gives_no_warning(other_kind, caplog):
    mlc = pytest.importorskip("mlcroissant")
    meta = json.loads((other_kind / "croissant.json").read_text(encoding="utf-8"))
    assert meta["citeAs"] == CITATION
    assert meta["creator"] == [
        {"@type": "sc:Person", "name": "Jane Doe"},
        {"@type": "sc:Person", "name": "John Roe"},
    ]
    assert meta["license"] == "https://spdx.org/licenses/CC-BY-4.0.html"
    assert meta["datePublished"] == "2024-06-01T00:00:00Z"
    assert meta["url"] == "https://example.org/mixed"
    assert meta["description"].startswith("Abstracts of NeurIPS 2018 and ICML 2024 papers")
    caplog.set_level(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        dataset = mlc.Dataset(jsonld=other_kind / "croissant.json")
        records = list(dataset.records(record_set="default"))
    assert dataset.metadata.ctx.issues.errors == set()
    assert dataset.metadata.ctx.issues.warnings == set()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert len(records) == 6
    # The command-line validator too, with any network attempt failing fast.
    exe = Path(sys.executable).parent / "mlcroissant"
    proxy = "http://127.0.0.1:9"
    env = {**os.environ, "HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "NO_PROXY": "",
           "CROISSANT_CACHE": str(other_kind.parent / "croissant-cache")}  # fmt: skip
    proc = subprocess.run(
        [str(exe), "validate", "--jsonld", str(other_kind / "croissant.json")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and "Done." in proc.stderr, proc.stderr
    assert "warning" not in proc.stderr.lower() and "error" not in proc.stderr.lower()


def test_other_licence_has_name_and_link_in_the_card_and_a_url_in_croissant(tmp_path, monkeypatch):
    root = _project(
        tmp_path / "p",
        '[tool.curate]\nrepo_id = "someone/x"\nlicense = "other"\n'
        'license_name = "venue-terms-1.0"\nlicense_link = "LICENSE.md"\n'
        "venues = []\nyears = []\n",
    )
    monkeypatch.chdir(root)
    assert main(["build"]) == 0
    meta = _front_matter((root / "dist" / "README.md").read_text(encoding="utf-8"))
    assert (meta["license"], meta["license_name"], meta["license_link"]) == (
        "other", "venue-terms-1.0", "LICENSE.md"
    )  # fmt: skip
    croissant = json.loads((root / "dist" / "croissant.json").read_text(encoding="utf-8"))
    assert croissant["license"] == "https://huggingface.co/datasets/someone/x/blob/main/LICENSE.md"


def test_without_venues_the_odd_one_out_of_a_majority_is_a_mismatch_with_a_hint(tmp_path, capsys):
    second = (
        (DATA / "icml-2024.txt").read_text(encoding="utf-8").replace("Predicting", "Forecasting", 1)
    )
    root = _project(tmp_path / "p", "[tool.curate]\n", files={"icml-2024b.txt": second})
    assert main(["validate", str(root / "sources")]) == 1
    out = capsys.readouterr().out
    assert "header-mismatch" in out and "venues = [...]" in out
    # the majority as the files write it, not upper-cased
    assert "differs from the venue of 2 of 3 files ('ICML')" in out


def test_a_tie_is_no_majority(tmp_path, capsys):
    """One ICML and one NeurIPS drop: neither venue is the drops' venue, so neither differs."""
    root = _project(tmp_path / "p", "[tool.curate]\n")
    assert main(["validate", str(root / "sources")]) == 0
    assert "header-mismatch" not in capsys.readouterr().out


# --- config discovery ------------------------------------------------------------------------


def test_nearest_config_wins_and_a_pyproject_without_the_table_is_passed_over(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.curate]\nmin_words = 5\n", encoding="utf-8")
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    assert find_config(inner) == tmp_path / "pyproject.toml"
    assert load_config(search_from=inner).min_words == 5
    (tmp_path / "a" / "curate.toml").write_text("min_words = 7\n", encoding="utf-8")
    assert find_config(inner) == tmp_path / "a" / "curate.toml"
    assert load_config(search_from=inner).min_words == 7


def test_curate_config_prints_each_setting_with_its_origin(tmp_path, monkeypatch, capsys):
    (tmp_path / "curate.toml").write_text('min_words = 7\nrepo_id = "a/b"\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert main(["config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    where = str(tmp_path / "curate.toml")
    assert lines[0] == f"# config file: {where}"
    assert any(ln.split() == ["min_words", "=", "7", "#", where] for ln in lines)
    assert any(ln.split() == ["max_words", "=", "400", "#", "default"] for ln in lines)
    assert main(["config", "--get", "repo_id"]) == 0
    assert capsys.readouterr().out == "a/b\n"


def test_bad_settings_are_usage_errors(tmp_path, capsys):
    bad = tmp_path / "curate.toml"
    for text, expected in [
        ('[severity]\nlatex = "ignore"\n', "must be 'error' | 'warning' | 'off'"),
        ('[row_policy]\ntruncated = "delete"\n', "must be 'keep' | 'flag' | 'drop'"),
        ('[per-file-ignores]\n"*.txt" = ["latexx"]\n', "unknown finding code 'latexx'"),
        ('[header_phrases]\n"論文リスト" = "fr"\n', "its script says 'ja', not 'fr'"),
        ("years = ['2024']\n", "years must be a list of integers"),
        ('[row_policy]\nduplicate = "drop"\n', "row policies are for record checks"),
    ]:
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=expected.replace("[", r"\[").replace("|", r"\|")):
            load_config(bad)
        assert main(["validate", "--config", str(bad), str(DATA)]) == 2
        assert "curate: error:" in capsys.readouterr().err


# --- header phrases ---------------------------------------------------------------------------


def _header_findings(tmp_path: Path, header: str, config: str) -> list[tuple[str, str]]:
    folder = tmp_path / "h"
    folder.mkdir(exist_ok=True)
    body = (DATA / "icml-2024.txt").read_text(encoding="utf-8").split("\n", 1)[1]
    (folder / "a.txt").write_text(f"{header}\n{body}", encoding="utf-8")
    (tmp_path / "curate.toml").write_text(config, encoding="utf-8")
    report = load_and_validate(folder, tmp_path / "curate.toml")
    return [(f.code, f.message) for f in report if f.code.startswith("header")]


def load_and_validate(folder: Path, config_path: Path):
    import curate

    return curate.validate_drops([folder], load_config(config_path))


def test_configured_header_phrases_and_a_phrase_before_the_venue(tmp_path):
    german = "ICML 2024 Liste der Beiträge"
    found = _header_findings(tmp_path, german, "")
    assert [code for code, _ in found] == ["header-language"]
    config = 'header_languages = ["en", "de"]\n[header_phrases]\n"Liste der Beiträge" = "de"\n'
    assert _header_findings(tmp_path, german, config) == []
    # A known phrase may come first; the venue is what follows it.
    assert _header_findings(tmp_path, "Proceedings of ICML 2024", 'venue = "ICML"\n') == []
    # The script decides before the phrase list: kana is Japanese, allowed or not.
    found = _header_findings(tmp_path, "ICML 2024 採択論文リスト", "")
    assert [code for code, _ in found] == ["header-language"] and "'ja'" in found[0][1]


# --- rule control -----------------------------------------------------------------------------


def _math_drop(folder: Path, marker: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    math = (DATA / "math.txt").read_text(encoding="utf-8")
    path = folder / "icml-math.txt"
    path.write_text(f"ICML 2024 Papers\n\n{marker}{math}", encoding="utf-8")
    return path


def _validate(tmp_path: Path, config: str, *extra: str) -> int:
    (tmp_path / "curate.toml").write_text(config, encoding="utf-8")
    return main(["validate", "--config", str(tmp_path / "curate.toml"), *extra])


def test_accepted_math_passes_strict_three_ways(tmp_path, capsys):
    drop = _math_drop(tmp_path / "src")
    assert _validate(tmp_path, "", str(drop.parent), "--strict") == 1
    assert "latex" in capsys.readouterr().out
    # 1. the code turned off
    assert _validate(tmp_path, '[severity]\nlatex = "off"\n', str(drop.parent), "--strict") == 0
    capsys.readouterr()
    # 2. ignored for files matching a glob, not for others
    ignore = '[per-file-ignores]\n"icml-*.txt" = ["latex"]\n'
    assert _validate(tmp_path, ignore, str(drop.parent), "--strict") == 0
    other = _math_drop(tmp_path / "other")
    other.rename(other.with_name("math-2024.txt"))
    assert _validate(tmp_path, ignore, str(tmp_path / "other"), "--strict") == 1
    capsys.readouterr()
    # 3. accepted inline, for that record only
    _math_drop(tmp_path / "src", marker="# curate: accept latex\n")
    assert _validate(tmp_path, "", str(drop.parent), "--strict", "--format", "json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == [] and report["summary"]["records"] == 1


def test_the_inline_marker_is_not_part_of_the_text(tmp_path):
    drop = _math_drop(tmp_path / "src", marker="# curate: accept latex, truncated\n")
    (tmp_path / "curate.toml").write_text("", encoding="utf-8")
    from curate.ingest.formats.text import parse_file

    (record,) = parse_file(drop).records
    assert record.text == (DATA / "math.txt").read_text(encoding="utf-8").strip()
    assert record.line == 4 and record.accept == ("latex", "truncated")


def test_baseline_fails_only_on_new_findings(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src"
    _math_drop(src)
    assert main(["validate", str(src), "--strict"]) == 1
    assert main(["validate", str(src), "--write-baseline"]) == 0
    assert "curate-baseline.json" in capsys.readouterr().out
    assert main(["validate", str(src), "--strict", "--baseline", "curate-baseline.json"]) == 0
    # An abstract added above shifts every line: the old findings are still recognised.
    math = (DATA / "math.txt").read_text(encoding="utf-8")
    (src / "icml-math.txt").write_text(
        f"ICML 2024 Papers\n\nA new record with *emphasis* in Markdown, which is a new finding "
        f"and has more than enough words to be checked for its language at all.\n\n{math}",
        encoding="utf-8",
    )
    capsys.readouterr()
    code = main(["validate", str(src), "--strict", "--baseline", "curate-baseline.json",
                 "--format", "json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("markdown", 3)]
    assert report["summary"]["baselined"] >= 1


def test_a_missing_baseline_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", str(DATA), "--baseline", str(tmp_path / "nope.json")]) == 2
    assert "baseline file not found" in capsys.readouterr().err


# --- row policies -----------------------------------------------------------------------------


def _policy_project(tmp_path: Path, extra: str = "") -> Path:
    config = f'[tool.curate]\nrepo_id = "someone/p"\nvenues = []\nyears = []\n{extra}'
    files = {"more.txt": f"ICML 2024 Papers\n\n{PLACEHOLDER}\n\n{_truncated()}\n"}
    return _project(tmp_path / "p", config, files=files)


def _rows(dist: Path) -> dict[str, dict]:
    return {r["abstract_raw"]: r for r in pq.read_table(dist / PARQUET).to_pylist()}


def test_placeholders_are_dropped_and_truncated_rows_flagged(tmp_path, monkeypatch, capsys):
    root = _policy_project(tmp_path)
    monkeypatch.chdir(root)
    assert main(["build"]) == 0
    assert "1 record dropped by row policy" in capsys.readouterr().out
    rows = _rows(root / "dist")
    assert PLACEHOLDER not in rows
    assert rows[_truncated()]["flags"] == ["truncated"]
    assert [r["flags"] for raw, r in rows.items() if raw != _truncated()] == [[]] * 6
    report = json.loads((root / "dist" / "validation-report.json").read_text(encoding="utf-8"))
    (dropped,) = report["dropped"]
    assert (dropped["file"], dropped["line"], dropped["reasons"]) == (
        "more.txt",
        3,
        ["placeholder"],
    )
    # Findings name the row: the truncated record's finding carries the id of its row.
    (trunc,) = [f for f in report["findings"] if f["code"] == "truncated"]
    assert (trunc["file"], trunc["id"]) == ("more.txt", rows[_truncated()]["id"])
    card = (root / "dist" / "README.md").read_text(encoding="utf-8")
    assert "| Abstracts dropped by row policy | 1 (placeholder: 1) |" in card
    assert "| Rows flagged (`flags` column) | 1 (truncated: 1) |" in card
    manifest = json.loads((root / "dist" / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["rows"], manifest["rows_dropped"], manifest["rows_flagged"]) == (7, 1, 1)


def test_row_policy_is_configurable_per_code(tmp_path, monkeypatch):
    root = _policy_project(tmp_path, '[tool.curate.row_policy]\nplaceholder = "keep"\n'
                                     'truncated = "drop"\n')  # fmt: skip
    monkeypatch.chdir(root)
    assert main(["build"]) == 0
    rows = _rows(root / "dist")
    assert _truncated() not in rows
    assert rows[PLACEHOLDER]["flags"] == []


# --- init and publish -------------------------------------------------------------------------


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "dataset_card.md").write_text("mine\n", encoding="utf-8")
    assert main(["init", str(tmp_path / "p")]) == 1
    assert "dataset_card.md" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["dataset_card.md"]
    assert (tmp_path / "p" / "dataset_card.md").read_text(encoding="utf-8") == "mine\n"


def test_init_config_documents_every_setting(tmp_path):
    from curate.settings import ORDER

    assert main(["init", str(tmp_path / "p"), "--name", "My Data"]) == 0
    text = (tmp_path / "p" / "pyproject.toml").read_text(encoding="utf-8")
    loaded = load_settings_file(tmp_path / "p" / "pyproject.toml")
    settings = loaded.settings
    assert (settings.dataset_name, settings.repo_id) == ("My Data", "your-org/my-data")
    for name in ORDER:  # every setting, the checks' and the build's
        assert name in text or name.replace("_", "-") in text, name
    # Uncommented, the documented examples are valid settings (the "..." ones are prose).
    setting = re.compile(r'^# (\[tool\.curate\.[a-z_.-]+\]|([a-z_-]+|"[^"]+") += (?!.*\.\.\.))')
    uncommented = "\n".join(
        ln.removeprefix("# ") if setting.match(ln) else ln for ln in text.splitlines()
    )
    assert uncommented.count("\n[tool.curate.") == 5
    (tmp_path / "all.toml").write_text(uncommented, encoding="utf-8")
    everything = load_config(tmp_path / "all.toml")
    assert everything.severity == {"latex": "off"}
    assert (everything.venues, everything.years) == ((), ())  # a new project accepts any
    assert everything.mapping["jsonl"].text == "text" and everything.mapping["jsonl"].id == "id"


def test_publish_takes_the_repository_from_the_build(other_kind, fake_hub: FakeHub, capsys):
    assert main(["publish", str(other_kind), "--repo-id", "someone/else"]) == 1
    err = capsys.readouterr().err
    assert "someone/mixed-ml-abstracts" in err and "someone/else" in err
    assert main(["publish", str(other_kind)]) == 0
    assert "published someone/mixed-ml-abstracts v1.0.0" in capsys.readouterr().out
    assert "v1.0.0" in fake_hub.repo("someone/mixed-ml-abstracts").tags


def test_python_api(tmp_path):
    import curate

    config = curate.Config(venues=("ICML", "NeurIPS"), years=(2018, 2024))
    settings = curate.Settings(checks=config, repo_id="a/b")
    report = curate.validate_drops([DATA / "icml-2024.txt", DATA / "neurips-2018.txt"], config)
    assert isinstance(report, curate.Report) and report.records == 6 and not report.errors
    result = curate.build_dataset([DATA / "icml-2024.txt", DATA / "neurips-2018.txt"],
                                  tmp_path / "dist", settings)  # fmt: skip
    assert isinstance(result, curate.BuildResult) and result.records_out == 6
    assert pq.read_table(tmp_path / "dist" / PARQUET).num_rows == 6
    strict = curate.Settings(checks=curate.Config(venue="ICML"))  # NeurIPS: header-mismatch

    with pytest.raises(curate.BuildRefused) as refused:
        curate.build_dataset(
            [DATA / "icml-2024.txt", DATA / "neurips-2018.txt"], tmp_path / "dist2", strict
        )
    assert [f.code for f in refused.value.report.errors] == ["header-mismatch"]
    assert not (tmp_path / "dist2").exists()


def test_init_in_an_existing_project_writes_curate_toml_and_leaves_its_files(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    pyproject = '[project]\nname = "mine"\n'
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (root / ".gitignore").write_text("*.pyc\n", encoding="utf-8")
    assert main(["init", str(root), "--name", "Mine"]) == 0
    out = capsys.readouterr().out
    assert (root / "pyproject.toml").read_text(encoding="utf-8") == pyproject
    assert (root / ".gitignore").read_text(encoding="utf-8") == "*.pyc\n"
    assert "note: add to .gitignore: /dist/, .curate-cache/" in out
    settings = load_settings_file(root / "curate.toml").settings
    assert (settings.dataset_name, settings.repo_id) == ("Mine", "your-org/mine")
    for name in ("icml-2024.txt", "neurips-2018.txt"):
        shutil.copy(DATA / name, root / "sources" / name)
    assert main(["build", str(root / "sources"), "--out", str(root / "dist"), "--config",
                 str(root / "curate.toml")]) == 0  # fmt: skip


def test_a_build_without_an_identity_says_so_and_cannot_be_published(tmp_path, capsys):
    root = _project(tmp_path / "p", "[tool.curate]\nvenues = []\nyears = []\n")
    assert main(["build", str(root / "sources"), "--out", str(root / "dist"),
                 "--config", str(root / "pyproject.toml")]) == 0  # fmt: skip
    card = (root / "dist" / "README.md").read_text(encoding="utf-8")
    assert "# Unnamed dataset" in card and "set `dataset_name`" in card
    assert "The licence is not stated" in card and "ICML 2025" not in card
    assert "Abstracts from ICML 2024, NeurIPS 2018" in card
    manifest = json.loads((root / "dist" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["repo_id"] is None and manifest["name"] == ""
    capsys.readouterr()
    assert main(["publish", str(root / "dist"), "--dry-run"]) == 2
    assert "names no repo_id; pass --repo-id" in capsys.readouterr().err


def test_init_asks_only_for_the_ignores_an_existing_gitignore_lacks(tmp_path, capsys):
    """A repository whose .gitignore had `dist/` was still told to add `/dist/`."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "mine"\n', encoding="utf-8")
    (root / ".gitignore").write_text("dist/\n*.pyc\n", encoding="utf-8")
    assert main(["init", str(root)]) == 0
    out = capsys.readouterr().out
    assert "note: add to .gitignore: .curate-cache/\n" in out and "/dist/" not in out
    (root / ".gitignore").write_text("/dist\n.curate-cache/\n", encoding="utf-8")
    (root / "curate.toml").unlink()
    for made in (
        "dataset_card.md",
        ".github/workflows/validate.yml",
        ".github/workflows/release.yml",
    ):
        (root / made).unlink()
    assert main(["init", str(root)]) == 0
    assert ".gitignore" not in capsys.readouterr().out
