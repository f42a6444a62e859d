"""Write the dev-corpus sample of the source-format tests: `tests/data/formats_sample.jsonl`
and the same records' text drop, `tests/data/formats_sample.txt`.

Run by hand (not a benchmark, not a test):
`uv run python bench/make_formats_sample.py [CORPUS]` (default `../shared/corpus/real-dev`).

It *selects* records of `records.jsonl.gz` by fixed rules: every 60th record, the three whose
abstract holds a CR (`openreview:LfJgeBNCFI`, `openreview:VE3yWXt3KB`, `openreview:b9uHveqszc`),
the first two holding a tab, and the known same-paper pair `openreview:Syjha0gAZ` /
`neurips2018:row0533` (`duplicates.tsv`), in corpus order. Each is stored with its `id`,
`title` and `abstract`, byte for byte. The drop holds the same records' lines copied from the
corpus's own `drops/*.txt` (found by their position: the drops keep the corpus order per
source), under the drops' header; the script asserts that each copied line is
`' '.join(abstract.split())`, as SOURCE.md says. Nothing is computed by curate.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "real-dev"
OUT = ROOT / "tests" / "data"
EVERY = 60
PAIR = ("openreview:Syjha0gAZ", "neurips2018:row0533")


def drop_lines(corpus: Path) -> dict[str, tuple[str, list[str]]]:
    """Each drop file's header and abstract lines, by source name (`arxiv-astro-ph`, ...)."""
    out = {}
    for path in sorted((corpus / "drops").glob("*.txt")):
        lines = path.read_text(encoding="utf-8").split("\n")
        header, body = lines[0], [line for line in lines[2:] if line]
        out[path.stem] = (header, body)
    return out


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS
    with gzip.open(corpus / "records.jsonl.gz", "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    drops = drop_lines(corpus)
    position: dict[str, int] = {}
    picked = []
    tabs = 0
    for i, record in enumerate(records):
        source = record["source"]
        k = position[source] = position.get(source, -1) + 1
        text = record["abstract"]
        wanted = i % EVERY == 0 or "\r" in text or record["id"] in PAIR
        if "\t" in text and tabs < 2:
            tabs += 1
            wanted = True
        if wanted:
            stem = next(s for s in drops if s.startswith(source.replace("-", "_")))
            header, body = drops[stem]
            assert body[k] == " ".join(text.split()), (record["id"], stem, k)
            picked.append((record, header, body[k]))
    headers = {header for _, header, _ in picked}
    assert len(headers) == 1, headers
    with (OUT / "formats_sample.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for record, _, _ in picked:
            row = {key: record[key] for key in ("id", "title", "abstract")}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    text = headers.pop() + "\n\n" + "\n\n".join(line for _, _, line in picked) + "\n"
    (OUT / "formats_sample.txt").write_text(text, encoding="utf-8", newline="\n")
    print(f"{len(picked)} records written to {OUT}/formats_sample.jsonl and .txt")


if __name__ == "__main__":
    main()
