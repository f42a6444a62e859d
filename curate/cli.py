"""The ``curate`` command line. It is thin: it reads options and config, calls the library, prints.

Exit codes: 0 success, 1 the data failed (errors, or warnings with ``--strict``), 2 usage errors
(an output folder that is not ours included), 3 a worker process died.
Bad input never produces a traceback: it is a finding or a one-line message.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from curate import __version__, release
from curate.hub import HubError
from curate.parse import UsageError
from validation.config import Config, ConfigError, load_config

DEFAULT_SOURCES = "sources"
DEFAULT_CACHE_DIR = ".curate-cache"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"curate: error: {message}\n")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes for per-file checks (default: one per core)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help=f"do not read or write the validation cache ({DEFAULT_CACHE_DIR}/ by default, "
        "or $CURATE_CACHE_DIR)",
    )


# --- filesystem and process safety: inputs, output folder, worker count -----------------------
def _add_safety_options(p: argparse.ArgumentParser, *, build: bool) -> None:
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out drops whose path (relative to the folder given) or name matches GLOB; "
        "repeatable, added to the config's exclude list",
    )
    p.add_argument(
        "--force-jobs",
        action="store_true",
        help="allow --jobs above the number of CPUs (it is capped otherwise)",
    )
    if build:
        p.add_argument(
            "--force",
            action="store_true",
            help="if --out holds files that are not a previous build, move them aside to "
            "DIR.replaced-N (kept) instead of refusing; never allowed for the current folder, "
            "a parent of it or a source folder",
        )


def _jobs(args: argparse.Namespace) -> int | None:
    """--jobs, capped at the CPUs this process may use unless --force-jobs."""
    from curate.parallel import default_jobs

    if args.jobs is None:
        return None
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    cpus = default_jobs()
    if args.jobs > cpus and not args.force_jobs:
        print(
            f"curate: note: --jobs {args.jobs} capped at {cpus}, the CPUs available "
            "(--force-jobs to override)",
            file=sys.stderr,
        )
        return cpus
    return args.jobs


def _safe_config(args: argparse.Namespace) -> Config:
    from dataclasses import replace

    config = _config(args)
    if args.exclude:
        config = replace(config, exclude=(*config.exclude, *args.exclude))
    return config


def _printable_streams() -> None:
    """A file name that is not UTF-8 is printed with escapes, never a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def cache_dir(args: argparse.Namespace) -> str | None:
    if args.no_cache:
        return None
    return os.environ.get("CURATE_CACHE_DIR") or DEFAULT_CACHE_DIR


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
    _add_run_options(v)
    _add_safety_options(v, build=False)
    _add_config(v)
    v.set_defaults(func=cmd_validate)

    b = sub.add_parser("build", help="validate, clean, deduplicate and export the dataset")
    b.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: sources/)")
    b.add_argument("--out", default="dist", metavar="DIR", help="output folder (default: dist/)")
    b.add_argument("--version", dest="set_version", metavar="X.Y.Z", help="release version")
    b.add_argument("--template", metavar="FILE", help="dataset card template (default: config)")
    b.add_argument(
        "--previous",
        metavar="REF",
        help="previous release to compare with, bump the version from and write CHANGELOG.md "
        "against: a build folder, or hub:ORG/NAME[@REVISION] (default revision: newest vX.Y.Z tag)",
    )
    b.add_argument(
        "--allow-first-release",
        action="store_true",
        help="if --previous hub:ORG/NAME has no release yet, build the first one, not fail",
    )
    _add_run_options(b)
    _add_safety_options(b, build=True)
    _add_config(b)
    b.set_defaults(func=cmd_build)

    d = sub.add_parser("diff", help="compare two releases record by record")
    d.add_argument("old", metavar="A", help="build folder, Parquet file or hub:ORG/NAME[@REV]")
    d.add_argument("new", metavar="B", help="build folder, Parquet file or hub:ORG/NAME[@REV]")
    d.add_argument("--format", choices=("text", "json"), default="text")
    d.add_argument(
        "--exit-code", action="store_true", help="exit 1 if the releases differ (like git diff)"
    )
    d.set_defaults(func=cmd_diff)

    pub = sub.add_parser("publish", help="publish a build folder to the Hub as a tagged release")
    pub.add_argument("dir", nargs="?", default="dist", metavar="DIR", help="default: dist/")
    pub.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="dataset repository")
    pub.add_argument(
        "--dry-run", action="store_true", help="print what would happen and change nothing"
    )
    pub.add_argument(
        "--private", action="store_true", help="create the repository private if it is missing"
    )
    pub.set_defaults(func=cmd_publish)

    c = sub.add_parser("codes", help="list every finding code with its severity")
    _add_config(c)
    c.set_defaults(func=cmd_codes)
    return parser


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config)


def cmd_validate(args: argparse.Namespace) -> int:
    from curate.validate import printable, validate_paths
    from validation.render import RENDERERS, render_json

    config = _safe_config(args)
    if args.output:  # before the work, not after it
        output = Path(args.output).absolute()
        if output.is_dir():
            raise UsageError(f"--output {args.output} is a folder; give a file name")
        blocker = next((p for p in output.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise UsageError(f"--output {args.output} is under the file {blocker}")
    report = printable(
        validate_paths(
            args.paths or [DEFAULT_SOURCES], config, jobs=_jobs(args), cache_dir=cache_dir(args)
        ).report
    )
    sys.stdout.write(RENDERERS[args.format](report))
    if args.output:
        from curate.io import atomic_write_text

        try:
            atomic_write_text(args.output, render_json(report))
        except OSError as exc:
            why = exc.strerror or exc
            raise UsageError(f"--output {args.output}: cannot write: {why}") from None
    return 1 if report.failed(strict=args.strict) else 0


def _progress() -> Callable[[str], None]:
    """Plain lines on stderr: readable in a CI log and on a terminal alike."""

    def say(message: str) -> None:
        print(f"curate: {message}", file=sys.stderr, flush=True)

    return say


def cmd_build(args: argparse.Namespace) -> int:
    from curate.build import BuildRefused, build
    from curate.validate import printable
    from validation.render import render_text

    config = _safe_config(args)
    jobs = _jobs(args)
    say = _progress()
    previous = None
    if args.previous:
        try:
            previous = release.load_release(args.previous, say=say)
        except release.NoPreviousRelease as exc:
            if not args.allow_first_release:
                print(
                    f"curate: error: {exc} (--allow-first-release builds the first one)",
                    file=sys.stderr,
                )
                return 1
            say(f"{exc}: building the first release")
    try:
        result = build(
            args.paths or [DEFAULT_SOURCES],
            args.out,
            config,
            version=args.set_version,
            progress=say,
            template=args.template,
            previous=previous,
            jobs=jobs,
            cache_dir=cache_dir(args),
            force=args.force,
        )
    except BuildRefused as exc:
        sys.stdout.write(render_text(printable(exc.report)))
        print(f"curate: build refused: {exc}; {args.out} left as it was", file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    print(
        f"built {result.out} v{result.version}: {result.records_in} records in, "
        f"{result.exact_merged} exact and {result.near_merged} near duplicates merged, "
        f"{result.records_out} records out"
    )
    if result.diff is not None:
        print(
            f"  since v{result.previous_version}: {release.counts_line(result.diff)}; "
            f"schema {'changed' if result.diff.schema else 'unchanged'}; "
            f"bump {result.diff.level or 'none'}"
        )
    for name in [*sorted(result.manifest["files"]), "manifest.json"]:
        print(f"  {result.out / name}")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    say = _progress()
    old = release.load_release(args.old, say=say)
    new = release.load_release(args.new, say=say)
    diff = release.diff_releases(old, new)
    render = release.render_json if args.format == "json" else release.render_text
    sys.stdout.write(render(diff))
    return 1 if args.exit_code and diff.level is not None else 0


def cmd_publish(args: argparse.Namespace) -> int:
    from curate.publish import PublishError, publish

    say = _progress()
    try:
        result = publish(
            args.dir, args.repo_id, private=args.private, dry_run=args.dry_run, say=say
        )
    except PublishError as exc:
        print(f"curate: publish refused: {exc}", file=sys.stderr)
        return 1
    if result.action == "dry-run":
        print(f"dry run: nothing was changed on the Hub ({args.repo_id} {result.tag})")
    elif result.action == "unchanged":
        print(f"{args.repo_id} {result.tag} is already published with this content: no-op")
    else:
        print(f"published {args.repo_id} {result.tag} (commit {result.commit})")
        print(f'  load_dataset("{args.repo_id}", revision="{result.tag}")')
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
    _printable_streams()
    try:
        return int(args.func(args))
    except (UsageError, ConfigError, release.ReleaseUsageError) as exc:
        print(f"curate: error: {exc}", file=sys.stderr)
        return 2
    except (release.ReleaseError, HubError) as exc:
        print(f"curate: error: {exc}", file=sys.stderr)
        return 1
    except BrokenProcessPool:
        print(
            "curate: error: a worker process died (killed, e.g. by the out-of-memory killer); "
            "nothing was written; retry with fewer --jobs",
            file=sys.stderr,
        )
        return 3
    except KeyboardInterrupt:
        print("curate: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
