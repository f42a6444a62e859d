"""What a person sees on stderr while curate works: plain lines, and a progress bar on a
terminal."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from curate.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


class Console:
    """What a person sees on stderr while curate works.

    Messages are plain lines, readable in a CI log. On a terminal (only there: a bar in a log
    is noise) the file checks show a progress bar with files, records, rate and ETA. ``quiet``
    keeps stderr for errors; ``verbose`` adds a line per file and the stage timings.
    """

    def __init__(
        self, quiet: bool = False, verbose: bool = False, stream: TextIO | None = None
    ) -> None:
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None  # a tqdm bar while files are being checked

    def say(self, message: str) -> None:
        if self.quiet:
            return
        line = f"curate: {message}"
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def warn(self, message: str) -> None:
        """A warning about the run itself (the cache, say): a line, unless ``quiet``; a notice
        that is no fault (``only_verbose``: the cache renewed after a settings change) only
        with ``-v``."""
        if getattr(message, "only_verbose", False):
            if self.verbose:
                self.say(f"note: {message}")
            return
        self.say(f"warning: {message}")

    def files(
        self, paths: Sequence[str], exclude: tuple[str, ...] = ()
    ) -> Callable[[str, int], None] | None:
        """A per-file callback for the checks of ``paths``: bar and/or lines, or None."""
        from curate.ingest.discover import collect_paths

        if self.quiet or not (self.tty or self.verbose):
            return None
        try:
            found = collect_paths(paths, exclude)
        except UsageError:
            return None  # the run itself reports the missing path
        sizes = {p.as_posix(): (p.stat().st_size if p.is_file() else 0) for p in found}
        if self.tty and found:
            from tqdm import tqdm

            try:  # a terminal that reports no size (a bare pty) gets 80x24, not nothing
                size = os.get_terminal_size(self.stream.fileno())
            except (AttributeError, OSError, ValueError):
                size = os.terminal_size((0, 0))
            known = size.columns > 0 and size.lines > 0
            self._bar = tqdm(
                total=sum(sizes.values()),
                desc="curate: checking",
                # the total is bytes (files differ in size), the figures are files and records
                bar_format="{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]",
                file=self.stream,
                leave=False,
                dynamic_ncols=known,
                ncols=None if known else 80,
                nrows=None if known else 24,
                mininterval=0.2,
            )
        state = {"files": 0, "records": 0}
        from validation.findings import count

        def on_file(path: str, records: int) -> None:
            state["files"] += 1
            state["records"] += records
            if self.verbose:
                self.say(f"checked {path} ({count(records, 'record')})")
            bar = self._bar
            if bar is not None:
                elapsed = max(bar.format_dict["elapsed"], 1e-9)
                bar.set_postfix_str(
                    f"{state['files']}/{len(found)} files, {state['records']:,} records, "
                    f"{state['records'] / elapsed:,.0f} records/s",
                    refresh=False,
                )
                bar.update(sizes.get(Path(path).as_posix(), 0))
                if state["files"] >= len(found):
                    bar.refresh()  # the final figures, even within mininterval of the last
                    self.close()

        return on_file

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def timings(self, timings: dict[str, float]) -> None:
        if self.verbose:
            for stage, seconds in timings.items():
                self.say(f"  {stage}: {seconds:.2f} s")


def console(args: argparse.Namespace) -> Console:
    return Console(quiet=getattr(args, "quiet", False), verbose=getattr(args, "verbose", False))
