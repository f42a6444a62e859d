"""The per-file task reads a tabular file a batch at a time: the result, the report and the
build are the same whatever the batch size, and a large file's cache entries are handed to the
main process in a file rather than held."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import ROOT

import curate.scan.task
from curate.ingest.formats import fields
from curate.pipeline.build import build
from curate.pipeline.validate import validate_paths
from curate.settings import from_mapping

SAMPLE = ROOT / "tests" / "data" / "formats_sample.jsonl"
SETTINGS = from_mapping({"mapping": {"jsonl": {"text": "abstract", "id": "id", "title": "title"}}})


@pytest.fixture
def src(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / "a.jsonl")
    # b.jsonl repeats a's first records: duplicates across files, named by handle
    (folder / "b.jsonl").write_text("".join(SAMPLE.read_text().splitlines(True)[:30]))
    return folder


def test_the_result_and_the_report_do_not_depend_on_the_batch_size(src, monkeypatch):
    whole = validate_paths([src], SETTINGS.checks)
    monkeypatch.setattr(fields, "BATCH_RECORDS", 17)
    batched = validate_paths([src], SETTINGS.checks)
    assert batched.report.to_dict() == whole.report.to_dict()
    for a, b in zip(whole.files, batched.files, strict=True):
        assert (a.ids, a.lines.tolist(), a.sha256, a.size) == (
            b.ids,
            b.lines.tolist(),
            b.sha256,
            b.size,
        )
        assert np.array_equal(a.sigs, b.sigs)
    handles = [(f.record, f.related_record) for f in batched.report if f.code == "duplicate"]
    # b's 30, and the same-paper pair openreview:Syjha0gAZ / neurips2018:row0533 within a
    assert len(handles) == 31 and handles == [
        (f.record, f.related_record) for f in whole.report if f.code == "duplicate"
    ]


def test_a_build_is_the_same_bytes_whatever_the_batch_size(src, tmp_path, monkeypatch):
    template = ROOT / "dataset_card.md"
    build([src], tmp_path / "one", SETTINGS, template=template)
    monkeypatch.setattr(fields, "BATCH_RECORDS", 17)
    build([src], tmp_path / "many", SETTINGS, template=template)

    def files(folder):
        return {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file()
        }

    assert files(tmp_path / "many") == files(tmp_path / "one")


def test_a_large_files_cache_entries_are_spilled_and_all_stored(src, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setattr(fields, "BATCH_RECORDS", 10)
    monkeypatch.setattr(curate.scan.task, "FLUSH_ENTRIES", 25)
    spilled = []
    original = curate.scan.task.ValidationCache.spill

    def spill(self, path):
        spilled.append(self.pending)
        original(self, path)

    monkeypatch.setattr(curate.scan.task.ValidationCache, "spill", spill)
    first = validate_paths([src], SETTINGS.checks, cache_dir=cache)
    assert spilled and all(n >= 25 for n in spilled)
    assert not list(cache.glob("spill-*"))  # each taken in by the main process, and removed
    # One record changed: its file misses, and every other record of it is a hit.
    lines = (src / "a.jsonl").read_text().splitlines(True)
    changed = json.loads(lines[5])
    changed["abstract"] += " Code is available."
    (src / "a.jsonl").write_text("".join([*lines[:5], json.dumps(changed) + "\n", *lines[6:]]))
    again = validate_paths([src], SETTINGS.checks, cache_dir=cache)
    records = first.report.records
    assert again.cache_hits == 1 + (records - 30 - 1)  # b.jsonl, and a's unchanged records
