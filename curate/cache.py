"""A content-addressed cache of validation results, so re-validating an unchanged corpus is cheap.

Entries are keyed by content: a whole file by the SHA-256 of its bytes, a record by its text,
both combined with a fingerprint of the check code and the configuration. A change to either
makes every old key miss, so the cache can never change a result, only skip recomputing it.
The store is one SQLite file; one that cannot be read (corrupt, foreign, another format) is
set aside with a warning and the run goes on without it.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sqlite3
from collections.abc import Callable
from pathlib import Path

import validation
from curate import __version__
from validation.config import Config
from validation.corpus import FileResult
from validation.registry import REGISTRY
from validation.runner import RecordResult

FORMAT = "curate-validation-cache/2"
Warn = Callable[[str], None]


def fingerprint(config: Config) -> str:
    """What a cached result depends on: the check code, the registry and the settings."""
    digest = hashlib.sha256(FORMAT.encode())
    digest.update(__version__.encode())
    package = Path(validation.__file__).parent
    for path in [*sorted(package.glob("*.py")), Path(__file__).with_name("parse.py")]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(json.dumps({c: s.version for c, s in REGISTRY.items()}, sort_keys=True).encode())
    digest.update(json.dumps(config.as_dict(), sort_keys=True, default=str).encode())
    return digest.hexdigest()


class ValidationCache:
    def __init__(self, directory: str | Path, config: Config, warn: Warn) -> None:
        self.path = Path(directory) / "validation.sqlite"
        self.fingerprint = fingerprint(config)
        self.warn = warn
        self.hits = self.misses = 0
        self._pending: list[tuple[str, bytes]] = []
        self._db: sqlite3.Connection | None = None
        try:
            self._db = self._open()
        except (sqlite3.Error, OSError, ValueError) as exc:
            warn(f"cache {self.path} is unusable ({exc}); set aside and rebuilt")
            self._db = self._reset()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        db.execute("CREATE TABLE IF NOT EXISTS entries (k TEXT PRIMARY KEY, v BLOB)")
        rows = dict(db.execute("SELECT k, v FROM meta").fetchall())
        if rows and rows.get("format") != FORMAT:
            raise ValueError(f"format {rows.get('format')!r}, expected {FORMAT!r}")
        if rows.get("fingerprint") not in (None, self.fingerprint):
            self.warn(
                f"cache {self.path} was written by other checks or settings; "
                "its entries are stale and are dropped"
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

    def _get(self, key: str) -> object | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT v FROM entries WHERE k = ?", (key,)).fetchone()
            value = pickle.loads(row[0]) if row else None
        except Exception as exc:  # a damaged entry must never fail the run
            self.warn(f"cache entry unreadable ({type(exc).__name__}); recomputing")
            value = None
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def _put(self, key: str, value: object) -> None:
        if self._db is not None:
            self._pending.append((key, pickle.dumps(value, protocol=5)))

    # Whole files, keyed by their bytes.
    def get_file(self, sha256: str, path: str) -> FileResult | None:
        value = self._get(self._key("file", sha256.encode()))
        return value.relocated(path) if isinstance(value, FileResult) else None

    def put_file(self, sha256: str, result: FileResult) -> None:
        self._put(self._key("file", sha256.encode()), result)

    # Single records, keyed by their text (the RecordCache protocol of validation.runner).
    def get(self, text: str) -> RecordResult | None:
        value = self._get(self._key("record", text.encode("utf-8")))
        return value if isinstance(value, RecordResult) else None

    def put(self, text: str, result: RecordResult) -> None:
        self._put(self._key("record", text.encode("utf-8")), result)

    def take_pending(self) -> list[tuple[str, bytes]]:
        pending, self._pending = self._pending, []
        return pending

    def add_pending(self, entries: list[tuple[str, bytes]]) -> None:
        self._pending.extend(entries)

    def flush(self) -> None:
        if self._db is None or not self._pending:
            return
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", self._pending)
        except sqlite3.Error as exc:
            self.warn(f"cache {self.path} could not be written ({exc}); results not cached")
        self._pending = []

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None
