"""The local process pool: worker processes on this machine, shared by the stages of one run.

A run starts its workers once, at the first stage that needs them (validation), while the main
process is still small, and every later stage reuses them. A worker forked later would inherit,
and be counted with, everything the main process holds by then: for a large corpus, most of the
memory budget. Forking (rather than a fork server or spawning) keeps the library usable from a
script without an ``if __name__ == "__main__"`` guard.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from curate.errors import WorkerDied

T = TypeVar("T")
R = TypeVar("R")
PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the main process ends, however it ends.

    On Linux the kernel sends SIGKILL to the worker when its parent dies (even by SIGKILL, when
    no cleanup code runs); elsewhere a daemon thread polls for the parent and exits.

    Ctrl-C reaches every process of the terminal's group, but stopping the run is the main
    process's work (it cancels what is queued and closes the pool): a worker ignores it. A
    worker interrupted in the pool's queue printed a traceback, and one interrupted while it
    held the queue's lock left the other workers waiting for it, and the build hung at exit.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform == "linux":
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            _watchdog(parent)
    else:
        _watchdog(parent)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _watchdog(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


class LocalPool:
    """A pool of ``jobs`` worker processes, started on first use and closed with the run."""

    name = "local"

    def __init__(self, jobs: int) -> None:
        self.workers = max(1, jobs)
        self._pool: ProcessPoolExecutor | None = None

    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            method = "fork" if sys.platform == "linux" else "spawn"
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context(method),
                initializer=_die_with_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    def map(
        self, fn: Callable[[T], R], tasks: Iterable[T], *, ahead: int | None = None
    ) -> Iterator[R]:
        pool = self.pool()
        window: deque[Future[R]] = deque()
        try:
            for task in tasks:
                window.append(pool.submit(fn, task))
                if ahead is not None and len(window) >= ahead:
                    # Taken off the queue as it is read: a done future keeps its result.
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
        except BrokenProcessPool:
            raise WorkerDied(
                "a worker process died (killed, e.g. by the out-of-memory killer); "
                "nothing was written; retry with fewer --jobs"
            ) from None
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the run stops now
            self._stop_workers()
            raise

    def _stop_workers(self) -> None:
        """End the workers mid-task: closing the pool waited for the running tasks (24 s on
        a large file, minutes on a larger one) before Ctrl-C took effect, and a second Ctrl-C
        then left the staging folder behind. What they were writing is the run's own, in the
        staging folder that the run removes."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # The executor keeps its processes here; it has no public way to end them mid-task.
        for process in list(getattr(pool, "_processes", {}).values()):
            process.kill()
        pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
