"""The per-record sketch (comparison words, shingles, MinHash signature, id): where its time goes,
the signature candidates on the same shingles, and their near-duplicate recall and precision.

    uv run python bench/bench_sketch.py [--records 20000] [--seed 0] [--runs 3] [--reuse]
        [--corpus ../shared/corpus/real-dev] [--baseline REV] [--rounds 2]

Records: a generated corpus (bench/generate.py, default rates, ``--records``), parsed with
curate's parser, and the abstracts of the real dev corpus (``records.jsonl.gz`` of
``--corpus``, when it exists).

1. Parts, in µs per record (CPU time of the process, best of ``--runs`` passes over all
   records): ``comparison_words``; ``word_hash``, the word hashes of ``sketch_many``'s batches
   of 512 records (what the batch path spends on them beyond the ids' keys: a tree with
   ``word_hashes`` joins the batch's keys, and the words of a record whose math renders
   differently, and hashes the bytes; one without it chains the word lists and looks every
   word up in its dictionary of CRC-32 values, warm after the first pass);
   ``shingle_hashes`` of the words; ``signature`` of those shingles; ``record_id`` of the
   joined words; ``sketch`` per record, and ``sketch_many`` over all records (the batch
   path). Each tree is timed in its own child process with its ``validation`` on
   ``PYTHONPATH``: this working tree, and with ``--baseline REV`` the tree of REV (``git
   archive`` under bench/out/), run alternately (A, B, A, B) so both see the same machine.
2. Signature candidates on the same shingles (this process, passes interleaved, best of
   ``--runs``): numpy 64-bit universal hashing per record (the signatures before rensa), the
   same over groups of whole records (one matrix and one ``minimum.reduceat`` per group), a
   32-bit variant of it over groups, and rensa's ``RMinHash`` on the pre-hashed shingles (low 16
   bits of its 32-bit minima) per record (``signature``) and batched (``sketch_many``). Commit
   4399b0c has ``sketch_many`` with numpy signatures (the old values, in fixed blocks of
   shingles): ``--baseline 4399b0c`` times it beside rensa.
3. Near-duplicate recall and precision of each candidate's signatures on the generated corpus,
   with ``bench_peers.score`` against the generator's ground truth: exact duplicates by id,
   then ``Corpus.near_pairs`` (LSH, estimate, exact Jaccard >= 0.8).

Prints its figures; asserts nothing. Writes only under bench/out/.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import baseline_tree

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out" / "sketch"
SHINGLE = 3
PARTS = [
    "comparison_words", "word_hash", "shingle_hashes", "signature", "record_id", "sketch",
    "sketch_many",
]  # fmt: skip
BATCH = 512  # sketch.SKETCH_BATCH


def best_us(func: Callable[[], object], n: int, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        func()
        best = min(best, time.process_time() - t)
    return best / n * 1e6


# --- 1. parts, in a child with one tree's validation on PYTHONPATH ---------------------------
def time_parts(texts: list[str], runs: int) -> dict[str, float]:
    from validation import normalize, sketch

    words = [normalize.comparison_words(t) for t in texts]
    shingles = [sketch.shingle_hashes(w, SHINGLE) for w in words]
    timed = {
        "comparison_words": lambda: [normalize.comparison_words(t) for t in texts],
        "shingle_hashes": lambda: [sketch.shingle_hashes(w, SHINGLE) for w in words],
        "signature": lambda: [sketch.signature(s) for s in shingles],
        "record_id": lambda: [normalize.record_id(" ".join(w)) for w in words],
        "sketch": lambda: [sketch.sketch(t, SHINGLE) for t in texts],
    }
    if hasattr(sketch, "sketch_many"):
        timed["sketch_many"] = lambda: sketch.sketch_many(texts, SHINGLE)
    timed["word_hash"] = batch_word_hashes(sketch, [normalize.comparison_forms(t) for t in texts])
    return {part: best_us(f, len(texts), runs) for part, f in timed.items()}


def batch_word_hashes(sketch, forms: list[tuple[list[str], list[str]]]) -> Callable[[], object]:  # type: ignore[no-untyped-def]
    """The word-hash step of ``sketch_many`` over batches of the records with words."""
    from itertools import chain

    hashed = [(words, rendered or words) for words, rendered in forms if words]
    batches = [hashed[i : i + BATCH] for i in range(0, len(hashed), BATCH)]
    if not hasattr(sketch, "word_hashes"):  # before: a dictionary of CRC-32 values
        return lambda: [
            sketch._word_hash_array(list(chain.from_iterable(h for _, h in b))) for b in batches
        ]
    # The ids' keys exist already in the batch path; the rendered forms are joined anew.
    keyed = [[(" ".join(w) if h is w else None, h) for w, h in b] for b in batches]
    counts = [sum(len(h) for _, h in b) for b in batches]
    return lambda: [
        sketch.word_hashes(" ".join([k if k is not None else " ".join(h) for k, h in b]), n)
        for b, n in zip(keyed, counts, strict=True)
    ]


def child_parts(records: Path, result: Path, runs: int) -> None:
    sets = pickle.loads(records.read_bytes())
    out = {name: time_parts(texts, runs) for name, texts in sets.items()}
    result.write_text(json.dumps(out), encoding="utf-8")


def run_parts(tree: Path, records: Path, result: Path, runs: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"PYTHONPATH": str(tree)}
    cmd = [sys.executable, __file__, "--child", str(records), str(result), str(runs)]
    subprocess.run(cmd, cwd=tree, env=env, check=True)
    return json.loads(result.read_text(encoding="utf-8"))


# --- 2. signature candidates -----------------------------------------------------------------
def candidates() -> dict[str, Callable[[list[np.ndarray]], np.ndarray]]:
    """name -> (list of shingle arrays) -> uint16[rows, 126]."""
    from validation import sketch as sk

    rng = np.random.default_rng(20250601)  # the numpy signatures' constants, as they were
    a64 = rng.integers(1, 1 << 61, size=126, dtype=np.uint64) | np.uint64(1)
    b64 = rng.integers(0, 1 << 61, size=126, dtype=np.uint64)
    a32 = (a64 & np.uint64(0xFFFFFFFF)).astype(np.uint32) | np.uint32(1)
    b32 = (b64 & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    mask61 = np.uint64((1 << 61) - 1)

    def np64_one(s: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            v = ((s & mask61)[:, None] * a64 + b64) >> np.uint64(3)
        return (v.min(axis=0) >> np.uint64(40)).astype(np.uint16)

    def batched(rows: list[np.ndarray], block: Callable, chunk: int = 4096) -> np.ndarray:
        # Records grouped until a group has ``chunk`` shingles; one matrix and one
        # ``minimum.reduceat`` per group.
        out = np.empty((len(rows), 126), dtype=np.uint16)
        i = 0
        while i < len(rows):
            j, total = i, 0
            while j < len(rows) and (j == i or total + rows[j].size <= chunk):
                total += rows[j].size
                j += 1
            flat = np.concatenate(rows[i:j])
            starts = np.concatenate(([0], np.cumsum([r.size for r in rows[i : j - 1]])))
            out[i:j] = block(flat, starts.astype(np.intp))
            i = j
        return out

    def np64_block(flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            v = (flat & mask61)[:, None] * a64
            v += b64
        return (np.minimum.reduceat(v, starts, axis=0) >> np.uint64(43)).astype(np.uint16)

    def np32_block(flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        x = (flat ^ (flat >> np.uint64(32))).astype(np.uint32)
        v = x[:, None] * a32
        v += b32
        return np.minimum.reduceat(v, starts, axis=0).astype(np.uint16)

    def offsets_of(rows: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(([0], np.cumsum([r.size for r in rows]))).astype(np.uint64)

    return {
        "numpy uint64, per record (before)": lambda rows: np.stack([np64_one(s) for s in rows]),
        "numpy uint64, grouped records": lambda rows: batched(rows, np64_block),
        "numpy uint32, grouped records": lambda rows: batched(rows, np32_block),
        "rensa RMinHash, per record": lambda rows: np.stack([sk.signature(s) for s in rows]),
        "rensa RMinHash, batched (sketch_many)": lambda rows: sk._digests(
            np.concatenate(rows), offsets_of(rows)
        ),
    }


# --- 3. recall and precision -------------------------------------------------------------------
def near_dup_scores(ids: list[str], sigs: np.ndarray, texts: list[str], truth, index) -> dict:
    from bench_peers import NEAR_THRESHOLD, score

    from validation.corpus import Corpus, FileResult

    n = len(ids)
    one = FileResult("r", None, "", 0, np.arange(1, n + 1, dtype=np.int32), ids, sigs, [])
    corpus = Corpus([one], lambda keys: {k: texts[k[1]] for k in keys})
    first: dict[str, int] = {}
    pairs = []
    for g, rid in enumerate(ids):
        if rid in first:
            pairs.append((first[rid], g))
        else:
            first[rid] = g
    pairs += [(e, later) for later, e, _ in corpus.near_pairs(NEAR_THRESHOLD, SHINGLE)]
    return score(pairs, truth, index)


def load_sets(args: argparse.Namespace) -> tuple[dict[str, list[str]], list[dict], dict]:
    from _common import ANSWER_KEY, generate_corpus

    from curate.ingest.discover import collect_paths
    from curate.ingest.formats.text import parse_file

    drops = OUT / f"gen-{args.records}-s{args.seed}"
    if not (args.reuse and (drops / "ground_truth.jsonl").is_file()):
        generate_corpus(drops, args.records, args.seed)
    gen, index = [], {}
    for path in collect_paths([drops], ANSWER_KEY):
        for r in parse_file(path).records:
            index[(path.name, r.line)] = len(gen)
            gen.append(r.text)

    def known(t: dict) -> bool:  # a record of the unreadable (`encoding`) file is not one
        file, line = t["related"].rsplit(":", 1)
        return (t["file"], t["line"]) in index and (file, int(line)) in index

    truth = [
        t
        for t in map(json.loads, (drops / "ground_truth.jsonl").read_text().splitlines())
        if t["code"] in ("duplicate", "near-duplicate") and known(t)
    ]
    sets = {"generated": gen}
    real = Path(args.corpus) / "records.jsonl.gz"
    if real.is_file():
        with gzip.open(real, "rt", encoding="utf-8") as f:
            sets["real-dev"] = [json.loads(line)["abstract"] for line in f]
    return sets, truth, index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "real-dev"))
    parser.add_argument("--baseline", metavar="REV", help="also time the parts of REV's tree")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of A, B (default 2)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_parts(Path(args.child[0]), Path(args.child[1]), int(args.child[2]))
        return 0

    sys.path.insert(0, str(ROOT))
    from _common import machine, table

    from validation import sketch as sk
    from validation.normalize import comparison_words, record_id

    OUT.mkdir(parents=True, exist_ok=True)
    sets, truth, index = load_sets(args)
    print(f"# bench_sketch: {', '.join(f'{k} {len(v):,}' for k, v in sets.items())} records; "
          f"{machine()}; best of {args.runs}, CPU time")  # fmt: skip
    records = OUT / "records.pickle"
    records.write_bytes(pickle.dumps(sets))

    # 1. parts
    trees = [("this tree", ROOT)]
    if args.baseline:
        trees.insert(0, (f"baseline {args.baseline}", baseline_tree(args.baseline)))
    best: dict[str, dict] = {}
    rounds: dict[tuple[str, str, str], list[float]] = {}
    for rnd in range(args.rounds):  # A, B, A, B, ...
        for label, tree in trees:
            got = run_parts(tree, records, OUT / f"parts-{rnd}.json", args.runs)
            for name, parts in got.items():
                mine = best.setdefault(label, {}).setdefault(name, {})
                for part, us in parts.items():
                    mine[part] = min(us, mine.get(part, float("inf")))
                    rounds.setdefault((label, name, part), []).append(us)
    rows = [
        [f"{label}: {name}", *(f"{parts[p]:.1f}" if p in parts else "-" for p in PARTS)]
        for label, by_set in best.items()
        for name, parts in by_set.items()
    ]
    print("\nµs per record, by part (best of the rounds)\n")
    print(table(rows, ["tree: records", *PARTS], right=set(range(1, len(PARTS) + 1))))
    print(f"\nthe same, each of the {args.rounds} rounds in the order run\n")
    rows = [
        [f"{label}: {name}", part, " / ".join(f"{us:.1f}" for us in rounds[label, name, part])]
        for label, by_set in best.items()
        for name in by_set
        for part in ("word_hash", "shingle_hashes", "sketch", "sketch_many")
        if (label, name, part) in rounds
    ]
    print(table(rows, ["tree: records", "part", "µs per round"]))

    # 2. signature candidates on the same shingles
    cands = candidates()
    for name, texts in sets.items():
        words = [comparison_words(t) for t in texts]
        rows_in = [sk.shingle_hashes(w, SHINGLE) for w in words if w]
        times: dict[str, float] = {}
        for _ in range(2):
            for cand, func in cands.items():
                us = best_us(lambda f=func, r=rows_in: f(r), len(rows_in), args.runs)
                times[cand] = min(us, times.get(cand, float("inf")))
        print(f"\nsignature candidates, {name} ({len(rows_in):,} records with words), µs/record\n")
        print(table([[c, f"{t:.1f}"] for c, t in times.items()], ["candidate", "µs"], {1}))

    # 3. recall and precision on the generated corpus, per candidate's signatures
    texts = sets["generated"]
    words = [comparison_words(t) for t in texts]
    ids = [
        record_id(" ".join(w)) if w else sk._empty_id(t) for t, w in zip(texts, words, strict=True)
    ]
    full = [i for i, w in enumerate(words) if w]
    rows_in = [sk.shingle_hashes(words[i], SHINGLE) for i in full]
    rows = []
    for cand, func in cands.items():
        if "rensa RMinHash, per record" in cand or "uint64, grouped" in cand:
            continue  # the same signatures as another row
        sigs = np.zeros((len(texts), 126), dtype=np.uint16)
        sigs[full] = func(rows_in)
        s = near_dup_scores(ids, sigs, texts, truth, index)
        rows.append([
            cand, f"{s['near_recall']:.4f} ({s['near_found']}/{s['near']})",
            f"{s['exact_recall']:.4f}", f"{s['precision']:.4f} ({s['removals']:,} removals)",
            str(s["below_found"]),
        ])  # fmt: skip
    print("\nnear-duplicates on the generated corpus, by signature\n")
    header = ["signatures", "near recall (>= 0.8)", "exact recall", "precision", "< 0.8 joined"]
    print(table(rows, header, right={1, 2, 3, 4}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
