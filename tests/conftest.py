"""Shared fixtures: temporary drops built from the real seed files."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "sources"
SEED_FILES = sorted(SOURCES.glob("*.txt"))


def seed_records(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each abstract of a seed file, read without the code under test."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if i > 2 and line.strip():
            out.append((i, line.strip()))
    return out


def all_files(folder: Path) -> dict[str, bytes]:
    """Every file of a folder (a build) by its relative path, with its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def drop(tmp_path: Path) -> Callable[..., Path]:
    """A drop folder holding clean copies of the seeds; call it to add a file to it."""
    folder = tmp_path / "drop"
    folder.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, folder / seed.name)

    def add(name: str, content: str | bytes) -> Path:
        path = folder / name
        if isinstance(content, str):
            path.write_bytes(content.encode("utf-8"))
        else:
            path.write_bytes(content)
        return path

    add.folder = folder  # type: ignore[attr-defined]
    return add


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test that needs Chromium skips without it on a developer's machine (one line: how to
    install it), and fails under CI, where .ci/run installs it."""
    import browser

    if item.get_closest_marker("chromium") and not os.environ.get("CI") and not browser.find():
        pytest.skip(browser.MISSING)


@pytest.fixture(autouse=True)
def _no_package_index(monkeypatch):
    """`curate init` asks the package index whether the release it pins is there: in tests it
    asks a port nothing listens on (it then says so and keeps the pin), so no test depends on
    what a real index holds. tests/project/test_toolkit.py serves indexes of its own."""
    from curate.project import toolkit

    monkeypatch.setattr(toolkit, "configured_index", lambda: "http://127.0.0.1:9/simple")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own validation cache: no test sees another's (or a developer's)."""
    monkeypatch.setenv("CURATE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
