"""The in-process engine: every task runs in this process, one after the other."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Serial:
    """Runs each task in the calling process: for small work, where starting a worker costs
    more than the work, and for ``--jobs 1``."""

    name = "serial"

    def __init__(self, jobs: int = 1) -> None:
        self.workers = 1

    def map(
        self, fn: Callable[[T], R], tasks: Iterable[T], *, ahead: int | None = None
    ) -> Iterator[R]:
        for task in tasks:
            yield fn(task)

    def close(self) -> None:
        pass

    def __enter__(self) -> Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


SERIAL = Serial()
