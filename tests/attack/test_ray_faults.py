"""Ray, in real processes on a real local cluster: stdout carries curate's output only,
whatever Ray prints (a worker killed mid-task made Ray's driver print "(raylet) A worker
died…" in ANSI colours to stdout, so a JSON report piped on was no JSON); the start of a
cluster of the run's own is one progress line, and a start that fails is one line that says
what to do; a Ctrl-C during the start is exit 130, and neither it nor a SIGKILL of the run
leaves any process of the cluster behind."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import GOOD, MAPPING

# Ray is never imported here: it reads its settings from the environment when it is imported,
# and the tests of this process that start a cluster of their own set them first.
# One Ray cluster at a time on this machine: these share the xdist group of tests/engine's.
pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None, reason="the ray extra is not installed"
    ),
    pytest.mark.xdist_group("ray"),
]

KILLED = """
import json, os, sys
from pathlib import Path
from curate.engine.ray import RayEngine

marker = Path(sys.argv[1])


def task(n):
    if n == 1 and not marker.exists():
        marker.write_text("died")
        os._exit(1)  # the worker dies mid-task, as the out-of-memory killer leaves it
    return n * n


engine = RayEngine(jobs=2)
try:
    results = list(engine.map(task, range(4)))
finally:
    engine.close()
print(json.dumps({"results": results}))
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return env


def test_a_killed_worker_leaves_stdout_to_curate(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", KILLED, str(tmp_path / "marker")],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "marker").exists()  # a worker did die, and its task was retried
    assert json.loads(proc.stdout) == {"results": [0, 1, 4, 9]}  # and nothing else
    ours = [line for line in proc.stderr.splitlines() if line.startswith("curate:")]
    assert ours == ["curate: starting a local Ray cluster (2 CPUs)…"]


def test_a_local_cluster_that_cannot_start_is_one_line(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, record in (("a.jsonl", GOOD[0]), ("b.jsonl", GOOD[1])):  # past 2 MB: parallel
        lines = [json.dumps({**record, "abstract": f"{record['abstract']} ({i})"})
                 for i in range(1_200)]  # fmt: skip
        (src / name).write_text("\n".join(lines) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    env = _env()
    env["RAY_TMPDIR"] = str(tmp_path / "curate.toml" / "x")  # under a file: Ray cannot start
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
         "validate", str(src), "--engine", "ray", "--jobs", "2", "--no-cache",
         "--config", str(tmp_path / "curate.toml")],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "curate: starting a local Ray cluster (2 CPUs)…"
    assert len(lines) == 2 and lines[1].startswith("curate: error: the local Ray cluster did "
                                                   "not start ("), lines  # fmt: skip
    assert lines[1].endswith("; retry, or use --engine local")
    assert proc.stdout == ""


@pytest.mark.slow
def test_a_cluster_of_the_builds_own_leaves_no_token_file_and_no_session_folder(tmp_path):
    """Ray, given no token, wrote one to ~/.ray/auth_token with mode 0644 (any local user could
    run code on the cluster), and left its session folder (logs, sockets) behind every build."""
    src = tmp_path / "src"
    src.mkdir()
    for name, record in (("a.jsonl", GOOD[0]), ("b.jsonl", GOOD[1])):  # past 2 MB: parallel
        lines = [json.dumps({**record, "id": f"{record['id']}-{i}",
                             "abstract": f"{record['abstract']} ({i})"})
                 for i in range(1_200)]  # fmt: skip
        (src / name).write_text("\n".join(lines) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    home = tmp_path / "home"
    home.mkdir()
    # Ray's socket paths must fit in 107 bytes, which one under tmp_path does not.
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    env = {k: v for k, v in _env().items() if not k.startswith("RAY_AUTH_")}
    env.update(HOME=str(home), RAY_TMPDIR=str(temp))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
             "build", str(src), "--out", str(tmp_path / "dist"), "--engine", "ray", "--jobs", "2",
             "--no-cache", "--config", str(tmp_path / "curate.toml")],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
        )  # fmt: skip
        left = sorted(p.name for p in temp.iterdir())
    finally:
        shutil.rmtree(temp)
    assert proc.returncode == 0, proc.stderr
    assert "curate: starting a local Ray cluster (2 CPUs)…" in proc.stderr.splitlines()
    assert (tmp_path / "dist" / "manifest.json").exists()
    assert not (home / ".ray" / "auth_token").exists()  # the token was the process's own
    assert left == []  # the cluster's session folder is gone


def _drops(tmp_path: Path) -> Path:
    """Two files past 2 MB, so that the run goes parallel and starts its cluster."""
    src = tmp_path / "src"
    src.mkdir()
    for name, record in (("a.jsonl", GOOD[0]), ("b.jsonl", GOOD[1])):
        lines = [json.dumps({**record, "id": f"{record['id']}-{i}",
                             "abstract": f"{record['abstract']} ({i})"})
                 for i in range(1_200)]  # fmt: skip
        (src / name).write_text("\n".join(lines) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    return src


def _processes() -> dict[int, tuple[int, str]]:
    """Every live process: its parent and command line, from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
                line = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
            except (OSError, ValueError):
                continue
            if state != "Z":
                found[int(entry.name)] = (int(ppid), line)
    return found


def _below(pid: int, table: dict[int, tuple[int, str]]) -> dict[int, str]:
    """The processes below ``pid`` in ``table``, with their command lines."""
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, line) in table.items():
            if ppid == parent and child not in found:
                found[child] = line
                todo.append(child)
    return found


def _left(seen: dict[int, str], temp: Path) -> list[str]:
    """What is still alive of the run's processes: those seen below it, and any whose
    command line names its temp folder."""
    table = _processes()
    return sorted(line for pid, (_, line) in table.items() if pid in seen or str(temp) in line)


def _ctrl_c_heard() -> None:
    """Ctrl-C as a terminal's process has it: a shell without job control starts a command
    run in the background with SIGINT ignored, and Python keeps that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Run:
    """``curate validate --engine ray`` in a real process of its own group, as a terminal runs
    it, with Ray's temp folder of its own; every process below it is noted as it appears."""

    def __init__(self, tmp_path: Path) -> None:
        src = _drops(tmp_path)
        # Ray's socket paths must fit in 107 bytes, which one under tmp_path does not.
        self.temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
        env = _env()
        env["RAY_TMPDIR"] = str(self.temp)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
             "validate", str(src), "--engine", "ray", "--jobs", "2", "--no-cache",
             "--config", str(tmp_path / "curate.toml")],
            cwd=tmp_path, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            start_new_session=True, preexec_fn=_ctrl_c_heard,
        )  # fmt: skip
        self.seen: dict[int, str] = {}
        self.err = ""

    def note(self) -> dict[int, str]:
        self.seen |= _below(self.proc.pid, _processes())
        return self.seen

    def until(self, line: str) -> None:
        assert self.proc.stderr is not None
        for got in self.proc.stderr:
            self.err += got
            self.note()
            if line in got:
                return
        raise AssertionError(self.err)

    def until_seen(self, *words: str, timeout: float = 180) -> None:
        """Until a process below the run names one of ``words``."""
        deadline = time.monotonic() + timeout
        while not any(w in line for line in self.note().values() for w in words):
            assert time.monotonic() < deadline and self.proc.poll() is None, self.seen
            time.sleep(0.02)

    def finish(self) -> int:
        assert self.proc.stderr is not None
        self.err += self.proc.stderr.read()
        code = self.proc.wait(timeout=120)
        return code

    def close(self) -> None:
        """Whatever the test found, nothing of the run is left for the next test."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        table = _processes()
        for pid, line in self.seen.items():
            if pid in table and table[pid][1] == line:
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.temp, ignore_errors=True)


# The moments of the start at which a Ctrl-C came: the start line (the GCS starting), and
# the raylet's agents under way, titled (they outlived the run by a minute).
MOMENTS = ["start line", "ray::RuntimeEnvAgent"]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads the process tree from /proc")
@pytest.mark.parametrize("moment", MOMENTS)
def test_ctrl_c_as_the_cluster_starts_is_exit_130_and_leaves_no_process(moment, tmp_path):
    """A Ctrl-C inside ray.init left a half-started cluster: a segmentation fault in 2 of 8
    trials, and two agents alive for a minute after the exit."""
    run = Run(tmp_path)
    try:
        run.until("curate: starting a local Ray cluster")
        if moment != "start line":
            run.until_seen(moment)
        os.killpg(run.proc.pid, signal.SIGINT)  # what Ctrl-C at a terminal does
        code = run.finish()
        left = _left(run.seen, run.temp)
        folder = sorted(p.name for p in run.temp.iterdir())
    finally:
        run.close()
    assert code == 130, run.err
    assert run.err.strip().splitlines()[-1] == "curate: interrupted", run.err
    assert "Segmentation" not in run.err and "Fatal Python" not in run.err
    assert left == []  # once it has exited, nothing of its cluster runs
    assert folder == []  # nor is anything of it on disk


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads the process tree from /proc")
def test_a_run_killed_leaves_no_process_of_its_cluster(tmp_path):
    """SIGKILL: none of the run's own clean-up runs. Ray's GCS and raylet die with it, but the
    agents the raylet starts lived on for a minute; the reaper ends them and removes the
    session folder."""
    run = Run(tmp_path)
    try:
        run.until("curate: starting a local Ray cluster")
        run.until_seen("ray::RuntimeEnvAgent")  # the agents in their start
        run.note()
        run.proc.kill()
        killed = time.monotonic()
        run.finish()
        while (left := _left(run.seen, run.temp)) and time.monotonic() - killed < 20:
            time.sleep(0.2)  # the reaper's grace, 2 s, and its rounds; not Ray's minute
        folder = sorted(p.name for p in run.temp.iterdir())
    finally:
        run.close()
    assert len(run.seen) >= 5, run.seen  # GCS, raylet, agents... were seen
    assert left == []
    assert folder == []


def test_an_address_where_something_else_answers_is_one_line(tmp_path):
    """A web server where the cluster should be: Ray tried for minutes, a line of
    `gcs_client.cc … Failed to get cluster ID` each time, before curate's one line."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    address = f"127.0.0.1:{server.server_address[1]}"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
             "validate", str(_drops(tmp_path)), "--ray-address", address, "--no-cache",
             "--config", str(tmp_path / "curate.toml")],
            capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_env(),
        )  # fmt: skip
    finally:
        server.shutdown()
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.splitlines() == [
        f"curate: error: cannot join the Ray cluster at {address}: something answers there "
        "that is no Ray cluster (it does not speak gRPC)"
    ]
    assert proc.stdout == ""


# --- a cluster that asks for a token ---------------------------------------------------------
BIN = Path(sys.executable).parent
REFUSED = "Missing authorization header in request!"  # the GCS's log line for each such call


class Authenticated:
    """A `ray start --head` on 127.0.0.1 that asks for a token, as Ray 2.60's `ray start` does,
    in a temp folder of its own: `--ray-address auto` finds it where Ray looks, under
    ``RAY_TMPDIR``, and its processes are told from other clusters' by that folder."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="rta", dir="/tmp"))  # Ray's socket paths: short
        (self.base / "home").mkdir()  # a HOME without ~/.ray/auth_token
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.token = secrets.token_hex(32)
        self.env = {k: v for k, v in _env().items() if not k.startswith("RAY_AUTH_")}
        self.env.update(HOME=str(self.base / "home"), RAY_TMPDIR=str(self.base))
        subprocess.run(
            [BIN / "ray", "start", "--head", f"--port={self.port}", "--num-cpus=1",
             f"--temp-dir={self.base / 'ray'}", "--node-ip-address=127.0.0.1",
             "--disable-usage-stats", "--include-dashboard=false"],
            env=self.env | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token},
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip

    def refused(self) -> int:
        """How many calls without a token its GCS has refused so far."""
        log = self.base / "ray" / "session_latest" / "logs" / "gcs_server.out"
        return log.read_text(errors="replace").count(REFUSED)

    def stop(self) -> None:
        """Its processes by id (`ray stop` would stop every cluster of this machine)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            table = _processes()
            ours = {p for p, (_, line) in table.items() if str(self.base) in line}
            for pid in ours | {p for top in ours for p in _below(top, table)}:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and any(
                str(self.base) in line for _, line in _processes().values()
            ):
                time.sleep(0.5)
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="module")
def authenticated() -> Iterator[Authenticated]:
    cluster = Authenticated()
    try:
        yield cluster
    finally:
        cluster.stop()


def _join(cluster: Authenticated, tmp_path: Path, address: str, **env: str):
    """``curate validate --ray-address ADDRESS --format json`` on two small drops."""
    src = tmp_path / "src"
    src.mkdir()
    for name, record in (("a.jsonl", GOOD[0]), ("b.jsonl", GOOD[1])):
        (src / name).write_text(json.dumps(record) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    return subprocess.run(
        [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
         "validate", str(src), "--ray-address", address, "--no-cache", "--format", "json",
         "--config", str(tmp_path / "curate.toml")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=cluster.env | env,
    )  # fmt: skip


ASKS = (
    "it asks for a token (`ray start` turns token authentication on): set RAY_AUTH_MODE=token, "
    "and RAY_AUTH_TOKEN unless ~/.ray/auth_token holds the cluster's"
)


@pytest.mark.slow
@pytest.mark.parametrize("given", ["address", "auto"])
def test_a_cluster_that_asks_for_a_token_is_one_line_after_one_call(given, authenticated, tmp_path):
    """Without the token Ray asked the cluster's GCS 20 times, a second apart, before the one
    line (21 s here; 124 s were seen where the address Ray connects to for 127.0.0.1, the
    machine's outward one, did not answer); `auto` the same."""
    before = authenticated.refused()
    proc = _join(authenticated, tmp_path, authenticated.address if given == "address" else "auto")
    deadline = time.monotonic() + 10
    while authenticated.refused() == before and time.monotonic() < deadline:
        time.sleep(0.2)  # the GCS's log is written by its own thread
    assert proc.returncode == 3, proc.stderr
    [line] = proc.stderr.splitlines()
    # Ray resolves 127.0.0.1 to this machine's outward address, and `auto` to the cluster's.
    shown = re.escape(authenticated.address if given == "address" else "auto")
    resolved = rf" \([\d.]+:{authenticated.port} as Ray resolves it\)"
    assert re.fullmatch(
        rf"curate: error: cannot join the Ray cluster at {shown}({resolved})?: {re.escape(ASKS)}",
        line,
    ), line
    assert proc.stdout == ""
    assert authenticated.refused() - before == 1  # asked once


@pytest.mark.slow
def test_a_token_the_cluster_does_not_hold_is_named(authenticated, tmp_path):
    """A wrong token is told from none: the line names where it came from, never the token."""
    proc = _join(authenticated, tmp_path, authenticated.address, RAY_AUTH_MODE="token",
                 RAY_AUTH_TOKEN=secrets.token_hex(32))  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"curate: error: cannot join the Ray cluster at {authenticated.address}")
    assert authenticated.token not in line
    assert line.endswith(
        ": it refuses the token in RAY_AUTH_TOKEN: set the cluster's (`ray get-auth-token` there)"
    ), line


@pytest.mark.slow
@pytest.mark.parametrize("given", ["address", "auto"])
def test_the_clusters_token_joins_it(given, authenticated, tmp_path):
    """The check before the join lets the token through as Ray sends it: from RAY_AUTH_TOKEN
    in token mode, and, for `auto`, from ~/.ray/auth_token with no mode set (Ray turns token
    mode on for `auto` when it finds one)."""
    if given == "address":
        address, env = authenticated.address, {"RAY_AUTH_MODE": "token",
                                               "RAY_AUTH_TOKEN": authenticated.token}  # fmt: skip
    else:
        home = tmp_path / "home"
        (home / ".ray").mkdir(parents=True)
        (home / ".ray" / "auth_token").write_text(authenticated.token)
        address, env = "auto", {"HOME": str(home)}
    proc = _join(authenticated, tmp_path, address, **env)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["summary"]["records"] == 2, report["summary"]


STOPPED = """
import json, os, signal, sys
from pathlib import Path
from curate.engine.ray import RayEngine

engine = RayEngine(address=sys.argv[1])
assert list(engine.map(abs, [-1, -2])) == [1, 2]
for entry in Path("/proc").iterdir():  # the cluster's autoscaler stops, as `ray stop` stops it
    if not entry.name.isdigit() or int(entry.name) == os.getpid():  # this names both too
        continue
    try:
        line = (entry / "cmdline").read_bytes()
    except OSError:
        continue
    if sys.argv[2].encode() in line and b"monitor.py" in line:
        os.kill(int(entry.name), signal.SIGTERM)
sys.stdin.readline()  # until the test has seen what Ray printed of it
engine.close()
print(json.dumps({"results": [1, 2]}))
"""


@pytest.mark.slow
def test_a_joined_cluster_that_stops_leaves_stdout_to_curate():
    """When a joined cluster stopped, the autoscaler's traceback ("The autoscaler failed with
    the following error: … Terminated with signal 15", ANSI colours and all) came out on
    stdout, before the report."""
    cluster = Authenticated()
    proc = subprocess.Popen(
        [sys.executable, "-c", STOPPED, cluster.address, str(cluster.base)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=cluster.env | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": cluster.token},
    )  # fmt: skip
    err: list[str] = []
    seen = threading.Event()

    def read() -> None:  # Ray's lines about it, on stderr
        assert proc.stderr is not None
        for line in proc.stderr:
            err.append(line)
            if "The autoscaler failed" in line:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        seen.wait(timeout=120)
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(BrokenPipeError):  # it ended: what it said is below
            proc.stdin.write("\n")
            proc.stdin.close()
        out = proc.stdout.read()
        proc.wait(timeout=120)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        cluster.stop()
    assert seen.is_set(), "".join(err)
    assert proc.returncode == 0, "".join(err)
    assert json.loads(out) == {"results": [1, 2]}  # and nothing else
