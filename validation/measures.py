"""Measurements of a run: what the threshold checks measured on every record, summarised so a
report can show the distribution beside each threshold (measure first, decide second).

The percentile here is the one every report of curate uses (the card's lengths too): the
nearest rank, the smallest value that at least a share ``q`` of the values do not exceed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from validation.config import Config
    from validation.corpus import FileResult
    from validation.findings import Finding


def percentile(sorted_values: Sequence[Any], q: float) -> Any:
    """The nearest-rank ``q`` percentile (0 <= q <= 1) of ascending values; 0 for none."""
    n = len(sorted_values)
    if n == 0:
        return 0
    return sorted_values[max(0, min(n - 1, math.ceil(q * n) - 1))]


def distribution(sorted_values: Sequence[Any]) -> dict[str, Any]:
    """min, p10, median, p90, max of ascending values."""
    return {
        "min": sorted_values[0] if len(sorted_values) else 0,
        "p10": percentile(sorted_values, 0.1),
        "median": percentile(sorted_values, 0.5),
        "p90": percentile(sorted_values, 0.9),
        "max": sorted_values[-1] if len(sorted_values) else 0,
    }


def _plain(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(float(x), 4)


def summarise(
    files: list[FileResult], findings: list[Finding], config: Config | None
) -> dict[str, Any]:
    """Each measure's distribution over the run's records, and for each check that decides
    from it, its threshold setting and how many findings it made."""
    from validation.registry import MEASURES, REGISTRY

    out: dict[str, Any] = {}
    fired: dict[str, int] = {}
    for f in findings:
        fired[f.code] = fired.get(f.code, 0) + 1
    for name, measure in MEASURES.items():
        users = [s for s in REGISTRY.values() if s.measure == name]
        parts = [f.measures[name] for f in files if name in f.measures]
        if not parts or not users:
            continue
        values = np.concatenate(parts)
        values = np.sort(values[~np.isnan(values)])
        if not len(values):
            continue
        plain = [_plain(v) for v in (values[0], values[-1])]
        spread = {k: _plain(v) for k, v in distribution(values).items()}
        spread["min"], spread["max"] = plain
        checks = {}
        for spec in users:
            setting = getattr(config, spec.threshold, None) if spec.threshold else None
            if isinstance(setting, tuple):
                setting = list(setting)
            checks[spec.code] = {"setting": spec.threshold, "threshold": setting,
                                 "findings": fired.get(spec.code, 0)}  # fmt: skip
        out[name] = {
            "description": measure.description,
            "records": len(values),
            **spread,
            "checks": checks,
        }
    return out
