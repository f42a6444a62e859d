"""The Ray engine's preflight: before the first task of a run, one task on every node checks
that the node can do its share, so that a cluster whose nodes differ fails at once, naming the
node, rather than with findings that name no node or, worse, with other bytes and exit 0.

Each node that can run tasks (alive, with CPUs) gets one task pinned to it, which checks:

- each source root: it can read it, and sees there what this machine sees (a file's size, a
  folder's entry names), not another copy of the data under the same path;
- the work folder (where the tasks write their spools): it reads a token this machine wrote
  there, so it is the same folder and not one of the node's own, and can write a file there;
- the code: the files of the ``curate`` and ``validation`` packages, hashed as the validation
  cache hashes its checks' code (:func:`curate.scan.cache.digest_files`), the Python and
  Unicode versions, and the versions of the libraries the tasks run whose output enters the
  table (:data:`LIBRARIES`).

A node that fails is one line: its id's first 8 characters, its address and what failed.
:class:`PreflightFailed` is exit 3, and the build has written nothing. The local and serial
engines run on this machine's code and files and have no preflight.
"""

from __future__ import annotations

import hashlib
import os
import platform
import secrets
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from curate import storage
from curate.errors import StorageError, WorkerDied

# What the tasks compute with, and so what the table's bytes depend on: the text cleaning
# (ftfy, pylatexenc), the language (langdetect), the signatures and near pairs (rensa, numpy)
# and the reading of tabular sources and the rows (pyarrow).
LIBRARIES = ("ftfy", "langdetect", "numpy", "pyarrow", "pylatexenc", "rensa")
TIMEOUT = 60.0  # seconds a node has to answer: it is one small task
TOKEN = ".curate-preflight"


class PreflightFailed(WorkerDied):
    """A node of the cluster cannot do its share of the run: exit 3, a line per node."""


@dataclass(frozen=True)
class Expected:
    """What every node must find, as this machine found it."""

    roots: tuple[tuple[str, str, str, str], ...]  # as given, absolute, key, description
    work: str | None  # the work folder, absolute
    token: str  # what this machine wrote into the work folder
    code: tuple[tuple[str, str], ...]  # identity()


def _package_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.relative_to(root).parts and p.suffix != ".pyc"
    )


def identity() -> dict[str, str]:
    """The code this process runs: a hash of each package's files, and the versions whose
    output enters the table."""
    import validation
    from curate.scan.cache import digest_files

    found = {"python": platform.python_version(), "unicodedata": unicodedata.unidata_version}
    # This module's own package (curate/engine/preflight.py), as the worker imported it.
    packages = {"curate": Path(__file__).parents[1], "validation": Path(validation.__file__).parent}
    for name, root in packages.items():
        digest = hashlib.sha256()
        digest_files(digest, _package_files(root), root)
        found[name] = digest.hexdigest()
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _look(path: str) -> tuple[str, str]:
    """What is at a source root, cheaply (a key, and words for it): a folder's entry names,
    one level deep, or a file's size and its first byte read (a prefix in storage: the keys
    under it, listed as the node's own credentials allow). Raises ``OSError``."""
    if storage.is_uri(path):
        return _look_in_storage(storage.Uri(path))
    if os.path.isdir(path):
        names = sorted(os.listdir(path))
        key = hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()
        return key, f"a folder of {len(names)} entries"
    with open(path, "rb") as fh:
        fh.read(1)
    size = os.path.getsize(path)
    return f"file:{size}", f"a file of {size:,} bytes"


def _look_in_storage(uri: storage.Uri) -> tuple[str, str]:
    import pyarrow.fs as pafs

    try:
        found = uri.fs.get_file_info(pafs.FileSelector(uri.key, allow_not_found=True))
    except OSError as exc:
        raise StorageError(f"{uri}: {storage.reason(exc)}") from None
    names = sorted(info.base_name for info in found)
    if names:
        key = hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()
        return key, f"a prefix of {len(names)} entries"
    size = uri.stat().st_size
    return f"file:{size}", f"an object of {size:,} bytes"


def _why(exc: OSError) -> str:
    if isinstance(exc, StorageError):
        return str(exc).rpartition(": ")[2] if ": " in str(exc) else str(exc)
    return (exc.strerror or type(exc).__name__).lower()


def probe(expected: Expected) -> list[str]:
    """The task on each node: what fails there, a phrase each (none: the node is fit)."""
    problems = []
    for given, path, key, description in expected.roots:
        try:
            there = _look(path)
        except OSError as exc:
            problems.append(f"cannot read source {given} ({_why(exc)})")
            continue
        if there[0] != key:
            problems.append(
                f"sees other data at source {given} ({there[1]} there, {description} here)"
            )
    if expected.work is not None:
        problems.extend(_probe_work(expected.work, expected.token))
    mine = identity()
    for name, wanted in expected.code:
        have = mine.get(name, "not installed")
        if have == wanted:
            continue
        if name in ("curate", "validation"):
            problems.append(
                f"runs other {name} code (its files hash to {have[:12]} there, {wanted[:12]} here)"
            )
        else:
            problems.append(f"has {name} {have}, this machine {wanted}")
    return problems


def _probe_work(work: str, token: str) -> list[str]:
    try:
        seen = (Path(work) / TOKEN).read_text(encoding="utf-8")
    except FileNotFoundError:
        seen = None
    except OSError as exc:
        return [f"cannot read the work folder {work} ({_why(exc)})"]
    if seen != token:
        return [f"does not share the work folder {work} with this machine (it sees another)"]
    mark = Path(work) / f"{TOKEN}-{secrets.token_hex(8)}"
    try:
        mark.write_bytes(b"")
        mark.unlink()
    except OSError as exc:
        return [f"cannot write the work folder {work} ({_why(exc)})"]
    return []


def _expected(roots: Iterable[str | Path], work: str | Path | None, token: str) -> Expected:
    looked = []
    for given in roots:
        path = str(given) if storage.is_uri(given) else os.path.abspath(given)
        try:
            key, description = _look(path)
        except OSError:
            continue  # this machine cannot read it either: discovery says so, not the preflight
        looked.append((str(given), path, key, description))
    folder = os.path.abspath(work) if work is not None else None
    return Expected(tuple(looked), folder, token, tuple(sorted(identity().items())))


def _node_name(node: dict[str, Any]) -> str:
    address = node.get("NodeManagerAddress") or "?"
    host = node.get("NodeManagerHostname")
    where = f"{address} ({host})" if host and host != address else address
    return f"Ray node {str(node.get('NodeID', '?'))[:8]} at {where}"


def check(ray: Any, roots: Iterable[str | Path], work: str | Path | None) -> None:
    """Run :func:`probe` on every node that runs tasks; raise :class:`PreflightFailed`, a line
    per failing node, if any fails or does not answer within :data:`TIMEOUT`."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    token = secrets.token_hex(16)
    marker = Path(work) / TOKEN if work is not None else None
    if marker is not None:
        marker.write_text(token, encoding="utf-8")
    try:
        expected = _expected(roots, work, token)
        nodes = [
            n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0
        ]
        task = ray.remote(probe)
        refs = [
            task.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
                num_cpus=0,
                max_retries=0,
            ).remote(expected)
            for n in nodes
        ]
        ready = ray.wait(refs, num_returns=len(refs), timeout=TIMEOUT)[0] if refs else []
        lines = []
        for node, ref in zip(nodes, refs, strict=True):
            problems = _answer(ray, ref, ref in ready)
            if problems:
                lines.append(f"{_node_name(node)} {'; '.join(problems)}")
    finally:
        if marker is not None:
            marker.unlink(missing_ok=True)
    if lines:
        lines[-1] += "; nothing was written"
        raise PreflightFailed("\n".join(lines))


def _answer(ray: Any, ref: Any, ready: bool) -> list[str]:
    if not ready:
        ray.cancel(ref, force=True)
        return [f"did not answer the preflight within {TIMEOUT:.0f} s"]
    try:
        return list(ray.get(ref))
    except Exception as exc:  # the task could not run there: an import, a dead worker
        cause = getattr(exc, "cause", None) or exc
        first = (str(cause).strip().splitlines() or [""])[0]
        return [f"cannot run the preflight ({type(cause).__name__}: {first})"]
