"""``curate codes``: every finding code, with its severity and scope."""

from __future__ import annotations

import argparse

from curate.cli import options


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    c = sub.add_parser("codes", help="list every finding code with its severity")
    options.add_config(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import validation.checks  # noqa: F401
    from validation.registry import REGISTRY, severity_of

    config = options.checks(args)
    for spec in REGISTRY.values():
        severity = severity_of(spec.code, config)
        print(f"{spec.code:<16} {severity:<7} {spec.scope:<7} {spec.description}")
    return 0
