"""Small I/O helpers: atomic writes (a reader never sees half a file, and a failure leaves the old
one in place) and paths that can always be printed."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path


def _mode_for(path: Path) -> int:
    """The mode a plain ``open(path, "w")`` would give: the old file's, else 0666 less umask.

    ``mkstemp`` makes 0600 files, which would leave a build unreadable to anyone but its
    builder (a shared dataset folder, a web server serving it).
    """
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


# Where a path names a stream, not a document: /dev/stdout, /dev/fd/N, /proc/self/fd/N.
_STREAMS = ("/dev/", "/proc/")


def output_kind(path: str | Path) -> str | None:
    """Why a file a user named for output (``--output``) cannot be written, or None.

    A symlink is followed; a FIFO, a character device (``/dev/null``, a terminal) and a
    stream such as ``/dev/stdout`` are written to as they are; a folder, a socket or a block
    device is refused."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # to be made (or under a file: said apart)
        return None
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return None
    return {
        stat.S_ISDIR(mode): "a folder",
        stat.S_ISSOCK(mode): "a socket",
        stat.S_ISBLK(mode): "a block device",
    }.get(True, "not a regular file")


def write_output(path: str | Path, text: str) -> None:
    """Write a file a user named for output as ``>`` in a shell would, but atomically where
    that means something: through a symlink to its target (the link stays a link), to a FIFO,
    a character device or a stream such as ``/dev/stdout`` directly (replacing one with a
    regular file, as the temp-file-and-rename of :func:`atomic_write_bytes` did, broke the
    link or the pipe, and as root replaced ``/dev/stdout`` itself), and to a regular file
    atomically. ``IsADirectoryError`` for what :func:`output_kind` refuses."""
    data = text.encode("utf-8")
    why = output_kind(path)
    if why is not None:
        raise IsADirectoryError(f"{display(path)} is {why}; not written")
    given = os.path.abspath(path)
    try:
        mode = os.stat(given).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if given.startswith(_STREAMS) or (mode is not None and not stat.S_ISREG(mode)):
        with open(given, "wb") as fh:
            fh.write(data)
        return
    atomic_write_bytes(os.path.realpath(given), data)


def display(path: str | Path) -> str:
    """A path as text that can always be printed and written as UTF-8.

    A file name that is not valid UTF-8 keeps its undecodable bytes as ``\\xNN`` escapes:
    deterministic, readable, and never a crash when a report or the table is written.
    """
    text = path if isinstance(path, str) else Path(path).as_posix()
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte stands for
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def sha256_file(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
