"""The dataset card: YAML metadata through huggingface_hub, prose from ``dataset_card.md``.

The human-written template holds the words; this module supplies the numbers, so the card can
never disagree with the data it describes.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pyarrow as pa
from huggingface_hub import DatasetCard, DatasetCardData

from curate.dataset.table import TEXT, Contract, hf_features
from curate.settings import Settings
from validation.measures import distribution

DEFAULT_TEMPLATE = "dataset_card.md"
PACKAGED_TEMPLATE = Path(__file__).parents[1] / "project" / "templates" / "dataset_card.md"


def template_path(
    settings: Settings, template: str | Path | None = None, root: str | Path = "."
) -> Path:
    """The card template: ``template``, else the configured one, else the package's own.

    The configured name resolves in the project folder ``root``. Left at its default
    (``dataset_card.md``) it falls back to the template inside the package when the project
    has no such file, so an installed curate builds anywhere; a template named explicitly
    (option or config) must exist.
    """
    path = Path(template) if template is not None else Path(root) / settings.card_template
    if path.is_file():
        return path
    if template is None and settings.card_template == DEFAULT_TEMPLATE:
        return PACKAGED_TEMPLATE
    raise FileNotFoundError(f"dataset card template not found: {path}")


def license_url(settings: Settings) -> str | None:
    """The licence as a URL, for Croissant: SPDX's page for an SPDX id, else ``license_link``
    (a file in the repository becomes its URL on the Hub)."""
    from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression

    if settings.license not in ("other", "unknown"):
        try:
            spdx = canonicalize_license_expression(settings.license)
        except InvalidLicenseExpression:
            spdx = None
        if spdx and " " not in spdx:
            return f"https://spdx.org/licenses/{spdx}.html"
    link = settings.license_link
    if not link:
        return None
    if "://" in link:
        return link
    if settings.repo_id is None:
        return None  # a file of a repository not named yet has no URL
    return f"https://huggingface.co/datasets/{settings.repo_id}/blob/main/{link.lstrip('/')}"


UNNAMED = "Unnamed dataset"  # what the card and Croissant call a dataset without dataset_name


def size_category(n: int) -> str:
    """The Hub's size bucket for ``n`` rows."""
    for limit, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ):
        if n < limit:
            return label
    return "10M<n<100M"


def features_yaml(features: dict[str, Any]) -> list[dict[str, Any]]:
    """Features in their JSON form (:func:`curate.dataset.table.hf_features`) as the card's YAML
    lists
    them: ``datasets``' ``Features._to_yaml_list`` (a list of a plain type is ``list: string``,
    a list of structs ``list:`` and the fields), without importing ``datasets``."""

    def inner(obj: dict[str, Any]) -> dict[str, Any]:
        kind = obj.get("_type")
        if kind is None:  # a struct: its fields, in order
            return {"struct": [{"name": name, **inner(f)} for name, f in obj.items()]}
        if kind == "Value":
            return {"dtype": obj["dtype"]}
        key = {"List": "list", "LargeList": "large_list"}[kind]
        item = inner(obj["feature"])
        if list(item) in (["dtype"], ["struct"]):
            return {key: next(iter(item.values()))}
        return {key: item}

    return inner(features)["struct"]


def dataset_info_yaml(
    num_rows: int,
    num_bytes: int,
    download_size: int,
    splits: list[tuple[str, int, int]] | None = None,
    schema: pa.Schema = TEXT.schema,
) -> dict[str, Any]:
    """The card's ``dataset_info``: what ``datasets.DatasetInfo(...)._to_yaml_dict()`` gives for
    the table's features and its splits (``(name, num_bytes, num_examples)``; default: one
    ``train`` split), in the same key order (so the same card bytes), built here because
    importing ``datasets`` for it cost seconds per build."""
    named = splits or [("train", num_bytes, num_rows)]
    return {
        "features": features_yaml(hf_features(schema)),
        "splits": [{"name": n, "num_bytes": b, "num_examples": r} for n, b, r in named],
        "download_size": download_size,
        "dataset_size": sum(b for _, b, _ in named),
    }


def type_label(typ: pa.DataType) -> str:
    """A short type name for people: ``list<struct>`` rather than Arrow's full nesting."""
    if pa.types.is_list(typ):
        return f"list<{type_label(typ.value_type)}>"
    if pa.types.is_struct(typ):
        return "struct{" + ", ".join(f.name for f in typ) + "}"
    return str(typ)


def length_stats(word_counts: list[int]) -> dict[str, Any]:
    """The card's figures of the words per row (the percentiles every report of curate uses:
    :func:`validation.measures.percentile`)."""
    values = sorted(word_counts)
    if not values:
        return {k: 0 for k in ("min", "p10", "median", "mean", "p90", "max")}
    spread = distribution(values)
    return {
        "min": spread["min"],
        "p10": spread["p10"],
        "median": spread["median"],
        "mean": round(statistics.fmean(values), 1),
        "p90": spread["p90"],
        "max": spread["max"],
    }


def _names(settings: Settings) -> dict[str, str]:
    """What the card's prose calls the records and their text column (``noun``,
    ``text_column``): "abstract", "abstracts", "Abstracts", "an abstract"."""
    one, many = settings.noun
    article = "an" if one[:1].lower() in "aeiou" else "a"
    return {
        "noun": one, "nouns": many, "Nouns": many[:1].upper() + many[1:],
        "a_noun": f"{article} {one}", "text_column": settings.text_column,
    }  # fmt: skip


def render_card(
    settings: Settings,
    *,
    template: Path,
    languages: list[str],
    stats: dict[str, Any],
    num_bytes: int,
    download_size: int,
    splits: list[tuple[str, int, int]] | None = None,
    contract: Contract = TEXT,
) -> str:
    """The README.md of the output folder, describing the table of ``contract``; ``splits`` as
    :func:`dataset_info_yaml` takes them (several: each has its files, ``data/<split>-*``)."""
    licence: dict[str, Any] = {"license": settings.license}
    if settings.license == "other":
        # The Hub's fields for a licence outside its list (huggingface/hub-docs datasetcard.md).
        licence["license_name"] = settings.license_name
        licence["license_link"] = settings.license_link
    card_data = DatasetCardData(
        language=languages or list(settings.checks.languages),
        **licence,
        pretty_name=settings.dataset_name or UNNAMED,
        size_categories=[size_category(stats["rows"])],
        task_categories=list(settings.task_categories) or None,
        tags=list(settings.tags) or None,
        configs=[
            {
                "config_name": "default",
                "data_files": [
                    {"split": name, "path": f"data/{name}-*"}
                    for name, _, _ in splits or [("train", 0, 0)]
                ],
            }
        ],
        dataset_info=dataset_info_yaml(
            stats["rows"], num_bytes, download_size, splits, contract.schema
        ),
    )
    columns = [
        {"name": c.name, "type": type_label(c.type), "description": c.description}
        for c in contract.columns
    ]
    card = DatasetCard.from_template(
        card_data,
        template_str=template.read_text(encoding="utf-8"),
        pretty_name=settings.dataset_name or UNNAMED,
        named=bool(settings.dataset_name),
        repo_id=settings.repo_id or "ORG/NAME",
        has_repo=settings.repo_id is not None,
        threshold=settings.checks.near_duplicate_threshold,
        near_policy={"merge": "merged", "keep": "kept as separate rows", "fail": "refused"}[
            settings.near_duplicates
        ],
        license_note=settings.license_note,
        license=settings.license,
        license_name=settings.license_name,
        license_link=settings.license_link,
        license_url=license_url(settings),
        description=settings.description,
        citation=settings.citation,
        creators=list(settings.creators),
        homepage=settings.homepage,
        columns=columns,
        **_names(settings),
        **stats,
    )
    return str(card).rstrip("\n") + "\n"
