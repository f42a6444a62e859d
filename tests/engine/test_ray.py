"""The Ray engine on a local Ray cluster started here (2 CPUs, 127.0.0.1, no dashboard): a build
on it is the same bytes as on the local pool, its near-duplicate search gives the pairs of the
search in one process, a killed worker's task is retried, a worker that keeps dying fails the
build in one line and leaves the previous output, and Ctrl-C stops everything the build
started."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, SEED_FILES, seed_records
from test_engines import TEMPLATE, same_tree

import curate.dataset.assemble
import curate.dedupe.near
import curate.scan.run
from curate.dataset.assemble import write_shard
from curate.dedupe.near import TextSource, components, engine_search
from curate.engine.ray import ClusterUnreachable, RayEngine
from curate.engine.serial import SERIAL
from curate.errors import WorkerDied
from curate.ingest.discover import discover
from curate.pipeline.build import build
from curate.scan.run import Rows, scan
from curate.scan.task import scan_file
from curate.settings import Settings
from curate.transform.rows import Cleaning
from validation.corpus import Corpus, search_corpus

# Each test starts Ray (a cluster of the module's, or one a build starts): one worker runs them
# all, one at a time, so two clusters never compete for the two CPUs they each ask for.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster for this module, bound to 127.0.0.1, with no dashboard and no usage
    statistics; this module's helpers are sent to the workers by value."""
    for key, value in {
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }.items():
        os.environ.setdefault(key, value)
    import ray
    import ray.cloudpickle

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR",
             log_to_driver=False)  # fmt: skip
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    assert ray.util.get_node_ip_address() == "127.0.0.1"
    yield ray
    ray.shutdown()


@pytest.fixture
def parallel(monkeypatch):
    """Small input goes to the engine too (it would run in the main process otherwise)."""
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(curate.dataset.assemble, "PARALLEL_MIN_RECORDS", 0)
    monkeypatch.setattr(curate.dedupe.near, "PARALLEL_MIN_RECORDS", 0)


@pytest.fixture
def drops(tmp_path: Path) -> Path:
    """Three copies of each seed file, one word changed in each: every seed abstract has two
    near-duplicates in other files, so the near-duplicate search has pairs to find."""
    folder = tmp_path / "drops"
    folder.mkdir()
    for k in range(3):
        for seed in SEED_FILES:
            text = seed.read_text(encoding="utf-8").replace(" the ", f" the{k} ", 1)
            (folder / f"{k}_{seed.name}").write_text(text, encoding="utf-8")
    return folder


class Counting(RayEngine):
    """The Ray engine, counting the tasks it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    def map(self, fn: Callable[[Any], Any], tasks: Iterable[Any], **kw: Any) -> Iterator[Any]:
        def counted() -> Iterator[Any]:
            for task in tasks:
                self.ran.append(fn.__name__)
                yield task

        return super().map(fn, counted(), **kw)


def test_a_build_on_ray_is_the_same_bytes_as_on_the_local_pool(cluster, drops, tmp_path, parallel):
    local = build([drops], tmp_path / "local", Settings(), jobs=2, template=TEMPLATE)
    ray_engine = Counting()
    try:
        on_ray = build([drops], tmp_path / "ray", Settings(), engine=ray_engine, template=TEMPLATE)
    finally:
        ray_engine.close()
    # Every stage that scales with the data ran on Ray: a scan task per file, the band tasks
    # and component tasks of the near-duplicate search, and assembly tasks.
    ran = set(ray_engine.ran)
    assert ray_engine.ran.count("scan_file") == len(list(drops.glob("*.txt")))
    assert {"band_buckets", "search_components", "rows_of_files"} <= ran
    assert on_ray.near_merged == local.near_merged > 0
    assert on_ray.fingerprint == local.fingerprint
    assert same_tree(tmp_path / "local", tmp_path / "ray")
    assert cluster.is_initialized()  # an engine that found Ray running leaves it running


def _variants(tmp_path: Path, n: int) -> Path:
    """``n`` variants of one real abstract, two words changed in each, spread over files, so
    that they share LSH buckets far beyond the search's caps (32 recent members and 32
    clusters per bucket), beside the seeds' own records."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "variants"
    folder.mkdir()
    _, base = seed_records(SEED_FILES[0])[0]
    words = base.split()
    header = SEED_FILES[0].read_text(encoding="utf-8").split("\n")[0]
    for f in range(4):
        lines = [header, ""]
        for _ in range(n // 4):
            changed = list(words)
            for at in rng.choice(len(words), 2, replace=False):
                changed[at] = f"w{rng.integers(10_000)}"
            lines += [" ".join(changed), ""]
        for _, text in seed_records(SEED_FILES[f % len(SEED_FILES)]):
            lines += [text, ""]
        (folder / f"v{f}.txt").write_text("\n".join(lines), encoding="utf-8")
    return folder


def test_the_search_on_ray_gives_the_pairs_of_the_search_in_one_process(
    cluster, tmp_path, parallel
):
    settings = Settings()
    config = settings.checks
    sources = discover([_variants(tmp_path, 240)], config.exclude)
    (tmp_path / "spool").mkdir()
    scanned = scan(sources, config, engine=SERIAL, rows=Rows(tmp_path / "spool", Cleaning()))
    texts = TextSource(scanned.spools, [f.path for f in scanned.files], ["text"] * 4, config)
    threshold, size = config.near_duplicate_threshold, config.shingle_size

    def corpus() -> Corpus:  # a Corpus takes the files' signatures: one per search
        return Corpus([replace(f, sigs=f.sigs.copy()) for f in scanned.files], texts)

    alone = search_corpus(corpus(), threshold, size)
    engine = RayEngine()
    try:
        on_ray = engine_search(engine, texts)(corpus(), threshold, size)
    finally:
        engine.close()
    assert len(alone) > 200  # the variants are near-duplicates of each other
    assert on_ray == alone


@dataclass(frozen=True)
class Sized:
    """A task that says how much memory it holds at its peak."""

    memory: int


def _reserved(task: Sized) -> float:
    import ray

    return ray.get_runtime_context().get_assigned_resources().get("memory", 0.0)


def test_a_task_that_says_its_memory_has_it_reserved_and_never_more_than_a_node_has(cluster):
    """A task's declared memory is reserved on its node, so that no more such tasks run at once
    than the node's memory holds; one that says more than the largest node has still runs,
    with the node's whole memory, rather than wait for a node that never comes."""
    node = max(n["Resources"]["memory"] for n in cluster.nodes() if n["Alive"])
    engine = RayEngine()
    try:
        reserved = list(engine.map(_reserved, [Sized(2**20), Sized(0), Sized(int(node) * 4)]))
    finally:
        engine.close()
    assert reserved == [2**20, 0.0, int(node)]


def test_components_link_records_through_shared_buckets():
    # Records 3 and 9 share bucket 0, 9 and 4 bucket 1; 5 and 7 bucket 2; 6 is in 3 alone.
    records = np.array([3, 4, 5, 6, 7, 9, 9])
    buckets = np.array([0, 1, 2, 3, 2, 0, 1])
    members, label = components(records, buckets)
    assert members.tolist() == [3, 4, 5, 6, 7, 9]
    assert label.tolist() == [0, 0, 1, 2, 1, 0]


@dataclass(frozen=True)
class Killing:
    """A scan task that kills its own worker process (SIGKILL, as the out-of-memory killer
    does) the first time a task runs, or every time the first file's task runs."""

    fn: Callable[[Any], Any]
    marker: str
    always: bool

    def __call__(self, task: Any) -> Any:
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
            first = True
        except FileExistsError:
            first = False
        if first or (self.always and task.index == 0):
            os.kill(os.getpid(), signal.SIGKILL)
        return self.fn(task)


class Sabotaged(RayEngine):
    """The Ray engine, with the worker of a stage's first task (the per-file stage's, unless
    told) killed mid-task."""

    def __init__(self, marker: Path, always: bool = False, stage: Callable[..., Any] = scan_file):
        super().__init__()
        self.marker, self.always, self.stage = str(marker), always, stage

    def map(self, fn: Callable[[Any], Any], tasks: Iterable[Any], **kw: Any) -> Iterator[Any]:
        if fn is self.stage:
            fn = Killing(fn, self.marker, self.always)
        return super().map(fn, tasks, **kw)


def test_a_killed_worker_is_retried_and_the_build_is_the_same_bytes(
    cluster, drops, tmp_path, parallel
):
    build([drops], tmp_path / "local", Settings(), jobs=2, template=TEMPLATE)
    engine = Sabotaged(tmp_path / "killed")
    try:
        build([drops], tmp_path / "ray", Settings(), engine=engine, template=TEMPLATE)
    finally:
        engine.close()
    assert (tmp_path / "killed").exists()  # a worker did die
    assert same_tree(tmp_path / "local", tmp_path / "ray")


SHARDED = Settings(shard_size=20, splits={"validation": 0.2, "train": 0.8})


def test_shards_are_written_on_ray_the_same_bytes_as_on_the_local_pool(
    cluster, drops, tmp_path, parallel
):
    build([drops], tmp_path / "local", SHARDED, jobs=2, template=TEMPLATE)
    ray_engine = Counting()
    try:
        build([drops], tmp_path / "ray", SHARDED, engine=ray_engine, template=TEMPLATE)
    finally:
        ray_engine.close()
    files = list((tmp_path / "ray" / "data").glob("*.parquet"))
    assert len(files) == ray_engine.ran.count("write_shard") > 3  # a task each
    assert same_tree(tmp_path / "local", tmp_path / "ray")


def test_a_worker_killed_writing_a_shard_is_retried_and_the_files_are_the_same_bytes(
    cluster, drops, tmp_path, parallel
):
    build([drops], tmp_path / "local", SHARDED, jobs=2, template=TEMPLATE)
    engine = Sabotaged(tmp_path / "killed", stage=write_shard)
    try:
        build([drops], tmp_path / "ray", SHARDED, engine=engine, template=TEMPLATE)
    finally:
        engine.close()
    assert (tmp_path / "killed").exists()  # a worker did die
    assert same_tree(tmp_path / "local", tmp_path / "ray")


def test_a_worker_that_keeps_dying_fails_in_one_line_and_leaves_the_previous_output(
    cluster, drops, tmp_path, parallel
):
    out = tmp_path / "dist"
    build([drops], out, Settings(), jobs=2, template=TEMPLATE)
    shutil.copytree(out, tmp_path / "before")
    (drops / "new.txt").write_text(SEED_FILES[0].read_text(encoding="utf-8"), encoding="utf-8")
    engine = Sabotaged(tmp_path / "killed", always=True)
    engine.retries = 1
    try:
        with pytest.raises(WorkerDied) as died:
            build([drops], out, Settings(), engine=engine, template=TEMPLATE)
    finally:
        engine.close()
    assert "\n" not in str(died.value) and "Ray worker died" in str(died.value)
    assert same_tree(tmp_path / "before", out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["before", "dist", "drops", "killed"]


class TimingOut:
    """Ray whose local start times out: Ray 2.60's ``ray.init`` raises this when the raylet
    has not registered with the GCS within 30 s (an overloaded machine)."""

    def is_initialized(self) -> bool:
        return False

    def init(self, **options: Any) -> None:
        raise Exception(  # Ray's own type for it
            "The current node timed out during startup. This could happen because some of the "
            "raylet failed to startup or the GCS has become overloaded."
        )


def test_a_local_start_that_times_out_is_one_line_after_the_start_line(capsys, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    engine = RayEngine(jobs=2)
    engine._ray = TimingOut()
    with pytest.raises(ClusterUnreachable) as failed:
        engine.workers  # noqa: B018 - the first use starts the cluster
    assert capsys.readouterr().err == "curate: starting a local Ray cluster (2 CPUs)…\n"
    assert str(failed.value) == (
        "the local Ray cluster did not start (The current node timed out during startup. This "
        "could happen because some of the raylet failed to startup or the GCS has become "
        "overloaded.); retry, or use --engine local"
    )
    assert engine._reaper is None and engine._session is None  # nothing of the start is left


def test_a_cluster_that_does_not_answer_is_one_line_before_any_work(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "curate.cli", "build", str(ROOT / "sources"), "--out",
         str(tmp_path / "dist"), "--ray-address", "127.0.0.1:1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 3
    assert run.stderr.splitlines() == [
        "curate: error: cannot join the Ray cluster at 127.0.0.1:1: Connection refused"
    ]
    assert list(tmp_path.iterdir()) == []


def _descendants(pid: int) -> set[int]:
    """The processes below ``pid``, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads the process tree from /proc")
def test_ctrl_c_stops_the_cluster_the_build_started_and_leaves_the_output_as_it_was(tmp_path):
    corpus = tmp_path / "corpus"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate.py"), str(corpus), "--records", "3000",
         "--preset", "warnings-only"],
        check=True, capture_output=True,
    )  # fmt: skip
    out = tmp_path / "dist"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "curate.cli", "build", str(corpus), "--out", str(out),
         "--engine", "ray", "--jobs", "2", "--no-cache", "-v", "--template", str(TEMPLATE)],
        cwd=tmp_path, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        # as a terminal starts it: a shell without job control starts a background command
        # with SIGINT ignored, and Python keeps that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stderr is not None
    seen: set[int] = set()
    lines = []
    for line in proc.stderr:  # the per-file stage is under way once a file is checked
        lines.append(line)
        seen |= _descendants(proc.pid)
        if "checked" in line:
            break
    seen |= _descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    code = proc.wait(timeout=60)
    assert code == 130, "".join(lines) + rest
    assert rest.strip().splitlines()[-1] == "curate: interrupted"
    assert not out.exists()  # the output folder is as it was: there was none
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
    assert len(seen) >= 3  # the cluster's processes (GCS, raylet, workers) were seen
    deadline = time.monotonic() + 20
    while any(map(_alive, seen)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in seen if _alive(pid)] == []


def test_scans_kept_on_ray_are_reused_on_ray_the_same_bytes(cluster, drops, tmp_path, parallel):
    """The tasks spool into the cache folder, by a path every node reads; a second build on
    Ray finds every scan kept and runs no scan task, and the assembly tasks read the kept
    spools."""
    cache = tmp_path / "cache"
    local = build([drops], tmp_path / "local", Settings(), jobs=2, template=TEMPLATE)
    runs = []
    for name in ("first", "second"):
        ray_engine = Counting()
        try:
            build([drops], tmp_path / name, Settings(), engine=ray_engine, template=TEMPLATE,
                  cache_dir=cache)  # fmt: skip
        finally:
            ray_engine.close()
        runs.append(ray_engine.ran)
    assert runs[0].count("scan_file") == len(list(drops.glob("*.txt")))
    assert "scan_file" not in runs[1] and "rows_of_files" in runs[1]
    assert same_tree(tmp_path / "local", tmp_path / "first") and local.records_out > 0
    assert same_tree(tmp_path / "local", tmp_path / "second")
