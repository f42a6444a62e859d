"""The manifest and the fingerprints: what a release holds, byte by byte and row by row.

The manifest lists the SHA-256 and size of every file of the release and of every source, so a
later build (or ``curate publish``) can tell a previous build from anything else, and a reader
can check what they downloaded. The content fingerprint is defined over the rows, not the
file's bytes, so that any reader of a release can compute it from the Parquet file alone.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from curate.io import sha256_file

# The files of a release besides its data files (see curate.dataset.writers).
MANIFEST = "manifest.json"
CARD = "README.md"
CROISSANT = "croissant.json"
REPORT_JSON = "validation-report.json"
CHANGELOG = "CHANGELOG.md"
REPORT_HTML = "report.html"  # the page for people: kept beside the release, never uploaded
REJECTED = "rejected.parquet"  # what the build left out, if asked for: local, never uploaded
# The marker of a staging folder (see curate.release.output): never part of a build.
STAGING_MARKER = ".curate-staging"


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def row_digest(row: dict[str, Any]) -> str:
    """SHA-256 of one row as canonical JSON: its content, whatever the file encoding."""
    return hashlib.sha256(
        json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8")
    ).hexdigest()


def canonical_fingerprint(rows: list[dict[str, Any]]) -> str:
    """The content fingerprint of a table: SHA-256 over its rows' digests in id order.

    Defined over row digests so that the build can compute it in worker processes, row by row,
    and a reader of any release can compute the same from its Parquet file.
    """
    digest = hashlib.sha256()
    for row in rows:
        digest.update(row_digest(row).encode())
    return digest.hexdigest()


def file_inventory(
    folder: Path, exclude: set[str], skip: str | None = None
) -> dict[str, dict[str, Any]]:
    """Hash and size of every file in ``folder`` but ``exclude`` and what is under ``skip``
    (a build's working folder, removed before the build is swapped in)."""
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if skip is not None and rel.startswith(skip + "/"):
            continue
        if rel not in exclude:
            out[rel] = {"sha256": sha256_file(path), "size": path.stat().st_size}
    return out
