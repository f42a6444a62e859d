"""A row's ``word_count`` is the word total of its clean abstract, whether it is counted again
or taken from the words measure the checks took of an ASCII record the cleaner left as it was."""

from __future__ import annotations

from conftest import ROOT

from curate.ingest.formats.text import parse_file
from curate.transform import rows
from validation import normalize
from validation.config import Config
from validation.runner import check_file


def test_word_counts_are_the_clean_texts_word_totals(monkeypatch):
    config = Config()
    counted: list[str] = []
    real = normalize.word_total

    def word_total(text: str) -> int:
        counted.append(text)
        return real(text)

    checked = 0
    for path in sorted((ROOT / "sources").glob("*.txt")):
        source = parse_file(path)
        _, results = check_file(source, config)
        made = [True] * len(results)
        with monkeypatch.context() as patched:
            patched.setattr(rows.normalize, "word_total", word_total)
            columns = rows.content_columns(source.records, results, made, "unicode", [])
        assert columns["word_count"] == [real(text) for text in columns["abstract"]]
        checked += len(results)
    # Most records are ASCII and left as they were: their counts were not made again.
    assert checked > 50 and len(counted) < checked // 2
