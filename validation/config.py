"""Configuration: ``[tool.curate]`` in ``pyproject.toml``, or a TOML file given with ``--config``.

Every option has a default that suits the bundled ICML sources, so the toolkit works with no
configuration at all. Unknown keys are an error rather than silently ignored: a typo in a
threshold would otherwise pass CI with the default in force.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from validation.findings import Severity

NEAR_DUPLICATE_POLICIES = ("merge", "keep", "fail")
# How the build writes math spans: faithful Unicode text, or normalised TeX between $…$.
MATH_POLICIES = ("unicode", "tex")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    languages: tuple[str, ...] = ("en",)
    header_languages: tuple[str, ...] = ("en", "zh")
    venue: str | None = None
    year: int | None = None
    near_duplicate_threshold: float = 0.8
    shingle_size: int = 3
    min_words: int = 20
    max_words: int = 400
    language_min_words: int = 8
    near_duplicates: str = "merge"
    version: str = "1.0.0"
    dataset_name: str = "ICML 2025 Abstracts"
    repo_id: str = "curate-datasets/icml-2025-abstracts"
    license: str = "other"
    license_note: str = (
        "The abstracts are the work of their authors and are redistributed here for research. "
        "Check the venue's terms before any other use."
    )
    card_template: str = "dataset_card.md"
    severity: dict[str, Severity] = field(default_factory=dict)
    # --- math (issue 8): how math spans are written in `abstract` (curate/texmath.py)
    math: str = "unicode"

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain data, for the manifest and the cache key."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, dict):
                value = {k: str(v) for k, v in sorted(value.items())}
            out[f.name] = value
        return out


def _coerce(name: str, value: Any, default: Any, source: str) -> Any:
    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{source}: [tool.curate] {name} must be {expected}, got {value!r}")

    if name == "severity":
        if not isinstance(value, dict):
            raise bad("a table of code = 'error' | 'warning'")
        from validation.registry import REGISTRY

        out = {}
        for code, sev in value.items():
            if code not in REGISTRY:
                raise ConfigError(f"{source}: [tool.curate.severity] unknown finding code {code!r}")
            if sev not in ("error", "warning"):
                raise ConfigError(
                    f"{source}: [tool.curate.severity] {code} must be 'error' or 'warning'"
                )
            out[code] = Severity(sev)
        return out
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
        return tuple(value)
    if name in ("venue",):
        if not isinstance(value, str):
            raise bad("a string")
        return value
    if name == "year":
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad("an integer")
        return value
    if isinstance(default, bool | str):
        if type(value) is not type(default):
            raise bad(f"a {type(default).__name__}")
        if name == "near_duplicates" and value not in NEAR_DUPLICATE_POLICIES:
            raise bad("one of " + ", ".join(NEAR_DUPLICATE_POLICIES))
        if name == "math" and value not in MATH_POLICIES:
            raise bad("one of " + ", ".join(MATH_POLICIES))
        return value
    if isinstance(default, float):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise bad("a number")
        if name == "near_duplicate_threshold" and not 0 < value <= 1:
            raise bad("in (0, 1]")
        return float(value)
    if isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise bad("a non-negative integer")
        return value
    return value


def from_mapping(table: dict[str, Any], source: str = "<config>") -> Config:
    known = {f.name: f for f in fields(Config)}
    defaults = Config()
    changes: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in known:
            raise ConfigError(f"{source}: unknown option [tool.curate] {raw_key!r}")
        changes[key] = _coerce(key, value, getattr(defaults, key), source)
    return replace(defaults, **changes)


def load_config(path: str | Path | None = None, *, search_from: str | Path = ".") -> Config:
    """Read the configuration.

    With ``path``: that file, either a ``pyproject.toml`` with a ``[tool.curate]`` table or a
    file whose top level is the table itself. Without: ``pyproject.toml`` in ``search_from`` if it
    has a ``[tool.curate]`` table, else the defaults.
    """
    if path is None:
        candidate = Path(search_from) / "pyproject.toml"
        if not candidate.is_file():
            return Config()
        path, required = candidate, False
    else:
        path, required = Path(path), True
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("curate") if "tool" in data else None
    if table is None:
        # A file of its own may hold the table at top level; a pyproject without one is empty.
        table = data if required and Path(path).name != "pyproject.toml" else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.curate] must be a table")
    return from_mapping(table, str(path))
