"""Benchmark sources in other formats: peak memory of `curate validate` on a large JSON Lines
file, and the dev corpus built as JSON Lines against its text drops.

    uv run python bench/bench_formats.py memory [--gib 1.0] [--seed 0] [--runs 1] [--reuse]
    uv run python bench/bench_formats.py equivalence [--corpus ../shared/corpus/real-dev]

``memory``: a corpus of ``bench/generate.py`` (preset ``warnings-only``, as bench_build's: the
default preset's 1 % of foreign-language records cannot be made distinct past about 800,000
records; its record count chosen so that the JSON Lines file reaches ``--gib`` GiB) is written
as one JSON Lines file, one object a record (``id``, ``abstract``), in
`bench/out/formats-<N>-s<seed>-w/records.jsonl`; then
`python -m curate.cli validate FILE --config …` runs in a child process with a fresh
validation cache (the default, so the cache's entries are written as they are in use), and
``os.wait4`` gives its wall time, CPU and peak RSS (``ru_maxrss``: the largest of the child
and of any process it waited for). With ``--runs N`` the same records as text drops (the
generator's own files) are validated too, alternately (drops, JSONL, drops, JSONL, …), for a
figure of the text-drop path on the same records on the same machine state.

``equivalence``: the dev corpus's ``records.jsonl.gz`` (text ``abstract``, id ``id``, title
kept) and its ``drops/`` are each built in a child process (``control-char`` a warning, as in
``bench_dedupe_real.py``); the two tables must have the same
``abstract`` and ``id`` values row for row. Prints the counts, the first difference if any,
and the build times. Run by hand; it prints its figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT, ROOT, generate_corpus, machine, mib, table

BYTES_PER_RECORD = 1_330  # of the generator's records as JSON Lines (measured at 10,000)
CONFIG = '[mapping.jsonl]\ntext = "abstract"\nid = "id"\n'


def to_jsonl(drops: Path, target: Path) -> int:
    """Every record of the generated drops as one JSON Lines file; the record count."""
    from curate.ingest.formats.text import parse_file
    from validation.config import Config

    n = 0
    with target.open("w", encoding="utf-8") as fh:
        for path in sorted(drops.glob("*.txt")):
            for record in parse_file(path, Config(max_file_bytes=0)).records:
                fh.write(json.dumps({"id": f"{path.stem}:{record.line}", "abstract": record.text},
                                    ensure_ascii=False) + "\n")  # fmt: skip
                n += 1
    return n


def run_child(argv: list[str], cwd: Path) -> dict:
    """Run the command, return wall, CPU and peak RSS (KiB) from os.wait4, and its exit code."""
    log = OUT / "formats-child.log"
    started = time.perf_counter()
    with log.open("wb") as err:  # a file, not a pipe: a chatty child never blocks on it
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss,
        "code": os.waitstatus_to_exitcode(status),
        "err": lines[-1:],
    }


def memory(args: argparse.Namespace) -> None:
    records = int(args.gib * 2**30 / BYTES_PER_RECORD)
    folder = OUT / f"formats-{records}-s{args.seed}-w"
    corpus = folder / "drops"
    jsonl = folder / "records.jsonl"
    if not (args.reuse and jsonl.exists()):
        folder.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        generate_corpus(corpus, records, args.seed, ["--preset", "warnings-only"])
        print(f"generated {records:,} records in {time.perf_counter() - t:.0f} s")
        t = time.perf_counter()
        n = to_jsonl(corpus, jsonl)
        print(f"wrote {jsonl} ({n:,} records) in {time.perf_counter() - t:.0f} s")
    size = jsonl.stat().st_size
    (folder / "curate.toml").write_text(CONFIG, encoding="utf-8")
    print(f"{machine()}; JSONL {size / 2**30:.2f} GiB ({size:,} bytes)")
    rows = []
    order = ["drops", "jsonl"] * args.runs if args.runs > 1 else ["jsonl"]
    for k, kind in enumerate(order):
        cache = folder / f"cache-{k}"
        subprocess.run(["rm", "-rf", str(cache)], check=True)
        target = corpus if kind == "drops" else jsonl
        argv = [sys.executable, "-m", "curate.cli", "validate", str(target), "--config",
                str(folder / "curate.toml")]  # fmt: skip
        env_cache = {"CURATE_CACHE_DIR": str(cache)}
        os.environ.update(env_cache)
        load = os.getloadavg()[0]
        got = run_child(argv, ROOT)
        rows.append([kind, f"{got['wall']:.0f} s", f"{got['cpu']:.0f} s", mib(got["rss"]),
                     f"{load:.1f}", str(got["code"]), " ".join(got["err"])[:60]])  # fmt: skip
        print(rows[-1], flush=True)
    header = ["source", "wall", "CPU", "peak RSS", "load", "exit", "last stderr line"]
    print(table(rows, header, right={1, 2, 3, 4}))


def _in_drop_order(corpus: Path, target: Path) -> None:
    """records.jsonl.gz with its lines in the order of the drops (their files sorted by name,
    as discovery sorts them; each file in corpus order), for the build that tells order from
    format."""
    import gzip

    with gzip.open(corpus / "records.jsonl.gz", "rt", encoding="utf-8") as fh:
        lines = fh.readlines()
    stems = sorted(p.stem for p in (corpus / "drops").glob("*.txt"))

    def rank(line: str) -> int:
        source = json.loads(line)["source"].replace("-", "_")
        return next(i for i, stem in enumerate(stems) if stem.startswith(source))

    target.write_text("".join(sorted(lines, key=rank)), encoding="utf-8")  # a stable sort


def equivalence(args: argparse.Namespace) -> None:
    import pyarrow.parquet as pq

    corpus = Path(args.corpus)
    folder = OUT / "formats-equivalence"
    folder.mkdir(parents=True, exist_ok=True)
    reordered = folder / "records-in-drop-order.jsonl"
    _in_drop_order(corpus, reordered)
    # Two abstracts of the corpus hold a control character (a build removes it): a warning
    # here, as in bench_dedupe_real.py, so that the corpus builds as a whole in both forms.
    base = '[severity]\ncontrol-char = "warning"\n' + CONFIG + 'title = "title"\n'
    builds = [
        ("drops", corpus / "drops", "merge"),
        ("jsonl", corpus / "records.jsonl.gz", "merge"),
        ("jsonl in drop order", reordered, "merge"),
        ("drops", corpus / "drops", "keep"),
        ("jsonl", corpus / "records.jsonl.gz", "keep"),
    ]
    tables, rows = {}, []
    for k, (kind, source, near) in enumerate(builds):
        config = folder / f"curate-{near}.toml"
        config.write_text(f'near_duplicates = "{near}"\n' + base, encoding="utf-8")
        out = folder / f"dist-{k}"
        argv = [sys.executable, "-m", "curate.cli", "build", str(source), "--out", str(out),
                "--config", str(config), "--no-cache"]  # fmt: skip
        got = run_child(argv, ROOT)
        tables[kind, near] = pq.read_table(out / "data")  # every shard
        rows.append([kind, near, str(tables[kind, near].num_rows), f"{got['wall']:.1f} s",
                     mib(got["rss"]), str(got["code"])])  # fmt: skip
    print(table(rows, ["source", "near_duplicates", "rows", "wall", "peak RSS", "exit"],
                right={2, 3, 4}))  # fmt: skip
    for near, other in (("merge", "jsonl"), ("merge", "jsonl in drop order"), ("keep", "jsonl")):
        a, b = tables["drops", near], tables[other, near]
        same = [c for c in ("id", "abstract") if a.column(c).to_pylist() == b.column(c).to_pylist()]
        ids_a, ids_b = set(a.column("id").to_pylist()), set(b.column("id").to_pylist())
        print(
            f"{near}: drops / {other}: {a.num_rows:,} / {b.num_rows:,} rows; the same, row for "
            f"row: {', '.join(same) or 'neither id nor abstract'}; ids in one table only: "
            f"{len(ids_a - ids_b)} / {len(ids_b - ids_a)}"
        )
        if ids_a != ids_b:
            only = sorted(set(a.column("id").to_pylist()) - set(b.column("id").to_pylist()))
            by_id = {r["id"]: r for r in a.to_pylist() if r["id"] in only}
            for rid in only:
                where = [(s["file"], s["line"], s["match"]) for s in by_id[rid]["sources"]]
                print(f"  only in the drops' table: {rid} {where}")
    titles = sum(1 for t in tables["jsonl", "merge"].column("title").to_pylist() if t)
    print(f"jsonl build: {titles:,} rows with a title")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    m = sub.add_parser("memory")
    m.add_argument("--gib", type=float, default=1.0)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--runs", type=int, default=1)
    m.add_argument("--reuse", action="store_true")
    e = sub.add_parser("equivalence")
    e.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "real-dev"))
    args = parser.parse_args()
    {"memory": memory, "equivalence": equivalence}[args.what](args)


if __name__ == "__main__":
    main()
