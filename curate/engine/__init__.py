"""Engines: where the tasks of a run execute.

A stage hands an engine a function and a sequence of tasks; the engine runs them (in this
process, in worker processes, or elsewhere) and gives back the results in task order, so the
output is the same bytes whatever runs them. A task is stateless: everything it reads and
writes (a source file, a spool file, the cache) is named by the task itself, never by module
state or paths only the main process knows. Functions and tasks must be picklable. A task may say
how much memory it holds at its peak (a ``memory`` attribute, in bytes), which an engine that
places tasks by resources (Ray) reserves for it.

Engines are registered by name and imported on first use: a run that never goes parallel
imports no ``multiprocessing``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Engine(Protocol):
    name: str
    workers: int  # tasks that can run at once

    def map(
        self, fn: Callable[[T], R], tasks: Iterable[T], *, ahead: int | None = None
    ) -> Iterator[R]:
        """``fn(task)`` for each task, in task order. At most ``ahead`` tasks are submitted
        before the first result is read (None: all of them), so that what waits in the queue
        stays bounded."""
        ...

    def close(self) -> None:
        """Stop the workers; queued tasks are cancelled, so an interrupted run stops promptly."""
        ...


ENGINES = {
    "serial": "curate.engine.serial:Serial",
    "local": "curate.engine.local:LocalPool",
    "ray": "curate.engine.ray:RayEngine",  # the `ray` extra
}
DEFAULT = "local"


def default_jobs() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def make(name: str = DEFAULT, jobs: int | None = None) -> Engine:
    """The engine registered as ``name``, with ``jobs`` workers (default: one per CPU)."""
    module, _, cls = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), cls)(default_jobs() if jobs is None else jobs)
