"""A per-file task runs with fewer young garbage collections, and leaves the process's setting
as it found it, whatever the task does."""

from __future__ import annotations

import gc

import pytest
from conftest import ROOT

import curate.scan.task as task_module
from curate.scan.task import TASK_GC_THRESHOLD, ScanTask, scan_file
from validation.config import Config

DROP = sorted((ROOT / "sources").glob("*.txt"))[0]


def _task() -> ScanTask:
    return ScanTask(index=0, path=str(DROP), format="text", config=Config())


def test_a_task_checks_its_records_with_the_raised_threshold_and_restores_it(monkeypatch):
    seen: list[tuple[int, int, int]] = []
    real = task_module.check_file

    def check_file(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(task_module, "check_file", check_file)
    before = gc.get_threshold()
    gc.set_threshold(700, 7, 9)
    try:
        scanned = scan_file(_task())
        assert gc.get_threshold() == (700, 7, 9)
    finally:
        gc.set_threshold(*before)
    assert scanned.file.n_records > 0
    assert seen == [(TASK_GC_THRESHOLD, 7, 9)]


def test_a_failing_task_restores_the_threshold_too(monkeypatch):
    def check_file(*args, **kwargs):
        raise RuntimeError("a fault inside the task")

    monkeypatch.setattr(task_module, "check_file", check_file)
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        with pytest.raises(RuntimeError, match="a fault inside"):
            scan_file(_task())
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_a_process_that_collects_less_often_already_keeps_its_own_setting(monkeypatch):
    seen: list[int] = []
    real = task_module.check_file

    def check_file(*args, **kwargs):
        seen.append(gc.get_threshold()[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(task_module, "check_file", check_file)
    before = gc.get_threshold()
    gc.set_threshold(5 * TASK_GC_THRESHOLD, 10, 10)
    try:
        scan_file(_task())
    finally:
        gc.set_threshold(*before)
    assert seen == [5 * TASK_GC_THRESHOLD]
