"""How the report's time grows with the length of the records it shows: near-duplicate pairs of
real text at two lengths, the page written for each, and the ratio.

    uv run python bench/bench_report_diff.py [--pairs 2000] [--chars 1500 3000] [--against main]

For each length, ``--pairs`` base texts are made of real abstracts of the dev corpus
(``/work/shared/corpus/real-dev/records.jsonl.gz``, whitespace collapsed, joined until the
length is reached, no abstract used twice) and each gets a copy with one word in 40 replaced
by another of its words, in a later file: a near-duplicate the build merges. The corpus is
built (``curate build --no-cache``, in a child process), then the page is written in this
process (``curate.report.html.render_report``, with the drops as its sources) ``--runs``
times: best CPU time, and the CPU time of its word diffs alone. The page diffs at most
``CLUSTER_LIMIT`` clusters, so the records it shows are the same in number at each length:
a ratio near the ratio of the lengths is linear growth, near its square quadratic.

``--against REV`` also times the page with the word diff of that revision of
``curate/report/html.py`` (read with ``git show``) on the same builds. Writes only under
bench/out/report-diff/. Asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import time
import types
from pathlib import Path

from _common import OUT, ROOT, machine, table

DEV = Path("/work/shared/corpus/real-dev/records.jsonl.gz")
FILES = 10  # the pairs' originals in the first half of the files, their copies in the second


def base_texts(pairs: int, chars: int, seed: int) -> list[str]:
    with gzip.open(DEV, "rt", encoding="utf-8") as fh:
        # whitespace collapsed, control characters (two in the corpus, errors) left out
        texts = [json.loads(line)["abstract"] for line in fh]
    abstracts = [
        " ".join("".join(c for c in t if c.isprintable() or c.isspace()).split()) for t in texts
    ]
    random.Random(seed).shuffle(abstracts)
    out, current = [], ""
    for abstract in abstracts:
        current = f"{current} {abstract}" if current else abstract
        if len(current) >= chars:
            out.append(current[: current.rfind(" ", 0, chars)])
            current = ""
            if len(out) == pairs:
                return out
    raise SystemExit(f"the dev corpus holds {len(out)} texts of {chars} characters, not {pairs}")


def near_copy(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    return " ".join(rng.choice(words) if rng.random() < 1 / 40 else w for w in words)


def write_corpus(folder: Path, pairs: int, chars: int, seed: int) -> None:
    rng = random.Random(seed)
    texts = base_texts(pairs, chars, seed)
    copies = [near_copy(t, rng) for t in texts]
    folder.mkdir(parents=True, exist_ok=True)
    half = FILES // 2
    for f in range(FILES):
        chunk = (texts if f < half else copies)[f % half :: half]
        body = "\n\n".join(chunk)
        (folder / f"{f:02d}.txt").write_text(f"ICML 2025 Papers\n\n{body}\n", encoding="utf-8")


def build(drops: Path, dist: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "curate.cli", "-q", "build", str(drops), "--out", str(dist),
         "--no-cache", "--force"],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started


def old_diff(rev: str) -> types.FunctionType:
    """The word diff of ``rev``'s curate/report/html.py, run in a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:curate/report/html.py"], check=True, cwd=ROOT,
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("report_html_" + rev.replace("/", "_"))
    module.__file__ = str(ROOT / "curate" / "report" / "html.py")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:curate/report/html.py", "exec"), module.__dict__)
    return module._diff


def time_page(dist: Path, drops: Path, diff: object, runs: int) -> tuple[float, float, int]:
    """Best CPU seconds of the page, of its diffs alone, and how many diffs it made."""
    from curate.report import html as page

    spent = [0.0, 0]

    def timed(raw: str, clean: str) -> object:
        started = time.process_time()
        out = diff(raw, clean)
        spent[0] += time.process_time() - started
        spent[1] += 1
        return out

    best_page = best_diff = float("inf")
    kept = page._diff
    page._diff = timed
    try:
        for _ in range(runs):
            spent[:] = [0.0, 0]
            started = time.process_time()
            page.render_report(dist, [drops])
            best_page = min(best_page, time.process_time() - started)
            best_diff = min(best_diff, spent[0])
    finally:
        page._diff = kept
    return best_page, best_diff, int(spent[1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=2000)
    p.add_argument("--chars", type=int, nargs=2, default=[1500, 3000])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--against", help="a git revision whose word diff is timed beside")
    args = p.parse_args()
    from curate.report import html as page

    diffs = {"this tree": page._diff}
    if args.against:
        diffs[args.against] = old_diff(args.against)
    rows, figures = [], {}
    for chars in args.chars:
        work = OUT / "report-diff" / f"{args.pairs}x{chars}"
        drops, dist = work / "drops", work / "dist"
        write_corpus(drops, args.pairs, chars, args.seed)
        build_s = build(drops, dist)
        for name, diff in diffs.items():
            page_s, diff_s, n = time_page(dist, drops, diff, args.runs)
            figures[name, chars] = (page_s, diff_s)
            rows.append([name, f"{chars:,}", f"{build_s:.1f}", f"{page_s:.3f}", f"{diff_s:.3f}",
                         f"{n}", f"{1e3 * diff_s / max(n, 1):.2f}"])  # fmt: skip
    print(f"{args.pairs:,} near-duplicate pairs per corpus; {machine()}")
    header = ["diff", "chars", "build s", "page CPU s", "diffs CPU s", "diffs", "ms/diff"]
    print(table(rows, header, right={1, 2, 3, 4, 5, 6}))
    short, long_ = args.chars
    for name in diffs:
        (p0, d0), (p1, d1) = figures[name, short], figures[name, long_]
        grew = f"page x{p1 / p0:.2f}, diffs x{d1 / d0:.2f}"
        print(f"{name}: x{long_ / short:.1f} the length -> {grew}")


if __name__ == "__main__":
    main()
