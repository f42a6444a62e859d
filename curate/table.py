"""The one schema of the published dataset.

Arrow types are the source of truth; the pandera schema checked before writing, the Hugging
Face ``Features`` in the card and the Croissant fields are all derived from or checked against
this module, so the three can never disagree about a column.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pandera.pandas as pa_schema
import pyarrow as pa

SOURCE_TYPE = pa.struct(
    [
        pa.field("file", pa.string(), nullable=False),
        pa.field("line", pa.int32(), nullable=False),
        pa.field("header", pa.string()),
        pa.field("header_language", pa.string()),
        pa.field("match", pa.string(), nullable=False),
        pa.field("similarity", pa.float64()),
    ]
)

# (name, type, description): the description goes into the card and the Croissant file.
COLUMNS: list[tuple[str, pa.DataType, str]] = [
    ("id", pa.string(), "Stable id: first 16 hex digits of the SHA-256 of the normalised text."),
    ("abstract", pa.string(), "The abstract as plain Unicode text (markup converted, NFC)."),
    ("abstract_raw", pa.string(), "The abstract exactly as found in the source drop."),
    ("venue", pa.string(), "Venue named by the drop's header, e.g. ICML."),
    ("year", pa.int32(), "Year named by the drop's header."),
    ("language", pa.string(), "Language of the abstract (ISO 639-1), by script or langdetect."),
    (
        "word_count",
        pa.int32(),
        "Number of words of `abstract` (whitespace-separated; each CJK character is one).",
    ),
    ("char_count", pa.int32(), "Number of characters of `abstract`."),
    ("has_math", pa.bool_(), "Whether the raw text held LaTeX math."),
    (
        "markup",
        pa.list_(pa.string()),
        "Kinds of markup found in the raw text and converted: latex, markdown, html.",
    ),
    (
        "flags",
        pa.list_(pa.string()),
        "Finding codes that fired on this abstract and whose row policy is `flag` (for example "
        "truncated, too-long): kept, but worth a look; `math-kept` when some of its math is "
        "published as its TeX source between $…$; empty for most rows.",
    ),
    (
        "sources",
        pa.list_(SOURCE_TYPE),
        "Every occurrence of this abstract in the drops: file, line, header, header language, "
        "match (original, exact or near) and, for near-duplicates, the Jaccard similarity.",
    ),
]

NOT_NULL = {
    "id", "abstract", "abstract_raw", "word_count", "char_count", "has_math", "markup", "flags",
}  # fmt: skip

ARROW_SCHEMA = pa.schema(
    [pa.field(name, typ, nullable=name not in NOT_NULL) for name, typ, _ in COLUMNS]
)
DESCRIPTIONS = {name: desc for name, _, desc in COLUMNS}
MATCH_KINDS = ("original", "exact", "near")

# The `datasets` dtype of each Arrow type the table may use, as `datasets` names it (Arrow's
# "double" is its "float64"). tests/test_features.py holds this to the real library.
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
    raises ``TypeError`` rather than guess, and tests/test_features.py compares the result with
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


def _sources_ok(values: pd.Series) -> pd.Series:
    def ok(sources: object) -> bool:
        items = list(sources) if sources is not None else []
        return (
            len(items) >= 1
            and items[0]["match"] == "original"
            and all(s["match"] in MATCH_KINDS for s in items)
            and all((s["similarity"] is None) == (s["match"] != "near") for s in items)
        )

    return values.map(ok)


TABLE_SCHEMA = pa_schema.DataFrameSchema(
    {
        "id": pa_schema.Column(str, pa_schema.Check.str_matches(r"^[0-9a-f]{16}$"), unique=True),
        "abstract": pa_schema.Column(str, pa_schema.Check.str_length(min_value=1)),
        "abstract_raw": pa_schema.Column(str, pa_schema.Check.str_length(min_value=1)),
        "venue": pa_schema.Column(str, nullable=True),
        "year": pa_schema.Column("Int32", pa_schema.Check.in_range(1950, 2100), nullable=True),
        "language": pa_schema.Column(str, nullable=True),
        "word_count": pa_schema.Column("int32", pa_schema.Check.ge(1)),
        "char_count": pa_schema.Column("int32", pa_schema.Check.ge(1)),
        "has_math": pa_schema.Column(bool),
        "markup": pa_schema.Column(object),
        "flags": pa_schema.Column(object),
        "sources": pa_schema.Column(
            object, pa_schema.Check(_sources_ok, error="sources must start with the original")
        ),
    },
    strict=True,
    ordered=True,
    name="published table",
)
