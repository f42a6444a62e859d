"""The content fingerprint: its definition (version 2) held against an encoder written here from
the definition, its sensitivity to every published value, and releases of the older definition
(version 1) still checked, compared and published."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES

from curate.cli import main
from curate.dataset.manifest import FINGERPRINT_VERSION, fingerprint_of, row_digests
from curate.pipeline.build import build
from curate.release.publish import check_folder
from curate.settings import Settings

TEMPLATE = ROOT / "dataset_card.md"


# --- the oracle: version 2 written from its definition, one Python value at a time -------------
def oracle_value(value: Any, kind: pa.DataType) -> bytes:
    """A tag, then the value: strings with their length in UTF-8 bytes, integers in decimal, a
    float by its IEEE bits as a signed 64-bit decimal, lists with their length, structs by a
    validity mark and their fields; any part of a null value written `n`."""
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if value is None:
            return b"sn:n"
        data = value.encode("utf-8")
        return b"s%d:" % len(data) + data
    if pa.types.is_boolean(kind):
        return b"bn" if value is None else b"b1" if value else b"b0"
    if pa.types.is_integer(kind):
        return b"in;" if value is None else b"i%d;" % value
    if pa.types.is_floating(kind):
        if value is None:
            return b"fn;"
        return b"f%d;" % struct.unpack("<q", struct.pack("<d", value))[0]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        if value is None:
            return b"ln:n"
        items = b"".join(oracle_value(v, kind.value_type) for v in value)
        return b"l%d:" % len(value) + items
    if pa.types.is_struct(kind):
        fields = [kind.field(i) for i in range(kind.num_fields)]
        if value is None:
            return b"tn" + b"".join(oracle_value(None, f.type) for f in fields)
        return b"tv" + b"".join(oracle_value(value[f.name], f.type) for f in fields)
    raise AssertionError(f"no oracle for {kind}")


def oracle_digest(row: dict[str, Any], schema: pa.Schema) -> str:
    data = b"".join(
        b"%d:%s" % (len(f.name.encode()), f.name.encode()) + oracle_value(row[f.name], f.type)
        for f in schema
    )
    return hashlib.sha256(data).hexdigest()


def oracle_fingerprint(rows: list[dict[str, Any]], schema: pa.Schema) -> str:
    digest = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r["id"]):
        digest.update(oracle_digest(row, schema).encode())
    return digest.hexdigest()


def v1_fingerprint(rows: list[dict[str, Any]]) -> str:
    """Version 1, written here: SHA-256 over each row's canonical JSON, in id order."""
    digest = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r["id"]):
        canonical = json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8")
        digest.update(hashlib.sha256(canonical).hexdigest().encode())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fingerprint")
    (root / "src").mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, root / "src" / seed.name)
    build([root / "src"], root / "dist", Settings(), template=TEMPLATE)
    return root


def test_a_builds_fingerprint_is_the_definition_over_its_parquet_rows(built):
    manifest = json.loads((built / "dist" / "manifest.json").read_text(encoding="utf-8"))
    table = pq.read_table(built / "dist" / "data")
    assert manifest["fingerprint_version"] == FINGERPRINT_VERSION == 2
    assert manifest["fingerprint"] == oracle_fingerprint(table.to_pylist(), table.schema)
    assert manifest["fingerprint"] != v1_fingerprint(table.to_pylist())


SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("tags", pa.list_(pa.string())),
        ("score", pa.float64()),
        ("ok", pa.bool_()),
        ("n", pa.int32()),
        ("src", pa.list_(pa.struct([("file", pa.string()), ("sim", pa.float64())]))),
    ]
)
BASE = {"id": "a", "text": "x", "tags": [], "score": 0.5, "ok": True, "n": 1, "src": []}
# Each differs from BASE, or from another variant, in one way a careless encoding would merge:
# null against empty, one string against two, text that looks like the encoding itself, the
# sign of a zero, a nested null.
VARIANTS = [
    {"text": None},
    {"text": ""},
    {"text": "n"},
    {"text": "sn:n"},
    {"text": "x", "tags": ["ab"]},
    {"tags": ["a", "b"]},
    {"tags": ["a", None]},
    {"tags": None},
    {"tags": [""]},
    {"score": 0.0},
    {"score": -0.0},
    {"score": None},
    {"ok": False},
    {"ok": None},
    {"n": None},
    {"n": -1},
    {"src": [None]},
    {"src": [{"file": None, "sim": None}]},
    {"src": [{"file": "f", "sim": 0.8}]},
    {"src": [{"file": "f", "sim": 0.8000000000000002}]},
    {"src": None},
]


def test_every_published_difference_changes_the_digest_as_the_definition_says():
    rows = [BASE, *({**BASE, **change} for change in VARIANTS)]
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    digests = row_digests(table)
    assert digests == [oracle_digest(row, SCHEMA) for row in rows]
    assert len(set(digests)) == len(rows)


def test_slices_chunks_and_the_types_that_read_back_alike_give_the_same_digests():
    rows = [BASE, *({**BASE, **change} for change in VARIANTS)]
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    whole = row_digests(table)
    assert row_digests(table.slice(3, 7)) == whole[3:10]
    assert row_digests(pa.concat_tables([table.slice(0, 5), table.slice(5)])) == whole
    large = pa.schema(
        [
            pa.field(f.name, pa.large_string())
            if f.type == pa.string()
            else pa.field(f.name, pa.large_list(f.type.value_type))
            if pa.types.is_list(f.type)
            else f
            for f in SCHEMA
        ]
    )
    assert row_digests(table.cast(large)) == whole
    # The column's name is part of what is hashed.
    assert row_digests(table.rename_columns(["id", "abstract", *SCHEMA.names[2:]])) != whole


def test_the_older_definition_is_still_computed_and_an_unknown_one_is_refused():
    rows = [BASE, {**BASE, "id": "b", "tags": ["t"]}]
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    assert fingerprint_of(row_digests(table, version=1)) == v1_fingerprint(rows)
    with pytest.raises(ValueError, match="unknown fingerprint version 3"):
        row_digests(table, version=3)


def as_version_1(folder: Path) -> None:
    """Rewrite a build's manifest as a build of the older definition wrote it."""
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    del manifest["fingerprint_version"]
    manifest["fingerprint"] = v1_fingerprint(pq.read_table(folder / "data").to_pylist())
    path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def test_publish_checks_a_build_of_the_older_definition_by_that_definition(built, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(built / "dist", old)
    as_version_1(old)
    check_folder(old)  # raises if the rows or the fingerprint disagree
    manifest = json.loads((old / "manifest.json").read_text(encoding="utf-8"))
    manifest["fingerprint_version"] = 7
    (old / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(Exception, match="fingerprint_version this curate does not know: 7"):
        check_folder(old)


def test_a_release_of_the_older_definition_is_compared_row_by_row(built, tmp_path, capsys):
    old = tmp_path / "old"
    shutil.copytree(built / "dist", old)
    as_version_1(old)
    result = build([built / "src"], tmp_path / "new", Settings(), template=TEMPLATE, previous=old)
    line = (
        "the content fingerprint is defined anew (version 1 → 2), so the fingerprints differ; "
        "the rows were compared one by one"
    )
    assert result.manifest["version"] == "1.0.1"  # the same rows; the manifest says more
    assert result.diff.metadata == [line]
    assert not (result.diff.added or result.diff.removed or result.diff.changed)
    changelog = (tmp_path / "new" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.count("defined anew") == 1

    assert main(["diff", str(old), str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    assert out.count("defined anew (version 1 → 2)") == 1
    assert "55 → 55 records: 0 added, 0 removed, 0 changed" in out
