"""One pass over the data: a build visits each file once, and each record passes each stage once.

The stages are counted where they are defined (the parser's ``parse_bytes``, the cleaner, the
language detector, the sketch), not where they are called, so that a second call from anywhere
in the build is seen.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES, seed_records

import curate.ingest.formats.text
import curate.transform.rows
import validation.language
import validation.runner
from curate.pipeline.build import BuildRefused, build
from curate.pipeline.validate import validate_paths
from curate.scan.run import Rows
from curate.settings import Settings
from curate.transform.rows import MADE, Cleaning, read_spool
from validation.config import Config

TEMPLATE = ROOT / "dataset_card.md"


def near_copy(text: str) -> str:
    """``text`` with its seventh word replaced: a near-duplicate (one shingle window changed)."""
    words = text.split()
    words[6] = "remarkably"
    return " ".join(words)


@pytest.fixture
def drops(tmp_path: Path) -> Path:
    """The seeds plus a drop with a near-duplicate of a seed abstract and a new abstract."""
    folder = tmp_path / "drops"
    folder.mkdir()
    for seed in SEED_FILES:
        (folder / seed.name).write_bytes(seed.read_bytes())
    _, first = seed_records(SEED_FILES[0])[0]
    (folder / "zz-extra.txt").write_text(
        "ICML 2025 Papers\n\n"
        f"{near_copy(first)}\n\n"
        "We study how small drops of new abstracts are checked and published in one pass, and "
        "we measure that every stage of the pipeline sees each record exactly once.\n",
        encoding="utf-8",
    )
    return folder


class Counting:
    """Counts the calls of a function by its first argument."""

    def __init__(self, func):
        self.func = func
        self.calls: Counter = Counter()

    def __call__(self, first, *args, **kwargs):
        self.calls[first] += 1
        return self.func(first, *args, **kwargs)


@pytest.fixture
def counted(monkeypatch):
    """Counters on every stage a record passes, patched where each stage is defined."""
    stages = {
        "parse": Counting(curate.ingest.formats.text.parse_bytes),
        "clean": Counting(curate.transform.rows.clean_text),
        "language": Counting(validation.language.language_of),
        "sketch": Counting(lambda text: text),
    }
    sketch_many = validation.runner.sketch_many

    def counted_sketch_many(texts, *args, **kwargs):  # counted by text: one call sketches many
        for text in texts:
            stages["sketch"](text)
        return sketch_many(texts, *args, **kwargs)

    parse = stages["parse"]

    def parse_bytes(data, where, *args, **kwargs):  # counted by file, not by its bytes
        parse.calls[where] += 1
        return parse.func(data, where, *args, **kwargs)

    monkeypatch.setattr(curate.ingest.formats.text, "parse_bytes", parse_bytes)
    monkeypatch.setattr(curate.transform.rows, "clean_text", stages["clean"])
    monkeypatch.setattr(validation.language, "language_of", stages["language"])
    monkeypatch.setattr(validation.runner, "sketch_many", counted_sketch_many)
    validation.language.body_language.cache_clear()
    return stages


def test_a_build_passes_each_record_through_each_stage_once(drops, tmp_path, counted):
    result = build([drops], tmp_path / "out", Settings(), jobs=1, template=TEMPLATE)
    assert result.near_merged == 1  # the near-duplicate's text was read for the exact check
    files = sorted(p.as_posix() for p in drops.glob("*.txt"))
    assert counted["parse"].calls == Counter({f: 1 for f in files})
    texts = [t for f in sorted(drops.glob("*.txt")) for _, t in seed_records(f)]
    assert len(texts) == result.records_in == 59
    # Each record once (two records with the same text are two records: the seeds hold two
    # exact duplicates, so two texts are seen twice).
    assert len(set(texts)) == 57
    for stage in ("clean", "sketch"):
        assert counted[stage].calls == Counter(texts), stage
    # The language of each record detected at most once, for the check and the row together
    # (before the one pass: twice, on the raw and on the cleaned text); an exact copy a few
    # records after its original is answered from the cache.
    assert len(set(texts)) <= sum(counted["language"].calls.values()) <= len(texts)


def test_the_row_uses_the_language_the_check_computed(drops, tmp_path, monkeypatch):
    """The language column is the `language` check's answer: make the detector answer
    something no text would get, and both the check and the row see it."""
    validation.language.body_language.cache_clear()
    monkeypatch.setattr(validation.language, "language_of", lambda text: ("la", 0.99))
    settings = Settings(checks=Config(languages=("la",)))
    build([drops], tmp_path / "out", settings, jobs=1, template=TEMPLATE)
    table = pq.read_table(tmp_path / "out" / "data" / "train-00000-of-00001.parquet")
    assert set(table.column("language").to_pylist()) == {"la"}
    validation.language.body_language.cache_clear()


def test_validation_alone_does_not_clean(drops, counted):
    run = validate_paths([drops], Config(), jobs=1)
    assert run.report.records == 59
    assert sum(counted["clean"].calls.values()) == 0
    assert sum(counted["sketch"].calls.values()) == 59


def test_curate_validate_does_not_import_the_cleaner(drops):
    code = (
        "import sys\n"
        "from curate.cli import main\n"
        f"code = main(['validate', {str(drops)!r}, '--no-cache', '-q'])\n"
        "print(sorted(m for m in ('curate.transform.clean', 'curate.transform.texmath', "
        "'curate.transform.rows', 'pylatexenc') if m in sys.modules))\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_a_record_that_refuses_the_build_is_not_cleaned(drops, tmp_path, counted):
    bad = "A record with a stray \x07 bell character inside the text of its abstract here."
    (drops / "zz-extra.txt").write_text(f"ICML 2025 Papers\n\n{bad}\n", encoding="utf-8")
    spool = tmp_path / "spool"
    spool.mkdir()
    run = validate_paths([drops], Config(), jobs=1, rows=Rows(spool, Cleaning()))
    assert [f.code for f in run.report.errors] == ["control-char"]
    assert bad not in counted["clean"].calls
    extra = next(i for i, f in enumerate(run.files) if f.path.endswith("zz-extra.txt"))
    table = read_spool(run.spools[extra])
    assert table.column(MADE).to_pylist() == [False]
    assert table.column("abstract_raw").to_pylist() == [bad]  # still there for the corpus
    with pytest.raises(BuildRefused):
        build([drops], tmp_path / "out", Settings(), jobs=1, template=TEMPLATE)
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_a_warm_cache_gives_the_row_its_language_without_detecting(drops, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = build([drops], tmp_path / "a", Settings(), jobs=1, template=TEMPLATE, cache_dir=cache)
    validation.language.body_language.cache_clear()

    def never(text):
        raise AssertionError("detected again although the cache had the answer")

    monkeypatch.setattr(validation.language, "language_of", never)
    second = build([drops], tmp_path / "b", Settings(), jobs=1, template=TEMPLATE, cache_dir=cache)
    assert second.fingerprint == first.fingerprint
    parquet = Path("data") / "train-00000-of-00001.parquet"
    assert (tmp_path / "a" / parquet).read_bytes() == (tmp_path / "b" / parquet).read_bytes()
    validation.language.body_language.cache_clear()


def test_the_table_does_not_depend_on_how_files_are_grouped_into_tasks(
    drops, tmp_path, monkeypatch
):
    import curate.dataset.assemble

    parquet = Path("data") / "train-00000-of-00001.parquet"
    build([drops], tmp_path / "one", Settings(), jobs=1, template=TEMPLATE)
    monkeypatch.setattr(curate.dataset.assemble, "TASK_ROWS", 1)  # a task per file
    build([drops], tmp_path / "many", Settings(), jobs=1, template=TEMPLATE)
    assert (tmp_path / "one" / parquet).read_bytes() == (tmp_path / "many" / parquet).read_bytes()


def test_a_large_file_is_cut_into_tasks_of_bounded_rows_and_the_table_does_not_change(
    drops, tmp_path, monkeypatch
):
    """A file with more survivors than a task may hold is cut into several tasks, each taking
    its rows from the file's spool a record batch at a time; the table and the places beside it
    are the same bytes as when each file is one task."""
    import curate.dataset.assemble

    build([drops], tmp_path / "whole", Settings(), template=TEMPLATE, engine="serial")
    sizes: list[list[int]] = []
    real = curate.dataset.assemble.rows_of_files

    def counted(task):
        sizes.append([len(todo) for *_, todo in task.parts])
        return real(task)

    monkeypatch.setattr(curate.dataset.assemble, "rows_of_files", counted)
    monkeypatch.setattr(curate.dataset.assemble, "TASK_ROWS_MAX", 3)
    monkeypatch.setattr(curate.transform.rows, "SPOOL_BATCH_ROWS", 2)
    build([drops], tmp_path / "cut", Settings(), template=TEMPLATE, engine="serial")
    assert max(sum(s) for s in sizes) == 3
    assert len(sizes) > len(list(drops.glob("*.txt")))  # some file's survivors in several tasks
    for name in ("data/train-00000-of-00001.parquet", "positions.parquet"):
        assert (tmp_path / "whole" / name).read_bytes() == (tmp_path / "cut" / name).read_bytes()


def test_the_table_does_not_depend_on_the_number_of_buckets(drops, tmp_path, monkeypatch):
    """A large table is bucketed by two hex digits of the id instead of one (256 buckets, so
    the main process holds less at a time); the Parquet file must not see the difference."""
    import curate.dataset.assemble

    parquet = Path("data") / "train-00000-of-00001.parquet"
    build([drops], tmp_path / "coarse", Settings(), jobs=1, template=TEMPLATE)
    monkeypatch.setattr(curate.dataset.assemble, "FINE_BUCKETS_FROM", 0)
    assert len(curate.dataset.assemble.bucket_names(1)) == 256
    build([drops], tmp_path / "fine", Settings(), jobs=1, template=TEMPLATE)
    coarse = (tmp_path / "coarse" / parquet).read_bytes()
    assert coarse == (tmp_path / "fine" / parquet).read_bytes()
