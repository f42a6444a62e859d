"""Math on the real dev corpus: how often cleaning changes what a formula says, and how fast.

    uv run python bench/bench_math.py [--corpus DIR] [--baseline REF] [--build] [--show N]
    uv run --with pypandoc-binary --with unicodeit --with flatlatex --with latex2mathml \\
        python bench/bench_math.py --converters
    uv run --with pypandoc-binary python bench/bench_math.py --tables [unicode-math-table.tex]

The judge below is written for this bench and imports nothing from ``validation/`` or
``curate/``: its own math-span pattern, its own table of what common macros must become, and
its own token accounting. A row "changed meaning" when one of its math spans, located in the
cleaned text between the prose around it, fails one of:

* tokens: every letter and digit of the span outside macro names, and every operator
  ``+ - = < > | * !``, is in the output (compared after NFKD, so ``x²``, ``𝒪`` and ``ℝ`` count);
* grouping: a ``^{…}``/``_{…}`` of several characters is not flattened (``n^-2/5``);
* accents: ``\\tilde`` and friends leave a combining mark;
* symbols: each macro of the judge's table gives its character, an operator name stays a word
  (``k log n``, never ``klogn``), any other macro leaves its name (``\\XOS`` → ``XOS``);
* no ``%s`` or empty output.

A span kept as TeX (its source between ``$…$`` in the output) is faithful by definition.

``--baseline REF`` runs the cleaner of git revision REF on the same records, in a child process
just before the current one, so that both speeds are measured under the same load. ``--build``
also times ``curate build`` of the corpus's drops with both trees.
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DEFAULT_CORPUS = Path("/work/shared/corpus/real-dev")
if not DEFAULT_CORPUS.is_dir():
    DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "real-dev"

# --- The judge's own view of math ---------------------------------------------------------------
SPAN = re.compile(
    r"\$\$(?P<d>.+?)\$\$|\\\((?P<p>.+?)\\\)|\\\[(?P<b>.+?)\\\]|(?<!\\)\$(?P<i>[^$]+?)(?<!\\)\$",
    re.S,
)
MACRO = re.compile(r"\\([A-Za-z]+)")
OPERATORS = "+-=<>|*!"
# What a macro must become, or one of several acceptable forms.
SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "εϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φϕ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "Pi": "Π", "ell": "ℓ",
    "sim": "∼~", "approx": "≈", "pm": "±", "times": "×", "cdot": "·⋅", "leq": "≤", "le": "≤",
    "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠", "lesssim": "≲", "gtrsim": "≳", "infty": "∞",
    "in": "∈", "odot": "⊙", "propto": "∝", "simeq": "≃", "partial": "∂", "nabla": "∇",
    "sum": "∑", "to": "→", "rightarrow": "→", "ll": "≪", "gg": "≫", "star": "⋆", "ast": "∗*",
    "circ": "∘", "sqrt": "√∛∜", "prime": "′'", "langle": "⟨", "rangle": "⟩", "equiv": "≡",
    "subset": "⊂", "subseteq": "⊆", "cap": "∩", "cup": "∪", "forall": "∀", "exists": "∃",
    "perp": "⊥", "otimes": "⊗", "oplus": "⊕", "R": "ℝ", "N": "ℕ", "Z": "ℤ", "ldots": "…",
    "dots": "…", "cdots": "⋯", "mid": "|", "neg": "¬", "lnot": "¬", "hbar": "ħℏ", "land": "∧",
    "ket": "⟩", "bra": "⟨", "norm": "‖", "sun": "⊙",
}  # fmt: skip
OPERATOR_NAMES = frozenset(
    "log ln exp sin cos tan min max sup inf lim det deg dim ker arg Pr tanh".split()
)
ACCENTS = frozenset("tilde widetilde hat widehat bar overline dot ddot vec check breve".split())
# Words a macro must leave (`a \pmod p` reads `a (mod p)`).
WORDS = {"pmod": "mod", "bmod": "mod"}
# Macros that only say how to typeset: they need leave nothing.
LAYOUT = frozenset(
    "left right big Big bigl bigr Bigl Bigr bigg Bigg rm it bf tt sf cal mathrm mathbf mathit "
    "mathsf mathtt mathcal mathbb mathbbm mathscr mathfrak boldsymbol bm text textrm textit "
    "textbf texttt textsf mbox hbox operatorname frac tfrac dfrac nicefrac displaystyle "
    "textstyle scriptstyle limits nolimits quad qquad underline smash unicode not mathring "
    "textup textnormal mathnormal small allowbreak textcolor frak Bbb textsc mathversion over "
    "braket abs".split()
)


def fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).replace("−", "-").replace("∗", "*")
    return text.replace("‖", "||").casefold()


def is_super_or_sub(ch: str) -> bool:
    return unicodedata.decomposition(ch).startswith(("<super>", "<sub>"))


def closing_dollar(text: str, pos: int) -> int:
    """The `$` that closes an inline formula read from ``pos``, outside braces, as TeX and
    MathJax read it (`$M_{\\text{$x$}}$`); -1 if none within 1,000 characters."""
    depth, k = 0, pos
    while k < min(len(text), pos + 1000):
        ch = text[k]
        if ch == "\\":
            k += 2
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return -1
        if ch == "$" and depth == 0:
            return k
        k += 1
    return -1


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, inside) of each math span; a price pair (`$5 and $`) is not one. An inline
    span whose braces are still open at its `$` runs to the `$` outside braces, if any."""
    out = []
    pos = 0
    while m := SPAN.search(text, pos):
        start, end = m.span()
        inner = next(g for g in m.groups() if g is not None)
        if m.group("i") is not None and inner.count("{") > inner.count("}"):
            close = closing_dollar(text, start + 1)
            if close > 0:
                end, inner = close + 1, text[start + 1 : close]
        pos = end
        if m.group("i") is not None and inner[:1].isdigit() and inner[-1:].isspace():
            continue
        out.append((start, end, inner))
    return out


def kept_as_tex(inner: str, region: str) -> bool:
    """The region holds the span's TeX as typed (between dollars, or its body)."""
    inner = html.unescape(inner)
    squeezed = " ".join(inner.split())
    return "$" + squeezed + "$" in " ".join(region.split()) or inner.strip() in region


def judge_span(inner: str, region: str) -> list[str]:
    """Why the region does not say what the TeX ``inner`` says (empty: it does)."""
    if kept_as_tex(inner, region):
        return []  # kept as TeX
    inner = html.unescape(inner)  # `&lt;` in a formula is `<`
    # A command escaped twice by a scraper (`\\mathrm{SE}(3)`) is that command: `\\` (a new
    # row) before a letter or a brace means nothing else in a formula.
    inner = re.sub(r"\\\\(?=[A-Za-z{}|%])", r"\\", inner)
    problems = []
    only_space = not re.sub(r"\\[,;:! ]|~|\s", "", inner)  # `$\,$` is a space, rightly
    if (not region.strip() and not only_space) or "%s" in region:
        problems.append("empty-or-garbage")
    names = MACRO.findall(inner)
    # Arguments that are not content: a code point, an environment, a colour, a root's index
    # (`\sqrt[4]{T}` is `∜T`).
    bare = re.sub(r"\\(?:unicode|begin|end|textcolor|color)\{[^}]*\}|\\sqrt\[[34]\]", " ", inner)
    bare = MACRO.sub(" ", re.sub(r"\\[^A-Za-z]", " ", bare))
    want = Counter(ch for ch in fold(bare) if ch.isalnum() or ch in OPERATORS)
    have = Counter(ch for ch in fold(region) if ch.isalnum() or ch in OPERATORS)
    missing = want - have
    if missing:
        problems.append("tokens:" + "".join(sorted(missing.elements())))
    for m in re.finditer(r"[\^_]\{([^{}]*)\}", inner):
        body = re.sub(r"\\(?:rm|mathrm|text|it|bf|mathbf)\b", "", m.group(1))
        several = len(MACRO.sub("x", body).replace(" ", "")) > 1
        if several and (
            re.search(r"[\^_](?:[-−][0-9A-Za-z]+|[0-9A-Za-z]{2,})/", region)
            or not (
                re.search(r"[\^_]\(", region)
                or any(is_super_or_sub(c) or c in "′″" for c in region)
            )
        ):
            problems.append("grouping")
            break
    folded = fold(region)
    # A control word ends at the first character that is not an ASCII letter: `\capΔ` is
    # `\cap Δ`, and its name printed before the Δ (`capΔ`) is a word that was never there.
    for m in re.finditer(r"\\([A-Za-z]+)(?=[^\x00-\x7f])", inner):
        if re.search(rf"(?<![A-Za-z\\]){m.group(1)}(?=[^\x00-\x7f])", region):
            problems.append(f"control-word:{m.group(1)}")
    # A nested script keeps its grouping: `F_{7^4}` is never `F_74` nor `F_7⁴` ((F₇)⁴).
    if re.search(r"[\^_]\{[^{}]*[\^_][^{}]*\}", inner) and not re.search(r"[\^_]\(", region):
        problems.append("nested-script")
    # `\_` before a letter is an underscore, never a subscript (`inspect\_evals`).
    if re.search(r"\\_[A-Za-z]", inner) and "_" not in region:
        problems.append("escaped-underscore")
    for name in names:
        if name in ACCENTS:
            if not any(
                unicodedata.category(c) == "Mn" for c in unicodedata.normalize("NFD", region)
            ):
                problems.append(f"accent:{name}")
        elif name in SYMBOLS:
            if not any(fold(c) in folded for c in SYMBOLS[name]):
                problems.append(f"symbol:{name}")
        elif name in WORDS:
            if WORDS[name] not in folded:
                problems.append(f"word:{name}")
        elif name in OPERATOR_NAMES:
            glued = re.search(rf"[A-Za-z0-9]{name}|{name}[A-Za-z0-9]", region)
            if name.casefold() not in folded or glued:
                problems.append(f"operator:{name}")
        elif name not in LAYOUT and len(name) > 1 and len(names) == 1 and name in region:
            # The one macro of a span, unknown to the judge, printed as a bare word: a reader
            # takes `om` or `IT` for prose (kept TeX, `\om`, was recognised above).
            problems.append(f"bare-macro:{name}")
        elif (
            name not in LAYOUT
            and len(name) > 1
            and name not in region
            and not any(ord(c) > 127 for c in region)  # unknown to the judge: name or a symbol
        ):
            problems.append(f"lost-macro:{name}")
    return problems


def norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def judge_row(raw: str, cleaned: str) -> tuple[str, list[str]]:
    """('ok' | 'changed' | 'unaligned', problems) for one record with math.

    The prose between math spans is found again in the output (it is plain text, which the
    cleaner keeps); what lies between two pieces of prose is what the formula became. A record
    whose prose the cleaner changed (other markup in it) cannot be aligned and is counted apart.
    """
    groups: list[list[str]] = []  # spans side by side are judged together
    prose: list[str] = []
    prev = 0
    for start, end, inner in math_spans(raw):
        piece = norm(raw[prev:start])
        if groups and not piece:
            groups[-1].append(inner)
        else:
            prose.append(piece)
            groups.append([inner])
        prev = end
    prose.append(norm(raw[prev:]))
    # A short piece of prose (`, `) can also occur inside a formula's output; of the ways the
    # prose aligns, the row is judged by the first whose every formula passes, else the first.
    first: list[str] | None = None
    for regions in align(prose, norm(cleaned)):
        problems: list[str] = []
        for inners, region in zip(groups, regions, strict=True):
            problems += judge_span(" ".join(inners), region)
        if not problems:
            return "ok", []
        if first is None:
            first = problems
    if first is None:
        return "unaligned", []
    return "changed", first


def align(prose: list[str], out: str, budget: int = 5000) -> Iterator[list[str]]:
    """Each way of finding the prose pieces in ``out`` in order: the text between consecutive
    pieces (none if they are not all there).

    A piece is found by its first and last 16 characters only (the prose in between may hold
    text-mode markup that the cleaner rewrote; the formula's neighbours rarely do). A
    depth-first search over the places each piece occurs, so that a short piece (``, ``) found
    inside a formula's output is tried again further on; ``budget`` bounds the search.
    """
    edge = 16

    def ends(k: int, at: int) -> int:
        """Where piece k, starting at ``at``, ends in ``out`` (-1 if it does not)."""
        piece = prose[k]
        if len(piece) <= 2 * edge:
            return at + len(piece) if out.startswith(piece, at) else -1
        if out.startswith(piece, at):  # prose the cleaner left alone: no guessing
            return at + len(piece)
        # Else the piece's last characters where they are nearest to where the piece would end
        # (its tail can also occur inside it: the first occurrence ended the piece too early).
        tails = []
        pos = out.find(piece[-edge:], at + edge)
        while pos != -1 and pos < at + 2 * len(piece):
            tails.append(pos)
            pos = out.find(piece[-edge:], pos + 1)
        if not tails:
            return -1
        return min(tails, key=lambda t: abs(t + edge - at - len(piece))) + edge

    def head(k: int) -> str:
        return prose[k][:edge]

    first_end = ends(0, 0) if out.startswith(head(0)) else -1
    if first_end == -1:
        return
    steps = 0

    def search(k: int, pos: int) -> Iterator[list[str]]:
        nonlocal steps
        at = out.find(head(k), pos + 1) if prose[k] else len(out)
        while at != -1 and steps < budget:
            steps += 1
            end = ends(k, at) if prose[k] else len(out)
            if out[pos:at].strip() and end != -1:  # a formula never becomes nothing
                if k == len(prose) - 1:
                    if end == len(out):
                        yield [out[pos:at]]
                else:
                    for rest in search(k + 1, end):
                        yield [out[pos:at], *rest]
            at = out.find(head(k), at + 1) if prose[k] else -1

    if len(prose) == 1:
        yield []
    else:
        yield from search(1, first_end)


# --- Running a tree's cleaner or build in a child process --------------------------------------
def load_records(corpus: Path) -> list[dict]:
    with gzip.open(corpus / "records.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def worker(src: str, mode: str, corpus: str, out: str) -> None:
    sys.path.insert(0, src)
    if mode == "clean":
        from curate.transform.clean import clean_text

        texts = [" ".join(r["abstract"].split()) for r in load_records(Path(corpus))]
        started = time.perf_counter()
        cleaned = [clean_text(t).text for t in texts]
        seconds = time.perf_counter() - started
        Path(out).write_text(json.dumps({"seconds": seconds, "cleaned": cleaned}), "utf-8")
        return
    import validation.checks  # noqa: F401  (fills the registry)
    from curate.pipeline.build import build
    from curate.settings import Settings
    from validation.config import Config
    from validation.findings import Severity
    from validation.registry import REGISTRY

    # The real corpus has language and control-character errors; they must not stop the build.
    lenient = Config(severity={code: Severity.WARNING for code in REGISTRY})
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        settings = Settings(checks=lenient)
        result = build([Path(corpus) / "drops"], Path(tmp) / "dist", settings, jobs=2)
        flags = _kept_rows(Path(tmp) / "dist")
        seconds = time.perf_counter() - started
    Path(out).write_text(json.dumps({"seconds": seconds, "rows": result.records_out,
                                     "records": result.records_in, **flags}), "utf-8")  # fmt: skip


# TeX left in a published row, as the judge sees it: a control word, or a formula between dollars.
TEX_LEFT = re.compile(r"\\[A-Za-z]+|(?<!\\)\$[^$]*[\\^_{}][^$]*\$")


def _kept_rows(dist: Path) -> dict[str, int]:
    """Rows of the built table whose abstract holds TeX, and how many of them carry
    ``math-kept`` in ``flags``."""
    import pyarrow.parquet as pq

    tex = flagged = unflagged_flag = 0
    for path in sorted((dist / "data").glob("*.parquet")):
        table = pq.read_table(path, columns=["abstract", "flags"]).to_pylist()
        for row in table:
            has_tex = bool(TEX_LEFT.search(row["abstract"]))
            is_flagged = "math-kept" in (row["flags"] or [])
            tex += has_tex
            flagged += has_tex and is_flagged
            unflagged_flag += is_flagged and not has_tex
    return {"tex_rows": tex, "tex_rows_flagged": flagged, "flagged_without_tex": unflagged_flag}


def run_tree(src: Path, mode: str, corpus: Path) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, __file__, "--worker", str(src), mode, str(corpus), out.name],
            check=True,
            cwd=src,
        )
        return json.loads(Path(out.name).read_text("utf-8"))


def export_tree(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "archive", ref, "curate", "validation", "dataset_card.md"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


# --- Other converters, on the spans alone --------------------------------------------------------
def converters() -> dict[str, object]:
    found: dict[str, object] = {}
    from pylatexenc.latex2text import LatexNodes2Text

    l2t = LatexNodes2Text(math_mode="text")
    found["pylatexenc latex2text"] = lambda spans: [l2t.latex_to_text(f"${s}$") for s in spans]
    sys.path.insert(0, str(ROOT))
    from curate.transform.texmath import convert

    found["curate.transform.texmath"] = lambda spans: [convert(f"${s}$").text for s in spans]
    try:
        import pypandoc

        def pandoc(spans: list[str]) -> list[str]:
            # One process per 500 spans: one paragraph each, split back on a marker. A chunk
            # that pandoc rejects (one broken span) is halved until the span is found.
            if not spans:
                return []
            doc = "\n\n".join(f"${s}$ QQSEPQQ" for s in spans)
            try:
                text = pypandoc.convert_text(
                    doc, "plain", format="latex", extra_args=["--wrap=none"]
                )
            except RuntimeError:
                if len(spans) == 1:
                    return [""]
                half = len(spans) // 2
                return pandoc(spans[:half]) + pandoc(spans[half:])
            parts = [p.strip() for p in text.split("QQSEPQQ")][: len(spans)]
            return parts + [""] * (len(spans) - len(parts))

        found["pandoc (pypandoc-binary)"] = lambda spans: [
            out for k in range(0, len(spans), 500) for out in pandoc(spans[k : k + 500])
        ]

    except ImportError:
        pass
    try:
        import unicodeit

        found["unicodeit"] = lambda spans: [unicodeit.replace(s) for s in spans]
    except ImportError:
        pass
    try:
        import flatlatex

        conv = flatlatex.converter()

        def flat(spans: list[str]) -> list[str]:
            out = []
            for s in spans:
                try:
                    out.append(conv.convert(s))
                except Exception:  # flatlatex raises on what it does not know
                    out.append("")
            return out

        found["flatlatex"] = flat
    except ImportError:
        pass
    return found


def compare_converters(records: list[dict]) -> None:
    spans = [
        inner for r in records for _s, _e, inner in math_spans(" ".join(r["abstract"].split()))
    ]
    # A span without TeX syntax (`$z$`, `$4.0<z<11.4$`) needs no converting: counted apart, and
    # "kept" means a span with a command or a group given back as TeX (`A_V` written `A_V` is
    # converted: it is plain text's way of writing it).
    plain = sum(1 for span in spans if not re.search(r"[\\^_{}]", span))
    print(f"{len(spans)} math spans ({plain} without TeX syntax, converted by every converter "
          "as they are); a converter is judged on each span alone")  # fmt: skip
    print(f"  {'converter':<26} {'converted':>9} {'kept':>5} {'changed':>7}  spans/s")
    for name, fn in converters().items():
        started = time.perf_counter()
        outs = fn(spans)
        seconds = time.perf_counter() - started
        kept = changed = 0
        for span, out in zip(spans, outs, strict=True):
            if re.search(r"[\\{}]", span) and kept_as_tex(span, out):
                kept += 1  # the TeX itself (for another converter: it gave the input back)
            elif judge_span(span, out):
                changed += 1
        converted = len(spans) - kept - changed
        print(f"  {name:<26} {converted:>9} {kept:>5} {changed:>7}  "
              f"{len(spans) / seconds:,.0f}")  # fmt: skip


# --- The converter's symbol table beside unicode-math's and pandoc's ---------------------------
def compare_tables(unicode_math: Path | None) -> None:
    """Each name of ``validation.texsymbols`` that unicode-math (its ``unicode-math-table.tex``,
    given by path) or pandoc (through pypandoc, when installed) also knows: same character,
    or which. Only names that are control words, and only single characters."""
    sys.path.insert(0, str(ROOT))
    from validation.texsymbols import symbols

    ours = {n: c for n, c in symbols().items() if n.isalpha() and len(c) == 1}
    if unicode_math is not None:
        theirs: dict[str, str] = {}
        pattern = r'\\UnicodeMathSymbol\{"([0-9A-F]+)\}\{\\(\w+)\s*\}'
        for m in re.finditer(pattern, unicode_math.read_text("utf-8")):
            theirs.setdefault(m.group(2), chr(int(m.group(1), 16)))
        _table_diff("unicode-math", ours, theirs)
    try:
        import pypandoc
    except ImportError:
        return
    names = sorted(ours)
    doc = "\n\n".join(f"$\\{n}$ QQSEPQQ" for n in names)
    text = pypandoc.convert_text(doc, "plain", format="latex", extra_args=["--wrap=none"])
    outs = [p.strip() for p in text.split("QQSEPQQ")][: len(names)]
    # What pandoc does not know it gives back as TeX (`$\\CYRA$`): not a name it shares.
    known = {n: o for n, o in zip(names, outs, strict=False) if o and "\\" not in o}
    print(f"pandoc gives {len(names) - len(known)} of curate's names back as TeX")
    _table_diff("pandoc", ours, known)


def _table_diff(label: str, ours: dict[str, str], theirs: dict[str, str]) -> None:
    shared = sorted(set(ours) & set(theirs))
    same = [n for n in shared if ours[n] == theirs[n]]
    folded = [
        n
        for n in shared
        if n not in same
        and unicodedata.normalize("NFKC", ours[n]) == unicodedata.normalize("NFKC", theirs[n])
    ]
    other = [n for n in shared if n not in same and n not in folded]
    print(f"{label}: {len(shared)} names shared with curate's {len(ours)}: {len(same)} the same "
          f"character, {len(folded)} the same after NFKC, {len(other)} another")  # fmt: skip
    for n in other:
        print(f"    \\{n}: curate {ours[n]!r} U+{ord(ours[n]):04X}, {label} {theirs[n]!r}")


# --- Main ---------------------------------------------------------------------------------------
def report(label: str, records: list[dict], cleaned: list[str], seconds: float, show: int) -> None:
    verdicts: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    examples = []
    for r, out in zip(records, cleaned, strict=True):
        raw = " ".join(r["abstract"].split())
        if not math_spans(raw):
            continue
        verdict, problems = judge_row(raw, out)
        verdicts[verdict] += 1
        classes.update({p.split(":")[0] for p in problems})
        if verdict == "changed" and len(examples) < show:
            examples.append((r["id"], problems[:4]))
    rows = sum(verdicts.values())
    judged = verdicts["ok"] + verdicts["changed"]
    print(f"{label}: {len(records) / seconds:,.0f} records/s cleaned ({seconds:.2f} s)")
    print(f"  rows with math {rows}; judged {judged}; not aligned {verdicts['unaligned']}")
    share = verdicts["changed"] / max(1, judged)
    print(f"  meaning changed in {verdicts['changed']} rows ({share:.2%} of judged rows)")
    print("  by class: " + ", ".join(f"{k} {v}" for k, v in classes.most_common()))
    for rid, problems in examples:
        print(f"    {rid}: {problems}")


def report_spans(records: list[dict], cleaned: list[str], show: int) -> None:
    """Without alignment: each span converted alone by the current tree's converter, judged,
    and found verbatim in the cleaned record (so nothing after the conversion changed it)."""
    sys.path.insert(0, str(ROOT))
    from curate.transform.texmath import convert

    rows = changed = spans = kept = 0
    examples = []
    for r, out in zip(records, cleaned, strict=True):
        found = math_spans(" ".join(r["abstract"].split()))
        if not found:
            continue
        rows += 1
        problems = []
        for _s, _e, inner in found:
            spans += 1
            result = convert(f"${inner}$")
            kept += result.kept
            problems += judge_span(inner, result.text)
            if " ".join(result.text.split()) not in " ".join(out.split()):
                problems.append("not-in-output")
        if problems:
            changed += 1
            if len(examples) < show:
                examples.append((r["id"], problems[:4]))
    print(f"  span by span (all {rows} rows with math, {spans} spans, {kept} kept as TeX): "
          f"meaning changed in {changed} rows ({changed / max(1, rows):.2%})")  # fmt: skip
    for rid, problems in examples:
        print(f"    {rid}: {problems}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:6])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--baseline", help="git revision whose cleaner to compare with")
    ap.add_argument("--build", action="store_true", help="also time curate build of the drops")
    ap.add_argument("--converters", action="store_true", help="compare converters on the spans")
    ap.add_argument("--show", type=int, default=10, help="changed rows to print")
    ap.add_argument(
        "--tables",
        nargs="?",
        const="",
        metavar="UNICODE_MATH_TABLE",
        help="compare the symbol table with unicode-math's (path to unicode-math-table.tex) "
        "and pandoc's",
    )
    args = ap.parse_args()
    if args.tables is not None:
        compare_tables(Path(args.tables) if args.tables else None)
        return
    records = load_records(args.corpus)
    if args.converters:
        compare_converters(records)
        return
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        if args.baseline:
            trees[f"baseline {args.baseline}"] = export_tree(args.baseline, Path(tmp))
        trees["current tree"] = ROOT
        for label, src in trees.items():
            result = run_tree(src, "clean", args.corpus)
            report(label, records, result["cleaned"], result["seconds"], args.show)
            if src == ROOT:
                report_spans(records, result["cleaned"], args.show)
        if args.build:
            for label, src in trees.items():
                result = run_tree(src, "build", args.corpus)
                rate = result["records"] / result["seconds"]
                print(f"{label}: build {result['records']} records -> {result['rows']} rows "
                      f"in {result['seconds']:.1f} s ({rate:,.0f} records/s)")  # fmt: skip
                share = result["tex_rows"] / max(1, result["rows"])
                print(f"  TeX kept in {result['tex_rows']} rows of {result['rows']} ({share:.2%}), "
                      f"{result['tex_rows_flagged']} of them flagged math-kept; "
                      f"{result['flagged_without_tex']} flagged rows without TeX")  # fmt: skip


if __name__ == "__main__":
    main()
