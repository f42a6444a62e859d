"""``curate diff``: compare two releases record by record."""

from __future__ import annotations

import argparse
import sys

from curate.cli.console import console


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    d = sub.add_parser("diff", help="compare two releases record by record")
    d.add_argument("old", metavar="A", help="build folder, Parquet file or hub:ORG/NAME[@REV]")
    d.add_argument("new", metavar="B", help="build folder, Parquet file or hub:ORG/NAME[@REV]")
    d.add_argument("--format", choices=("text", "json"), default="text")
    d.add_argument(
        "--exit-code", action="store_true", help="exit 1 if the releases differ (like git diff)"
    )
    d.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from curate import release

    say = console(args).say
    old = release.load_release(args.old, say=say)
    new = release.load_release(args.new, say=say)
    diff = release.diff_releases(old, new)
    render = release.render_json if args.format == "json" else release.render_text
    sys.stdout.write(render(diff))
    return 1 if args.exit_code and diff.level is not None else 0
