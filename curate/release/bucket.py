"""``--out`` in storage (``s3://BUCKET/PREFIX``, ``gs://…``): the release made in a local folder
by the same steps as any build, then put in place of the prefix's objects.

Storage has no rename, so the swap of a local ``--out`` (:func:`curate.release.output.claim`)
cannot be had; what is had instead, in order:

1. **mirror**: the prefix's objects are copied into a local folder, which then stands for
   ``--out`` in every check a local build makes: the rule that it holds only a previous build
   (its manifest, every file listed there with the same size and SHA-256, or nothing), the
   release it holds taken as the previous one, the version that may follow it. The build is
   made, staged and swapped in that local folder.
2. **upload**: the new release is uploaded under a sibling prefix,
   ``.PREFIX.build-TOKEN/``, with the staging marker written first and a second marker,
   ``.complete``, last. Until then the prefix is untouched; a failure removes the sibling.
3. **check**: the prefix is listed again and must hold what was mirrored (the same keys, sizes
   and modification times): a file added meanwhile refuses the build, the prefix untouched.
4. **copy in**: every object of the new release is copied (server-side) from the sibling to
   its key under the prefix, ``manifest.json`` last; then the objects of the previous release
   that the new one does not have are deleted (only those: each was verified as the previous
   build's in step 1), and the sibling with them.

A reader of the prefix sees, before step 4, the previous release whole; after it, the new one
whole; during it (server-side copies: seconds for a release of gigabytes) new data files with
the previous ``manifest.json``, since each object is replaced on its own. A reader that starts
from ``manifest.json`` and checks each file's SHA-256 against it can tell. A build killed in
step 4 leaves its complete sibling: the next build into the prefix copies it in first (the
roll forward of :func:`recover`) and says so; a sibling without ``.complete`` is removed.

Not had: a lock between builds on different machines into one prefix (storage has none that
``pyarrow.fs`` offers), and ``--force`` (it would move objects aside, which is a copy and a
delete of each: it is refused, and the user moves them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from curate.dataset.manifest import MANIFEST, STAGING_MARKER
from curate.errors import ReleaseUsageError
from curate.release.output import OutputRefused
from curate.storage import StorageError, Uri, listing, reason

Say = Callable[[str], None]
COMPLETE = ".complete"  # the upload's last object: the sibling holds the whole release


@dataclass
class Mirror:
    """A prefix in storage and the local folder that stands for it during a build."""

    uri: Uri
    folder: Path  # what the build takes as --out
    held: dict[str, tuple[int, int]]  # each object under the prefix: its size and mtime
    stage: Uri  # the sibling prefix the release is uploaded to
    complete: bool = False  # the stage holds the whole release: only a copy-in is left

    def close(self) -> None:
        """The local folder removed, and the stage unless it holds a whole release (a
        copy-in that failed: the next build finishes it)."""
        shutil.rmtree(self.folder.parent, ignore_errors=True)
        if not self.complete:
            _delete(self.stage)


def _sibling(uri: Uri, kind: str) -> str:
    return f".{uri.name}.{kind}-"


def _listed(uri: Uri) -> dict[str, tuple[int, int]]:
    return {rel: (info.size or 0, info.mtime_ns or 0) for _, rel, info in listing(uri)}


def _check(uri: Uri, sources: list[str], force: bool) -> None:
    if force:
        raise OutputRefused(
            f"--out {uri}: --force is not offered for storage (moving objects aside is a "
            "copy and a delete of each); move or delete what is in the way yourself"
        )
    if not uri.key.count("/"):
        raise OutputRefused(f"--out {uri}: give a prefix in the bucket, not the bucket itself")
    for source in sources:
        src = source.rstrip("/")
        if src == uri.uri or src.startswith(uri.uri + "/") or uri.uri.startswith(src + "/"):
            raise OutputRefused(
                f"--out {uri}: the release would hold, or be inside, the source {source}; "
                "refused, even with --force"
            )


def mirror(out: str, sources: list[str], *, force: bool, say: Say) -> Mirror:
    """The prefix ``out``, copied into a new local folder; ``OutputRefused`` or
    ``StorageError`` (one line each) for a prefix no build may write to."""
    uri = Uri(out)
    _check(uri, sources, force)
    held = _listed(uri)  # first: a prefix that cannot be listed is refused here, and why
    if recover(uri, say):
        held = _listed(uri)
    stage = uri.parent / f"{_sibling(uri, 'build')}{uuid.uuid4().hex[:12]}"
    try:  # the marker first: a prefix that cannot be written is refused before any work
        with uri.fs.open_output_stream(f"{stage.key}/{STAGING_MARKER}") as fh:
            fh.write(b"")
    except OSError as exc:
        raise StorageError(f"--out {uri}: cannot write: {reason(exc)}") from None
    folder = Path(tempfile.mkdtemp(prefix="curate-out-")) / uri.name
    m = Mirror(uri, folder, held, stage)
    try:
        for name in held:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            with (
                uri.fs.open_input_stream(f"{uri.key}/{name}") as src,
                open(folder / name, "wb") as dst,
            ):
                while chunk := src.read(1 << 22):
                    dst.write(chunk)
    except OSError as exc:
        m.close()
        raise StorageError(f"--out {uri}: cannot read it: {reason(exc)}") from None
    except BaseException:
        m.close()
        raise
    return m


@contextmanager
def standing_in(m: Mirror | None, *, keep: bool = False) -> Iterator[None]:
    """A block that works on the local folder standing for the prefix: a refusal names the
    prefix, not the folder; the folder is removed at the end (with ``keep``, only on a
    failure: the build goes on with it)."""
    if m is None:
        yield
        return
    ok = False
    try:
        yield
        ok = True
    except (OutputRefused, ReleaseUsageError) as exc:
        raise type(exc)(str(exc).replace(str(m.folder), m.uri.uri)) from None
    finally:
        if not (ok and keep):
            m.close()


def publish(m: Mirror, say: Say) -> None:
    """Put the release the build left in ``m.folder`` in place of the prefix's objects (see
    the module's docstring for what a reader sees meanwhile)."""
    import pyarrow.fs as pafs

    fs, stage = m.uri.fs, m.stage
    names = sorted(p.relative_to(m.folder).as_posix() for p in m.folder.rglob("*") if p.is_file())
    try:
        for name in names:
            pafs.copy_files(str(m.folder / name), f"{stage.key}/{name}",
                            source_filesystem=pafs.LocalFileSystem(),
                            destination_filesystem=fs)  # fmt: skip
        if _listed(m.uri) != m.held:
            raise OutputRefused(
                f"--out {m.uri} changed while the build ran (an object added, replaced or "
                "removed): left as it was; build again"
            )
        with fs.open_output_stream(f"{stage.key}/{COMPLETE}") as fh:
            fh.write(b"")
        m.complete = True
        _copy_in(stage, m.uri, set(m.held))
    except OSError as exc:
        if isinstance(exc, StorageError):
            raise
        raise StorageError(f"--out {m.uri}: cannot write: {reason(exc)}") from None


def _copy_in(stage: Uri, uri: Uri, held: set[str]) -> None:
    """Step 4: the staged release copied to its keys, ``manifest.json`` last, then what the
    previous release had and this one has not deleted, and the sibling."""
    fs = uri.fs
    names = [rel for _, rel, _ in listing(stage) if rel not in (STAGING_MARKER, COMPLETE)]
    names.sort(key=lambda n: (n == MANIFEST, n))
    for name in names:
        fs.copy_file(f"{stage.key}/{name}", f"{uri.key}/{name}")
    for name in sorted(held - set(names)):
        fs.delete_file(f"{uri.key}/{name}")
    _delete(stage)


def _delete(stage: Uri) -> None:
    with contextlib.suppress(OSError):  # nothing was written under it
        stage.fs.delete_dir(stage.key)


def recover(uri: Uri, say: Say) -> bool:
    """Finish or undo what an interrupted build left beside the prefix: a sibling with its
    whole release (``.complete``) is copied in, since the build was killed while copying it;
    one without is removed. Whether the prefix changed."""
    import pyarrow.fs as pafs

    parent, changed = uri.parent, False
    try:
        found = parent.fs.get_file_info(pafs.FileSelector(parent.key, allow_not_found=True))
    except OSError as exc:
        raise StorageError(f"--out {uri}: {reason(exc)}") from None
    for info in found:
        base = os.path.basename(info.path)
        if info.type != pafs.FileType.Directory or not base.startswith(_sibling(uri, "build")):
            continue
        stage = Uri(uri.scheme + info.path)
        inside = {rel for _, rel, _ in listing(stage)}
        if STAGING_MARKER not in inside:
            say(f"left {stage} alone: it does not look like a build of curate")
        elif COMPLETE in inside:
            _copy_in(stage, uri, set())
            say(f"copied {stage.name} into {uri}: a build was interrupted while copying it")
            changed = True
        else:
            _delete(stage)
            say(f"removed {stage.name}, left by an interrupted build")
    return changed
