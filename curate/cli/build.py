"""``curate build``: validate, clean, deduplicate and write the dataset folder."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from curate.cli import options
from curate.cli.console import console
from curate.errors import UsageError

if TYPE_CHECKING:
    from curate.pipeline.build import BuildResult


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    b = sub.add_parser("build", help="validate, clean, deduplicate and export the dataset")
    options.add_paths(b)
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
    options.add_run_options(b)
    options.add_safety_options(b, build=True)
    options.add_config(b)
    b.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from curate import release
    from curate.dataset.card import template_path
    from curate.pipeline.build import BuildRefused, build
    from curate.pipeline.validate import printable
    from validation.render import render_text

    settings = options.settings(args)
    jobs = options.jobs(args)
    out_dir = args.out if args.out is not None else options.in_project(args, "dist")
    try:
        template = template_path(settings, args.template, options.loaded(args).root)
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
    paths = options.sources(args)
    try:
        result = build(
            paths,
            out_dir,
            settings,
            version=args.set_version,
            progress=say,
            template=template,
            previous=previous,
            jobs=jobs,
            engine=options.engine(args),
            cache_dir=options.cache_dir(args),
            on_file=out.files(paths, settings.checks.exclude),
            force=args.force,
            warn=out.warn,
        )
    except BuildRefused as exc:
        out.close()
        sys.stdout.write(render_text(printable(exc.report), settings.max_findings_listed))
        print(f"curate: build refused: {exc}; {out_dir} left as it was", file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    finally:
        out.close()
    out.timings(result.timings)
    _summary(result)
    _closing_lines(result)
    return 0


def _summary(result: BuildResult) -> None:
    from curate import release
    from validation.findings import count

    print(
        f"built {result.out} v{result.version}: {count(result.records_in, 'record')} in, "
        f"{result.exact_merged} exact and {result.near_merged} near "
        f"{'duplicate' if result.exact_merged + result.near_merged == 1 else 'duplicates'} "
        f"merged, {count(result.records_out, 'record')} out"
    )
    dropped = result.manifest.get("rows_dropped", 0)
    if dropped:
        listed = "listed in validation-report.json"
        print(f"  {count(dropped, 'record')} dropped by row policy ({listed})")
    if result.diff is not None:
        print(
            f"  since v{result.previous_version}: {release.counts_line(result.diff)}; "
            f"schema {'changed' if result.diff.schema else 'unchanged'}; "
            f"bump {result.diff.level or 'none'}"
        )
    for name in [*sorted(result.manifest["files"]), "manifest.json"]:
        print(f"  {result.out / name}")


def _closing_lines(result: BuildResult) -> None:
    """The build's last words: what validation found, and where to look at it."""
    from validation.findings import count

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
        print(f"{count(warnings, 'warning')} ({codes}): every one is in {where}")
    else:
        print("no warnings")
    html = result.out / "report.html"
    if html.is_file():
        print(f"report: {html} (open it in a browser)")
