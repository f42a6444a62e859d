"""curate: validate, clean, version and publish text datasets built from plain-text drops.

The Python API, for notebooks and pipelines; the command line calls the same functions::

    import curate

    report = curate.validate_drops(["sources"])          # a curate.Report
    for finding in report.errors:                          # curate.Finding
        print(finding.file, finding.line, finding.code, finding.message)
    result = curate.build_dataset(["sources"], "dist")    # curate.BuildResult

Settings come from ``[tool.curate]`` (:class:`curate.Settings`, whose ``checks`` are the
checks' own :class:`curate.Config`). Heavy imports wait until a function is called, so ``import
curate`` stays cheap: every ``curate`` command imports this package first, and ``curate --help``
must not pay for what only ``curate build`` uses (``tests/test_startup.py``). Even the light
names (``Config``, ``Report``, ``__version__``) are looked up on first use, by
:func:`__getattr__`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from curate.pipeline.build import BuildRefused, BuildResult
    from curate.settings import Settings, load_config, load_settings
    from validation.config import Config, ConfigError
    from validation.findings import Finding, Report, Severity

    __version__: str

__all__ = [
    "BuildRefused",
    "BuildResult",
    "Config",
    "ConfigError",
    "Finding",
    "Report",
    "Settings",
    "Severity",
    "__version__",
    "build_dataset",
    "load_config",
    "load_settings",
    "validate_drops",
]


def validate_drops(
    paths: list[str | Path] | None = None,
    config: Config | None = None,
    *,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
) -> Report:
    """Check the drops at ``paths`` (default ``sources/``) and return every finding.

    ``config`` (the checks' settings) defaults to the nearest ``curate.toml`` /
    ``pyproject.toml`` with ``[tool.curate]``, as on the command line. A missing path raises
    :class:`curate.errors.UsageError`; a broken file is a finding, never an exception.
    """
    from curate.pipeline.validate import validate_paths
    from curate.settings import load_config

    config = load_config() if config is None else config
    return validate_paths(
        paths or ["sources"], config, jobs=jobs, cache_dir=cache_dir, warn=lambda _m: None
    ).report


def build_dataset(
    paths: list[str | Path] | None = None,
    out: str | Path = "dist",
    settings: Settings | None = None,
    **options: object,
) -> BuildResult:
    """Validate, clean, deduplicate and export the drops at ``paths`` into ``out``.

    ``settings`` default to the nearest config file's, as on the command line. Raises
    :class:`curate.BuildRefused` (with its ``report``) when validation finds errors, leaving
    ``out`` untouched. ``options`` are those of :func:`curate.pipeline.build.build`
    (``version``, ``previous``, ``template``, ``jobs``, ``engine``, ``cache_dir``,
    ``progress``).
    """
    from curate.pipeline.build import build
    from curate.settings import load_settings

    settings = load_settings() if settings is None else settings
    return build(list(paths or ["sources"]), out, settings, **options)  # type: ignore[arg-type]


# Where each lazily imported public name lives (PEP 562: ``curate.Config`` and
# ``from curate import Config`` both come through ``__getattr__`` the first time).
_LAZY = {
    "BuildRefused": "curate.pipeline.build",
    "BuildResult": "curate.pipeline.build",
    "Config": "validation.config",
    "ConfigError": "validation.config",
    "Settings": "curate.settings",
    "load_config": "curate.settings",
    "load_settings": "curate.settings",
    "Finding": "validation.findings",
    "Report": "validation.findings",
    "Severity": "validation.findings",
}


def __getattr__(name: str) -> object:
    """A public name, imported on first use and then kept as a plain module attribute."""
    if name == "__version__":
        value: object = _version()
    elif name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'curate' has no attribute {name!r}")
    globals()[name] = value  # later look-ups do not come here again
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _version() -> str:
    """The installed distribution's version, as ``importlib.metadata.version("curate")`` says.

    Asked by ``--version``, a build's manifest and the validation cache's fingerprint (so every
    warm ``curate validate``). ``importlib.metadata`` costs about as much to import as Python's
    own start-up (``email``, ``zipfile``, ``csv``…), so the usual case (one
    ``curate-*.dist-info`` folder, as pip and uv install it, editable or not) is read directly;
    anything else (an egg, a zip, two candidates in one folder) is left to ``importlib.metadata``.
    ``tests/test_startup.py`` checks that both give the same answer.
    """
    found = _dist_info_version()
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("curate")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0"


def _dist_info_version() -> str | None:
    """``Version:`` of the distribution ``importlib.metadata`` would find first, or None if unsure.

    It searches ``sys.path`` in order and takes the first folder holding a ``curate-*.dist-info``
    or ``curate-*.egg-info`` entry (names compared case-insensitively, ``-``/``_``/``.`` alike).
    """
    import os
    import re
    import sys

    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:  # a zip: importlib.metadata looks inside, this does not
            return None
        except OSError:  # missing or unreadable: importlib.metadata skips it too
            continue
        found = [
            n
            for n in names
            if n.lower().endswith((".dist-info", ".egg-info"))
            and re.sub(r"[-_.]+", "_", n.lower().rpartition(".")[0].partition("-")[0]) == "curate"
        ]
        if not found:
            continue
        if len(found) != 1 or not found[0].lower().endswith(".dist-info"):
            return None
        try:
            with open(os.path.join(entry or ".", found[0], "METADATA"), encoding="utf-8") as f:
                for line in f:
                    if not line.strip():  # the end of the headers
                        return None
                    key, _, value = line.partition(":")
                    if key.strip().lower() == "version":
                        return value.strip() or None
        except OSError:
            return None
        return None
    return None
