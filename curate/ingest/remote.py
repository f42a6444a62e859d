"""Sources on the Hugging Face Hub: ``hf://datasets/ORG/NAME[@REVISION]``.

A dataset repository is fetched with ``huggingface_hub.snapshot_download`` (only the files a
source format claims: its Parquet, JSONL, CSV or Arrow files, never its card) into a folder,
under the timeouts, deadline and retries of every Hub operation of curate
(:mod:`curate.release.hub`), and then read like any local folder; its files are named in
outputs by the address given, ``hf://datasets/ORG/NAME@REVISION/data/train-….parquet``.
"""

from __future__ import annotations

from pathlib import Path

from curate.errors import UsageError
from curate.ingest import formats

PREFIX = "hf://datasets/"


def is_remote(path: object) -> bool:
    return isinstance(path, str) and path.startswith(PREFIX)


def parse(address: str) -> tuple[str, str | None]:
    """``(ORG/NAME, REVISION or None)`` of an ``hf://datasets/`` address."""
    from curate.release import hub

    body = address[len(PREFIX) :].rstrip("/")
    repo_id, at, revision = body.partition("@")
    if not hub.REPO_ID.match(repo_id) or (at and not revision):
        raise UsageError(f"not a Hub dataset, hf://datasets/ORG/NAME[@REVISION]: {address!r}")
    return repo_id, revision or None


def fetch(address: str, into: Path) -> Path:
    """Download the dataset at ``address`` into a folder under ``into`` (kept there: a later
    run downloads only what changed) and return that folder."""
    from huggingface_hub import snapshot_download

    from curate.release import hub

    repo_id, revision = parse(address)
    local = into / repo_id / (revision or "main").replace("/", "%2F")
    what = f"reading {address}"
    with hub.reading(
        what, repo_id, None,
        not_found=lambda: UsageError(
            f"{address}: no such dataset on the Hub (or not visible with these credentials)"
        ),
        no_revision=lambda: UsageError(f"{address}: the dataset has no revision {revision!r}"),
    ):  # fmt: skip
        hub.call(
            lambda: snapshot_download(
                repo_id,
                repo_type="dataset",
                revision=revision,
                local_dir=local,
                allow_patterns=list(formats.patterns()),
            ),
            what,
        )
    return local
