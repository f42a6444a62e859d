"""Sources and ``--out`` in object storage (``s3://``), against a real S3-compatible server on
127.0.0.1 (moto's, `tests/s3server.py`) with access control on: the build reads and writes
through pyarrow's S3 filesystem, signed with the keys the environment holds.

The sources are the repository's seed drops (real abstracts) and 135 real records of the dev
corpus as JSON Lines and as Parquet (`tests/data/formats_sample.jsonl`, the Parquet file
written by pyarrow, not by the reader under test).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import s3server
from conftest import ROOT, SEED_FILES, all_files

from curate.cli import main
from curate.pipeline.build import build
from curate.pipeline.validate import validate_paths
from curate.scan import run as scan_run
from curate.settings import from_mapping
from validation.config import Config

s3 = s3server.s3
SAMPLE = ROOT / "tests" / "data" / "formats_sample.jsonl"
FIELDS = {"text": "abstract", "id": "id", "title": "title"}
SETTINGS = {"mapping": {"jsonl": FIELDS, "parquet": FIELDS}}


def _sources(folder: Path) -> Path:
    """The seeds, the sample as JSON Lines, and as Parquet in row groups of 50 (so a reader
    seeks in the object: its footer, then each group), in a local folder."""
    folder.mkdir(parents=True)
    for seed in SEED_FILES:
        shutil.copy(seed, folder / seed.name)
    (folder / "tabular").mkdir()
    shutil.copy(SAMPLE, folder / "tabular" / "records.jsonl")
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    pq.write_table(pa.Table.from_pylist(rows), folder / "tabular" / "records.parquet",
                   row_group_size=50)  # fmt: skip
    return folder


def test_a_build_from_s3_to_s3_is_the_local_build_byte_for_byte(
    s3: s3server.S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    local = _sources(tmp_path / "drops")
    uri = s3.put_folder("same/drops", local)
    s3.use(monkeypatch)
    # Forked workers read the objects themselves (the inputs are below the size at which a
    # build goes parallel on its own).
    monkeypatch.setattr(scan_run, "PARALLEL_MIN_BYTES", 0)
    settings = from_mapping(SETTINGS)
    build([local], tmp_path / "dist", settings, engine="local", jobs=2)
    result = build([uri], "s3://data/same/dist", settings, engine="local", jobs=2)

    expected = all_files(tmp_path / "dist")
    assert set(expected) >= {"README.md", "manifest.json", "data/train-00000-of-00001.parquet"}
    got = s3.files("same/dist")
    assert sorted(got) == sorted(expected)
    for name, data in expected.items():
        assert got[name] == data, name
    assert result.records_in == 57 + 135 + 135
    # Nothing else in the bucket: no staging prefix left beside the release.
    assert not [k for k in s3.keys_under("same/") if k.startswith("same/.")]


def test_findings_name_the_object_by_its_uri_and_line(
    s3: s3server.S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    broken = "\n".join([lines[0], lines[1], '{"abstract": "cut sh', lines[2]]) + "\n"
    uri = s3.put("named", {"part/records.jsonl": broken.encode("utf-8")})
    s3.use(monkeypatch)
    run = validate_paths([uri], from_mapping(SETTINGS).checks)
    bad = [f for f in run.report.findings if f.code == "invalid-json"]
    assert [(f.file, f.line) for f in bad] == [(f"{uri}/part/records.jsonl", 3)]
    assert run.names == ["part/records.jsonl"]  # named in outputs as a local folder's file is
    assert run.report.records == 3


def test_discovery_lists_the_prefix_with_the_same_patterns_and_excludes(
    s3: s3server.S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = SEED_FILES[0].read_bytes()
    uri = s3.put("listed", {
        "b.txt": seed, "a/x.txt": seed, "skip/y.txt": seed, "a/skip/z.txt": seed,
        "notes.md": b"not a source", "a/old.txt": seed,
    })  # fmt: skip
    s3.use(monkeypatch)
    from curate.ingest.discover import discover

    found = discover([uri], exclude=("skip", "old.txt"))
    assert [s.name for s in found] == ["a/x.txt", "b.txt"]
    assert [s.path.as_posix() for s in found] == [f"{uri}/a/x.txt", f"{uri}/b.txt"]
    one = discover([f"{uri}/notes.md"])  # an object given by its key is read, as a file is
    assert [(s.name, s.format) for s in one] == [("notes.md", "text")]


def test_the_cache_keys_an_object_by_its_bytes_not_its_time(
    s3: s3server.S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = SEED_FILES[0].read_text(encoding="utf-8")
    uri = s3.put("cached", {"drop.txt": text.encode("utf-8")})
    s3.use(monkeypatch)
    first = validate_paths([uri], Config(), cache_dir=tmp_path / "cache")
    again = validate_paths([uri], Config(), cache_dir=tmp_path / "cache")
    assert first.cache_hits == 0 and again.cache_hits == again.report.records > 0
    # The same size, other bytes: a record's text changed (a letter replaced).
    header, blank, record, *rest = text.split("\n")
    changed = "\n".join([header, blank, record.replace("e", "a", 1), *rest])
    assert len(changed) == len(text) and changed != text
    s3.put("cached", {"drop.txt": changed.encode("utf-8")})
    third = validate_paths([uri], Config(), cache_dir=tmp_path / "cache")
    assert third.files[0].sha256 != first.files[0].sha256
    assert third.files[0].ids != first.files[0].ids
    assert third.cache_hits == again.cache_hits - 1  # every record but the changed one


def _error(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    return [line for line in err.splitlines() if line.startswith("curate: error")]


def test_a_missing_bucket_is_one_line_and_exit_2(
    s3: s3server.S3Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    s3.use(monkeypatch)
    assert main(["validate", "s3://no-such-bucket/drops", "--no-cache"]) == 2
    assert _error(capsys) == ["curate: error: s3://no-such-bucket/drops: no such bucket"]
    assert main(["validate", "s3://data/no/such/prefix", "--no-cache"]) == 2
    assert _error(capsys) == ["curate: error: no such file or folder: s3://data/no/such/prefix"]


def test_wrong_credentials_are_one_line_and_exit_2(
    s3: s3server.S3Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = s3.put("creds", {"drop.txt": SEED_FILES[0].read_bytes()})
    s3.use(monkeypatch, secret="not-the-secret")
    assert main(["validate", uri, "--no-cache"]) == 2
    lines = _error(capsys)
    assert lines == [f"curate: error: {uri}: the secret key is wrong (check AWS_SECRET_ACCESS_KEY)"]
    s3.use(monkeypatch)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIANOSUCHKEY0000000")
    assert main(["validate", uri, "--no-cache"]) == 2
    assert _error(capsys) == [
        f"curate: error: {uri}: the access key is not known (check AWS_ACCESS_KEY_ID)"
    ]


def test_denied_writing_is_one_line_exit_2_and_writes_nothing(
    s3: s3server.S3Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    uri = s3.put("denied/drops", {p.name: p.read_bytes() for p in SEED_FILES})
    s3.use(monkeypatch, "reader")  # may read and list, not write
    monkeypatch.chdir(tmp_path)
    assert main(["validate", uri, "--no-cache"]) == 0  # reading is allowed
    capsys.readouterr()
    assert main(["build", uri, "--out", "s3://data/denied/dist", "--no-cache"]) == 2
    assert _error(capsys) == [
        "curate: error: --out s3://data/denied/dist: cannot write: access denied (check the "
        "credentials in the environment)"
    ]
    assert s3.keys_under("denied/") == [f"denied/drops/{p.name}" for p in SEED_FILES]


def test_the_preflight_reads_a_prefix_as_each_node_s_credentials_allow(
    s3: s3server.S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curate.engine.preflight import _expected, probe

    seed = SEED_FILES[0].read_bytes()
    uri = s3.put("preflight", {"a.txt": seed, "sub/b.txt": seed})
    s3.use(monkeypatch)
    expected = _expected([uri], None, "t0k3n")
    assert probe(expected) == []  # this process's code is the code: only the source is checked
    s3.put("preflight", {"c.txt": seed})  # what a node would see differs
    assert probe(expected) == [
        f"sees other data at source {uri} (a prefix of 3 entries there, a prefix of 2 entries here)"
    ]
    s3.use(monkeypatch, secret="not-the-secret")  # a node with other keys
    assert probe(expected) == [
        f"cannot read source {uri} (the secret key is wrong (check AWS_SECRET_ACCESS_KEY))"
    ]


def test_configured_sources_may_be_uris(
    s3: s3server.S3Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    uri = s3.put("configured/drops", {p.name: p.read_bytes() for p in SEED_FILES})
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "curate.toml").write_text(f'sources = ["{uri}"]\n', encoding="utf-8")
    s3.use(monkeypatch)
    monkeypatch.chdir(project / "sub")  # the project's folder is above: paths are made its own
    assert main(["validate", "--no-cache"]) == 0
    assert f"{len(SEED_FILES)} files, 57 records" in capsys.readouterr().out
