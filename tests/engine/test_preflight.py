"""The Ray engine's preflight: every node that runs tasks is checked before the first one.

The checks themselves (:func:`curate.engine.preflight.probe`) are run here in this process on
folders made to differ; then, on a real cluster of two Ray nodes on this machine (two raylets
with temp dirs of their own, joined by `ray start`), a build passes the preflight and gives the
local build's bytes, and a third node whose workers import a modified copy of curate is refused
by name, exit 3, with the previous release untouched."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT
from test_engines import TEMPLATE, same_tree

import curate
from curate.engine import preflight
from curate.engine.preflight import TOKEN, _expected, identity, probe

# Its tests start Ray clusters: on the worker that runs test_ray.py's, one at a time.
pytestmark = pytest.mark.xdist_group("ray")

BIN = Path(sys.executable).parent


# --- the checks, in this process ------------------------------------------------------------
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


# --- a real cluster of two nodes ------------------------------------------------------------
def _processes_of(folder: str) -> set[int]:
    """The processes a `ray start --temp-dir=folder` started (every one names the folder, or
    descends from one that does), never this process or its ancestors."""
    parents, found = {}, set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        if folder.encode() in command:
            found.add(int(entry))
    grew = True
    while grew:
        children = {p for p, parent in parents.items() if parent in found} - found
        found |= children
        grew = bool(children)
    me = os.getpid()
    while me > 1:
        found.discard(me)
        me = parents.get(me, 1)
    return found


def _stop(folder: str) -> None:
    """Stop one node by the ids of its processes (`ray stop` would stop every Ray node of
    this machine, other people's too)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _processes_of(folder):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 15
        while _processes_of(folder) and time.monotonic() < deadline:
            time.sleep(0.5)


class Cluster:
    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.folders: list[str] = []
        self.env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": os.urandom(16).hex(),
        }
        self.env.pop("RAY_ADDRESS", None)

    def start(self, *, head: bool = False, pythonpath: Path | None = None) -> str:
        """A node of one CPU with a temp dir of its own (short: Ray's socket paths are
        bounded); its temp dir."""
        folder = tempfile.mkdtemp(prefix="cpf", dir="/tmp")
        self.folders.append(folder)
        where = ["--head", f"--port={self.port}"] if head else [f"--address={self.address}"]
        env = self.env | ({"PYTHONPATH": str(pythonpath)} if pythonpath else {})
        subprocess.run(
            [BIN / "ray", "start", *where, "--num-cpus=1", f"--temp-dir={folder}",
             "--node-ip-address=127.0.0.1", "--disable-usage-stats",
             *(["--include-dashboard=false"] if head else [])],
            env=env, check=True, capture_output=True, timeout=300,
        )  # fmt: skip
        return folder

    def nodes(self) -> dict[str, str]:
        """Each alive node's temp dir and its id."""
        script = (
            f"import json, ray; ray.init(address={self.address!r}, logging_level='ERROR'); "
            "print(json.dumps("
            "[(n['NodeID'], n['ObjectStoreSocketName']) for n in ray.nodes() if n['Alive']]))"
        )
        out = subprocess.run([sys.executable, "-c", script], env=self.env, check=True,
                             capture_output=True, text=True, timeout=300).stdout  # fmt: skip
        found = json.loads(out.strip().splitlines()[-1])
        return {f: i for i, socket_name in found for f in self.folders if socket_name.startswith(f)}

    def stop(self) -> None:
        for folder in reversed(self.folders):  # the head last
            _stop(folder)
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    running = Cluster()
    try:
        running.start(head=True)
        running.start()
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project folder with a generated corpus of 3,000 records in 4 files (3 MB: enough for
    the scan to go to the engine's workers)."""
    folder = tmp_path_factory.mktemp("project")
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate.py"), str(folder / "drops"),
         "--records", "3000", "--preset", "warnings-only"],
        check=True, capture_output=True,
    )  # fmt: skip
    return folder


def _build(
    project: Path, out: str, env: dict[str, str], *engine: str
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BIN / "curate", "build", "drops", "--out", out, "--exclude", "ground_truth.jsonl",
         "--exclude", "meta.json", "--template", str(TEMPLATE), *engine],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


@pytest.mark.slow
def test_identical_nodes_pass_the_preflight_and_give_the_local_bytes(cluster, project):
    local = _build(project, "local", cluster.env, "--engine", "local")
    assert local.returncode == 0, local.stderr
    ray = _build(project, "ray", cluster.env, "--engine", "ray", "--ray-address", cluster.address)
    assert ray.returncode == 0, ray.stderr
    assert "Ray node" not in ray.stderr
    assert same_tree(project / "local", project / "ray")


@pytest.mark.slow
def test_a_node_running_other_curate_is_refused_by_name_and_nothing_is_written(
    cluster, project, tmp_path
):
    """The third node's workers import a copy of curate with one line changed."""
    modified = tmp_path / "modified"
    shutil.copytree(Path(curate.__file__).parent, modified / "curate",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    clean = modified / "curate" / "transform" / "clean.py"
    clean.write_text(clean.read_text(encoding="utf-8") + "# one line more\n", encoding="utf-8")
    other = cluster.start(pythonpath=modified)
    ids = cluster.nodes()
    assert len(ids) == 3
    release = project / "release"
    assert _build(project, "release", cluster.env, "--engine", "local").returncode == 0
    before = sorted(p.name for p in project.iterdir())
    kept = tmp_path / "kept"
    shutil.copytree(release, kept)

    refused = _build(project, "release", cluster.env, "--engine", "ray", "--ray-address",
                     cluster.address)  # fmt: skip
    assert refused.returncode == 3, refused.stderr
    lines = [line for line in refused.stderr.splitlines() if line.startswith("curate: error")]
    assert len(lines) == 1, refused.stderr
    assert refused.stderr.strip().endswith(lines[0])
    assert lines[0].startswith(f"curate: error: Ray node {ids[other][:8]} at ")
    assert "runs other curate code" in lines[0]
    assert lines[0].endswith("; nothing was written")
    assert all(i[:8] not in lines[0] for f, i in ids.items() if f != other)
    assert same_tree(release, kept)
    assert sorted(p.name for p in project.iterdir()) == before
