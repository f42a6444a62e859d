"""The output folder: where a build may write, and the swap that replaces it only on success.

A build only ever writes into a new folder, an empty one, or one holding a previous build and
nothing else, and it only ever deletes what it made: its staging folders (a recognisable name
*and* a marker file inside) and a previous build it verified file by file against its manifest.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from curate.dataset.manifest import STAGING_MARKER
from curate.errors import UsageError
from curate.io import sha256_file

Say = Callable[[str], None]


class OutputRefused(UsageError):
    """The output folder is not ours to write: exit 2, one line naming what is in the way."""


def _hidden(out: Path, kind: str) -> str:
    return f".{out.name}.{kind}-"


def output_target(out: str | Path, sources: list[Path]) -> Path:
    """The absolute output folder, or ``OutputRefused`` for one no build may ever replace.

    Checked before any work. The current folder, a parent of it, a source folder or a folder
    holding one, and ``''`` (an unset variable) are refused even with ``--force``: replacing them
    is never what was meant, and it would destroy the sources or the checkout.
    """
    raw = os.fspath(out)
    if not raw.strip():
        raise OutputRefused(
            "--out is empty (an unset variable?): refused, even with --force, since it would "
            "mean the current folder"
        )
    absolute = Path(os.path.abspath(raw))
    if absolute.name in ("", ".", ".."):
        target = absolute.resolve()
    else:
        target = absolute.parent.resolve() / absolute.name
    always = "refused, even with --force"
    cwd = Path.cwd().resolve()
    if target == cwd or cwd.is_relative_to(target):
        what = "the current folder" if target == cwd else "a parent of the current folder"
        raise OutputRefused(f"--out {raw}: {target} is {what}; {always}")
    for source in sources:
        src = Path(source).resolve()
        if src == target or src.is_relative_to(target):
            what = "is the source folder" if src == target else "holds the sources"
            raise OutputRefused(f"--out {raw}: {target} {what} {source}; {always}")
        if src.is_dir() and target.is_relative_to(src):
            raise OutputRefused(
                f"--out {raw}: {target} is inside the source folder {source}, so the build "
                f"would be read as input next time; {always}"
            )
    if absolute.is_symlink():
        raise OutputRefused(f"--out {raw} is a symlink; give the folder it points to")
    for parent in [target, *target.parents]:
        if parent.exists() and not parent.is_dir():
            where = "is a file" if parent == target else f"is under the file {parent}"
            raise OutputRefused(f"--out {raw} {where}; give a folder")
        if parent.exists():
            break
    return target


def _manifest_files(folder: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("toolkit"), dict):
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or "curate" not in manifest["toolkit"]:
        return None
    local = manifest.get("local_files")  # written by the build, not uploaded (report.html)
    return {**files, **local} if isinstance(local, dict) else files


def release_in(folder: Path) -> dict[str, Any] | None:
    """The manifest of the curate build ``folder`` holds, if it has a version (else None): a
    build into it then follows that release rather than write over it unawares."""
    files = _manifest_files(folder) if folder.is_dir() else None
    if files is None:
        return None
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return manifest if isinstance(manifest.get("version"), str) else None


def foreign_entries(folder: Path) -> list[str]:
    """What in ``folder`` is not part of a previous curate build (empty: it is ours, or empty).

    A build is recognised by its ``manifest.json``; every other file must be listed there with
    the same size and SHA-256, so a card edited by hand after the build counts as the user's.
    """
    if not folder.exists():
        return []
    entries = sorted(folder.rglob("*"))
    if not entries:
        return []
    files = _manifest_files(folder)
    if files is None:
        return [p.relative_to(folder).as_posix() for p in entries if p.parent == folder]
    listed_dirs = {Path(k).parent.as_posix() for k in files} | {
        p.as_posix() for k in files for p in Path(k).parents
    }
    foreign = []
    for path in entries:
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            foreign.append(rel)
        elif path.is_dir():
            if rel not in listed_dirs:
                foreign.append(rel + "/")
        elif rel in ("manifest.json", STAGING_MARKER):
            continue
        elif rel not in files or not path.is_file():
            foreign.append(rel)
        else:
            entry = files[rel]
            same = (
                isinstance(entry, dict)
                and entry.get("size") == path.stat().st_size
                and entry.get("sha256") == sha256_file(path)
            )
            if not same:
                foreign.append(f"{rel} (changed since the build)")
    return foreign


def _in_the_way(target: Path, foreign: list[str], force: bool) -> None:
    if foreign and not force:
        more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        shown = ", ".join(foreign[:5]) + more
        raise OutputRefused(
            f"--out {target} holds files that are not from a curate build: {shown}; choose "
            "another folder, or --force to move them aside (kept, never deleted)"
        )


def check_output(target: Path, *, force: bool) -> None:
    """Refuse, before any work, an output folder holding anything but a previous build."""
    if target.exists() and not target.is_dir():
        raise OutputRefused(f"--out {target} is a file; give a folder")
    _in_the_way(target, foreign_entries(target), force)


def _free_name(parent: Path, stem: str) -> Path:
    n = 1
    while (parent / f"{stem}{n}").exists() or (parent / f"{stem}{n}").is_symlink():
        n += 1
    return parent / f"{stem}{n}"


def _remove_tree(path: Path) -> None:
    """Delete a folder this build made, retrying while a late writer still adds to it."""
    for _ in range(5):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return


def recover(target: Path, say: Say) -> None:
    """Finish or undo what an interrupted build left beside ``target``; call under the lock.

    Holding the lock means no other build into ``target`` is running, so every staging folder
    of ours is stale. A previous build set aside by a swap that never completed is put back.
    """
    parent = target.parent
    if not parent.is_dir():
        return
    if (target / STAGING_MARKER).is_file() and not target.is_symlink():
        (target / STAGING_MARKER).unlink()  # swapped in, then killed before this was removed
    for stage in sorted(parent.glob(_hidden(target, "build") + "*")):
        if stage.is_dir() and not stage.is_symlink() and (stage / STAGING_MARKER).is_file():
            _remove_tree(stage)
            say(f"removed {stage.name}, left by an interrupted build")
    for old in sorted(parent.glob(_hidden(target, "old") + "*")):
        if not old.is_dir() or old.is_symlink() or foreign_entries(old):
            say(f"left {old} alone: it does not look like a previous build")
            continue
        if not target.exists() and not target.is_symlink():
            os.rename(old, target)
            say(f"restored {target} from {old.name}: a build was interrupted mid-swap")
        else:
            _remove_tree(old)
            say(f"removed {old.name}, the previous build of an interrupted swap")


@contextmanager
def output_lock(target: Path) -> Iterator[None]:
    """An exclusive lock on ``target`` so that two builds into it cannot interleave.

    The lock file sits beside the folder and is removed on release; a waiter that locked a file
    already unlinked tries again, so the unlink cannot let two builds in at once.
    """
    import fcntl

    path = target.parent / (_hidden(target, "lock")[:-1])
    while True:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputRefused(f"--out {target}: cannot create {path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputRefused(
                f"another curate build into {target} is running (lock {path}); try again "
                "when it has finished"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)


def _abort(stage: Path, on_abort: Callable[[], None]) -> None:
    """Stop what writes into ``stage`` and remove it, through a second Ctrl-C too: `uv run`
    passes the terminal's Ctrl-C on to the build, which so gets it twice, the second while
    the first is being handled; an abort cut short there left the stage behind."""
    try:
        for _ in range(3):
            try:
                on_abort()
                break
            except KeyboardInterrupt:
                continue
    finally:
        mask = {signal.SIGINT, signal.SIGTERM}
        held = hasattr(signal, "pthread_sigmask")
        if held:
            signal.pthread_sigmask(signal.SIG_BLOCK, mask)
        try:
            _remove_tree(stage)
        finally:
            if held:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, mask)


@contextmanager
def staged_folder(
    out: Path,
    *,
    force: bool = False,
    say: Say = lambda _m: None,
    on_abort: Callable[[], None] = lambda: None,
) -> Iterator[Path]:
    """A staging folder beside ``out`` that replaces it only if the block succeeds.

    Call under :func:`output_lock`. A build that fails part-way (or is interrupted) leaves the
    previous ``out`` exactly as it was and removes its staging folder, after ``on_abort`` has
    stopped anything still writing into it. The swap is two renames with SIGINT/SIGTERM held
    back between them; a kill there is undone by :func:`recover` on the next run.
    """
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=_hidden(out, "build"), dir=out.parent))
    stage.chmod(0o755)  # mkdtemp's 0700 would make the published folder private to its builder
    (stage / STAGING_MARKER).write_bytes(b"")
    try:
        yield stage
        foreign = foreign_entries(out) if out.is_dir() else []
        if out.exists() and not out.is_dir():
            raise OutputRefused(f"--out {out} is a file; give a folder")
        _in_the_way(out, foreign, force)  # again: a user may have added a file meanwhile
    except BaseException:
        _abort(stage, on_abort)
        raise
    mask = {signal.SIGINT, signal.SIGTERM}
    held = hasattr(signal, "pthread_sigmask")
    if held:
        signal.pthread_sigmask(signal.SIG_BLOCK, mask)
    try:
        old = None
        if out.exists():
            if foreign:
                aside = _free_name(out.parent, f"{out.name}.replaced-")
                os.rename(out, aside)
                say(f"--force: moved what was in {out} to {aside} (kept, not deleted)")
            else:
                old = out.parent / f"{_hidden(out, 'old')}{os.getpid()}"
                os.rename(out, old)
        try:
            os.rename(stage, out)
        except BaseException:
            if old is not None:
                os.rename(old, out)
            _remove_tree(stage)
            raise
        (out / STAGING_MARKER).unlink()  # only now: a stage killed mid-swap keeps its marker
        if old is not None:
            _remove_tree(old)
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, mask)


@contextmanager
def claim(
    target: Path,
    *,
    force: bool = False,
    say: Say = lambda _m: None,
    on_abort: Callable[[], None] = lambda: None,
) -> Iterator[Path]:
    """The output folder, claimed for one build: locked, cleaned of what an interrupted build
    left, checked to be ours (or ``force``), and a staging folder that replaces it only if the
    block succeeds (see :func:`staged_folder`)."""
    with output_lock(target):
        recover(target, say)
        check_output(target, force=force)
        with staged_folder(target, force=force, say=say, on_abort=on_abort) as stage:
            yield stage
