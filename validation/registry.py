"""The one registry of finding codes and the checks that produce them.

Every code the toolkit can report is registered here with its default severity and scope, so
the README table, the config validation and the renderers all read from one list. Checks are
small functions named by their code:

- ``parse`` codes are emitted while bytes are turned into records (they have no function here),
- ``file`` checks get one :class:`SourceFile`,
- ``record`` checks get one :class:`Record`,
- ``corpus`` checks get every file of the run at once (duplicates, header agreement, schema).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from validation.findings import Finding, Handle, Severity

if TYPE_CHECKING:
    from validation.config import Config

# ``build`` codes are emitted by the build itself (it has no check function either).
SCOPES = ("parse", "file", "record", "corpus", "build")


@dataclass(frozen=True)
class CheckSpec:
    code: str
    severity: Severity
    scope: str
    description: str
    func: Callable[..., Iterable[Finding]] | None = None
    # Bump when a check's logic changes, so cached results of the old logic are not reused.
    version: int = 1
    # What ``curate build`` does with a record this code fired on: keep it as it is, keep it
    # with the code in its ``flags`` column, or drop it (listed in the report with the code).
    # Chosen for training consumers; ``[tool.curate.row_policy]`` overrides it per code.
    row_policy: str = "keep"
    # A threshold check measures first and decides from the measurement: the name of its
    # measure (see :data:`MEASURES`), and the setting that holds its threshold.
    measure: str | None = None
    threshold: str | None = None
    # What a finding's ``score`` is (``similarity`` of a near-duplicate, ``probability`` of a
    # detected language): the name reports give it.
    score: str = "score"

    def run(self, subject: Any, config: Config, measured: Any = None) -> Iterable[Finding]:
        """The check's findings on ``subject``; a threshold check decides from ``measured``
        (measured here if not given)."""
        assert self.func is not None, f"{self.code} is emitted, not checked"
        if self.measure is None:
            return self.func(subject, config)
        if measured is None:
            measured = MEASURES[self.measure].func(subject, config)
        return self.func(subject, config, measured)


REGISTRY: dict[str, CheckSpec] = {}


@dataclass(frozen=True)
class Measure:
    """A quantity measured on every record before any check decides from it, so reports can
    show its distribution beside each threshold. ``func(record, config)`` gives the value (as
    the checks read it: it is cached by text); ``number(value)`` the figure its distribution is
    drawn from (None: not measured for this record)."""

    name: str
    description: str
    func: Callable[..., Any]
    number: Callable[[Any], float | None]


MEASURES: dict[str, Measure] = {}


def register_measure(
    name: str, description: str, number: Callable[[Any], float | None] = lambda v: v
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func`` as the measure ``name``."""

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        if name in MEASURES:
            raise ValueError(f"measure {name!r} registered twice")
        MEASURES[name] = Measure(name, description, func, number)
        return func

    return deco


ROW_POLICIES = ("keep", "flag", "drop")


def register(
    code: str,
    severity: str,
    scope: str,
    description: str,
    *,
    version: int = 1,
    row_policy: str = "keep",
    measure: str | None = None,
    threshold: str | None = None,
    score: str = "score",
) -> Callable[[Callable[..., Iterable[Finding]]], Callable[..., Iterable[Finding]]]:
    """Register ``func`` as the check for ``code``; a threshold check names its ``measure``
    (registered before it) and the setting holding its ``threshold``, and is called with the
    measured value after the record and the settings."""
    if row_policy not in ROW_POLICIES:
        raise ValueError(f"unknown row policy {row_policy!r} for {code}")
    if measure is not None and measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r} for {code}")

    def deco(func: Callable[..., Iterable[Finding]]) -> Callable[..., Iterable[Finding]]:
        spec = CheckSpec(code, Severity(severity), scope, description, func, version,
                         row_policy, measure, threshold, score)  # fmt: skip
        _add(spec)
        return func

    return deco


def register_code(code: str, severity: str, description: str, *, scope: str = "parse") -> None:
    """Register a code that parsing (or, with ``scope="build"``, the build) emits."""
    _add(CheckSpec(code, Severity(severity), scope, description))


def _add(spec: CheckSpec) -> None:
    if spec.scope not in SCOPES:
        raise ValueError(f"unknown scope {spec.scope!r} for {spec.code}")
    if spec.code in REGISTRY:
        raise ValueError(f"finding code {spec.code!r} registered twice")
    REGISTRY[spec.code] = spec


def severity_of(code: str, config: Config | None) -> Severity:
    if config is not None and code in config.severity:
        return config.severity[code]
    return REGISTRY[code].severity


def row_policy_of(code: str, overrides: Mapping[str, str] | None = None) -> str:
    """``keep``, ``flag`` or ``drop``: the configured policy (``overrides``, the build's
    ``row_policy`` setting), else the code's default."""
    if overrides is not None and code in overrides:
        return overrides[code]
    return REGISTRY[code].row_policy


def is_off(code: str, config: Config | None) -> bool:
    return severity_of(code, config) is Severity.OFF


def finding(
    code: str,
    file: str,
    line: int,
    message: str,
    config: Config | None = None,
    *,
    related: str | None = None,
    score: float | None = None,
    record: Handle | None = None,
    related_record: Handle | None = None,
) -> Finding:
    """A finding of a registered code, at the severity the configuration gives it."""
    if code not in REGISTRY:
        raise KeyError(f"unregistered finding code {code!r}")
    return Finding(
        code, severity_of(code, config), file, line, message, related, score,
        record=record, related_record=related_record,
    )  # fmt: skip


def checks(scope: str, config: Config | None = None) -> list[CheckSpec]:
    """The checks of ``scope`` that run: those not configured ``off``."""
    return [
        spec
        for spec in REGISTRY.values()
        if spec.scope == scope and spec.func is not None and not is_off(spec.code, config)
    ]
