"""The one contract of the published dataset.

:data:`COLUMNS` declares every column once, as data; the Arrow schema the table is written
with, the pandera schema its rows are checked against before writing, the Hugging Face
``Features`` in the card and the Croissant fields are all generated from it, so they can never
disagree about a column. A build of tabular sources publishes a :class:`Contract` that adds to
it, from the same declarations: the extra columns its field mapping carries
(``[tool.curate.mapping]``) with ``source_id`` when it names an ``id``, and each occurrence's
source id in ``sources``.

The rows are checked as :mod:`validation.schema` checks the parsed records: the same rules are
first evaluated in plain Python over the rows, which only proves "nothing to report"; where a
row might fail, pandera validates the frame and says what fails. A build whose rows all hold
(every sound build) never imports pandera.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    import pandas as pd

    from validation.config import Config

# An occurrence names its file, never its place in it (line, row): a source whose records are
# only reordered gives the same table, byte for byte. The places are the build's
# (`curate.dataset.manifest.POSITIONS`, beside the release), for the report and the diff.
SOURCE_TYPE = pa.struct(
    [
        pa.field("file", pa.string(), nullable=False),
        pa.field("header", pa.string()),
        pa.field("header_language", pa.string()),
        pa.field("match", pa.string(), nullable=False),
        pa.field("similarity", pa.float64()),
    ]
)


@dataclass(frozen=True)
class Column:
    """One column of the published table: its Arrow type, its description (the card's and the
    Croissant file's), whether it may be null, and what its values must hold (pandera's checks,
    generated below: ``pattern`` must match, ``min_length`` characters at least, a number from
    ``min_value`` to ``max_value``, ``unique``; ``check`` a test of each value that is not null,
    with the error it reports)."""

    name: str
    type: pa.DataType
    description: str
    nullable: bool = False
    pattern: str | None = None
    min_length: int | None = None
    min_value: int | None = None
    max_value: int | None = None
    unique: bool = False
    check: tuple[Callable[[Any], bool], str] | None = None  # (test of a value, its error)


def _sources_ok(sources: Any) -> bool:
    items = list(sources)
    return (
        len(items) >= 1
        and items[0]["match"] == "original"
        and all(s["match"] in MATCH_KINDS for s in items)
        and all((s["similarity"] is None) == (s["match"] != "near") for s in items)
    )


# The published table, column by column: the one declaration that the Arrow schema, the pandera
# contract, the card's and the Croissant file's fields are made from.
COLUMNS: list[Column] = [
    Column(
        "id", pa.string(),
        "Stable id: first 16 hex digits of the SHA-256 of the normalised text.",
        pattern=r"^[0-9a-f]{16}\Z", unique=True,  # \Z: "$" would allow a final newline
    ),
    Column(
        "abstract", pa.string(),
        "The abstract as plain Unicode text (markup converted, NFC).", min_length=1,
    ),
    Column(
        "abstract_raw", pa.string(),
        "The abstract exactly as found in the source drop.", min_length=1,
    ),
    Column("venue", pa.string(), "Venue named by the drop's header, e.g. ICML.", nullable=True),
    Column(
        "year", pa.int32(), "Year named by the drop's header.", nullable=True,
        min_value=1950, max_value=2100,
    ),
    Column(
        "language", pa.string(), "Language of the abstract (ISO 639-1), by script or langdetect.",
        nullable=True,
    ),
    Column(
        "word_count", pa.int32(),
        "Number of words of `abstract` (whitespace-separated; each CJK character is one).",
        min_value=1,
    ),
    Column("char_count", pa.int32(), "Number of characters of `abstract`.", min_value=1),
    Column("has_math", pa.bool_(), "Whether the raw text held LaTeX math."),
    Column(
        "markup", pa.list_(pa.string()),
        "Kinds of markup found in the raw text and converted: latex, markdown, html.",
    ),
    Column(
        "flags", pa.list_(pa.string()),
        "Finding codes that fired on this abstract and whose row policy is `flag` (for example "
        "truncated, too-long): kept, but worth a look; `math-kept` when some of its math is "
        "published as its TeX source between $…$; empty for most rows.",
    ),
    Column(
        "sources", pa.list_(SOURCE_TYPE),
        "Every occurrence of this abstract in the drops, the kept one first, the others in the "
        "order of their content: file, header, header language, match (original, exact or "
        "near) and, for near-duplicates, the Jaccard similarity.",
        check=(_sources_ok, "sources must start with the original"),
    ),
]  # fmt: skip

ARROW_SCHEMA = pa.schema([pa.field(c.name, c.type, nullable=c.nullable) for c in COLUMNS])
DESCRIPTIONS = {c.name: c.description for c in COLUMNS}
MATCH_KINDS = ("original", "exact", "near")

# What each occurrence of a record from a tabular source adds in `sources`; a build of text
# drops alone keeps the struct above, and its releases' schema.
TABULAR_SOURCE_FIELDS = (
    pa.field("source_id", pa.string()),  # the id the source gives the record (mapped `id`)
)
SOURCE_ID = "source_id"  # the column of the kept occurrence's own id, when the mapping names one
# The Arrow type of an extra column, by the name `[tool.curate.mapping]` declares it with.
EXTRA_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "list<string>": pa.list_(pa.string()),
}


@dataclass(frozen=True)
class Contract:
    """The published table of one build: its columns, and what is made from them."""

    columns: tuple[Column, ...]

    @functools.cached_property
    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.type, nullable=c.nullable) for c in self.columns])

    @functools.cached_property
    def descriptions(self) -> dict[str, str]:
        return {c.name: c.description for c in self.columns}

    @functools.cached_property
    def extra(self) -> tuple[str, ...]:
        """The names of the columns beyond :data:`COLUMNS`: those the mapping carries."""
        base = {c.name for c in COLUMNS}
        return tuple(c.name for c in self.columns if c.name not in base)

    @property
    def tabular(self) -> bool:
        """Whether each occurrence in ``sources`` has a row and a source id."""
        return self.schema.field("sources").type.value_type != SOURCE_TYPE

    def pandera(self) -> Any:
        return _pandera_schema(self.columns)

    def named(self, text_column: str = "abstract", noun: str = "abstract") -> Contract:
        """The table as published: the text columns named ``text_column`` and
        ``text_column``_raw, the descriptions calling a record ``noun``. The build makes and
        checks its rows under the names of :data:`COLUMNS` and renames them as it writes."""
        if (text_column, noun) == ("abstract", "abstract"):
            return self
        names = {"abstract": text_column, "abstract_raw": f"{text_column}_raw"}

        def words(text: str) -> str:
            return text.replace("`abstract`", f"`{text_column}`").replace("abstract", noun)

        return Contract(
            tuple(replace(c, name=names.get(c.name, c.name), description=words(c.description))
                  for c in self.columns)
        )  # fmt: skip


TEXT = Contract(tuple(COLUMNS))  # the table of a build of text drops alone


def extra_column(name: str, kind: str, fields: list[str]) -> Column:
    """An extra column the field mapping carries: nullable, as a source may lack the field."""
    named = ", ".join(f"`{f}`" for f in fields)
    return Column(
        name, EXTRA_TYPES[kind],
        f"Carried from the sources' field {named} ({kind}), as the field mapping says; null "
        "for a record whose source has no such field.",
        nullable=True,
    )  # fmt: skip


def contract_for(config: Config, tabular: bool, headers: bool = True) -> Contract:
    """The table of a build with these checks' settings (their field mapping's extra columns)
    and, if ``tabular``, a source that is not a text drop; ``headers``: a text drop too. The
    venue and year columns say where their values came from: a drop's header, the mapped
    fields, the mapping's defaults."""
    from validation.mapping import extra_columns

    fields: dict[str, list[str]] = {}
    for entry in config.mapping.values():
        for column in entry.carried():
            named = fields.setdefault(column.name, [])
            if column.field not in named:
                named.append(column.field)
    extra = tuple(extra_column(n, k, fields[n]) for n, k in extra_columns(config.mapping))
    languages = [f"`{e.language}`" for e in config.mapping.values() if e.language is not None]
    language = DESCRIPTIONS["language"]
    if languages:
        language = (
            f"Language of the abstract (ISO 639-1): from the source's field "
            f"{' or '.join(dict.fromkeys(languages))}, else by script or langdetect."
        )
    ids = list(dict.fromkeys(e.id for e in config.mapping.values() if e.id is not None))
    if ids:
        extra = (source_id_column(ids), *(c for c in extra if c.name != SOURCE_ID))
    origins = (_origin("venue", config, headers), _origin("year", config, headers), language)
    return _contract(extra, tabular, origins if tabular else ())


def _origin(what: str, config: Config, headers: bool) -> str:
    """Where the ``what`` (venue or year) of a row came from, as its column's description."""
    mapped = list(dict.fromkeys(getattr(e, what) for e in config.mapping.values()))
    defaults = list(dict.fromkeys(getattr(e, f"default_{what}") for e in config.mapping.values()))
    ways = ["named by the text drop's header"] if headers else []
    named = [f"`{f}`" for f in mapped if f is not None]
    if named:
        ways.append(f"from the source's field {' or '.join(named)}")
    given = [repr(d) if isinstance(d, str) else str(d) for d in defaults if d is not None]
    if given:
        ways.append(
            f"else {' or '.join(given)} (the field mapping's `default_{what}`)" if named
            else f"{' or '.join(given)}, as the field mapping's `default_{what}` says"
        )  # fmt: skip
    if not ways:
        return f"{what.capitalize()}: null, as no source names one (map a field to `{what}`)."
    return f"{what.capitalize()} of the record, {'; '.join(ways)}; null where none applies."


def source_id_column(fields: list[str]) -> Column:
    """The record's own id, as its source gives it: the key a user joins releases on (the
    table's `id` is a hash of the text, so an edit changes it; this does not)."""
    named = ", ".join(f"`{f}`" for f in fields)
    return Column(
        SOURCE_ID, pa.string(),
        f"The id the sources give the record (their field {named}, as text), of the occurrence "
        "kept when several merged into this row (`sources` has every one's); null for a record "
        "without one.",
        nullable=True,
    )  # fmt: skip


@functools.cache
def _contract(extra: tuple[Column, ...], tabular: bool, origins: tuple[str, ...] = ()) -> Contract:
    if not extra and not tabular:
        return TEXT
    columns = list(COLUMNS)
    if origins:
        described = dict(zip(("venue", "year", "language"), origins, strict=True))
        columns = [replace(c, description=described.get(c.name, c.description)) for c in columns]
    if tabular:
        sources = pa.list_(pa.struct([*SOURCE_TYPE, *TABULAR_SOURCE_FIELDS]))
        columns = [
            replace(
                c, type=sources,
                description=c.description[:-1] + "; from a tabular source also the id the "
                "source gives it.",
            ) if c.name == "sources" else c
            for c in columns
        ]  # fmt: skip
    return Contract((*columns, *extra))


# The `datasets` dtype of each Arrow type the table may use, as `datasets` names it (Arrow's
# "double" is its "float64"). tests/dataset/test_table.py holds this to the real library.
HF_DTYPES: dict[pa.DataType, str] = {
    pa.bool_(): "bool",
    **{getattr(pa, f"{s}int{b}")(): f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64)},
    pa.float16(): "float16",
    pa.float32(): "float32",
    pa.float64(): "float64",
    pa.string(): "string",
    pa.large_string(): "large_string",
    pa.binary(): "binary",
    pa.large_binary(): "large_binary",
}


def hf_features(schema: pa.Schema = ARROW_SCHEMA) -> dict[str, Any]:
    """The Hugging Face ``Features`` of ``schema`` in their JSON form: what
    ``datasets.Features.from_arrow_schema(schema).to_dict()`` returns, without importing
    ``datasets`` (seconds at start-up, and a large dependency for one small dict).

    Written into the Parquet file's metadata and, as YAML, the card, so that loaders keep the
    declared types. Covers the types of :data:`HF_DTYPES`, lists and structs; any other type
    raises ``TypeError`` rather than guess, and tests/dataset/test_table.py compares the result with
    the real library, so the two cannot drift apart unnoticed.
    """

    def feature(typ: pa.DataType) -> dict[str, Any]:
        if pa.types.is_struct(typ):
            return {field.name: feature(field.type) for field in typ}
        if pa.types.is_list(typ):
            return {"feature": feature(typ.value_type), "_type": "List"}
        if pa.types.is_large_list(typ):
            return {"feature": feature(typ.value_type), "_type": "LargeList"}
        if typ in HF_DTYPES:
            return {"dtype": HF_DTYPES[typ], "_type": "Value"}
        raise TypeError(f"no Hugging Face feature is defined here for the Arrow type {typ}")

    return {field.name: feature(field.type) for field in schema}


def _pandas_dtype(column: Column) -> Any:
    if pa.types.is_string(column.type):
        return str
    if pa.types.is_boolean(column.type):
        return "boolean" if column.nullable else bool
    if pa.types.is_int32(column.type):
        return "Int32" if column.nullable else "int32"
    if pa.types.is_int64(column.type):
        return "Int64" if column.nullable else "int64"
    if pa.types.is_float64(column.type):
        return "Float64" if column.nullable else "float64"
    return object  # lists and structs: pandas holds them as Python objects


def _pandera_column(column: Column) -> Any:
    import pandera.pandas as pa_schema

    checks = []
    if column.pattern is not None:
        checks.append(pa_schema.Check.str_matches(column.pattern))
    if column.min_length is not None:
        checks.append(pa_schema.Check.str_length(min_value=column.min_length))
    if column.min_value is not None and column.max_value is not None:
        checks.append(pa_schema.Check.in_range(column.min_value, column.max_value))
    elif column.min_value is not None:
        checks.append(pa_schema.Check.ge(column.min_value))
    if column.check is not None:
        checks.append(pa_schema.Check(column.check[0], element_wise=True, error=column.check[1]))
    return pa_schema.Column(
        _pandas_dtype(column), checks or None, nullable=column.nullable, unique=column.unique
    )


@functools.cache
def _pandera_schema(columns: tuple[Column, ...]) -> Any:
    import pandera.pandas as pa_schema

    return pa_schema.DataFrameSchema(
        {c.name: _pandera_column(c) for c in columns},
        strict=True,
        ordered=True,
        name="published table",
    )


class TableContractBroken(ValueError):
    """Rows break the published table's contract. Validation may let such a record through
    when its finding is only a warning (``schema`` set to ``warning``: a header year of 1066);
    the table still may not hold it, and the build is refused with where and why."""


def check_rows(rows: list[dict[str, Any]], contract: Contract = TEXT) -> None:
    """The published table's contract, on some rows before they are written."""
    if rows_hold(rows, contract.columns):
        return
    import pandas as pd
    from pandera.errors import SchemaErrors

    frame = pd.DataFrame(rows, columns=contract.schema.names)
    for c in contract.columns:
        dtype = _pandas_dtype(c)
        if isinstance(dtype, str):
            frame[c.name] = frame[c.name].astype(dtype)
    try:
        contract.pandera().validate(frame, lazy=True)
    except SchemaErrors as exc:
        raise TableContractBroken(_broken(exc.failure_cases, rows)) from None


def check_table(table: pa.Table, contract: Contract = TEXT) -> None:
    """The published table's contract, on some rows already in Arrow: the rules of
    :func:`rows_hold` a column at a time with Arrow's kernels, and only where a row might fail
    the rows in Python, for pandera to say what fails. Columns beyond the contract's (a row's
    places) are carried along for its message."""
    if columns_hold(table, contract.columns):
        return
    check_rows(table.to_pylist(), contract)


def columns_hold(table: pa.Table, columns: tuple[Column, ...] | list[Column]) -> bool:
    """Whether every row of ``table`` surely holds the contract of ``columns`` (False: let
    pandera see): what :func:`rows_hold` asks of Python rows, asked of Arrow columns. A column
    of another Arrow type than its declaration's is left to pandera; a column's ``pattern`` and
    ``check`` are Python's (``re``, a test of a value), run over that column's values alone."""
    import pyarrow.compute as pc

    for column in columns:
        if column.name not in table.column_names:
            return False
        chunks = table.column(column.name)
        if chunks.type != column.type:
            return False
        if column.unique and pc.count_distinct(chunks, mode="all").as_py() != len(chunks):
            return False
        for values in chunks.chunks:
            try:
                values.validate(full=True)  # text Arrow holds is UTF-8: never a lone surrogate
            except pa.ArrowInvalid:
                return False
            if column.nullable:
                values = values.drop_null()
            if len(values) and not _column_holds(column, values):
                return False
    return True


def _column_holds(column: Column, values: pa.Array) -> bool:
    """Whether these values, none of them null unless the column says so, hold ``column``."""
    import pyarrow.compute as pc

    if not _arrow_typed(values):
        return False
    pattern = column.pattern
    if pattern is not None and not all(map(_pattern(pattern).match, _python(values))):
        return False  # pandera's str_matches is re.match
    shortest = column.min_length
    if shortest is not None and pc.min(pc.utf8_length(values)).as_py() < shortest:
        return False
    if column.min_value is not None or column.max_value is not None:
        bounds = pc.min_max(values)
        if column.min_value is not None and bounds["min"].as_py() < column.min_value:
            return False
        if column.max_value is not None and bounds["max"].as_py() > column.max_value:
            return False
    return column.check is None or all(map(column.check[0], _python(values)))


def _python(values: pa.Array, step: int = 4_096) -> Iterator[Any]:
    """The values as Python objects, made a slice at a time: a column's are never all held."""
    for start in range(0, len(values), step):
        yield from values.slice(start, step).to_pylist()


def _arrow_typed(values: pa.Array) -> bool:
    """Whether no value is null or NaN, nor any item of a list or a field of a struct the type
    does not declare nullable: what :func:`_typed` asks of Python values that Arrow's types do
    not already say."""
    import pyarrow.compute as pc

    if values.null_count:
        return False
    kind = values.type
    if pa.types.is_floating(kind):
        return not pc.any(pc.is_nan(values)).as_py()
    if pa.types.is_list(kind):
        return _arrow_typed(values.flatten())
    if pa.types.is_struct(kind):
        for field, child in zip(kind, values.flatten(), strict=True):
            if field.nullable:
                child = child.drop_null()
            if len(child) and not _arrow_typed(child):
                return False
    return True


_INT_RANGES = {
    pa.int8(): (-(2**7), 2**7 - 1), pa.int16(): (-(2**15), 2**15 - 1),
    pa.int32(): (-(2**31), 2**31 - 1), pa.int64(): (-(2**63), 2**63 - 1),
}  # fmt: skip
_SURROGATE = re.compile("[\ud800-\udfff]")  # a string Arrow cannot encode


def rows_hold(rows: list[dict[str, Any]], columns: tuple[Column, ...] | list[Column]) -> bool:
    """Whether every row surely holds the contract of ``columns`` (False: let pandera see).

    Each row must have every column; every value must be of its column's type (a list of the
    items its Arrow type names, a struct with every field) and hold the column's rules, a null
    only where the column is nullable and then looked at by no other rule, as in pandera; a
    unique column may hold no value twice. Stricter than pandera where that is simpler: a float
    column's numbers must be floats or ints. A column at a time, in C-level passes (``map``,
    ``set``, ``min``), since the rows are checked at every build.
    """
    try:
        for column in columns:
            values = [row[column.name] for row in rows]
            if column.unique and len(set(values)) != len(values):
                return False
            if column.nullable:
                values = [v for v in values if v is not None]
            if not _values_hold(column, values):
                return False
    except (KeyError, TypeError, OverflowError):  # a column missing, a value not comparable
        return False
    return True


def _values_hold(column: Column, values: list[Any]) -> bool:
    """Whether these values, none of them null unless the column says so, hold ``column``."""
    if not values:
        return True
    kind = column.type
    if not _typed(kind, values):
        return False
    if column.pattern is not None and not all(map(_pattern(column.pattern).match, values)):
        return False  # pandera's str_matches is re.match
    if column.min_length is not None and min(map(len, values)) < column.min_length:
        return False
    if column.min_value is not None and min(values) < column.min_value:
        return False
    if column.max_value is not None and max(values) > column.max_value:
        return False
    return column.check is None or all(map(column.check[0], values))


def _typed(kind: pa.DataType, values: list[Any]) -> bool:
    """Whether every value is a non-null value Arrow writes as ``kind`` unchanged."""
    types = set(map(type, values))
    if pa.types.is_string(kind):
        return types == {str} and not any(
            map(_SURROGATE.search, itertools.filterfalse(str.isascii, values))
        )
    if pa.types.is_boolean(kind):
        return types == {bool}
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        return types == {int} and low <= min(values) and max(values) <= high
    if pa.types.is_floating(kind):
        return types <= {float, int} and not any(map(math.isnan, values))  # pandas' null
    if pa.types.is_list(kind):
        items = list(itertools.chain.from_iterable(values)) if types == {list} else None
        return items is not None and (not items or _typed(kind.value_type, items))
    if pa.types.is_struct(kind):
        if types != {dict} or set(map(len, values)) != {kind.num_fields}:
            return False
        for field in kind:
            got = list(map(operator.itemgetter(field.name), values))
            if field.nullable:
                got = [v for v in got if v is not None]
            if got and not _typed(field.type, got):
                return False
        return True
    return False


@functools.cache
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _broken(cases: pd.DataFrame, rows: list[dict[str, Any]], shown: int = 3) -> str:
    """One line: what breaks the contract, each with the first row's source."""
    import pandas as pd

    seen: dict[tuple[str, str, str], list[str]] = {}
    for case in cases.itertuples(index=False):
        where = seen.setdefault((str(case.column), str(case.check), str(case.failure_case)), [])
        if case.index is not None and not pd.isna(case.index):
            places = rows[int(case.index)].get("_places") or []  # see dataset.assemble
            if places:  # a row whose sources are broken has no place to point at
                where.append(f"{places[0]['file']}:{places[0]['line']}")
    what = []
    for (column, check, value), where in list(seen.items())[:shown]:
        at = f" ({where[0]}{' and more rows' if len(where) > 1 else ''})" if where else ""
        what.append(f"{column} {value[:40]!r} fails {check}{at}")
    more = f"; {len(seen) - shown} more failures" if len(seen) > shown else ""
    return (
        "rows break the published table's contract: "
        + "; ".join(what)
        + more
        + " (a finding only warned about still keeps such a row out of the table)"
    )
