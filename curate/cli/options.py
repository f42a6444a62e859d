"""What several commands share: their options, the settings they read, and the project folder.

Imports only argparse-level modules; the settings file is read when a command asks for it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from curate.engine import ENGINES
from curate.errors import UsageError

if TYPE_CHECKING:
    from curate.settings import LoadedSettings, Settings
    from validation.config import Config

DEFAULT_CACHE_DIR = ".curate-cache"


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"curate: error: {message}\n")


def add_paths(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths", nargs="*", metavar="PATH",
        help="files or folders (default: the config's `sources`, sources/)",
    )  # fmt: skip


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes for per-file checks (default: one per core)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        help="where the per-file and corpus-wide tasks run: local (worker processes, the "
        "default), serial (this process) or ray (a Ray cluster; the `ray` extra); the "
        "config's `engine` otherwise",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the Ray cluster to run on (default: $RAY_ADDRESS, else a local cluster started "
        "and stopped by the run); implies --engine ray",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or write the cache: validation results, a build's kept scans "
        f"({DEFAULT_CACHE_DIR}/ by default, or $CURATE_CACHE_DIR)",
    )


def add_safety_options(p: argparse.ArgumentParser, *, build: bool) -> None:
    """Filesystem and process safety: inputs, the output folder, the worker count."""
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


def add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file with a [tool.curate] table (default: the nearest curate.toml, or "
        "pyproject.toml with a [tool.curate] table, up from the working folder)",
    )


def add_console_options(p: argparse.ArgumentParser) -> None:
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


def add_baseline_options(p: argparse.ArgumentParser) -> None:
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


def jobs(args: argparse.Namespace) -> int | None:
    """--jobs, capped at the CPUs this process may use unless --force-jobs."""
    if args.jobs is None:
        return None
    from curate.engine import default_jobs

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


def engine(args: argparse.Namespace) -> str:
    """The engine's name: --engine, else ray with --ray-address (which the engine then finds
    where Ray looks, $RAY_ADDRESS), else the config's."""
    if args.ray_address:
        if args.engine not in (None, "ray"):
            raise UsageError(f"--ray-address is for --engine ray, not --engine {args.engine}")
        os.environ["RAY_ADDRESS"] = args.ray_address
        return "ray"
    return args.engine or settings(args).engine


def cache_dir(args: argparse.Namespace) -> str | None:
    if args.no_cache:
        return None
    return os.environ.get("CURATE_CACHE_DIR") or DEFAULT_CACHE_DIR


def loaded(args: argparse.Namespace) -> LoadedSettings:
    """The settings file of this run, read once."""
    found = getattr(args, "_loaded", None)
    if found is None:
        from curate.settings import load_settings_file

        found = args._loaded = load_settings_file(getattr(args, "config", None))
    return found


def settings(args: argparse.Namespace) -> Settings:
    """The settings, with ``--exclude`` added to the configured exclude list."""
    from dataclasses import replace

    own = loaded(args).settings
    if getattr(args, "exclude", None):
        checks = own.checks
        own = replace(own, checks=replace(checks, exclude=(*checks.exclude, *args.exclude)))
    return own


def checks(args: argparse.Namespace) -> Config:
    return settings(args).checks


def in_project(args: argparse.Namespace, name: str) -> str:
    """A default path (``sources``, ``dist``) in the project folder, the config file's one,
    shown relative to the working folder when it is below it or near it."""
    root = loaded(args).root
    if root == Path("."):
        return name
    return os.path.relpath(root / name)


def sources(args: argparse.Namespace) -> list[str]:
    """The PATHs given, else the configured source folders (``sources``) in the project."""
    if args.paths:
        return list(args.paths)
    from curate import storage

    found = loaded(args)
    # A URI (s3://, gs://, hf://) is where it says, not a folder of the project.
    paths = [name if "://" in name else in_project(args, name) for name in found.settings.sources]
    local = [p for p in paths if not (storage.is_uri(p) or p.startswith("hf://"))]
    missing = [p for p in local if not (Path(p).exists() or Path(p).is_symlink())]
    if missing and found.path is None:
        raise UsageError(
            f"no configuration found (no curate.toml, nor a pyproject.toml with [tool.curate], "
            f"here or in a folder above) and no {missing[0]}/ folder: run `curate init` to "
            "start a project here, or pass the files or folders to read (PATH)"
        )
    if missing:
        key = "sources" if "sources" in found.keys else "sources (the default)"
        raise UsageError(
            f"no such folder: {missing[0]} ({key} of {found.path}); create it, set `sources` "
            "to the folder your data is in, or pass a PATH"
        )
    return paths


def run_url() -> str | None:
    """The page of this GitHub Actions run, where its artifacts (the reports) are listed."""
    parts = [os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    if not all(parts):
        return None
    return f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}#artifacts"
