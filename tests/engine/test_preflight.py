"""The Ray engine's preflight: every node that runs tasks is checked before the first one.

The checks themselves (:func:`curate.engine.preflight.probe`) are run here in this process on
folders made to differ; test_two_nodes.py runs them on a real cluster of two nodes, where a
node whose workers import a modified copy of curate is refused by name."""

from __future__ import annotations

import errno
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import curate
from curate.engine import preflight
from curate.engine.preflight import TOKEN, _expected, identity, probe


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / TOKEN).write_text("t0k3n", encoding="utf-8")
    return folder


def test_a_node_that_sees_what_this_machine_sees_is_fit(tmp_path, work):
    source = tmp_path / "drops"
    source.mkdir()
    (source / "a.txt").write_text("x", encoding="utf-8")
    assert probe(_expected([source], work, "t0k3n")) == []
    assert sorted(p.name for p in work.iterdir()) == [TOKEN]  # its mark is removed again


def test_a_node_with_other_data_under_the_same_path_is_named_so(tmp_path, work):
    source = tmp_path / "drops"
    source.mkdir()
    (source / "a.txt").write_text("x", encoding="utf-8")
    expected = _expected([source], work, "t0k3n")
    (source / "b.txt").write_text("y", encoding="utf-8")  # what the node sees differs
    assert probe(expected) == [
        f"sees other data at source {source} (a folder of 2 entries there, "
        "a folder of 1 entries here)"
    ]


def test_a_node_that_cannot_read_a_source_or_sees_another_work_folder(tmp_path, work):
    source = tmp_path / "one.txt"
    source.write_text("abc", encoding="utf-8")
    expected = _expected([source], work, "t0k3n")
    source.unlink()
    (work / TOKEN).write_text("another machine's", encoding="utf-8")
    assert probe(expected) == [
        f"cannot read source {source} (no such file or directory)",
        f"does not share the work folder {work} with this machine (it sees another)",
    ]


def test_a_node_that_cannot_write_the_work_folder(work, monkeypatch):
    def refuse(path: Path, data: bytes) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(Path, "write_bytes", refuse)  # what a read-only mount answers
    assert probe(_expected([], work, "t0k3n")) == [
        f"cannot write the work folder {work} (permission denied)"
    ]


def test_other_code_or_library_versions_are_named(tmp_path, work):
    expected = _expected([], work, "t0k3n")
    code = dict(expected.code) | {"curate": "0" * 64, "pyarrow": "1.0.0"}
    found = probe(replace(expected, code=tuple(sorted(code.items()))))
    mine = identity()
    assert found == [
        f"runs other curate code (its files hash to {mine['curate'][:12]} there, "
        "000000000000 here)",
        f"has pyarrow {mine['pyarrow']}, this machine 1.0.0",
    ]


def test_the_code_hash_covers_every_file_of_the_package_but_compiled_ones(tmp_path):
    copy = tmp_path / "curate"
    shutil.copytree(Path(curate.__file__).parent, copy)
    files = preflight._package_files(copy)
    assert copy / "project" / "templates" / "dataset_card.md" in files
    assert not [p for p in files if p.suffix == ".pyc" or "__pycache__" in p.parts]
