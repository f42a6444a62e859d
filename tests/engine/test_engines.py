"""Engines: a build gives the same bytes on every engine, and a task keeps no state an engine
could break (a thread pool shares one process: each thread gets its own cache connection)."""

from __future__ import annotations

import filecmp
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES

import curate.dataset.assemble
import curate.scan.run
from curate import engine as engines
from curate.engine.serial import Serial
from curate.pipeline.build import build
from curate.settings import Settings, from_mapping
from validation.config import ConfigError

T = TypeVar("T")
R = TypeVar("R")
TEMPLATE = ROOT / "dataset_card.md"


class Threads:
    """An engine written against the interface alone: a thread pool in this process."""

    name = "threads"

    def __init__(self, jobs: int = 2) -> None:
        self.workers = jobs
        self.pool = ThreadPoolExecutor(jobs)
        self.ran = 0
        self.by_name: Counter[str] = Counter()  # tasks run, by the function they ran

    def map(
        self, fn: Callable[[T], R], tasks: Iterable[T], *, ahead: int | None = None
    ) -> Iterator[R]:
        futures = [self.pool.submit(fn, task) for task in tasks]
        self.ran += len(futures)
        self.by_name[fn.__name__] += len(futures)
        for future in futures:
            yield future.result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture
def drops(tmp_path: Path) -> Path:
    folder = tmp_path / "drops"
    folder.mkdir()
    for k in range(3):  # several files, so both stages have several tasks
        for seed in SEED_FILES:
            text = seed.read_text(encoding="utf-8").replace(" the ", f" the{k} ", 1)
            (folder / f"{k}_{seed.name}").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def parallel(monkeypatch):
    """Small input goes to the engine too (it would run in this process otherwise)."""
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(curate.dataset.assemble, "PARALLEL_MIN_RECORDS", 0)


def same_tree(a: Path, b: Path) -> bool:
    compared = filecmp.dircmp(a, b)
    if compared.left_only or compared.right_only or compared.diff_files or compared.funny_files:
        return False
    names = list(compared.common_files)
    _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return not mismatch and not errors and all(same_tree(a / d, b / d) for d in compared.subdirs)


@pytest.mark.slow
def test_the_same_bytes_on_the_serial_engine_the_local_pool_and_threads(drops, tmp_path, parallel):
    serial = build([drops], tmp_path / "serial", Settings(), engine="serial", template=TEMPLATE)
    local = build([drops], tmp_path / "local", Settings(), jobs=2, template=TEMPLATE)
    threads = Threads()
    try:
        other = build([drops], tmp_path / "threads", Settings(), engine=threads, template=TEMPLATE)
    finally:
        threads.close()
    # It ran every file's scan task and at least one assembly task.
    assert threads.ran >= len(list(drops.glob("*.txt"))) + 1
    assert serial.fingerprint == local.fingerprint == other.fingerprint
    assert same_tree(tmp_path / "serial", tmp_path / "local")
    assert same_tree(tmp_path / "serial", tmp_path / "threads")


@pytest.mark.slow
def test_shards_are_the_same_bytes_on_every_engine(drops, tmp_path, parallel):
    """Shards of 20 rows in two splits: each file is written by a task of its own, and the
    serial engine, the local pool and threads write the same files."""
    sharded = Settings(shard_size=20, splits={"validation": 0.2, "train": 0.8})
    serial = build([drops], tmp_path / "serial", sharded, engine="serial", template=TEMPLATE)
    build([drops], tmp_path / "local", sharded, jobs=2, template=TEMPLATE)
    threads = Threads()
    try:
        build([drops], tmp_path / "threads", sharded, engine=threads, template=TEMPLATE)
    finally:
        threads.close()
    files = sorted((tmp_path / "serial" / "data").iterdir())
    # 20 rows a file: every split's files but its last are full, and there are several
    assert len(files) == threads.by_name["write_shard"] >= 1 + -(-serial.records_out // 20)
    assert all(pq.read_metadata(f).num_rows == 20 for f in files if "train-00000" in f.name)
    assert same_tree(tmp_path / "serial", tmp_path / "local")
    assert same_tree(tmp_path / "serial", tmp_path / "threads")


@pytest.mark.slow
def test_a_thread_engine_reads_the_cache_without_a_warning(drops, tmp_path, parallel, capsys):
    cache = tmp_path / "cache"
    threads = Threads()
    try:
        build([drops], tmp_path / "a", Settings(), engine=threads, template=TEMPLATE,
              cache_dir=cache)  # fmt: skip
        capsys.readouterr()
        again = build([drops], tmp_path / "b", Settings(), engine=threads, template=TEMPLATE,
                      cache_dir=cache)  # fmt: skip
    finally:
        threads.close()
    assert "warning" not in capsys.readouterr().err
    assert again.report.records > 0
    assert same_tree(tmp_path / "a", tmp_path / "b")


def test_engines_are_found_by_name():
    assert isinstance(engines.make("serial"), Serial)
    pool = engines.make("local", 2)
    try:
        assert (pool.name, pool.workers) == ("local", 2)
    finally:
        pool.close()
    with pytest.raises(KeyError):
        engines.make("nowhere")


def test_the_engine_is_a_setting_of_the_run_that_the_manifest_does_not_list():
    on_ray = from_mapping({"engine": "ray"})
    assert on_ray.engine == "ray"
    assert on_ray.as_dict() == Settings().as_dict()  # what the manifest's `settings` holds
    assert on_ray.as_dict(run=True)["engine"] == "ray"  # what `curate config` shows
    with pytest.raises(ConfigError, match="engine must be one of serial, local, ray"):
        from_mapping({"engine": "spark"})


def test_a_copy_of_a_build_folder_is_the_same_tree(tmp_path):
    """The comparison above can fail: a changed byte is seen."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_bytes(b"1")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert same_tree(tmp_path / "a", tmp_path / "b")
    (tmp_path / "b" / "x").write_bytes(b"2")
    assert not same_tree(tmp_path / "a", tmp_path / "b")
