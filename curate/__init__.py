"""curate: validate, clean, version and publish text datasets built from plain-text drops.

The Python API, for notebooks and pipelines; the command line calls the same functions::

    import curate

    report = curate.validate_drops(["sources"])          # a curate.Report
    for finding in report.errors:                          # curate.Finding
        print(finding.file, finding.line, finding.code, finding.message)
    result = curate.build_dataset(["sources"], "dist")    # curate.BuildResult

The functions are not called ``validate`` and ``build`` because ``curate.validate`` and
``curate.build`` are the modules that implement them. Heavy imports wait until a function is
called, so ``import curate`` stays cheap.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from validation.config import Config, ConfigError, load_config
from validation.findings import Finding, Report, Severity

if TYPE_CHECKING:
    from curate.build import BuildResult

try:
    __version__ = version("curate")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = [
    "BuildResult",
    "Config",
    "ConfigError",
    "Finding",
    "Report",
    "Severity",
    "__version__",
    "build_dataset",
    "load_config",
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

    ``config`` defaults to the nearest ``curate.toml`` / ``pyproject.toml`` with
    ``[tool.curate]``, as on the command line. A missing path raises
    :class:`curate.parse.UsageError`; a broken file is a finding, never an exception.
    """
    from curate.validate import validate_paths

    config = load_config() if config is None else config
    return validate_paths(
        paths or ["sources"], config, jobs=jobs, cache_dir=cache_dir, warn=lambda _m: None
    ).report


def build_dataset(
    paths: list[str | Path] | None = None,
    out: str | Path = "dist",
    config: Config | None = None,
    **options: object,
) -> BuildResult:
    """Validate, clean, deduplicate and export the drops at ``paths`` into ``out``.

    Raises :class:`curate.build.BuildRefused` (with its ``report``) when validation finds
    errors, leaving ``out`` untouched. ``options`` are those of :func:`curate.build.build`
    (``version``, ``previous``, ``template``, ``jobs``, ``cache_dir``, ``progress``).
    """
    from curate.build import build

    config = load_config() if config is None else config
    return build(list(paths or ["sources"]), out, config, **options)  # type: ignore[arg-type]


def __getattr__(name: str) -> object:
    if name == "BuildResult":
        from curate.build import BuildResult

        return BuildResult
    raise AttributeError(f"module 'curate' has no attribute {name!r}")
