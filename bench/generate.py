"""A deterministic synthetic corpus of source drops with injected faults and exact ground truth.

Usage as a script::

    uv run python bench/generate.py OUT --records 10000 [--seed 0] [--preset warnings-only]

and as a module::

    from bench.generate import generate
    gt_path = generate("bench/out/x", 10_000, seed=0)

Same arguments give byte-identical output (one ``random.Random(seed)``; no set or dict order of
strings is ever iterated; nothing time- or path-dependent is written).

What is written to OUT:

- ``NNNN_<hex>.txt`` drop files in the curate format (header line, blank line, abstracts
  separated by blank lines; ~10 % of records hard-wrapped at 72 columns). Sorted file order is
  generation order, so the source of every copy is *earlier* in curate's sense.
- ``ground_truth.jsonl``: one line per injected fault, sorted by file and line:
  ``{"code", "file" (relative to OUT), "line", "record_line", ...}`` where ``line`` is the
  physical line curate should report (the record's first line for record-level codes, the line
  holding the fault for span codes such as residue, mojibake, control characters and the last
  line for ``truncated``) and ``record_line`` is where the record starts. Duplicates and
  near-duplicates carry ``related`` ("file:line" of the source record) and near-duplicates the
  ``similarity`` (word 3-shingle Jaccard computed here, with this module's own shingling).
- ``meta.json``: seed, rates, counts per code, number of files and records.

Base records are recombined from markup-free sentences of the seed abstracts in ``sources/``,
each prefixed by a sentence built from a real ICML 2025 title
(``/work/shared/corpus/icml2025_metadata.jsonl``) so that records are distinct. Faults are kept
apart so the ground truth is exact: a record carries at most one injected fault (an exact
duplicate varied by markup also carries that residue, and both are listed), copies are only
made of clean records, each clean record is the source of at most one copy, and file-level
faults sit on small files (100 records) whose records carry nothing else and are never copied.
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "sources"
METADATA = Path("/work/shared/corpus/icml2025_metadata.jsonl")
GENERATOR_VERSION = 1

HEADER_EN = "ICML 2025 Papers"
HEADER_ZH = "ICML 2025 论文列表"
WRAP_WIDTH = 72
ISOLATED_FILE_RECORDS = 100

# Rates are fractions of the requested number of records.
DEFAULT_RATES: dict[str, float] = {
    "duplicate": 0.02,
    "near-duplicate": 0.02,
    "latex": 0.03,
    "markdown": 0.03,
    "html": 0.02,
    "language": 0.01,
    "truncated": 0.01,
    "mojibake": 0.002,
    "control-char": 0.002,
    "too-short": 0.002,
    "too-long": 0.002,
}
RECORD_CODES = tuple(DEFAULT_RATES)
# Number of files carrying each file-level fault ("schema" is a header year out of range, which
# also gives a header-mismatch; "empty-file" files are extra files with no records).
DEFAULT_FILE_FAULTS: dict[str, int] = {
    "bom": 1,
    "line-endings": 1,
    "header-missing": 1,
    "header-language": 1,
    "header-mismatch": 1,
    "encoding": 1,
    "schema": 1,
    "empty-file": 2,
}
# For `curate build`, which refuses drops with error-level findings: only warning codes.
WARNINGS_ONLY_RATES = {**DEFAULT_RATES, "language": 0.0, "mojibake": 0.0, "control-char": 0.0}
WARNINGS_ONLY_FILE_FAULTS = {
    k: (v if k in ("bom", "line-endings") else 0) for k, v in DEFAULT_FILE_FAULTS.items()
}

MARKUP_CHARS = set("$\\*_[<&`")
_WORD = re.compile(r"\w+")
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_PLAIN_WORD = re.compile(r"^[A-Za-z]+$")

TITLE_FRAMES = (
    "We present {t}.",
    "This paper introduces {t}.",
    "In this work, we study {t}.",
    "We describe {t}.",
    "This paper, {t}, addresses an open question in machine learning.",
    "Our contribution is {t}.",
)

# --- residue snippets: each matches exactly one residue pattern of its kind and nothing else ---
LATEX_SNIPPETS = (
    "$x^2$",
    "$\\mathcal{O}(n \\log n)$",
    "\\emph{robust}",
    "\\textbf{significantly}",
    "$\\alpha$",
    "\\cite{smith2020}",
    "$O(1/\\epsilon^2)$",
    "\\textit{provably}",
    "$k$",
)
MARKDOWN_SNIPPETS = (
    "**robust**",
    "*provably*",
    "`torch.compile`",
    "[our code](https://github.com/example/repo)",
    "**significantly**",
    "*in practice*",
)
HTML_SNIPPETS = (
    "<i>in vivo</i>",
    "<b>robust</b>",
    "&amp;",
    "<sup>2</sup>",
    "&lt;",
    "<em>provably</em>",
    "&nbsp;",
)
# Markup variations of an exact duplicate: (kind, template around one plain word).
DUP_MARKUP = (
    ("markdown", "**{w}**"),
    ("html", "<b>{w}</b>"),
    ("latex", "\\textbf{{{w}}}"),
    ("markdown", "*{w}*"),
    ("html", "<i>{w}</i>"),
    ("latex", "\\emph{{{w}}}"),
)

# Sentences with one word that is later mangled into mojibake ({w} marks it).
MOJIBAKE_SENTENCES = (
    ("We compare against a {w} baseline throughout.", "naïve"),
    ("Our analysis relies on the {w} distance between distributions.", "Fréchet"),
    ("The bound also holds for {w} divergences of any order.", "Rényi"),
    ("The proof follows from {w} inequality and a union bound.", "Hölder’s"),
    ("We further show that the {w} cost grows linearly with the input size.", "model’s"),
    ("The {w} implementation is publicly available.", "authors’"),
    ("We embed the data in the {w} ball to capture hierarchy.", "Poincaré"),
)

ZWSP = "\u200b"

FOREIGN: dict[str, tuple[str, ...]] = {
    "de": (
        "Wir schlagen eine neue Methode zur Schätzung von Unsicherheiten in tiefen neuronalen "
        "Netzen vor.",
        "Die bisherigen Ansätze benötigen große Mengen an annotierten Daten und sind daher teuer.",
        "Unser Verfahren nutzt eine einfache Zerlegung der Verlustfunktion, die sich leicht "
        "implementieren lässt.",
        "Wir zeigen theoretisch, dass der Algorithmus unter milden Annahmen gegen einen "
        "stationären Punkt konvergiert.",
        "In umfangreichen Experimenten auf Bild- und Textdaten übertrifft die Methode die "
        "stärksten Vergleichsverfahren.",
        "Außerdem untersuchen wir, wie sich die Größe des Modells auf die Robustheit gegenüber "
        "Störungen auswirkt.",
        "Die Ergebnisse deuten darauf hin, dass kleinere Modelle bei gleicher Rechenleistung oft "
        "besser verallgemeinern.",
        "Der Quellcode und alle trainierten Modelle werden nach der Veröffentlichung frei zur "
        "Verfügung gestellt.",
        "Wir analysieren zudem die Grenzen unseres Ansatzes und diskutieren mögliche "
        "Erweiterungen für zukünftige Arbeiten.",
        "Ein zentrales Problem beim verstärkenden Lernen ist die geringe Effizienz bei der "
        "Nutzung von Beobachtungen.",
        "Wir führen eine neue Regularisierung ein, die die Stabilität des Trainings deutlich "
        "verbessert.",
        "Im Gegensatz zu früheren Arbeiten verzichtet unser Ansatz vollständig auf "
        "handgefertigte Merkmale.",
        "Darüber hinaus lässt sich das Verfahren ohne Änderungen auf sehr große Sprachmodelle "
        "übertragen.",
        "Eine Ablationsstudie zeigt, welche Bestandteile des Modells für den Erfolg entscheidend "
        "sind.",
    ),
    "fr": (
        "Nous proposons une nouvelle méthode pour estimer l'incertitude des réseaux de neurones "
        "profonds.",
        "Les approches existantes exigent de grandes quantités de données annotées et restent "
        "donc coûteuses.",
        "Notre méthode repose sur une décomposition simple de la fonction de perte, facile à "
        "mettre en œuvre.",
        "Nous montrons que l'algorithme converge vers un point stationnaire sous des hypothèses "
        "raisonnables.",
        "Dans de nombreuses expériences sur des images et des textes, notre approche dépasse les "
        "meilleures méthodes de référence.",
        "Nous étudions également l'effet de la taille du modèle sur la robustesse face aux "
        "perturbations.",
        "Les résultats suggèrent que les petits modèles généralisent souvent mieux à budget de "
        "calcul égal.",
        "Le code source et les modèles entraînés seront rendus publics après la publication.",
        "Nous analysons enfin les limites de notre approche et discutons de pistes pour des "
        "travaux futurs.",
        "L'apprentissage par renforcement souffre souvent d'une faible efficacité dans "
        "l'utilisation des données.",
        "Nous introduisons une régularisation qui améliore nettement la stabilité de "
        "l'entraînement.",
        "Contrairement aux travaux antérieurs, notre approche se passe entièrement de "
        "caractéristiques conçues à la main.",
        "De plus, la méthode s'applique sans modification à de très grands modèles de langue.",
        "Une étude d'ablation montre quels éléments du modèle sont essentiels à son succès.",
    ),
    "es": (
        "Proponemos un nuevo método para estimar la incertidumbre en redes neuronales profundas.",
        "Los enfoques existentes requieren grandes cantidades de datos etiquetados y, por lo "
        "tanto, resultan costosos.",
        "Nuestro método se basa en una descomposición sencilla de la función de pérdida que es "
        "fácil de implementar.",
        "Demostramos que el algoritmo converge a un punto estacionario bajo supuestos razonables.",
        "En numerosos experimentos con imágenes y textos, nuestro enfoque supera a los mejores "
        "métodos de referencia.",
        "También estudiamos cómo influye el tamaño del modelo en la robustez frente a "
        "perturbaciones.",
        "Los resultados indican que los modelos pequeños suelen generalizar mejor con el mismo "
        "presupuesto de cómputo.",
        "El código fuente y los modelos entrenados se publicarán tras la aceptación del artículo.",
        "Por último, analizamos las limitaciones de nuestro enfoque y discutimos posibles líneas "
        "de trabajo futuro.",
        "El aprendizaje por refuerzo suele sufrir de una baja eficiencia en el uso de los datos.",
        "Introducimos una regularización que mejora claramente la estabilidad del entrenamiento.",
        "A diferencia de trabajos anteriores, nuestro enfoque no necesita características "
        "diseñadas a mano.",
        "Además, el método se aplica sin cambios a modelos de lenguaje muy grandes.",
        "Un estudio de ablación muestra qué componentes del modelo son decisivos para su éxito.",
    ),
    "it": (
        "Proponiamo un nuovo metodo per stimare l'incertezza nelle reti neurali profonde.",
        "Gli approcci esistenti richiedono grandi quantità di dati annotati e sono quindi costosi.",
        "Il nostro metodo si basa su una semplice scomposizione della funzione di perdita, "
        "facile da implementare.",
        "Dimostriamo che l'algoritmo converge a un punto stazionario sotto ipotesi ragionevoli.",
        "In numerosi esperimenti su immagini e testi, il nostro approccio supera i migliori "
        "metodi di riferimento.",
        "Studiamo inoltre come la dimensione del modello influisca sulla robustezza rispetto "
        "alle perturbazioni.",
        "I risultati suggeriscono che i modelli più piccoli generalizzano spesso meglio a parità "
        "di calcolo.",
        "Il codice sorgente e i modelli addestrati saranno resi pubblici dopo la pubblicazione.",
        "Infine analizziamo i limiti del nostro approccio e discutiamo possibili sviluppi futuri.",
        "L'apprendimento per rinforzo soffre spesso di una scarsa efficienza nell'uso dei dati.",
        "Introduciamo una regolarizzazione che migliora nettamente la stabilità "
        "dell'addestramento.",
        "A differenza dei lavori precedenti, il nostro approccio non richiede caratteristiche "
        "progettate a mano.",
        "Inoltre, il metodo si applica senza modifiche a modelli linguistici molto grandi.",
        "Uno studio di ablazione mostra quali componenti del modello sono decisive per il suo "
        "successo.",
    ),
    "pt": (
        "Propomos um novo método para estimar a incerteza em redes neurais profundas.",
        "As abordagens existentes exigem grandes quantidades de dados rotulados e, por isso, "
        "são caras.",
        "O nosso método baseia-se numa decomposição simples da função de perda, fácil de "
        "implementar.",
        "Mostramos que o algoritmo converge para um ponto estacionário sob hipóteses razoáveis.",
        "Em diversos experimentos com imagens e textos, a nossa abordagem supera os melhores "
        "métodos de referência.",
        "Também estudamos como o tamanho do modelo influencia a robustez diante de perturbações.",
        "Os resultados indicam que modelos menores costumam generalizar melhor com o mesmo "
        "orçamento computacional.",
        "O código-fonte e os modelos treinados serão disponibilizados publicamente após a "
        "publicação.",
        "Por fim, analisamos as limitações da nossa abordagem e discutimos possíveis trabalhos "
        "futuros.",
        "A aprendizagem por reforço sofre frequentemente de baixa eficiência no uso dos dados.",
        "Introduzimos uma regularização que melhora claramente a estabilidade do treinamento.",
        "Ao contrário de trabalhos anteriores, a nossa abordagem dispensa características "
        "projetadas manualmente.",
        "Além disso, o método aplica-se sem alterações a modelos de linguagem muito grandes.",
        "Um estudo de ablação mostra quais componentes do modelo são decisivos para o seu sucesso.",
    ),
    "zh": (
        "我们提出了一种估计深度神经网络不确定性的新方法。",
        "现有方法需要大量标注数据，因此成本很高。",
        "我们的方法基于对损失函数的简单分解，易于实现。",
        "我们从理论上证明，在温和的假设下该算法收敛到驻点。",
        "在图像和文本数据上的大量实验表明，我们的方法优于最强的基线方法。",
        "此外，我们研究了模型规模对抗扰动鲁棒性的影响。",
        "结果表明，在相同的计算预算下，较小的模型往往具有更好的泛化能力。",
        "源代码和所有训练好的模型将在论文发表后公开。",
        "最后，我们分析了该方法的局限性，并讨论了未来可能的研究方向。",
        "强化学习中的一个核心问题是数据利用效率低。",
        "我们引入了一种新的正则化方法，显著提高了训练的稳定性。",
        "与以往工作不同，我们的方法完全不依赖人工设计的特征。",
        "此外，该方法无需修改即可应用于超大规模语言模型。",
        "消融实验表明了模型中哪些组成部分对其成功至关重要。",
    ),
}
FOREIGN_LANGS = ("de", "fr", "es", "it", "pt", "zh")
# Non-English records of one language are kept below this similarity to each other, so that
# they never form (near-)duplicates that the ground truth does not list.
FOREIGN_MAX_JACCARD = 0.6

# Short, but abstracts: placeholders such as "Abstract not available" have their own code
# (`placeholder`, an error) and would stop a warnings-only build.
TOO_SHORT = (
    "Preliminary results on sparse attention (paper {n}).",
    "A short note on graph pooling, submission {n}.",
    "Extended abstract: faster kernel regression, entry {n}.",
    "Position statement on benchmark design {n}.",
)


# --- own shingling (deliberately not curate's) ---------------------------------------------------
def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def shingle_set(text: str, k: int = 3) -> set[tuple[str, ...]]:
    w = words_of(text)
    if len(w) < k:
        return {tuple(w)} if w else set()
    return {tuple(w[i : i + k]) for i in range(len(w) - k + 1)}


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def norm_key(text: str) -> str:
    return " ".join(words_of(text))


# --- inputs ---------------------------------------------------------------------------------------
def _clean_chars(s: str) -> bool:
    if any(c in MARKUP_CHARS for c in s):
        return False
    if unicodedata.normalize("NFKC", s) != s:
        return False
    return all(unicodedata.category(c)[0] != "C" for c in s)


def seed_sentences(seed_dir: Path = SEEDS) -> list[str]:
    """Markup-free sentences of the seed abstracts, in file order, without repeats."""
    out: list[str] = []
    seen: set[str] = set()
    for path in sorted(seed_dir.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").split("\n")[1:]
        blocks: list[list[str]] = [[]]
        for line in lines:
            if line.strip():
                blocks[-1].append(line.strip())
            elif blocks[-1]:
                blocks.append([])
        for block in blocks:
            for sent in _SENT_SPLIT.split(" ".join(block)):
                sent = " ".join(sent.split())
                n = len(sent.split())
                if (
                    6 <= n <= 60
                    and sent.endswith((".", "!", "?"))
                    and sent[0].isupper()
                    and _clean_chars(sent)
                    and sent.count("(") == sent.count(")")
                    and sent not in seen
                ):
                    seen.add(sent)
                    out.append(sent)
    return out


def titles(path: Path = METADATA) -> list[str]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            t = " ".join(json.loads(line)["title"].split()).rstrip(".?! ")
            if t and _clean_chars(t):
                out.append(t)
    return out


# --- layout ----------------------------------------------------------------------------------
def wrap(text: str, width: int = WRAP_WIDTH) -> list[str]:
    """Greedy hard wrap at single spaces; ``" ".join(result) == text`` always holds."""
    tokens = text.split(" ")
    lines: list[str] = []
    cur = tokens[0]
    for tok in tokens[1:]:
        if len(cur) + 1 + len(tok) <= width:
            cur += " " + tok
        else:
            lines.append(cur)
            cur = tok
    lines.append(cur)
    return lines


def line_starts(lines: list[str]) -> list[int]:
    """Offsets in ``" ".join(lines)`` where the 2nd, 3rd, ... line starts (as curate keeps them)."""
    starts, offset = [], 0
    for k, line in enumerate(lines):
        if k:
            offset += 1
            starts.append(offset)
        offset += len(line)
    return starts


@dataclass
class Rec:
    lines: list[str]
    faults: list[dict] = field(default_factory=list)  # each: code, offset|None, extra fields
    eligible: bool = False  # clean, and may be copied
    line: int = 0  # first line in the written file, set on layout

    @property
    def text(self) -> str:
        return " ".join(self.lines)

    def line_of(self, offset: int) -> int:
        return self.line + bisect.bisect_right(line_starts(self.lines), offset)


class Generator:
    def __init__(self, seed: int, rates: dict[str, float], wrap_rate: float) -> None:
        self.rng = random.Random(seed)
        self.rates = rates
        self.wrap_rate = wrap_rate
        self.sentences = seed_sentences()
        self.titles = titles()
        self.vocab = sorted(
            {w.lower() for s in self.sentences for w in s.split() if _PLAIN_WORD.match(w)}
        )
        self.keys: set[str] = set()
        self.foreign_sets: dict[str, list[set]] = {lang: [] for lang in FOREIGN_LANGS}
        self.counter = 0

    # -- text pieces --
    def base_text(self) -> str:
        rng = self.rng
        while True:
            title = rng.choice(self.titles)
            frame = rng.choice(TITLE_FRAMES)
            body = rng.sample(self.sentences, rng.randint(5, 9))
            text = " ".join([frame.format(t=title), *body])
            key = norm_key(text)
            if 20 <= len(text.split()) <= 400 and key not in self.keys:
                self.keys.add(key)
                return text

    def maybe_wrap(self, text: str) -> list[str]:
        if " " in text and "  " not in text and self.rng.random() < self.wrap_rate:
            return wrap(text)
        return [text]

    def insert_at_word(self, text: str, snippet: str, sentence: bool = False) -> tuple[str, int]:
        """Insert ``snippet`` before a random word (not the first or last); (text, offset).

        With ``sentence``, only before the first word of a sentence.
        """
        gap = r"(?<=[.!?]) " if sentence else " "
        positions = [m.start() + 1 for m in re.finditer(gap, text)]
        pos = self.rng.choice(positions[: max(1, len(positions) - 1)])
        return text[:pos] + snippet + " " + text[pos:], pos

    # -- record kinds --
    def clean(self, eligible: bool = True) -> Rec:
        return Rec(self.maybe_wrap(self.base_text()), eligible=eligible)

    def residue(self, kind: str) -> Rec:
        snippets = {"latex": LATEX_SNIPPETS, "markdown": MARKDOWN_SNIPPETS, "html": HTML_SNIPPETS}
        snippet = self.rng.choice(snippets[kind])
        text, pos = self.insert_at_word(self.base_text(), snippet)
        return Rec(self.maybe_wrap(text), [{"code": kind, "offset": pos, "snippet": snippet}])

    def exact_duplicate(self, src: Rec, src_loc: str) -> Rec:
        rng = self.rng
        text = src.text
        how = rng.choice(("spaces", "case", "markup", "wrap"))
        faults: list[dict] = [{"code": "duplicate", "offset": None, "related": src_loc}]
        if how == "spaces":
            parts = text.split(" ")
            out = parts[0]
            for p in parts[1:]:
                out += ("  " if rng.random() < 0.15 else " ") + p
            if "  " not in out:
                out = out.replace(" ", "  ", 1)
            lines = [out]
        elif how == "case":
            if rng.random() < 0.5:
                text = text.lower()
            else:
                tokens = text.split(" ")
                for i in rng.sample(range(len(tokens)), 3):
                    tokens[i] = tokens[i].upper()
                text = " ".join(tokens)
            lines = self.maybe_wrap(text)
        elif how == "markup":
            tokens = text.split(" ")
            idx = [i for i, t in enumerate(tokens[1:-1], 1) if _PLAIN_WORD.match(t)]
            i = rng.choice(idx)
            kind, template = rng.choice(DUP_MARKUP)
            offset = sum(len(t) + 1 for t in tokens[:i])
            tokens[i] = template.format(w=tokens[i])
            text = " ".join(tokens)
            faults.append({"code": kind, "offset": offset, "variation_of": "duplicate"})
            lines = self.maybe_wrap(text)
        else:  # a different hard wrap (or none) of the same words
            lines = [text] if len(src.lines) > 1 else wrap(text, rng.randint(50, 90))
        faults[0]["variation"] = how
        return Rec(lines, faults)

    def near_duplicate(self, src: Rec, src_loc: str) -> Rec:
        rng = self.rng
        target = rng.uniform(0.5, 1.0)
        base = shingle_set(src.text)
        tokens = src.text.split(" ")
        sim = 1.0
        edits = 0
        while True:
            plain = [i for i, t in enumerate(tokens[:-1]) if _PLAIN_WORD.match(t)]
            op = rng.choice(("replace", "insert", "delete"))
            i = rng.choice(plain)
            new = list(tokens)
            if op == "replace":
                new[i] = rng.choice(self.vocab)
            elif op == "insert":
                new.insert(i, rng.choice(self.vocab))
            elif len(plain) > 25:
                del new[i]
            else:
                continue
            new_sim = jaccard(base, shingle_set(" ".join(new)))
            if new_sim == 1.0 and norm_key(" ".join(new)) == norm_key(src.text):
                continue  # a no-op edit (same word back)
            if edits and new_sim < target:
                break  # stop at the last edit that kept the similarity at or above the target
            tokens, sim, edits = new, new_sim, edits + 1
            if sim < target:
                break
        text = " ".join(tokens)
        key = norm_key(text)
        if key in self.keys or sim >= 1.0:
            return self.near_duplicate(src, src_loc)
        self.keys.add(key)
        return Rec(
            self.maybe_wrap(text),
            [
                {
                    "code": "near-duplicate",
                    "offset": None,
                    "related": src_loc,
                    "similarity": round(sim, 6),
                    "target": round(target, 6),
                }
            ],
        )

    def foreign(self) -> Rec:
        rng = self.rng
        lang = rng.choice(FOREIGN_LANGS)
        pool = FOREIGN[lang]
        joiner = "" if lang == "zh" else " "
        for _attempt in range(500):
            text = joiner.join(rng.sample(pool, rng.randint(4, 7)))
            sh = shingle_set(text)
            if norm_key(text) in self.keys:
                continue
            if all(jaccard(sh, other) < FOREIGN_MAX_JACCARD for other in self.foreign_sets[lang]):
                break
        else:
            raise RuntimeError(f"cannot make another distinct {lang} record; lower the rate")
        self.keys.add(norm_key(text))
        self.foreign_sets[lang].append(sh)
        lines = [text] if lang == "zh" else self.maybe_wrap(text)
        return Rec(lines, [{"code": "language", "offset": None, "language": lang}])

    def truncated(self) -> Rec:
        rng = self.rng
        while True:
            tokens = self.base_text().split(" ")
            # cut inside the last sentences, after a plain word, keeping >= 25 words
            cuts = [i for i in range(25, len(tokens) - 1) if _PLAIN_WORD.match(tokens[i])]
            if cuts:
                break
        cut = rng.choice(cuts[len(cuts) // 2 :])
        text = " ".join(tokens[: cut + 1])
        self.keys.add(norm_key(text))
        return Rec(self.maybe_wrap(text), [{"code": "truncated", "offset": len(text) - 1}])

    def mojibake(self) -> Rec:
        sentence, word = self.rng.choice(MOJIBAKE_SENTENCES)
        bad = word.encode("utf-8").decode("cp1252", errors="strict")
        first_diff = next(i for i, (a, b) in enumerate(zip(word, bad, strict=False)) if a != b)
        mangled = sentence.format(w=bad)
        text, pos = self.insert_at_word(self.base_text(), mangled, sentence=True)
        offset = pos + mangled.index(bad) + first_diff
        return Rec(self.maybe_wrap(text), [{"code": "mojibake", "offset": offset, "word": word}])

    def control_char(self) -> Rec:
        text = self.base_text()
        spots = [m.start() + 2 for m in re.finditer(r"\b[A-Za-z]{5,}\b", text)][1:-1]
        pos = self.rng.choice(spots)
        text = text[:pos] + ZWSP + text[pos:]
        return Rec(self.maybe_wrap(text), [{"code": "control-char", "offset": pos}])

    def too_short(self) -> Rec:
        self.counter += 1
        text = self.rng.choice(TOO_SHORT).format(n=self.counter)
        return Rec([text], [{"code": "too-short", "offset": None}])

    def too_long(self) -> Rec:
        lines: list[str] = []
        parts = 0
        while parts < 2 or len(" ".join(lines).split()) <= 400:
            lines += self.maybe_wrap(self.base_text())
            parts += 1
        return Rec(lines, [{"code": "too-long", "offset": None, "parts": parts}])


def _file_sizes(rng: random.Random, n: int) -> list[int]:
    sizes = []
    left = n
    while left > 0:
        s = rng.randint(100, 2000)
        if left - s < 100:
            s = left if left <= 2000 else left - 100
        sizes.append(s)
        left -= s
    return sizes


def generate(
    out_dir: str | Path,
    n_records: int,
    seed: int = 0,
    rates: dict[str, float] | None = None,
    *,
    file_faults: dict[str, int] | None = None,
    wrap_rate: float = 0.1,
    force: bool = False,
) -> Path:
    """Write the corpus to ``out_dir``; returns the path of ``ground_truth.jsonl``."""
    out = Path(out_dir)
    rates = {**DEFAULT_RATES, **(rates or {})}
    file_faults = {**DEFAULT_FILE_FAULTS, **(file_faults or {})}
    unknown = (set(rates) - set(DEFAULT_RATES)) | (set(file_faults) - set(DEFAULT_FILE_FAULTS))
    if unknown:
        raise ValueError(f"unknown fault codes: {sorted(unknown)}")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise FileExistsError(f"{out} is not empty (use force=True / --force)")
        for p in [*out.glob("*.txt"), out / "ground_truth.jsonl", out / "meta.json"]:
            p.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)

    g = Generator(seed, rates, wrap_rate)
    rng = g.rng

    # Files with a file-level fault: small and isolated; only as many as the records allow.
    iso_codes = [
        code
        for code in sorted(file_faults)
        if code != "empty-file"
        for _ in range(file_faults[code])
    ]
    budget = max(0, (n_records - ISOLATED_FILE_RECORDS) // ISOLATED_FILE_RECORDS)
    iso_codes = iso_codes[:budget]
    normal = n_records - ISOLATED_FILE_RECORDS * len(iso_codes)
    plan: list[tuple[str | None, int]] = [(None, s) for s in _file_sizes(rng, normal)]
    plan += [(code, ISOLATED_FILE_RECORDS) for code in iso_codes]
    plan += [("empty-file", 0)] * file_faults["empty-file"]
    rng.shuffle(plan)

    # Record kinds for the slots of normal files, at exact counts.
    counts = {code: round(rates[code] * n_records) for code in RECORD_CODES}
    if sum(counts.values()) > normal:
        raise ValueError("fault rates add up to more than the records available")
    kinds = [code for code in RECORD_CODES for _ in range(counts[code])]
    kinds += ["clean"] * (normal - len(kinds))
    rng.shuffle(kinds)

    sources: list[tuple[Rec, str]] = []  # clean records not yet copied
    pending: list[str] = []
    ground: list[dict] = []
    files_meta = []
    slot = 0
    for index, (fault, size) in enumerate(plan):
        name = f"{index:04d}_{rng.getrandbits(32):08x}.txt"
        header = HEADER_EN if rng.random() < 0.5 else HEADER_ZH
        rel = name
        # Layout: header, blank, records separated by blank lines.
        lines: list[str] = {
            "header-missing": [],
            "header-language": ["ICML 2025 論文一覧", ""],
            "header-mismatch": ["ICML 2024 Papers", ""],
            "schema": ["ICML 1066 Papers", ""],
        }.get(fault or "", [header, ""])
        recs: list[Rec] = []
        for _ in range(size):
            if fault is None:
                kind = kinds[slot]
                slot += 1
                if kind in ("duplicate", "near-duplicate") and not sources:
                    pending.append(kind)
                    kind = "clean"
                elif kind == "clean" and pending and sources:
                    kind = pending.pop(0)
                rec = _make(g, kind, sources)
            else:
                rec = g.clean(eligible=False)
                if fault == "header-missing" and not recs:
                    rec.lines = [rec.text]  # an unwrapped abstract on line 1
            if recs:
                lines.append("")
            rec.line = len(lines) + 1
            lines += rec.lines
            recs.append(rec)
            loc = f"{rel}:{rec.line}"
            if rec.eligible:
                sources.append((rec, loc))
            for f in rec.faults:
                entry = {k: v for k, v in f.items() if k != "offset"}
                line = rec.line if f["offset"] is None else rec.line_of(f["offset"])
                ground.append({**entry, "file": rel, "line": line, "record_line": rec.line})

        body = "\n".join(lines) + "\n"
        if fault == "bom":
            body = "\ufeff" + body
            ground.append({"code": "bom", "file": rel, "line": 1, "record_line": 1})
        elif fault == "line-endings":
            body = body.replace("\n", "\r\n")
            ground.append({"code": "line-endings", "file": rel, "line": 1, "record_line": 1})
        elif fault in ("header-missing", "header-language", "header-mismatch"):
            ground.append({"code": fault, "file": rel, "line": 1, "record_line": 1})
        elif fault == "schema":
            first = recs[0].line
            ground.append({"code": "schema", "file": rel, "line": first, "record_line": first})
            ground.append({"code": "header-mismatch", "file": rel, "line": 1, "record_line": 1})
        elif fault == "empty-file":
            # Alternate a zero-byte file and a header alone.
            n_empty = sum(1 for f in files_meta if f["fault"] == "empty-file")
            body = "" if n_empty % 2 == 0 else header + "\n"
            ground.append({"code": "empty-file", "file": rel, "line": 1, "record_line": 1})
        elif fault == "encoding":
            rec = rng.choice(recs[1:])
            at = rng.randrange(len(rec.lines))
            lno = rec.line + at
            line_text = lines[lno - 1]
            cut = line_text.index(" ") + 1
            lines[lno - 1] = line_text[:cut] + "\udcff" + line_text[cut:]  # byte 0xFF
            body = "\n".join(lines) + "\n"
            ground.append({"code": "encoding", "file": rel, "line": lno, "record_line": rec.line})
        (out / name).write_bytes(body.encode("utf-8", errors="surrogateescape"))
        files_meta.append(
            {"file": rel, "records": len(recs), "fault": fault, "lines": body.count("\n")}
        )

    ground.sort(key=lambda e: (e["file"], e["line"], e["code"]))
    gt_path = out / "ground_truth.jsonl"
    with gt_path.open("w", encoding="utf-8", newline="\n") as fh:
        for entry in ground:
            fh.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
    per_code: dict[str, int] = {}
    for entry in ground:
        per_code[entry["code"]] = per_code.get(entry["code"], 0) + 1
    near = [e for e in ground if e["code"] == "near-duplicate"]
    meta = {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "records": sum(f["records"] for f in files_meta),
        "files": len(files_meta),
        "rates": rates,
        "file_faults": file_faults,
        "wrap_rate": wrap_rate,
        "ground_truth_counts": dict(sorted(per_code.items())),
        "near_duplicates_at_or_above_0.8": sum(e["similarity"] >= 0.8 for e in near),
        "dropped_pending_copies": len(pending),
        "seed_sentences": len(g.sentences),
        "titles": len(g.titles),
        "file_list": files_meta,
    }
    (out / "meta.json").write_text(
        json.dumps(meta, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return gt_path


def _make(g: Generator, kind: str, sources: list[tuple[Rec, str]]) -> Rec:
    if kind == "clean":
        return g.clean()
    if kind in ("duplicate", "near-duplicate"):
        i = g.rng.randrange(len(sources))
        sources[i], sources[-1] = sources[-1], sources[i]
        src, loc = sources.pop()
        return g.exact_duplicate(src, loc) if kind == "duplicate" else g.near_duplicate(src, loc)
    if kind in ("latex", "markdown", "html"):
        return g.residue(kind)
    return {
        "language": g.foreign,
        "truncated": g.truncated,
        "mojibake": g.mojibake,
        "control-char": g.control_char,
        "too-short": g.too_short,
        "too-long": g.too_long,
    }[kind]()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="output folder")
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--rate",
        action="append",
        default=[],
        metavar="CODE=X",
        help="override a record fault rate, e.g. --rate duplicate=0.05 (repeatable)",
    )
    p.add_argument(
        "--files",
        action="append",
        default=[],
        metavar="CODE=N",
        help="number of files with a file-level fault, e.g. --files bom=3 (repeatable)",
    )
    p.add_argument(
        "--preset",
        choices=("default", "warnings-only"),
        default="default",
        help="warnings-only: no error-level faults (for curate build)",
    )
    p.add_argument("--wrap-rate", type=float, default=0.1)
    p.add_argument("--force", action="store_true", help="replace a previous corpus in OUT")
    args = p.parse_args(argv)
    rates = dict(WARNINGS_ONLY_RATES if args.preset == "warnings-only" else DEFAULT_RATES)
    files = dict(
        WARNINGS_ONLY_FILE_FAULTS if args.preset == "warnings-only" else DEFAULT_FILE_FAULTS
    )
    for item in args.rate:
        code, _, value = item.partition("=")
        rates[code] = float(value)
    for item in args.files:
        code, _, value = item.partition("=")
        files[code] = int(value)
    gt = generate(
        args.out,
        args.records,
        args.seed,
        rates,
        file_faults=files,
        wrap_rate=args.wrap_rate,
        force=args.force,
    )
    meta = json.loads((gt.parent / "meta.json").read_text(encoding="utf-8"))
    print(f"wrote {meta['records']} records in {meta['files']} files to {gt.parent}")
    for code, n in meta["ground_truth_counts"].items():
        print(f"  {code:<16} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
