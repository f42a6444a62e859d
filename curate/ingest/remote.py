"""Sources on the Hugging Face Hub: ``hf://datasets/ORG/NAME[@REVISION]``.

A dataset repository is fetched with ``huggingface_hub.snapshot_download`` (only the files a
source format claims: its Parquet, JSONL, CSV or Arrow files, never its card) into a folder,
under the timeouts, deadline and retries of every Hub operation of curate
(:mod:`curate.release.hub`), and then read like any local folder; its files are named in
outputs by the address given, ``hf://datasets/ORG/NAME@REVISION/data/train-….parquet``.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from curate.errors import UsageError
from curate.ingest import formats

PREFIX = "hf://datasets/"


def is_remote(path: object) -> bool:
    return isinstance(path, str) and path.startswith(PREFIX)


# What git allows in a branch or tag name (git check-ref-format), which is what the Hub holds:
# no "." or ".." component (the Hub client normalised "@.." to main, and the snapshot landed
# in the organisation's folder, beside other cached datasets), no control character, space or
# any of ~^:?*[\, no "@{", no leading or trailing "/", no component ending in ".lock".
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|@\{|\.\.|//|^/|/$|^\.|/\.|\.lock(/|$)|\.$")
# A commit id or the name of a ref: the Hub's own names are far shorter.
MAX_REVISION = 255
MAX_REPO_ID = 96  # huggingface_hub's validate_repo_id


def parse(address: str) -> tuple[str, str | None]:
    """``(ORG/NAME, REVISION or None)`` of an ``hf://datasets/`` address, checked as the Hub
    checks them, so a bad one is a usage error (exit 2) before anything is fetched."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    from curate.release import hub

    body = address[len(PREFIX) :].rstrip("/")
    repo_id, at, revision = body.partition("@")
    usage = f"not a Hub dataset, hf://datasets/ORG/NAME[@REVISION]: {address!r}"
    if not hub.REPO_ID.match(repo_id) or (at and not revision):
        raise UsageError(usage)
    if len(repo_id) > MAX_REPO_ID:
        raise UsageError(f"{usage}: a Hub name has at most {MAX_REPO_ID} characters")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise UsageError(f"{usage} ({str(exc).split(': ')[0].rstrip('.')})") from None
    if at and (len(revision) > MAX_REVISION or _BAD_REF.search(revision)):
        raise UsageError(f"{usage}: {revision!r} is no branch, tag or commit name")
    return repo_id, revision or None


def snapshot_folder(into: Path, repo_id: str, revision: str | None) -> Path:
    """The folder a dataset's revision is fetched into: ``INTO/ORG/NAME/REVISION``, the
    revision quoted so that it is one path component, and never outside its dataset's folder
    (``UsageError`` otherwise: nothing may be read from, or written to, another's)."""
    own = into / repo_id
    local = own / quote(revision or "main", safe="")
    inside = own.resolve(strict=False)
    if local.resolve(strict=False).parent != inside:
        raise UsageError(f"hf://datasets/{repo_id}: the revision {revision!r} is no folder name")
    return local


def fetch(address: str, into: Path) -> Path:
    """Download the dataset at ``address`` into a folder under ``into`` (kept there: a later
    run downloads only what changed) and return that folder."""
    from huggingface_hub import snapshot_download

    from curate.release import hub

    repo_id, revision = parse(address)
    local = snapshot_folder(into, repo_id, revision)
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
