"""The wheel works outside this repository, beside a training environment's own libraries:
built, found by its distribution name `curate-datasets` in a folder index, installed into a
fresh virtual environment that already holds numpy 2.3, pandas 2.2 and huggingface_hub at
curate's floor (none of them moved by the install), then `curate init demo`, drops copied in,
`curate build`, with no file of the repository.

This is the suite's slowest test (a wheel build, a venv, installs from uv's cache and a
cold-start build). What the environment does not fix is constrained to the versions in uv.lock,
so it comes from uv's cache when that holds them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

pytestmark = pytest.mark.slow  # builds the wheel and environments of its own

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
        "curate/report/report.html.j2",
        "curate/report/report.html.j2.compiled",
        "curate/py.typed",
        "validation/py.typed",
    ]:
        assert name in names, name
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    requires = [ln.split(":", 1)[1].strip() for ln in text.splitlines()
                if ln.startswith("Requires-Dist:")]  # fmt: skip
    pins = [r for r in requires if "==" in r.split(";")[0]]  # not `extra == 'ray'`
    assert requires and not pins, requires  # ranges, not pins
    assert "ray<3,>=2.60; extra == 'ray'" in requires  # the optional Ray engine
    assert {Requirement(r).name for r in requires} >= {"numpy", "pandas", "tqdm", "httpx2"}
    assert "Name: curate-datasets\n" in text
    # what the upload's twine (.github/workflows/pypi.yml) knows; a newer backend writes 2.5
    assert text.startswith("Metadata-Version: 2.4\n")
    assert "License-Expression: Apache-2.0" in text
    assert "Project-URL: Repository, https://github.com/curate-datasets/curate\n" in text


def floor(name: str) -> str:
    """The lowest version pyproject.toml allows of ``name`` (its ``>=``)."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (req,) = [r for r in map(Requirement, deps["dependencies"]) if r.name == name]
    (low,) = [s.version for s in req.specifier if s.operator == ">="]
    return low


# What the training environment already holds before curate is installed into it.
ENVIRONMENT = {"numpy": "2.3.*", "pandas": "2.2.*", "huggingface-hub": floor("huggingface-hub")}


def installed(python: Path, names: list[str]) -> dict[str, str]:
    code = "import json, sys, importlib.metadata as m; "
    code += "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
    out = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    return json.loads(out)


def test_installed_wheel_inits_and_builds_a_project_anywhere(wheel, tmp_path):
    uv = shutil.which("uv")
    assert uv is not None
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CURATE_CACHE_DIR")
    }
    locked = tmp_path / "locked.txt"
    run([uv, "export", "--project", str(ROOT), "--frozen", "--no-dev", "--no-emit-project",
         "--no-hashes", "--format", "requirements-txt", "-q", "-o", str(locked)],
        tmp_path, env)  # fmt: skip
    # The lock's versions for everything the environment does not fix itself.
    fixed = {canonicalize_name(n) for n in ENVIRONMENT}
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("".join(
        ln + "\n" for ln in locked.read_text(encoding="utf-8").splitlines()
        if ln and not ln.startswith(("#", " ")) and canonicalize_name(Requirement(
            ln.split(";")[0]).name) not in fixed
    ), encoding="utf-8")  # fmt: skip
    venv = tmp_path / "venv"
    run([uv, "venv", "-q", str(venv), "--python", sys.executable], tmp_path, env)
    python = venv / "bin" / "python"
    run([uv, "pip", "install", "-q", "--python", str(python), "-c", str(constraints),
         *(f"{n}=={v}" for n, v in ENVIRONMENT.items())], tmp_path, env)  # fmt: skip
    before = installed(python, list(ENVIRONMENT))
    assert before["numpy"].startswith("2.3.") and before["pandas"].startswith("2.2.")
    assert Version(before["huggingface-hub"]) == Version(ENVIRONMENT["huggingface-hub"])

    # By name, from a folder index beside PyPI (which gives the other dependencies).
    index = tmp_path / "index"
    index.mkdir()
    shutil.copy(wheel, index / wheel.name)
    run([uv, "pip", "install", "-q", "--python", str(python), "-c", str(constraints),
         "--find-links", str(index), "curate-datasets"], tmp_path, env)  # fmt: skip
    assert installed(python, list(ENVIRONMENT)) == before  # nothing moved
    # ... and what was installed is this wheel, file for file (RECORD holds their hashes)
    version = installed(python, ["curate-datasets"])["curate-datasets"]
    site = next((venv / "lib").glob("python3.*/site-packages"))
    record = f"curate_datasets-{version}.dist-info/RECORD"
    ours = zipfile.ZipFile(wheel).read(record).decode().splitlines()
    got = (site / record).read_text(encoding="utf-8").splitlines()
    code = [ln for ln in ours if ln.startswith(("curate/", "validation/"))]
    assert code and set(code) <= set(got)

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
    # Two venues and two years, nothing configured: the scaffold accepts any until narrowed.
    out = run([curate, "build"], demo, env)
    assert "6 records out" in out
    # Without the `ray` extra, --engine ray is a usage error in one line, before any work.
    no_ray = subprocess.run([curate, "build", "--engine", "ray", "--out", "elsewhere"], cwd=demo,
                            env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert (no_ray.returncode, no_ray.stdout) == (2, "")
    assert no_ray.stderr.splitlines() == [
        "curate: error: --engine ray needs Ray, which is not installed: "
        "pip install 'ray>=2.60,<3' (curate-datasets' [ray] extra)"
    ]
    assert not (demo / "elsewhere").exists()

    dist = demo / "dist"
    table = pq.read_table(dist / "data" / "train-00000-of-00001.parquet")
    assert table.num_rows == 6
    card = (dist / "README.md").read_text(encoding="utf-8")
    assert yaml.safe_load(card.split("---\n")[1])["pretty_name"] == "demo"
    assert "## Uses and limitations" in card  # the packaged template's prose
    manifest = json.loads((dist / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["repo_id"] == "your-org/demo"
