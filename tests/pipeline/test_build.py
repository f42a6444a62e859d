"""`curate build`: a clean, deduplicated, deterministic folder that real consumers load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES, SOURCES, all_files, seed_records
from huggingface_hub import DatasetCard

import curate.dataset.describe
import curate.pipeline.build
from curate.cli import main
from curate.io import sha256_file
from curate.pipeline.build import BuildRefused, build
from curate.settings import Settings
from validation import residue
from validation.config import Config

PARQUET = "data/train-00000-of-00001.parquet"
SEED0, SEED1, SEED2 = SEED_FILES
TEMPLATE = ROOT / "dataset_card.md"


def run_build(paths, out: Path, config: Config | None = None, **kw):
    return build([*paths], out, config or Settings(), template=TEMPLATE, **kw)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build") / "dist"
    run_build([SOURCES], out)
    return out


@pytest.fixture(scope="module")
def rows(dist) -> list[dict]:
    return pq.read_table(dist / PARQUET).to_pylist()


# --- the table ------------------------------------------------------------------------------------
def test_bundled_sources_give_55_records_from_57(dist, rows):
    assert len(rows) == 55
    manifest = json.loads((dist / "manifest.json").read_text())
    assert (manifest["rows"], manifest["records_in"]) == (55, 57)
    assert manifest["duplicates_merged"] == {"exact": 2, "near": 0}


def placed(folder: Path) -> dict[str, list[tuple[str, int, str]]]:
    """Each row's sources with their lines, from the positions the build keeps beside the
    table (the table names files, not lines): (file, line, match) by row id."""
    rows = {r["id"]: r for r in pq.read_table(folder / PARQUET).to_pylist()}
    places = pq.read_table(folder / "positions.parquet").to_pylist()
    assert [p["id"] for p in places] == sorted(rows)  # in the table's order
    out = {}
    for p in places:
        sources = rows[p["id"]]["sources"]
        assert [s["file"] for s in sources] == [q["file"] for q in p["sources"]]
        out[p["id"]] = [(q["file"], q["line"], s["match"])
                        for s, q in zip(sources, p["sources"], strict=True)]  # fmt: skip
    return out


def test_every_input_record_is_accounted_for(dist):
    seen = sorted((f, line) for row in placed(dist).values() for f, line, _ in row)
    expected = sorted((seed.name, line) for seed in SEED_FILES for line, _ in seed_records(seed))
    assert seen == expected


def test_the_table_names_no_line(rows):
    """A record's place in its file is not part of the release: reordering a source gives
    the same table."""
    assert all(set(s) == {"file", "header", "header_language", "match", "similarity"}
               for r in rows for s in r["sources"])  # fmt: skip


def test_exact_duplicates_keep_the_first_by_content_and_list_both(dist, rows):
    """The two copies have the same raw text: the file's name decides (never a line)."""
    merged = {tuple(row) for row in placed(dist).values() if len(row) > 1}
    assert merged == {
        ((SEED0.name, 25, "original"), (SEED1.name, 5, "exact")),
        ((SEED0.name, 27, "original"), (SEED1.name, 37, "exact")),
    }
    (rid,) = [k for k, row in placed(dist).items() if row[0][:2] == (SEED0.name, 27)]
    row = next(r for r in rows if r["id"] == rid)
    assert [s["header_language"] for s in row["sources"]] == ["en", "zh"]
    assert [s["header"] for s in row["sources"]] == ["ICML 2025 Papers", "ICML 2025 论文列表"]


def test_rows_are_ordered_by_unique_id(rows):
    ids = [r["id"] for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)


def test_clean_text_has_no_residue_and_keeps_words(rows):
    for row in rows:
        for kind in residue.KINDS:
            assert residue.find(kind, row["abstract"]) == [], (row["id"], kind)
    text = "\n".join(r["abstract"] for r in rows)
    for word in (
        "DReaMAD",
        "59.24%",
        "MFSC",
        "FoPE",
        "https://github.com/zpwdev/MFSC",
        "https://www.modelgo.li/",
        "https://github.com/ShizheHu.",
        "https://github.com/Aalto-QuML/PIPE",
    ):
        assert word in text, word


def test_raw_text_is_kept_exactly(rows):
    raw = {r["abstract_raw"] for r in rows}
    for seed in SEED_FILES:
        for _, abstract in seed_records(seed):
            assert abstract in raw


def test_filter_columns(rows):
    by_start = {r["abstract_raw"][:40]: r for r in rows}
    moh = next(r for k, r in by_start.items() if k.startswith("In this work, we upgrade"))
    assert moh["has_math"] is True and moh["markup"] == ["latex"]
    assert "50%∼90%" in moh["abstract"]
    lcron = next(r for k, r in by_start.items() if k.startswith("Cascade Ranking"))
    assert lcron["has_math"] is False and lcron["markup"] == []
    assert lcron["abstract"] == lcron["abstract_raw"]
    assert lcron["word_count"] == len(lcron["abstract"].split())
    assert lcron["char_count"] == len(lcron["abstract"])
    assert {(r["venue"], r["year"], r["language"]) for r in rows} == {("ICML", 2025, "en")}


def test_ids_do_not_depend_on_file_order_or_markup(tmp_path, rows):
    # The same abstracts, in files named so that they sort the other way round, one of them
    # re-wrapped and upper-cased: the ids are those of the bundled build.
    src = tmp_path / "src"
    src.mkdir()
    for i, seed in enumerate(reversed(SEED_FILES)):
        shutil.copy(seed, src / f"{i}_{seed.name}")
    first = src / f"0_{SEED2.name}"
    first.write_text(first.read_text(encoding="utf-8").replace("Sync-Point", "SYNC-POINT"))
    run_build([src], tmp_path / "out")
    again = pq.read_table(tmp_path / "out" / PARQUET).to_pylist()
    assert {r["id"] for r in again} == {r["id"] for r in rows}


# --- the output folder ----------------------------------------------------------------------------
def test_output_folder_holds_exactly_the_hub_files(dist):
    assert sorted(all_files(dist)) == [
        "README.md",
        "croissant.json",
        PARQUET,
        "manifest.json",
        "positions.parquet",  # each row's sources' lines: local, like the page
        "report.html",  # for people; not in the manifest, not uploaded
        "validation-report.json",
    ]


def test_manifest_hashes_every_output_and_source_file(dist):
    manifest = json.loads((dist / "manifest.json").read_text())
    local = {"manifest.json", "report.html", "positions.parquet"}
    assert set(manifest["files"]) == set(all_files(dist)) - local
    assert set(manifest["local_files"]) == {"report.html", "positions.parquet"}
    for name, entry in manifest["files"].items():
        assert entry["sha256"] == sha256_file(dist / name)
    assert [s["name"] for s in manifest["sources"]] == [s.name for s in SEED_FILES]
    for entry, seed in zip(manifest["sources"], SEED_FILES, strict=True):
        assert entry["sha256"] == sha256_file(seed)
    assert manifest["version"] == "1.0.0"
    assert manifest["settings"]["near_duplicate_threshold"] == 0.8
    assert "created" not in manifest


def test_validation_report_is_written(dist):
    report = json.loads((dist / "validation-report.json").read_text())
    assert report["summary"]["errors"] == 0
    assert report["summary"]["by_code"]["duplicate"]["count"] == 2


def test_parquet_is_zstd_with_declared_types(dist):
    meta = pq.ParquetFile(dist / PARQUET).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"
    schema = pq.read_schema(dist / PARQUET)
    assert str(schema.field("year").type) == "int32"
    assert str(schema.field("sources").type).startswith("list<element: struct<file: string")


def test_load_dataset_offline_gives_typed_train_split(dist, tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = datasets.load_dataset(str(dist), cache_dir=str(tmp_path / "cache"))
    assert list(ds) == ["train"]
    train = ds["train"]
    assert train.num_rows == 55
    f = train.features
    assert f["year"] == datasets.Value("int32")
    assert f["has_math"] == datasets.Value("bool")
    assert f["markup"] == datasets.List(datasets.Value("string"))
    assert f["sources"].feature["similarity"] == datasets.Value("float64")
    assert f["sources"].feature["file"] == datasets.Value("string")
    assert "line" not in f["sources"].feature
    assert train[0]["id"] == min(train["id"])


def test_pandas_polars_and_duckdb_read_the_parquet(dist):
    import duckdb
    import pandas as pd
    import polars as pl

    path = str(dist / PARQUET)
    assert len(pd.read_parquet(path)) == 55
    frame = pl.read_parquet(path)
    assert frame.height == 55 and frame.schema["word_count"] == pl.Int32
    ((n,),) = duckdb.sql(f"select count(*) from '{path}' where len(sources) = 2").fetchall()
    assert n == 2


def test_card_yaml_round_trips(dist):
    card = DatasetCard.load(dist / "README.md")
    data = card.data.to_dict()
    assert data["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}
    ]
    assert data["dataset_info"]["splits"][0]["num_examples"] == 55
    assert [f["name"] for f in data["dataset_info"]["features"]][:3] == [
        "id",
        "abstract",
        "abstract_raw",
    ]
    assert data["language"] == ["en"] and data["size_categories"] == ["n<1K"]
    assert "| Exact duplicates merged | 2 |" in card.text
    assert "| `001_4aa885bbda26af6d.txt` | ICML 2025 论文列表 | zh | 19 |" in card.text


# --- determinism and atomicity --------------------------------------------------------------------
def test_two_builds_are_byte_identical(dist, tmp_path):
    run_build([SOURCES], tmp_path / "again")
    assert all_files(tmp_path / "again") == all_files(dist)


def test_source_date_epoch_is_the_only_time_inside(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    run_build([SOURCES], tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["created"] == "2023-11-14T22:13:20Z"


def test_failed_build_leaves_previous_output_untouched(dist, tmp_path, monkeypatch):
    out = tmp_path / "dist"
    shutil.copytree(dist, out)
    before = all_files(out)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(curate.dataset.describe, "write_croissant", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        run_build([SOURCES], out, version="9.9.9")
    assert all_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]  # no stray temp folders


def test_validation_errors_refuse_the_build(drop, tmp_path, capsys):
    drop("zz.txt", "ICML 2025 Papers\n\nAbstract \x00 with a NUL byte in it.\n")
    out = tmp_path / "dist"
    out.mkdir()
    (out / "keep.txt").write_text("previous release")
    # --force: a folder that is not a build would otherwise be refused before validation
    assert main(["build", str(drop.folder), "--out", str(out), "--force"]) == 1
    captured = capsys.readouterr()
    assert "control-char" in captured.out
    assert "build refused" in captured.err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist", "drop"]  # nothing moved aside


def test_a_build_with_no_record_allowed_writes_an_empty_table(tmp_path, capsys):
    """Drops with no record at all, with `empty-file` made a warning: an empty dataset, not a
    crash (this raised IndexError in the dedupe plan, exit 3)."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("ICML 2025 Papers\n\n", encoding="utf-8")
    config = tmp_path / "curate.toml"
    config.write_text('[tool.curate]\nseverity = { empty-file = "warning" }\n', encoding="utf-8")
    out = tmp_path / "out"
    args = ["build", str(tmp_path / "d"), "--out", str(out), "--config", str(config), "--no-cache"]
    assert main(args) == 0
    assert "0 records out" in capsys.readouterr().out
    table = pq.read_table(next((out / "data").glob("*.parquet")))
    assert table.num_rows == 0
    assert "abstract" in table.column_names
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["rows"] == 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_row_the_table_cannot_hold_refuses_the_build_with_where_and_why(
    tmp_path, monkeypatch, capsys, jobs
):
    """`schema` made a warning lets a header year of 1066 through validation; the published
    table's contract still refuses it: a refused build naming the row, not a SchemaErrors
    crash (exit 3), in the main process and from a worker alike."""
    import curate.dataset.assemble
    import curate.scan.run

    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(curate.dataset.assemble, "PARALLEL_MIN_RECORDS", 0)
    (tmp_path / "d").mkdir()
    good = SEED_FILES[1].read_text(encoding="utf-8")
    (tmp_path / "d" / "a.txt").write_text(good, encoding="utf-8")
    bad = "ICML 1066 Papers\n" + SEED_FILES[0].read_text(encoding="utf-8").split("\n", 1)[1]
    (tmp_path / "d" / "b.txt").write_text(bad, encoding="utf-8")
    config = tmp_path / "curate.toml"
    config.write_text(
        '[tool.curate]\nseverity = { schema = "warning", header-mismatch = "warning" }\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["build", str(tmp_path / "d"), "--out", str(out), "--config", str(config),
            "--no-cache", "--jobs", str(jobs)]  # fmt: skip
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "build refused: rows break the published table's contract" in err
    assert "year '1066' fails in_range(1950, 2100) (b.txt:3 and more rows)" in err
    assert "Traceback" not in err
    assert not out.exists()


# --- near-duplicate policy ------------------------------------------------------------------------
def near_drop(drop) -> Path:
    _line, text = seed_records(SEED2)[1]
    words = text.split()
    words[12] = "banana"
    drop("zz.txt", "ICML 2025 Papers\n\n" + " ".join(words) + "\n")
    return drop.folder


def test_near_duplicates_merge_by_default(drop, tmp_path):
    result = run_build([near_drop(drop)], tmp_path / "out")
    assert (result.records_in, result.records_out, result.near_merged) == (58, 55, 1)
    rows = pq.read_table(tmp_path / "out" / PARQUET).to_pylist()
    (row,) = [r for r in rows if any(s["match"] == "near" for s in r["sources"])]
    merged = placed(tmp_path / "out")[row["id"]]
    assert {(f, line) for f, line, _ in merged} == {(SEED2.name, 5), ("zz.txt", 3)}
    assert [match for _, _, match in merged] == ["original", "near"]
    assert 0.8 <= row["sources"][1]["similarity"] < 1.0
    assert row["sources"][0]["similarity"] is None


def test_the_survivor_of_a_near_pair_does_not_depend_on_file_order(drop, tmp_path):
    """The same near copy in a file that sorts first (aa.txt) rather than last (zz.txt): the
    same text survives, and the table is the same but for the copy's file name."""
    folder = near_drop(drop)
    run_build([folder], tmp_path / "last")
    (folder / "zz.txt").rename(folder / "aa.txt")
    run_build([folder], tmp_path / "first")

    def kept(out: Path) -> tuple[str, list[str]]:
        rows = pq.read_table(out / PARQUET).to_pylist()
        (row,) = [r for r in rows if any(s["match"] == "near" for s in r["sources"])]
        return row["abstract_raw"], [s["match"] for s in row["sources"]]

    assert kept(tmp_path / "last") == kept(tmp_path / "first")
    assert kept(tmp_path / "last")[1] == ["original", "near"]


def test_near_duplicates_kept_when_configured(drop, tmp_path):
    result = run_build([near_drop(drop)], tmp_path / "out", Settings(near_duplicates="keep"))
    assert (result.records_out, result.near_merged) == (56, 0)


def test_near_duplicates_fail_when_configured(drop, tmp_path):
    with pytest.raises(BuildRefused) as info:
        run_build([near_drop(drop)], tmp_path / "out", Settings(near_duplicates="fail"))
    assert [f.code for f in info.value.report] == ["near-duplicate"]
    assert not (tmp_path / "out").exists()


def test_cli_build_prints_a_summary(tmp_path, capsys):
    out = tmp_path / "dist"
    assert main(["build", "--out", str(out), "--template", str(TEMPLATE)]) == 0
    captured = capsys.readouterr()
    assert "57 records in, 2 exact and 0 near duplicates merged, 55 records out" in captured.out
    assert "validated 3 files, 57 records" in captured.err


def test_croissant_file_reads_back_every_row_with_mlcroissant(dist):
    import mlcroissant as mlc

    dataset = mlc.Dataset(jsonld=str(dist / "croissant.json"))
    records = list(dataset.records(record_set="default"))
    assert len(records) == 55
    ids = sorted(r["default/id"].decode() for r in records)
    assert ids == sorted(pq.read_table(dist / PARQUET).column("id").to_pylist())


def test_worker_processes_give_the_identical_build(tmp_path, monkeypatch):
    import curate.dataset.assemble
    import curate.scan.run

    src = tmp_path / "src"
    src.mkdir()
    for k in range(4):
        for seed in SEED_FILES:
            text = seed.read_text(encoding="utf-8")
            # Each copy changes one word per abstract, so the copies are near-duplicates.
            (src / f"{k}_{seed.name}").write_text(text.replace(" the ", f" the{k} ", 1))
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(curate.dataset.assemble, "PARALLEL_MIN_RECORDS", 0)
    serial = run_build([src], tmp_path / "serial", jobs=1)
    parallel = run_build([src], tmp_path / "parallel", jobs=2)
    assert all_files(tmp_path / "parallel") == all_files(tmp_path / "serial")
    assert parallel.fingerprint == serial.fingerprint
    assert serial.records_in == 4 * 57 and serial.near_merged + serial.exact_merged > 100


def test_published_report_names_files_not_local_paths(dist):
    report = json.loads((dist / "validation-report.json").read_text())
    files = {f["file"] for f in report["findings"]}
    assert files == {s.name for s in SEED_FILES}
    related = {f["related"] for f in report["findings"] if "related" in f}
    assert related == {f"{SEED0.name}:25", f"{SEED0.name}:27"}


def test_missing_card_template_is_a_usage_error(tmp_path, capsys):
    out = tmp_path / "dist"
    assert main(["build", "--out", str(out), "--template", str(tmp_path / "nope.md")]) == 2
    assert "dataset card template not found" in capsys.readouterr().err
    assert not out.exists()


def test_keep_longest_makes_the_longest_copy_the_survivor(tmp_path):
    """Two copies of one abstract with the same words, in HTML bold two ways: keep = "longest"
    keeps the longer raw text; the default keeps the smaller ("<b>" sorts before "<strong>"),
    though its file sorts last: never the order of the files."""
    text = (
        "We study how curated abstracts help language models and show that {} "
        "make dataset releases comparable record by record across many versions of a corpus."
    )
    short = text.format("<b>stable identifiers</b>")
    long = text.format("<strong>stable identifiers</strong>")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text(f"ICML 2025 Papers\n\n{long}\n", encoding="utf-8")
    (src / "b.txt").write_text(f"ICML 2025 Papers\n\n{short}\n", encoding="utf-8")
    first = run_build([src], tmp_path / "first")
    longest = run_build([src], tmp_path / "longest", Settings(keep="longest"))
    (row_first,) = pq.read_table(tmp_path / "first" / PARQUET).to_pylist()
    (row_longest,) = pq.read_table(tmp_path / "longest" / PARQUET).to_pylist()
    assert row_first["abstract_raw"] == short and row_longest["abstract_raw"] == long
    assert [(s["file"], s["match"]) for s in row_longest["sources"]] == [
        ("a.txt", "original"), ("b.txt", "exact")
    ]  # fmt: skip
    assert [(s["file"], s["match"]) for s in row_first["sources"]] == [
        ("b.txt", "original"), ("a.txt", "exact")
    ]  # fmt: skip
    assert (first.exact_merged, longest.exact_merged) == (1, 1)


def test_keep_earliest_release_never_lets_a_new_file_take_an_old_record_over(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    seed = SEED_FILES[0]
    shutil.copy(seed, src / "m.txt")
    v1 = run_build([src], tmp_path / "v1")
    assert v1.version == "1.0.0"
    header, _, body = seed.read_text(encoding="utf-8").partition("\n\n")
    copied = body.split("\n\n")[0]
    (src / "a.txt").write_text(f"{header}\n\n{copied}\n", encoding="utf-8")  # sorts first
    by_first = run_build([src], tmp_path / "first", previous=tmp_path / "v1")
    kept = run_build([src], tmp_path / "kept", Settings(keep="earliest-release"),
                     previous=tmp_path / "v1")  # fmt: skip

    def provenance(folder):
        rows = pq.read_table(folder / PARQUET).to_pylist()
        return {s["file"] for r in rows for s in r["sources"][:1]}

    # The copies are the same text: each policy keeps the one v1 published, of the old file.
    assert provenance(tmp_path / "first") == provenance(tmp_path / "kept") == {"m.txt"}
    assert v1.records_out == by_first.records_out == kept.records_out  # a copy, merged
    # Against v1 the kept build only adds the new occurrence to the old record's sources.
    assert not kept.diff.added and not kept.diff.removed
    assert [c.columns for c in kept.diff.changed] == [["sources"]]
