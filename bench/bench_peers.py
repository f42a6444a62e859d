"""Peers: curate's near-duplicate stage beside the naive pipeline, datatrove, rensa, text-dedup.

    uv run python bench/bench_peers.py --records 100000 [--seed 0] [--peers NAME ...] [--reuse]

One generated corpus (bench/generate.py, record-level faults at their default rates, no
file-level faults, as bench_scale.py makes it), parsed once with curate's parser into
``records.jsonl`` (one ``{"id", "text"}`` per record, in corpus order). Every peer then runs
in its own child process and its own environment, reads that file, and writes the pairs of
records it judges duplicates of each other:

- ``curate``: this repository's environment. Its near-duplicate stage as ``curate build``
  runs it, in one process: ``validation.sketch.sketch_many`` over all records (comparison
  words, word 3-shingles, 126-value MinHash by rensa, id; ``sketch`` per record in revisions
  before it), exact duplicates by id, then
  ``validation.corpus.Corpus.near_pairs`` (LSH 21 bands x 6, estimate >= 0.6, exact Jaccard
  >= 0.8). In a build the sketches are made by two workers; here by one process.
- ``naive``: the baseline of bench_scale.py: a langdetect loop, datasketch ``MinHashLSH()`` at
  its defaults (threshold 0.9, 128 permutations, word 3-shingles of lower-cased ``\\w+``
  words, every candidate taken as a duplicate), pandas ``to_parquet``.
- ``datatrove``: its MinHash pipeline, stages 1-3 (signatures, buckets, clusters) with
  ``MinhashConfig(n_grams=3)``: the default 14 buckets x 8 hashes, 64-bit xxhash, the default
  text normalisation and English (spaCy) word tokenizer; ``LocalPipelineExecutor`` with one
  worker. Clusters are read from its ``.clusters`` output. Stage 4 (filtering the documents)
  is left out: it only rewrites the corpus.
- ``rensa``: Rust MinHash, 126 permutations, ``RMinHashLSH`` with 21 bands (of 6), word
  3-shingles of lower-cased ``\\w+`` words; candidates whose estimate is >= 0.6 are checked
  with the exact shingle Jaccard, >= 0.8 is a duplicate.
- ``text-dedup``: ``text_dedup.minhash``, its MinHash + LSH command, on the records saved with
  ``datasets``' ``save_to_disk``, at its defaults but ``--ngram 3 --threshold 0.8`` and one
  process (250 permutations, bands and rows by datasketch's optimal parameters, SHA-1, every
  candidate pair taken as a duplicate); the clusters are its union-find's.

The environments are made with ``uv venv`` + ``uv pip install`` of the pinned versions below
(from PyPI) under ``bench/out/peers/env-<peer>/`` and reused while their pins are unchanged.

Scoring (one function, the same for every peer): the pairs become clusters (union-find). In
the generator's ground truth every injected copy has one clean source and no record is copied
twice, so the true duplicates are disjoint pairs. An injected pair counts as found when both
records land in the same cluster; recall is given for near-duplicates at or above 0.8 and for
exact duplicates (which the generator varies by case, spacing, wrapping and markup). A cluster
of k records stands for k - 1 removals; precision is the number of true pairs (duplicates and
near-duplicates >= 0.8) inside clusters over the number of removals. Injected pairs below 0.8
that end up in one cluster are counted separately (they cost precision).

Time: wall time of the child (interpreter start and imports included) and the seconds of its
work after the records were read; peak RSS: ``ru_maxrss`` of the child from ``os.wait4``
(the largest of the child and any process it waited for). Prints its figures; asserts
nothing. Writes only under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PEERS_OUT = BENCH / "out" / "peers"
NEAR_THRESHOLD = 0.8
SHINGLE = 3

# Pinned versions of each peer's environment (None: this repository's own environment).
PINS: dict[str, list[str] | None] = {
    "curate": None,
    "naive": [
        "datasketch==2.0.0",
        "langdetect==1.0.9",
        "pandas==3.1.1",
        "pyarrow==26.0.1",
    ],
    "datatrove": [
        "datatrove==0.10.1",
        "spacy==3.8.18",
        "xxhash==3.6.0",
        "regex==2026.11.19",
        "tokenizers==0.23.3",
        "orjson==3.13.0",
    ],
    "rensa": ["rensa==0.5.0"],
    "text-dedup": ["text-dedup==0.4.0", "datasets==5.2.0"],
}
_WORD = re.compile(r"\w+")


# --- the children: one per peer, each in its own environment ----------------------------------
def _read_records(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def _shingles(text: str) -> set[str]:
    """Word 3-shingles over lower-cased ``\\w+`` words (the generator's own shingling)."""
    words = _WORD.findall(text.lower())
    return {" ".join(words[k : k + SHINGLE]) for k in range(max(1, len(words) - SHINGLE + 1))}


def run_curate(texts: list[str], work: Path, stages: dict[str, float]) -> list[tuple[int, int]]:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from validation import sketch as sk
    from validation.corpus import Corpus, FileResult

    t = time.perf_counter()
    if hasattr(sk, "sketch_many"):  # the batch path the per-file worker takes
        sketches = sk.sketch_many(texts, SHINGLE)
    else:  # a revision before it (the tree of another commit on PYTHONPATH)
        sketches = [sk.sketch(text, SHINGLE)[0] for text in texts]
    stages["sketch"] = time.perf_counter() - t
    t = time.perf_counter()
    n = len(texts)
    one_file = FileResult(
        path="records.jsonl",
        header=None,
        sha256="",
        size=0,
        lines=np.arange(1, n + 1, dtype=np.int32),
        ids=[s.id for s in sketches],
        sigs=np.stack([s.sig for s in sketches]) if n else np.empty((0, 126), np.uint16),
        findings=[],
    )
    corpus = Corpus([one_file], lambda keys: {k: texts[k[1]] for k in keys})
    first: dict[str, int] = {}
    pairs = []
    for g, rid in enumerate(corpus.ids):
        if rid in first:
            pairs.append((first[rid], g))
        else:
            first[rid] = g
    stages["exact duplicates"] = time.perf_counter() - t
    t = time.perf_counter()
    pairs += [(earlier, later) for later, earlier, _ in corpus.near_pairs(NEAR_THRESHOLD, SHINGLE)]
    stages["near_pairs"] = time.perf_counter() - t
    return pairs


def run_naive(texts: list[str], work: Path, stages: dict[str, float]) -> list[tuple[int, int]]:
    import pandas as pd
    from datasketch import MinHash, MinHashLSH
    from langdetect import DetectorFactory, detect
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0
    t = time.perf_counter()
    languages = []
    for text in texts:
        try:
            languages.append(detect(text))
        except LangDetectException:
            languages.append("unknown")
    stages["langdetect loop"] = time.perf_counter() - t
    t = time.perf_counter()
    lsh = MinHashLSH()  # defaults: threshold 0.9, num_perm 128
    pairs = []
    for i, text in enumerate(texts):
        m = MinHash()
        m.update_batch([s.encode() for s in _shingles(text)])
        pairs += [(int(j), i) for j in lsh.query(m)]
        lsh.insert(str(i), m)
    stages["datasketch"] = time.perf_counter() - t
    t = time.perf_counter()
    pd.DataFrame({"text": texts, "language": languages}).to_parquet(work / "naive.parquet")
    stages["to_parquet"] = time.perf_counter() - t
    return pairs


def run_datatrove(texts: list[str], work: Path, stages: dict[str, float]) -> list[tuple[int, int]]:
    import shutil
    import struct

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader

    for sub in ("sigs", "buckets", "clusters", "logs"):
        shutil.rmtree(work / sub, ignore_errors=True)
    config = MinhashConfig(n_grams=SHINGLE)
    records = str(work.parent)  # the folder holding records.jsonl
    steps = [
        (
            "signatures",
            [
                JsonlReader(records, glob_pattern="records.jsonl"),
                MinhashDedupSignature(output_folder=str(work / "sigs"), config=config),
            ],
            1,
        ),
        (
            "buckets",
            [
                MinhashDedupBuckets(
                    input_folder=str(work / "sigs"),
                    output_folder=str(work / "buckets"),
                    config=config,
                )
            ],
            config.num_buckets,
        ),
        (
            "clusters",
            [
                MinhashDedupCluster(
                    input_folder=str(work / "buckets"),
                    output_folder=str(work / "clusters"),
                    config=config,
                    save_cluster_id=True,
                )
            ],
            1,
        ),
    ]
    for name, pipeline, tasks in steps:
        t = time.perf_counter()
        LocalPipelineExecutor(
            pipeline=pipeline, tasks=tasks, workers=1, logging_dir=str(work / "logs" / name)
        ).run()
        stages[name] = time.perf_counter() - t
    members: dict[int, list[int]] = {}
    path = work / "clusters" / "000000.clusters"
    data = path.read_bytes() if path.exists() else b""
    for doc, cluster in struct.iter_unpack("<2I", data):
        members.setdefault(cluster, []).append(doc)
    return [(min(docs), d) for docs in members.values() for d in docs if d != min(docs)]


def run_rensa(texts: list[str], work: Path, stages: dict[str, float]) -> list[tuple[int, int]]:
    from rensa import RMinHash, RMinHashLSH

    t = time.perf_counter()
    shingles = [_shingles(text) for text in texts]
    hashes = []
    for s in shingles:
        m = RMinHash(num_perm=126, seed=42)
        m.update(list(s))
        hashes.append(m)
    stages["shingles + minhash"] = time.perf_counter() - t
    t = time.perf_counter()
    lsh = RMinHashLSH(threshold=NEAR_THRESHOLD, num_perm=126, num_bands=21)
    pairs = []
    for i, m in enumerate(hashes):
        for j in lsh.query(m):
            if hashes[j].jaccard(m) >= NEAR_THRESHOLD - 0.2:
                a, b = shingles[i], shingles[j]
                inter = len(a & b)
                if inter / (len(a) + len(b) - inter) >= NEAR_THRESHOLD:
                    pairs.append((int(j), i))
        lsh.insert(i, m)
    stages["lsh + exact"] = time.perf_counter() - t
    return pairs


def run_textdedup(texts: list[str], work: Path, stages: dict[str, float]) -> list[tuple[int, int]]:
    import shutil

    from datasets import Dataset
    from text_dedup import minhash as td

    for sub in ("input", "output", "cache"):
        shutil.rmtree(work / sub, ignore_errors=True)
    t = time.perf_counter()
    Dataset.from_dict({"text": texts}).save_to_disk(str(work / "input"))
    stages["save_to_disk"] = time.perf_counter() - t
    t = time.perf_counter()
    # Its own command (text_dedup.minhash) at its defaults but the shingle length and the
    # threshold: 250 permutations, bands and rows from datasketch's optimal_param, SHA-1 (32
    # bits), lower-cased words split on \W, records under 5 words left out, every candidate
    # pair a duplicate (no exact comparison); one process, like the other peers.
    td.main.main(
        args=["--path", str(work / "input"), "--local", "--output", str(work / "output"),
              "--cache_dir", str(work / "cache"), "--column", "text", "--num_proc", "1",
              "--ngram", str(SHINGLE), "--threshold", str(NEAR_THRESHOLD)],
        standalone_mode=False,
    )  # fmt: skip
    stages["text_dedup.minhash"] = time.perf_counter() - t
    uf = td.uf  # the union-find its clustering leaves, over the records' positions
    return [(uf.find(i), i) for i in list(uf.parent) if uf.find(i) != i]


RUNNERS = {
    "curate": run_curate,
    "naive": run_naive,
    "datatrove": run_datatrove,
    "rensa": run_rensa,
    "text-dedup": run_textdedup,
}


def child(peer: str, records: Path, result: Path) -> None:
    work = result.parent / peer
    work.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    texts = _read_records(records)
    read_s = time.perf_counter() - t
    stages: dict[str, float] = {}
    t = time.perf_counter()
    pairs = RUNNERS[peer](texts, work, stages)
    work_s = time.perf_counter() - t
    result.write_text(
        json.dumps({"read": read_s, "work": work_s, "stages": stages, "pairs": pairs}),
        encoding="utf-8",
    )


# --- scoring: the one place, for every peer -----------------------------------------------
def score(
    pairs: list[list[int]], truth: list[dict], index: dict[tuple[str, int], int]
) -> dict[str, float | int]:
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    clusters: dict[int, int] = {}
    for x in list(parent):
        clusters[find(x)] = clusters.get(find(x), 0) + 1
    for root in list(clusters):
        clusters[root] += root not in parent  # a root that was never linked below is a member
    removals = sum(size - 1 for size in clusters.values())

    def together(t: dict) -> bool:
        file, line = t["related"].rsplit(":", 1)
        return find(index[(t["file"], t["line"])]) == find(index[(file, int(line))])

    near = [t for t in truth if t["code"] == "near-duplicate" and t["similarity"] >= NEAR_THRESHOLD]
    below = [t for t in truth if t["code"] == "near-duplicate" and t["similarity"] < NEAR_THRESHOLD]
    exact = [t for t in truth if t["code"] == "duplicate"]
    near_found = sum(map(together, near))
    exact_found = sum(map(together, exact))
    return {
        "near": len(near),
        "near_found": near_found,
        "near_recall": near_found / len(near) if near else 1.0,
        "exact": len(exact),
        "exact_recall": exact_found / len(exact) if exact else 1.0,
        "removals": removals,
        "precision": (near_found + exact_found) / removals if removals else 1.0,
        "below_found": sum(map(together, below)),
    }


# --- the parent ------------------------------------------------------------------------------
def ensure_env(peer: str) -> str:
    """The python of the peer's environment, created (or re-created on new pins) with uv."""
    pins = PINS[peer]
    if pins is None:
        return sys.executable
    env = PEERS_OUT / f"env-{peer}"
    python = env / "bin" / "python"
    stamp = env / "pins.txt"
    wanted = "\n".join(pins) + "\n"
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return str(python)
    t = time.perf_counter()
    subprocess.run(
        ["uv", "venv", "--quiet", "--allow-existing", "--python", sys.executable, str(env)],
        check=True,
    )
    subprocess.run(
        ["uv", "pip", "install", "--quiet", "--python", str(python), *pins],
        check=True,
    )
    stamp.write_text(wanted, encoding="utf-8")
    print(f"made {env} ({', '.join(pins)}) in {time.perf_counter() - t:.1f} s")
    return str(python)


def run_peer(peer: str, python: str, records: Path, base: Path) -> dict:
    result = base / f"{peer}.json"
    result.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    log = (base / f"{peer}.log").open("w", encoding="utf-8")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, __file__, "--child", peer, str(records), str(result)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    log.close()
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}, see {base / f'{peer}.log'}"}
    out = json.loads(result.read_text(encoding="utf-8"))
    out["wall"] = wall
    out["maxrss_kib"] = usage.ru_maxrss
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peers", nargs="+", choices=list(RUNNERS), default=list(RUNNERS))
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    parser.add_argument(
        "--child", nargs=3, metavar=("PEER", "RECORDS", "RESULT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return 0

    from _common import ANSWER_KEY, generate_corpus, machine, mib, table

    n = args.records
    base = PEERS_OUT / f"run-{n}-s{args.seed}"
    corpus = base / "drops"
    no_file_faults = [
        f"--files={code}=0"
        for code in (
            "bom",
            "line-endings",
            "header-missing",
            "header-language",
            "header-mismatch",
            "empty-file",
            "encoding",
            "schema",
        )
    ] + [f"--rate=language={min(0.01, 5_000 / n)}"]
    print(f"# bench_peers: {n:,} records, seed {args.seed}; {machine()}")
    records = base / "records.jsonl"
    if not (args.reuse and records.is_file()):
        t = time.perf_counter()
        generate_corpus(corpus, n, args.seed, no_file_faults)
        sys.path.insert(0, str(ROOT))
        from curate.ingest.discover import collect_paths
        from curate.ingest.formats.text import parse_file

        keys = []
        with records.open("w", encoding="utf-8") as f:
            for path in collect_paths([corpus], ANSWER_KEY):
                for r in parse_file(path).records:
                    f.write(json.dumps({"id": str(len(keys)), "text": r.text}) + "\n")
                    keys.append([path.name, r.line])
        (base / "keys.json").write_text(json.dumps(keys), encoding="utf-8")
        print(f"generated and parsed the corpus in {time.perf_counter() - t:.1f} s: {corpus}")
    keys = json.loads((base / "keys.json").read_text(encoding="utf-8"))
    index = {(file, line): i for i, (file, line) in enumerate(keys)}
    truth = [
        json.loads(line)
        for line in (corpus / "ground_truth.jsonl").read_text(encoding="utf-8").splitlines()
    ]

    rows = []
    stage_lines = []
    for peer in args.peers:
        python = ensure_env(peer)
        res = run_peer(peer, python, records, base)
        if "error" in res:
            rows.append([peer, "failed", "", "", "", "", "", ""])
            stage_lines.append(f"{peer}: {res['error']}")
            continue
        s = score(res["pairs"], truth, index)
        rows.append(
            [
                peer,
                f"{res['work']:.1f}",
                f"{res['wall']:.1f}",
                mib(res["maxrss_kib"]),
                f"{s['near_recall']:.4f} ({s['near_found']}/{s['near']})",
                f"{s['exact_recall']:.4f}",
                f"{s['precision']:.4f} ({s['removals']:,} removals)",
                str(s["below_found"]),
            ]
        )
        stage_lines.append(
            f"{peer}: " + ", ".join(f"{k} {v:.1f} s" for k, v in res["stages"].items())
        )
    print(f"\n{len(keys):,} records; peers in their own environments, one process each\n")
    header = ["peer", "work s", "wall s", "peak RSS", "near recall (>= 0.8)", "exact recall",
              "precision", "pairs < 0.8 joined"]  # fmt: skip
    print(table(rows, header, right={1, 2, 3}))
    print("\nStages:\n" + "\n".join(stage_lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
