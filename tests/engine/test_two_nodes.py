"""A real cluster of two Ray nodes on this machine, as a cluster of two machines is made: a head
started by `ray start --head` and a second node joined to it, one CPU and a temp dir each, every
process of both listening on 127.0.0.1. A build on it passes the preflight, runs its tasks on
both nodes and gives the local build's bytes; the second node killed while a task of the
build's scan runs on it, the task is run again on the head and the bytes are still the local
build's; and a third node whose workers import a modified copy of curate is refused by name,
exit 3, with the previous release untouched. One cluster serves the module, a second node
started again only for a test after the one that killed it (the last)."""

from __future__ import annotations

import contextlib
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
from pathlib import Path

import pytest
from conftest import ROOT
from test_engines import TEMPLATE, same_tree

import curate

# Its tests start Ray nodes: on the worker that runs test_ray.py's, one at a time.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

BIN = Path(sys.executable).parent
# A node joining the cluster: what `ray start --address` runs once it has read its options.
# `ray start` refuses to join with RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, and without it Ray takes
# this machine's outward address for 127.0.0.1 (the nodes were at 192.0.2.2, the raylets and
# the GCS listened on every interface); with it, both nodes listen on 127.0.0.1 alone.
JOIN = """
import sys
from ray._private.node import Node
from ray._private.parameter import RayParams

gcs, folder = sys.argv[1:]
params = RayParams(gcs_address=gcs, num_cpus=1, temp_dir=folder, node_ip_address="127.0.0.1")
Node(params, head=False, shutdown_at_exit=False, spawn_reaper=False)
"""
TASK = "ray::_run"  # the title of a Ray worker while it runs a task of the build
DROPS = 4  # the files of the corpus, a scan task each


def _processes_of(folder: str) -> dict[int, str]:
    """The processes of the node whose temp dir is ``folder`` (every one names the folder, or
    descends from one that does), never this process or its ancestors; with their titles."""
    parents, commands, found = {}, {}, set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        commands[int(entry)] = command.split(b"\0")[0].decode(errors="replace")
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
    return {pid: commands[pid] for pid in found}


def _stop(folder: str, signals: tuple[signal.Signals, ...]) -> None:
    """Stop one node by the ids of its processes (`ray stop` would stop every Ray node of
    this machine, other people's too). A joined node ends within a second of SIGTERM; the
    head's GCS ignores it, and is not waited for long."""
    for sig in signals:
        for pid in _processes_of(folder):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + (15 if sig == signal.SIGKILL else 2)
        while _processes_of(folder) and time.monotonic() < deadline:
            time.sleep(0.1)


class Cluster:
    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.folders: list[str] = []  # the temp dirs of the nodes started, the head first
        self.env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # 127.0.0.1 stays 127.0.0.1
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": os.urandom(16).hex(),
        }
        self.env.pop("RAY_ADDRESS", None)

    def start(self, *, head: bool = False, pythonpath: Path | None = None) -> str:
        """A node of one CPU with a temp dir of its own (short: Ray's socket paths are
        bounded); its temp dir."""
        folder = tempfile.mkdtemp(prefix="cpf", dir="/tmp")
        self.folders.append(folder)
        env = self.env | ({"PYTHONPATH": str(pythonpath)} if pythonpath else {})
        if head:
            command = [BIN / "ray", "start", "--head", f"--port={self.port}", "--num-cpus=1",
                       f"--temp-dir={folder}", "--node-ip-address=127.0.0.1",
                       "--disable-usage-stats", "--include-dashboard=false"]  # fmt: skip
        else:
            command = [sys.executable, "-c", JOIN, self.address, folder]
        subprocess.run(command, env=env, check=True, capture_output=True, timeout=300)
        return folder

    def nodes(self) -> dict[str, str]:
        """Each alive node's temp dir and its id, as the cluster lists them."""
        script = (
            f"import json, ray; ray.init(address={self.address!r}, logging_level='ERROR'); "
            "print(json.dumps([(n['NodeID'], n['ObjectStoreSocketName'], n['NodeManagerAddress'])"
            " for n in ray.nodes() if n['Alive']]))"
        )
        out = subprocess.run([sys.executable, "-c", script], env=self.env, check=True,
                             capture_output=True, text=True, timeout=300).stdout  # fmt: skip
        found = json.loads(out.strip().splitlines()[-1])
        assert {address for _, _, address in found} == {"127.0.0.1"}
        return {f: i for i, sockets, _ in found for f in self.folders if sockets.startswith(f)}

    def tasks(self, folder: str) -> int:
        """The tasks of the engine the node has run: a Ray worker writes the name of each task
        it starts (``:task_name:_run``, the one remote function of the engine) to its log."""
        return sum(
            log.read_text(errors="replace").splitlines().count(":task_name:_run")
            for log in Path(folder).glob("session_latest/logs/worker-*.out")
        )

    def running(self, folder: str) -> bool:
        """Whether a worker of the node is running a task of the engine now."""
        return TASK in _processes_of(folder).values()

    def kill(self, folder: str) -> None:
        """The node lost, as a machine is: SIGKILL to each of its processes at once."""
        self.folders.remove(folder)
        _stop(folder, (signal.SIGKILL,))
        shutil.rmtree(folder, ignore_errors=True)

    def stop(self, folder: str) -> None:
        self.folders.remove(folder)
        _stop(folder, (signal.SIGTERM, signal.SIGKILL))
        shutil.rmtree(folder, ignore_errors=True)

    def stop_all(self) -> None:
        for folder in reversed(self.folders):  # the head last
            self.stop(folder)


@pytest.fixture(scope="module")
def started() -> Iterator[Cluster]:
    running = Cluster()
    try:
        running.start(head=True)
        yield running
    finally:
        running.stop_all()


@pytest.fixture
def cluster(started: Cluster) -> Cluster:
    """The module's cluster with two nodes alive: the head, and a second node started at the
    first test, or again after a test has killed it."""
    while len(started.folders) < 2:
        started.start()
    return started


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project folder with a generated corpus of 3,000 records in 4 files (3 MB: enough for
    the scan to go to the engine's workers, a task per file)."""
    folder = tmp_path_factory.mktemp("project")
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate.py"), str(folder / "drops"),
         "--records", "3000", "--preset", "warnings-only"],
        check=True, capture_output=True,
    )  # fmt: skip
    assert len(list((folder / "drops").glob("*.txt"))) == DROPS
    return folder


def _command(out: str, *options: str) -> list[str | Path]:
    return [BIN / "curate", "build", "drops", "--out", out, "--exclude", "ground_truth.jsonl",
            "--exclude", "meta.json", "--template", str(TEMPLATE), "--no-cache",
            *options]  # fmt: skip


def _build(
    project: Path, out: str, env: dict[str, str], *options: str
) -> subprocess.CompletedProcess:
    return subprocess.run(_command(out, *options), cwd=project, env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip


@pytest.fixture(scope="module")
def local(started, project) -> Path:
    """The build of the corpus on the local pool, which every build on the cluster must equal."""
    done = _build(project, "local", started.env, "--engine", "local")
    assert done.returncode == 0, done.stderr
    return project / "local"


def test_a_build_passes_the_preflight_runs_on_both_nodes_and_gives_the_local_bytes(
    cluster, project, local
):
    before = {folder: cluster.tasks(folder) for folder in cluster.folders}
    ray = _build(project, "ray", cluster.env, "--engine", "ray", "--ray-address", cluster.address)
    assert ray.returncode == 0, ray.stderr
    assert "Ray node" not in ray.stderr  # the preflight passed
    ran = [cluster.tasks(folder) - before[folder] for folder in cluster.folders]
    assert all(n > 0 for n in ran), ran  # each node ran some of the scan's tasks
    assert sum(ran) == DROPS  # and between them all of them, each once
    assert same_tree(local, project / "ray")


def test_a_node_running_other_curate_is_refused_by_name_and_nothing_is_written(
    cluster, project, local, tmp_path
):
    """The third node's workers import a copy of curate with one line changed."""
    modified = tmp_path / "modified"
    shutil.copytree(Path(curate.__file__).parent, modified / "curate",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    clean = modified / "curate" / "transform" / "clean.py"
    clean.write_text(clean.read_text(encoding="utf-8") + "# one line more\n", encoding="utf-8")
    other = cluster.start(pythonpath=modified)
    try:
        ids = cluster.nodes()
        assert sorted(ids) == sorted(cluster.folders)  # three nodes, all alive
        release = project / "release"
        shutil.copytree(local, release)  # a release made before, which the build would replace
        before = sorted(p.name for p in project.iterdir())
        kept = tmp_path / "kept"
        shutil.copytree(release, kept)

        refused = _build(project, "release", cluster.env, "--engine", "ray", "--ray-address",
                         cluster.address)  # fmt: skip
    finally:
        cluster.stop(other)
    assert refused.returncode == 3, refused.stderr
    lines = [line for line in refused.stderr.splitlines() if line.startswith("curate: error")]
    assert len(lines) == 1, refused.stderr
    assert refused.stderr.strip().endswith(lines[0]), refused.stderr
    assert lines[0].startswith(f"curate: error: Ray node {ids[other][:8]} at 127.0.0.1 ")
    assert "runs other curate code" in lines[0]
    assert lines[0].endswith("; nothing was written")
    assert all(i[:8] not in lines[0] for f, i in ids.items() if f != other)
    assert same_tree(release, kept)
    assert sorted(p.name for p in project.iterdir()) == before


def test_a_node_killed_while_it_runs_a_task_is_retried_and_gives_the_local_bytes(
    cluster, project, local, tmp_path
):
    second = cluster.folders[1]
    log = tmp_path / "stderr"
    with log.open("w") as err:
        build = subprocess.Popen(
            _command("killed", "-v", "--engine", "ray", "--ray-address", cluster.address),
            cwd=project, env=cluster.env, stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not cluster.running(second):
            assert build.poll() is None, "the build ended with no task on the second node"
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.01)
        then = log.read_text()
        cluster.kill(second)
        code = build.wait(timeout=600)
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
    said = log.read_text()
    assert "curate: validated" not in then  # the scan was under way when the node went
    assert code == 0, said
    # Ray's own line: the task the node was running was lost with it, and run again.
    assert "Task _run failed. There are 3 retries remaining" in said, said
    assert "node it was running on is dead" in said, said
    assert same_tree(local, project / "killed")
