"""langdetect against its faster reproduction (validation/langfast.py): same answers, µs per record.

    uv run python bench/bench_language.py [--corpus ../shared/corpus/real-dev] [--records 5000]
        [--seed 0] [--language-rate 0.2] [--rounds 2] [--reuse] [--sets NAME ...]
        [--baseline REV]

Sets of texts (``--sets`` picks some):

- ``dev``: every record of the dev corpus as the language check passes it: its drops parsed with
  curate's parser, ``plain_text`` of each record (matched in order to ``records.jsonl.gz``, whose
  abstracts they are, for the ids).
- ``dev-titles``: every title of the dev corpus (short texts), through ``plain_text`` too.
- ``dev-raw``: every abstract as its source wrote it (newlines, TeX, URLs, e-mail addresses).
- ``generated``: every record of a generated corpus (``bench/generate.py --records N --seed S
  --rate language=R``, no file faults; under bench/out/), through ``plain_text``.
- ``generated-sent``: the records of it that the language check sends to langdetect (enough
  words, not English by the pre-check): what the detector costs in a build. On the dev corpus
  the pre-check answers every record, so there is no such set.

For each set, ``--rounds`` times in turn (A, B, A, B): langdetect's own ``detect_langs(text)[0]``
with seed 0 over every text, then ``top_language`` over every text (its word cache emptied
first), each pass timed in CPU seconds of this process. Identical means the same language and
the same probability bit for bit (``float.hex``), or the same exception; every pass's answers
are compared with the first langdetect pass. With ``--baseline REV``, REV's
``validation/langfast.py`` (read with ``git show``, run in a module of its own) is timed too,
right after this tree's fast path in each round, and its answers compared. Then the cost of
loading each, in fresh processes (alternately): seconds to the first answer and the growth of
peak RSS.

Prints its figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import time
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from _common import ANSWER_KEY, OUT, ROOT, generate_corpus, machine, table  # noqa: E402

sys.path.insert(0, str(ROOT))

Answer = tuple[str, str] | str


def langdetect_answer(text: str) -> Answer:
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0
    try:
        best = detect_langs(text)[0]
    except (LangDetectException, IndexError) as e:
        return type(e).__name__
    return best.lang, best.prob.hex()


def fast_answer(text: str) -> Answer:
    from langdetect.lang_detect_exception import LangDetectException

    from validation.langfast import top_language

    try:
        lang, prob = top_language(text)
    except (LangDetectException, IndexError) as e:
        return type(e).__name__
    return lang, prob.hex()


def dev_sets(corpus: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Set name -> (ids, texts) for the dev corpus."""
    from curate.ingest.formats.text import parse_bytes
    from validation.config import Config
    from validation.normalize import plain_text

    with gzip.open(corpus / "records.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    texts = []
    for path in sorted((corpus / "drops").glob("*.txt")):
        texts += [r.text for r in parse_bytes(path.read_bytes(), path.name, Config()).records]
    # The drops hold the abstracts in records.jsonl order; match them to take the ids.
    by_text = {" ".join(r["abstract"].split()): r["id"] for r in rows}
    ids = [by_text.get(t, "?") for t in texts]
    print(f"dev corpus: {len(texts):,} records parsed, {sum(i != '?' for i in ids):,} matched")
    return {
        "dev": (ids, [plain_text(t) for t in texts]),
        "dev-titles": ([r["id"] for r in rows], [plain_text(r["title"]) for r in rows]),
        "dev-raw": ([r["id"] for r in rows], [r["abstract"] for r in rows]),
    }


def generated_sets(args: argparse.Namespace) -> dict[str, tuple[list[str], list[str]]]:
    import generate

    from curate.ingest.discover import collect_paths
    from curate.ingest.formats.text import parse_file
    from validation.config import Config
    from validation.language import looks_english
    from validation.normalize import plain_text, word_total

    folder = OUT / f"language-{args.records}-s{args.seed}-r{args.language_rate}"
    if not (args.reuse and (folder / "meta.json").exists()):
        extra = ["--rate", f"language={args.language_rate}"]
        for code in generate.DEFAULT_FILE_FAULTS:
            extra += ["--files", f"{code}=0"]
        generate_corpus(folder, args.records, args.seed, extra)
    ids, texts = [], []
    for path in collect_paths([folder], ANSWER_KEY):
        for r in parse_file(path).records:
            ids.append(f"{path.name}:{r.line}")
            texts.append(plain_text(r.text))
    min_words = Config().language_min_words
    sent = [i for i, t in enumerate(texts) if word_total(t) >= min_words and not looks_english(t)]
    print(f"generated corpus {folder}: {len(texts):,} records, {len(sent):,} sent to langdetect")
    return {
        "generated": (ids, texts),
        "generated-sent": ([ids[i] for i in sent], [texts[i] for i in sent]),
    }


def timed_pass(func: Callable[[str], Answer], texts: list[str]) -> tuple[float, list[Answer]]:
    t = time.process_time()
    answers = [func(text) for text in texts]
    return time.process_time() - t, answers


def baseline_module(rev: str) -> types.ModuleType:
    """REV's validation/langfast.py, as a module of its own beside this tree's."""
    from validation import langfast

    source = subprocess.run(
        ["git", "show", f"{rev}:validation/langfast.py"], check=True, cwd=ROOT,
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("langfast_" + rev.replace("/", "_"))
    module.__file__ = langfast.__file__  # the same langdetect beside it
    sys.modules[module.__name__] = module
    exec(compile(source, f"{rev}:validation/langfast.py", "exec"), module.__dict__)
    return module


def compare(
    name: str, ids: list[str], texts: list[str], rounds: int, base: types.ModuleType | None
) -> list[str]:
    from langdetect.lang_detect_exception import LangDetectException

    from validation import langfast

    model = langfast._model()
    assert model is not None, "the installed langdetect is not the verified version"

    def base_answer(text: str) -> Answer:
        try:
            lang, prob = base.top_language(text)
        except (LangDetectException, IndexError) as e:
            return type(e).__name__
        return lang, prob.hex()

    base_s: list[float] = []
    ref_s, fast_s = [], []
    reference: list[Answer] = []
    identical = None
    differing: list[str] = []
    for _ in range(rounds):
        seconds, got = timed_pass(langdetect_answer, texts)
        ref_s.append(seconds)
        if not reference:
            reference = got
        model.words.clear()
        seconds, mine = timed_pass(fast_answer, texts)
        fast_s.append(seconds)
        same = [a == b for a, b in zip(reference, mine, strict=True)]
        if base is not None:
            base._model().words.clear()
            seconds, theirs = timed_pass(base_answer, texts)
            base_s.append(seconds)
            if theirs != reference:
                print(f"  {name}: the baseline's answers differ from langdetect's")
        if got != reference:
            print(f"  {name}: langdetect itself answered differently in a later pass")
        identical = sum(same) if identical is None else min(identical, sum(same))
        differing += [ids[i] for i, s in enumerate(same) if not s]
    n = len(texts)
    langs = Counter(a[0] if isinstance(a, tuple) else a for a in reference)
    print(f"  {name}: {n:,} texts; langdetect says {dict(langs.most_common(8))}")
    for i in sorted(set(differing))[:10]:
        print(f"  DIFFERENT: {i}")
    ref_us = [s / n * 1e6 for s in ref_s]
    fast_us = [s / n * 1e6 for s in fast_s]
    return [
        name,
        f"{n:,}",
        f"{identical:,}",
        " / ".join(f"{u:,.0f}" for u in ref_us),
        " / ".join(f"{u:,.0f}" for u in fast_us),
        f"{statistics.median(ref_us) / statistics.median(fast_us):.1f}x",
        " / ".join(f"{s / n * 1e6:,.0f}" for s in base_s) or "-",
    ]


LOAD = """
import sys, time
sys.path.insert(0, {root!r})


def peak_mib():  # VmHWM: this process's own peak (ru_maxrss would include the parent's, at fork)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024


before = peak_mib()
t = time.perf_counter()
if {fast!r}:
    from validation.langfast import top_language
    top_language("Wir schlagen eine neue Methode vor.")
else:
    from langdetect import DetectorFactory, detect_langs
    DetectorFactory.seed = 0
    detect_langs("Wir schlagen eine neue Methode vor.")
print(time.perf_counter() - t, peak_mib() - before)
"""


def load_costs(runs: int = 3) -> list[list[str]]:
    """First answer in a fresh process that has numpy loaded already (a validation worker has)."""
    got: dict[str, list[tuple[float, float]]] = {"langdetect": [], "fast": []}
    for _ in range(runs):
        for label in got:
            code = "import numpy\n" + LOAD.format(root=str(ROOT), fast=label == "fast")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            seconds, mib = out.stdout.split()
            got[label].append((float(seconds), float(mib)))
    return [
        [
            label,
            " / ".join(f"{s:.2f}" for s, _ in values),
            f"{statistics.median(m for _, m in values):.0f} MiB",
        ]
        for label, values in got.items()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpus/real-dev")
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--language-rate", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    names = ["dev", "dev-titles", "dev-raw", "generated", "generated-sent"]
    parser.add_argument("--sets", nargs="+", choices=names, default=names)
    parser.add_argument("--baseline", metavar="REV", help="also time REV's fast path")
    args = parser.parse_args(argv)
    base = baseline_module(args.baseline) if args.baseline else None

    from validation import langfast

    print(
        f"# bench_language: {machine()}; langdetect {langfast.installed_version()} "
        f"(verified: {langfast.VERIFIED_VERSION}); CPU time per pass, rounds A/B interleaved"
    )
    sets: dict[str, tuple[list[str], list[str]]] = {}
    if any(s.startswith("dev") for s in args.sets):
        sets.update(dev_sets(args.corpus))
    if any(s.startswith("generated") for s in args.sets):
        sets.update(generated_sets(args))
    rows = [compare(name, *sets[name], args.rounds, base) for name in args.sets if sets[name][1]]
    print()
    header = ["set", "texts", "identical", "langdetect µs/text", "fast µs/text", "ratio"]
    header.append(f"{args.baseline or 'baseline'} fast µs/text")
    print(table(rows, header, right={1, 2, 3, 4, 5, 6}))
    print("\nLoading, first answer in a fresh process with numpy imported (3 runs, alternately):")
    print(table(load_costs(), ["detector", "seconds", "peak RSS growth"], right={1, 2}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
