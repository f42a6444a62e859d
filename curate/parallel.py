"""Worker processes for per-file work, started so that they stay small.

Workers come from a fork server that has imported curate and nothing else, not from a fork of
the main process: a forked child would inherit (and be counted with) everything the main process
holds at that moment, which for a large corpus is most of the memory budget.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

_PRELOAD = ["curate.validate", "curate.assemble"]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def pool(jobs: int) -> ProcessPoolExecutor:
    if sys.platform == "linux":
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_PRELOAD)
    else:
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context)
