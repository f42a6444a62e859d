"""Macros that published document classes and packages define, as data: one module a package.

A macro an abstract uses but does not define is converted only when a published class or
package defines it, and then as that package prints it; an author's own macro (``\\kms``,
``\\Msun``, defined in a paper's preamble) stays TeX (docs/cleaning.md). Each entry names the
package, what the package prints for an example, and the documentation or source it was read
from, so that a reviewer can check it against the package and a maintainer can add one.

``kind`` says how the math converter reads the macro's arguments: ``symbol`` (none: it prints
``prints``), ``unit``/``prefix``/``power`` (siunitx's unit macros, inside its commands) and one
kind for each macro with arguments (``ion``, ``quantity``, ``ce``, ``delimited``…); the
converter implements each kind once (``curate/transform/texmath.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Macro", "by_name", "entries", "symbols"]


@dataclass(frozen=True, slots=True)
class Macro:
    """One macro of one package: ``example`` (TeX) prints ``prints`` (Unicode)."""

    name: str
    prints: str
    example: str
    kind: str
    package: str
    source: str


def _table(package: str, source: str, rows: list[tuple[str, ...]]) -> tuple[Macro, ...]:
    """Rows ``(name, prints[, kind[, example]])`` of one package as entries; a symbol's example
    is the macro alone."""
    out = []
    for row in rows:
        name, prints = row[0], row[1]
        kind = row[2] if len(row) > 2 else "symbol"
        example = row[3] if len(row) > 3 else f"\\{name}"
        out.append(Macro(name, prints, example, kind, package, source))
    return tuple(out)


@lru_cache(maxsize=1)
def entries() -> tuple[Macro, ...]:
    """Every entry of every package table, in a fixed order."""
    from validation.texpackages import (
        aastex,
        amsmath,
        chemformula,
        csquotes,
        cvpr,
        mhchem,
        physics,
        siunitx,
    )

    out: tuple[Macro, ...] = ()
    for module in (aastex, siunitx, physics, mhchem, chemformula, amsmath, csquotes, cvpr):
        out += _table(module.PACKAGE, module.SOURCE, list(module.ROWS))
    return out


@lru_cache(maxsize=1)
def by_name() -> dict[str, Macro]:
    """Macro name → its entry; a name two packages define (``\\qty``) has one kind in both,
    and the first table's entry stands for it."""
    out: dict[str, Macro] = {}
    for macro in entries():
        out.setdefault(macro.name, macro)
    return out


@lru_cache(maxsize=1)
def symbols() -> dict[str, str]:
    """The entries without arguments, name → what they print, for the symbol table."""
    return {m.name: m.prints for m in entries() if m.kind == "symbol"}
