"""A build's scan of each file kept in the cache folder, so that a build interrupted or refused
part-way resumes where it stopped, and an unchanged corpus is not scanned again.

The scan is most of a build (about 120 s of a 174 s build of a million records), and what it
makes of a file depends only on the file: its result (ids, signatures, findings, measures) and
its spool of rows. Both are kept as one entry, a folder ``scan/<key>`` under the cache folder,
keyed by everything they are made from: the file's bytes (SHA-256), its path as given (a
per-file ignore or field mapping makes the rows depend on it), the checks' settings and
fingerprint (:func:`curate.scan.cache.fingerprint`), the build's cleaning settings (``math``,
``row_policy``) and the code: the files of the installed ``curate`` and ``validation``
packages and the versions of the libraries whose output enters the table, as the Ray
preflight compares them (:func:`curate.engine.preflight.identity`). Any change to one of them
is another key: an entry can only ever stand for the bytes a scan would make now.

An entry is written atomically: the file's task spools its rows into a folder of this run's,
``scan/.tmp-<run>-<file>``; once the file's result is complete the main process writes
``result.json`` beside them (the result, and the size and SHA-256 of each spool file) and
renames the folder to its key. A build killed at any point leaves complete entries and
``.tmp-`` folders, never half an entry. A folder of its key is used only if it checks out:
its ``result.json`` against its own checksum and key, and every spool file against its size
and SHA-256 (no other spool file beside them). One that does not is set aside as
``<key>.damaged`` with one warning, and the file is scanned again.

Entries are bounded by the last build: a build that succeeds removes every entry it did not
use (and what interrupted builds left), unless another build is using the folder (a shared
lock, :data:`LOCK`, held by each build while it runs). What is kept is at most one successful
build's scans and those of the builds since, which failed or were interrupted.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from curate.scan.cache import _array, _dump, _unarray, decode_file, encode_file, fingerprint
from validation.config import Config
from validation.corpus import FileResult

FORMAT = "curate-kept-scan/1"
FOLDER = "scan"
RESULT = "result.json"
SPOOL = "rows.arrow"  # the spool's name in an entry: a file, or a folder of a split file's parts
LOCK = ".lock"
TMP = ".tmp-"
DAMAGED = ".damaged"
# What this module names in the folder, and so what pruning may remove: an entry (its key), one
# set aside, and a run's unfinished spool. Anything else there is not ours and stays.
OURS = re.compile(
    rf"[0-9a-f]{{40}}(?:{re.escape(DAMAGED)})?|{re.escape(TMP)}[0-9a-f]{{12}}-\d{{7,}}"
)
Warn = Callable[[str], None]
# A spool file as its task wrote it: its path, size and SHA-256.
Digest = tuple[str, int, str]


@functools.lru_cache(maxsize=1)
def _code() -> str:
    """The code a kept scan was made by: what the Ray preflight compares across nodes."""
    from curate.engine.preflight import identity

    return json.dumps(identity(), sort_keys=True)


def spool_digest(spool: Path) -> list[Digest]:
    """The size and SHA-256 of a spool file a task wrote (none: the file had no rows)."""
    if not spool.is_file():
        return []
    with spool.open("rb") as fh:
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
    return [(spool.as_posix(), spool.stat().st_size, sha)]


class KeptScans:
    """The kept scans of one build: looked up before a file is scanned, written as each file's
    scan completes, and pruned to this build's when it succeeds (:meth:`prune`)."""

    def __init__(
        self,
        cache_dir: str | Path,
        config: Config,
        cleaning: Mapping[str, Any],
        warn: Warn,
    ) -> None:
        self.folder = Path(cache_dir) / FOLDER
        self.warn = warn
        self.run = uuid.uuid4().hex[:12]
        self.reused = 0  # files whose kept scan this build used
        self.used: set[str] = set()  # the names of the entries it used or wrote
        self._damaged = 0
        self._lock: int | None = None
        made = {"format": FORMAT, "checks": fingerprint(config), "code": _code()}
        made["cleaning"] = json.dumps(cleaning, sort_keys=True, default=str)
        self._base = json.dumps(made, sort_keys=True).encode()
        self.writable = self._open()

    def _open(self) -> bool:
        """The folder made and locked (shared: pruning waits for no other build's end), or
        False when it cannot be written: entries found there are still used."""
        import fcntl

        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            if self.folder.is_dir():
                return False  # read-only: used as it is
            self.warn(f"cannot keep scans in {self.folder} ({exc.strerror}); every file is scanned")
            return False
        with contextlib.suppress(OSError):  # a filesystem without locks: see `prune`
            fcntl.flock(fd, fcntl.LOCK_SH)
        self._lock = fd
        return True

    def any(self) -> bool:
        """Whether any scan is kept: a first build does not hash its files to look them up."""
        try:
            return any(not name.startswith(".") for name in os.listdir(self.folder))
        except OSError:
            return False

    def key(self, content: str, path: str) -> str:
        """The entry's name for a file with this content key (its bytes' hash, and for a source
        with fields its format and mapping: :func:`curate.scan.run.file_key`) at ``path``."""
        digest = hashlib.blake2b(self._base, digest_size=20)
        digest.update(json.dumps([content, path]).encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def spool(self, index: int) -> str:
        """Where file ``index``'s task spools its rows: a folder of this run's, renamed to the
        entry's name once the scan is complete (:meth:`keep`)."""
        folder = self.folder / f"{TMP}{self.run}-{index:07d}"
        folder.mkdir(exist_ok=True)
        return (folder / SPOOL).as_posix()

    def find(self, key: str, path: str, index: int) -> tuple[FileResult, str] | None:
        """The kept result of the file (as the run's file ``index``) and its spool, or None:
        none kept, or one that does not check out (then set aside)."""
        entry = self.folder / key
        if not (entry / RESULT).is_file():
            return None
        try:
            result = self._read(entry, key)
        except Exception as exc:  # a damaged or planted entry must never fail the build
            why = " ".join(f"{type(exc).__name__}: {exc}".split())  # one line, whatever it says
            self._set_aside(entry, path, why)
            return None
        self.reused += 1
        self.used.add(key)
        return result.relocated(path, index), (entry / SPOOL).as_posix()

    def _read(self, entry: Path, key: str) -> FileResult:
        # A path that is not UTF-8 is held as surrogates, written and read as they are.
        data = (entry / RESULT).read_bytes().decode("utf-8", "surrogatepass")
        checksum, _, text = data.partition("\n")
        if hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != checksum:
            raise ValueError(f"{RESULT} does not match its checksum")
        body = json.loads(text)
        if body.get("format") != FORMAT or body.get("key") != key:
            raise ValueError(f"{RESULT} is of another entry")
        spool = entry / SPOOL
        found = sorted(spool.glob("*.arrow")) if spool.is_dir() else [spool] * spool.is_file()
        listed = body["spool"]
        if [f.relative_to(entry).as_posix() for f in found] != [name for name, _, _ in listed]:
            raise ValueError("its spool files are not the ones it lists")
        if not found and body["file"]["ids"]:
            raise ValueError("its spool is missing")
        for file, (name, size, sha) in zip(found, listed, strict=True):
            if file.stat().st_size != size:
                raise ValueError(f"{name} is {file.stat().st_size:,} bytes, not {size:,}")
            if spool_digest(file)[0][2] != sha:
                raise ValueError(f"{name} does not match its SHA-256")
        file = body["file"]
        result = decode_file(file)
        n = result.n_records
        if file["rows"] is not None:
            result.rows = _unarray(file["rows"], "<i4", (n,))
        if file["source_ids"] is not None:
            if len(file["source_ids"]) != n:
                raise ValueError("source ids do not match the records")
            result.source_ids = [None if s is None else str(s) for s in file["source_ids"]]
        return result

    def _set_aside(self, entry: Path, path: str, why: str) -> None:
        self._damaged += 1
        aside = entry.with_name(entry.name + DAMAGED)
        try:
            if aside.exists():
                shutil.rmtree(aside)
            entry.rename(aside)
            where = f"set aside as {aside}"
        except OSError as exc:
            where = f"left in place ({exc.strerror})"
        if self._damaged == 1:  # once: a folder damaged throughout is one line
            self.warn(
                f"kept scan of {path} is damaged ({why}); {where}, and the file scanned again "
                "(any other such entry too, without a line each)"
            )

    def keep(self, key: str | None, index: int, result: FileResult, spooled: list[Digest]) -> str:
        """Keep file ``index``'s completed scan (its result, and the spool files its tasks
        wrote, ``spooled``) under ``key`` (None: not to be kept, a file that changed while it
        was read, or one over the size limit); returns where its spool now is."""
        tmp = self.folder / f"{TMP}{self.run}-{index:07d}"
        if key is None or not result.sha256 or not self.writable:
            return (tmp / SPOOL).as_posix()
        file = encode_file(result)
        file["rows"] = _array(result.rows, "<i4") if result.rows is not None else None
        file["source_ids"] = result.source_ids
        listed = [[Path(p).relative_to(tmp).as_posix(), size, sha] for p, size, sha in spooled]
        text, checksum = _dump({"format": FORMAT, "key": key, "file": file, "spool": listed})
        try:
            data = f"{checksum}\n{text}".encode("utf-8", "surrogatepass")
            (tmp / RESULT).write_bytes(data)
            tmp.rename(self.folder / key)
        except OSError:
            # Kept already (the folder is another build's, running at once), or not writable:
            # this build's spool stays where it is, for this build.
            (tmp / RESULT).unlink(missing_ok=True)
            return (tmp / SPOOL).as_posix()
        self.used.add(key)
        return (self.folder / key / SPOOL).as_posix()

    def prune(self) -> None:
        """Remove every entry this build did not use, and what interrupted builds left: what is
        kept is then this build's scans. Not while another build holds the folder, and nothing
        but what this module names (:data:`OURS`): the folder may have been the user's."""
        import fcntl

        if self._lock is None:
            return
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another build is using it: its entries are not ours to remove
        try:
            for child in self.folder.iterdir():
                ours = OURS.fullmatch(child.name) and child.is_dir() and not child.is_symlink()
                if ours and child.name not in self.used:
                    with contextlib.suppress(OSError):
                        shutil.rmtree(child)
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock, fcntl.LOCK_SH)

    def close(self) -> None:
        """Release the folder, with this run's unfinished spools removed (a file whose scan
        did not complete: it is scanned again)."""
        if self.writable:
            for tmp in self.folder.glob(f"{TMP}{self.run}-*"):
                shutil.rmtree(tmp, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
