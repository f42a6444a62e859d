"""The wheel works outside this repository: built, installed into a fresh virtual environment,
then `curate init demo`, drops copied in, `curate build`, with no file of the repository.

This is the suite's slowest test (a wheel build, a venv, an install from uv's cache and a
cold-start build: about 30 s here). Dependencies are constrained to the versions in uv.lock,
so the install is what CI tests and comes from uv's cache when it holds them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT

DROPS = ROOT / "tests" / "data" / "anyone"


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> str:
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, f"{argv}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    uv = shutil.which("uv")
    assert uv is not None, "uv is needed to build and install the wheel"
    out = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    run([uv, "build", "--wheel", "--out-dir", str(out), str(ROOT)], out, env)
    (path,) = out.glob("*.whl")
    assert path.name.startswith("curate_datasets-")  # the wheel's name is the distribution's
    return path


def test_the_wheel_holds_the_template_licence_and_type_marker(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in [
        "curate/project/templates/dataset_card.md",
        "curate/project/templates/pyproject.toml",
        "curate/project/templates/workflows/validate.yml",
        "curate/project/templates/workflows/release.yml",
        "curate/py.typed",
        "validation/py.typed",
    ]:
        assert name in names, name
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    requires = [ln.split(":", 1)[1].strip() for ln in text.splitlines()
                if ln.startswith("Requires-Dist:")]  # fmt: skip
    assert requires and not [r for r in requires if "==" in r], requires  # ranges, not pins
    assert "Name: curate-datasets\n" in text
    assert "License-Expression: Apache-2.0" in text


def test_installed_wheel_inits_and_builds_a_project_anywhere(wheel, tmp_path):
    uv = shutil.which("uv")
    assert uv is not None
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CURATE_CACHE_DIR")
    }
    constraints = tmp_path / "constraints.txt"
    run([uv, "export", "--project", str(ROOT), "--frozen", "--no-dev", "--no-emit-project",
         "--no-hashes", "--format", "requirements-txt", "-q", "-o", str(constraints)],
        tmp_path, env)  # fmt: skip
    venv = tmp_path / "venv"
    run([uv, "venv", "-q", str(venv), "--python", sys.executable], tmp_path, env)
    python = venv / "bin" / "python"
    run([uv, "pip", "install", "-q", "--python", str(python), "-c", str(constraints),
         str(wheel)], tmp_path, env)  # fmt: skip
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = run([str(python), "-c", "import curate, validation; "
                 "print(curate.__file__); print(validation.__file__)"], work, env)  # fmt: skip
    assert all(Path(p).is_relative_to(venv) for p in where.split()), where

    curate = str(venv / "bin" / "curate")
    run([curate, "init", "demo"], work, env)
    demo = work / "demo"
    for name in ("icml-2024.txt", "neurips-2018.txt"):
        shutil.copy(DROPS / name, demo / "sources" / name)
    with open(demo / "pyproject.toml", "a", encoding="utf-8") as fh:
        fh.write('venues = ["ICML", "NeurIPS"]\nyears = [2018, 2024]\n')
    out = run([curate, "build"], demo, env)
    assert "6 records out" in out

    dist = demo / "dist"
    table = pq.read_table(dist / "data" / "train-00000-of-00001.parquet")
    assert table.num_rows == 6
    card = (dist / "README.md").read_text(encoding="utf-8")
    assert yaml.safe_load(card.split("---\n")[1])["pretty_name"] == "demo"
    assert "## Uses and limitations" in card  # the packaged template's prose
    manifest = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["repo_id"] == "your-org/demo"
