"""The console: -q/-v, a progress bar only on a terminal, the closing lines, --strict, --version."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import tomllib

import pytest
from conftest import ROOT

from curate.cli import main

# The seeds' 25 warnings, counted by hand once (see tests/validation/test_render.py).
SEED_WARNINGS = "25 warnings (2 duplicate, 15 latex, 8 markdown)"


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    assert capsys.readouterr().out == f"curate {version}\n"


def test_build_ends_with_the_warnings_and_where_they_are(drop, tmp_path, capsys):
    out = tmp_path / "dist"
    assert main(["build", str(drop.folder), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out.splitlines()
    assert stdout[-2] == f"{SEED_WARNINGS}: every one is in {out / 'validation-report.json'}"
    assert stdout[-1] == f"report: {out / 'report.html'} (open it in a browser)"


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_leaves_stderr_empty(drop, tmp_path, capsys, where):
    argv = ["build", str(drop.folder), "--out", str(tmp_path / "dist")]
    argv = ["-q", *argv] if where == "before" else [*argv, "--quiet"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "built " in captured.out  # the result still says what was built


def test_default_and_verbose_stderr(drop, tmp_path, capsys):
    assert main(["build", str(drop.folder), "--out", str(tmp_path / "a")]) == 0
    plain = capsys.readouterr().err
    assert "curate: validated 3 files, 57 records" in plain
    assert "checked " not in plain and "\r" not in plain  # no bar: stderr is not a terminal
    assert main(["-v", "build", str(drop.folder), "--out", str(tmp_path / "b")]) == 0
    verbose = capsys.readouterr().err
    for name in ("000_06b61cfca4c53418", "001_4aa885bbda26af6d", "002_53463394b5bff7ba"):
        assert f"/{name}.txt (19 records)" in verbose
    assert "curate:   files (wall): " in verbose  # the stage timings


def test_quiet_and_verbose_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["validate", "-q", "-v"])
    assert exc.value.code == 2


def test_strict_says_why_it_failed(capsys):
    assert main(["validate", str(ROOT / "sources"), "--strict"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "curate: failed: no errors, but 25 warnings and --strict fails on warnings"
    )


def test_errors_say_how_many(drop, capsys):
    drop("zz_binary.txt", b"ICML 2025 Papers\n\n\xff\xfe broken bytes\n")
    assert main(["validate", str(drop.folder)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == "curate: failed: 1 error"


def _stderr_on(terminal: bool, argv: list[str], cwd) -> bytes:
    """Run the CLI with stderr on a pseudo-terminal (or a pipe) and return what it wrote."""
    code = "import sys; from curate.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", code, *argv]
    env = dict(os.environ)
    if not terminal:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd,
                              env=env, timeout=300)  # fmt: skip
        return proc.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=300) == 0
    return out


def test_progress_bar_only_on_a_terminal(drop, tmp_path):
    argv = ["validate", str(drop.folder), "--no-cache", "--jobs", "1"]
    bar = _stderr_on(True, argv, tmp_path).decode("utf-8")
    frames = [frame for frame in bar.split("\r") if "curate: checking" in frame]
    assert frames, bar
    last = frames[-1]
    assert "100%|" in last and "3/3 files, 57 records" in last and "records/s" in last
    assert any("<" in f and "]" in f for f in frames)  # elapsed<remaining: the ETA
    piped = _stderr_on(False, argv, tmp_path).decode("utf-8")
    assert "curate: checking" not in piped and "\r" not in piped
