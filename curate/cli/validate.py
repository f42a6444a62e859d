"""``curate validate``: check source drops and report every fault."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from curate.cli import options
from curate.cli.console import console
from curate.errors import UsageError

if TYPE_CHECKING:
    from validation.findings import Report


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    v = sub.add_parser("validate", help="check source drops and report every fault")
    options.add_paths(v)
    v.add_argument(
        "--format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help="github: workflow commands, and a Markdown summary into $GITHUB_STEP_SUMMARY when "
        "it is set; sarif: SARIF 2.1.0 for code scanning",
    )
    v.add_argument("--strict", action="store_true", help="warnings fail the run too")
    v.add_argument(
        "--output", metavar="FILE", help="write the report (in --format) to FILE, not stdout"
    )
    v.add_argument(
        "--json", metavar="FILE", help="also write the JSON report to FILE (a CI artifact)"
    )
    options.add_baseline_options(v)
    options.add_run_options(v)
    options.add_safety_options(v, build=False)
    options.add_config(v)
    v.set_defaults(func=run)


def why_failed(report: Report) -> str:
    from validation.findings import count

    if report.errors:
        return count(len(report.errors), "error")
    warned = count(len(report.warnings), "warning")
    return f"no errors, but {warned} and --strict fails on warnings"


def _check_output(option: str, given: str) -> None:
    """Refuse, before the work, a report file that cannot be written."""
    from curate.io import output_kind

    output = Path(given).absolute()
    why = output_kind(output)
    if why == "a folder":
        raise UsageError(f"{option} {given} is a folder; give the report's file name")
    if why is not None:
        raise UsageError(
            f"{option} {given} is {why}; give a file (a symlink to one, a FIFO or a device "
            "such as /dev/stdout is written through)"
        )
    blocker = next((p for p in output.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise UsageError(f"{option} {given} is under the file {blocker}")


def _render(fmt: str, report: Report, cap: int) -> str:
    """The report in ``fmt``: text and JSON list ``cap`` findings of a code in a file."""
    from validation.render import render_json, render_sarif, render_text

    if fmt == "sarif":
        from curate.version import version

        return render_sarif(report, tool_version=version())
    if fmt == "text":
        return render_text(report, cap)
    if fmt == "json":
        return render_json(report, cap)
    from validation.render import RENDERERS

    return RENDERERS[fmt](report)


def run(args: argparse.Namespace) -> int:
    from curate import engine as engines
    from curate.pipeline.validate import addressed, printable, validate_paths
    from validation.render import relative_to, render_github_summary, render_json

    config = options.checks(args)
    own = options.settings(args)
    cap = own.max_findings_listed
    for option, given in (("--output", args.output), ("--json", args.json)):
        if given:
            _check_output(option, given)
    jobs = options.jobs(args)
    name = options.engine(args)
    # The default pool is started by the run only if the work is large enough; another engine
    # is the command's, made (its extra checked) before the work and closed after it.
    runner = None if name == engines.DEFAULT else engines.make(name, jobs)
    out = console(args)
    paths = options.sources(args)
    try:
        run = validate_paths(
            paths,
            config,
            jobs=jobs,
            engine=runner,
            cache_dir=options.cache_dir(args),
            progress=out.files(paths, config.exclude),
            warn=out.warn,
            split_bytes=own.split_bytes,
        )
        report = addressed(run)
    finally:
        out.close()
        if runner is not None:
            runner.close()
    out.timings(report.timings)
    report = printable(report)
    if args.write_baseline:
        from curate.project.baseline import write_baseline

        n = write_baseline(args.write_baseline, report)
        from validation.findings import count

        print(f"wrote {args.write_baseline}: {count(n, 'finding')} accepted as the baseline")
        return 0
    if args.baseline:
        from curate.project.baseline import apply_baseline

        report = apply_baseline(report, args.baseline)
    if args.format in ("github", "sarif"):
        # Code scanning and annotations read paths relative to the repository.
        report = relative_to(report, os.environ.get("GITHUB_WORKSPACE"))
    rendered = _render(args.format, report, cap)
    from curate.io import write_output

    # A full disk or a read-only folder is an environment failure: main() says it in one line
    # naming the file (exit 3); the paths themselves were checked before the work.
    if args.output:
        write_output(args.output, rendered)
    else:
        sys.stdout.write(rendered)
    if args.json:
        write_output(args.json, render_json(report, cap))
    if args.format == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        # The runner creates this file; steps append to it.
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(render_github_summary(report, report_url=options.run_url()))
    if report.failed(strict=args.strict):
        print(f"curate: failed: {why_failed(report)}", file=sys.stderr)
        return 1
    return 0
