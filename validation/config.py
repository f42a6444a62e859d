"""Configuration: ``[tool.curate]`` in ``pyproject.toml``, or a TOML file given with ``--config``.

Every option has a default that suits the bundled ICML sources, so the toolkit works with no
configuration at all. Unknown keys are an error rather than silently ignored: a typo in a
threshold would otherwise pass CI with the default in force.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePosixPath
from typing import Any

from validation.findings import Severity

NEAR_DUPLICATE_POLICIES = ("merge", "keep", "fail")
SEVERITIES = ("error", "warning", "off")
# Config files, in the order they win within one folder (like ruff: its own file first).
CONFIG_FILES = ("curate.toml", "pyproject.toml")
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
    # --- what the dataset is (card, Croissant), several venues/years, header phrases,
    # rule control (per-file ignores) and what the build does with flagged rows ---
    description: str = ""
    license_name: str | None = None
    license_link: str | None = None
    citation: str | None = None
    creators: tuple[str, ...] = ()
    homepage: str | None = None
    task_categories: tuple[str, ...] = ("text-generation",)
    tags: tuple[str, ...] = ("scientific-abstracts", "curate")
    venues: tuple[str, ...] | None = None
    years: tuple[int, ...] | None = None
    header_phrases: dict[str, str] = field(default_factory=dict)
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    row_policy: dict[str, str] = field(default_factory=dict)
    # --- math (issue 8): how math spans are written in `abstract` (curate/texmath.py)
    math: str = "unicode"

    # Inputs and limits (filesystem safety): globs of drops to leave out, and the sizes past
    # which a file or a record is an error instead of work out of proportion (0: no limit).
    exclude: tuple[str, ...] = ()
    max_record_chars: int = 100_000
    max_file_bytes: int = 64 * 1024 * 1024

    def ignored(self, code: str, path: str) -> bool:
        """Whether ``per_file_ignores`` turns ``code`` off for the file at ``path``.

        Patterns match from the right like ruff's (``PurePath.match``), so ``legacy-*.txt``
        matches that file in any folder and ``sources/*.txt`` wherever the command runs from.
        """
        if not self.per_file_ignores or not path:
            return False
        pure = PurePosixPath(path)
        return any(
            code in codes and pure.match(pattern)
            for pattern, codes in self.per_file_ignores.items()
        )

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain data, for the manifest and the cache key."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, dict):
                value = {
                    k: list(v) if isinstance(v, tuple) else str(v) for k, v in sorted(value.items())
                }
            out[f.name] = value
        return out


def _coerce(name: str, value: Any, default: Any, source: str) -> Any:
    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{source}: [tool.curate] {name} must be {expected}, got {value!r}")

    if name in ("severity", "row_policy"):
        from validation.registry import REGISTRY, ROW_POLICIES

        allowed = SEVERITIES if name == "severity" else ROW_POLICIES
        choices = " | ".join(repr(a) for a in allowed)
        if not isinstance(value, dict):
            raise bad(f"a table of code = {choices}")
        out = {}
        for code, choice in value.items():
            _known_code(code, f"[tool.curate.{name}]", source)
            if name == "row_policy" and REGISTRY[code].scope != "record":
                # A duplicate shares its id with the record it duplicates: dropping by id would
                # drop both. The build merges duplicates (see near_duplicates) instead.
                raise ConfigError(
                    f"{source}: [tool.curate.row_policy] {code}: row policies are for record "
                    "checks; duplicates are merged by the build (near_duplicates)"
                )
            if choice not in allowed:
                raise ConfigError(f"{source}: [tool.curate.{name}] {code} must be {choices}")
            out[code] = Severity(choice) if name == "severity" else choice
        return out
    if name == "per_file_ignores":
        if not isinstance(value, dict):
            raise bad('a table of "glob" = [codes]')
        ignores = {}
        for pattern, codes in value.items():
            if isinstance(codes, str):
                codes = [codes]
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{source}: [tool.curate.per-file-ignores] {pattern!r} must "
                                  "be a list of finding codes")  # fmt: skip
            for code in codes:
                _known_code(code, f"[tool.curate.per-file-ignores] {pattern!r}", source)
            ignores[pattern] = tuple(codes)
        return ignores
    if name == "header_phrases":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and k.strip() and v for k, v in value.items()
        ):
            raise bad('a table of "list phrase" = "language code"')
        from validation.headers import phrase_key, script_conflict

        phrases = {}
        for phrase, lang in value.items():
            clash = script_conflict(phrase, lang)
            if clash:
                raise ConfigError(f"{source}: [tool.curate.header_phrases] {phrase!r}: {clash}")
            phrases[phrase_key(phrase)] = lang
        return phrases
    if name == "years":
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise bad("a list of integers")
        return tuple(value)
    if name == "venues":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
        return tuple(value)
    if name in ("license_name", "license_link", "citation", "homepage"):
        if not isinstance(value, str):
            raise bad("a string")
        return value
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


def _known_code(code: str, where: str, source: str) -> None:
    from validation import checks  # noqa: F401  (fills the registry)
    from validation.registry import REGISTRY

    if code not in REGISTRY:
        raise ConfigError(f"{source}: {where} unknown finding code {code!r}")


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


def find_config(start: str | Path = ".") -> Path | None:
    """The nearest config file up from ``start``, like ruff and pytest find theirs.

    In each folder from ``start`` up to the root, a ``curate.toml`` wins, then a
    ``pyproject.toml`` that has a ``[tool.curate]`` table; a ``pyproject.toml`` without one is
    passed over, so a subfolder's own Python project does not hide the dataset's settings.
    """
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        own = folder / CONFIG_FILES[0]
        if own.is_file():
            return own
        pyproject = folder / CONFIG_FILES[1]
        if pyproject.is_file() and _has_curate_table(pyproject):
            return pyproject
    return None


def _has_curate_table(path: Path) -> bool:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        # A broken pyproject.toml is reported when it is the one in use, not while searching.
        return "[tool.curate" in path.read_text(encoding="utf-8", errors="replace")
    return isinstance(data.get("tool"), dict) and "curate" in data["tool"]


@dataclass(frozen=True)
class LoadedConfig:
    """The effective settings, the file they came from, and the keys that file set."""

    config: Config
    path: Path | None
    keys: frozenset[str]

    @property
    def root(self) -> Path:
        """The project folder: relative paths in the config and the defaults resolve here."""
        return self.path.parent if self.path is not None else Path(".")

    def origin(self, key: str) -> str:
        return str(self.path) if key in self.keys and self.path is not None else "default"


def load_config_file(
    path: str | Path | None = None, *, search_from: str | Path = "."
) -> LoadedConfig:
    """Read the configuration and say where it came from.

    With ``path``: that file, either a ``pyproject.toml`` with a ``[tool.curate]`` table or a
    file whose top level is the table itself (``curate.toml``, or any other name). Without:
    the nearest config file up from ``search_from`` (see :func:`find_config`), else defaults.
    """
    if path is None:
        found = find_config(search_from)
        if found is None:
            return LoadedConfig(Config(), None, frozenset())
        path = found
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("curate") if isinstance(data.get("tool"), dict) else None
    if table is None:
        # A file of its own holds the table at top level; a pyproject without one is empty.
        table = data if path.name != "pyproject.toml" else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.curate] must be a table")
    config = from_mapping(table, str(path))
    return LoadedConfig(config, path, frozenset(k.replace("-", "_") for k in table))


def load_config(path: str | Path | None = None, *, search_from: str | Path = ".") -> Config:
    """The effective settings (see :func:`load_config_file`)."""
    return load_config_file(path, search_from=search_from).config
