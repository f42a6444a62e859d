"""Croissant (JSON-LD) metadata for the published table.

Croissant is what search engines, the Hugging Face Hub and ``mlcroissant`` read to learn what
a dataset holds and how to load it. Everything about the columns is derived from
:mod:`curate.dataset.table` (Arrow types and descriptions), so a new column appears here without
editing this module, and the Croissant file can never disagree with the parquet or the card.

The output targets Croissant 1.1 as understood by ``mlcroissant`` 1.1.1:

* scalar columns are leaf fields with a ``dataType`` and a ``column`` extract;
* ``list<scalar>`` columns are leaf fields with ``isArray: true`` (``arrayShape: "-1"``, or
  ``"-1,-1"`` for a list of lists), the 1.1 replacement of the deprecated ``repeated``;
* ``struct`` columns are fields without a ``dataType`` whose ``subField`` entries extract the
  same column and pick their member with a ``jsonPath`` transform (the convention the Hugging
  Face Hub uses for its generated Croissant files);
* ``list<struct>`` columns combine both: an ``isArray`` parent with ``jsonPath`` sub-fields,
  which ``mlcroissant`` reads back as a list of dicts.

Shapes ``mlcroissant`` 1.1.1 reads back wrongly (structs inside structs, lists of lists of
structs, lists of lists inside a list of structs) and Arrow types without a tested mapping
raise ``TypeError``, so a new column of such a type fails the build instead of being published
with misleading metadata.

The module deliberately does not import ``mlcroissant``: it is a dev dependency used by the
tests to prove the output loads; building the metadata is plain dict construction.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from curate.dataset.table import ARROW_SCHEMA, DESCRIPTIONS

CROISSANT_VERSION = "http://mlcommons.org/croissant/1.1"
"""``conformsTo`` value; ``mlcroissant`` 1.1.1's latest supported version."""

RECORD_SET_ID = "default"
"""Id of the one record set; ``default`` matches the Hub's name for a single-config dataset."""

FILE_OBJECT_ID = "parquet-train"
"""Id of the one ``cr:FileObject`` the fields extract from."""

PARQUET_MIME = "application/x-parquet"

# The @context ``mlcroissant`` 1.1.1 writes for Croissant 1.1 (``rdf.make_context``). It must
# contain at least every key of the standard context or ``mlcroissant`` warns that the context
# "is not standard"; copying it verbatim keeps the file identical to what the reference
# implementation would emit. ``name``/``description`` are language containers in 1.1, but a
# plain string is still valid JSON-LD there and takes the default ``@language``.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def _scalar_data_type(typ: pa.DataType, where: str) -> str:
    """Map a scalar Arrow type to a Croissant ``dataType``.

    Only types whose round trip through ``mlcroissant`` is exercised by the tests are mapped;
    anything else raises, so that adding, say, a timestamp column fails the build loudly
    instead of publishing a Croissant file that lies about the column.
    """
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "sc:Text"
    if pa.types.is_boolean(typ):
        return "sc:Boolean"
    if pa.types.is_integer(typ):
        return "sc:Integer"
    if pa.types.is_floating(typ):
        return "sc:Float"
    raise TypeError(f"{where}: no Croissant dataType for Arrow type {typ}")


def _json_path(member: str) -> str:
    """JSONPath selecting ``member``: bare when an identifier, bracket-quoted otherwise."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", member):
        return member
    escaped = member.replace("\\", "\\\\").replace("'", "\\'")
    return f"['{escaped}']"


def _is_list(typ: pa.DataType) -> bool:
    return pa.types.is_list(typ) or pa.types.is_large_list(typ)


def _field(
    *,
    field_id: str,
    name: str,
    description: str | None,
    typ: pa.DataType,
    column: str,
    member: str | None,
    in_array: bool,
    source_of: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build one ``cr:Field`` (recursing into struct members) for a column or a member.

    ``member`` is the struct member this sub-field stands for (``None`` for a column): a
    sub-field re-extracts the whole column and picks its member with a ``jsonPath``
    transform, which ``mlcroissant`` applies element-wise when the parent is an array.
    Only shapes whose round trip through ``mlcroissant`` 1.1.1 is tested are emitted; the
    others raise ``TypeError`` instead of publishing metadata that reads back wrongly.
    """
    field: dict[str, Any] = {"@type": "cr:Field", "@id": field_id, "name": name}
    if description:
        field["description"] = description
    item, depth = typ, 0
    while _is_list(item):
        item, depth = item.value_type, depth + 1
    if depth:
        field["isArray"] = True
        field["arrayShape"] = ",".join(["-1"] * depth)
    if pa.types.is_struct(item):
        if member is not None:
            # mlcroissant 1.1.1 renders a struct inside a struct as a sibling of its parent
            # (and transposes it inside arrays), so the record would not match the row.
            raise TypeError(f"{field_id}: structs nested in structs are not supported")
        if depth > 1:
            raise TypeError(f"{field_id}: lists of lists of structs are not supported")
        field["subField"] = [
            _field(
                field_id=f"{field_id}/{sub.name}",
                name=sub.name,
                description=None,
                typ=sub.type,
                column=column,
                member=sub.name,
                in_array=in_array or depth > 0,
                source_of=source_of,
            )
            for sub in item
        ]
        return field
    if depth > 1 and in_array:
        raise TypeError(f"{field_id}: lists of lists inside a list are not supported")
    field["dataType"] = _scalar_data_type(item, field_id)
    source: dict[str, Any] = {
        **(source_of or {"fileObject": {"@id": FILE_OBJECT_ID}}),
        "extract": {"column": column},
    }
    if member is not None:
        source["transform"] = {"jsonPath": _json_path(member)}
    field["source"] = source
    return field


def record_set_fields(
    schema: pa.Schema = ARROW_SCHEMA,
    record_set: str = RECORD_SET_ID,
    source_of: dict[str, Any] | None = None,
    descriptions: dict[str, str] = DESCRIPTIONS,
) -> list[dict[str, Any]]:
    """The ``cr:Field`` list of a record set, one per column of ``schema``, in order, read from
    ``source_of`` (default: the one Parquet file)."""
    return [
        _field(
            field_id=f"{record_set}/{column.name}",
            name=column.name,
            description=descriptions.get(column.name),
            typ=column.type,
            column=column.name,
            member=None,
            in_array=False,
            source_of=source_of,
        )
        for column in schema
    ]


@dataclass(frozen=True)
class Part:
    """One data file of a release: its path, SHA-256, split and rows."""

    path: str
    sha256: str
    split: str
    rows: int


def _sha(value: str, what: str = "a file's sha256") -> str:
    sha = value.lower()
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ValueError(f"{what} is not a hex SHA-256: {value!r}")
    return sha


def _record_set(
    schema: pa.Schema,
    name: str,
    description: str,
    source_of: dict[str, Any] | None,
    descriptions: dict[str, str],
) -> dict[str, Any]:
    """One record set over the table's columns; ``id`` (unique: the table schema checks it) is
    its key."""
    record_set: dict[str, Any] = {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": description,
    }
    if "id" in schema.names:
        record_set["key"] = {"@id": f"{name}/id"}
    record_set["field"] = record_set_fields(schema, name, source_of, descriptions)
    return record_set


def _several(
    parts: list[Part], schema: pa.Schema, descriptions: dict[str, str], noun: str = "abstract"
) -> tuple[list, list]:
    """Distribution and record sets of a table in several files: a FileObject per file (with
    its checksum), a FileSet per split (``data/<split>-*.parquet``), a record set per split."""
    distribution: list[dict[str, Any]] = [
        {
            "@type": "cr:FileObject",
            "@id": f"parquet-{Path(p.path).stem}",
            "name": Path(p.path).name,
            "description": f"Rows of the {p.split} split ({p.rows}).",
            "contentUrl": p.path,
            "encodingFormat": PARQUET_MIME,
            "sha256": _sha(p.sha256),
        }
        for p in parts
    ]
    splits = list(dict.fromkeys(p.split for p in parts))
    record_sets = []
    for split in splits:
        rows = sum(p.rows for p in parts if p.split == split)
        distribution.append(
            {
                "@type": "cr:FileSet",
                "@id": f"parquet-{split}",
                "name": f"parquet-{split}",
                "description": f"The {split} split's Parquet files.",
                "encodingFormat": PARQUET_MIME,
                "includes": f"data/{split}-*.parquet",
            }
        )
        record_sets.append(
            _record_set(
                schema, split, f"One record per {noun} of the {split} split ({rows}).",
                {"fileSet": {"@id": f"parquet-{split}"}}, descriptions,
            )
        )  # fmt: skip
    return distribution, record_sets


def croissant_metadata(
    *,
    name: str,
    description: str,
    version: str,
    license: str | None,
    url: str | None,
    parquet_relpath: str,
    parquet_sha256: str,
    num_rows: int,
    date_published: str | None = None,
    citation: str | None = None,
    creators: list[str] | None = None,
    schema: pa.Schema = ARROW_SCHEMA,
    parts: list[Part] | None = None,
    descriptions: dict[str, str] = DESCRIPTIONS,
    languages: list[str] | None = None,
    noun: str = "abstract",
) -> dict[str, Any]:
    """Return the Croissant JSON-LD document describing the published parquet file.

    Pure and deterministic: the same arguments give an equal dict (no clock, no environment),
    so rebuilding an unchanged dataset leaves ``croissant.json`` byte-identical and a diff of
    the repo shows only real changes. ``parquet_relpath`` is kept relative (``contentUrl``) so
    the file works both in the local build folder and once uploaded to the Hub repo.
    ``date_published`` (ISO 8601) and ``citation`` (e.g. BibTeX) are optional; without them
    ``mlcroissant`` reports "recommended, but does not exist" warnings. ``schema`` and its
    columns' ``descriptions`` default to the table of a build of text drops; a build with a
    field mapping passes its own (:class:`curate.dataset.table.Contract`). ``parts``, when the
    table is in several files (shards, splits), lists them: each split is then a record set of
    its own. ``license`` (a URL, or a licence's name) is left out when None: no word stands
    in for a licence not stated. ``languages`` are the records' (``inLanguage``).
    """
    if num_rows < 0:
        raise ValueError(f"num_rows must be >= 0, got {num_rows}")
    sha = _sha(parquet_sha256, "parquet_sha256")
    rows = "record" if num_rows == 1 else "records"
    metadata: dict[str, Any] = {
        "@context": copy.deepcopy(CONTEXT),  # callers may mutate the result
        "@type": "sc:Dataset",
        "conformsTo": CROISSANT_VERSION,
        "name": name,
        "description": description,
        "version": version,
    }
    if license is not None:
        metadata["license"] = license
    if languages:
        metadata["inLanguage"] = list(languages)
    if url is not None:
        metadata["url"] = url
    if date_published is not None:
        metadata["datePublished"] = date_published
    if citation is not None:
        metadata["citeAs"] = citation
    if creators:
        metadata["creator"] = [{"@type": "sc:Person", "name": c} for c in creators]
    if parts is not None and len(parts) > 1:
        metadata["distribution"], metadata["recordSet"] = _several(
            parts, schema, descriptions, noun
        )
        return metadata
    metadata["distribution"] = [
        {
            "@type": "cr:FileObject",
            "@id": FILE_OBJECT_ID,
            "name": Path(parquet_relpath).name,
            "description": f"The table as one Parquet file ({num_rows} {rows}).",
            "contentUrl": parquet_relpath,
            "encodingFormat": PARQUET_MIME,
            "sha256": sha,
        }
    ]
    metadata["recordSet"] = [
        _record_set(
            schema, RECORD_SET_ID, f"One record per {noun} ({num_rows} {rows}).", None,
            descriptions,
        )
    ]  # fmt: skip
    return metadata


def dumps_croissant(metadata: dict[str, Any]) -> str:
    """Serialise ``metadata`` canonically: insertion order, 2-space indent, UTF-8, newline.

    Keys are not sorted: ``croissant_metadata`` inserts them in a fixed, readable order
    (``@context`` first, as JSON-LD readers and humans expect), which is already deterministic.
    """
    return json.dumps(metadata, indent=2, ensure_ascii=False) + "\n"


def write_croissant(path: str | Path, metadata: dict[str, Any]) -> Path:
    """Write ``metadata`` to ``path`` as canonical UTF-8 JSON and return the path."""
    path = Path(path)
    path.write_text(dumps_croissant(metadata), encoding="utf-8", newline="\n")
    return path
