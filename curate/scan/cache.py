"""A content-addressed cache of validation results, so re-validating an unchanged corpus is cheap.

Entries are keyed by content: a whole file by the SHA-256 of its bytes, a record by its text,
both combined with a fingerprint of the check code and the configuration. A change to either
makes every old key miss, so the cache can never change a result, only skip recomputing it.

The store is one SQLite file holding data, never code: each entry is JSON (numbers, strings,
and the signature arrays as base64 of their little-endian bytes) with the SHA-256 of that JSON
beside it. Nothing in it is ever executed, whatever is planted there; an entry whose checksum or
shape is wrong is a miss. A store that cannot be read (corrupt, foreign, another format) is set
aside with a warning and the run goes on without it; one that can be read but not written
(read-only folder or file) is used read-only. The main process holds the one writing connection
and writes new entries in transactions of :data:`FLUSH_ENTRIES` as they arrive; the tasks only
read, through one read-only connection per thread (:mod:`curate.scan.task`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

import validation
from curate.ingest import formats
from curate.version import version
from validation.config import Config
from validation.corpus import FileResult
from validation.findings import Finding, Severity
from validation.records import Header
from validation.registry import REGISTRY
from validation.runner import RecordResult
from validation.sketch import NUM_PERM, SKETCH_VERSION

FORMAT = "curate-validation-cache/6"
# New entries are written in transactions of this many, not held until the run ends: about a
# kilobyte each, a million records' entries took 1.4 GB of the main process's memory.
FLUSH_ENTRIES = 20_000
Warn = Callable[[str], None]


def digest_files(digest: Any, paths: Iterable[Path], root: Path | None = None) -> None:
    """Each file's name (relative to ``root`` when it is under it, else its bare name) and
    bytes into ``digest``: what code made a result. The cache keys by it, and the Ray
    preflight compares it across nodes (:mod:`curate.engine.preflight`), so both mean the
    same thing by "the same code"."""
    for path in paths:
        inside = root is not None and path.is_relative_to(root)
        name = path.relative_to(root).as_posix() if inside else path.name
        digest.update(name.encode())
        digest.update(path.read_bytes())


class Notice(str):
    """A message through ``warn`` that is news only to who asked for detail (``-v``): the cache
    starting over after a settings change is what a settings change does, not a fault."""

    only_verbose = True


@functools.lru_cache(maxsize=8)
def _fingerprint(settings: str) -> str:
    digest = hashlib.sha256(FORMAT.encode())
    digest.update(version().encode())
    package = Path(validation.__file__).parent
    # The checks' code (with the tables of its subpackages: the macro tables of
    # validation/texpackages feed the rendered form that signatures are made of) and every
    # source format's reader: what a cached result was made by.
    own = sorted(package.rglob("*.py"), key=lambda p: p.relative_to(package).as_posix())
    digest_files(digest, [*own, *formats.module_files()], package)
    digest.update(json.dumps({c: s.version for c, s in REGISTRY.items()}, sort_keys=True).encode())
    # The signatures come from rensa: an upgrade of it that hashes differently changes no
    # byte of ours, so the sketch's own version (bumped with any such change) is in the key.
    digest.update(f"sketch/{SKETCH_VERSION}".encode())
    digest.update(settings.encode())
    return digest.hexdigest()


def fingerprint(config: Config) -> str:
    """What a cached result depends on: the check code, the registry and the settings.

    ``exclude`` only chooses which files are read, not what a file's result is: left out.
    """
    settings = {k: v for k, v in config.as_dict().items() if k != "exclude"}
    return _fingerprint(json.dumps(settings, sort_keys=True, default=str))


# --- entries as JSON ----------------------------------------------------------------------------
def _array(a: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


def _unarray(text: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    a = np.frombuffer(base64.b64decode(text, validate=True), dtype=dtype)
    return a.reshape(shape).astype(dtype[1:])  # a writable array in native byte order


def _finding(f: Finding) -> dict[str, Any]:
    return {k.name: getattr(f, k.name) for k in fields(Finding)} | {"severity": str(f.severity)}


def _unfinding(d: dict[str, Any]) -> Finding:
    handles = {k: tuple(d[k]) for k in ("record", "related_record") if d.get(k) is not None}
    return Finding(**(d | {"severity": Severity(d["severity"])} | handles))


def encode_record(r: RecordResult) -> dict[str, Any]:
    return {
        "findings": [_finding(f) for f in r.findings],
        "id": r.id,
        "sig": _array(r.sig, "<u2"),
        "language": r.language,
        "measures": [[name, value] for name, value in r.measures],
    }


def decode_record(d: dict[str, Any]) -> RecordResult:
    language = d["language"]
    if language is not None and not isinstance(language, str):
        raise ValueError("language is not a string")
    return RecordResult(
        tuple(_unfinding(f) for f in d["findings"]),
        str(d["id"]),
        _unarray(d["sig"], "<u2", (-1,)),
        language,
        tuple((str(name), _measure(value)) for name, value in d["measures"]),
    )


def _measure(value: Any) -> Any:
    """A measurement as the checks gave it: JSON turned the language's pair into a list."""
    return tuple(value) if isinstance(value, list) else value


def encode_file(r: FileResult) -> dict[str, Any]:
    header = None
    if r.header is not None:
        header = {k.name: getattr(r.header, k.name) for k in fields(Header)}
    return {
        "path": r.path,
        "header": header,
        "sha256": r.sha256,
        "size": r.size,
        "lines": _array(r.lines, "<i4"),
        "ids": list(r.ids),
        "sigs": _array(r.sigs, "<u2"),
        "findings": [_finding(f) for f in r.findings],
        "measures": {name: _array(v, "<f8") for name, v in r.measures.items()},
    }


def decode_file(d: dict[str, Any]) -> FileResult:
    n = len(d["ids"])
    return FileResult(
        path=str(d["path"]),
        header=Header(**d["header"]) if d["header"] is not None else None,
        sha256=str(d["sha256"]),
        size=int(d["size"]),
        lines=_unarray(d["lines"], "<i4", (n,)),
        ids=[str(i) for i in d["ids"]],
        sigs=_unarray(d["sigs"], "<u2", (n, NUM_PERM)),
        findings=[_unfinding(f) for f in d["findings"]],
        measures={str(k): _unarray(v, "<f8", (n,)) for k, v in d["measures"].items()},
    )


def _dump(value: dict[str, Any]) -> tuple[str, str]:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class ValidationCache:
    def __init__(
        self, directory: str | Path, config: Config, warn: Warn, *, readonly: bool = False
    ) -> None:
        self.path = Path(directory) / "validation.sqlite"
        self.fingerprint = fingerprint(config)
        self.warn = warn
        self.hits = self.misses = 0
        self._unreadable = 0  # entries that could not be read (said once)
        self._pending: list[tuple[str, str, str]] = []
        self._db: sqlite3.Connection | None = None
        self.readonly = readonly or self._cannot_write()
        try:
            self._db = self._open_readonly() if self.readonly else self._open()
        except (sqlite3.Error, OSError, ValueError) as exc:
            if self.readonly:
                if not readonly:  # told by the caller: a worker; the parent already warned
                    warn(f"cache {self.path} is read-only and unusable ({exc}); running without it")
                self._db = None
            else:
                warn(f"cache {self.path} is unusable ({exc}); set aside and rebuilt")
                self._db = self._reset()

    def _cannot_write(self) -> bool:
        """A cache we may read but not write: use it as it is, never rename or rebuild it."""
        if self.path.exists():
            return not (os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK))
        folder = next(p for p in [self.path.parent, *self.path.parent.parents] if p.exists())
        return not os.access(folder, os.W_OK)

    def _check_meta(self, db: sqlite3.Connection) -> dict[str, str]:
        rows = dict(db.execute("SELECT k, v FROM meta").fetchall())
        if rows and rows.get("format") != FORMAT:
            raise ValueError(f"format {rows.get('format')!r}, expected {FORMAT!r}")
        # Tables of another shape (another program's, or a damaged one) made every look-up
        # fail, one warning each: 8,010 lines on every run. Found here, it is set aside once.
        columns = [r[1] for r in db.execute("PRAGMA table_info(entries)").fetchall()]
        if columns and columns != ["k", "v", "sum"]:
            raise ValueError(f"unknown schema: entries({', '.join(columns)})")
        return rows

    def _open_readonly(self) -> sqlite3.Connection | None:
        if not self.path.exists():
            return None
        uri = self.path.absolute().as_uri() + "?mode=ro"
        if not os.access(self.path.parent, os.W_OK):
            uri += "&immutable=1"  # no lock files can be made there, and nobody is writing
        db = sqlite3.connect(uri, uri=True, timeout=30)
        rows = self._check_meta(db)
        if rows.get("fingerprint") != self.fingerprint:
            db.close()
            return None  # written by other checks or settings: every key would miss anyway
        return db

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        db.execute("CREATE TABLE IF NOT EXISTS entries (k TEXT PRIMARY KEY, v TEXT, sum TEXT)")
        rows = self._check_meta(db)
        if rows.get("fingerprint") not in (None, self.fingerprint):
            self.warn(
                Notice(
                    f"cache {self.path} was written by other checks or settings; "
                    "its entries are stale and are dropped"
                )
            )
            db.execute("DELETE FROM entries")
        db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (FORMAT,))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (self.fingerprint,))
        db.commit()
        return db

    def _reset(self) -> sqlite3.Connection | None:
        try:
            if self.path.exists():
                self.path.replace(self.path.with_suffix(".corrupt"))
            return self._open()
        except (sqlite3.Error, OSError, ValueError) as exc:
            self.warn(f"cache {self.path} cannot be created ({exc}); running without it")
            return None

    def _key(self, kind: str, content: bytes) -> str:
        return hashlib.blake2b(
            self.fingerprint.encode() + kind.encode() + content, digest_size=20
        ).hexdigest()

    def _get(self, key: str, decode: Callable[[dict[str, Any]], Any]) -> Any:
        value = None
        if self._db is not None:
            try:
                row = self._db.execute("SELECT v, sum FROM entries WHERE k = ?", (key,)).fetchone()
                if row is not None:
                    text, checksum = row
                    if not isinstance(text, str) or _dump(json.loads(text))[1] != checksum:
                        raise ValueError("checksum mismatch")
                    value = decode(json.loads(text))
            except Exception as exc:  # a damaged or planted entry must never fail the run
                self._unreadable += 1
                if self._unreadable == 1:  # once: a cache damaged throughout is one line
                    self.warn(
                        f"cache entry unreadable ({type(exc).__name__}); recomputing it (and "
                        "any other such entry, without a line each)"
                    )
                value = None
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def _put(self, key: str, value: dict[str, Any]) -> None:
        if self._db is not None and not self.readonly:
            self._pending.append((key, *_dump(value)))
            self._flush_when_full()

    def _flush_when_full(self) -> None:
        # Only a cache that writes: a worker's read-only one holds its entries for the parent.
        if len(self._pending) >= FLUSH_ENTRIES and self._db is not None and not self.readonly:
            self.flush()

    # Whole files, keyed by their bytes.
    def get_file(self, sha256: str, path: str, index: int) -> FileResult | None:
        """The result of a file with these bytes, as the run's file ``index`` at ``path``."""
        value = self._get(self._key("file", sha256.encode()), decode_file)
        return value.relocated(path, index) if value is not None else None

    def put_file(self, sha256: str, result: FileResult) -> None:
        self._put(self._key("file", sha256.encode()), encode_file(result))

    # Single records, keyed by their text (the RecordCache protocol of validation.runner).
    def _record_key(self, text: str) -> str:
        return self._key("record", text.encode("utf-8", "surrogatepass"))

    def get(self, text: str) -> RecordResult | None:
        return self._get(self._record_key(text), decode_record)

    def put(self, text: str, result: RecordResult) -> None:
        self._pending.append((self._record_key(text), *_dump(encode_record(result))))
        self._flush_when_full()

    def take_pending(self) -> list[tuple[str, str, str]]:
        pending, self._pending = self._pending, []
        return pending

    @property
    def pending(self) -> int:
        return len(self._pending)

    def spill(self, path: Path) -> None:
        """Hand the pending entries over in a file for the process that writes the cache (one
        JSON array a line: key, value, checksum) rather than hold them: what a task does with
        a large file's. A folder that cannot be written could not hold the cache either: the
        entries are then dropped."""
        try:
            with path.open("a", encoding="utf-8", newline="\n") as fh:
                for entry in self._pending:
                    fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        except OSError:
            pass
        self._pending = []

    def add_spilled(self, path: Path) -> None:
        """Store the entries a task spilled into ``path`` (checked like every entry when read
        back), a transaction at a time, and remove the file."""
        batch: list[tuple[str, str, str]] = []
        try:
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    key, value, checksum = json.loads(line)
                    batch.append((str(key), str(value), str(checksum)))
                    if len(batch) >= FLUSH_ENTRIES:
                        self.add_pending(batch)
                        batch = []
        except (OSError, ValueError) as exc:
            self.warn(f"cache entries in {path} unreadable ({type(exc).__name__}); not stored")
        self.add_pending(batch)
        path.unlink(missing_ok=True)

    def add_pending(self, entries: list[tuple[str, str, str]]) -> None:
        if self._db is not None and not self.readonly:
            self._pending.extend(entries)
            self._flush_when_full()

    def flush(self) -> None:
        if self._db is None or self.readonly or not self._pending:
            self._pending = []
            return
        insert = "INSERT OR REPLACE INTO entries VALUES (?, ?, ?)"
        try:
            try:
                with self._db:
                    self._db.executemany(insert, self._pending)
            except UnicodeEncodeError:
                # A file name that is not UTF-8 is held as surrogates, which SQLite's text
                # cannot store: the entries that name it are not cached (recomputed next run).
                with self._db:
                    self._db.executemany(insert, [e for e in self._pending if _encodable(e[1])])
        except sqlite3.Error as exc:
            self.warn(f"cache {self.path} could not be written ({exc}); results not cached")
        self._pending = []

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None
