"""Ray, in real processes on a real local cluster: stdout carries curate's output only,
whatever Ray prints (a worker killed mid-task made Ray's driver print "(raylet) A worker
died…" in ANSI colours to stdout, so a JSON report piped on was no JSON); the start of a
cluster of the run's own is one progress line, and a start that fails is one line that says
what to do."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hostile import GOOD, MAPPING

# Ray is never imported here: it reads its settings from the environment when it is imported,
# and the tests of this process that start a cluster of their own set them first.
# One Ray cluster at a time on this machine: these share the xdist group of tests/engine's.
pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None, reason="the ray extra is not installed"
    ),
    pytest.mark.xdist_group("ray"),
]

KILLED = """
import json, os, sys
from pathlib import Path
from curate.engine.ray import RayEngine

marker = Path(sys.argv[1])


def task(n):
    if n == 1 and not marker.exists():
        marker.write_text("died")
        os._exit(1)  # the worker dies mid-task, as the out-of-memory killer leaves it
    return n * n


engine = RayEngine(jobs=2)
try:
    results = list(engine.map(task, range(4)))
finally:
    engine.close()
print(json.dumps({"results": results}))
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return env


def test_a_killed_worker_leaves_stdout_to_curate(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", KILLED, str(tmp_path / "marker")],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "marker").exists()  # a worker did die, and its task was retried
    assert json.loads(proc.stdout) == {"results": [0, 1, 4, 9]}  # and nothing else
    ours = [line for line in proc.stderr.splitlines() if line.startswith("curate:")]
    assert ours == ["curate: starting a local Ray cluster (2 CPUs)…"]


def test_a_local_cluster_that_cannot_start_is_one_line(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, record in (("a.jsonl", GOOD[0]), ("b.jsonl", GOOD[1])):  # past 2 MB: parallel
        lines = [json.dumps({**record, "abstract": f"{record['abstract']} ({i})"})
                 for i in range(1_200)]  # fmt: skip
        (src / name).write_text("\n".join(lines) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    env = _env()
    env["RAY_TMPDIR"] = str(tmp_path / "curate.toml" / "x")  # under a file: Ray cannot start
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
         "validate", str(src), "--engine", "ray", "--jobs", "2", "--no-cache",
         "--config", str(tmp_path / "curate.toml")],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "curate: starting a local Ray cluster (2 CPUs)…"
    assert len(lines) == 2 and lines[1].startswith("curate: error: the local Ray cluster did "
                                                   "not start ("), lines  # fmt: skip
    assert lines[1].endswith("; retry, or use --engine local")
    assert proc.stdout == ""


@pytest.mark.slow
def test_a_cluster_of_the_builds_own_leaves_no_token_file_and_no_session_folder(tmp_path):
    """Ray, given no token, wrote one to ~/.ray/auth_token with mode 0644 (any local user could
    run code on the cluster), and left its session folder (logs, sockets) behind every build."""
    src = tmp_path / "src"
    src.mkdir()
    for name, record in (("a.jsonl", GOOD[0]), ("b.jsonl", GOOD[1])):  # past 2 MB: parallel
        lines = [json.dumps({**record, "id": f"{record['id']}-{i}",
                             "abstract": f"{record['abstract']} ({i})"})
                 for i in range(1_200)]  # fmt: skip
        (src / name).write_text("\n".join(lines) + "\n")
    (tmp_path / "curate.toml").write_text(MAPPING)
    home = tmp_path / "home"
    home.mkdir()
    # Ray's socket paths must fit in 107 bytes, which one under tmp_path does not.
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    env = {k: v for k, v in _env().items() if not k.startswith("RAY_AUTH_")}
    env.update(HOME=str(home), RAY_TMPDIR=str(temp))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
             "build", str(src), "--out", str(tmp_path / "dist"), "--engine", "ray", "--jobs", "2",
             "--no-cache", "--config", str(tmp_path / "curate.toml")],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
        )  # fmt: skip
        left = sorted(p.name for p in temp.iterdir())
    finally:
        shutil.rmtree(temp)
    assert proc.returncode == 0, proc.stderr
    assert "curate: starting a local Ray cluster (2 CPUs)…" in proc.stderr.splitlines()
    assert (tmp_path / "dist" / "manifest.json").exists()
    assert not (home / ".ray" / "auth_token").exists()  # the token was the process's own
    assert left == []  # the cluster's session folder is gone
