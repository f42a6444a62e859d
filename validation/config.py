"""The checks' settings: thresholds, languages, severities, per-file ignores, input limits.

They are the part of ``[tool.curate]`` that decides what validation finds, and the only part
that keys the validation cache; what the dataset is, how its text is cleaned and what the build
does with duplicates are ``curate``'s settings (:mod:`curate.settings`), which also reads the
config file. Every option has a default, so the checks work with no configuration at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import PurePosixPath
from typing import Any

from validation.findings import Severity, did_you_mean
from validation.mapping import FieldMap

SEVERITIES = ("error", "warning", "off")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key.
    ``key`` is the key's path in the table (``("severity", "latx")``), from which the
    reader of the file finds the line it is on."""

    def __init__(self, message: str, key: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.key = key


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
    severity: dict[str, Severity] = field(default_factory=dict)
    # --- several venues/years, header phrases, rule control (per-file ignores) ---
    venues: tuple[str, ...] | None = None
    years: tuple[int, ...] | None = None
    header_phrases: dict[str, str] = field(default_factory=dict)
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)

    # Inputs and limits (filesystem safety): globs of drops to leave out, and the sizes past
    # which a file or a record is an error instead of work out of proportion (0: no limit).
    exclude: tuple[str, ...] = ()
    max_record_chars: int = 100_000
    max_file_bytes: int = 64 * 1024 * 1024
    # What a streamed file may make of its bytes: the records one file yields, how many times
    # its compressed size a .gz file may expand to (text compresses 3-10 times; a file of one
    # record repeated, a million times over, 200 times and more), and a CSV header's columns.
    max_records_per_file: int = 10_000_000
    max_expansion: int = 100
    max_columns: int = 10_000
    # Which field of a JSONL, CSV, Parquet or Arrow source is what (validation.mapping): it
    # decides what records a file yields, so it keys the cache like a threshold.
    mapping: dict[str, FieldMap] = field(default_factory=dict)

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
        return settings_dict(self)


def settings_dict(settings: Any) -> dict[str, Any]:
    """A settings dataclass as plain data: tuples as lists, a table's values as text."""
    out: dict[str, Any] = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, dict):
            # The mapping's order is its precedence (the first matching glob wins): kept.
            items = value.items() if f.name == "mapping" else sorted(value.items())
            value = {
                k: list(v) if isinstance(v, tuple) else v.as_dict() if hasattr(v, "as_dict")
                else v if isinstance(v, int | float) else str(v)
                for k, v in items
            }  # fmt: skip
        out[f.name] = value
    return out


def invalid(name: str, value: Any, expected: str, source: str) -> ConfigError:
    return ConfigError(f"{source}: [tool.curate] {name} must be {expected}, got {value!r}", (name,))


def code_table(
    name: str, value: Any, allowed: tuple[str, ...], source: str, scope: str | None = None
) -> dict[str, str]:
    """A ``[tool.curate.NAME]`` table of finding code = one of ``allowed``; with ``scope``,
    only codes of that scope may be named."""
    from validation.registry import REGISTRY

    choices = " | ".join(repr(a) for a in allowed)
    if not isinstance(value, dict):
        raise invalid(name, value, f"a table of code = {choices}", source)
    out = {}
    for code, choice in value.items():
        known_code(code, f"[tool.curate.{name}]", source, (name, code))
        if scope is not None and REGISTRY[code].scope != scope:
            # A duplicate shares its id with the record it duplicates: dropping by id would
            # drop both. The build merges duplicates (see near_duplicates) instead.
            raise ConfigError(
                f"{source}: [tool.curate.{name}] {code}: row policies are for {scope} "
                "checks; duplicates are merged by the build (near_duplicates)",
                (name, code),
            )
        if choice not in allowed:
            raise ConfigError(
                f"{source}: [tool.curate.{name}] {code} must be {choices}"
                f"{did_you_mean(str(choice), allowed)}",
                (name, code),
            )
        out[code] = choice
    return out


def coerce(name: str, value: Any, default: Any, source: str) -> Any:
    """``value`` from the config file as the type of ``default``, or a ``ConfigError`` naming
    the file and the key: strings, lists of strings, numbers, integers, booleans."""
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid(name, value, "a list of strings", source)
        return tuple(value)
    if isinstance(default, bool | str):
        if type(value) is not type(default):
            raise invalid(name, value, f"a {type(default).__name__}", source)
        return value
    if isinstance(default, float):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise invalid(name, value, "a number", source)
        return float(value)
    if isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise invalid(name, value, "a non-negative integer", source)
        return value
    return value


def optional_string(name: str, value: Any, source: str) -> str:
    if not isinstance(value, str):
        raise invalid(name, value, "a string", source)
    return value


def _coerce(name: str, value: Any, default: Any, source: str) -> Any:
    if name == "severity":
        return {c: Severity(v) for c, v in code_table(name, value, SEVERITIES, source).items()}
    if name == "per_file_ignores":
        if not isinstance(value, dict):
            raise invalid(name, value, 'a table of "glob" = [codes]', source)
        ignores = {}
        for pattern, codes in value.items():
            if isinstance(codes, str):
                codes = [codes]
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{source}: [tool.curate.per-file-ignores] {pattern!r} must "
                                  "be a list of finding codes", (name, pattern))  # fmt: skip
            for code in codes:
                known_code(
                    code, f"[tool.curate.per-file-ignores] {pattern!r}", source, (name, pattern)
                )
            ignores[pattern] = tuple(codes)
        return ignores
    if name == "header_phrases":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and k.strip() and v for k, v in value.items()
        ):
            raise invalid(name, value, 'a table of "list phrase" = "language code"', source)
        from validation.headers import phrase_key, script_conflict

        phrases = {}
        for phrase, lang in value.items():
            clash = script_conflict(phrase, lang)
            if clash:
                raise ConfigError(
                    f"{source}: [tool.curate.header_phrases] {phrase!r}: {clash}", (name, phrase)
                )
            phrases[phrase_key(phrase)] = lang
        return phrases
    if name == "languages":
        return _languages(coerce(name, value, default, source), source)
    if name == "years":
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise invalid(name, value, "a list of integers", source)
        return tuple(value)
    if name == "venues":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid(name, value, "a list of strings", source)
        return tuple(value)
    if name == "venue":
        return optional_string(name, value, source)
    if name == "year":
        if not isinstance(value, int) or isinstance(value, bool):
            raise invalid(name, value, "an integer", source)
        return value
    if name == "mapping":
        from validation.mapping import MappingError, parse

        try:
            return parse(value)
        except MappingError as exc:
            raise ConfigError(f"{source}: {exc}", (name, *exc.key)) from None
    if name == "near_duplicate_threshold":
        value = coerce(name, value, default, source)
        if not 0 < value <= 1:
            raise invalid(name, value, "in (0, 1]", source)
        return value
    return coerce(name, value, default, source)


def _languages(value: tuple[str, ...], source: str) -> tuple[str, ...]:
    """Codes the language check can answer: another (`english`, `EN`, `en-US`) matched no
    record, and every record became an error."""
    from validation.language import DETECTABLE

    if not value:
        raise invalid(
            "languages", [], 'at least one language code (to check none: [tool.curate.severity] '
            'language = "off")', source,
        )  # fmt: skip
    for code in value:
        if code not in DETECTABLE:
            meant = code.lower().replace("_", "-").split("-")[0]
            hint = f" (did you mean {meant!r}?)" if meant in DETECTABLE else ""
            raise ConfigError(
                f"{source}: [tool.curate] languages: {code!r} is no language code the check "
                f'knows{hint}; codes are ISO 639-1, as langdetect gives them ("en", "zh", "fr")',
                ("languages",),
            )
    return value


def known_code(code: str, where: str, source: str, key: tuple[str, ...] = ()) -> None:
    from validation import checks  # noqa: F401  (fills the registry)
    from validation.registry import REGISTRY

    if code not in REGISTRY:
        raise ConfigError(
            f"{source}: {where} unknown finding code {code!r}{did_you_mean(code, REGISTRY)} "
            "(`curate codes` lists them)",
            key,
        )


OPTIONS = frozenset(f.name for f in fields(Config))


def from_mapping(
    table: dict[str, Any], source: str = "<config>", others: frozenset[str] = frozenset()
) -> Config:
    """The checks' settings from a ``[tool.curate]`` table holding only their keys (written
    ``snake_case`` or ``kebab-case``); an unknown key is an error, never ignored: a typo in a
    threshold would otherwise pass CI with the default in force. ``others`` are the table's
    keys another owner reads: a misspelling of one of them is suggested too."""
    defaults = Config()
    changes: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in OPTIONS:
            hint = did_you_mean(key, OPTIONS | others)
            raise ConfigError(
                f"{source}: unknown option [tool.curate] {raw_key!r}{hint}", (raw_key,)
            )
        changes[key] = _coerce(key, value, getattr(defaults, key), source)
    return replace(defaults, **changes)
