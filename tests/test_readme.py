"""The README documents exactly what the code does: every finding code and every option."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

import validation.checks  # noqa: F401  (fills the registry)
from curate.settings import ORDER
from validation.registry import REGISTRY

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


CODE_ROW = re.compile(r"^\| `([a-z-]+)` \| (error|warning) \| (keep|flag|drop) \|", re.M)


def test_finding_code_tables_match_the_registry():
    """The README's table, and docs/formats.md's for the codes of sources with fields: each in
    the registry's order, together every code once, with its severity and row policy."""
    readme = CODE_ROW.findall(_section("Finding codes"))
    formats = CODE_ROW.findall((ROOT / "docs" / "formats.md").read_text(encoding="utf-8"))
    registry = [(code, str(spec.severity), spec.row_policy) for code, spec in REGISTRY.items()]
    assert readme == [row for row in registry if row not in formats]
    assert formats == [row for row in registry if row not in readme]
    assert sorted(readme + formats) == sorted(registry)
    assert all(f"`{code}`" in _section("Finding codes") for code, _, _ in formats)


def test_configuration_table_lists_every_option():
    """Every setting, the checks' and the build's (the two tables by their own heading)."""
    documented = set(re.findall(r"`([a-z_]+)`", _section("Configuration")))
    assert set(ORDER) - {"severity", "row_policy"} <= documented
    assert "[tool.curate.severity]" in _section("Configuration")
    assert "[tool.curate.row_policy]" in _section("Configuration")


def test_quickstart_is_the_two_commands_ci_runs():
    quick = _section("Quickstart")
    assert "uv run --no-dev curate build" in quick and "uv run pytest" in quick
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # CI's suite() is `uv run "$@"`, and its first call is the README's `pytest`, as it is.
    assert '"${uv[@]}" run "$@"' in ci and re.search(r"^suite pytest$", ci, re.M)


def test_the_readme_is_a_manual_of_at_most_25_kb_with_no_history():
    assert len(README.encode("utf-8")) <= 25_600
    for text in (README, *(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))):
        assert not re.search(r"\b(issue|session)s? ?#?\d|\bprevious session|this evening", text)


def test_curate_help_starts_with_what_the_tool_does():
    out = subprocess.run(
        [sys.executable, "-m", "curate.cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    description = out.split("\n\n")[1]
    assert description.startswith("Validate text source drops, build a clean, deduplicated")
