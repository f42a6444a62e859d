"""Validate text source drops, build a clean, deduplicated, reproducible dataset from them, and
version and publish it on the Hugging Face Hub.

The command line is thin: each command (a module of this package) reads its options and the
settings, calls the library, and prints. Exit codes: 0 success, 1 the data failed (errors, or
warnings with ``--strict``), 2 usage errors (an output folder that is not ours included), 3
anything unexpected (a worker process that died, an environment failure or a bug: one line, the
traceback with ``--debug``), 130 interrupted, 143 terminated (SIGTERM), 141 output cut off by
a closed pipe (``curate codes | head``). :data:`EXIT_CODES` says which exception means which.
Bad input never produces a traceback: it is a finding or a one-line message.

Start-up: this package imports argparse-level things only. Every library a command needs
(numpy, pyarrow, pandas, huggingface_hub, tqdm, even ``importlib.metadata`` for ``--version``)
is imported inside that command, so ``curate --help`` or ``curate config`` never pays for what
``curate build`` uses; ``tests/cli/test_startup.py`` lists what must stay out of ``sys.modules``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from curate.cli import build, codes, diff, options, project, publish, report, validate

if TYPE_CHECKING:
    from collections.abc import Sequence

COMMANDS = (validate, build, diff, publish, codes, project, report)

EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process it ended


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be: the same clean-up on the way out (the workers
    stopped, the staging folder removed, the output as it was), with its own exit code."""


# Set by SIGTERM: a library may catch the Terminated it raised and raise a plain
# KeyboardInterrupt in its place (the Ray build under load exited 130), still a termination.
_SIGTERM_SEEN = threading.Event()


def _on_sigterm(_signum: int, _frame: object) -> None:
    _SIGTERM_SEEN.set()
    raise Terminated


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a command its reader closed

# Which exception means which exit code, the first match winning (a subclass before its base).
# Each is one line on stderr. Anything else is exit 3 with the same one line.
EXIT_CODES: tuple[tuple[str, str, int], ...] = (
    ("curate.errors", "UsageError", 2),
    ("validation.config", "ConfigError", 2),
    ("curate.errors", "ReleaseUsageError", 2),
    ("curate.errors", "HubSettingsError", 2),
    ("curate.errors", "ReleaseError", 1),
    ("curate.errors", "HubError", 1),
    ("curate.errors", "WorkerDied", EXIT_INTERNAL),
)


class _VersionAction(argparse.Action):
    """``--version``, which reads the version (``importlib.metadata``) only when it is asked."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from curate import __version__

        sys.stdout.write(f"curate {__version__}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = options.Parser(prog="curate", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--version", action=_VersionAction, help="show the toolkit's version and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=options.Parser)
    for command in COMMANDS:
        command.register(sub)
    for p in [parser, *sub.choices.values()]:
        options.add_console_options(p)
    # --debug: a global flag, accepted before or after the command.
    debug_help = "on an unexpected error, show the Python traceback instead of one line"
    parser.add_argument("--debug", action="store_true", help=debug_help)
    for command in sub.choices.values():
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help
        )
    return parser


def _printable_streams() -> None:
    """A file name that is not UTF-8 is printed with escapes, never a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def exit_code(exc: BaseException) -> int | None:
    """The exit code :data:`EXIT_CODES` gives ``exc``, or None.

    A class is looked up only if its module has been imported: an exception of a class whose
    module was never imported cannot have been raised, so ``main`` names them all without
    importing any on every start-up.
    """
    for module, name, code in EXIT_CODES:
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(exc, getattr(loaded, name)):
            return code
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; whatever happens, at most one line on stderr unless ``--debug``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _printable_streams()
    main_thread = threading.current_thread() is threading.main_thread()
    _SIGTERM_SEEN.clear()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    try:
        return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # inside the try: a closed pipe shows up here, not at exit
        return code
    except KeyboardInterrupt as exc:
        if isinstance(exc, Terminated) or _SIGTERM_SEEN.is_set():
            print("curate: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        print("curate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head`): nothing left to say to it, and Python must not
        # complain when it flushes stdout at exit.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        known = exit_code(exc)
        if known is not None:
            print(f"curate: error: {exc}", file=sys.stderr)
            return known
        if args.debug:
            raise
        print(
            f"curate: error: {_one_line(exc)} (re-run with --debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename is not None else ""
        return f"{exc.strerror}{where}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


__all__ = ["EXIT_CODES", "build_parser", "exit_code", "main"]
