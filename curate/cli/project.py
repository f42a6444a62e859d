"""A project of one's own: ``curate init`` and ``curate config``."""

from __future__ import annotations

import argparse
import json
import sys

from curate.cli import options
from curate.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    i = sub.add_parser("init", help="start a new dataset project in DIR")
    i.add_argument("dir", nargs="?", default=".", metavar="DIR", help="default: this folder")
    i.add_argument("--name", help="the dataset's name (default: the folder's name)")
    i.add_argument(
        "--format",
        default="text",
        choices=("text", "jsonl", "csv", "tsv", "parquet", "arrow"),
        help="the sources' format (default: text drops); a format with fields gets a field "
        "mapping in pyproject.toml",
    )
    i.add_argument(
        "--text-field", metavar="FIELD", help="the field holding the text (default: text)"
    )
    i.add_argument(
        "--sources",
        default="sources",
        metavar="DIR",
        help="the folder of the sources, in the project (default: sources); the settings "
        "name it for every command, and the validate workflow triggers on it",
    )
    i.add_argument(
        "--toolkit",
        metavar="SPEC",
        help="what the workflows install curate from: curate-datasets==X.Y.Z (default: this "
        "release), a git+https URL pinned to a commit, or an https wheel URL with #sha256=",
    )
    i.set_defaults(func=run_init)

    c = sub.add_parser("config", help="print the effective settings and where each came from")
    c.add_argument("--get", metavar="KEY", help="print only KEY's value (for scripts)")
    options.add_config(c)
    c.set_defaults(func=run_config)


def run_init(args: argparse.Namespace) -> int:
    from curate.project.scaffold import InitRefused, init_project, source_folder, sources_hint

    if args.text_field is not None and args.format == "text":
        raise UsageError("--text-field is for a format with fields (--format jsonl, csv, ...)")
    try:
        made = init_project(
            args.dir, name=args.name, format_name=args.format, text_field=args.text_field,
            toolkit=args.toolkit, sources=args.sources,
        )  # fmt: skip
    except InitRefused as exc:
        print(f"curate: init refused: {exc}", file=sys.stderr)
        return 1
    for path in made.written:
        print(f"  created {path}")
    for note in made.notes:
        print(f"  note: {note}")
    where = "" if args.dir == "." else f"cd {args.dir} && "
    folder = source_folder(args.sources)
    print(f"next: {where}copy your {sources_hint(args.format)} into {folder}/, then `curate build`")
    return 0


def run_config(args: argparse.Namespace) -> int:
    loaded = options.loaded(args)
    settings = loaded.settings.as_dict(run=True)
    if args.get is not None:
        key = args.get.replace("-", "_")
        if key not in settings:
            raise UsageError(f"unknown setting {args.get!r}")
        value = settings[key]
        print(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        return 0
    print(f"# config file: {loaded.path if loaded.path is not None else 'none (defaults)'}")
    width = max(map(len, settings))
    for key, value in settings.items():
        shown = "(unset)" if value is None else json.dumps(value, ensure_ascii=False)
        print(f"{key:<{width}} = {shown}  # {loaded.origin(key)}")
    return 0
