"""Start-up: the command line must not import the heavy libraries it does not use.

``curate --help`` and ``curate validate`` on a small drop are what CI and a user wait for on
every call; importing ``datasets``, pandas or huggingface_hub for them costs seconds (see
``bench/bench_startup.py``). These tests check the list of loaded modules in a fresh
interpreter, not a timing, so they do not depend on the machine's load.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Libraries that only building, cleaning, writing or publishing use.
HEAVY = (
    "datasets",
    "pandas",
    "pandera",
    "pyarrow",
    "huggingface_hub",
    "httpx2",
    "langdetect",
    "ftfy",
    "pylatexenc",
    "matplotlib",
)


def loaded_modules(code: str) -> set[str]:
    """Top-level names of the modules loaded after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}


def test_importing_the_cli_loads_no_heavy_library():
    loaded = loaded_modules("import curate.cli")
    assert "curate" in loaded  # the probe did import it
    assert sorted(set(HEAVY) & loaded) == []


def test_curate_help_loads_no_heavy_library():
    code = (
        "import contextlib, io\n"
        "from curate.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert 'validate' in out.getvalue()"
    )
    assert sorted(set(HEAVY) & loaded_modules(code)) == []


def test_the_probe_sees_a_heavy_import():
    """The check can fail: a module that imports pandas shows up as loaded."""
    assert "pandas" in loaded_modules("import curate.cli, pandas")
