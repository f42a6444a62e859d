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
must not pay for what only ``curate build`` uses (``tests/cli/test_startup.py``). Even the light
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
    """Check the drops at ``paths`` and return every finding.

    ``config`` (the checks' settings) defaults to the nearest ``curate.toml`` /
    ``pyproject.toml`` with ``[tool.curate]``, as on the command line, and ``paths`` then to
    its ``sources`` (else ``sources/``). A missing path raises
    :class:`curate.errors.UsageError`; a broken file is a finding, never an exception.
    """
    from curate.pipeline.validate import validate_paths
    from curate.settings import load_settings

    default: list[str | Path] = ["sources"]
    if config is None:
        settings = load_settings()
        config, default = settings.checks, list(settings.sources)
    return validate_paths(
        paths or default, config, jobs=jobs, cache_dir=cache_dir, warn=lambda _m: None
    ).report


def build_dataset(
    paths: list[str | Path] | None = None,
    out: str | Path = "dist",
    settings: Settings | None = None,
    **options: object,
) -> BuildResult:
    """Validate, clean, deduplicate and export the drops at ``paths`` (default: the settings'
    ``sources``) into ``out``.

    ``settings`` default to the nearest config file's, as on the command line. Raises
    :class:`curate.BuildRefused` (with its ``report``) when validation finds errors, leaving
    ``out`` untouched. ``options`` are those of :func:`curate.pipeline.build.build`
    (``version``, ``previous``, ``template``, ``jobs``, ``engine``, ``cache_dir``,
    ``progress``).
    """
    from curate.pipeline.build import build
    from curate.settings import load_settings

    settings = load_settings() if settings is None else settings
    return build(list(paths or settings.sources), out, settings, **options)  # type: ignore[arg-type]


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
        from curate.version import version

        value: object = version()
    elif name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'curate' has no attribute {name!r}")
    globals()[name] = value  # later look-ups do not come here again
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
