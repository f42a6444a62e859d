"""`--output` names a file the user owns: a symlink is written through (it stays a link, and
its target gets the report), a FIFO and a character device are written to as they are
(`/dev/stdout`, common in CI, stays the link it is), and a folder or a socket is refused
before the work, exit 2. The temp-file-and-rename of an atomic write replaced each of them
with a regular file."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest
from hostile import GOOD, MAPPING

from curate.cli import main


@pytest.fixture
def src(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps(GOOD[0]) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    return folder


def _validate(src, output: str) -> int:
    return main(["validate", str(src), "--format", "json", "--output", output, "--no-cache",
                 "--config", str(src.parent / "curate.toml")])  # fmt: skip


def test_a_symlink_is_written_through_and_stays_a_link(src, tmp_path):
    target = tmp_path / "reports" / "latest.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    assert _validate(src, str(link)) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["summary"]["records"] == 1


def test_a_dangling_symlink_gets_its_target_made(src, tmp_path):
    link = tmp_path / "report.json"
    link.symlink_to(tmp_path / "made.json")
    assert _validate(src, str(link)) == 0
    assert link.is_symlink() and (tmp_path / "made.json").is_file()


def test_a_fifo_is_written_to_and_stays_a_fifo(src, tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        assert _validate(src, str(fifo)) == 0
    finally:
        reader.join(timeout=30)
    assert fifo.is_fifo()
    assert got and json.loads(got[0])["summary"]["records"] == 1


def test_a_character_device_is_written_to(src):
    assert _validate(src, "/dev/null") == 0
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


@pytest.mark.parametrize("redirect", ["pipe", "file"])
def test_dev_stdout_is_written_through_in_a_real_process(redirect, src, tmp_path):
    script = "import sys; from curate.cli import main; sys.exit(main(sys.argv[1:]))"
    args = [
        sys.executable,
        "-c",
        script,
        "validate",
        str(src),
        "--format",
        "json",
        "--output",
        "/dev/stdout",
        "--no-cache",
        "--config",
        str(tmp_path / "curate.toml"),
    ]
    if redirect == "pipe":
        proc = subprocess.run(args, capture_output=True, timeout=120, cwd=tmp_path)
        out = proc.stdout
    else:
        with (tmp_path / "out.json").open("wb") as fh:
            proc = subprocess.run(args, stdout=fh, stderr=subprocess.PIPE, timeout=120,
                                  cwd=tmp_path)  # fmt: skip
        out = (tmp_path / "out.json").read_bytes()
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out)["summary"]["records"] == 1
    assert os.path.islink("/dev/stdout")


def test_a_folder_or_a_socket_is_refused_before_the_work(src, tmp_path, capsys):
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        for target, kind in ((tmp_path, "a folder"), (sock_path, "a socket")):
            assert _validate(src, str(target)) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and f"is {kind}" in err, err
        assert sock_path.is_socket()
