"""Every cleaned text of the dev corpus and of tests/data keeps the raw text's words, numbers and
macro names, and holds none of the code's own template placeholders.

The oracle is written here and shares nothing with the cleaner: its own patterns for citations,
math and commands, its own tokens. A word or number of the raw text outside citations, math and
command names must be in the cleaned text (letters compared after NFKD without marks, so
``Schr\\"odinger`` and ``Schrödinger`` count alike). A command name must be in the cleaned text as
typed (kept TeX) unless the command is one a library or a package table says what it prints:
pylatexenc's text context (LaTeX's own macros) and the tables of validation/texpackages; else a
macro's name was dropped, and with it what the author wrote.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest
from pylatexenc.latex2text import get_default_latex_context_db

from curate.transform.clean import clean_text
from validation import texpackages

ROOT = Path(__file__).resolve().parents[2]
DEV = Path("/work/shared/corpus/real-dev/records.jsonl.gz")
if not DEV.is_file():
    DEV = ROOT.parent.parent / "shared" / "corpus" / "real-dev" / "records.jsonl.gz"

_CITE = re.compile(
    r"\\(?:[Cc]ite[A-Za-z]*|nocite|ref|eqref|autoref|[Cc]ref|pageref|label|url|href|begin|end)"
    r"\*?(?:\s*\[[^\]]*\])*\s*\{[^{}]*\}"
)
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$]*\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_URL = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+|&#?\w+;|<[^<>]*>")
_SCRIPT = re.compile(r"[\^_](?:\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|\S)")
_TOKEN = re.compile(r"[^\W\d_]{2,}|\d+")
# What the oracle knows to become something other than its name: layout, structure and the
# wide accents (a combining mark; pylatexenc 2.6, the floor, does not list them itself).
_LAYOUT = frozenset("widehat widetilde overline ".split()) | frozenset(
    "textbf textit emph texttt textsc textsf textrm textsl textup textmd textnormal underline "
    "uline mbox hbox makebox fbox text it bf em sc rm tt sf sl itshape bfseries scshape normalfont "
    "tiny small large Large footnote footnotesize noindent item par newline quad qquad thinspace "
    "enspace textsuperscript textsubscript ensuremath unicode color textcolor vspace hspace "
    "LaTeX TeX verb MakeUppercase MakeLowercase left right log ln exp sin cos tan min max sup inf "
    "lim det deg dim ker arg Pr mod bmod".split()
)
PLACEHOLDERS = ("%s", "%(", "%d", "{0}", "{1}", "<Ref>", "<cit.>", "<ref>")
_MARKERS = re.compile("[\U000f0000-\U000f001f]")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


@lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    db = get_default_latex_context_db()
    names = {name for cat in db.categories() for name in db.d[cat]["macros"]}
    return frozenset(names | {m.name for m in texpackages.entries()} | _LAYOUT)


def _records() -> list[tuple[str, str]]:
    out = []
    with gzip.open(DEV, "rt", encoding="utf-8") as fh:
        out += [(r["id"], r["abstract"]) for r in map(json.loads, fh)]
    for path in sorted((ROOT / "tests" / "data").glob("*.jsonl")):
        for k, line in enumerate(path.read_text("utf-8").splitlines()):
            record = json.loads(line)
            text = record.get("abstract") or record.get("text")
            if isinstance(text, str):
                out.append((f"{path.name}:{k + 1}", text))
    for path in sorted((ROOT / "tests" / "data" / "anyone").glob("*.txt")):
        out += [
            (f"{path.name}:{k + 1}", t) for k, t in enumerate(path.read_text("utf-8").split("\n\n"))
        ]
    return out


def lost(raw: str, cleaned: str) -> list[str]:
    """The raw text's words, numbers and macro names that the cleaned text lacks."""
    prose = _URL.sub(" ", _MATH.sub(" ", _CITE.sub(" ", raw)))
    names = set(_COMMAND.findall(prose))
    prose = _SCRIPT.sub(" ", prose)
    prose = _COMMAND.sub(" ", prose)
    prose = re.sub(r"\\.", " ", prose)
    have = _fold(cleaned)
    # Each word where it may touch what a formula became (`$\Lambda$CDM` is `ΛCDM`).
    missing = sorted({t for t in _TOKEN.findall(_fold(prose)) if t not in have})
    dropped = [f"\\{n}" for n in sorted(names) if n not in _known() and f"\\{n}" not in cleaned]
    return missing + dropped


def test_the_oracle_sees_a_dropped_word_and_a_dropped_macro_name() -> None:
    assert lost(r"we introduce \benchname{}, the first", "we introduce , the first") == [
        "\\benchname"
    ]
    assert lost("the first unified benchmark", "the unified benchmark") == ["first"]
    assert lost(r"cost \cite{smith2020} of 25 units", "cost of 25 units") == []


@pytest.fixture(scope="module")
def cleaned() -> list[tuple[str, str, str]]:
    return [(rid, raw, clean_text(" ".join(raw.split())).text) for rid, raw in _records()]


def test_no_row_loses_a_word_number_or_macro_name(cleaned: list[tuple[str, str, str]]) -> None:
    assert len(cleaned) > 7000
    losses = {rid: got for rid, raw, out in cleaned if (got := lost(" ".join(raw.split()), out))}
    assert losses == {}


def test_no_cleaned_text_holds_a_template_placeholder(cleaned: list[tuple[str, str, str]]) -> None:
    leaks = {
        rid: [p for p in PLACEHOLDERS if p in out and p not in raw]
        for rid, raw, out in cleaned
        if any(p in out and p not in raw for p in PLACEHOLDERS) or _MARKERS.search(out)
    }
    assert leaks == {}
