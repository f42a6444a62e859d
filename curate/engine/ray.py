"""The Ray engine: the tasks of a run on a Ray cluster, one machine or many.

With an address (``RAY_ADDRESS`` or ``--ray-address``) it joins that cluster and leaves it
running when the run ends; without one it starts a cluster on this machine, bound to
127.0.0.1, with no dashboard and no usage statistics, and stops it at the end of the run. Either
way nothing starts before the first task that needs a worker: a run whose work is small enough
for the main process never touches the cluster. Ray is an optional extra
(``curate-datasets[ray]``) and is imported only when this engine is chosen.

Results come back in task order and every task names what it reads and writes, so a build on
Ray is the same bytes as on the local pool. A worker or node that dies mid-task is Ray's to
retry (:data:`RETRIES` times: the tasks are idempotent, they rewrite the same files); past that
the run fails with one line (:class:`curate.errors.WorkerDied`) before anything is published.
Closing the engine (the end of the run, an error, Ctrl-C) cancels every task still queued or
running, so a stopped run leaves nothing working behind it. A cluster of its own has a reaper,
a small process that outlives the run: once the run has ended, even by SIGKILL, it ends what
is left of the cluster and removes its session folder (:func:`_reap`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from curate.errors import UsageError, WorkerDied

T = TypeVar("T")
R = TypeVar("R")
RETRIES = 3  # attempts after the first, for a task whose worker or node died
# Ray itself, in the range of the [ray] extra (tests/test_workflow_installs.py holds them equal):
# that works however curate was installed, from a wheel, a commit or an index.
INSTALL = "pip install 'ray>=2.60,<3' (curate-datasets' [ray] extra)"
CONNECT_TIMEOUT = 5.0  # seconds to wait for the cluster's address to answer
GCS_TIMEOUT = 10.0  # seconds for its GCS to give the cluster's id (a few ms when healthy)
# HTTP/2's client greeting and an empty SETTINGS frame: what a gRPC client says first.
HTTP2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
QUIET: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
MARK = "CURATE_RAY_CLUSTER"  # in the environment of every process of a cluster of our own
REAP_GRACE = 2.0  # seconds they have to end by themselves once the run has, before SIGKILL
WATCH = 0.5  # seconds between the reaper's looks at the processes while the run lives


class ClusterUnreachable(WorkerDied):
    """The Ray cluster named by the address could not be joined: exit 3, one line."""


def _import_ray(local: bool) -> Any:
    """``ray``, imported with this engine's defaults in the environment (a value set there
    already wins): no usage statistics; workers on this interpreter rather than a ``uv run``
    of their own (which Ray does by default when the main process runs under ``uv run``, and
    which re-creates the environment without the extra); and, for a cluster of our own, every
    address on 127.0.0.1 (Ray otherwise binds the machine's outward address) and a token of
    this process's own in ``RAY_AUTH_TOKEN``, which Ray reads before any file: without it Ray
    writes one to ``~/.ray/auth_token`` with mode 0644, and any local user who reads it can run
    code on the cluster. Ray reads these when it is imported or first connects."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        if "RAY_AUTH_TOKEN_PATH" not in os.environ:  # a token file the user named wins
            os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
    try:
        import ray
    except ImportError:
        raise UsageError(f"--engine ray needs Ray, which is not installed: {INSTALL}") from None
    _off_stdout(ray)
    return ray


def _off_stdout(ray: Any) -> None:
    """Send what Ray prints in this process to stderr: stdout carries curate's output only
    (a report in JSON, piped on). Ray's driver printed the raylet's errors, such as "A worker
    died…" in ANSI colours, to stdout, so that a `--format json` report after a killed worker
    was no JSON."""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    printer = getattr(worker, "print_to_stdstream", None)
    if printer is None or getattr(printer, "to_stderr", False):
        return  # another Ray, or done already

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        printer({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


@contextlib.contextmanager
def _signals_kept() -> Iterator[None]:
    """Through ``ray.init``: a Ctrl-C waits until it returns, and SIGTERM stays curate's.

    A Ctrl-C in the midst of the start (a KeyboardInterrupt raised inside ``ray.init``) left
    a cluster half started, whose processes nobody stopped. Held back here (blocked in this
    thread and so in the threads ``ray.init`` starts, which inherit the mask, and counted if
    another thread takes it), it is raised once the cluster is up, and the run stops as on
    any Ctrl-C, shutting the cluster down. ``ray.init`` installs its own SIGTERM handler (a
    stack dump and SIGABRT, exit 134); curate's is put back: SIGTERM stops the run as
    Ctrl-C does."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    sigterm = signal.getsignal(signal.SIGTERM)
    held = hasattr(signal, "pthread_sigmask")
    if held:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)
        signal.signal(signal.SIGINT, previous or signal.default_int_handler)
        if held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one pending: here
        if caught:
            raise KeyboardInterrupt


@contextlib.contextmanager
def _held_stderr() -> Iterator[Callable[[], str]]:
    """Hold what is written to this process's stderr (file descriptor 2, where Ray's C++
    core logs) while the cluster is started or joined: a failure is curate's one line, not
    twenty of ``gcs_client.cc … Failed to get cluster ID`` first. Yields what was held."""
    with tempfile.TemporaryFile() as held:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(held.fileno(), 2)
        try:
            yield lambda: (held.seek(0), held.read().decode("utf-8", "replace"))[1]
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _run(fn: Callable[[T], R], task: T, folder: str) -> R:
    """The one remote function: any picklable callable, with its task (``ray.remote`` takes
    functions only, and one remote function is registered with the cluster once), run in the
    main process's working folder, so that the relative paths a task names (the drops as
    given, the output folder, the cache) are the same files on every node of a cluster that
    shares a filesystem."""
    if os.getcwd() != folder:
        try:
            os.chdir(folder)
        except OSError as exc:
            raise FileNotFoundError(
                f"{folder}: the working folder of the build is not on Ray node "
                f"{socket.gethostname()} ({exc.strerror}); run from a folder every node shares"
            ) from None
    return fn(task)


def _session_root() -> str:
    """A new folder, only this user's, for everything a cluster of our own writes (its
    session folder: logs, sockets, spilled objects), removed when the cluster stops: in Ray's
    own temp folder it would stay behind, a few hundred KB a build. It is under the parent Ray
    would use, as Ray chooses it, because a longer path (macOS's ``$TMPDIR``) makes its socket
    paths too long."""
    parent = os.environ.get("RAY_TMPDIR")
    if parent is None:
        parent = os.environ.get("TMPDIR", "/tmp") if sys.platform == "linux" else "/tmp"
    return tempfile.mkdtemp(prefix="curate-ray-", dir=parent)


def _reachable(address: str, shown: str | None = None) -> None:
    """Refuse, within seconds, an address where no Ray cluster answers: Ray itself keeps
    trying for minutes, a line of ``gcs_client.cc … Failed to get cluster ID`` each time.
    Nothing there is refused by the connection; something else (a web server) by its answer
    to HTTP/2's greeting, which Ray's gRPC returns with a SETTINGS frame. ``auto`` and other
    addresses without a port are left to Ray, as is a cluster that speaks TLS first. ``shown``
    is how the message names the address (the one given, and the one Ray resolved it to)."""
    shown = shown or address
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT) as s:
            if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
                return
            s.sendall(HTTP2_GREETING)
            answer = b""
            while len(answer) < 9 and (got := s.recv(9 - len(answer))):
                answer += got
    except OSError as exc:
        raise ClusterUnreachable(
            f"cannot join the Ray cluster at {shown}: {exc.strerror or exc}"
        ) from None
    if len(answer) < 9 or answer[3] != 0x04:  # a frame header: length (3), type 4, SETTINGS
        raise ClusterUnreachable(
            f"cannot join the Ray cluster at {shown}: something answers there that is no "
            "Ray cluster (it does not speak gRPC)"
        )


def _token_advice() -> str:
    """What to set when a cluster refused this process: Ray sends a token only in token mode
    (``RAY_AUTH_MODE=token``), taken from ``RAY_AUTH_TOKEN``, else the file named by
    ``RAY_AUTH_TOKEN_PATH``, else ``~/.ray/auth_token``."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return (
            "it asks for a token (`ray start` turns token authentication on): set "
            "RAY_AUTH_MODE=token, and RAY_AUTH_TOKEN unless ~/.ray/auth_token holds the "
            "cluster's"
        )
    if os.environ.get("RAY_AUTH_TOKEN"):
        source = "RAY_AUTH_TOKEN"
    else:
        source = os.environ.get("RAY_AUTH_TOKEN_PATH") or "~/.ray/auth_token"
    return f"it refuses the token in {source}: set the cluster's (`ray get-auth-token` there)"


def _admitted(ray: Any, address: str) -> None:
    """Refuse, within seconds, a cluster that would not have this process. ``ray.init``
    asks 20 times, a second apart, before it fails: 21 s on 2 cores for a GCS that refuses
    the token (or its absence), and minutes (past 7 here) where the address it connects to
    does not answer (for 127.0.0.1 that is the machine's outward address). So the address is
    resolved here as ``ray.init`` resolves it (``auto``: the cluster ``ray start`` last
    started, whose token Ray then sends if it finds one), its port checked as
    :func:`_reachable` does, and Ray's own GCS client asks for the cluster's id once, with the
    token ``ray.init`` would send: a few ms on a healthy cluster. Another Ray, without these
    parts, is left to its ``ray.init``."""
    if address.startswith("ray://"):
        return  # Ray Client: a server of its own, not the GCS
    try:
        from ray._private import services
        from ray._private.authentication import authentication_token_setup as auth
        from ray._raylet import InnerGcsClient
    except ImportError:
        return
    if address == "auto":  # as ray.init does for it: a token found turns token mode on
        auth.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    gcs = services.canonicalize_bootstrap_address(address)
    if gcs is None:
        return  # no cluster found: ray.init says so at once
    shown = address if gcs == address else f"{address} ({gcs} as Ray resolves it)"
    if gcs != address:
        _reachable(gcs, shown)
    try:
        InnerGcsClient.standalone(gcs, cluster_id=None, timeout_ms=int(GCS_TIMEOUT * 1000))
    except ray.exceptions.AuthenticationError:
        reason = _token_advice()
    except ray.exceptions.RpcError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        reason = f"no Ray cluster gave its id when asked ({first[:200]})"
    else:
        return
    raise ClusterUnreachable(f"cannot join the Ray cluster at {shown}: {reason}")


def _start_reaper(mark: str, session: str) -> subprocess.Popen[bytes]:
    """The watchdog of a cluster of our own (:func:`_reap`), in a session of its own (a
    Ctrl-C at the terminal is not for it), reading a pipe that closes when the run ends or
    dies. Not marked itself."""
    env = {k: v for k, v in os.environ.items() if k != MARK}
    code = f"from {__name__} import {_reap.__name__}; {_reap.__name__}()"
    return subprocess.Popen(
        [sys.executable, "-c", code, mark, session], stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip


@contextlib.contextmanager
def _marked(mark: str) -> Iterator[None]:
    """``mark`` in the environment while ``ray.init`` starts the cluster: its processes, and
    every process they start (the agents, the workers), inherit it, whatever title they give
    themselves; this process keeps its own environment."""
    os.environ[MARK] = mark
    try:
        yield
    finally:
        os.environ.pop(MARK, None)


def _carries(pid: int, mark: str) -> bool:
    """Whether process ``pid`` was started with ``mark`` in its environment."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return f"\0{MARK}={mark}\0".encode() in b"\0" + fh.read()
    except OSError:
        return False


def _processes() -> dict[int, tuple[int, bytes]]:
    """Every process (Linux's /proc; elsewhere none): its parent, and its start time, which
    tells a process from a later one given the same id."""
    table = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError, IndexError, ValueError):
                    with open(f"/proc/{entry.name}/stat", "rb") as fh:
                        fields = fh.read().rsplit(b")", 1)[1].split()
                    table[int(entry.name)] = (int(fields[1]), fields[19])
    return table


class _Cluster:
    """The processes of a cluster of our own, as the reaper follows them: each that carries
    the mark, and each started by one of them. Its environment alone would not do: a process
    that retitles itself (Ray's agents, ``ray::DashboardAgent``) overwrites it, so a process
    is remembered (by id and start time) from when it is first seen."""

    def __init__(self, mark: str, run: int) -> None:
        self.mark, self.run = mark, run
        self.known: dict[int, bytes] = {}
        self.others: set[tuple[int, bytes]] = set()

    def alive(self) -> dict[int, bytes]:
        """The cluster's processes alive now, by id and start time."""
        table = _processes()
        known = {p: t for p, t in self.known.items() if p in table and table[p][1] == t}
        grown = True
        while grown:
            grown = False
            for pid, (parent, start) in table.items():
                if pid in known or (pid, start) in self.others:
                    continue
                if parent in known or _carries(pid, self.mark):
                    known[pid] = start
                    grown = True
        # A process not ours now never is (what makes one ours is its start, or its parent's),
        # but for one the run has forked and not yet started the program of (the environment
        # is the run's until then).
        self.others |= {(p, t) for p, (q, t) in table.items() if p not in known and q != self.run}
        self.known = known
        return known


def _reap() -> None:
    """The watchdog of a cluster of the run's own: once the run has ended, however it ended
    (its pipe closes on SIGKILL too, when none of its own clean-up runs), end every process
    of the cluster and remove its session folder. Ray makes its GCS and raylet die with the
    run (PR_SET_PDEATHSIG), but not what the raylet starts: its two agents, caught in their
    own start by a Ctrl-C or a SIGKILL of the run, lived on for about a minute."""
    import select

    mark, session = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    cluster = _Cluster(mark, os.getppid())
    while True:  # follow the cluster while the run lives
        if select.select([0], [], [], WATCH)[0] and not os.read(0, 1024):
            break
        cluster.alive()
    deadline = time.monotonic() + REAP_GRACE  # a cluster shut down ends by itself: let it
    while cluster.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    for _ in range(50):
        if not (left := cluster.alive()):
            break
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    shutil.rmtree(session, ignore_errors=True)


class RayEngine:
    """Tasks on a Ray cluster: the one at ``address`` (default ``$RAY_ADDRESS``), or a local one
    of ``jobs`` CPUs (default: one per CPU) started on first use and stopped by :meth:`close`.
    A process that has called ``ray.init`` itself (a test, a notebook) keeps its connection."""

    name = "ray"

    def __init__(self, jobs: int | None = None, address: str | None = None) -> None:
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        if self.address is not None:
            _reachable(self.address)  # before any work, and before Ray's seconds of import
        self._ray = _import_ray(local=self.address is None)
        self._jobs = jobs
        self._workers: int | None = None
        self._owned = False  # this engine called ray.init, and shuts it down
        self._session: str | None = None  # the folder of a cluster of our own, removed at close
        self._reaper: subprocess.Popen[bytes] | None = None  # its watchdog (_reap)
        self._live: set[Any] = set()  # refs of tasks submitted and not yet read
        self._remote: Any = None  # the remote function, made on first use
        self._node_memory = 0  # the memory of the cluster's largest node, as Ray counts it
        self.retries = RETRIES

    def preflight(self, roots: Iterable[str | Path], work: str | Path | None) -> None:
        """Before any work, check every node of a cluster the run joins or was given
        (:mod:`curate.engine.preflight`). A cluster of its own is this machine, this
        interpreter and these files: it has nothing to check, and still starts only when a
        task needs it."""
        if self.address is None and not self._ray.is_initialized():
            return
        from curate.engine import preflight

        self._connect()
        preflight.check(self._ray, roots, work)

    @property
    def workers(self) -> int:
        """Tasks that run at once: the cluster's CPUs (joining or starting it)."""
        if self._workers is None:
            self._connect()
            cpus = int(self._ray.cluster_resources().get("CPU", 1))
            self._workers = max(1, cpus)
        return self._workers

    def _connect(self) -> None:
        if self._ray.is_initialized():
            return
        if self.address is None:
            self._start()
        else:
            self._join()

    def _start(self) -> None:
        """Start a cluster of our own, every process of which the reaper ends with the run
        (:func:`_reap`)."""
        from curate.engine import default_jobs

        cpus = self._jobs or default_jobs()
        print(f"curate: starting a local Ray cluster ({cpus} CPUs)…", file=sys.stderr,
              flush=True)  # fmt: skip
        try:
            self._session = _session_root()
            mark = secrets.token_hex(16)
            self._reaper = _start_reaper(mark, self._session)
            with _held_stderr(), _signals_kept(), _marked(mark):
                # "local": a new cluster, never one that `ray start` left on this machine.
                self._ray.init(address="local", num_cpus=cpus, include_dashboard=False,
                               _temp_dir=self._session, **QUIET)  # fmt: skip
                self._owned = True  # before a Ctrl-C held back is raised: close shuts it down
        except Exception as exc:  # a timeout, a port taken, a full /tmp...
            self._release()
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ClusterUnreachable(
                f"the local Ray cluster did not start ({first[:200]}); retry, or use --engine local"
            ) from None

    def _join(self) -> None:
        assert self.address is not None
        try:
            with _held_stderr(), _signals_kept():
                _admitted(self._ray, self.address)
                self._ray.init(address=self.address, **QUIET)
                self._owned = True
        except ClusterUnreachable:
            raise
        except Exception as exc:  # Ray raises ConnectionError, ValueError, RuntimeError...
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            if "InvalidAuthToken" in f"{exc} {exc.__cause__}":
                first += f"; {_token_advice()}"
            raise ClusterUnreachable(
                f"cannot join the Ray cluster at {self.address}: {first}"
            ) from None

    def _function(self, task: object) -> Any:
        """The remote function as ``task`` needs it run. A task that says what memory it holds
        (``memory``, bytes) has that reserved on its node, so that no more tasks run at once on
        a node than its memory holds; at most the largest node's, or it would never run."""
        if self._remote is None:
            self._remote = self._ray.remote(_run)
            nodes = [n["Resources"].get("memory", 0) for n in self._ray.nodes() if n["Alive"]]
            self._node_memory = int(max(nodes, default=0))
        # Retried on a dead worker or node only, never on an exception the task raised:
        # that is the same exception again, and the caller's to handle.
        options: dict[str, Any] = {"max_retries": self.retries, "retry_exceptions": False}
        memory = min(int(getattr(task, "memory", 0)), self._node_memory)
        if memory > 0:
            options["memory"] = memory
        return self._remote.options(**options)

    def map(
        self, fn: Callable[[T], R], tasks: Iterable[T], *, ahead: int | None = None
    ) -> Iterator[R]:
        self._connect()
        folder = os.getcwd()
        window: deque[Any] = deque()
        try:
            for task in tasks:
                ref = self._function(task).remote(fn, task, folder)
                self._live.add(ref)
                window.append(ref)
                if ahead is not None and len(window) >= ahead:
                    yield self._result(window.popleft())
            while window:
                yield self._result(window.popleft())
        finally:
            # Abandoned (an error, Ctrl-C, a consumer that stopped reading): nothing of this
            # map goes on running.
            self._cancel(window)

    def _result(self, ref: Any) -> Any:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            # The task raised: the same exception as on any other engine.
            raise exc.cause from None
        except (
            ray.exceptions.WorkerCrashedError,
            ray.exceptions.NodeDiedError,
            ray.exceptions.ObjectLostError,
            ray.exceptions.LocalRayletDiedError,
        ) as exc:
            raise WorkerDied(
                f"a Ray worker died and its task failed {self.retries + 1} times "
                f"({type(exc).__name__}); nothing was written"
            ) from None
        finally:
            self._live.discard(ref)

    def _cancel(self, refs: Iterable[Any]) -> None:
        for ref in list(refs):
            # A task already finished, or a cluster already gone: nothing to stop.
            with contextlib.suppress(Exception):
                self._ray.cancel(ref, force=True)
            self._live.discard(ref)

    def close(self) -> None:
        """Cancel what is still queued or running; stop the cluster this engine started (or
        leave the one it joined, still running)."""
        ray = self._ray
        if self._live and ray.is_initialized():
            self._cancel(self._live)
        if self._owned:
            ray.shutdown()
            self._owned = False
        self._release()
        self._workers = None
        self._remote = None

    def _release(self) -> None:
        """End what is left of a cluster of our own and remove its session folder: the
        reaper does it once its pipe is closed, and the run waits for it, so that nothing of
        the cluster outlives the run."""
        if self._reaper is not None:
            if self._reaper.stdin is not None:
                self._reaper.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._reaper.wait(timeout=REAP_GRACE + 10)
            self._reaper = None
        if self._session is not None:
            shutil.rmtree(self._session, ignore_errors=True)  # made by _session_root, ours
            self._session = None

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
