"""The ``curate`` command line. It is thin: it reads options and config, calls the library, prints.

Exit codes: 0 success, 1 the data failed (errors, or warnings with ``--strict``), 2 usage errors.
Bad input never produces a traceback: it is a finding or a one-line message.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from curate import __version__
from curate.parse import UsageError
from validation.config import Config, ConfigError, load_config

DEFAULT_SOURCES = "sources"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"curate: error: {message}\n")


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file with a [tool.curate] table (default: ./pyproject.toml if it has one)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="curate", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"curate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    v = sub.add_parser("validate", help="check source drops and report every fault")
    v.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: sources/)")
    v.add_argument("--format", choices=("text", "json", "github"), default="text")
    v.add_argument("--strict", action="store_true", help="warnings fail the run too")
    v.add_argument("--output", metavar="FILE", help="also write the JSON report to FILE")
    _add_config(v)
    v.set_defaults(func=cmd_validate)

    b = sub.add_parser("build", help="validate, clean, deduplicate and export the dataset")
    b.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: sources/)")
    b.add_argument("--out", default="dist", metavar="DIR", help="output folder (default: dist/)")
    b.add_argument("--version", dest="set_version", metavar="X.Y.Z", help="release version")
    b.add_argument("--template", metavar="FILE", help="dataset card template (default: config)")
    _add_config(b)
    b.set_defaults(func=cmd_build)

    c = sub.add_parser("codes", help="list every finding code with its severity")
    _add_config(c)
    c.set_defaults(func=cmd_codes)
    return parser


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config)


def cmd_validate(args: argparse.Namespace) -> int:
    from curate.validate import validate_paths
    from validation.render import RENDERERS, render_json

    config = _config(args)
    _, report = validate_paths(args.paths or [DEFAULT_SOURCES], config)
    sys.stdout.write(RENDERERS[args.format](report))
    if args.output:
        from curate.io import atomic_write_text

        atomic_write_text(args.output, render_json(report))
    return 1 if report.failed(strict=args.strict) else 0


def _progress() -> Callable[[str], None]:
    """Plain lines on stderr: readable in a CI log and on a terminal alike."""

    def say(message: str) -> None:
        print(f"curate: {message}", file=sys.stderr, flush=True)

    return say


def cmd_build(args: argparse.Namespace) -> int:
    from curate.build import BuildRefused, build
    from validation.render import render_text

    config = _config(args)
    try:
        result = build(
            args.paths or [DEFAULT_SOURCES],
            args.out,
            config,
            version=args.set_version,
            progress=_progress(),
            template=args.template,
        )
    except BuildRefused as exc:
        sys.stdout.write(render_text(exc.report))
        print(f"curate: build refused: {exc}; {args.out} left as it was", file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    print(
        f"built {result.out} v{result.version}: {result.records_in} records in, "
        f"{result.exact_merged} exact and {result.near_merged} near duplicates merged, "
        f"{result.records_out} records out"
    )
    for name in [*sorted(result.manifest["files"]), "manifest.json"]:
        print(f"  {result.out / name}")
    return 0


def cmd_codes(args: argparse.Namespace) -> int:
    import validation.checks  # noqa: F401
    from validation.registry import REGISTRY, severity_of

    config = _config(args)
    for spec in REGISTRY.values():
        severity = severity_of(spec.code, config)
        print(f"{spec.code:<16} {severity:<7} {spec.scope:<7} {spec.description}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (UsageError, ConfigError) as exc:
        print(f"curate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("curate: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
