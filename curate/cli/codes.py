"""``curate codes``: every finding code, with its severity and scope."""

from __future__ import annotations

import argparse

from curate.cli import options


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    c = sub.add_parser(
        "codes", help="list every finding code with its severity, scope and row policy"
    )
    c.add_argument("--format", choices=("text", "json"), default="text")
    options.add_config(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    import validation.checks  # noqa: F401
    from validation.registry import REGISTRY, row_policy_of, severity_of

    settings = options.settings(args)
    rows = [
        {
            "code": spec.code,
            "severity": str(severity_of(spec.code, settings.checks)),
            "scope": spec.scope,
            "row_policy": row_policy_of(spec.code, settings.row_policy)
            if spec.scope == "record"
            else None,
            "description": spec.description,
        }
        for spec in REGISTRY.values()
    ]
    if args.format == "json":
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    for r in rows:
        policy = r["row_policy"] or "-"
        print(f"{r['code']:<16} {r['severity']:<7} {r['scope']:<7} {policy:<5} {r['description']}")
    return 0
