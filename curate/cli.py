"""The ``curate`` command line. It is thin: it reads options and config, calls the library, prints.

Exit codes: 0 success, 1 the data failed (errors, or warnings with ``--strict``), 2 usage errors
(an output folder that is not ours included), 3 anything unexpected (a worker process that
died, an environment failure or a bug: one line, the traceback with ``--debug``), 130
interrupted, 141 output cut off by a closed pipe (``curate codes | head``).
Bad input never produces a traceback: it is a finding or a one-line message.

Start-up: this module imports argparse-level things only. Every library a command needs (numpy,
pyarrow, pandas, huggingface_hub, tqdm, even ``importlib.metadata`` for ``--version``) is
imported inside that command, so ``curate --help`` or ``curate config`` never pays for what
``curate build`` uses; ``tests/test_startup.py`` lists what must stay out of ``sys.modules``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from curate.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from curate.pipeline.build import BuildResult
    from validation.config import Config, LoadedConfig
    from validation.findings import Report

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
    if args.jobs is None:
        return None
    from curate.engine.local import default_jobs  # multiprocessing: only when --jobs is given

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
        help="TOML file with a [tool.curate] table (default: the nearest curate.toml, or "
        "pyproject.toml with a [tool.curate] table, up from the working folder)",
    )


# --- console: -q/-v, progress on stderr, the closing lines (area of issue 11) ----------------
def _add_console_options(p: argparse.ArgumentParser) -> None:
    """-q/-v, accepted before the command (``curate -q build``) and after it alike."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="no progress on stderr: only errors, and the result on stdout",
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="also a line per file checked, and the time each stage took",
    )


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

    def files(self, paths: Sequence[str]) -> Callable[[str, int], None] | None:
        """A per-file callback for the checks of ``paths``: bar and/or lines, or None."""
        from curate.ingest.formats.text import collect_paths

        if self.quiet or not (self.tty or self.verbose):
            return None
        try:
            found = collect_paths(paths)
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

        def on_file(path: str, records: int) -> None:
            state["files"] += 1
            state["records"] += records
            if self.verbose:
                self.say(f"checked {path} ({records} records)")
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


def _run_url() -> str | None:
    """The page of this GitHub Actions run, where its artifacts (the reports) are listed."""
    parts = [os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    if not all(parts):
        return None
    return f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}#artifacts"


def _why_failed(report: Report) -> str:
    if report.errors:
        return f"{len(report.errors)} errors"
    return f"no errors, but {len(report.warnings)} warnings and --strict fails on warnings"


def cmd_report(args: argparse.Namespace) -> int:
    from curate.report.html import ReportError, write_report

    sources = args.sources or ([DEFAULT_SOURCES] if Path(DEFAULT_SOURCES).is_dir() else [])
    try:
        path = write_report(args.dir, sources, out=args.output)
    except ReportError as exc:
        raise UsageError(str(exc)) from None
    print(f"report: {path} (open it in a browser)")
    return 0


def _closing_lines(result: BuildResult) -> None:
    """The build's last words: what validation found, and where to look at it."""
    report = result.report
    warnings = len(report.warnings)
    if warnings:
        by_code = report.summary()["by_code"]
        codes = ", ".join(
            f"{info['count']} {code}"  # type: ignore[index]
            for code, info in by_code.items()  # type: ignore[union-attr]
            if info["severity"] == "warning"  # type: ignore[index]
        )
        where = result.out / "validation-report.json"
        print(f"{warnings} warnings ({codes}): every one is in {where}")
    else:
        print("no warnings")
    html = result.out / "report.html"
    if html.is_file():
        print(f"report: {html} (open it in a browser)")


# --- end of console block -----------------------------------------------------------------------


class _VersionAction(argparse.Action):
    """``--version``, which reads the version (``importlib.metadata``) only when it is asked."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from curate import __version__

        sys.stdout.write(f"curate {__version__}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="curate", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--version", action=_VersionAction, help="show the toolkit's version and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    v = sub.add_parser("validate", help="check source drops and report every fault")
    v.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: sources/)")
    v.add_argument(
        "--format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help="github: workflow commands, and a Markdown summary into $GITHUB_STEP_SUMMARY when "
        "it is set; sarif: SARIF 2.1.0 for code scanning",
    )
    v.add_argument("--strict", action="store_true", help="warnings fail the run too")
    v.add_argument("--output", metavar="FILE", help="also write the JSON report to FILE")
    _add_baseline_options(v)
    _add_run_options(v)
    _add_safety_options(v, build=False)
    _add_config(v)
    v.set_defaults(func=cmd_validate)

    b = sub.add_parser("build", help="validate, clean, deduplicate and export the dataset")
    b.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: sources/)")
    b.add_argument(
        "--out", metavar="DIR", help="output folder (default: dist/ in the project folder)"
    )
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
    pub.add_argument(
        "--repo-id",
        metavar="ORG/NAME",
        help="dataset repository (default: the repo_id the build recorded in DIR/manifest.json; "
        "another one is refused)",
    )
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
    _add_project_commands(sub)

    r = sub.add_parser("report", help="write a build's HTML report: charts, findings, duplicates")
    r.add_argument("dir", nargs="?", default="dist", metavar="DIR", help="default: dist/")
    r.add_argument(
        "--sources",
        nargs="+",
        metavar="PATH",
        help="the build's drops, for the text of merged duplicates (default: sources/ if there); "
        "only files whose SHA-256 the manifest lists are read",
    )
    r.add_argument("--output", metavar="FILE", help="default: DIR/report.html")
    r.set_defaults(func=cmd_report)

    for p in [parser, *sub.choices.values()]:  # console options (issue 11)
        _add_console_options(p)

    # --debug: a global flag, accepted before or after the command.
    debug_help = "on an unexpected error, show the Python traceback instead of one line"
    parser.add_argument("--debug", action="store_true", help=debug_help)
    for command in sub.choices.values():
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help
        )
    return parser


def _loaded(args: argparse.Namespace) -> LoadedConfig:
    loaded = getattr(args, "_loaded", None)
    if loaded is None:
        from validation.config import load_config_file

        loaded = args._loaded = load_config_file(getattr(args, "config", None))
    return loaded


def _config(args: argparse.Namespace) -> Config:
    return _loaded(args).config


def _in_project(args: argparse.Namespace, name: str) -> str:
    """A default path (``sources``, ``dist``) in the project folder, the config file's one,
    shown relative to the working folder when it is below it or near it."""
    root = _loaded(args).root
    if root == Path("."):
        return name
    return os.path.relpath(root / name)


def cmd_validate(args: argparse.Namespace) -> int:
    from curate.scan.run import printable, validate_paths
    from validation.render import RENDERERS, render_github_summary, render_json, render_sarif

    config = _safe_config(args)
    if args.output:  # before the work, not after it
        output = Path(args.output).absolute()
        if output.is_dir():
            raise UsageError(f"--output {args.output} is a folder; give the report's file name")
        blocker = next((p for p in output.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise UsageError(f"--output {args.output} is under the file {blocker}")
    out = console(args)
    paths = args.paths or [_in_project(args, DEFAULT_SOURCES)]
    try:
        report = validate_paths(
            paths, config, jobs=_jobs(args), cache_dir=cache_dir(args), progress=out.files(paths)
        ).report
    finally:
        out.close()
    out.timings(report.timings)
    report = printable(report)
    if args.write_baseline:
        from curate.project.baseline import write_baseline

        n = write_baseline(args.write_baseline, report)
        print(f"wrote {args.write_baseline}: {n} findings accepted as the baseline")
        return 0
    if args.baseline:
        from curate.project.baseline import apply_baseline

        report = apply_baseline(report, args.baseline)
    if args.format == "sarif":
        from curate import __version__

        sys.stdout.write(render_sarif(report, tool_version=__version__))
    else:
        sys.stdout.write(RENDERERS[args.format](report))
    if args.format == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        # The runner creates this file; steps append to it.
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(render_github_summary(report, report_url=_run_url()))
    if args.output:
        from curate.io import atomic_write_text

        # A full disk or a read-only folder is an environment failure: main() says it in one
        # line naming the file (exit 3); the path itself was checked before the work.
        atomic_write_text(args.output, render_json(report))
    if report.failed(strict=args.strict):
        print(f"curate: failed: {_why_failed(report)}", file=sys.stderr)
        return 1
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from curate.dataset.card import template_path
    from curate.pipeline.build import BuildRefused, build
    from curate.release import diff as release
    from curate.scan.run import printable
    from validation.render import render_text

    config = _safe_config(args)
    jobs = _jobs(args)
    out_dir = args.out if args.out is not None else _in_project(args, "dist")
    try:
        template = template_path(config, args.template, _loaded(args).root)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    out = console(args)
    say = out.say
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
    paths = args.paths or [_in_project(args, DEFAULT_SOURCES)]
    try:
        result = build(
            paths,
            out_dir,
            config,
            version=args.set_version,
            progress=say,
            template=template,
            previous=previous,
            jobs=jobs,
            cache_dir=cache_dir(args),
            on_file=out.files(paths),
            force=args.force,
        )
    except BuildRefused as exc:
        out.close()
        sys.stdout.write(render_text(printable(exc.report)))
        print(f"curate: build refused: {exc}; {out_dir} left as it was", file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    finally:
        out.close()
    out.timings(result.timings)
    print(
        f"built {result.out} v{result.version}: {result.records_in} records in, "
        f"{result.exact_merged} exact and {result.near_merged} near duplicates merged, "
        f"{result.records_out} records out"
    )
    dropped = result.manifest.get("rows_dropped", 0)
    if dropped:
        print(f"  {dropped} records dropped by row policy (listed in validation-report.json)")
    if result.diff is not None:
        print(
            f"  since v{result.previous_version}: {release.counts_line(result.diff)}; "
            f"schema {'changed' if result.diff.schema else 'unchanged'}; "
            f"bump {result.diff.level or 'none'}"
        )
    for name in [*sorted(result.manifest["files"]), "manifest.json"]:
        print(f"  {result.out / name}")
    _closing_lines(result)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from curate.release import diff as release

    say = console(args).say
    old = release.load_release(args.old, say=say)
    new = release.load_release(args.new, say=say)
    diff = release.diff_releases(old, new)
    render = release.render_json if args.format == "json" else release.render_text
    sys.stdout.write(render(diff))
    return 1 if args.exit_code and diff.level is not None else 0


def cmd_publish(args: argparse.Namespace) -> int:
    from curate.release.publish import PublishError, publish

    say = console(args).say
    repo_id = args.repo_id or _built_repo_id(args.dir)
    try:
        result = publish(args.dir, repo_id, private=args.private, dry_run=args.dry_run, say=say)
    except PublishError as exc:
        print(f"curate: publish refused: {exc}", file=sys.stderr)
        return 1
    if result.action == "dry-run":
        print(f"dry run: nothing was changed on the Hub ({repo_id} {result.tag})")
    elif result.action == "unchanged":
        print(f"{repo_id} {result.tag} is already published with this content: no-op")
    else:
        print(f"published {repo_id} {result.tag} (commit {result.commit})")
        print(f'  load_dataset("{repo_id}", revision="{result.tag}")')
    return 0


def cmd_codes(args: argparse.Namespace) -> int:
    import validation.checks  # noqa: F401
    from validation.registry import REGISTRY, severity_of

    config = _config(args)
    for spec in REGISTRY.values():
        severity = severity_of(spec.code, config)
        print(f"{spec.code:<16} {severity:<7} {spec.scope:<7} {spec.description}")
    return 0


# --- a project of one's own: curate init, curate config, baselines, the repo id of a build ---


def _add_baseline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="leave out the findings FILE accepted (made by --write-baseline): only new ones "
        "are reported and fail the run",
    )
    p.add_argument(
        "--write-baseline",
        nargs="?",
        const="curate-baseline.json",
        metavar="FILE",
        help="accept every current finding: write them to FILE (default: "
        "curate-baseline.json) and exit 0",
    )


def _add_project_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    i = sub.add_parser("init", help="start a new dataset project in DIR")
    i.add_argument("dir", nargs="?", default=".", metavar="DIR", help="default: this folder")
    i.add_argument("--name", help="the dataset's name (default: the folder's name)")
    i.set_defaults(func=cmd_init)

    c = sub.add_parser("config", help="print the effective settings and where each came from")
    c.add_argument("--get", metavar="KEY", help="print only KEY's value (for scripts)")
    _add_config(c)
    c.set_defaults(func=cmd_config)


def cmd_init(args: argparse.Namespace) -> int:
    from curate.project.scaffold import InitRefused, init_project

    try:
        made = init_project(args.dir, name=args.name)
    except InitRefused as exc:
        print(f"curate: init refused: {exc}", file=sys.stderr)
        return 1
    for path in made.written:
        print(f"  created {path}")
    where = "" if args.dir == "." else f"cd {args.dir} && "
    print(f"next: {where}copy your drops (*.txt) into sources/, then `curate build`")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    import json

    loaded = _loaded(args)
    settings = loaded.config.as_dict()
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


def _built_repo_id(folder: str) -> str:
    """The repository a build is for: the one source of truth is its manifest."""
    import json

    path = Path(folder) / "manifest.json"
    try:
        repo_id = json.loads(path.read_text(encoding="utf-8")).get("repo_id")
    except (OSError, ValueError, AttributeError) as exc:
        raise UsageError(
            f"{path}: cannot read the build's repo_id ({exc}); pass --repo-id"
        ) from None
    if not isinstance(repo_id, str) or not repo_id:
        raise UsageError(f"{path} names no repo_id; pass --repo-id")
    return repo_id


EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a command its reader closed


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; whatever happens, at most one line on stderr unless ``--debug``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _printable_streams()
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # inside the try: a closed pipe shows up here, not at exit
        return code
    except (
        UsageError,
        *_raised("validation.config", "ConfigError"),
        *_raised("curate.release.diff", "ReleaseUsageError"),
        *_raised("curate.release.hub", "HubSettingsError"),
    ) as exc:
        print(f"curate: error: {exc}", file=sys.stderr)
        return 2
    except (
        *_raised("curate.release.diff", "ReleaseError"),
        *_raised("curate.release.hub", "HubError"),
    ) as exc:
        print(f"curate: error: {exc}", file=sys.stderr)
        return 1
    except _raised("concurrent.futures.process", "BrokenProcessPool"):
        print(
            "curate: error: a worker process died (killed, e.g. by the out-of-memory killer); "
            "nothing was written; retry with fewer --jobs",
            file=sys.stderr,
        )
        return 3
    except KeyboardInterrupt:
        print("curate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head`): nothing left to say to it, and Python must not
        # complain when it flushes stdout at exit.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"curate: error: {_one_line(exc)} (re-run with --debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _raised(module: str, name: str) -> tuple[type[BaseException], ...]:
    """The exception class ``module.name``, if that module has been imported; else nothing.

    An ``except`` clause evaluates its classes only when an exception reaches it, and an
    exception of a class whose module was never imported cannot have been raised: so ``main``
    can name the errors of ``curate.release.diff``, ``curate.release.hub`` or the process pool
    without
    importing them (and numpy, multiprocessing...) on every start-up.
    """
    loaded = sys.modules.get(module)
    return (getattr(loaded, name),) if loaded is not None else ()


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


if __name__ == "__main__":
    sys.exit(main())
