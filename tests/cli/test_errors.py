"""The command line never shows a traceback unless asked: one line, and a documented exit code."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, SOURCES

import curate.io
import curate.pipeline.validate
import curate.scan.run
from curate.cli import main


def one_line(err: str) -> str:
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def test_an_unexpected_error_is_one_line_with_a_hint(monkeypatch, capsys):
    def boom(*args, **kwargs):
        raise RuntimeError("something nobody planned for\nsecond line")

    monkeypatch.setattr(curate.pipeline.validate, "validate_paths", boom)
    assert main(["validate", str(SOURCES)]) == 3
    err = one_line(capsys.readouterr().err)
    assert err == (
        "curate: error: RuntimeError: something nobody planned for "
        "(re-run with --debug for the traceback)\n"
    )


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(monkeypatch, where):
    def boom(*args, **kwargs):
        raise RuntimeError("planted")

    monkeypatch.setattr(curate.pipeline.validate, "validate_paths", boom)
    argv = ["--debug", "validate"] if where == "before" else ["validate", "--debug"]
    with pytest.raises(RuntimeError, match="planted"):
        main([*argv, str(SOURCES)])


def test_an_environment_failure_names_the_file(monkeypatch, tmp_path, capsys):
    report = tmp_path / "report.json"

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(curate.io, "atomic_write_bytes", full)
    assert main(["validate", str(SOURCES), "--output", str(report), "--format", "json"]) == 3
    err = one_line(capsys.readouterr().err)
    assert f"{os.strerror(errno.ENOSPC)}: {report}" in err and "--debug" in err


def test_output_pointing_at_a_folder_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", str(SOURCES), "--output", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before validating anything
    assert one_line(captured.err) == (
        f"curate: error: --output {tmp_path} is a folder; give the report's file name\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_closed_pipe_ends_quietly():
    read, write = os.pipe()
    os.close(read)  # the reader is gone before curate writes a byte, like `| head -0`
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "curate.cli", "codes"],
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert proc.returncode == 141
    assert proc.stderr == b""


def test_a_row_policy_for_an_error_is_refused_with_what_to_do(tmp_path, capsys):
    config = tmp_path / "curate.toml"
    config.write_text('[row_policy]\nlanguage = "drop"\n', encoding="utf-8")
    assert main(["validate", str(SOURCES), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "curate.toml:2: [row_policy] language = 'drop' cannot apply" in err
    assert "make it a warning in [severity]" in err and "tool.curate" not in err
    config.write_text(
        '[row_policy]\nlanguage = "drop"\n[severity]\nlanguage = "warning"\n', "utf-8"
    )
    assert main(["validate", str(SOURCES), "--config", str(config), "-q"]) == 0


def test_codes_as_json_with_row_policies(tmp_path, capsys):
    config = tmp_path / "curate.toml"
    config.write_text('[row_policy]\ntruncated = "drop"\n', encoding="utf-8")
    assert main(["codes", "--format", "json", "--config", str(config)]) == 0
    codes = {c["code"]: c for c in json.loads(capsys.readouterr().out)}
    assert codes["truncated"]["row_policy"] == "drop" and codes["too-long"]["row_policy"] == "flag"
    assert codes["duplicate"]["row_policy"] is None  # merged, not a row policy's
    assert codes["language"]["severity"] == "error" and codes["language"]["scope"] == "record"


def test_a_stale_cache_is_a_note_of_verbose_runs_only(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CURATE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["validate", str(SOURCES), "-q"]) == 0
    other = tmp_path / "curate.toml"
    other.write_text("min_words = 5\n", encoding="utf-8")  # other settings: the cache is stale
    capsys.readouterr()
    assert main(["validate", str(SOURCES), "--config", str(other)]) == 0
    assert "stale" not in capsys.readouterr().err  # a settings change is no fault
    assert main(["validate", str(SOURCES)]) == 0
    assert main(["validate", str(SOURCES), "--config", str(other), "-v"]) == 0
    err = capsys.readouterr().err
    assert "curate: note: cache" in err and "stale" in err and "warning" not in err
    assert main(["validate", str(SOURCES), "-q"]) == 0
    assert main(["validate", str(SOURCES), "--config", str(other), "-q"]) == 0
    assert capsys.readouterr().err == ""
