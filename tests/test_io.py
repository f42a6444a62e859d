"""Atomic writes give files the mode an ordinary write would, not mkstemp's private 0600."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import SOURCES

from curate.cli import main
from curate.io import atomic_write_text


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_0666_less_the_umask(tmp_path, umask_022):
    target = tmp_path / "validation-report.json"
    atomic_write_text(target, "{}\n")
    assert _mode(target) == 0o644
    assert target.read_text(encoding="utf-8") == "{}\n"


def test_a_replaced_file_keeps_its_mode(tmp_path, umask_022):
    target = tmp_path / "report.json"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)  # the user chose it: a rewrite keeps it
    atomic_write_text(target, "new\n")
    assert _mode(target) == 0o640
    assert target.read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary left


def test_a_build_is_readable_by_others(tmp_path, umask_022):
    out = tmp_path / "dist"
    assert main(["build", str(SOURCES), "--out", str(out), "-q"]) == 0
    private = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
               and not _mode(p) & stat.S_IROTH]  # fmt: skip
    assert private == []
