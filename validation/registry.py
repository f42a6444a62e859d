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
from typing import TYPE_CHECKING

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


REGISTRY: dict[str, CheckSpec] = {}


ROW_POLICIES = ("keep", "flag", "drop")


def register(
    code: str,
    severity: str,
    scope: str,
    description: str,
    *,
    version: int = 1,
    row_policy: str = "keep",
) -> Callable[[Callable[..., Iterable[Finding]]], Callable[..., Iterable[Finding]]]:
    """Register ``func`` as the check for ``code``."""
    if row_policy not in ROW_POLICIES:
        raise ValueError(f"unknown row policy {row_policy!r} for {code}")

    def deco(func: Callable[..., Iterable[Finding]]) -> Callable[..., Iterable[Finding]]:
        _add(CheckSpec(code, Severity(severity), scope, description, func, version, row_policy))
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
