"""The README documents exactly what the code does: every finding code and every option."""

from __future__ import annotations

import re
from dataclasses import fields

from conftest import ROOT

import validation.checks  # noqa: F401  (fills the registry)
from validation.config import Config
from validation.registry import REGISTRY

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def test_finding_code_table_matches_the_registry():
    rows = re.findall(
        r"^\| `([a-z-]+)` \| (error|warning) \| (keep|flag|drop) \|",
        _section("Finding codes"),
        re.M,
    )
    assert rows == [(code, str(spec.severity), spec.row_policy) for code, spec in REGISTRY.items()]


def test_configuration_table_lists_every_option():
    documented = set(re.findall(r"`([a-z_]+)`", _section("Configuration")))
    assert {f.name for f in fields(Config)} - {"severity"} <= documented
    assert "[tool.curate.severity]" in _section("Configuration")


def test_quickstart_is_the_two_commands_ci_runs():
    quick = _section("Quickstart")
    assert "uv run curate build" in quick and "uv run pytest" in quick
    assert "uv run pytest" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
