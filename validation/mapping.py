"""The field mapping of tabular sources: which field of a JSONL line, a CSV row or a Parquet
row is the text, and which are the id, title, venue, year and language; which other fields
are carried into the published table as typed columns (the rest are dropped).

It is part of the checks' settings (``[tool.curate.mapping]``), not the build's: a mapping
decides what records a file yields, so it keys the validation cache like a threshold does.
Entries are keyed by a source format's name (``jsonl``, ``csv``, ...) or by a glob matched
against a file's path from the right (``"openreview/*.csv"``); a glob's entry wins over its
format's, the first matching glob over later ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import PurePosixPath
from typing import Any

from validation.findings import did_you_mean

# The types an extra column may be declared with, as ``pyarrow`` names them.
COLUMN_TYPES = ("string", "int32", "int64", "float64", "bool", "list<string>")
_COLUMN_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_GLOB_CHARS = frozenset("*?[/.")


class MappingError(ValueError):
    """A ``[tool.curate.mapping]`` entry that cannot be used (the message names the key;
    ``key`` is its path under the mapping, for the line the config file has it on)."""

    def __init__(self, message: str, key: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Column:
    """An extra column of the table: its name, the source field it is read from, its type."""

    name: str
    field: str
    type: str


@dataclass(frozen=True)
class FieldMap:
    """One entry of ``[tool.curate.mapping]``. Every key but ``text`` is optional."""

    text: str = "text"
    id: str | None = None
    title: str | None = None  # carried as the string column `title`
    venue: str | None = None
    year: str | None = None
    language: str | None = None
    # What a record without its own venue or year (no such field, or null) gets.
    default_venue: str | None = None
    default_year: int | None = None
    columns: tuple[Column, ...] = ()
    delimiter: str | None = None  # CSV and TSV only: default "," for .csv, a tab for .tsv

    def carried(self) -> tuple[Column, ...]:
        """Every extra column this entry fills, the title's first."""
        title = (Column("title", self.title, "string"),) if self.title is not None else ()
        return title + self.columns

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "columns":
                value = {c.name: {"field": c.field, "type": c.type} for c in value}
            out[f.name] = value
        return out


DEFAULT = FieldMap()


def is_glob(key: str) -> bool:
    """Whether a mapping key is a glob (else it names a source format)."""
    return bool(_GLOB_CHARS & set(key))


def mapping_for(mapping: Mapping[str, FieldMap], path: str, format_name: str) -> FieldMap:
    """The entry that applies to the file at ``path`` read as ``format_name``."""
    if mapping:
        pure = PurePosixPath(path)
        for key, entry in mapping.items():
            if is_glob(key) and pure.match(key):
                return entry
        if format_name in mapping:
            return mapping[format_name]
    return DEFAULT


def extra_columns(mapping: Mapping[str, FieldMap]) -> tuple[tuple[str, str], ...]:
    """The extra columns of the table, ``(name, type)``, in the order they are first declared:
    every entry's, once each (two entries may fill one column, with one type)."""
    seen: dict[str, str] = {}
    for entry in mapping.values():
        for column in entry.carried():
            seen.setdefault(column.name, column.type)
    return tuple(seen.items())


def _name(key: str, value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise MappingError(f"{where} {key} must be a field name (a string), got {value!r}")
    return value


def _columns(value: Any, where: str) -> tuple[Column, ...]:
    if not isinstance(value, dict):
        raise MappingError(f'{where} columns must be a table of name = "type", got {value!r}')
    out = []
    for name, spec in value.items():
        if not _COLUMN_NAME.match(name):
            raise MappingError(
                f"{where} columns: {name!r} is not a column name (lower case letters, digits "
                "and _, starting with a letter); read another field into it with "
                f'{name.lower()!r} = {{ field = {name!r}, type = "string" }}'
            )
        field, kind = name, spec
        if isinstance(spec, dict):
            unknown = set(spec) - {"field", "type"}
            if unknown:
                raise MappingError(f"{where} columns.{name}: unknown key {sorted(unknown)[0]!r}")
            field = _name(f"columns.{name}.field", spec.get("field", name), where)
            kind = spec.get("type")
        if kind not in COLUMN_TYPES:
            raise MappingError(
                f"{where} columns.{name}: the type must be one of {', '.join(COLUMN_TYPES)}, "
                f"got {kind!r}"
            )
        out.append(Column(name, field, kind))
    return tuple(out)


def parse_entry(table: Any, where: str, name: str = "") -> FieldMap:
    """One entry from its TOML table; ``where`` names it in messages, ``name`` is its key."""
    if not isinstance(table, dict):
        raise MappingError(f'{where} must be a table (text = "field", ...), got {table!r}')
    known = {f.name for f in fields(FieldMap)}
    values: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in known:
            raise MappingError(
                f"{where} unknown key {raw_key!r}{did_you_mean(key, known)}", (name, raw_key)
            )
        if key == "columns":
            values[key] = _columns(value, where)
        elif key == "default_year":
            if not isinstance(value, int) or isinstance(value, bool):
                raise MappingError(f"{where} default_year must be an integer, got {value!r}")
            values[key] = value
        elif key == "delimiter":
            if not isinstance(value, str) or len(value) != 1 or value in '"\r\n':
                raise MappingError(f"{where} delimiter must be one character, got {value!r}")
            values[key] = value
        elif key == "default_venue":
            if not isinstance(value, str) or not value.strip():
                raise MappingError(f"{where} default_venue must be a string, got {value!r}")
            values[key] = value
        else:
            values[key] = _name(key, value, where)
    entry = FieldMap(**values)
    names = [c.name for c in entry.carried()]
    if len(set(names)) != len(names):
        raise MappingError(f"{where} declares the column {_first_repeat(names)!r} twice")
    return entry


def _first_repeat(names: list[str]) -> str:
    return next(n for i, n in enumerate(names) if n in names[:i])


def parse(table: Any) -> dict[str, FieldMap]:
    """``[tool.curate.mapping]``: a table of entries keyed by format name or glob."""
    if not isinstance(table, dict):
        raise MappingError(
            "[tool.curate.mapping] must be a table of entries ([tool.curate.mapping.jsonl] "
            f'text = "abstract"), got {table!r}'
        )
    out = {key: parse_entry(entry, f"[tool.curate.mapping.{_quoted(key)}]", key)
           for key, entry in table.items()}  # fmt: skip
    types: dict[str, tuple[str, str]] = {}
    for key, entry in out.items():
        for column in entry.carried():
            first = types.setdefault(column.name, (column.type, key))
            if first[0] != column.type:
                raise MappingError(
                    f"[tool.curate.mapping] the column {column.name!r} is {first[0]} in "
                    f"{_quoted(first[1])} and {column.type} in {_quoted(key)}: one column, one type"
                )
    return out


def _quoted(key: str) -> str:
    return f'"{key}"' if is_glob(key) else key
