"""Versions, `curate diff` and CHANGELOG.md: a build compared with the release before it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES, all_files, seed_records

from curate import release
from curate.cli import main
from curate.io import sha256_file
from curate.pipeline.build import build
from curate.release.rows import StoredRows
from curate.settings import Settings
from validation.config import Config

PARQUET = "data/train-00000-of-00001.parquet"
TEMPLATE = ROOT / "dataset_card.md"
SEED2 = SEED_FILES[2]

# A new abstract, in a file of its own: one record added.
NEW_ABSTRACT = (
    "We study the curation of scientific abstracts for language model training and show that "
    "stable identifiers derived from normalised text make releases comparable record by record."
)


def run_build(paths, out: Path, config: Config | None = None, **kw):
    return build([*paths], out, config or Settings(), template=TEMPLATE, **kw)


@pytest.fixture(scope="module")
def v1(tmp_path_factory) -> Path:
    """The bundled sources built as release 1.0.0 (no previous release)."""
    root = tmp_path_factory.mktemp("v1")
    src = root / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    run_build([src], root / "dist")
    return root / "dist"


def copy_sources(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    return src


def rewrite_line(path: Path, line: int, fn) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[line - 1] = fn(lines[line - 1])
    path.write_text("\n".join(lines), encoding="utf-8")


def rows_by_id(folder: Path) -> dict[str, dict]:
    return {r["id"]: r for r in pq.read_table(folder / PARQUET).to_pylist()}


# --- versions -------------------------------------------------------------------------------------
def test_version_arithmetic():
    assert release.bump("1.2.3", "major") == "2.0.0"
    assert release.bump("1.2.3", "minor") == "1.3.0"
    assert release.bump("1.2.3", "patch") == "1.2.4"
    assert release.normalize_version("v1.10.0") == "1.10.0"
    assert release.parse_version("1.10.0") > release.parse_version("1.9.9")
    for bad in ("1.0", "01.0.0", "1.0.0-rc1", "x", ""):
        with pytest.raises(release.ReleaseUsageError):
            release.parse_version(bad)
    assert release.latest_tag(["v1.9.0", "v1.10.0", "main", "v2", "nightly"]) == "v1.10.0"
    assert release.latest_tag(["foo"]) is None


def test_version_decision():
    decide = release.decide_version
    assert decide(None, None, None, "1.0.0").version == "1.0.0"
    assert decide(None, None, "2.1.0", "1.0.0").version == "2.1.0"
    assert decide("1.2.3", "minor", None, "1.0.0").version == "1.3.0"
    assert decide("1.2.3", None, None, "1.0.0").version == "1.2.3"  # nothing changed
    assert decide("1.2.3", "patch", "1.4.0", "1.0.0") == release.VersionDecision("1.4.0", "patch")
    with pytest.raises(release.ReleaseError, match="goes backwards"):
        decide("1.2.3", "patch", "1.2.2", "1.0.0")
    with pytest.raises(release.ReleaseError, match="content differs"):
        decide("1.2.3", "patch", "1.2.3", "1.0.0")
    assert decide("1.2.3", None, "1.2.3", "1.0.0").version == "1.2.3"
    smaller = decide("1.2.3", "major", "1.3.0", "1.0.0")
    assert smaller.version == "1.3.0" and "major bump (2.0.0)" in (smaller.note or "")


# --- builds against a previous release ------------------------------------------------------------
def test_first_release_has_no_changelog(v1):
    manifest = json.loads((v1 / "manifest.json").read_text())
    assert manifest["version"] == "1.0.0"
    assert "CHANGELOG.md" not in manifest["files"] and not (v1 / "CHANGELOG.md").exists()
    card = (v1 / "README.md").read_text()
    assert "## Versions" in card and 'revision="v1.0.0"' in card
    assert "CHANGELOG.md" not in card  # no link to a file that is not there


def test_unchanged_rebuild_is_the_previous_release_byte_for_byte(v1, tmp_path):
    # The same source folder: validation-report.json names the drop files by the path given.
    src = v1.parent / "src"
    result = run_build([src], tmp_path / "again", previous=v1)
    assert result.version == "1.0.0" and result.diff is not None and result.diff.level is None
    assert all_files(tmp_path / "again") == all_files(v1)


def test_previous_may_be_the_output_folder_itself(v1, tmp_path):
    out = tmp_path / "dist"
    shutil.copytree(v1, out)
    src = copy_sources(tmp_path)
    src.joinpath("zz.txt").write_text(f"ICML 2025 Papers\n\n{NEW_ABSTRACT}\n", encoding="utf-8")
    result = run_build([src], out, previous=out)
    assert result.version == "1.1.0"
    assert json.loads((out / "manifest.json").read_text())["version"] == "1.1.0"


def test_added_and_removed_records_bump_minor_and_are_listed(v1, tmp_path):
    src = copy_sources(tmp_path)
    src.joinpath("zz.txt").write_text(f"ICML 2025 Papers\n\n{NEW_ABSTRACT}\n", encoding="utf-8")
    line, removed_text = seed_records(SEED2)[2]
    rewrite_line(src / SEED2.name, line, lambda _: "")
    before = rows_by_id(v1)
    removed_id = next(i for i, r in before.items() if r["abstract_raw"] == removed_text)

    result = run_build([src], tmp_path / "v2", previous=v1)
    out = tmp_path / "v2"
    after = rows_by_id(out)
    (added_id,) = set(after) - set(before)
    assert set(before) - set(after) == {removed_id}
    assert result.version == "1.1.0" and result.diff.level == "minor"

    changelog = (out / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog\n\n## 1.1.0 (minor release)\n")
    assert "Compared with 1.0.0: 55 → 55 records: 1 added, 1 removed, 0 changed." in changelog
    assert f"- `{added_id}`: We study the curation of scientific abstracts" in changelog
    assert f"- `{removed_id}`: Individualized treatment rules/recommendations" in changelog
    assert "### Schema changes" not in changelog
    assert str(v1) not in changelog  # no local path in a published file

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["version"] == "1.1.0"
    assert manifest["files"]["CHANGELOG.md"]["sha256"] == sha256_file(out / "CHANGELOG.md")
    card = (out / "README.md").read_text()
    assert "[CHANGELOG.md](CHANGELOG.md)" in card and "which follows `1.0.0`" in card
    assert json.loads((out / "croissant.json").read_text())["version"] == "1.1.0"

    # deterministic, and the next release keeps the older entries below its own
    run_build([src], tmp_path / "v2again", previous=v1)
    assert all_files(tmp_path / "v2again") == all_files(out)
    rewrite_line(src / "zz.txt", 3, lambda text: text.replace("We study", "WE STUDY"))
    result3 = run_build([src], tmp_path / "v3", previous=out)
    assert result3.version == "1.1.1" and result3.diff.level == "patch"
    log3 = (tmp_path / "v3" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert log3.index("## 1.1.1 (patch release)") < log3.index("## 1.1.0 (minor release)")
    assert log3.count("# Changelog") == 1
    assert f"- `{removed_id}`" in log3  # the 1.1.0 entry, carried over


def test_changed_text_with_the_same_id_bumps_patch(v1, tmp_path):
    src = copy_sources(tmp_path)
    line, _ = seed_records(SEED2)[0]
    # Upper-casing a word changes the text but not the normalised id.
    rewrite_line(src / SEED2.name, line, lambda t: t.replace("rapid expansion", "RAPID expansion"))
    result = run_build([src], tmp_path / "v2", previous=v1)
    assert result.version == "1.0.1"
    diff = result.diff
    assert (diff.added, diff.removed, diff.schema) == ([], [], [])
    (change,) = diff.changed
    assert change.columns == ["abstract", "abstract_raw"]
    assert "rapid expansion" in change.before and "RAPID expansion" in change.after
    assert len(change.before) < 80
    changelog = (tmp_path / "v2" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"- `{change.id}` (`abstract`, `abstract_raw`): " in changelog
    assert "RAPID expansion" in changelog
    assert "source 002\\_53463394b5bff7ba.txt changed" in changelog


def test_metadata_only_change_bumps_patch(v1, tmp_path):
    src = copy_sources(tmp_path)
    config = replace(Settings(), license_note="Research use only.")
    result = run_build([src], tmp_path / "v2", config, previous=v1)
    assert result.version == "1.0.1"
    assert not result.diff.data_changed
    assert "file README.md changed" in result.diff.metadata
    assert any(m.startswith("settings.license_note:") for m in result.diff.metadata)
    changelog = (tmp_path / "v2" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "55 → 55 records: 0 added, 0 removed, 0 changed" in changelog
    assert "file README.md changed" in changelog


def test_schema_change_bumps_major(v1, tmp_path):
    previous = release.read_folder(v1)
    # The previous release as if it had had one more column and no `has_math`.
    previous.schema = [c for c in previous.schema if c["name"] != "has_math"] + [
        {"name": "doi", "type": "string", "nullable": True}
    ]
    result = run_build([copy_sources(tmp_path)], tmp_path / "v2", previous=previous)
    assert result.version == "2.0.0"
    changelog = (tmp_path / "v2" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## 2.0.0 (major release)" in changelog
    assert "- column `has_math` added (bool)" in changelog
    assert "- column `doi` removed (string)" in changelog


def test_version_override_may_not_go_backwards(v1, tmp_path, capsys):
    src = copy_sources(tmp_path)
    src.joinpath("zz.txt").write_text(f"ICML 2025 Papers\n\n{NEW_ABSTRACT}\n", encoding="utf-8")
    out = tmp_path / "out"
    args = [
        "build",
        str(src),
        "--out",
        str(out),
        "--previous",
        str(v1),
        "--template",
        str(TEMPLATE),
    ]
    assert main([*args, "--version", "0.9.0"]) == 1
    assert "goes backwards" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--version", "1.0.0"]) == 1
    assert "use 1.1.0 or later" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--version", "1.0.1"]) == 0
    captured = capsys.readouterr()
    assert "note: --version 1.0.1 is a patch bump, but the changes call for a minor" in captured.err
    assert "built" in captured.out and "v1.0.1" in captured.out
    assert main([*args, "--version", "v3.0.0"]) == 0
    assert json.loads((out / "manifest.json").read_text())["version"] == "3.0.0"
    assert main(["build", str(src), "--out", str(out), "--version", "3.0"]) == 2
    assert "not a semantic version" in capsys.readouterr().err


def test_cli_build_previous_prints_the_comparison(v1, tmp_path, capsys):
    src = v1.parent / "src"
    out = tmp_path / "out"
    defaults = tmp_path / "curate.toml"  # the settings v1 was built with: the defaults
    defaults.write_text("", encoding="utf-8")
    code = main(["build", str(src), "--out", str(out), "--previous", str(v1),
                 "--template", str(TEMPLATE), "--config", str(defaults)])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert "since v1.0.0: 55 → 55 records: 0 added, 0 removed, 0 changed" in captured.out
    assert "bump none" in captured.out and "version stays 1.0.0" in captured.err
    assert main(["build", str(src), "--out", str(out), "--previous", str(tmp_path / "nope")]) == 2
    assert "no such build folder" in capsys.readouterr().err
    assert main(["build", str(src), "--previous", str(v1 / PARQUET), "--out", str(out)]) == 2
    assert "no manifest.json with a version" in capsys.readouterr().err
    assert main(["build", str(src), "--previous", "hub:not a repo", "--out", str(out)]) == 2


def test_previous_folder_that_does_not_match_its_manifest_is_refused(v1, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(v1, broken)
    table = pq.read_table(broken / PARQUET)
    pq.write_table(table.slice(1), broken / PARQUET)
    assert main(["build", "--previous", str(broken), "--out", str(tmp_path / "o")]) == 1
    assert "does not match its sha256" in capsys.readouterr().err


# --- curate diff ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def v2(v1, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("v2")
    src = copy_sources(root)
    src.joinpath("zz.txt").write_text(f"ICML 2025 Papers\n\n{NEW_ABSTRACT}\n", encoding="utf-8")
    line, _ = seed_records(SEED2)[0]
    rewrite_line(src / SEED2.name, line, lambda t: t.replace("rapid expansion", "RAPID expansion"))
    run_build([src], root / "dist", previous=v1)
    return root / "dist"


def test_diff_text(v1, v2, capsys):
    assert main(["diff", str(v1), str(v2)]) == 0
    out = capsys.readouterr().out
    assert f"{v1} (v1.0.0) → {v2} (v1.1.0)" in out
    assert "55 → 56 records: 1 added, 0 removed, 1 changed" in out
    assert "schema: unchanged" in out and "bump: minor" in out
    assert "+ " in out and "We study the curation" in out
    assert "~ " in out and "[abstract, abstract_raw]" in out
    assert "file CHANGELOG.md added" in out


def test_diff_json_and_exit_code(v1, v2, capsys):
    assert main(["diff", str(v1), str(v2), "--format", "json", "--exit-code"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["level"] == "minor"
    assert data["counts"] == {
        "old_rows": 55,
        "new_rows": 56,
        "added": 1,
        "removed": 0,
        "changed": 1,
        "edited": 0,
        "moved": 0,  # the new abstract is at the end of its file: no line above it moved
    }
    assert data["old"]["version"] == "1.0.0" and data["new"]["version"] == "1.1.0"
    assert [c["columns"] for c in data["changed"]] == [["abstract", "abstract_raw"]]
    assert data["added"][0]["excerpt"].startswith("We study the curation")
    assert main(["diff", str(v1), str(v1), "--exit-code"]) == 0
    assert "bump: none (identical content)" in capsys.readouterr().out


def test_diff_parquet_files_and_schema(v1, tmp_path, capsys):
    table = pq.read_table(v1 / PARQUET)
    other = table.drop_columns(["has_math"]).append_column(
        "doi", pa.array([None] * table.num_rows, pa.string())
    )
    pq.write_table(other, tmp_path / "other.parquet")
    assert (
        main(["diff", str(v1 / PARQUET), str(tmp_path / "other.parquet"), "--format", "json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["level"] == "major"
    assert data["schema"] == ["column `doi` added (string)", "column `has_math` removed (bool)"]
    # A column added or removed is one schema change, not a change of every row.
    assert data["counts"]["changed"] == 0
    assert data["old"]["version"] is None and data["metadata"] == []


def test_a_bare_parquet_files_fingerprint_is_its_builds_whatever_the_row_order(v1, tmp_path):
    """Without a manifest the fingerprint is digested from the rows in id order: a shuffled
    copy of the table has the fingerprint the build wrote into its manifest."""
    table = pq.read_table(v1 / PARQUET)
    shuffled = table.take(list(range(table.num_rows))[::-1])
    assert shuffled.column("id").to_pylist() != table.column("id").to_pylist()
    pq.write_table(shuffled, tmp_path / "shuffled.parquet")
    manifest = json.loads((v1 / "manifest.json").read_text(encoding="utf-8"))
    loaded = release.load_release(tmp_path / "shuffled.parquet")
    assert loaded.manifest is None
    assert loaded.fingerprint == manifest["fingerprint"]


def test_diff_usage_errors(v1, tmp_path, capsys):
    assert main(["diff", str(v1), str(tmp_path / "missing")]) == 2
    assert "no such build folder or Parquet file" in capsys.readouterr().err
    (tmp_path / "x.csv").write_text("id\n1\n")
    assert main(["diff", str(v1), str(tmp_path / "x.csv")]) == 2
    pq.write_table(pa.table({"text": ["a"]}), tmp_path / "noid.parquet")
    assert main(["diff", str(v1), str(tmp_path / "noid.parquet")]) == 1
    assert "no `id` column" in capsys.readouterr().err


def test_unchanged_rebuilds_after_a_release_with_a_predecessor_keep_its_version(
    v1, tmp_path, monkeypatch
):
    """1.0.0, then 1.1.0 (a record added), then two rebuilds of the same sources, each at a
    later commit date: both are 1.1.0 again, byte for byte, though the card of 1.1.0 names
    1.0.0 as the release it follows and the build date moved."""
    src = copy_sources(tmp_path)
    (src / "zz.txt").write_text(f"ICML 2025 Papers\n\n{NEW_ABSTRACT}\n", encoding="utf-8")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    v2 = run_build([src], tmp_path / "v2", previous=v1)
    assert v2.version == "1.1.0"
    card = (tmp_path / "v2" / "README.md").read_text(encoding="utf-8")
    assert "which follows `1.0.0`" in card
    previous = tmp_path / "v2"
    for k, epoch in enumerate(("1767312000", "1767398400")):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
        again = run_build([src], tmp_path / f"again{k}", previous=previous)
        assert again.version == "1.1.0" and again.diff is not None and again.diff.level is None
        assert all_files(tmp_path / f"again{k}") == all_files(tmp_path / "v2")
        previous = tmp_path / f"again{k}"


def test_a_changed_card_description_is_a_patch_release(v1, tmp_path):
    """The card is published content: a new description is a new release, as a new text is."""
    src = copy_sources(tmp_path)
    result = run_build([src], tmp_path / "v2", Settings(description="Now described."), previous=v1)
    assert result.version == "1.0.1"
    assert any("description" in m for m in result.diff.metadata)


def test_a_release_whose_table_still_named_lines_differs_only_in_its_schema():
    """A release made when `sources` held each occurrence's line and row, against one whose
    table names files only: the lines are no change of a record, the new column is a schema
    change said once, and the rows whose line moved are counted."""
    text = "We study how stable identifiers make dataset releases comparable record by record."

    def row(rid: str, **extra) -> dict:
        return {"id": rid, "abstract": text + rid, "abstract_raw": text + rid, **extra}

    old_sources = [{"file": "a.jsonl", "line": 4, "row": None, "match": "original"}]
    new_sources = [{"file": "a.jsonl", "match": "original"}]
    old = release.Release(
        "old", StoredRows.of(pa.Table.from_pylist([row("a1", sources=old_sources)])),
        [{"name": "id", "type": "string"}, {"name": "sources", "type": "list<old>"}],
        {"version": "1.0.0", "fingerprint": "0" * 64},
    )  # fmt: skip
    new = release.Release(
        "new", StoredRows.of(pa.Table.from_pylist([row("a1", sources=new_sources,
                                                   source_id="p-1")])),
        [{"name": "id", "type": "string"}, {"name": "sources", "type": "list<new>"},
         {"name": "source_id", "type": "string"}],
        {"version": "2.0.0", "fingerprint": "1" * 64},
        positions=pa.table({"id": ["a1"],
                            "sources": [[{"file": "a.jsonl", "line": 3, "row": None}]]}),
    )  # fmt: skip
    diff = release.diff_releases(old, new, metadata=[])
    assert diff.changed == [] and diff.added == [] and diff.removed == []
    assert diff.moved == 1
    assert diff.schema == [
        "column `source_id` added (string)",
        "column `sources` type list<old> → list<new>",
    ]
