"""Worker processes for per-file work, shared by the stages of one run.

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
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from types import TracebackType

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the main process ends, however it ends.

    On Linux the kernel sends SIGKILL to the worker when its parent dies (even by SIGKILL, when
    no cleanup code runs); elsewhere a daemon thread polls for the parent and exits.
    """
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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Workers:
    """A process pool of ``jobs`` workers, started on first use and closed with the run."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None

    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            method = "fork" if sys.platform == "linux" else "spawn"
            self._pool = ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=multiprocessing.get_context(method),
                initializer=_die_with_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    def close(self) -> None:
        """Stop the workers; queued work is cancelled, so an interrupted run stops promptly."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@contextmanager
def borrow(workers: Workers | None, jobs: int) -> Iterator[ProcessPoolExecutor]:
    """The shared pool if it has ``jobs`` workers, else a pool of this stage's own."""
    own = workers is None or workers.jobs != jobs
    shared = Workers(jobs) if own or workers is None else workers
    try:
        yield shared.pool()
    finally:
        if own:
            shared.close()
