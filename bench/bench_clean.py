"""Text-mode cleaning on the real dev corpus: markup left, words lost, speed, adversarial inputs.

    uv run python bench/bench_clean.py [--corpus ../shared/corpus/real-dev] [--baseline REV]
                                       [--size 24000] [--no-build] [--examples 3]

* **markup left**: the share of rows whose cleaned ``abstract`` still holds markup, judged by
  the patterns written below (not imported from ``validation/``), per kind. Leftovers that are
  math (a ``$``, or braces after ``^``/``_``) are counted apart: math spans are converted by
  ``curate/transform/texmath.py``, not by text mode.
  The TeX the cleaner publishes on purpose and lists as kept (``math-kept``: a math span it
  could not convert faithfully, as ``$…$``; an author's own command such as ``\\kms``) is
  counted apart too, and "any TeX or markup in the row" counts every row the oracle finds
  anything in, on purpose or not.
* **words lost outside markup**: every word of the raw record once this file's own markup
  patterns are blanked out must appear in the cleaned text, in order (as a substring, so
  ``Schr\\"{o}dinger`` → ``Schr`` … ``dinger`` is found in ``Schrödinger``).
* **speed**: ``clean_text`` over every record, and ``curate build`` of the seven drops (cold,
  ``--no-cache``, a config that lets the two control-character records through as warnings),
  each in a child process; with ``--baseline REV`` the same for the tree at REV (``git archive``
  into ``bench/out/``), run back to back with the current tree.
* **adversarial inputs**: ``" *a" * N``, unclosed ``**``, ``$`` runs, ``{`` nesting, ``<`` runs,
  ``_`` runs and more, each validated (every residue pattern) and cleaned; seconds per input.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT, ROOT, baseline_tree, machine, table

# --- The independent oracle -----------------------------------------------------------------
# Written for this benchmark from the markup kinds text mode converts; shares no code with curate or
# validation. Each pattern finds markup that should not be in a cleaned abstract.
ORACLE = {
    "tex command": re.compile(r"\\[A-Za-z]+"),
    "tex escape": re.compile(r"\\[^\sA-Za-z0-9]"),
    "tex quote": re.compile(r"``|(?<!\^)''|`[A-Za-z][^`\s]*'|`[A-Za-z][^`'\"]*\""),
    "tie": re.compile(r"[A-Za-z]{2}~\S|[\d.,;:)\]]~\S|\S~[A-Za-z(\\]"),
    "dash": re.compile(r"\w--\w|\s--\s|\w---|---\w|\s---\s"),
    # TeX grouping: a one-word group (BibTeX's case braces, `{\it x}` left half-done) or a
    # group opening on a command. Set braces (`{0, 1}`, `min{…}`) are math, counted apart.
    "brace": re.compile(r"(?<![\^_\w])\{(?:[A-Za-z][a-z]+\}|\\)"),
    "md emphasis": re.compile(
        r"\*\*[^*\s](?:[^*]*[^*\s])?\*\*"
        r"|(?<![\w*\\^_])\*[A-Za-z0-9](?:[^*]*?[A-Za-z0-9.)])?\*(?![\w*])"
        r"|(?<![\w\\)\]'%^])__?[A-Za-z](?:[^_]*?[A-Za-z.)])?__?(?!\w)"
    ),
    "md link": re.compile(r"\[[^\]]+\]\([^)\s]+\)"),
    "md code": re.compile(r"`[^`\s][^`]*`"),
    "md escape": re.compile(r"\\[*_`#]"),
    "html tag": re.compile(r"</?(?:a|b|i|u|em|strong|p|br|div|span|sup|sub|code|li|ul|ol)\b[^>]*>"),
    "html entity": re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z]{2,8});"),
    "control": re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"),
}
MATH_LEFT = {
    "math $": re.compile(r"\$"),
    "math brace": re.compile(r"[\^_]\{|\{[^{}]*[,_^][^{}]*\}"),
}
# What the oracle blanks out of the raw record before collecting words that must survive:
# math spans, command names, arguments that are not text (keys, labels, environment names),
# escapes, HTML, Markdown markers and link targets (``[url](url)`` keeps the URL once). A
# braced script typed in prose (``12.7^{+2.0}_{-1.7}``) is math too: the converter may write
# its scripts in another order, so its digits are math's to account for, not this oracle's;
# so are a package command's arguments, which it prints in its own way (AASTeX's
# ``\ion{H}{1}`` is ``H I``, siunitx's ``\num{1e5}`` is ``1 × 10⁵``).
BLANK = re.compile(
    r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]|[\^_]\{[^{}$]*\}"
    r"|\\(?:ion|ce|SI|si|num|qty|unit|ang)\{[^{}]*\}(?:\{[^{}]*\})?"
    r"|\\(?:[Cc]ite[a-z]*|ref|eqref|label|cref|autoref|begin|end|vspace|hspace)\*?(?:\[[^\]]*\])?\{[^}]*\}"
    r"|\]\([^)\s]*\)|\\href\{[^}]*\}"
    r"|\\?&#?\w+;|\\[A-Za-z]+|\\.|<[^<>]{1,80}>|[*_`~{}]",
    re.S,
)
WORD = re.compile(r"[^\W_]+")


# A math span the converter could not write faithfully is published as its TeX between `$…$`
# on purpose (reported as `math-kept`, counted in the card): the TeX inside it is counted apart
# from text-mode markup, in "TeX kept in $…$".
KEPT_TEX = re.compile(r"\$[^$]+\$")


# Commands TeX prints as their own names: operator names and the logos.
PRINTED_AS_NAMES = frozenset(
    "log ln lg exp sin cos tan cot sec csc sinh cosh tanh arcsin arccos arctan min max sup inf "
    "lim liminf limsup det deg dim ker hom arg gcd Pr mod bmod pmod LaTeX TeX BibTeX".split()
)


def bare_names(raw: str, cleaned: str) -> list[str]:
    """Command names of ``raw`` that ``cleaned`` prints as bare words (`\\kms` → `kms`), where
    ``raw`` never has that word on its own: a reader would take them for prose."""
    out = []
    for name in sorted(set(re.findall(r"\\([A-Za-z]{2,})", raw)) - PRINTED_AS_NAMES):
        word = re.compile(rf"(?<![\\\w]){name}(?!\w)")
        if word.search(cleaned) and not word.search(raw):
            out.append(name)
    return out


def stars_lost(raw: str, cleaned: str) -> int:
    """How many `x^*` of the prose (outside `$…$`) lost their star: `f^*(X)` must stay `f^*`
    (or `f^∗`), never `f^(X)`."""
    wanted = len(re.findall(r"\^\*", re.sub(r"\$[^$]*\$", " ", raw)))
    return max(0, wanted - len(re.findall(r"\^[*∗]", cleaned)))


def oracle_left(text: str) -> list[str]:
    return [kind for kind, p in ORACLE.items() if p.search(text)]


def math_left(text: str) -> list[str]:
    return [kind for kind, p in MATH_LEFT.items() if p.search(text)]


def _fold(text: str) -> str:
    """Case and accents folded: ``Sérsic`` from ``S\\'{e}rsic`` holds ``S`` … ``e`` … ``rsic``."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def words_lost(raw: str, cleaned: str) -> list[str]:
    """Words outside markup (by BLANK) missing from ``cleaned``, looked for in order."""
    out = _fold(cleaned)
    pos, lost = 0, []
    for word in WORD.findall(BLANK.sub(" ", raw)):
        found = out.find(_fold(word), pos)
        if found < 0:
            lost.append(word)
        else:
            pos = found + len(word)
    return lost


# --- Parts run in child processes ---------------------------------------------------------------
CLEAN_TIMER = textwrap.dedent(
    """
    import gzip, json, sys, time
    from curate.transform.clean import clean_text
    texts = [" ".join(json.loads(l)["abstract"].split()) for l in gzip.open(sys.argv[1])]
    t0 = time.perf_counter()
    results = [clean_text(t) for t in texts]
    dt = time.perf_counter() - t0
    out = [r.text for r in results]
    kept = [list(getattr(r, "math_kept", ())) for r in results]
    json.dump({"seconds": dt, "texts": out, "kept": kept}, sys.stdout)
    """
)

ADVERSARIAL_TIMER = textwrap.dedent(
    """
    import json, sys, time
    from curate.transform.clean import clean_text
    from validation import residue
    text = json.loads(sys.argv[1])
    t0 = time.perf_counter()
    for kind in residue.KINDS:
        residue.find(kind, text)
    t1 = time.perf_counter()
    clean_text(text)
    t2 = time.perf_counter()
    print(json.dumps([t1 - t0, t2 - t1]))
    """
)


def child_env(src: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONHASHSEED", None)
    return env


def time_clean(src: Path, records: Path) -> tuple[float, list[str], list[list[str]]]:
    out = subprocess.run(
        [sys.executable, "-c", CLEAN_TIMER, str(records)],
        env=child_env(src),
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    return data["seconds"], data["texts"], data.get("kept") or [[] for _ in data["texts"]]


def time_build(src: Path, drops: Path, name: str) -> float:
    out_dir = OUT / f"clean-build-{name}"
    config = OUT / "clean-bench.toml"
    config.write_text('[severity]\n"control-char" = "warning"\n', encoding="utf-8")
    cmd = [sys.executable, "-m", "curate.cli", "build", str(drops), "--out", str(out_dir)]
    cmd += ["--no-cache", "--config", str(config), "--template", str(ROOT / "dataset_card.md")]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=child_env(src), capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        print(f"build ({name}) exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def adversarial(size: int) -> dict[str, str]:
    return {
        '" *a" * N': " *a" * size,
        '"**a " * N (unclosed **)': "**a " * size,
        '"$" * 2N': "$" * (2 * size),
        '"$a " * N': "$a " * size,
        '"$$ a" * N': "$$ a" * size,
        '"{" * 2N': "{" * (2 * size),
        '"\\\\a{" * N': "\\a{" * size,
        '"\\\\(" * N': "\\(" * size,
        '"<" * 2N': "<" * (2 * size),
        '"<b " * N': "<b " * size,
        '"_a " * N': "_a " * size,
        '"__" * N': "__" * size,
        '"`" * 2N': "`" * (2 * size),
        '"``a " * N': "``a " * size,
        '"[a](" * N': "[a](" * size,
        '"~-" * N': "~-" * size,
        '"$ " * N': "$ " * size,
        '"$ x " * N': "$ x " * size,
        '"$= a " * N': "$= a " * size,
        '"\\( " * N': "\\( " * size,
        '"$$x\\$$" * N/2': "$$x\\$$" * (size // 2),  # argv holds at most 128 KiB
        '"$\\\\text{$" * N/2': "$\\text{$" * (size // 2),
        '"\\\\text{$ " * N/2': "\\text{$ " * (size // 2),
        '"$a\\\\mbox{" * N/2': "$a\\mbox{" * (size // 2),
    }


def time_adversarial(src: Path, text: str, timeout: float) -> tuple[str, str]:
    try:
        out = subprocess.run(
            [sys.executable, "-c", ADVERSARIAL_TIMER, json.dumps(text)],
            env=child_env(src),
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f}", f"> {timeout:.0f}"
    validate, clean = json.loads(out.stdout)
    return f"{validate:.3f}", f"{clean:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = Path("/work/shared/corpus/real-dev")  # beside a worktree as beside the checkout
    corpus = shared if shared.is_dir() else ROOT.parent / "shared" / "corpus" / "real-dev"
    ap.add_argument("--corpus", type=Path, default=corpus)
    ap.add_argument("--baseline", help="a git revision to compare speed with (e.g. 19169c5)")
    ap.add_argument("--size", type=int, default=24000, help="N of the adversarial inputs")
    ap.add_argument("--timeout", type=float, default=60.0, help="per adversarial input")
    ap.add_argument("--no-build", action="store_true", help="skip the curate build timing")
    ap.add_argument("--examples", type=int, default=3, help="examples shown per oracle kind")
    args = ap.parse_args()
    records_path = args.corpus / "records.jsonl.gz"
    drops = args.corpus / "drops"
    if not records_path.is_file() or not drops.is_dir():
        sys.exit(f"no dev corpus at {args.corpus} (records.jsonl.gz and drops/); use --corpus")
    OUT.mkdir(exist_ok=True)
    with gzip.open(records_path, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    ids = [r["id"] for r in records]
    raws = [" ".join(r["abstract"].split()) for r in records]
    print(f"# bench_clean: {len(records)} records from {args.corpus} ({machine()})\n")

    new_seconds, cleaned, kept_lists = time_clean(ROOT, records_path)
    base = baseline_tree(args.baseline) if args.baseline else None

    # Markup left and words lost.
    kinds: Counter[str] = Counter()
    maths: Counter[str] = Counter()
    rows_left = rows_math = 0
    examples: dict[str, list[str]] = {}
    lost_rows, lost_words = 0, 0
    lost_examples: list[str] = []
    rows_kept = rows_any = rows_bare = rows_stars = 0
    bare_examples: list[str] = []
    for rid, raw, out, kept in zip(ids, raws, cleaned, kept_lists, strict=True):
        # What the cleaner says it published as TeX on purpose (`math-kept`: a formula between
        # `$…$`, an author's own command) is counted apart; the oracle alone finds what is left.
        text = out
        for span in kept:
            text = text.replace(span, " ")
        text = KEPT_TEX.sub(" ", text) if "$" in text else text
        left = oracle_left(text)
        rows_any += bool(oracle_left(out) or math_left(out))
        kinds.update(left)
        rows_left += bool(left)
        rows_kept += bool(oracle_left(out)) and not left
        for kind in left:
            if len(examples.setdefault(kind, [])) < args.examples:
                m = ORACLE[kind].search(text)
                assert m is not None
                examples[kind].append(f"{rid}: …{text[max(0, m.start() - 40) : m.end() + 40]}…")
        math = math_left(out)
        maths.update(math)
        rows_math += bool(math) and not left
        rows_stars += stars_lost(raw, out) > 0
        bare = bare_names(raw, out)
        if bare:
            rows_bare += 1
            if len(bare_examples) < args.examples:
                bare_examples.append(f"{rid}: {bare[:5]}")
        lost = words_lost(raw, out)
        if lost:
            lost_rows += 1
            lost_words += len(lost)
            if len(lost_examples) < args.examples:
                lost_examples.append(f"{rid}: {lost[:5]}")
    n = len(records)
    print("## Markup left in `abstract` (independent oracle in this file)\n")
    rows = [[k, f"{v:,}", f"{v / n:.2%}"] for k, v in sorted(kinds.items())]
    rows.append(["any text-mode markup", f"{rows_left:,}", f"{rows_left / n:.2%}"])
    rows.append(["TeX kept on purpose only (math-kept)", f"{rows_kept:,}", f"{rows_kept / n:.2%}"])
    rows += [[k, f"{v:,}", f"{v / n:.2%}"] for k, v in sorted(maths.items())]
    rows.append(["math only (not text mode)", f"{rows_math:,}", f"{rows_math / n:.2%}"])
    rows.append(["any TeX or markup in the row", f"{rows_any:,}", f"{rows_any / n:.2%}"])
    print(table(rows, ["kind", "rows", "share"], right={1, 2}))
    for kind, ex in sorted(examples.items()):
        print(f"\n{kind}:")
        for line in ex:
            print(f"  {line}")
    print(f"\n## Superscript stars of the prose lost (`f^*(X)` → `f^(X)`): {rows_stars:,} rows")
    print("\n## Command names printed as bare words\n")
    print(f"{rows_bare:,} rows")
    for line in bare_examples:
        print(f"  {line}")
    print("\n## Words lost outside markup\n")
    print(f"{lost_words:,} words in {lost_rows:,} rows")
    for line in lost_examples:
        print(f"  {line}")

    print("\n## Speed (child processes, back to back)\n")
    rows = [["clean_text, this tree", f"{new_seconds:.2f} s", f"{n / new_seconds:,.0f}"]]
    if base is not None:
        old_seconds, _, _ = time_clean(base, records_path)
        rows.append(
            [f"clean_text, {args.baseline}", f"{old_seconds:.2f} s", f"{n / old_seconds:,.0f}"]
        )
    if not args.no_build:
        if base is not None:
            t = time_build(base, drops, "baseline")
            rows.append([f"curate build, {args.baseline}", f"{t:.2f} s", f"{n / t:,.0f}"])
        t = time_build(ROOT, drops, "new")
        rows.append(["curate build, this tree", f"{t:.2f} s", f"{n / t:,.0f}"])
    print(table(rows, ["what", "wall", "records/s"], right={1, 2}))

    print(
        f"\n## Adversarial inputs, N = {args.size:,} (seconds; validate = every residue pattern)\n"
    )
    rows = []
    for name, text in adversarial(args.size).items():
        row = [name, f"{len(text):,}", *time_adversarial(ROOT, text, args.timeout)]
        if base is not None:
            row += list(time_adversarial(base, text, args.timeout))
        rows.append(row)
    header = ["input", "chars", "validate", "clean"]
    if base is not None:
        header += [f"validate {args.baseline}", f"clean {args.baseline}"]
    print(table(rows, header, right=set(range(1, len(header)))))


if __name__ == "__main__":
    main()
