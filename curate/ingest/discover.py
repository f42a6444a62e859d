"""Discovery: the one answer, for every command, to "which files are the sources?".

Folders are searched recursively for the files a registered source format claims
(:mod:`curate.ingest.formats`); a file given by name is read whatever its name. The result is
sorted by path, since "earlier" in the duplicate checks means earlier in this order, and each
entry carries its name relative to the folder given, so that outputs never reveal where the
sources lived.
"""

from __future__ import annotations

import errno
import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from curate import storage
from curate.errors import UsageError
from curate.ingest import formats, remote
from curate.io import display


@dataclass(frozen=True)
class Source:
    """One input entry: where to read it, its name in outputs, and why it is not read (if so).

    ``name`` is the path relative to the folder given (a file given by itself: its name), so the
    outputs never depend on, or reveal, where the sources lived, while ``a/x.txt`` and
    ``b/x.txt`` stay distinct.
    """

    path: Path | storage.Uri  # a Uri for an object in storage (s3://, gs://)
    name: str
    problem: tuple[str, str] | None = None  # (code, message): a finding instead of reading it
    format: str = formats.DEFAULT  # the registered source format that reads it


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    name = rel.rpartition("/")[2]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def _listed(root: storage.Uri, exclude: tuple[str, ...]) -> list[Source]:
    """The sources under a prefix in storage, as :func:`_walk` finds them in a folder: the
    objects a format claims, named relative to the prefix, and not under an excluded folder
    (a listing is flat: each folder of an object's key is matched as the walk matches it
    before going in). An object given by its full key is read whatever its name."""
    found = []
    objects = list(storage.listing(root))  # first: what is refused is said here, and why
    if not objects:
        if not root.is_file():
            raise UsageError(storage.nothing_at(root))
        return [Source(root, root.name, format=formats.claim(root.name) or formats.DEFAULT)]
    for uri, rel, _ in objects:
        folders = rel.split("/")[:-1]
        if any(_excluded("/".join(folders[: i + 1]), exclude) for i in range(len(folders))):
            continue
        if not _excluded(rel, exclude) and (fmt := formats.claim(uri.name)) is not None:
            found.append(Source(uri, rel, format=fmt))
    return found


def _walk(root: Path, roots: list[Path], exclude: tuple[str, ...]) -> Iterator[Source]:
    """Every drop under ``root``, in sorted order, following symlinks only inside ``roots``."""
    seen: set[Path] = set()

    def inside(target: Path) -> bool:
        return any(target == r or target.is_relative_to(r) for r in roots)

    def visit(folder: Path, prefix: str) -> Iterator[Source]:
        real = folder.resolve()
        if real in seen:  # a symlink back up the tree: each folder is read once
            return
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            rel = prefix.rstrip("/") or "."
            yield Source(folder, rel, ("unreadable", f"cannot list folder: {exc.strerror or exc}"))
            return
        for entry in entries:
            rel = prefix + entry.name
            path = Path(entry.path)
            if _excluded(rel, exclude):
                continue
            link = entry.is_symlink()
            try:
                target = path.resolve(strict=True) if link else path
                is_dir = target.is_dir()
            except FileNotFoundError:
                if formats.claim(entry.name):
                    yield Source(path, rel, ("unreadable", "dangling symlink: its target is gone"))
                continue
            except (OSError, RuntimeError) as exc:  # a symlink loop, or no permission
                why = (
                    "symlink loop"
                    if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
                    else (exc.strerror or str(exc))
                )
                yield Source(path, rel, ("unreadable", f"cannot follow: {why}"))
                continue
            if link and not inside(target):
                if is_dir or formats.claim(entry.name):
                    yield Source(
                        path,
                        rel,
                        ("outside-link", "symlink to a path outside the folders given; not read"),
                    )
                continue
            if is_dir:
                yield from visit(path, rel + "/")
            elif (fmt := formats.claim(entry.name)) is not None:
                yield Source(path, rel, format=fmt)

    yield from visit(root, "")


def refuse_missing(paths: Iterable[str | Path]) -> None:
    """The usage error of a source path that does not exist, for a command to give before it
    says anything else (a build's first line is about the release its --out holds)."""
    for p in paths:
        path = Path(p)
        if storage.is_uri(p) or str(p).startswith("hf://"):
            continue  # discovery says what is missing in storage, after asking it
        if not (path.exists() or path.is_symlink()):
            raise UsageError(f"no such file or folder: {display(path)}")


def discover(
    paths: Iterable[str | Path],
    exclude: tuple[str, ...] = (),
    fetch: Callable[[str], Path] | None = None,
) -> list[Source]:
    """The sources named by ``paths``: files as given, folders searched recursively for the
    files a source format claims, and with ``fetch`` (a build's or a validation's, which
    downloads) Hub datasets ``hf://datasets/ORG/NAME[@REVISION]``, read as the folder
    ``fetch`` puts them in and named by their address.

    The result is sorted by path and without repeats, since "earlier" in the duplicate checks
    means earlier in this order. A folder that yields nothing is a usage error: a moved or
    misspelt drop folder must not pass as a clean, empty corpus.
    """
    addresses: dict[Path, str] = {}
    given = []
    found: dict[str, Source] = {}
    for p in paths:
        if storage.is_uri(p):
            entries = _listed(storage.Uri(str(p)), exclude)
            if not entries:
                raise UsageError(_nothing_in(str(p).rstrip("/"), exclude))
            for item in entries:
                found.setdefault(item.path.as_posix(), item)
        elif remote.is_remote(p):
            if fetch is None:
                raise UsageError(f"{p}: a Hub dataset is read by validate and build only")
            local = fetch(str(p))
            addresses[local] = str(p).rstrip("/")
            given.append(local)
        elif str(p).startswith("hf://"):  # a Path would fold it to hf:/models/…
            raise UsageError(
                f"{p}: only Hub datasets are sources, hf://datasets/ORG/NAME[@REVISION]"
            )
        else:
            given.append(Path(p))
    roots = [p.resolve() for p in given if p.is_dir()]
    for path in given:
        if path.is_dir():
            # (the download's own bookkeeping, in `.cache`, is no part of a Hub dataset)
            skip = (*exclude, ".cache") if path in addresses else exclude
            entries = list(_walk(path, roots, skip))
            shown = addresses.get(path, display(path))
            if not entries:
                raise UsageError(_nothing_in(shown, exclude))
            if path in addresses:
                entries = [replace(e, name=f"{shown}/{e.name}") for e in entries]
            for item in entries:
                found.setdefault(item.path.as_posix(), item)
        elif path.exists() or path.is_symlink():
            fmt = formats.claim(path.name) or formats.DEFAULT  # a file given by name is read
            found.setdefault(path.as_posix(), Source(path, display(path.name), format=fmt))
        else:
            raise UsageError(f"no such file or folder: {display(path)}")
    if not found:
        raise UsageError("no drops given")
    items = [found[k] for k in sorted(found)]
    names = [f.name for f in items]
    if len(set(names)) != len(names):  # folders given side by side: name them from their parent
        base = os.path.commonpath([str(f.path.absolute().parent) for f in items])
        items = [
            replace(f, name=display(os.path.relpath(str(f.path.absolute()), base))) for f in items
        ]
    return [replace(f, name=display(f.name)) for f in items]


def _nothing_in(shown: str, exclude: tuple[str, ...]) -> str:
    also = f" (after --exclude {', '.join(exclude)})" if exclude else ""
    return f"no sources ({', '.join(formats.patterns())}) in {shown}{also}"


def collect_paths(
    paths: Iterable[str | Path], exclude: tuple[str, ...] = ()
) -> list[Path | storage.Uri]:
    """The drop files named by ``paths`` (see :func:`discover`), as paths."""
    return [f.path for f in discover(paths, exclude)]
