"""``curate report``: a build's HTML report, written again (with the drops' texts if given)."""

from __future__ import annotations

import argparse

from curate.cli import options
from curate.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    r = sub.add_parser("report", help="write a build's HTML report: charts, findings, duplicates")
    r.add_argument("dir", nargs="?", default="dist", metavar="DIR", help="default: dist/")
    r.add_argument(
        "--sources",
        nargs="+",
        metavar="PATH",
        help="the build's drops, for the text of merged duplicates (default: the config's "
        "`sources` if there); only files whose SHA-256 the manifest lists are read",
    )
    r.add_argument("--output", metavar="FILE", help="default: DIR/report.html")
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from curate.report.html import ReportError, write_report

    configured = [options.in_project(args, name) for name in options.settings(args).sources]
    sources = args.sources or [p for p in configured if Path(p).exists()]
    try:
        path = write_report(args.dir, sources, out=args.output)
    except ReportError as exc:
        raise UsageError(str(exc)) from None
    print(f"report: {path} (open it in a browser)")
    return 0
