"""Write the dev-corpus sample of the language tests, `tests/data/language_sample.jsonl`.

Run by hand (not a benchmark, not a test): `uv run python bench/make_language_sample.py [CORPUS]`.
It *selects* texts from the dev corpus (default `../shared/corpus/real-dev`) by fixed rules and a
fixed seed and stores them with their ids; no expected answer is stored: the tests ask the
installed langdetect. `bench/bench_language.py` runs the same comparison on every record.

Kinds (one JSON object a line: `id`, `kind`, `text`):
- `record`: an abstract as its drop line (`' '.join(abstract.split())`); the tests pass its
  `plain_text`, as the language check does. 25 drawn at random from each of the 7 sources, the
  15 shortest and 10 longest, the 20 with the most non-ASCII characters, every one holding `@`.
- `title`: a paper title, as a short text (40 at random); the tests pass its `plain_text` too.
- `raw`: an abstract as the source wrote it (newlines, TeX, URLs), passed as it is: 30 at random
  and 10 holding `http`.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "language_sample.jsonl"


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared/corpus/real-dev"
    with gzip.open(corpus / "records.jsonl.gz", "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    rng = random.Random(21)
    chosen: dict[tuple[str, str], str] = {}  # (kind, id) -> text, in selection order

    def add(kind: str, items: list[dict]) -> None:
        for r in items:
            text = (
                " ".join(r["abstract"].split())
                if kind == "record"
                else r["title" if kind == "title" else "abstract"]
            )
            chosen.setdefault((kind, r["id"]), text)

    for source in sorted({r["source"] for r in records}):
        add("record", rng.sample([r for r in records if r["source"] == source], 25))
    by_length = sorted(records, key=lambda r: (len(r["abstract"]), r["id"]))
    add("record", by_length[:15] + by_length[-10:])
    non_ascii = sorted(
        records, key=lambda r: (-sum(not c.isascii() for c in r["abstract"]), r["id"])
    )
    add("record", non_ascii[:20])
    add("record", [r for r in records if "@" in r["abstract"]])
    add("title", rng.sample(records, 40))
    add("raw", rng.sample(records, 30))
    add("raw", rng.sample([r for r in records if "http" in r["abstract"]], 10))
    lines = [
        json.dumps({"id": rid, "kind": kind, "text": text}, ensure_ascii=False)
        for (kind, rid), text in chosen.items()
    ]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} texts to {OUT}")


if __name__ == "__main__":
    main()
