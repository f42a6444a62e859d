"""Settings: ``[tool.curate]`` in ``pyproject.toml`` (or ``curate.toml``, or a file given with
``--config``), split by owner.

One table in the file, two owners in the code:

- the checks' settings (:class:`validation.config.Config`: thresholds, languages, severities,
  per-file ignores, input limits), which decide what validation finds and alone key the
  validation cache;
- the build's own (:class:`Settings`): what the dataset is (name, licence, card, Croissant,
  Hub repository), how its text is cleaned (``math``), and what the build does with duplicates
  (``near_duplicates``) and with records a check fired on (``row_policy``).

So editing the card's ``description`` keeps every cached validation result, while a threshold
change invalidates them. Every option has a default, so the toolkit works with no file at all;
an unknown key is an error.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from curate.engine import DEFAULT as DEFAULT_ENGINE
from curate.engine import ENGINES
from curate.ingest.formats import SPLIT_BYTES
from validation import config as checks_config
from validation.config import Config, ConfigError
from validation.findings import did_you_mean

NEAR_DUPLICATE_POLICIES = ("merge", "keep", "fail")
# How the build writes math spans: faithful Unicode text, or normalised TeX between $…$.
MATH_POLICIES = ("unicode", "tex")
KEEP_POLICIES = ("first", "longest", "earliest-release")  # which duplicate survives
# Config files, in the order they win within one folder (like ruff: its own file first).
CONFIG_FILES = ("curate.toml", "pyproject.toml")


@dataclass(frozen=True)
class Settings:
    """The checks' settings (``checks``) and everything else a build reads."""

    checks: Config = field(default_factory=Config)
    near_duplicates: str = "merge"
    # Which record of a duplicate group survives, never by its place in the files: the copy
    # the previous release kept, else the first by content ("first"); the longest text; or
    # the published copy, then one of a file the previous release was built from (so a new
    # file never takes an old record over).
    keep: str = "first"
    version: str = "1.0.0"
    # What the dataset is: nothing by default, so that no build carries another dataset's
    # identity; the card says what is not set, and publish refuses without a repository.
    dataset_name: str = ""
    repo_id: str | None = None
    license: str = "unknown"  # the Hub's own word for a licence not stated
    license_note: str = ""
    card_template: str = "dataset_card.md"
    description: str = ""
    license_name: str | None = None
    license_link: str | None = None
    citation: str | None = None
    creators: tuple[str, ...] = ()
    homepage: str | None = None
    task_categories: tuple[str, ...] = ("text-generation",)
    tags: tuple[str, ...] = ("scientific-abstracts", "curate")
    # What the build does with a record a record check fired on, by code (keep, flag, drop);
    # a code not named here has the registry's default.
    row_policy: dict[str, str] = field(default_factory=dict)
    math: str = "unicode"
    # Also write rejected.parquet beside the release: every dropped row with its reasons (kept
    # locally, listed under the manifest's local_files, never uploaded).
    rejected: bool = False
    # How the table is written: shards of this many rows (0: 100,000, `curate.dataset.layout`,
    # so that a large table is never one file, and one below it is one file named as it always
    # was), and held-out splits by a hash of the id, e.g. {train = 0.98, validation = 0.02}
    # (empty: all train).
    shard_size: int = 0
    splits: dict[str, float] = field(default_factory=dict)
    engine: str = DEFAULT_ENGINE  # where the tasks run (`curate.engine.ENGINES`)
    # The most a part of a large JSON Lines, CSV, Parquet or Arrow file holds, in bytes: such a
    # file is read in parts, a task each (0: a task per file), with the same results.
    split_bytes: int = SPLIT_BYTES
    # What the records are, in the table and the prose: the text column's name (its raw text
    # is NAME_raw) and the noun, singular and plural, the card and the report call them by.
    text_column: str = "abstract"
    noun: tuple[str, str] = ("abstract", "abstracts")
    # The folders (or files) the commands read when given no PATH, relative to the config
    # file's folder: a repository that keeps its data in data/raw/ says so once, for every
    # command, the workflows and the hooks.
    sources: tuple[str, ...] = ("sources",)
    # How many findings of one code in one file a report of `curate validate` lists (text and
    # JSON); the rest are counted ("… and N more"). The summary, the exit status and a
    # baseline count every finding. A file of one record a million times over otherwise gave
    # a report of 400 MB. 0: list all.
    max_findings_listed: int = 1000

    def as_dict(self, *, run: bool = False) -> dict[str, Any]:
        """Every setting of the dataset as plain data, the checks' and the build's in one
        table, in the order ``curate config`` and the manifest list them; with ``run``, the
        settings of the run (:data:`RUN`) after them."""
        both = {**self.checks.as_dict(), **checks_config.settings_dict(self)}
        # An empty field mapping, and the names of the records at their defaults, are left out:
        # a build of text drops keeps its manifest's bytes.
        keys = (*ORDER, *(RUN if run else ()))
        left_out = {"mapping": {}} if run else LEFT_OUT  # `curate config` shows the names
        return {key: both[key] for key in keys if both[key] != left_out.get(key, ())}


OWN = tuple(f.name for f in fields(Settings) if f.name != "checks")
# Settings of a run, not of the dataset: a build's bytes are the same whatever they say (the
# sources' names are relative to their folder), so the manifest does not list them (`curate
# config` does).
RUN = ("engine", "split_bytes", "sources", "max_findings_listed")
# The order of the settings in the manifest and in `curate config`: as they have always been
# listed, the checks' and the build's interleaved (a manifest's bytes depend on it).
ORDER = (
    "languages", "header_languages", "venue", "year", "near_duplicate_threshold",
    "shingle_size", "min_words", "max_words", "language_min_words", "near_duplicates",
    "version", "dataset_name", "repo_id", "license", "license_note", "card_template",
    "severity", "description", "license_name", "license_link", "citation", "creators",
    "homepage", "task_categories", "tags", "venues", "years", "header_phrases",
    "per_file_ignores", "row_policy", "math", "exclude", "max_record_chars", "max_file_bytes",
    "max_records_per_file", "max_expansion", "max_columns", "keep", "rejected", "shard_size",
    "splits", "mapping", "text_column", "noun",
)  # fmt: skip
# Settings the manifest lists only when they are not these (their defaults, as plain data).
LEFT_OUT: dict[str, Any] = {
    "mapping": {},
    "text_column": "abstract",
    "noun": ["abstract", "abstracts"],
}
assert set(ORDER) | set(RUN) == set(OWN) | checks_config.OPTIONS and len(ORDER) == len(set(ORDER))


SPLIT_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
COLUMN_NAME = re.compile(r"^[a-z][a-z0-9_]*\Z")


def _noun(value: Any, source: str) -> tuple[str, str]:
    """``noun = "documents"`` (the singular is its stem: "document") or ``noun = ["entry",
    "entries"]``."""
    if isinstance(value, str) and value.strip():
        if not value.endswith("s") or value == "s":  # "document": the card said "Document that are"
            raise checks_config.invalid(
                "noun", value, f'a plural ending in s ("{value}s"), or ["singular", "plural"] '
                f'(["{value}", "{value}s"], ["datum", "data"])', source,
            )  # fmt: skip
        one = value[:-3] + "y" if value.endswith("ies") else value.removesuffix("s")
        return (one, value)
    if (
        isinstance(value, list) and len(value) == 2
        and all(isinstance(v, str) and v.strip() for v in value)
    ):  # fmt: skip
        return (value[0], value[1])
    raise checks_config.invalid(
        "noun", value, 'a plural noun ("documents") or ["singular", "plural"]', source
    )


def _splits(value: Any, source: str) -> dict[str, float]:
    """``{name = share, ...}``: names a split may have on the Hub, shares above 0 that add up
    to 1; the ids' hash is cut in the order of the names, whatever order they are written in."""
    ok = isinstance(value, dict) and value and all(
        isinstance(k, str) and SPLIT_NAME.match(k) and isinstance(v, int | float)
        and not isinstance(v, bool) and v > 0
        for k, v in value.items()
    )  # fmt: skip
    if not ok:
        raise checks_config.invalid(
            "splits", value, 'a table of split name = share, e.g. {train = 0.98, test = 0.02}',
            source,
        )  # fmt: skip
    if abs(sum(value.values()) - 1) > 1e-9:
        raise checks_config.invalid("splits", value, "shares that add up to 1", source)
    return {k: float(value[k]) for k in sorted(value)}


def _coerce(name: str, value: Any, default: Any, source: str) -> Any:
    if name == "splits":
        return _splits(value, source)
    if name == "row_policy":
        from validation.registry import ROW_POLICIES

        return checks_config.code_table(name, value, ROW_POLICIES, source, scope="record")
    if name == "repo_id":
        from curate.release.hub import REPO_ID

        if not isinstance(value, str) or not REPO_ID.match(value):
            raise checks_config.invalid(name, value, 'a Hub repository, "ORG/NAME"', source)
        return value
    if name in ("license_name", "license_link", "citation", "homepage"):
        return checks_config.optional_string(name, value, source)
    if name == "text_column":
        if not isinstance(value, str) or not COLUMN_NAME.match(value):
            raise checks_config.invalid(
                name, value, "a column name (lower case letters, digits and _)", source
            )
        return value
    if name == "noun":
        return _noun(value, source)
    if name == "sources":
        value = checks_config.coerce(name, value, default, source)
        if not value or not all(v.strip() for v in value):
            raise checks_config.invalid(name, value, "a folder, or a list of them", source)
        return value
    value = checks_config.coerce(name, value, default, source)
    choices = {
        "near_duplicates": NEAR_DUPLICATE_POLICIES, "math": MATH_POLICIES, "keep": KEEP_POLICIES,
        "engine": tuple(ENGINES),
    }.get(name)  # fmt: skip
    if choices is not None and value not in choices:
        raise checks_config.invalid(name, value, "one of " + ", ".join(choices), source)
    return value


def from_mapping(table: dict[str, Any], source: str = "<config>") -> Settings:
    """The settings of a ``[tool.curate]`` table: each key goes to its owner."""
    defaults = Settings()
    own: dict[str, Any] = {}
    checks: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key in OWN:
            own[key] = _coerce(key, value, getattr(defaults, key), source)
        else:
            checks[raw_key] = value  # the checks' owner says whether it knows the key
    config = checks_config.from_mapping(checks, source, frozenset(OWN))
    _check_mapping(config, source)
    settings = replace(defaults, checks=config, **own)
    _row_policies_apply(settings, source)
    _text_column_free(settings, source)
    return settings


def _text_column_free(settings: Settings, source: str) -> None:
    """The text column and its raw twin take no other column's name."""
    if settings.text_column == "abstract":
        return
    from curate.dataset.table import COLUMNS, SOURCE_ID
    from validation.mapping import extra_columns

    taken = {c.name for c in COLUMNS} - {"abstract", "abstract_raw"}
    taken |= {name for name, _ in extra_columns(settings.checks.mapping)}
    if any(entry.id is not None for entry in settings.checks.mapping.values()):
        taken.add(SOURCE_ID)  # the kept record's own id, beside the text
    for name in (settings.text_column, f"{settings.text_column}_raw"):
        if name in taken:
            raise ConfigError(
                f"{source}: [tool.curate] text_column = {settings.text_column!r}: the table "
                f"already has a column {name!r}; choose another name",
                ("text_column",),
            )


def _row_policies_apply(settings: Settings, source: str) -> None:
    """Refuse a row policy that cannot act: an error refuses the whole build, so no row of it
    is ever kept, flagged or dropped (a typo'd intent would otherwise pass in silence)."""
    from validation.findings import Severity
    from validation.registry import severity_of

    for code, policy in settings.row_policy.items():
        if policy != "keep" and severity_of(code, settings.checks) is Severity.ERROR:
            raise ConfigError(
                f"{source}: [tool.curate.row_policy] {code} = {policy!r} cannot apply: {code} "
                "is an error, which refuses the build; make it a warning in "
                "[tool.curate.severity] for its row policy to apply",
                ("row_policy", code),
            )


def _check_mapping(config: Config, source: str) -> None:
    """What the checks' owner cannot know of a field mapping: that each entry not keyed by a
    glob names a source format with fields, and that no extra column takes a column's name."""
    if not config.mapping:
        return
    from curate.ingest import formats
    from validation.mapping import extra_columns, is_glob

    tabular = [name for name in formats.REGISTRY if name != formats.DEFAULT]
    for key in config.mapping:
        if not is_glob(key) and key not in tabular:
            raise ConfigError(
                f"{source}: [tool.curate.mapping.{key}]: {key!r} is no source format with "
                f'fields ({", ".join(tabular)}) nor a glob ("*.jsonl", "lists/*.csv")'
                f"{did_you_mean(key, tabular)}",
                ("mapping", key),
            )
    if extra_columns(config.mapping):
        from curate.dataset.table import COLUMNS

        for name, _ in extra_columns(config.mapping):
            if name in {c.name for c in COLUMNS}:
                raise ConfigError(
                    f"{source}: [tool.curate.mapping] the extra column {name!r} would replace "
                    f"the table's own; map the field to {name} instead, or carry it under "
                    "another name"
                )


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
class LoadedSettings:
    """The effective settings, the file they came from, and the keys that file set."""

    settings: Settings
    path: Path | None
    keys: frozenset[str]

    @property
    def root(self) -> Path:
        """The project folder: relative paths in the config and the defaults resolve here."""
        return self.path.parent if self.path is not None else Path(".")

    def origin(self, key: str) -> str:
        return str(self.path) if key in self.keys and self.path is not None else "default"


def load_settings_file(
    path: str | Path | None = None, *, search_from: str | Path = "."
) -> LoadedSettings:
    """Read the configuration and say where it came from.

    With ``path``: that file, either a ``pyproject.toml`` with a ``[tool.curate]`` table or a
    file whose top level is the table itself (``curate.toml``, or any other name). Without:
    the nearest config file up from ``search_from`` (see :func:`find_config`), else defaults.
    """
    if path is None:
        found = find_config(search_from)
        if found is None:
            return LoadedSettings(Settings(), None, frozenset())
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
    try:
        settings = from_mapping(table, str(path))
    except ConfigError as exc:
        raise in_own_words(exc, path) from None
    return LoadedSettings(settings, path, frozenset(k.replace("-", "_") for k in table))


def in_own_words(exc: ConfigError, path: Path) -> ConfigError:
    """``exc`` as the file at ``path`` has it: its keys named as written there (in a
    ``curate.toml`` the table is the file itself, so ``[severity]``, not
    ``[tool.curate.severity]``), and the line of the key, which tomllib does not give."""
    message = str(exc)
    if path.name != CONFIG_FILES[1]:
        message = message.replace("[tool.curate] ", "").replace("[tool.curate.", "[")
    line = key_line(path.read_text(encoding="utf-8"), exc.key, path.name == CONFIG_FILES[1])
    prefix = f"{path}: "
    if line and message.startswith(prefix):
        message = f"{path}:{line}: {message.removeprefix(prefix)}"
    return ConfigError(message, exc.key)


_TABLE = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")
_PART = re.compile(r""""[^"]*"|'[^']*'|[^.\s]+""")


def _key_name(raw: str) -> str:
    return raw[1:-1] if raw[:1] in "\"'" else raw.replace("-", "_")


def key_line(text: str, key: tuple[str, ...], pyproject: bool) -> int | None:
    """The 1-based line of the config file ``text`` that sets ``key`` (a path in the curate
    table), or that opens the table holding it: a line of the table ``[a.b]`` setting ``c``,
    or setting ``b`` to an inline table that names ``c``, is the line of ``a.b.c``."""
    if not key:
        return None
    want = (*(("tool", "curate") if pyproject else ()), *(_key_name(k) for k in key))
    table: tuple[str, ...] = ()
    opened = None
    for number, line in enumerate(text.splitlines(), 1):
        head = _TABLE.match(line)
        if head:
            table = tuple(_key_name(p) for p in _PART.findall(head.group(1)))
            if opened is None and table == want[:-1]:
                opened = number
            continue
        found = _KEY.match(line)
        if found is None:
            continue
        path = (*table, _key_name(found.group(1)))
        if path == want[: len(path)] and all(
            re.search(rf"""(^|[{{,\s"']){re.escape(k)}["']?\s*=""", line) for k in want[len(path) :]
        ):
            return number
    return opened


def load_settings(path: str | Path | None = None, *, search_from: str | Path = ".") -> Settings:
    """The effective settings (see :func:`load_settings_file`)."""
    return load_settings_file(path, search_from=search_from).settings


def load_config(path: str | Path | None = None, *, search_from: str | Path = ".") -> Config:
    """The checks' part of the effective settings: what ``curate validate`` uses."""
    return load_settings(path, search_from=search_from).checks
