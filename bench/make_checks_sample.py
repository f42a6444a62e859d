"""Write the labelled sample of the record checks, `tests/data/record_checks_labelled.jsonl`.

Run by hand (not a benchmark, not a test): `uv run python bench/make_checks_sample.py [CORPUS]`.
It *selects* examples from the dev corpus (default `../shared/corpus/real-dev`) by fixed rules
and a fixed seed; the labels are not computed by any check: they are the judgements written
below, made by reading each text, or follow from how an example was made (two different
abstracts put on consecutive lines are a merge; one real abstract with its own paragraph breaks
is not).

Kinds of example:
- `record`: a real abstract as its drop line. The 65 that the old `truncated` rule flagged (no
  final full stop after closing brackets, most end in math, `(abridged)` or just lack the stop)
  plus 80 drawn at random; `truncated` is yes for the 4 read as really cut (CUT below).
  Also every abstract that merely *mentions* "withdrawn", "not available", "forthcoming"… (the
  hard negatives of `placeholder`), and the 5 longest abstracts (negatives of `too-long`).
- `paragraphs`: a real abstract whose source has line breaks (paragraphs, or BibTeX/CSV
  wrapping), written with them (a drop that keeps single newlines): not a merge.
- `wrapped`: a real arXiv abstract hard-wrapped as arXiv serves it: not a merge.
- `merged`: two consecutive abstracts of a drop with the blank line between them missing
  (id `A+B`); the arXiv ones hard-wrapped as served. A merge.
- `handwritten`: placeholders in the forms that withdrawn and empty submissions take (the dev
  corpus holds none), with confusable non-placeholders.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "record_checks_labelled.jsonl"

# The old rule's 65 flags, read one by one: these 4 stop mid-sentence; the other 61 end in math,
# `(abridged)`/`[abridged]`, `\end{itemize}`, a bare URL or a complete sentence without its stop.
OLD_TRUNCATED = """
arXiv:2504.13020 arXiv:2504.20223 arXiv:2505.03262 arXiv:2505.03708 arXiv:2505.04699
arXiv:2505.08272 arXiv:2505.08867 arXiv:2505.09941 arXiv:2505.13961 arXiv:2505.14426
arXiv:2505.20821 arXiv:2506.04350 arXiv:2506.05470 arXiv:2506.06014 arXiv:2506.12125
arXiv:2506.14736 arXiv:2506.15286 arXiv:2506.15230 arXiv:2506.17383 arXiv:2507.00434
arXiv:2507.06339 arXiv:2507.07404 arXiv:2507.07514 arXiv:2507.08556 arXiv:2507.08436
arXiv:2507.09936 arXiv:2507.11237 arXiv:2507.11351 arXiv:2507.11613 arXiv:2507.13210
arXiv:2507.14602 arXiv:2507.20986 openreview:CKCzfU9YKE openreview:KjazcKPMME
openreview:9iGdh0wAgB openreview:a1GvTbadqA openreview:YBXwr7wF7i openreview:a8QpoEJCRI
openreview:ar174skI9u openreview:E4ItiEU8Iu openreview:HUJK9dFOW6 openreview:CmOmaxkt8p
openreview:apxON2uH4N openreview:dUo6j3YURS openreview:ma7McOiCZY openreview:VdyIhsh1jU
openreview:6AASPlloSt openreview:VmCkEvRULX openreview:H135uzZ0- openreview:SJiHXGWAZ
openreview:HJr4QJ26W openreview:HJPSN3gRW openreview:BJgd7m0xRZ openreview:rkTBjG-AZ
neurips2018:row0381 neurips2018:row0448 neurips2018:row0674 neurips2018:row0876
neurips2018:row0903 neurips2018:row0912 pmlr:v247/cohen24b pmlr:v247/esposito24a
pmlr:v247/huang24b pmlr:v247/huang24c pmlr:v247/hanneke24c
""".split()
CUT = {
    "arXiv:2505.20821": "ends '…a new practicable method for identifying'",
    "arXiv:2507.08436": "ends '…subsequent comparison with the observations,'",
    "openreview:HJr4QJ26W": "ends '…and characterize s'",
    "openreview:ar174skI9u": "ends 'Our code is available at' with nothing after",
}
MENTIONS = re.compile(
    r"withdr[ae]w|not available|no abstract|\bTBD\b|to be (?:announced|determined|added)|"
    r"forthcoming|coming soon",
    re.I,
)

HANDWRITTEN = [
    # (text, placeholder?)
    ("This paper has been withdrawn by the authors.", True),
    (
        "This paper has been withdrawn by the author due to a crucial sign error in equation 1.",
        True,
    ),
    (
        "This submission has been withdrawn by arXiv administrators due to inappropriate text "
        "overlap with external sources.",
        True,
    ),
    (
        "This article has been withdrawn at the request of the authors; a corrected version will "
        "be posted.",
        True,
    ),
    ("Withdrawn due to an error in the proof of Theorem 2.", True),
    ("Withdrawn.", True),
    ("Paper withdrawn by the authors.", True),
    ("The authors have withdrawn this paper because the main result is wrong.", True),
    ("Abstract not available.", True),
    ("Abstract: not available", True),
    ("No abstract available.", True),
    ("No abstract", True),
    ("TBD", True),
    ("N/A", True),
    ("To be announced.", True),
    ("Comments: 12 pages, 5 figures, accepted to ApJ", True),
    ("Comment: withdrawn", True),
    ("Abstract", True),
    ("Lorem ipsum dolor sit amet, consectetur adipiscing elit.", True),
    ("**Abstract not available.**", True),
    # Confusable, and not placeholders.
    (
        "Withdrawal of nutrients from the soil is a key driver of root growth in dry seasons, and "
        "we model it with a stochastic differential equation fitted to ten years of field data.",
        False,
    ),
    (
        "No abstract concept is learned by these networks unless the training data covers it; we "
        "show this with probes on five vision benchmarks and propose a remedy.",
        False,
    ),
    (
        "The abstract interpretation of neural networks gives sound bounds on their outputs, and "
        "we make it ten times faster with a new relaxation of the ReLU.",
        False,
    ),
    (
        "Test-time adaptation improves robustness under distribution shift; we show when it fails "
        "and how to detect the failure from unlabelled data alone.",
        False,
    ),
]


def drop_line(abstract: str) -> str:
    return " ".join(abstract.split())


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared/corpus/real-dev"
    with gzip.open(corpus / "records.jsonl.gz", "rt", encoding="utf-8") as fh:
        recs = [json.loads(line) for line in fh]
    by_id = {r["id"]: r for r in recs}
    rng = random.Random(8)
    items: list[dict[str, object]] = []
    seen: set[str] = set()

    def add(id_: str, kind: str, text: str, note: str = "", **labels: bool) -> None:
        if (id_, kind) in seen:
            return
        seen.add((id_, kind))
        full = {"truncated": False, "too_long": False, "placeholder": False, **labels}
        items.append({"id": id_, "kind": kind, "text": text, "labels": full, "note": note})

    for rid in OLD_TRUNCATED:
        add(rid, "record", drop_line(by_id[rid]["abstract"]), CUT.get(rid, ""),
            truncated=rid in CUT)  # fmt: skip
    for r in rng.sample(recs, 80):
        add(r["id"], "record", drop_line(r["abstract"]), truncated=r["id"] in CUT)
    for r in recs:
        if MENTIONS.search(drop_line(r["abstract"])):
            add(r["id"], "record", drop_line(r["abstract"]), "mentions a placeholder phrase")
    longest = sorted(recs, key=lambda r: -len(drop_line(r["abstract"]).split()))[:5]
    for r in longest:
        add(r["id"], "record", drop_line(r["abstract"]), "one of the 5 longest: a real abstract")

    paragraphed = []
    for r in recs:
        if r["id"].startswith("arXiv:"):
            continue
        lines = [ln.strip() for ln in r["abstract"].strip().split("\n") if ln.strip()]
        if len(lines) >= 2:
            paragraphed.append((r["id"], "\n".join(lines)))
    for rid, text in rng.sample(paragraphed, 40):
        add(rid, "paragraphs", text, "one abstract with the line breaks of its source")
    arxiv = [r for r in recs if r["id"].startswith("arXiv:")]
    for r in rng.sample(arxiv, 10):
        lines = [ln.strip() for ln in r["abstract"].strip().split("\n") if ln.strip()]
        add(r["id"], "wrapped", "\n".join(lines), "one abstract, hard-wrapped as arXiv serves it")

    for i in sorted(rng.sample(range(len(recs) - 1), 40)):
        a, b = recs[i], recs[i + 1]
        if a["id"].startswith("arXiv:") and b["id"].startswith("arXiv:") and i % 2:
            text = a["abstract"].strip() + "\n" + b["abstract"].strip()
            text = "\n".join(ln.strip() for ln in text.split("\n") if ln.strip())
            note = "two consecutive arXiv abstracts, hard-wrapped, no blank line between"
        else:
            text = drop_line(a["abstract"]) + "\n" + drop_line(b["abstract"])
            note = "two consecutive abstracts of a drop, no blank line between"
        add(f"{a['id']}+{b['id']}", "merged", text, note, too_long=True)

    for n, (text, is_placeholder) in enumerate(HANDWRITTEN, start=1):
        add(f"handwritten:{n}", "handwritten", text, placeholder=is_placeholder)

    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"{len(items)} examples written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
