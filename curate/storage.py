"""Object storage by URI: ``s3://BUCKET/KEY`` and ``gs://BUCKET/KEY``, through ``pyarrow.fs``.

A source, or ``--out``, may be a URI instead of a local path. :class:`Uri` stands where a
``Path`` stands for a local file: it has the few things the readers and discovery ask of one
(``name``, ``as_posix()``, ``stat()``, ``open("rb")``), so a reader opens a source the same way
wherever it lives, and a task given a URI reads the object itself (nothing is downloaded for
it by the main process). The filesystem is made from the URI by ``FileSystem.from_uri``, once
per bucket and process; credentials and the endpoint come from the environment as the AWS and
Google SDKs read them (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_PROFILE``, ``AWS_ENDPOINT_URL``; ``GOOGLE_APPLICATION_CREDENTIALS``), so curate has no
setting of its own for them and never sees a secret.

What pyarrow raises is an ``OSError`` of several lines naming the SDK's operation; what a user
is told is one line: :func:`reason` keeps what went wrong (no such bucket, access denied, the
server not answering).
"""

from __future__ import annotations

import functools
import io
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curate.errors import StorageError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

SCHEMES = ("s3://", "gs://", "gcs://")


def is_uri(path: object) -> bool:
    """Whether ``path`` names an object in storage rather than a local file."""
    if isinstance(path, Uri):
        return True
    return isinstance(path, str) and path.startswith(SCHEMES)


@functools.cache
def _filesystem(root: str) -> pafs.FileSystem:
    """The filesystem of one bucket (``s3://BUCKET``), made once per process: an S3 client
    resolves the bucket's region when it is made."""
    import pyarrow.fs as pafs

    try:
        fs, _ = pafs.FileSystem.from_uri(root)
    except (OSError, ValueError) as exc:
        raise StorageError(f"{root}: {reason(exc)}") from None
    return fs


# pyarrow's message names the SDK's error in capitals; what each means to the user.
_WHY = (
    ("NO_SUCH_BUCKET", "no such bucket"),
    ("ACCESS_DENIED", "access denied (check the credentials in the environment)"),
    ("INVALID_ACCESS_KEY_ID", "the access key is not known (check AWS_ACCESS_KEY_ID)"),
    ("SIGNATURE_DOES_NOT_MATCH", "the secret key is wrong (check AWS_SECRET_ACCESS_KEY)"),
    ("NETWORK_CONNECTION", "the storage server does not answer (check AWS_ENDPOINT_URL)"),
)
_CODE = re.compile(r"AWS Error ([A-Z_]+)")


def reason(exc: BaseException) -> str:
    """What went wrong, in words and on one line, from pyarrow's message."""
    text = str(exc)
    for code, words in _WHY:
        if code in text:
            return words
    if "NoSuchBucket" in text or "specified bucket does not exist" in text:
        return "no such bucket"
    found = _CODE.search(text)
    if found is not None:
        detail = text[found.end() :].split("(Request ID")[0].strip(" :.")
        detail = detail.split(" operation: ", 1)[-1] if " operation: " in detail else detail
        return f"{found.group(1).lower().replace('_', ' ')}: {detail}".rstrip(": ")
    if isinstance(exc, FileNotFoundError):
        return "no such file or folder"
    return " ".join(text.split())[:200]


@dataclass(frozen=True)
class Uri:
    """An object or a prefix in storage, as the readers and discovery use a ``Path``."""

    uri: str  # scheme://bucket/key, without a trailing "/"

    def __post_init__(self) -> None:
        object.__setattr__(self, "uri", self.uri.rstrip("/"))

    def __str__(self) -> str:
        return self.uri

    def as_posix(self) -> str:
        return self.uri

    @property
    def scheme(self) -> str:
        return self.uri.partition("://")[0] + "://"

    @property
    def bucket(self) -> str:
        return self.uri.partition("://")[2].partition("/")[0]

    @property
    def key(self) -> str:
        """The path inside the filesystem: ``BUCKET/KEY``, as pyarrow names it."""
        return self.uri.partition("://")[2]

    @property
    def name(self) -> str:
        return self.uri.rpartition("/")[2]

    @property
    def parent(self) -> Uri:
        """The prefix this is under; a bucket is its own parent, as ``/`` is."""
        return Uri(self.uri.rpartition("/")[0]) if self.key.count("/") else self

    def absolute(self) -> Uri:
        return self

    def __truediv__(self, part: str) -> Uri:
        return Uri(f"{self.uri}/{part}")

    @property
    def fs(self) -> pafs.FileSystem:
        return _filesystem(self.scheme + self.bucket)

    def info(self) -> pafs.FileInfo:
        """What storage says is at this URI; ``StorageError`` if it cannot say."""
        try:
            return self.fs.get_file_info(self.key)
        except OSError as exc:
            raise StorageError(f"{self.uri}: {reason(exc)}") from None

    def stat(self) -> os.stat_result:
        """A ``stat`` of the object, as ``Path.stat`` gives one: a regular file (or, for a
        prefix with objects under it, a folder), its size and modification time."""
        import pyarrow.fs as pafs

        info = self.info()
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(2, "no such object", self.uri)
        kind = stat.S_IFDIR if info.type == pafs.FileType.Directory else stat.S_IFREG
        mtime = info.mtime_ns or 0
        size = info.size or 0
        return os.stat_result((kind | 0o444, 0, 0, 1, 0, 0, size, mtime // 10**9,
                               mtime // 10**9, mtime // 10**9))  # fmt: skip

    def is_file(self) -> bool:
        import pyarrow.fs as pafs

        return self.info().type == pafs.FileType.File

    def open(self, mode: str = "rb") -> RemoteFile:
        if mode != "rb":
            raise ValueError("a source in storage is opened for reading only")
        return RemoteFile(self)


class _Raw(io.RawIOBase):
    """The object, read through pyarrow's random-access file (a ranged read per call)."""

    def __init__(self, native: Any) -> None:
        self.native = native

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            return self.native.readinto(buffer)
        except OSError as exc:
            raise OSError(5, reason(exc)) from None

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.native.seek(offset, whence)

    def tell(self) -> int:
        return self.native.tell()

    def close(self) -> None:
        self.native.close()
        super().close()


BUFFER = 1 << 22  # 4 MiB a request: each read of an object is a round trip to the server


class RemoteFile(io.BufferedReader):
    """An object open for reading, buffered so that a reader's small reads are few requests;
    seekable (Parquet's footer, Arrow's fallback). :meth:`identity` tells one version of the
    object from another, as ``fstat`` does for a local file."""

    def __init__(self, uri: Uri) -> None:
        try:
            native = uri.fs.open_input_file(uri.key)
        except FileNotFoundError:
            raise FileNotFoundError(2, "no such object", uri.uri) from None
        except OSError as exc:
            raise OSError(5, reason(exc)) from None
        super().__init__(_Raw(native), BUFFER)
        self.uri = uri

    def identity(self) -> tuple[int, int, int]:
        """The object's size and modification time now (a rewrite changes both); 0 for the
        inode a local file would have."""
        info = self.uri.info()
        return 0, info.size or 0, info.mtime_ns or 0


def listing(root: Uri) -> Iterator[tuple[Uri, str, pafs.FileInfo]]:
    """Every object under the prefix ``root``, with its key relative to it and what storage
    says of it (size, modification time), in sorted order; none for a prefix with nothing
    under it.
    ``StorageError`` when the bucket is missing or the listing is refused."""
    import pyarrow.fs as pafs

    try:
        # A listing is a GET, whose refusal says why (a HEAD's has no body to say it in).
        selector = pafs.FileSelector(root.key, recursive=True, allow_not_found=True)
        infos = root.fs.get_file_info(selector)
    except OSError as exc:
        raise StorageError(f"{root.uri}: {reason(exc)}") from None
    prefix = root.key + "/"
    for info in sorted(infos, key=lambda i: i.path):
        if info.type == pafs.FileType.File and info.path.startswith(prefix):
            yield Uri(root.scheme + info.path), info.path[len(prefix) :], info


def nothing_at(root: Uri) -> str:
    """What a URI with no object at or under it is: a missing bucket, or a missing key."""
    import pyarrow.fs as pafs

    if Uri(root.scheme + root.bucket).info().type == pafs.FileType.NotFound:
        return f"{root.uri}: no such bucket"
    return f"no such file or folder: {root.uri}"


def local_or_uri(path: str | os.PathLike[str]) -> Any:
    """A source as a task names it (a string) back into what its reader opens: a ``Uri`` for
    storage, else a ``Path``."""
    from pathlib import Path

    return Uri(str(path)) if is_uri(path) else Path(path)
