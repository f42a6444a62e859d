"""Speed and scale: every stage of `curate build` on a generated corpus, against a naive baseline.

    uv run python bench/bench_scale.py --records 100000 [--seed 0] [--baseline-sample N]
        [--engine local|serial|ray]

One run, one corpus (bench/generate.py, record-level faults at their default rates, no
file-level faults so that every record reaches the build):

1. `curate build` cold, in a fresh child process, with every finding code demoted to a warning
   (the benchmark measures speed and detection, not refusal): per stage wall time, records per
   second and the peak RSS reached by the end of the stage (main process, and its workers).
2. Recall and precision of `duplicate`, `near-duplicate` (injected pairs at or above the 0.8
   threshold are expected; those below must not be found) and `language` against the ground
   truth.
3. The language pre-check against langdetect on every record: how often the answer curate uses
   (`language_of`) equals langdetect's.
4. A naive baseline on the same corpus: a langdetect loop over every record, datasketch
   MinHashLSH at its defaults over word 3-shingles, and pandas `to_parquet` of the table; the
   ratio of our time to its time.

Prints its figures; asserts nothing. Writes only under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

from _common import ANSWER_KEY, OUT, ROOT, generate_corpus, machine, mib, table

NEAR_THRESHOLD = 0.8
BASELINE_CODES = ("duplicate", "near-duplicate", "language")


# --- the child: one cold build ------------------------------------------------------------------
def child(corpus: Path, out: Path, result_path: Path, jobs: int | None, engine: str) -> None:
    sys.path.insert(0, str(ROOT))
    from curate.pipeline.build import build
    from curate.settings import Settings
    from validation.config import Config
    from validation.findings import Severity
    from validation.registry import REGISTRY

    config = Config(severity={code: Severity.WARNING for code in REGISTRY}, exclude=ANSWER_KEY)
    marks: list[tuple[str, float, float, float]] = []
    started = time.perf_counter()

    def say(message: str) -> None:
        if message.startswith(("validated", "deduplicated", "cleaned", "wrote")) and not (
            message.startswith("cleaned") and "files" in message
        ):
            marks.append(
                (
                    message,
                    time.perf_counter() - started,
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                    resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                )
            )

    result = build(
        [corpus],
        out,
        Settings(checks=config),
        progress=say,
        jobs=jobs,
        template=ROOT / "dataset_card.md",
        engine=engine,
    )
    wall = time.perf_counter() - started
    findings = [
        {"code": f.code, "file": f.file, "line": f.line, "related": f.related, "score": f.score}
        for f in result.report
        if f.code in BASELINE_CODES
    ]
    result_path.write_text(
        json.dumps(
            {
                "wall": wall,
                "records_in": result.records_in,
                "records_out": result.records_out,
                "timings": result.timings,
                "marks": marks,
                "maxrss_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "maxrss_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                "findings": findings,
            }
        ),
        encoding="utf-8",
    )


# --- accuracy -------------------------------------------------------------------------------------
def accuracy(corpus: Path, findings: list[dict]) -> list[list[str]]:
    truth = [
        json.loads(line)
        for line in (corpus / "ground_truth.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    rows = []
    for code in BASELINE_CODES:
        expected = {
            (t["file"], t["line"])
            for t in truth
            if t["code"] == code and (code != "near-duplicate" or t["similarity"] >= NEAR_THRESHOLD)
        }
        below = {
            (t["file"], t["line"])
            for t in truth
            if code == "near-duplicate" and t["code"] == code and t["similarity"] < NEAR_THRESHOLD
        }
        found = {(Path(f["file"]).name, f["line"]) for f in findings if f["code"] == code}
        hit = len(expected & found)
        recall = hit / len(expected) if expected else 1.0
        precision = hit / len(found) if found else 1.0
        rows.append(
            [
                code,
                str(len(expected)),
                str(len(found)),
                f"{recall:.4f}",
                f"{precision:.4f}",
                str(len(below & found)) if code == "near-duplicate" else "",
            ]
        )
    return rows


# --- the naive baseline ---------------------------------------------------------------------------
def corpus_records(corpus: Path) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from curate.ingest.discover import collect_paths
    from curate.ingest.formats.text import parse_file

    return [r.text for p in collect_paths([corpus], ANSWER_KEY) for r in parse_file(p).records]


def language_baseline(texts: list[str]) -> tuple[float, float, float, int]:
    """(langdetect loop seconds, our path's seconds, agreement, records compared)."""
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    from validation.language import detect, language_of
    from validation.normalize import plain_text

    def langdetect_lang(text: str) -> str | None:  # langdetect itself, as detect folds it
        try:
            lang = detect_langs(text)[0].lang
        except LangDetectException:
            return None
        return "zh" if lang.startswith("zh") else lang

    plains = [plain_text(t) for t in texts]
    DetectorFactory.seed = 0
    t = time.perf_counter()
    reference = [langdetect_lang(p) for p in plains]  # no cache: the naive loop
    loop_seconds = time.perf_counter() - t
    detect.cache_clear()
    t = time.perf_counter()
    ours = [language_of(p)[0] for p in plains]
    ours_seconds = time.perf_counter() - t
    agree = sum(a == b for a, b in zip(ours, reference, strict=True))
    return loop_seconds, ours_seconds, agree / len(texts), len(texts)


def datasketch_baseline(texts: list[str]) -> tuple[float, int]:
    """Seconds for datasketch MinHashLSH at its defaults, and the number of candidate pairs."""
    from datasketch import MinHash, MinHashLSH

    word = re.compile(r"\w+")
    t = time.perf_counter()
    lsh = MinHashLSH()  # defaults: threshold 0.9, num_perm 128
    pairs = 0
    for i, text in enumerate(texts):
        words = word.findall(text.lower())
        m = MinHash()
        m.update_batch([" ".join(words[k : k + 3]).encode() for k in range(max(1, len(words) - 2))])
        pairs += len(lsh.query(m))
        lsh.insert(str(i), m)
    return time.perf_counter() - t, pairs


def pandas_baseline(data: Path, target: Path) -> float:
    """pandas writing the table the build wrote: every shard of ``data``, read as one frame."""
    import pandas as pd

    frame = pd.read_parquet(data)
    t = time.perf_counter()
    frame.to_parquet(target)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--engine", default="local", help="where the build's tasks run")
    parser.add_argument(
        "--baseline-sample",
        type=int,
        default=0,
        help="run the langdetect and datasketch baselines on the first N records only "
        "(their times are then scaled to the corpus; 0: every record)",
    )
    parser.add_argument("--reuse", action="store_true", help="reuse a corpus already generated")
    parser.add_argument(
        "--child", nargs=3, metavar=("CORPUS", "OUT", "RESULT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), Path(args.child[2]), args.jobs,
              args.engine)  # fmt: skip
        return 0

    n = args.records
    base = OUT / f"scale-{n}-s{args.seed}"
    corpus = base / "drops"
    language_rate = min(0.01, 5_000 / n)
    no_file_faults = [
        "--files=bom=0",
        "--files=line-endings=0",
        "--files=header-missing=0",
        "--files=header-language=0",
        "--files=header-mismatch=0",
        "--files=empty-file=0",
        "--files=encoding=0",
        "--files=schema=0",
        f"--rate=language={language_rate}",
    ]
    print(f"# bench_scale: {n:,} records, seed {args.seed}; {machine()}")
    if not (args.reuse and (corpus / "ground_truth.jsonl").is_file()):
        t = time.perf_counter()
        generate_corpus(corpus, n, args.seed, no_file_faults)
        print(f"generated the corpus in {time.perf_counter() - t:.1f} s: {corpus}")

    result_path = base / "result.json"
    cmd = [sys.executable, __file__, "--child", str(corpus), str(base / "dist"), str(result_path)]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    subprocess.run([*cmd, "--engine", args.engine], check=True, cwd=ROOT)
    res = json.loads(result_path.read_text(encoding="utf-8"))

    print(
        f"\n## curate build (cold, child process): {res['wall']:.1f} s wall, "
        f"{res['records_in'] / res['wall']:,.0f} records/s, "
        f"{res['records_in']:,} records in, {res['records_out']:,} out"
    )
    print(
        f"peak RSS: main process {mib(res['maxrss_self'])}, "
        f"largest worker {mib(res['maxrss_children'])}\n"
    )
    timing_rows = [
        [stage, f"{seconds:.2f}", f"{res['records_in'] / seconds:,.0f}" if seconds else "-"]
        for stage, seconds in sorted(res["timings"].items(), key=lambda kv: -kv[1])
    ]
    print("Per stage (check and sketch times are CPU seconds summed over the worker processes;")
    print("'(wall)' rows are elapsed time):\n")
    print(table(timing_rows, ["stage", "seconds", "records/s"], right={1, 2}))
    mark_rows = []
    previous = 0.0
    for message, at, rss_self, rss_children in res["marks"]:
        mark_rows.append(
            [message.split(":")[0][:40], f"{at:.1f}", f"{at - previous:.1f}", mib(rss_self),
             mib(rss_children)]
        )  # fmt: skip
        previous = at
    print("\nMilestones (peak RSS reached by then):\n")
    print(table(mark_rows, ["milestone", "at s", "stage s", "main RSS", "worker RSS"],
                right={1, 2, 3, 4}))  # fmt: skip

    print("\n## Detection against the ground truth\n")
    print(table(accuracy(corpus, res["findings"]),
                ["code", "expected", "found", "recall", "precision", "below-threshold found"],
                right={1, 2, 3, 4, 5}))  # fmt: skip

    texts = corpus_records(corpus)
    sample = texts[: args.baseline_sample] if args.baseline_sample else texts
    scale = len(texts) / len(sample)
    print(
        f"\n## Naive baseline on {len(sample):,} records"
        + (f" (times scaled x{scale:.1f} to the corpus)" if scale > 1 else "")
    )
    loop_s, ours_s, agreement, compared = language_baseline(sample)
    ds_s, ds_pairs = datasketch_baseline(sample)
    pd_s = pandas_baseline(base / "dist" / "data", base / "baseline.parquet")
    # The language check decides from a measure the runner takes first ("measure language"):
    # the detection is in the measure, so both count.
    ours_lang = res["timings"].get("measure language", 0.0) + res["timings"].get("language", 0.0)
    ours_near = res["timings"].get("sketch", 0.0) + res["timings"].get("near-duplicate", 0.0)
    ours_write = res["timings"].get("sort + write (wall)", 0.0)
    rows = [
        ["language: langdetect loop vs curate's language check", f"{loop_s * scale:.1f}",
         f"{ours_lang:.1f}", f"{ours_lang / (loop_s * scale):.3f}"],
        ["near-dup: datasketch MinHashLSH() defaults vs sketch + near-duplicate",
         f"{ds_s * scale:.1f}", f"{ours_near:.1f}", f"{ours_near / (ds_s * scale):.3f}"],
        ["write: pandas to_parquet vs sort + write", f"{pd_s:.1f}", f"{ours_write:.1f}",
         f"{ours_write / pd_s:.3f}" if pd_s else "-"],
    ]  # fmt: skip
    total_base = loop_s * scale + ds_s * scale + pd_s
    total_ours = ours_lang + ours_near + ours_write
    rows.append(["together", f"{total_base:.1f}", f"{total_ours:.1f}",
                 f"{total_ours / total_base:.3f}"])  # fmt: skip
    print(table(rows, ["component", "baseline s", "curate s", "ratio"], right={1, 2, 3}))
    print("(curate's check seconds are CPU seconds over both workers; its wall time is lower)")
    print(f"datasketch at its defaults (threshold 0.9) proposed {ds_pairs:,} candidate pairs")
    print(
        f"\nlanguage pre-check + langdetect vs langdetect alone: agreement {agreement:.5f} "
        f"on {compared:,} records; our path took {ours_s:.1f} s, the loop {loop_s:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
