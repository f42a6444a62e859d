"""Start-up: the command line must not import the heavy libraries it does not use.

``curate --help`` and ``curate validate`` on a small drop are what CI and a user wait for on
every call; importing numpy, pandas, pandera or huggingface_hub for them costs seconds on a
slow machine (see ``bench/bench_startup.py``). These tests check which modules a fresh
interpreter loads, not a timing, so they do not depend on the machine's load:

- ``import curate.cli`` and the short commands (``--help``, ``--version``, a command's
  ``--help``) load none of :data:`HEAVY`, not even numpy;
- a warm ``curate validate`` (every file from the cache) loads no pandas, pandera, pyarrow or
  langdetect: only the cold run, which runs the checks, needs them;
- a cold ``curate validate`` of a clean drop loads no pandas, pandera nor ftfy either: the
  schema check proves the record contract holds in plain Python (``validation/schema.py``) and
  the mojibake check imports ftfy only past its cheap gate. A drop that breaks the schema does
  load pandera, which reports it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What no command may import before it knows it needs it: the data stack, the Hub client, the
# report's charts and templates, the cleaner, the progress bar, and importlib.metadata (as dear
# as Python's own start-up; ``curate.__version__`` reads the dist-info directly).
HEAVY = (
    "numpy",
    "pyarrow",
    "pandas",
    "pandera",
    "datasets",
    "huggingface_hub",
    "httpx",
    "httpx2",
    "matplotlib",
    "jinja2",
    "langdetect",
    "ftfy",
    "pylatexenc",
    "tqdm",
    "importlib.metadata",
    "multiprocessing",
    "concurrent.futures",
    "sqlite3",
    "ray",  # the `ray` extra: only `--engine ray` imports it
)
# What the checks need and a warm run (every result from the cache) must not: numpy stays (the
# cached sketches are arrays), the schema check's pandas and pandera and the language model go.
NOT_WHEN_WARM = (
    "pandas",
    "pandera",
    "pyarrow",
    "langdetect",
    "ftfy",
    "datasets",
    "huggingface_hub",
    "matplotlib",
    "jinja2",
    "pylatexenc",
    "importlib.metadata",
    "multiprocessing",
    "concurrent.futures",
    "curate.transform.clean",
)


def heavy_among(modules: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The entries of ``heavy`` that are among ``modules``, itself or any of its submodules."""
    return sorted(h for h in heavy if any(m == h or m.startswith(h + ".") for m in modules))


def loaded_modules(code: str) -> set[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def curate_command(*args: str, env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """Run the installed ``curate`` script under ``python -X importtime``: what it imported.

    ``-X importtime`` reports every module an interpreter imports, on stderr, so this sees the
    real command as a user runs it (the console script, its ``main``), not a re-creation of it.
    """
    script = Path(sys.executable).with_name("curate")
    entry = [str(script)] if script.is_file() else ["-m", "curate.cli"]
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *entry, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert run.returncode in (0, 1), run.stderr[-2000:]
    imported = {
        line.split("|")[-1].strip()
        for line in run.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert imported, "no -X importtime output"
    return imported, run.stdout


def test_importing_the_cli_loads_no_heavy_library():
    loaded = loaded_modules("import curate.cli")
    assert "curate.cli" in loaded  # the probe did import it
    assert heavy_among(loaded) == []


def test_importing_curate_loads_no_heavy_library_and_keeps_its_api():
    loaded = loaded_modules(
        "import curate\n"
        "assert callable(curate.validate_drops) and callable(curate.build_dataset)\n"
        "from curate import Config, Finding, Report, Severity\n"
        "assert curate.ConfigError.__name__ == 'ConfigError'\n"
        "assert curate.__version__.count('.') >= 1"
    )
    assert heavy_among(loaded) == []


@pytest.mark.parametrize(
    "args", [["--help"], ["--version"], ["validate", "--help"], ["build", "--help"]]
)
def test_short_commands_load_no_heavy_library(args):
    imported, out = curate_command(*args)
    assert "curate.cli" in imported
    assert heavy_among(imported) == []
    assert ("validate" in out) if args == ["--help"] else out


def test_curate_help_in_process_loads_no_heavy_library():
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
    assert heavy_among(loaded_modules(code)) == []


def test_version_agrees_with_importlib_metadata():
    """The fast read of the dist-info gives what importlib.metadata gives."""
    from importlib.metadata import version

    import curate
    import curate.version

    assert curate.version.DISTRIBUTION == "curate-datasets"
    fast = curate.version._dist_info_version()
    assert fast is not None  # the dist-info was found by its name, not left to the fallback
    assert fast == version("curate-datasets") == curate.__version__


def test_a_warm_validate_loads_no_pandas_pandera_or_langdetect(tmp_path):
    env = {"CURATE_CACHE_DIR": str(tmp_path / "cache")}
    cold, cold_out = curate_command("validate", "sources/", "--format", "json", env=env)
    warm, warm_out = curate_command("validate", "sources/", "--format", "json", env=env)
    # The cold run checked the files, schema check included: the probe sees it.
    assert "validation.schema" in cold
    assert "validation.schema" not in warm
    assert json.loads(warm_out) == json.loads(cold_out)
    assert heavy_among(warm, NOT_WHEN_WARM) == []


# Not needed to check a clean drop: pandas and pandera (the schema check's reporter, only when a
# rule fails) and ftfy (the mojibake check's, only for text that may be mojibake).
NOT_WHEN_CLEAN = ("pandas", "pandera", "ftfy")


def test_a_cold_validate_of_a_clean_drop_loads_no_pandas_pandera_or_ftfy(tmp_path):
    drop = tmp_path / "sources"
    shutil.copytree(ROOT / "sources", drop)
    env = {"CURATE_CACHE_DIR": str(tmp_path / "cache")}  # empty, and --no-cache besides
    imported, out = curate_command("validate", str(drop), "--no-cache", "--format", "json", env=env)
    report = json.loads(out)
    assert "validation.checks" in imported and "validation.schema" in imported  # it checked
    assert not any(f["code"] == "schema" for f in report["findings"])
    assert heavy_among(imported, NOT_WHEN_CLEAN) == []
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
def test_a_cold_validate_of_a_drop_that_breaks_the_schema_loads_pandera(tmp_path):
    """The other side: pandera is imported when a rule fails, and reports the failure."""
    drop = tmp_path / "sources"
    shutil.copytree(ROOT / "sources", drop)
    first = sorted(drop.iterdir())[0]
    lines = first.read_text(encoding="utf-8").split("\n")
    lines[0] = "ICML 1066 Papers"  # a year outside the schema's 1950..2100
    first.write_text("\n".join(lines), encoding="utf-8")
    imported, out = curate_command("validate", str(drop), "--no-cache", "--format", "json")
    schema = [f for f in json.loads(out)["findings"] if f["code"] == "schema"]
    assert [(f["file"].rpartition("/")[2], f["message"]) for f in schema] == [
        (first.name, "column 'year' fails in_range(1950, 2100): '1066'")
    ]
    assert {"pandas", "pandera"} <= {m.split(".")[0] for m in imported}


def test_the_probe_sees_a_heavy_import():
    """The check can fail: a module that imports pandas shows up as loaded."""
    assert "pandas" in heavy_among(loaded_modules("import curate.cli, pandas"))
