"""Helpers shared by the bench scripts (not part of curate; run by hand, never by pytest)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"  # git-ignored (/bench/out/ in .gitignore)
# The generator's answer key, written beside the drops: curate would read a .jsonl or .json file
# in a folder of sources as a source of its own, so every build or walk of a generated folder
# leaves these out (``--exclude`` on the command line, ``exclude=`` in the library).
ANSWER_KEY = ("ground_truth.jsonl", "meta.json")
EXCLUDE_KEY = [f"--exclude={name}" for name in ANSWER_KEY]


def generate_corpus(
    out_dir: Path, records: int, seed: int, extra: list[str] | None = None
) -> dict[str, object]:
    """Run the generator in a child process (so its memory is not in the bench's RSS figure)."""
    import json

    if out_dir.exists():
        shutil.rmtree(out_dir)
    cmd = [
        sys.executable,
        str(BENCH / "generate.py"),
        str(out_dir),
        "--records",
        str(records),
        "--seed",
        str(seed),
        *(extra or []),
    ]
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return json.loads((out_dir / "meta.json").read_text(encoding="utf-8"))


def mib(kib: float) -> str:
    return f"{kib / 1024:,.1f} MiB"


def table(rows: list[list[str]], header: list[str], right: set[int] | None = None) -> str:
    """A plain fixed-width table (columns in ``right`` are right-aligned)."""
    right = right or set()
    cells = [header, *rows]
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        out = []
        for i, cell in enumerate(row):
            cell = str(cell)
            out.append(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [fmt(header), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def machine() -> str:
    cpus = os.cpu_count()
    return f"python {sys.version.split()[0]}, {cpus} CPUs"


def baseline_tree(rev: str) -> Path:
    """The curate and validation packages at ``rev``, extracted once into bench/out/ under the
    commit they resolve to (a branch name such as ``main`` moves; its old tree must not be
    taken for its new one)."""
    sha = subprocess.run(
        ["git", "rev-parse", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    tree = OUT / f"tree-{sha[:12]}"
    if not (tree / "validation").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", sha, "validation", "curate"], cwd=ROOT, check=True,
            capture_output=True,
        ).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree
