"""`curate.dataset.croissant`: the metadata loads in mlcroissant and reads back every value we
wrote.

A real zstd parquet with the published schema is written beside a ``croissant.json``; the
reference implementation (mlcroissant, a dev dependency) must load it with no errors and no
unexpected warnings, and its records must equal the rows, nested columns included. Nothing
here touches the network: sockets are blocked while mlcroissant runs in-process, and the CLI
subprocess gets an unusable proxy.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curate.dataset.croissant import (
    CROISSANT_VERSION,
    RECORD_SET_ID,
    croissant_metadata,
    dumps_croissant,
    record_set_fields,
    write_croissant,
)
from curate.dataset.table import ARROW_SCHEMA, DESCRIPTIONS

mlc = pytest.importorskip("mlcroissant")

PARQUET_RELPATH = "data/train-00000-of-00001.parquet"

# Deprecations raised inside mlcroissant's dependencies, not about our metadata: rdflib's JSON-LD
# parser uses ConjunctiveGraph, and mlcroissant's parquet reader calls
# `reset_index(inplace=True)`, deprecated in pandas 3.1. Anything else fails the test.
ACCEPTED_PY_WARNINGS = (
    "ConjunctiveGraph is deprecated",
    "The inplace keyword in DataFrame.reset_index is deprecated",
)


def _id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _source(
    file: str,
    header: str | None,
    header_language: str | None,
    match: str,
    similarity: float | None = None,
) -> dict[str, Any]:
    return {
        "file": file,
        "header": header,
        "header_language": header_language,
        "match": match,
        "similarity": similarity,
    }


A1 = "We bound the regret of $\\epsilon$-greedy exploration by O(√T) in linear bandits."
A2 = "Nous étudions la traduction automatique pour les langues peu dotées."
A3 = "A **simple** baseline for <i>few-shot</i> retrieval beats tuned dense retrievers."
A4 = "Graph networks learn physical simulators that generalise to larger systems."

ROWS: list[dict[str, Any]] = [
    {
        "id": _id(A1),
        "abstract": "We bound the regret of ε-greedy exploration by O(√T) in linear bandits.",
        "abstract_raw": A1,
        "venue": "ICML",
        "year": 2021,
        "language": "en",
        "word_count": 13,
        "char_count": 72,
        "has_math": True,
        "markup": ["latex"],
        "flags": ["truncated"],
        "sources": [
            _source("icml-2021.txt", "ICML 2021", "en", "original"),
            _source("icml-2021-mirror.txt", "ICML 2021 (mirror)", "en", "near", 0.93),
        ],
    },
    {
        "id": _id(A2),
        "abstract": A2,
        "abstract_raw": A2,
        "venue": None,
        "year": None,
        "language": "fr",
        "word_count": 9,
        "char_count": 68,
        "has_math": False,
        "markup": [],
        "flags": [],
        "sources": [_source("divers.txt", None, None, "original")],
    },
    {
        "id": _id(A3),
        "abstract": "A simple baseline for few-shot retrieval beats tuned dense retrievers.",
        "abstract_raw": A3,
        "venue": "SIGIR",
        "year": 2023,
        "language": "en",
        "word_count": 10,
        "char_count": 70,
        "has_math": False,
        "markup": ["html", "markdown"],
        "flags": [],
        "sources": [
            _source("sigir-2023.txt", "SIGIR 2023", "en", "original"),
            _source("sigir-2023-b.txt", "SIGIR 2023", "en", "exact"),
        ],
    },
    {
        "id": _id(A4),
        "abstract": A4,
        "abstract_raw": A4,
        "venue": "NeurIPS",
        "year": 2020,
        "language": "en",
        "word_count": 10,
        "char_count": 75,
        "has_math": False,
        "markup": [],
        "flags": [],
        "sources": [_source("neurips-2020.txt", "NeurIPS 2020", "en", "original")],
    },
]

META_KW: dict[str, Any] = {
    "name": "ml-abstracts",
    "description": "Abstracts of machine-learning papers, cleaned and deduplicated.",
    "version": "1.2.0",
    "license": "https://creativecommons.org/licenses/by/4.0/",
    "url": "https://huggingface.co/datasets/example/ml-abstracts",
    "parquet_relpath": PARQUET_RELPATH,
    "date_published": "2024-05-01",
    "citation": "@misc{mlabstracts2024, title={ML abstracts}, year={2024}}",
}


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any attempt to open a network connection from this process."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def _write_parquet(folder: Path, table: pa.Table) -> tuple[str, int]:
    path = folder / PARQUET_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    # Two row groups, as a large build would have several.
    pq.write_table(table, path, compression="zstd", row_group_size=2)
    return hashlib.sha256(path.read_bytes()).hexdigest(), table.num_rows


def _build(folder: Path, **overrides: Any) -> Path:
    """Write the parquet and its croissant.json into ``folder``; return the JSON path."""
    sha, num_rows = _write_parquet(folder, pa.Table.from_pylist(ROWS, schema=ARROW_SCHEMA))
    kw = {**META_KW, "parquet_sha256": sha, "num_rows": num_rows, **overrides}
    return write_croissant(folder / "croissant.json", croissant_metadata(**kw))


def _decode(value: Any, parent: str = RECORD_SET_ID) -> Any:
    """mlcroissant's records → plain Python: bytes → str, field ids → member names.

    Records are keyed by field ``@id`` (``default/sources/file``); stripping the parent's id
    recovers the column or member name even when it contains a slash.
    """
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            assert key.startswith(parent + "/"), (key, parent)
            out[key.removeprefix(parent + "/")] = _decode(v, key)
        return out
    if isinstance(value, list):
        return [_decode(v, parent) for v in value]
    return value


def _load_and_read(jsonld: Path) -> tuple[Any, list[dict[str, Any]], list[str]]:
    """Load ``jsonld`` and read all records; return dataset, records, unexpected py warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataset = mlc.Dataset(jsonld=jsonld)
        records = [_decode(r) for r in dataset.records(record_set=RECORD_SET_ID)]
    unexpected = [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if not str(w.message).startswith(ACCEPTED_PY_WARNINGS)
    ]
    return dataset, records, unexpected


@pytest.fixture
def built(tmp_path: Path) -> Iterator[Path]:
    yield _build(tmp_path)


@pytest.mark.usefixtures("no_network")
def test_mlcroissant_loads_and_reads_back_every_value(
    built: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    dataset, records, unexpected = _load_and_read(built)

    issues = dataset.metadata.ctx.issues
    assert issues.errors == set()
    assert issues.warnings == set()
    assert unexpected == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []

    assert str(dataset.metadata.ctx.conforms_to.value) == CROISSANT_VERSION
    assert pq.read_table(built.parent / PARQUET_RELPATH).to_pylist() == ROWS
    assert records == ROWS  # every row, every column, in file order; 0.93 exactly
    assert list(records[0]) == ARROW_SCHEMA.names


@pytest.mark.usefixtures("no_network")
def test_missing_recommended_properties_are_the_only_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    jsonld = _build(tmp_path, citation=None, date_published=None, url=None)
    dataset, records, unexpected = _load_and_read(jsonld)

    assert dataset.metadata.ctx.issues.errors == set()
    assert sorted(dataset.metadata.ctx.issues.warnings) == [
        ('[Metadata(ml-abstracts)] Property "http://mlcommons.org/croissant/citeAs" is'
         " recommended, but does not exist."),
        ('[Metadata(ml-abstracts)] Property "https://schema.org/datePublished" is'
         " recommended, but does not exist."),
    ]  # fmt: skip
    # The same two, logged through absl (so the no-warning assertion above is not vacuous).
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(logged) == 1 and "Found the following 2 warning(s)" in logged[0]
    assert unexpected == []
    assert records == ROWS


@pytest.mark.usefixtures("no_network")
def test_wrong_sha256_is_caught_by_mlcroissant(tmp_path: Path) -> None:
    jsonld = _build(tmp_path, parquet_sha256="0" * 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dataset = mlc.Dataset(jsonld=jsonld)
        with pytest.raises(mlc.GenerationError, match=r"Download\(parquet-train\)") as info:
            list(dataset.records(record_set=RECORD_SET_ID))
    assert "Hash of downloaded file" in str(info.value.__cause__)


@pytest.mark.slow
def test_mlcroissant_validate_cli(built: Path, tmp_path: Path) -> None:
    exe = shutil.which("mlcroissant", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("mlcroissant CLI not installed in the venv")
    env = {
        **os.environ,
        "CROISSANT_CACHE": str(tmp_path / "cache"),
        # Any HTTP attempt would fail fast instead of reaching the network.
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
    }
    proc = subprocess.run(
        [exe, "validate", "--jsonld", str(built)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "validate.py" in proc.stderr and "Done." in proc.stderr
    assert "warning" not in proc.stderr.lower(), proc.stderr
    assert "error" not in proc.stderr.lower(), proc.stderr


def test_metadata_is_deterministic_and_canonical(tmp_path: Path) -> None:
    kw = {**META_KW, "parquet_sha256": "AB" * 32, "num_rows": 4}
    first, second = croissant_metadata(**kw), croissant_metadata(**kw)
    assert first == second
    a = write_croissant(tmp_path / "a.json", first).read_bytes()
    b = write_croissant(tmp_path / "b.json", second).read_bytes()
    assert a == b == dumps_croissant(first).encode("utf-8")
    assert a.endswith(b"}\n") and not a.endswith(b"\n\n")
    assert b"\r" not in a
    assert next(iter(json.loads(a))) == "@context"
    text = a.decode("utf-8")
    assert '\n  "@context": {\n    "@language": "en",' in text  # indent=2
    meta = json.loads(a)
    assert meta["conformsTo"] == CROISSANT_VERSION
    assert meta["distribution"][0]["sha256"] == "ab" * 32  # normalised to lower-case hex
    assert meta["distribution"][0]["contentUrl"] == PARQUET_RELPATH
    assert meta["distribution"][0]["encodingFormat"] == "application/x-parquet"


def test_non_ascii_is_written_as_is(tmp_path: Path) -> None:
    kw = {**META_KW, "description": "Résumés — ε", "parquet_sha256": "0" * 64, "num_rows": 1}
    text = write_croissant(tmp_path / "c.json", croissant_metadata(**kw)).read_text("utf-8")
    assert "Résumés — ε" in text
    assert "1 record)" in text


def test_fields_follow_the_table_schema() -> None:
    fields = {f["name"]: f for f in record_set_fields()}
    assert list(fields) == ARROW_SCHEMA.names
    for name, field in fields.items():
        assert field["description"] == DESCRIPTIONS[name]
        assert field["@id"] == f"{RECORD_SET_ID}/{name}"
    assert fields["year"]["dataType"] == "sc:Integer"
    assert fields["has_math"]["dataType"] == "sc:Boolean"
    assert fields["abstract"]["dataType"] == "sc:Text"
    assert fields["markup"]["isArray"] is True and fields["markup"]["dataType"] == "sc:Text"
    sources = fields["sources"]
    assert sources["isArray"] is True and "dataType" not in sources
    subs = {s["name"]: s for s in sources["subField"]}
    assert list(subs) == [f.name for f in ARROW_SCHEMA.field("sources").type.value_type]
    assert subs["similarity"]["dataType"] == "sc:Float"
    assert subs["file"]["dataType"] == "sc:Text" and "line" not in subs
    assert subs["match"]["source"] == {
        "fileObject": {"@id": "parquet-train"},
        "extract": {"column": "sources"},
        "transform": {"jsonPath": "match"},
    }


@pytest.mark.usefixtures("no_network")
def test_new_column_types_need_no_code_change(tmp_path: Path) -> None:
    """A schema with columns the table does not have yet still maps and reads back."""
    schema = pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("score", pa.float32()),
            pa.field("count", pa.int64()),
            pa.field("tags", pa.large_list(pa.large_string())),
            pa.field("grid", pa.list_(pa.list_(pa.int64()))),
            pa.field(
                "meta",
                pa.struct(
                    [
                        ("lang", pa.string()),
                        ("pos", pa.int16()),
                        ("alt", pa.list_(pa.string())),
                        ("en-US/x", pa.bool_()),
                        ("it's", pa.string()),
                    ]
                ),
            ),
            pa.field(
                "items", pa.list_(pa.struct([("k", pa.string()), ("vs", pa.list_(pa.string()))]))
            ),
        ]
    )
    rows = [
        {
            "id": "a",
            "score": 0.5,
            "count": 2**40,
            "tags": ["x", "y"],
            "grid": [[1, 2], [3]],
            "meta": {"lang": "de", "pos": 3, "alt": ["en", "fr"], "en-US/x": True, "it's": "ok"},
            "items": [{"k": "p", "vs": ["1", "2"]}, {"k": "q", "vs": []}],
        },
        {
            "id": "b",
            "score": None,
            "count": 0,
            "tags": [],
            "grid": [],
            "meta": {"lang": None, "pos": None, "alt": [], "en-US/x": None, "it's": None},
            "items": [{"k": "r", "vs": ["3"]}],
        },
    ]
    sha, num_rows = _write_parquet(tmp_path, pa.Table.from_pylist(rows, schema=schema))
    kw = {**META_KW, "parquet_sha256": sha, "num_rows": num_rows, "schema": schema}
    jsonld = write_croissant(tmp_path / "croissant.json", croissant_metadata(**kw))
    dataset, records, unexpected = _load_and_read(jsonld)
    assert dataset.metadata.ctx.issues.warnings == set()
    assert unexpected == []
    assert records == rows


@pytest.mark.parametrize(
    "typ",
    [
        pa.timestamp("s"),
        pa.binary(),
        pa.struct([("inner", pa.struct([("v", pa.int32())]))]),
        pa.list_(pa.struct([("inner", pa.struct([("v", pa.int32())]))])),
        pa.list_(pa.list_(pa.struct([("v", pa.int32())]))),
        pa.list_(pa.struct([("vs", pa.list_(pa.list_(pa.string())))])),
    ],
    ids=[
        "timestamp",
        "binary",
        "struct-in-struct",
        "struct-in-list-struct",
        "list-list-struct",
        "list-list-in-list-struct",
    ],
)
def test_unmapped_types_fail_loudly(typ: pa.DataType) -> None:
    with pytest.raises(TypeError, match="default/x"):
        record_set_fields(pa.schema([pa.field("x", typ)]))
