"""A large tabular file read in parts, a task each, gives what reading it whole gives: the same
table and positions, byte for byte, and the same findings at the same lines and records.

Splitting is forced by a tiny ``split_bytes`` on real abstracts (`tests/data/formats_sample.jsonl`:
135 records of the dev corpus, three holding a CR and two a tab), written by libraries other than
the readers under test: JSON Lines, CSV by polars (abstracts with line breaks are quoted fields
over several lines), Parquet in row groups of 10 rows, Arrow in record batches of 10."""

from __future__ import annotations

import filecmp
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from conftest import ROOT

import curate.scan.run
from curate.ingest import formats
from curate.pipeline.build import build
from curate.pipeline.validate import validate_paths
from curate.settings import from_mapping
from validation.config import Config
from validation.mapping import parse

DATA = ROOT / "tests" / "data"
SAMPLE = DATA / "formats_sample.jsonl"
TEMPLATE = ROOT / "dataset_card.md"
FIELDS = {"text": "abstract", "id": "id", "title": "title"}
KINDS = ("jsonl", "csv", "parquet", "arrow")
MAPPING = {"mapping": {name: FIELDS for name in KINDS}}
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
TINY = 8_000  # bytes: the sample's ~150 KB in about twenty parts


def _write(kind: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"records.{kind}"
    if kind == "jsonl":
        path.write_bytes(SAMPLE.read_bytes())
    elif kind == "csv":
        pl.DataFrame(RECORDS).write_csv(path)
    else:
        table = pa.Table.from_pylist(RECORDS)
        if kind == "parquet":
            pq.write_table(table, path, row_group_size=10)
        else:
            with ipc.new_stream(path, table.schema) as writer:
                for batch in table.to_batches(max_chunksize=10):
                    writer.write_batch(batch)
    return path


@pytest.fixture
def tasks(monkeypatch) -> list:
    """The scan tasks run, in order."""
    ran: list = []
    real = curate.scan.run.scan_file

    def recorded(task):
        ran.append(task)
        return real(task)

    monkeypatch.setattr(curate.scan.run, "scan_file", recorded)
    return ran


def _same_tree(a: Path, b: Path) -> list[str]:
    """The files that differ between two folders (or are in one only)."""
    compared = filecmp.dircmp(a, b)
    differ = [*compared.left_only, *compared.right_only, *compared.funny_files]
    _, mismatch, errors = filecmp.cmpfiles(a, b, compared.common_files, shallow=False)
    differ += mismatch + errors
    for sub in compared.subdirs:
        differ += [f"{sub}/{name}" for name in _same_tree(a / sub, b / sub)]
    return differ


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_a_build_in_parts_gives_the_same_bytes_as_one_of_whole_files(kind, tmp_path, tasks):
    source = _write(kind, tmp_path / "src")
    if kind == "csv":  # quoted fields over several lines: cuts must fall between rows
        assert '"' in source.read_text() and sum("\n" in r["abstract"] for r in RECORDS) > 10
    settings = from_mapping({**MAPPING, "split_bytes": 0})
    whole = build([source.parent], tmp_path / "whole", settings, engine="serial", template=TEMPLATE)
    assert [t.split for t in tasks] == [None]
    tasks.clear()
    split = from_mapping({**MAPPING, "split_bytes": TINY})
    parts = build([source.parent], tmp_path / "parts", split, engine="serial", template=TEMPLATE)
    assert len(tasks) > 5 and all(t.split is not None for t in tasks)
    assert [t.split.number for t in tasks] == list(range(len(tasks)))
    assert whole.records_in == parts.records_in == len(RECORDS)
    assert whole.records_out == parts.records_out > 100
    assert (tmp_path / "parts" / "positions.parquet").exists()
    assert _same_tree(tmp_path / "whole", tmp_path / "parts") == []


def _findings(run) -> list[tuple]:
    return [(f.file, f.line, f.code, f.message, f.record, f.related_record, f.id)
            for f in run.report.findings]  # fmt: skip


def _files(run) -> list[tuple]:
    return [
        (f.path, f.sha256, f.size, f.lines.tolist(), f.ids,
         None if f.rows is None else f.rows.tolist(), f.source_ids, f.sigs.tolist(),
         sorted((k, np.nan_to_num(v, nan=-1.0).tolist()) for k, v in f.measures.items()))
        for f in run.files
    ]  # fmt: skip


def _validate(folder: Path, split_bytes: int, mapping: dict | None = None):
    config = Config(mapping=parse(mapping or MAPPING["mapping"]))
    return validate_paths([folder], config, engine=None, split_bytes=split_bytes)


def test_a_file_in_parts_has_the_findings_lines_and_record_handles_of_the_whole(tmp_path, tasks):
    """What one reader says once for a file (a CR inside a text, a mapped field no record
    has) is said once; what is said of a record names it by its number in the whole file,
    across parts (the duplicate of a record three parts earlier); lines number on."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    lines[40:40] = ["{not json", "", json.dumps({"title": "no abstract here"})]
    lines.insert(90, lines[3])  # an exact duplicate, parts after its original
    lines.insert(100, json.dumps({"id": "short", "abstract": "Too short."}))
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    mapping = {"jsonl": {**FIELDS, "venue": "conference"}}  # a field no record has

    whole = _validate(folder, 0, mapping)
    assert len(tasks) == 1
    tasks.clear()
    split = _validate(folder, TINY, mapping)
    assert len(tasks) > 5 and all(t.split is not None for t in tasks)

    codes = [f[2] for f in _findings(whole)]
    for code in ("invalid-json", "text-field", "duplicate", "too-short"):
        assert code in codes
    assert codes.count("line-endings") == 1 and codes.count("field-missing") == 1
    duplicate = next(f for f in whole.report.findings if f.code == "duplicate")
    assert duplicate.record is not None and duplicate.record[1] > 80
    assert _findings(split) == _findings(whole)
    assert _files(split) == _files(whole)


def test_a_csv_file_whose_quotes_a_cut_cannot_trust_is_read_whole(tmp_path, tasks):
    """A quote inside an unquoted field is text to the reader but counts as opening a field to
    the planning pass, so its cuts fall inside rows: the part before such a cut ends elsewhere,
    and the file is read again whole, with the whole's result."""
    folder = tmp_path / "src"
    path = _write("csv", folder)
    rows = path.read_text(encoding="utf-8").split("\n", 2)
    path.write_text(f'{rows[0]}\nstray,ti"tle,one abstract\n{rows[1]}\n{rows[2]}', encoding="utf-8")

    whole = _validate(folder, 0)
    tasks.clear()
    split = _validate(folder, TINY)
    assert tasks[0].split is not None and tasks[-1].split is None  # parts, then the whole
    assert _findings(split) == _findings(whole)
    assert _files(split) == _files(whole)
    assert whole.report.records == len(RECORDS) + 1


def test_a_file_changed_after_its_parts_were_planned_is_refused_once(tmp_path, monkeypatch):
    folder = tmp_path / "src"
    path = _write("jsonl", folder)
    planned = formats.splits

    def then_appended(*args):
        found = planned(*args)
        with path.open("ab") as fh:
            fh.write(b'{"abstract": "written while the build ran"}\n')
        return found

    monkeypatch.setattr(formats, "splits", then_appended)
    run = _validate(folder, TINY)
    (file,) = run.files
    assert file.sha256 == ""  # no digest: nothing of it is cached or published
    refused = [f for f in run.report.findings if f.code == "unreadable"]
    assert len(refused) == 1 and refused[0].line == 0
    assert "changed while it was read" in refused[0].message


def test_compressed_json_and_small_files_are_one_part(tmp_path):
    folder = tmp_path / "src"
    path = _write("jsonl", folder)
    config = Config()
    assert len(formats.splits("jsonl", path, config, TINY)) > 5
    assert formats.splits("jsonl", path, config, path.stat().st_size) == []  # under twice
    gz = folder / "records.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    assert formats.splits("jsonl", gz, config, TINY) == []
    array = folder / "records.json"
    array.write_text(json.dumps(RECORDS), encoding="utf-8")
    assert formats.splits("jsonl", array, config, TINY) == []
    assert formats.splits("text", DATA / "formats_sample.txt", config, 1000) == []


@pytest.mark.slow
def test_parts_on_the_local_pool_give_the_bytes_of_one_task_in_this_process(tmp_path, monkeypatch):
    """The parts' tasks, their tails and spools cross to worker processes and back."""
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    source = _write("csv", tmp_path / "src")
    whole = from_mapping({**MAPPING, "split_bytes": 0})
    build([source.parent], tmp_path / "whole", whole, engine="serial", template=TEMPLATE)
    split = from_mapping({**MAPPING, "split_bytes": TINY})
    build([source.parent], tmp_path / "parts", split, engine="local", template=TEMPLATE)
    assert _same_tree(tmp_path / "whole", tmp_path / "parts") == []


@pytest.mark.parametrize("variant", ["no-text-field", "rows-without-text-in-several-parts"])
def test_what_is_said_of_the_whole_file_is_said_as_one_reader_says_it(variant, tmp_path, tasks):
    """No record with the text field: one finding for the file, with the first row's fields.
    Rows without it in several parts, and a mapped field no record has: the fields listed are
    the whole file's rows' (here the file is read again whole to list them as one reader)."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    if variant == "no-text-field":
        lines = [line.replace('"abstract":', '"summary":') for line in lines]
    else:
        for at in (10, 60, 120):
            lines.insert(at, json.dumps({"title": f"no abstract {at}", f"extra{at}": 1}))
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    mapping = {"jsonl": {**FIELDS, "venue": "conference"}}

    whole = _validate(folder, 0, mapping)
    tasks.clear()
    split = _validate(folder, TINY, mapping)
    assert _findings(split) == _findings(whole)
    assert _files(split) == _files(whole)
    codes = [f[2] for f in _findings(whole)]
    if variant == "no-text-field":
        assert codes.count("text-field") == 1 and whole.report.records == 0
        assert all(t.split is not None for t in tasks)
    else:
        assert codes.count("text-field") == 3 and codes.count("field-missing") == 1
        assert tasks[-1].split is None  # read again whole


def test_a_damaged_row_group_in_one_part_is_found_as_the_whole_files_reader_finds_it(
    tmp_path, tasks
):
    """One finding at the group's first row, and the other groups (in this part and the
    others) are read."""
    folder = tmp_path / "src"
    path = _write("parquet", folder)
    data = bytearray(path.read_bytes())
    chunk = pq.ParquetFile(path).metadata.row_group(6).column(2)  # rows 61-70
    assert chunk.path_in_schema == "abstract"
    at = chunk.dictionary_page_offset or chunk.data_page_offset
    data[at : at + 16] = b"\xff" * 16  # its page header
    path.write_bytes(bytes(data))

    whole = _validate(folder, 0)
    tasks.clear()
    split = _validate(folder, TINY)
    assert [(f[1], f[2]) for f in _findings(whole) if f[2] == "file-truncated"] == [
        (61, "file-truncated")
    ]
    assert whole.report.records == len(RECORDS) - 10
    assert _findings(split) == _findings(whole)
    assert _files(split) == _files(whole)
    assert all(t.split is not None for t in tasks)


def test_an_arrow_file_in_the_file_format_is_read_in_parts_as_whole(tmp_path):
    """The IPC file format (a footer after the stream) as well as the stream `datasets` writes."""
    path = tmp_path / "records.arrow"
    table = pa.Table.from_pylist(RECORDS)
    with ipc.new_file(path, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=10):
            writer.write_batch(batch)
    config = Config(mapping=parse(MAPPING["mapping"]))
    found = formats.splits("arrow", path, config, TINY)
    assert len(found) > 5
    parts = [b for part in found for b in formats.parts("arrow", path, config, part)]
    whole = list(formats.parts("arrow", path, config))
    assert [(r.line, r.row, r.text, r.source_id) for b in parts for r in b.records] == [
        (r.line, r.row, r.text, r.source_id) for b in whole for r in b.records
    ]
    assert found[0].sha256 == whole[-1].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_read_in_parts_is_cached_as_the_whole(tmp_path, tasks):
    folder = tmp_path / "src"
    _write("jsonl", folder)
    config = Config(mapping=parse(MAPPING["mapping"]))
    cache = tmp_path / "cache"
    first = validate_paths([folder], config, split_bytes=TINY, cache_dir=cache)
    assert len(tasks) > 5
    tasks.clear()
    again = validate_paths([folder], config, split_bytes=TINY, cache_dir=cache)
    assert tasks == [] and again.cache_hits == 1  # the joined result, from the cache
    assert _findings(again) == _findings(first) == _findings(_validate(folder, 0))


def test_parts_are_cut_smaller_so_each_worker_has_several(tmp_path, monkeypatch):
    """At the default split_bytes a file is cut so that the run makes PARTS_PER_WORKER tasks
    a worker (not below MIN_PART_BYTES, lowered here to the sample's scale)."""
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(curate.scan.run, "MIN_PART_BYTES", 1_000)
    planned: list = []
    real = curate.scan.run._split

    def recorded(task, found):
        planned.append(found)
        return real(task, found)

    monkeypatch.setattr(curate.scan.run, "_split", recorded)
    folder = tmp_path / "src"
    path = _write("jsonl", folder)
    config = Config(mapping=parse(MAPPING["mapping"]))
    run = validate_paths([folder], config, jobs=2)
    (parts,) = planned
    size = path.stat().st_size // (curate.scan.run.PARTS_PER_WORKER * 2)
    assert len(parts) in range(7, 10)  # about eight parts of `size`, cut at line breaks
    assert all(p.end - p.start >= size for p in parts[:-1])
    assert _findings(run) == _findings(_validate(folder, 0))
