"""Source formats: which files each one claims, and how it turns their bytes into records.

A format is an object with a ``name``, the file-name ``patterns`` it claims (globs matched
against the file's name) and ``read(path, config) -> SourceFile``, which never raises on bad
input: what it cannot read becomes a finding with the file and line (or row), and the rest of
the file is still read. Every record it yields carries its own provenance (file, line, header;
for a tabular source its row and its own id). A format whose files may be larger than memory
also has ``parts(path, config)``, which yields the file's records a batch at a time (the last
batch carries the file's digest and size); :func:`parts` reads any format that way. A format
whose files can be read in pieces also has ``splits(path, config, size)``: the file cut into
:class:`Split` parts of about ``size`` bytes, each read on its own by ``parts(path, config,
split)`` as the whole file's reader would read that stretch (:func:`splits`).

The registry names each format by the module that defines it, so discovery (which only needs
the patterns) imports no parser, and the validation cache can hash the source of every
registered format: a change to a reader changes the results it caches.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from validation.config import Config
    from validation.records import SourceFile


@dataclass(frozen=True)
class Split:
    """One stretch of a file, read by a task of its own: where it starts and ends (bytes of a
    JSON Lines or CSV file, on line boundaries; record batches or row groups of an Arrow or
    Parquet file), the numbers its first line and row follow, and the whole file's digest,
    size and identity, taken by the one pass that planned the parts (a part that finds the
    file changed since is refused)."""

    number: int  # the part's place in the file, from 0
    start: int
    end: int
    line: int  # lines before the part's first (a columnar file's rows)
    row: int  # rows before its first (a CSV file's data rows, the header not counted)
    sha256: str
    size: int
    identity: tuple[int, int, int]  # the file's inode, size and modification time
    # The next part's `line` and `row` (-1: the last part): what this part's reader must end
    # on for the next part to have started where the whole file's reader would be.
    next_line: int = -1
    next_row: int = -1


class SourceFormat(Protocol):
    name: str
    patterns: tuple[str, ...]

    def read(self, path: Path, config: Config) -> SourceFile: ...


@dataclass(frozen=True)
class FormatEntry:
    """A registered format: its name, the patterns it claims, and where its class lives."""

    name: str
    patterns: tuple[str, ...]
    target: str  # "module:Class", imported on first use

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    def load(self) -> SourceFormat:
        module, _, cls = self.target.partition(":")
        return getattr(importlib.import_module(module), cls)()


REGISTRY: dict[str, FormatEntry] = {}
# The most a part of a large file holds, each part a task of its own (the `split_bytes`
# setting's default; the scan may take smaller parts: curate.scan.run.PARTS_PER_WORKER).
SPLIT_BYTES = 64 << 20


def register(name: str, patterns: tuple[str, ...], target: str) -> None:
    """Register a format. Two formats may not claim the same pattern."""
    if name in REGISTRY:
        raise ValueError(f"source format {name!r} registered twice")
    for other in REGISTRY.values():
        if set(other.patterns) & set(patterns):
            raise ValueError(f"source formats {other.name!r} and {name!r} claim the same files")
    REGISTRY[name] = FormatEntry(name, tuple(patterns), target)


register("text", ("*.txt",), "curate.ingest.formats.text:TextDrops")
register("jsonl", ("*.jsonl", "*.jsonl.gz", "*.json"), "curate.ingest.formats.jsonl:JsonLines")
register("csv", ("*.csv",), "curate.ingest.formats.delimited:Csv")
register("tsv", ("*.tsv",), "curate.ingest.formats.delimited:Tsv")
register("parquet", ("*.parquet",), "curate.ingest.formats.columnar:Parquet")
register("arrow", ("*.arrow",), "curate.ingest.formats.columnar:Arrow")
DEFAULT = "text"  # what a file given by name, that no format claims, is read as
# The metadata `datasets.save_to_disk` writes beside a dataset's Arrow files: never a source,
# though `*.json` claims the name.
NOT_SOURCES = ("dataset_info.json", "state.json", "dataset_dict.json")


def patterns() -> tuple[str, ...]:
    """Every pattern a registered format claims, in registration order."""
    return tuple(p for entry in REGISTRY.values() for p in entry.patterns)


def claim(filename: str) -> str | None:
    """The name of the one format that claims a file of this name, or None."""
    if filename in NOT_SOURCES:
        return None
    for entry in REGISTRY.values():
        if any(fnmatch.fnmatchcase(filename, p) for p in entry.patterns):
            return entry.name
    return None


_loaded: dict[str, SourceFormat] = {}


def get(name: str) -> SourceFormat:
    """The format registered as ``name`` (its module imported on first use)."""
    found = _loaded.get(name)
    if found is None:
        found = _loaded[name] = REGISTRY[name].load()
    return found


def parts(
    name: str, path: Path, config: Config, split: Split | None = None
) -> Iterator[SourceFile]:
    """The file's records a batch at a time (a format without ``parts``: all at once); with
    ``split``, those of that part of it only."""
    fmt = get(name)
    in_parts = getattr(fmt, "parts", None)
    if in_parts is None:
        yield fmt.read(path, config)
    elif split is None:
        yield from in_parts(path, config)
    else:
        yield from in_parts(path, config, split)


def splits(name: str, path: Path, config: Config, size: int) -> list[Split]:
    """The file cut into parts of about ``size`` bytes, or [] when it is read whole: a format
    that cannot be split, a compressed file, a file under twice ``size``, or one whose layout
    a split could misread (a CSV file with a lone carriage return)."""
    planner = getattr(get(name), "splits", None)
    if planner is None or size <= 0:
        return []
    try:
        info = path.stat()
    except OSError:
        return []
    if not stat.S_ISREG(info.st_mode) or info.st_size < 2 * size:
        return []
    found = planner(path, config, size)
    return found if len(found) > 1 else []


def texts(name: str, path: Path, config: Config, wanted: list[int]) -> dict[int, str]:
    """The texts of some records of a file, by their number in it, read again a batch at a
    time: a large tabular file is never held whole for the few a check asks for."""
    left = set(wanted)
    out: dict[int, str] = {}
    first = 0
    for part in parts(name, path, config):
        for i in left.intersection(range(first, first + len(part.records))):
            out[i] = part.records[i - first].text
        first += len(part.records)
        if len(out) == len(left):
            break
    return out


def irregular(path: Path) -> str | None:
    """Why the entry at ``path`` is not read (a FIFO, a device, a folder: it is never opened,
    so nothing can hang on it), or None for a regular file. ``OSError`` if it cannot be
    ``stat``-ed."""
    mode = path.stat().st_mode
    if stat.S_ISREG(mode):
        return None
    kind = {
        stat.S_ISFIFO(mode): "a FIFO (named pipe)",
        stat.S_ISCHR(mode): "a character device",
        stat.S_ISBLK(mode): "a block device",
        stat.S_ISSOCK(mode): "a socket",
        stat.S_ISDIR(mode): "a folder",
    }.get(True, "not a regular file")
    return f"not a regular file: {kind}; not read"


def drop_oversized(source: SourceFile, config: Config | None) -> None:
    """Leave out, each with a ``record-too-large`` error, the records over ``max_record_chars``:
    two drops run together, or a file that is no drop at all. Every format's reader calls it."""
    from validation.config import Config
    from validation.registry import finding

    max_chars = (config or Config()).max_record_chars
    if not max_chars:
        return
    kept = []
    for record in source.records:
        if len(record.text) > max_chars:
            message = (
                f"record of {len(record.text):,} characters, over max_record_chars = "
                f"{max_chars:,}: not checked and not included (two drops run together, or "
                "not a drop at all?)"
            )
            source.findings.append(
                finding("record-too-large", source.path, record.line, message, config)
            )
        else:
            kept.append(record)
    source.records = kept


def module_files() -> list[Path]:
    """The source file of every registered format, and every module of this package (what
    the readers share), for the validation cache's key."""
    files = sorted(Path(__file__).parent.glob("*.py"))
    for entry in REGISTRY.values():
        spec = importlib.util.find_spec(entry.module)
        if spec is not None and spec.origin and Path(spec.origin) not in files:
            files.append(Path(spec.origin))
    return files
