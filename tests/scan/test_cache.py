"""The validation cache and the worker processes change how fast a result comes, not what."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import SEED_FILES, SOURCES

import curate.scan.run
from curate.cli import main
from curate.pipeline.validate import validate_paths
from validation.config import Config
from validation.language import detect, looks_english

GERMAN = (
    "Wir untersuchen, wie große Sprachmodelle während des Trainings Wissen speichern und "
    "wieder abrufen, und wir vergleichen die Ergebnisse mit menschlichen Urteilen."
)


def corpus(tmp_path: Path, copies: int = 6) -> Path:
    """Several drops: the seeds, re-headed copies of them, and one faulty file."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for k in range(copies):
        for seed in SEED_FILES:
            shutil.copy(seed, folder / f"{k}_{seed.name}")
    (folder / "z_fault.txt").write_text(
        "ICML 2024 Papers\n\n" + GERMAN + "\n\nAbstract not available.\n", encoding="utf-8"
    )
    return folder


def as_rows(report) -> list[tuple]:
    return [
        (f.code, str(f.severity), f.file, f.line, f.message, f.related, f.score) for f in report
    ]


def test_warm_cache_gives_the_identical_report(tmp_path):
    folder = corpus(tmp_path)
    cache = tmp_path / "cache"
    cold = validate_paths([folder], Config(), cache_dir=cache)
    warm = validate_paths([folder], Config(), cache_dir=cache)
    assert as_rows(warm.report) == as_rows(cold.report)
    assert cold.cache_hits == 0
    assert warm.cache_hits == len(list(folder.iterdir())) and warm.cache_misses == 0
    assert {"language", "header-mismatch", "placeholder", "duplicate"} <= {
        f.code for f in cold.report
    }


def test_cache_reuses_records_of_a_changed_file_and_finds_the_new_fault(tmp_path):
    folder = corpus(tmp_path, copies=1)
    cache = tmp_path / "cache"
    validate_paths([folder], Config(), cache_dir=cache)
    target = folder / f"0_{SEED_FILES[0].name}"
    new = GERMAN.replace("untersuchen", "betrachten")  # a record the cache has never seen
    target.write_text(target.read_text(encoding="utf-8") + "\n\n" + new + "\n", "utf-8")
    warm = validate_paths([folder], Config(), cache_dir=cache)
    fresh = validate_paths([folder], Config())
    assert as_rows(warm.report) == as_rows(fresh.report)
    assert ("language", target.as_posix(), 41) in {(f.code, f.file, f.line) for f in warm.report}
    assert warm.cache_misses == 2  # the changed file, then its one new record
    assert warm.cache_hits == 3 + 19  # the three unchanged files, the changed file's old records


def test_renamed_file_reuses_the_cache_under_its_new_name(tmp_path):
    folder = corpus(tmp_path, copies=1)
    cache = tmp_path / "cache"
    validate_paths([folder], Config(), cache_dir=cache)
    (folder / "z_fault.txt").rename(folder / "y_fault.txt")
    warm = validate_paths([folder], Config(), cache_dir=cache)
    assert as_rows(warm.report) == as_rows(validate_paths([folder], Config()).report)
    assert any(f.file.endswith("y_fault.txt") for f in warm.report)


def test_corrupt_cache_is_ignored_with_a_warning(tmp_path):
    folder = corpus(tmp_path, copies=1)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "validation.sqlite").write_bytes(b"this is not a database" * 100)
    warnings: list[str] = []
    run = validate_paths([folder], Config(), cache_dir=cache, warn=warnings.append)
    assert as_rows(run.report) == as_rows(validate_paths([folder], Config()).report)
    assert len(warnings) == 1 and "unusable" in warnings[0]
    again = validate_paths([folder], Config(), cache_dir=cache, warn=warnings.append)
    assert again.cache_misses == 0 and len(warnings) == 1  # rebuilt, and usable again


def test_cache_of_other_settings_is_stale_and_dropped_with_a_warning(tmp_path):
    folder = corpus(tmp_path, copies=1)
    cache = tmp_path / "cache"
    validate_paths([folder], Config(), cache_dir=cache)
    warnings: list[str] = []
    strict = Config(min_words=500)
    run = validate_paths([folder], strict, cache_dir=cache, warn=warnings.append)
    assert as_rows(run.report) == as_rows(validate_paths([folder], strict).report)
    assert run.cache_hits == 0
    assert len(warnings) == 1 and "stale" in warnings[0]


def test_a_cache_of_another_word_hash_is_not_reused(tmp_path, monkeypatch):
    """Signatures made with the word hash before the current one (CRC-32 of each word, sketch
    version without "/lanes64") are never read back: that cache is stale, every file is checked
    again, and the signatures are those of a scan without a cache."""
    import zlib

    import curate.scan.cache
    from curate import engine as engines
    from curate.ingest.discover import discover
    from curate.scan.run import scan
    from validation import sketch

    def crc32_words(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        data = buf.tobytes()
        words = [data[s : s + n] for s, n in zip(starts.tolist(), lengths.tolist(), strict=True)]
        return np.array([zlib.crc32(w) for w in words], dtype=np.uint64)

    def scanned(cache_dir, warn=print):  # type: ignore[no-untyped-def]
        with engines.make(engines.DEFAULT, 1) as engine:
            return scan(discover([folder], ()), Config(), engine=engine, cache_dir=cache_dir,
                        warn=warn)  # fmt: skip

    folder = corpus(tmp_path, copies=1)
    cache = tmp_path / "cache"
    assert sketch.SKETCH_VERSION.endswith("/rendered-math/lanes64")
    with monkeypatch.context() as before:
        before.setattr(sketch, "_hash_words", crc32_words)
        before.setattr(curate.scan.cache, "SKETCH_VERSION", sketch.SKETCH_VERSION[:-8])
        curate.scan.cache._fingerprint.cache_clear()
        old = scanned(cache)
    curate.scan.cache._fingerprint.cache_clear()
    warnings: list[str] = []
    new = scanned(cache, warnings.append)
    fresh = scanned(None)
    assert old.cache_misses > 0 and new.cache_hits == 0
    assert len(warnings) == 1 and "stale" in warnings[0]
    for got, expected, stale in zip(new.files, fresh.files, old.files, strict=True):
        np.testing.assert_array_equal(got.sigs, expected.sigs)
        assert got.ids == stale.ids and (got.sigs != stale.sigs).any()  # what reuse would cost


def test_no_cache_writes_no_cache(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CURATE_CACHE_DIR", str(cache))
    assert main(["validate", str(SOURCES), "--no-cache", "--format", "json"]) == 0
    assert not cache.exists()
    assert main(["validate", str(SOURCES), "--format", "json"]) == 0
    assert (cache / "validation.sqlite").is_file()


def test_worker_processes_give_the_identical_report(tmp_path, monkeypatch):
    folder = corpus(tmp_path)
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    serial = validate_paths([folder], Config(), jobs=1)
    parallel = validate_paths([folder], Config(), jobs=2)
    assert as_rows(parallel.report) == as_rows(serial.report)
    assert len(serial.report) > 100


def test_the_parent_writes_new_entries_as_they_come_not_all_at_the_end(tmp_path, monkeypatch):
    """The entries of a large run are not all held in memory until it ends: with room for 10,
    a parallel run of 19 files (114 records) keeps at most 10 pending, and a second run reads
    every file from the cache."""
    import sqlite3

    import curate.scan.cache

    folder = corpus(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(curate.scan.cache, "FLUSH_ENTRIES", 10)
    most = []
    real = curate.scan.cache.ValidationCache.flush

    def flush(self):  # type: ignore[no-untyped-def]
        most.append(len(self._pending))
        keys = {k for k, _, _ in self._pending}
        real(self)
        db = sqlite3.connect(self.path)
        stored = {k for (k,) in db.execute("SELECT k FROM entries")}
        db.close()
        assert keys <= stored  # each flush commits what it held

    monkeypatch.setattr(curate.scan.cache.ValidationCache, "flush", flush)
    cold = validate_paths([folder], Config(), jobs=2, cache_dir=cache)
    # Flushed along the way, not once at the end (how many times depends on which records
    # the workers found already cached, which depends on timing).
    assert len(most) >= 3
    assert max(most) <= 9 + 20  # below the limit, plus one file's entries (19 records, the file)
    warm = validate_paths([folder], Config(), jobs=2, cache_dir=cache)
    assert warm.cache_hits == len(list(folder.iterdir())) and warm.cache_misses == 0
    assert as_rows(warm.report) == as_rows(cold.report)


@pytest.mark.parametrize("seed", SEED_FILES, ids=lambda p: p.name[:3])
def test_english_precheck_agrees_with_langdetect_on_the_seeds(seed):
    for line in seed.read_text(encoding="utf-8").split("\n")[2:]:
        if line.strip():
            assert looks_english(line)
            assert detect(line)[0] == "en"


@pytest.mark.parametrize(
    "text",
    [
        GERMAN,
        "Nous étudions comment les grands modèles de langage apprennent pendant "
        "l'entraînement et nous proposons une méthode simple pour les analyser en détail.",
        "Estudiamos cómo los modelos de lenguaje aprenden durante el entrenamiento y "
        "proponemos un método sencillo que analiza las representaciones internas.",
        "Wij bestuderen hoe grote taalmodellen kennis opslaan tijdens de training en hoe "
        "deze kennis later weer wordt opgeroepen door het model in nieuwe situaties.",
    ],
)
def test_english_precheck_leaves_other_languages_to_langdetect(text):
    assert not looks_english(text)


def test_the_macro_tables_are_part_of_what_a_cached_result_depends_on(monkeypatch) -> None:
    """A signature is made of the rendered form, which reads the tables of
    validation/texpackages: an edit of one changes the cache's fingerprint."""
    import validation

    table = Path(validation.__file__).parent / "texpackages" / "aastex.py"
    real = Path.read_bytes
    before = curate.scan.cache._fingerprint.__wrapped__("{}")
    monkeypatch.setattr(Path, "read_bytes", lambda p: real(p) + (b"#" if p == table else b""))
    assert curate.scan.cache._fingerprint.__wrapped__("{}") != before


def test_a_file_name_that_is_not_utf8_is_validated_with_the_cache_and_not_cached(tmp_path):
    """SQLite's text cannot hold the surrogates such a name is held as: its entries are left
    out (the run failed with exit 3 on a UnicodeEncodeError), the other files' are cached."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(SEED_FILES[0], src / SEED_FILES[0].name)
    with open(os.fsencode(src) + b"/caf\xe9-\xff.txt", "wb") as fh:
        fh.write(SEED_FILES[1].read_bytes())
    cache = tmp_path / "cache"
    first = validate_paths([src], Config(), cache_dir=cache)
    again = validate_paths([src], Config(), cache_dir=cache)
    assert len(first.files) == 2 and first.report.records > 0
    assert as_rows(again.report) == as_rows(first.report)
    uncached = validate_paths([src], Config())
    assert as_rows(again.report) == as_rows(uncached.report)
    assert again.cache_hits >= 1  # the seed's file result
