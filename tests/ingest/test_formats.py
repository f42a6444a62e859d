"""Source formats: each file is claimed by exactly one registered format, discovery follows the
registry, and the validation cache's key follows every registered reader's source."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from curate.ingest import formats
from curate.ingest.discover import discover
from curate.pipeline.validate import validate_paths
from curate.scan.cache import _fingerprint, fingerprint
from validation.config import Config

LINES_FORMAT = '''
"""A toy format: one record per non-blank line, no header."""

from pathlib import Path

from curate.ingest.formats import drop_oversized
from validation.records import Record, SourceFile


class Lines:
    name = "lines"
    patterns = ("*.lines",)

    def read(self, path, config):
        data = Path(path).read_bytes()
        source = SourceFile(path=Path(path).as_posix(), size=len(data))
        for i, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            if line.strip():
                source.records.append(Record(source.path, i, line.strip()))
        drop_oversized(source, config)
        return source
'''


@pytest.fixture
def lines_format(tmp_path, monkeypatch):
    """The toy format, registered for the test and written as a real module."""
    module = tmp_path / "mods" / "toy_lines.py"
    module.parent.mkdir()
    module.write_text(textwrap.dedent(LINES_FORMAT), encoding="utf-8")
    monkeypatch.syspath_prepend(str(module.parent))
    monkeypatch.setattr(formats, "REGISTRY", dict(formats.REGISTRY))
    monkeypatch.setattr(formats, "_loaded", {})
    formats.register("lines", ("*.lines",), "toy_lines:Lines")
    yield module
    sys.modules.pop("toy_lines", None)
    _fingerprint.cache_clear()


def test_every_file_is_claimed_by_its_format_and_other_files_are_left_alone(tmp_path, lines_format):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.txt").write_text("ICML 2025 Papers\n\nOne abstract here.\n", encoding="utf-8")
    (folder / "b.lines").write_text("first record\nsecond record\n", encoding="utf-8")
    (folder / "notes.md").write_text("not a source\n", encoding="utf-8")
    found = {s.name: s.format for s in discover([folder])}
    assert found == {"a.txt": "text", "b.lines": "lines"}


def test_records_of_a_new_format_are_checked_like_any_other(tmp_path, lines_format):
    folder = tmp_path / "d"
    folder.mkdir()
    words = " ".join(f"w{i}" for i in range(30))
    (folder / "x.lines").write_text(f"{words}\n\n{words}\n", encoding="utf-8")
    run = validate_paths([folder], Config(), jobs=1)
    assert run.report.records == 2
    duplicate = [f for f in run.report if f.code == "duplicate"]
    assert [(f.file.rsplit("/", 1)[1], f.line) for f in duplicate] == [("x.lines", 3)]


def test_the_cache_key_changes_with_a_registered_reader(tmp_path, lines_format):
    _fingerprint.cache_clear()
    before = fingerprint(Config())
    lines_format.write_text(lines_format.read_text() + "\n# changed\n", encoding="utf-8")
    _fingerprint.cache_clear()
    assert fingerprint(Config()) != before


def test_two_formats_may_not_claim_the_same_files(monkeypatch):
    monkeypatch.setattr(formats, "REGISTRY", dict(formats.REGISTRY))
    with pytest.raises(ValueError, match="claim the same files"):
        formats.register("other-text", ("*.txt",), "somewhere:Other")
    with pytest.raises(ValueError, match="registered twice"):
        formats.register("text", ("*.text",), "somewhere:Other")


def test_a_file_given_by_name_is_read_whatever_its_name(tmp_path):
    path = tmp_path / "drop.csv.bak"
    path.write_text("ICML 2025 Papers\n\nOne abstract.\n", encoding="utf-8")
    (source,) = discover([path])
    assert source.format == formats.DEFAULT == "text"


def test_the_registry_names_the_modules_that_read_each_format():
    files = formats.module_files()
    assert Path(sys.modules["curate.ingest.formats"].__file__).parent / "text.py" in files
