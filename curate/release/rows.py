"""A release's rows as Arrow holds them: kept as their Parquet bytes, matched by id, compared a
column and a window of rows at a time, and made Python rows only where a comparison or a build
asks for them.

Every build that continues a release reads it, and a release of a million records is a few
hundred MB of Parquet, a few GB decoded, and many GB as a dict per row. So a release is held as
its files' bytes (as compressed as on disk) with its ids decoded, and nothing here makes a
Python object per row: ids are matched by Arrow's hash lookup and columns compared by its
kernels, a window of rows decoded at a time. Only the rows a comparison finds (added, removed,
perhaps differing) or a build asks about become dicts, and whether a pair of rows differs, and
in which columns, is then decided on those dicts as it always was (:func:`compared`): the
kernels only narrow the rows down, never decide alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from curate.errors import ReleaseError

CHUNK = 16_384  # matched rows compared at a time: with a row group, what a comparison decodes
PLACES = ("line", "row")  # where an occurrence was in its file: never a change of a record


class StoredRows:
    """Rows held as the bytes of their Parquet files, in their order, decoded where asked: a
    window of rows (the row groups holding it), some columns, or rows by index. Their ids
    are decoded once, to match them."""

    def __init__(self, files: list[tuple[str, pa.Buffer]], label: str) -> None:
        """``files``: each file's name and its bytes."""
        self._label = label
        self._buffers = files
        self._files = [(name, pq.ParquetFile(pa.BufferReader(data))) for name, data in files]
        groups = [(f, g, pf.metadata.row_group(g).num_rows)
                  for f, (_, pf) in enumerate(self._files)
                  for g in range(pf.metadata.num_row_groups)]  # fmt: skip
        self._groups = [(f, g) for f, g, _ in groups]
        self._starts = np.concatenate([[0], np.cumsum([n for *_, n in groups])]).astype(np.int64)
        self.num_rows = int(self._starts[-1])
        self.schema = self._files[0][1].schema_arrow.remove_metadata()
        self._ids: pa.ChunkedArray | None = None
        # The row group last decoded: the windows of a comparison are smaller than a group
        self._last: tuple[tuple[int, tuple[str, ...] | None], pa.Table] | None = None

    @classmethod
    def of(cls, table: pa.Table, label: str = "rows") -> StoredRows:
        """``table``'s rows, written as one Parquet file held in memory."""
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        return cls([("table.parquet", sink.getvalue())], label)

    def __reduce__(self) -> tuple[Any, ...]:  # a release pickles as its files' bytes
        return (StoredRows, (self._buffers, self._label))

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    @property
    def ids(self) -> pa.ChunkedArray:
        if self._ids is None:
            self._ids = self.column("id")
        return self._ids

    def column(self, name: str, lo: int = 0, hi: int | None = None) -> pa.ChunkedArray:
        """Rows ``lo`` to ``hi`` (all: None) of one column."""
        return self.read([name], lo, hi).column(0)

    def read(
        self, columns: list[str] | None = None, lo: int = 0, hi: int | None = None
    ) -> pa.Table:
        """Rows ``lo`` to ``hi`` (all: None) of ``columns`` (all: None), decoded from the row
        groups that hold them."""
        hi = self.num_rows if hi is None else hi
        first = int(np.searchsorted(self._starts, lo, side="right")) - 1
        parts = []
        for k in range(max(first, 0), len(self._groups)):
            start, end = int(self._starts[k]), int(self._starts[k + 1])
            if start >= hi:
                break
            a, b = max(lo, start) - start, min(hi, end) - start
            parts.append(self._group(k, columns).slice(a, b - a))
        if not parts:
            empty = self.schema.empty_table()
            return empty if columns is None else empty.select(columns)
        return pa.concat_tables(parts)

    def _group(self, k: int, columns: list[str] | None) -> pa.Table:
        key = (k, None if columns is None else tuple(columns))
        if self._last is None or self._last[0] != key:
            f, g = self._groups[k]
            name, pf = self._files[f]
            try:
                part = pf.read_row_group(g, columns=columns)
            except (OSError, pa.ArrowException) as exc:
                raise ReleaseError(f"{self._label}: cannot read {name}: {exc}") from None
            self._last = (key, part.replace_schema_metadata(None))
        return self._last[1]

    def take(self, indices: np.ndarray, columns: list[str] | None = None) -> list[dict[str, Any]]:
        """The rows at ``indices``, as dicts, in that order: a row group decoded at a time."""
        out: list[Any] = [None] * len(indices)
        if not len(indices):
            return out
        where = np.searchsorted(self._starts, indices, side="right") - 1
        order = np.argsort(where, kind="stable")
        groups, first = np.unique(where[order], return_index=True)
        for k, sel in zip(groups.tolist(), np.split(order, first[1:]), strict=True):
            start, end = int(self._starts[k]), int(self._starts[k + 1])
            part = self.read(columns, start, end).take(indices[sel] - start).to_pylist()
            for i, row in zip(sel.tolist(), part, strict=True):
                out[i] = row
        return out


def compared(column: str, value: Any) -> Any:
    """A column's value as releases compare it: ``sources`` without the places of its
    occurrences, which a release before they left the table still holds."""
    if column != "sources" or not isinstance(value, list):
        return value
    return [{k: v for k, v in s.items() if k not in PLACES} if isinstance(s, dict) else s
            for s in value]  # fmt: skip


def _same_or_both_null(a: Any, b: Any, equal: Any) -> np.ndarray:
    same = pc.or_(pc.fill_null(equal, False), pc.and_(a.is_null(), b.is_null()))
    return same.to_numpy(zero_copy_only=False)


def repeated(ids: pa.ChunkedArray) -> int | None:
    """The first row, in table order, whose id an earlier row has (None: each id once)."""
    if pc.count_distinct(ids, mode="all").as_py() == len(ids):
        return None
    at = pa.array(np.arange(len(ids), dtype=np.int64))
    ranked = pa.table({"id": ids, "at": at}).sort_by([("id", "ascending"), ("at", "ascending")])
    key, order = ranked.column("id"), ranked.column("at")
    again = _same_or_both_null(key[1:], key[:-1], pc.equal(key[1:], key[:-1]))
    return int(order.to_numpy()[1:][again].min())  # a row whose id the row before it has


@dataclass
class Matched:
    """The rows of two tables matched by id: ``old[i]`` and ``new[i]`` hold one id (in the new
    table's order); ``added`` are the new rows whose id the old table lacks, ``removed`` the
    old rows whose id the new one lacks (row indices, each in its table's order)."""

    old: np.ndarray
    new: np.ndarray
    added: np.ndarray
    removed: np.ndarray


def _lookup(values: pa.ChunkedArray, among: pa.ChunkedArray) -> pa.ChunkedArray:
    """For each of ``values``, the index of its first equal in ``among`` (null: none). Ids of
    kinds that never compare equal as Python values (text and numbers) match nothing."""

    def kind(t: pa.DataType) -> str:
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return "text"
        return "integer" if pa.types.is_integer(t) else str(t)

    if kind(values.type) != kind(among.type):
        return pa.chunked_array([pa.nulls(len(values), pa.int32())])
    if not values.type.equals(among.type):  # string and large_string, int32 and int64
        common = pa.large_string() if kind(values.type) == "text" else pa.int64()
        values, among = values.cast(common), among.cast(common)
    return pc.index_in(values, value_set=among.combine_chunks())


def match(old_ids: pa.ChunkedArray, new_ids: pa.ChunkedArray) -> Matched:
    at = _lookup(new_ids, old_ids)
    found = at.is_valid().to_numpy()
    old = at.filter(pa.array(found)).cast(pa.int64()).to_numpy()
    seen = np.zeros(len(old_ids), dtype=bool)
    seen[old] = True
    return Matched(old, np.flatnonzero(found), np.flatnonzero(~found), np.flatnonzero(~seen))


def rows_by_id(rows: StoredRows, ids: Iterable[Any], columns: Sequence[str]) -> dict[Any, dict]:
    """The rows of ``ids`` that ``rows`` holds, by id, with ``id`` and those of ``columns`` it
    has."""
    wanted = list(ids)
    if not wanted:
        return {}
    keep = ["id", *(c for c in columns if c in rows.column_names and c != "id")]
    try:
        asked = pa.array(wanted, rows.schema.field("id").type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):  # ids of another kind
        return {}
    at = np.flatnonzero(pc.is_in(rows.ids, value_set=asked).to_numpy(zero_copy_only=False))
    return {row["id"]: row for row in rows.take(at, keep)}


def differing(old: StoredRows, new: StoredRows, matched: Matched, columns: list[str]) -> np.ndarray:
    """The positions in ``matched`` whose rows may differ in one of ``columns`` (compared as
    :func:`compared` has them): every pair that does, and perhaps some that do not (sources
    that hold nothing but places), which the caller compares as Python values."""
    n = len(matched.old)
    out = np.zeros(n, dtype=bool)
    for column in columns:
        whole: dict[int, pa.ChunkedArray] = {}  # a side's column, if its rows are out of order
        for lo in range(0, n, CHUNK):
            a = _at(old, column, matched.old[lo : lo + CHUNK], whole)
            b = _at(new, column, matched.new[lo : lo + CHUNK], whole)
            out[lo : lo + CHUNK] |= _differ(column, a, b)
    return np.flatnonzero(out)


def _at(rows: StoredRows, column: str, at: np.ndarray, whole: dict[int, Any]) -> pa.ChunkedArray:
    """``column`` at rows ``at``: from the window of rows they span where they ascend (as two
    builds' rows do, both in id order), else from the whole column, decoded once."""
    if len(at) > 1 and not bool((np.diff(at) > 0).all()):
        if id(rows) not in whole:
            whole[id(rows)] = rows.column(column)
        return whole[id(rows)].take(at)
    lo, hi = (int(at[0]), int(at[-1]) + 1) if len(at) else (0, 0)
    window = rows.column(column, lo, hi)
    return window if hi - lo == len(at) else window.take(at - lo)


def _differ(column: str, a: Any, b: Any) -> np.ndarray:
    if pa.types.is_nested(a.type) or pa.types.is_nested(b.type):
        a, b = _array(a), _array(b)
    try:
        fast = _differ_by_arrow(column, a, b)
    except (TypeError, pa.ArrowException):  # a type the kernels do not take
        fast = None
    if fast is not None:
        return fast
    pairs = zip(a.to_pylist(), b.to_pylist(), strict=True)  # another type on each side
    return np.array([compared(column, x) != compared(column, y) for x, y in pairs], dtype=bool)


def _differ_by_arrow(column: str, a: pa.Array, b: pa.Array) -> np.ndarray | None:
    """Where ``a`` and ``b`` differ, by Arrow's kernels (None: not of one type)."""
    if column == "sources":
        a, b = _without_places(a), _without_places(b)
    if not a.type.equals(b.type):
        return None
    return ~_equal(a, b)


def _equal(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Where ``a`` and ``b``, of one type, hold equal values as Python compares them: a null
    equals a null, a NaN nothing, lists item by item, structs field by field."""
    both_null = ~_valid(a) & ~_valid(b)
    kind = a.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        length_a, length_b = (pc.fill_null(pc.list_value_length(x), -1).to_numpy() for x in (a, b))
        rows = length_a == length_b  # a null list (-1) never equals a list
        rows &= length_a >= 0
        # The items of the rows whose lengths agree, which then stand side by side
        parent_a, parent_b = (pc.list_parent_indices(x).to_numpy() for x in (a, b))
        kept = rows[parent_a]
        same = _equal(pc.list_flatten(a).filter(pa.array(kept)),
                      pc.list_flatten(b).filter(pa.array(rows[parent_b])))  # fmt: skip
        bad = np.bincount(parent_a[kept][~same], minlength=len(a)) > 0
        return both_null | (rows & ~bad)
    if pa.types.is_struct(kind):
        same = _valid(a) & _valid(b)
        for i in range(kind.num_fields):
            same &= _equal(pc.struct_field(a, [i]), pc.struct_field(b, [i]))
        return both_null | same
    return both_null | pc.fill_null(pc.equal(a, b), False).to_numpy(zero_copy_only=False)


def _valid(values: Any) -> np.ndarray:
    return values.is_valid().to_numpy(zero_copy_only=False)


def _struct_items(kind: pa.DataType) -> pa.StructType | None:
    listed = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    return kind.value_type if listed and pa.types.is_struct(kind.value_type) else None


def _relist(values: pa.Array, items: pa.Array) -> pa.Array:
    """``values`` (a list array) with its items, as :func:`pyarrow.compute.list_flatten`
    gives them, replaced by ``items``."""
    lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy().astype(np.int64)
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
    return pa.LargeListArray.from_arrays(offsets, items, mask=values.is_null())


def _without_places(values: pa.Array) -> pa.Array:
    struct = _struct_items(values.type)
    if struct is None or not any(f.name in PLACES for f in struct):
        return values
    keep = [i for i, f in enumerate(struct) if f.name not in PLACES]
    if not keep:  # nothing but places: compared with them, and the rows as Python values
        return values
    items = pc.list_flatten(values)
    kept = pa.StructArray.from_arrays(
        [pc.struct_field(items, [i]) for i in keep],
        fields=[struct.field(i) for i in keep],
        mask=items.is_null(),
    )
    return _relist(values, kept)


def places(rows: StoredRows, positions: pa.Table | None) -> pa.Array | None:
    """Where each row's sources are, ``[(file, line, row), …]`` of one type whatever the
    files' types, in the table's order (null: an id the positions do not list): a build's
    positions (``id``, ``sources``), or those the table still holds (a release before they
    left it), or None."""
    if positions is not None:
        listed = _places(positions.column("sources").combine_chunks())
        return listed.take(_lookup(rows.ids, positions.column("id")))
    if rows.num_rows == 0 or "sources" not in rows.column_names:
        return None
    first = rows.column("sources", 0, 1)[0].as_py()
    if not all(isinstance(s, dict) and "line" in s for s in (first or [None])):
        return None
    return _places(rows.column("sources").combine_chunks())


def _places(sources: pa.Array) -> pa.Array:
    items = pc.list_flatten(sources)
    names = [f.name for f in items.type]

    def field(name: str, kind: pa.DataType) -> pa.Array:
        if name not in names:
            return pa.nulls(len(items), kind)
        return pc.struct_field(items, [names.index(name)]).cast(kind)

    struct = pa.StructArray.from_arrays(
        [field("file", pa.large_string()), field("line", pa.int64()), field("row", pa.int64())],
        names=["file", "line", "row"],
    )
    return _relist(sources, struct)


def moved(before: pa.Array, after: pa.Array, matched: Matched) -> np.ndarray:
    """For each matched pair, whether its places differ (one side listing none included)."""
    a, b = before.take(matched.old), after.take(matched.new)
    return ~_equal(_array(a), _array(b))


def _array(values: Any) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
