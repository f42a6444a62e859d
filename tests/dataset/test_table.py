"""The Hugging Face features of the table, written without `datasets`, are exactly what the real
`datasets` computes: in the Parquet file's metadata and in the card's `dataset_info`.

curate does not import `datasets` at run time (seconds at start-up);
`curate.dataset.table.hf_features`
and `curate.dataset.card.features_yaml` produce its output from the Arrow schema. These tests make
the
real library the oracle, so an upgrade of `datasets` that changes its output, or a column of a
new type, fails here rather than silently publishing metadata `datasets` would not write.
"""

from __future__ import annotations

import json
import subprocess
import sys

import datasets
import pyarrow as pa
import pytest
from conftest import ROOT, SOURCES

from curate.dataset.card import dataset_info_yaml, features_yaml
from curate.dataset.table import (
    ARROW_SCHEMA,
    HF_DTYPES,
    TableContractBroken,
    check_rows,
    hf_features,
)
from curate.dataset.writers.parquet import arrow_schema_with_features

# Every type hf_features knows, alone, in lists, large lists, structs and their nestings.
EVERY_TYPE = pa.schema(
    [pa.field(f"plain_{i}", typ) for i, typ in enumerate(HF_DTYPES)]
    + [
        pa.field("list", pa.list_(pa.int64())),
        pa.field("large_list", pa.large_list(pa.string())),
        pa.field("list_of_lists", pa.list_(pa.list_(pa.float32()))),
        pa.field("large_list_of_lists", pa.large_list(pa.large_list(pa.bool_()))),
        pa.field("struct", pa.struct([("a", pa.int8()), ("b", pa.list_(pa.string()))])),
        pa.field("struct_in_struct", pa.struct([("s", pa.struct([("x", pa.uint16())]))])),
        pa.field("list_of_structs", pa.list_(pa.struct([("dtype", pa.string())]))),
        pa.field("large_list_of_structs", pa.large_list(pa.struct([("y", pa.binary())]))),
    ]
)


def _same(ours: object, theirs: object) -> None:
    """Equal, and in the same key order (the card's YAML is written in dict order)."""
    assert ours == theirs
    assert json.dumps(ours) == json.dumps(theirs)


@pytest.mark.parametrize("schema", [ARROW_SCHEMA, EVERY_TYPE], ids=["table", "every-type"])
def test_features_are_what_datasets_computes(schema):
    _same(hf_features(schema), datasets.Features.from_arrow_schema(schema).to_dict())


@pytest.mark.parametrize("schema", [ARROW_SCHEMA, EVERY_TYPE], ids=["table", "every-type"])
def test_features_yaml_is_what_datasets_writes_in_a_card(schema):
    theirs = datasets.Features.from_arrow_schema(schema)._to_yaml_list()
    _same(features_yaml(hf_features(schema)), theirs)


def test_dataset_info_is_what_datasets_writes_in_a_card():
    features = datasets.Features.from_arrow_schema(ARROW_SCHEMA)
    split = datasets.SplitInfo(name="train", num_bytes=123_456, num_examples=55)
    info = datasets.DatasetInfo(
        features=features,
        splits=datasets.SplitDict({"train": split}),
        download_size=65_432,
        dataset_size=123_456,
    )
    _same(dataset_info_yaml(55, 123_456, 65_432), info._to_yaml_dict())


def test_parquet_metadata_is_what_datasets_writes():
    """The schema metadata the Parquet writer gets, as the code built it with `datasets`."""
    features = datasets.Features.from_arrow_schema(ARROW_SCHEMA)
    theirs = json.dumps({"info": {"features": features.to_dict()}}, sort_keys=True)
    schema = arrow_schema_with_features()
    assert schema.metadata == {b"huggingface": theirs.encode()}
    assert schema.remove_metadata() == ARROW_SCHEMA
    # and `datasets` reads the types back from it
    assert datasets.Features.from_arrow_schema(schema) == features


@pytest.mark.parametrize(
    "typ", [pa.timestamp("s"), pa.dictionary(pa.int32(), pa.string()), pa.list_(pa.int8(), 3)]
)
def test_a_type_it_does_not_know_is_refused_not_guessed(typ):
    datasets.Features.from_arrow_schema(pa.schema([("x", typ)]))  # which `datasets` does handle
    with pytest.raises(TypeError, match="no Hugging Face feature"):
        hf_features(pa.schema([("x", typ)]))


@pytest.mark.slow
def test_a_sound_build_imports_neither_datasets_matplotlib_nor_pandera(tmp_path):
    """A whole build in a fresh interpreter: none of them is loaded. The table's contract held
    for every row in plain Python, so pandera was never needed to say what fails. (pandas is:
    pyarrow imports it, when it is installed, the first time it makes an array of a list.)"""
    probe = (
        "import sys\nfrom curate.cli import main\n"
        f"assert main(['-q', 'build', {str(SOURCES)!r}, '--out', {str(tmp_path / 'dist')!r}, "
        "'--no-cache']) == 0\n"
        "heavy = {'datasets', 'matplotlib', 'pandera'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[-1] == "[]"
    assert (tmp_path / "dist" / "report.html").is_file()


def _row(**change):
    row = {
        "id": "0123456789abcdef", "abstract": "Text.", "abstract_raw": "Text.", "venue": "ICML",
        "year": 2025, "language": "en", "word_count": 1, "char_count": 5, "has_math": False,
        "markup": [], "flags": [],
        "sources": [{"file": "a.txt", "line": 3, "header": "ICML 2025 Papers",
                     "header_language": "en", "match": "original", "similarity": None}],
    }  # fmt: skip
    return {**row, **change}


def test_the_contract_takes_a_sound_row():
    check_rows([_row()])


@pytest.mark.parametrize(
    ("change", "column"),
    [
        ({"sources": None}, "sources"),  # never null: every row has its original
        ({"sources": []}, "sources"),
        ({"id": "not-hex"}, "id"),
        ({"id": "0123456789abcdef\n"}, "id"),
        ({"year": 1066}, "year"),
        ({"abstract": ""}, "abstract"),
        ({"word_count": 0}, "word_count"),
    ],
)
def test_the_contract_refuses_a_broken_row_and_says_which_column(change, column):
    with pytest.raises(TableContractBroken, match=rf"\b{column}\b"):
        check_rows([_row(**change)])


def test_the_arrow_schema_says_what_the_contract_says_of_nulls():
    """Written out here, column by column: what a consumer may find null."""
    nullable = {f.name for f in ARROW_SCHEMA if f.nullable}
    assert nullable == {"venue", "year", "language"}


# Rows the plain pass must not vouch for: each breaks the contract, or is a value pandera has to
# look at (a type the rules do not name).
SUSPECT = [
    {"id": "0123456789ABCDEF"},
    {"id": "0123456789abcdef\n"},  # "$" of a pattern would match before the newline
    {"id": 1234567890123456},
    {"abstract": ""},
    {"abstract": None},
    {"abstract": "lone \ud800 surrogate"},
    {"venue": 7},
    {"year": 1949},
    {"year": 2101},
    {"year": 2**40},
    {"year": True},
    {"year": 2025.0},
    {"word_count": 0},
    {"word_count": None},
    {"has_math": 1},
    {"markup": None},
    {"markup": "latex"},
    {"markup": [1]},
    {"flags": ("truncated",)},
    {"sources": None},
    {"sources": []},
    {"sources": [{"file": "a.txt", "line": 3, "header": None, "header_language": None,
                  "match": "exact", "similarity": None}]},
    {"sources": [{"file": "a.txt", "line": 3, "header": None, "header_language": None,
                  "match": "original", "similarity": 0.9}]},
    {"sources": [{"file": "a.txt", "line": "3", "header": None, "header_language": None,
                  "match": "original", "similarity": None}]},
    {"sources": [{"file": "a.txt", "line": 3, "match": "original", "similarity": None}]},
]  # fmt: skip


@pytest.mark.parametrize("change", SUSPECT, ids=[next(iter(c)) for c in SUSPECT])
def test_the_plain_pass_vouches_for_no_row_pandera_might_refuse(change):
    from curate.dataset.table import COLUMNS, rows_hold

    rows = [_row(), _row(**{"id": "fedcba9876543210", **change})]
    assert not rows_hold(rows, COLUMNS)


def test_the_plain_pass_catches_a_repeated_id_and_a_missing_column():
    from curate.dataset.table import COLUMNS, rows_hold

    assert not rows_hold([_row(), _row()], COLUMNS)
    with pytest.raises(TableContractBroken, match=r"\bid\b"):
        check_rows([_row(), _row()])
    missing = _row()
    del missing["language"]
    assert not rows_hold([missing], COLUMNS)


def _table(*rows):
    return pa.Table.from_pylist(list(rows), schema=ARROW_SCHEMA)


_ORIGINAL = {"file": "a.txt", "header": None, "header_language": None, "match": "original",
             "similarity": None}  # fmt: skip
# Columns the Arrow pass must not vouch for: each breaks the contract, or holds a value pandera
# has to look at; the values Arrow's types cannot hold (a number for a text) never get there.
ARROW_SUSPECT = [
    {"id": "0123456789ABCDEF"},
    {"id": "0123456789abcdef\n"},
    {"abstract": ""},
    {"abstract": None},
    {"year": 1949},
    {"year": 2101},
    {"word_count": 0},
    {"char_count": None},
    {"has_math": None},
    {"markup": None},
    {"markup": [None]},
    {"flags": ["truncated", None]},
    {"sources": None},
    {"sources": []},
    {"sources": [{**_ORIGINAL, "match": "exact"}]},
    {"sources": [{**_ORIGINAL, "similarity": 0.9}]},
    {"sources": [_ORIGINAL, {**_ORIGINAL, "match": "near", "similarity": float("nan")}]},
    {"sources": [{**_ORIGINAL, "file": None}]},
    {"sources": [_ORIGINAL, None]},
]


@pytest.mark.parametrize("change", ARROW_SUSPECT, ids=[next(iter(c)) for c in ARROW_SUSPECT])
def test_the_arrow_pass_vouches_for_no_column_pandera_might_refuse(change):
    from curate.dataset.table import COLUMNS, columns_hold

    assert columns_hold(_table(_row(), _row(id="fedcba9876543210")), COLUMNS)
    assert not columns_hold(_table(_row(), _row(**{"id": "fedcba9876543210", **change})), COLUMNS)


def test_the_arrow_pass_leaves_a_repeated_id_another_type_and_a_missing_column_to_pandera():
    from curate.dataset.table import COLUMNS, check_table, columns_hold

    assert not columns_hold(_table(_row(), _row()), COLUMNS)
    with pytest.raises(TableContractBroken, match=r"\bid\b"):
        check_table(_table(_row(), _row()))
    wide = _table(_row())
    wide = wide.set_column(4, "year", wide.column("year").cast(pa.int64()))
    assert not columns_hold(wide, COLUMNS)
    assert not columns_hold(_table(_row()).drop_columns(["language"]), COLUMNS)


@pytest.mark.parametrize(
    ("change", "column"),
    [
        ({"sources": []}, "sources"),
        ({"id": "not-hex"}, "id"),
        ({"year": 1066}, "year"),
        ({"abstract": ""}, "abstract"),
        ({"word_count": 0}, "word_count"),
    ],
)
def test_the_contract_refuses_a_broken_arrow_row_and_says_which_column(change, column):
    from curate.dataset.table import check_table

    with pytest.raises(TableContractBroken, match=rf"\b{column}\b"):
        check_table(_table(_row(**change)))


def test_what_the_plain_pass_vouches_for_pandera_passes(tmp_path):
    """The rows of a real build (the bundled sources), vouched for by the plain pass and the
    Arrow pass, also pass pandera's own validation of the contract: the fast paths hide nothing
    pandera would say."""
    import pandas as pd
    import pyarrow.parquet as pq

    from curate.dataset.table import COLUMNS, TEXT, _pandas_dtype, columns_hold, rows_hold
    from curate.pipeline.build import build
    from curate.settings import Settings

    build([SOURCES], tmp_path / "dist", Settings(), template=ROOT / "dataset_card.md")
    rows = pq.read_table(tmp_path / "dist" / "data").to_pylist()
    assert len(rows) == 55 and rows_hold(rows, COLUMNS)
    assert columns_hold(pq.read_table(tmp_path / "dist" / "data"), COLUMNS)
    frame = pd.DataFrame(rows, columns=ARROW_SCHEMA.names)
    for c in COLUMNS:
        if isinstance(_pandas_dtype(c), str):
            frame[c.name] = frame[c.name].astype(_pandas_dtype(c))
    TEXT.pandera().validate(frame, lazy=True)  # raises SchemaErrors if any row fails
