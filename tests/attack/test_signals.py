"""SIGTERM and Ctrl-C on a build in a real process: SIGTERM stops it as Ctrl-C does (the
workers ended, the staging folder removed, the output folder as it was), with its own exit
code, 143; on Ray it was Ray's C++ handler, a stack dump and SIGABRT (134). Ctrl-C on the
local pool ends the workers mid-task rather than waiting for them."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

TEMPLATE = ROOT / "dataset_card.md"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus") / "drops"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate.py"), str(folder), "--records", "6000",
         "--preset", "warnings-only"],
        check=True, capture_output=True,
    )  # fmt: skip
    return folder


def _build_then(sig: int, engine: str, corpus, tmp_path) -> tuple[int, str, float]:
    """A build started, ``sig`` sent once its per-file stage is under way: the exit code, its
    stderr and the seconds from the signal to the exit."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from curate.cli import main; sys.exit(main())",
         "build", str(corpus), "--out", str(tmp_path / "dist"), "--engine", engine,
         "--jobs", "2", "--no-cache", "-v", "--template", str(TEMPLATE)],
        cwd=tmp_path, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "checked" in line:
            break
    proc.send_signal(sig)
    sent = time.monotonic()
    rest = proc.stderr.read()
    code = proc.wait(timeout=120)
    return code, "".join(lines) + rest, time.monotonic() - sent


RAY = pytest.param("ray", marks=[pytest.mark.slow, pytest.mark.xdist_group("ray")])


@pytest.mark.parametrize("engine", ["local", RAY])
def test_sigterm_stops_a_build_as_ctrl_c_does_with_exit_143(engine, corpus, tmp_path):
    if engine == "ray" and importlib.util.find_spec("ray") is None:  # never imported here
        pytest.skip("the ray extra is not installed")
    code, err, _ = _build_then(signal.SIGTERM, engine, corpus, tmp_path)
    assert code == 143, err
    assert err.strip().splitlines()[-1] == "curate: terminated"
    assert "Traceback" not in err and "SIGABRT" not in err and "*** " not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no output, no staging folder


MID_TASK = """
import os, signal, sys, threading, time
from pathlib import Path
from curate.engine.local import LocalPool

folder = Path(sys.argv[1])


def task(i):
    (folder / f"started-{i}").write_text(str(os.getpid()))
    time.sleep(20)
    (folder / f"finished-{i}").write_text("")  # only if the run waited for it
    return i


def interrupt():
    while len(list(folder.glob("started-*"))) < 2:  # both workers at work
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C


threading.Thread(target=interrupt, daemon=True).start()
try:
    list(LocalPool(2).map(task, range(2)))
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads the workers' state from /proc")
def test_ctrl_c_on_the_local_pool_ends_its_workers_mid_task(tmp_path):
    """The first Ctrl-C waited for the running tasks (24 s on a large file, minutes on a larger
    one) before it took effect: the workers are ended at once, and their tasks never finish."""
    done = subprocess.run(
        [sys.executable, "-c", MID_TASK, str(tmp_path)], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.split() == ["interrupted"], done.stderr
    pids = [int(p.read_text()) for p in sorted(tmp_path.glob("started-*"))]
    assert len(pids) == 2
    assert not list(tmp_path.glob("finished-*"))  # neither task was let finish
    assert not [p for p in pids if Path(f"/proc/{p}").exists()]  # nor any worker left
