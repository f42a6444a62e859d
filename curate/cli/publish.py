"""``curate publish``: a build folder to the Hub, as one commit tagged with its version."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from curate.cli.console import console
from curate.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
    pub.set_defaults(func=run)


def _bars_on_a_terminal_only() -> contextlib.AbstractContextManager[object]:
    """huggingface_hub's progress bars off while it works, unless stderr is a terminal: in a
    CI log each retry of a failing commit wrote "Upload 0 LFS files: 0it [00:00, ?it/s]"
    between curate's lines. HF_HUB_DISABLE_PROGRESS_BARS, when set, decides instead."""
    if sys.stderr.isatty() or "HF_HUB_DISABLE_PROGRESS_BARS" in os.environ:
        return contextlib.nullcontext()
    from huggingface_hub.utils import disable_progress_bars

    return disable_progress_bars()


def run(args: argparse.Namespace) -> int:
    from curate.release.publish import PublishError, publish

    say = console(args).say
    repo_id = args.repo_id or built_repo_id(args.dir)
    try:
        with _bars_on_a_terminal_only():
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


def built_repo_id(folder: str) -> str:
    """The repository a build is for: the one source of truth is its manifest."""
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
