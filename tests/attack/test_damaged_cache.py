"""A validation cache of an unknown schema (another program's tables, or a damaged one) is
one warning and is set aside once; the next run uses the rebuilt cache without a word. It
printed a warning for every look-up, 8,010 lines on every run."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from hostile import GOOD, MAPPING, SAMPLE

from curate.cli import main
from curate.scan.cache import FORMAT


def test_a_cache_of_an_unknown_schema_is_one_line_and_set_aside_once(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    for i, record in enumerate(list(SAMPLE.values())[:30]):
        (src / f"{i:02d}.jsonl").write_text(json.dumps(record) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    cache = Path(os.environ["CURATE_CACHE_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(cache / "validation.sqlite") as db:
        db.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT)")
        db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
        db.execute("CREATE TABLE entries (k TEXT PRIMARY KEY, v BLOB)")  # no checksum column
        db.execute("INSERT INTO entries VALUES ('x', ?)", (json.dumps(GOOD[0]),))
    db.close()

    runs = []
    for _ in range(2):
        main(["validate", str(src), "--config", str(tmp_path / "curate.toml")])
        runs.append([line for line in capsys.readouterr().err.splitlines() if "cache" in line])
    first, second = runs
    assert len(first) == 1 and "unknown schema" in first[0] and "set aside" in first[0], first
    assert second == []
    assert (cache / "validation.corrupt").exists()
