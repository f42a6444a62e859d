"""``curate report``: one self-contained HTML page that shows a build to the person releasing it.

The page is read offline and as an artifact: no script, no font and no image is fetched (a
Content-Security-Policy forbids it); the charts are SVG written here, inline. It is
written into every build as ``report.html`` but is not part of the release: the manifest does not
list it and ``curate publish`` does not upload it. Like every output, it is deterministic: the
same build gives the same bytes (fixed SVG ids, no dates, no local paths).
"""

from __future__ import annotations

import difflib
import hashlib
import html
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from jinja2 import Environment, Template
from markupsafe import Markup

from curate.dataset.manifest import POSITIONS, REPORT_HTML
from curate.io import sha256_file
from curate.report.charts import COLOURS, bar_chart, length_chart
from validation import normalize
from validation.corpus import record_at
from validation.measures import percentile

# Where a record is: its file's name, its line, and its row (a table's row, an array element's
# number; None where the source has none), which tells apart the records that start on one line
# (a JSON array written on one line).
Place = tuple[str, int, int | None]

GENERATOR = '<meta name="generator" content="curate report">'
# How many rows the page shows at most, so a million-record build still gives a page a browser
# opens: every count is exact, only the examples are sampled.
CLEANED_SAMPLE = 20
CLUSTER_LIMIT = 200
FINDINGS_PER_CODE = 10
DROPPED_LIMIT = 500  # rows the build left out, listed with their text
FLAGGED_LIMIT = 500  # rows kept with a flag, listed with their text


class ReportError(Exception):
    """The folder is not a build this page can describe (no manifest, no table)."""


@dataclass
class Member:
    where: str  # file:line, and the source's own id
    match: str  # original, exact or near
    similarity: float | None
    text: str | Markup | None  # the record as found (its differences marked), if at hand


# What one diff may cost is bounded, so that the page's cost grows with the records it shows and
# not with the square of their length. Aligning words costs the pairs of equal words the two
# texts hold (each word's count in one times its count in the other): above DIFF_PAIRS, only the
# words the texts begin and end with in common are matched, and the words between are aligned
# only if they are within the bound. A gap of more than GAP_TOKENS tokens between matched words
# is marked as one replacement.
DIFF_PAIRS = 250_000
GAP_TOKENS = 400
_TOKEN = re.compile(r"\S+|\s+")


def _diff(raw: str, clean: str) -> tuple[Markup, Markup]:
    """Raw and clean text with what the cleaner removed and added marked, word by word.

    The texts are aligned on their words alone; the whitespace runs between them are compared
    after, within the gaps the words leave. Aligning the whitespace runs as tokens of their own
    made every run a candidate match for every other, which cost the product of the two
    lengths; the marks are those of that alignment."""
    a, b = _tokens(raw), _tokens(clean)
    # Words and whitespace runs alternate, so the words are every other token from the first
    # that is not whitespace.
    a_at = range(1 if a and a[0].isspace() else 0, len(a), 2)
    b_at = range(1 if b and b[0].isspace() else 0, len(b), 2)
    aw, bw = a[a_at.start :: 2], b[b_at.start :: 2]
    left: list[str] = []
    right: list[str] = []
    blocks = _word_blocks(aw, bw)
    # Where the whitespace inside a run of matched words differs, a match of tokens would have
    # ended: the runs of tokens at each end of a run of words, which decide whose the
    # whitespace around a gap is.
    splits = [
        [k for k in range(1, n) if a[a_at[i + k] - 1] != b[b_at[j + k] - 1]] for i, j, n in blocks
    ]
    done_a = done_b = 0  # tokens written so far
    before = 0  # the run of tokens that ends before the gap
    for (i, j, n), split in zip([*blocks, (len(aw), len(bw), 0)], [*splits, []], strict=True):
        end_a, end_b = (a_at[i], b_at[j]) if n else (len(a), len(b))
        _gap(a[done_a:end_a], b[done_b:end_b], before, split[0] if split else n, left, right)
        first = 0  # matched words, in runs between the whitespace that differs
        for k in [*split, n] if n else []:
            same = html.escape("".join(a[a_at[i + first] : a_at[i + k - 1] + 1]))
            left.append(same)
            right.append(same)
            if k < n:
                _marked([a[a_at[i + k] - 1]], [b[b_at[j + k] - 1]], left, right)
            first = k
        if n:
            done_a, done_b = a_at[i + n - 1] + 1, b_at[j + n - 1] + 1
            before = n - split[-1] if split else n
    return Markup("".join(left)), Markup("".join(right))


def _tokens(text: str) -> list[str]:
    """``_TOKEN.findall(text)``: the words and the whitespace runs between them. A text that is
    one line of single spaces (most abstracts) is its words with a space between each two,
    made by ``str.split`` several times faster than the regex."""
    if not text or not normalize.is_collapsed(text):
        return _TOKEN.findall(text)
    words = text.split(" ")
    tokens = [" "] * (2 * len(words) - 1)
    tokens[::2] = words
    return tokens


def _word_blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """The matched runs of words, (start in a, start in b, length), in order."""
    if a == b:  # what the matcher finds, without its search: about a third of the page's diffs
        return [(0, 0, len(a))] if a else []
    if _pairs(a, b) <= DIFF_PAIRS:
        return [m for m in difflib.SequenceMatcher(None, a, b, False).get_matching_blocks() if m[2]]
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    middle = _word_blocks(a_mid, b_mid) if _pairs(a_mid, b_mid) <= DIFF_PAIRS else []
    blocks = [(head + i, head + j, n) for i, j, n in middle]
    if head:
        blocks.insert(0, (0, 0, head))
    if tail:
        blocks.append((len(a) - tail, len(b) - tail, tail))
    return blocks


def _pairs(a: list[str], b: list[str]) -> int:
    """The pairs of equal words of ``a`` and ``b``: what aligning them costs."""
    counts = Counter(b)
    return sum(counts[w] for w in a)


def _gap(
    a: list[str], b: list[str], before: int, after: int, left: list[str], right: list[str]
) -> None:
    """The tokens between two runs of matched words (``before`` and ``after`` words long),
    aligned as tokens: the words that differ and the whitespace around them. Whitespace the
    same on both sides next to a run goes with it, the longer run first, as a match of tokens
    (the longest first) would have taken it."""
    ends: list[tuple[list[str], list[str]]] = []
    head = tail = 0
    for side in ("head", "tail") if before >= after else ("tail", "head"):
        if side == "head" and before and len(a) > tail and len(b) > tail and a[0] == b[0]:
            head = 1
        if side == "tail" and after and len(a) > head and len(b) > head and a[-1] == b[-1]:
            tail = 1
    _marked(a[:head], b[:head], left, right)
    ends.append((a[len(a) - tail :], b[len(b) - tail :]))
    a, b = a[head : len(a) - tail], b[head : len(b) - tail]
    # One side empty or both the same: the matcher's one opcode, or none for two empty sides.
    if len(a) > GAP_TOKENS or len(b) > GAP_TOKENS or not a or not b or a == b:
        _marked(a, b, left, right)
    else:
        for _, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, False).get_opcodes():
            _marked(a[i1:i2], b[j1:j2], left, right)
    _marked(*ends[0], left, right)


def _marked(a: list[str], b: list[str], left: list[str], right: list[str]) -> None:
    """Tokens that are the same on both sides written plain; else removed and added marked."""
    old, new = html.escape("".join(a)), html.escape("".join(b))
    if a == b:
        left.append(old)
        right.append(new)
        return
    if old:
        left.append(f"<del>{old}</del>")
    if new:
        right.append(f"<ins>{new}</ins>")


def _source_texts(
    manifest: dict[str, Any], folders: Iterable[str | Path]
) -> dict[str, tuple[Path, str]]:
    """The drops of this build found in ``folders`` (as any command finds sources), by name,
    with their format; only files whose SHA-256 is the one the manifest recorded, so a changed
    drop never lends its text to the page."""
    from curate.errors import UsageError
    from curate.ingest.discover import discover

    wanted = {s["name"]: s["sha256"] for s in manifest.get("sources", [])}
    found: dict[str, tuple[Path, str]] = {}
    for folder in folders:
        try:
            sources = discover([folder])
        except UsageError as exc:
            raise ReportError(f"--sources: {exc}") from None
        for source in sources:
            name = source.name
            if source.problem or name not in wanted or name in found:
                continue
            try:
                if sha256_file(source.path) == wanted[name]:
                    found[name] = (source.path, source.format)
            except OSError:
                continue
    return found


def _record_texts(paths: dict[str, tuple[Path, str]], wanted: set[Place]) -> dict[Place, str]:
    from curate.ingest import formats
    from validation.config import Config

    out: dict[Place, str] = {}
    by_file: dict[str, set[Place]] = {}
    for place in wanted:
        by_file.setdefault(place[0], set()).add(place)
    for name, places in sorted(by_file.items()):
        if name not in paths:
            continue
        path, fmt = paths[name]
        records = formats.get(fmt).read(path, Config()).records
        lines = np.array([r.line for r in records], np.int64)
        rows = np.array([r.row or 0 for r in records], np.int64)
        for place in places:
            at = record_at(lines, rows, place[1], place[2])
            if at is not None:
                out[place] = records[at].text
    return out


def _text_columns(manifest: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The table's text columns, ``(the page's name for it, the table's)``: the build's
    ``text_column`` and its raw twin (``abstract`` unless the settings name another)."""
    settings = manifest.get("settings")
    name = settings.get("text_column", "abstract") if isinstance(settings, dict) else "abstract"
    return (("abstract", str(name)), ("abstract_raw", f"{name}_raw"))


def _noun(manifest: dict[str, Any]) -> tuple[str, str]:
    """What the build calls a record, singular and plural (``noun``)."""
    settings = manifest.get("settings")
    noun = settings.get("noun") if isinstance(settings, dict) else None
    return (str(noun[0]), str(noun[1])) if isinstance(noun, list) and len(noun) == 2 else (
        "abstract", "abstracts"
    )  # fmt: skip


def _rows(
    files: list[pq.ParquetFile], indexes: set[int], text: tuple[tuple[str, str], ...]
) -> dict[int, dict[str, Any]]:
    """The rows at ``indexes`` (global row numbers), reading only the row groups holding them:
    the page shows a few dozen rows, and the text columns of all the others are most of the
    table."""
    out: dict[int, dict[str, Any]] = {}
    row = 0
    for pf in files:
        for group in range(pf.metadata.num_row_groups):
            n = pf.metadata.row_group(group).num_rows
            local = sorted(i - row for i in indexes if row <= i < row + n)
            if local:
                items: list[dict[str, Any]] = [{} for _ in local]
                for key, column in (("id", "id"), *text):  # one text column at a time
                    values = pf.read_row_group(group, columns=[column]).column(0).take(local)
                    for item, value in zip(items, values.to_pylist(), strict=True):
                        item[key] = value
                    del values
                    # Arrow's allocator keeps what a row group's texts took and a later one
                    # does not reuse all of it: given back (a 300,000-row build's peak: -300 MB).
                    pa.default_memory_pool().release_unused()
                for k, item in zip(local, items, strict=True):
                    out[row + k] = item
            row += n
    return out


# {place, ...} -> {place: raw text}: the texts of merged duplicates and dropped records
RecordTexts = Callable[[set[Place]], dict[Place, str]]


@dataclass
class _Build:
    """A build folder as the page reads it."""

    manifest: dict[str, Any]
    files: list[pq.ParquetFile]
    findings: list[dict[str, Any]]
    summary: dict[str, Any]
    changelog: str | None  # the newest section: what changed since the previous release
    measures: dict[str, Any]  # what the threshold checks measured, beside their thresholds
    dropped: list[dict[str, Any]]  # the records the build left out: id, file, line, reasons
    kept_macros: list[dict[str, Any]]  # the macros of the TeX kept as it is: macro, rows


@dataclass
class _Scan:
    """What one pass over the table's rows keeps: counts, indexes and clusters, no texts."""

    word_counts: list[int]
    languages: Counter[str]
    clusters: list[tuple[int, list[dict[str, Any]], str]]  # (row, its sources, id): several
    changed: list[int]  # rows whose abstract differs from its raw text, if asked for
    rows: int
    # (row, flags, its first source, id) of the first rows kept with a flag
    flagged: list[tuple[int, list[str], list[dict[str, Any]], str]] = field(default_factory=list)
    flagged_total: int = 0


def _read_build(folder: Path) -> _Build:
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise ReportError(f"{folder} has no manifest.json: it is not a `curate build` folder")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        parquet = sorted(folder.glob("data/*.parquet"))
        if not parquet:
            raise ReportError(f"{folder}/data holds no Parquet file")
        files = [pq.ParquetFile(p) for p in parquet]
    except (ValueError, OSError) as exc:
        raise ReportError(f"{folder}: cannot read the build ({exc})") from None
    report_path = folder / "validation-report.json"
    findings: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    measures: dict[str, Any] = {}
    dropped: list[dict[str, Any]] = []
    kept_macros: list[dict[str, Any]] = []
    if report_path.is_file():
        data = json.loads(report_path.read_text(encoding="utf-8"))
        findings, summary = data.get("findings", []), data.get("summary", {})
        measures, dropped = data.get("measures", {}), data.get("dropped", [])
        kept_macros = data.get("kept_macros", [])
    changelog_path = folder / "CHANGELOG.md"
    changelog = None
    if changelog_path.is_file():
        text = changelog_path.read_text(encoding="utf-8")
        sections = re.split(r"(?m)^(?=## )", text)
        newest = next((s for s in sections if s.startswith("## ")), text)
        changelog = newest.strip()
    return _Build(manifest, files, findings, summary, changelog, measures, dropped, kept_macros)


def _scan_rows(
    files: list[pq.ParquetFile], find_changed: bool, text: tuple[tuple[str, str], ...]
) -> _Scan:
    """One pass in batches keeps memory flat; the texts of the few rows shown are read in a
    second pass."""
    out = _Scan([], Counter(), [], [], 0)
    columns = ["id", "language", "word_count", "sources", "flags"]
    (_, clean_name), (_, raw_name) = text
    if find_changed:
        columns += [clean_name, raw_name]
    row = 0
    for pf in files:
        for batch in pf.iter_batches(batch_size=20_000, columns=columns):
            out.word_counts += batch.column("word_count").to_pylist()
            out.languages.update(
                lang or "not checked" for lang in batch.column("language").to_pylist()
            )
            if find_changed:
                raw, clean = batch.column(raw_name), batch.column(clean_name)
                differs = pc.not_equal(raw, clean).to_pylist()
                out.changed += [row + k for k, d in enumerate(differs) if d]
            flags = batch.column("flags")
            with_flags = np.flatnonzero(pc.list_value_length(flags).to_numpy(zero_copy_only=False))
            out.flagged_total += len(with_flags)
            room = FLAGGED_LIMIT - len(out.flagged)
            if room > 0 and len(with_flags):
                take = with_flags[:room].tolist()
                firsts = batch.column("sources").take(take).to_pylist()
                ids = batch.column("id").take(take).to_pylist()
                out.flagged += [
                    (row + k, f, src[:1], i)
                    for k, f, src, i in zip(
                        take, flags.take(take).to_pylist(), firsts, ids, strict=True
                    )
                ]
            n_sources = pc.list_value_length(batch.column("sources")).to_pylist()
            multi = [k for k, n in enumerate(n_sources) if n > 1]
            if multi:
                occ = batch.column("sources").take(multi).to_pylist()
                ids = batch.column("id").take(multi).to_pylist()
                out.clusters += [(row + k, o, i) for k, o, i in zip(multi, occ, ids, strict=True)]
            row += batch.num_rows
    out.rows = row
    out.clusters.sort(key=lambda c: (-len(c[1]), c[1][0]["file"], c[2]))
    return out


def _placed(folder: Path, scan: _Scan) -> None:
    """The line of each occurrence the page shows, from the positions the build wrote beside
    the table (the table names files, not places); without them, an occurrence is its file
    and the id its source gives it."""
    wanted = {c[2] for c in scan.clusters[:CLUSTER_LIMIT]} | {f[3] for f in scan.flagged}
    places: dict[str, list[dict[str, Any]]] = {}
    path = folder / POSITIONS
    if wanted and path.is_file():
        table = pq.read_table(path)
        table = table.filter(pc.is_in(table.column("id"), pa.array(sorted(wanted))))
        places = dict(zip(table.column("id").to_pylist(), table.column("sources").to_pylist(),
                          strict=True))  # fmt: skip

    def at(sources: list[dict[str, Any]], rid: str) -> list[dict[str, Any]]:
        found = places.get(rid) or []
        if len(found) != len(sources):
            return [{**s, "line": None} for s in sources]
        return [{**s, "line": p["line"], "row": p.get("row")}
                for s, p in zip(sources, found, strict=True)]  # fmt: skip

    scan.clusters = [(r, at(occ, rid), rid) for r, occ, rid in scan.clusters]
    scan.flagged = [(r, f, at(src, rid), rid) for r, f, src, rid in scan.flagged]


def place_of(where: dict[str, Any]) -> Place:
    """An occurrence's or a dropped record's place, as :data:`RecordTexts` is asked for it."""
    row = where.get("row")
    return (where["file"], int(where["line"]), int(row) if row is not None else None)


def _texts_wanted(
    clusters: list[tuple[int, list[dict[str, Any]], str]], dropped: list[dict[str, Any]]
) -> set[Place]:
    """The places of the records whose text the page shows and the table has not: the merged
    copies of the clusters shown (where their lines are known) and the dropped rows."""
    merged = {place_of(s) for _, occ, _ in clusters for s in occ[1:] if s["line"]}
    return merged | {place_of(d) for d in dropped}


def _where(source: dict[str, Any]) -> str:
    """``file:line`` (the file alone when the line is not known), and the id the source
    gives the record, which names it better than a line that moves when the file is sorted."""
    where = source["file"] + (f":{source['line']}" if source.get("line") is not None else "")
    own = source.get("source_id")
    return f"{where} (id {own})" if own else where


def _clusters(
    shown: list[tuple[int, list[dict[str, Any]], str]],
    rows: dict[int, dict[str, Any]],
    texts: dict[Place, str],
) -> list[dict[str, Any]]:
    clusters = []
    for i, occurrences, _ in shown:
        kept = rows[i]["abstract_raw"]
        members = []
        for k, s in enumerate(occurrences):
            where = _where(s)
            text = kept if k == 0 else (texts.get(place_of(s)) if s["line"] else None)
            # A merged copy shows where it differs from the kept text (<ins>: its own words).
            shown_text = text if k == 0 or text is None else _diff(kept, text)[1]
            members.append(Member(where, s["match"], s["similarity"], shown_text))
        clusters.append({"id": rows[i]["id"], "members": members})
    return clusters


def _charts(
    word_counts: list[int],
    languages: Counter[str],
    by_code: dict[str, dict[str, Any]],
    noun: tuple[str, str] = ("abstract", "abstracts"),
) -> dict[str, Markup | None]:
    code_labels = list(by_code)
    by_count = sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "lengths": length_chart(word_counts, noun),
        "languages": bar_chart(
            "languages",
            "Languages",
            "language",
            [k for k, _ in by_count],
            [v for _, v in by_count],
            [COLOURS["languages"]] * len(by_count),
            noun[1],
        ),
        "findings": (
            bar_chart(
                "findings",
                "Findings by code",
                "code",
                code_labels,
                [int(by_code[c]["count"]) for c in code_labels],
                [COLOURS[by_code[c]["severity"]] for c in code_labels],
                "findings",
                [str(by_code[c]["severity"]) for c in code_labels],
            )
            if code_labels
            else None
        ),
    }


def _left_out(
    build: _Build,
    scan: _Scan,
    dropped: list[dict[str, Any]],
    rows: dict[int, dict[str, Any]],
    texts: dict[Place, str],
) -> dict[str, Any]:
    """The rows the build dropped and those it flagged, with their texts, and the macros of
    the TeX it kept."""
    return {
        "kept_macros": build.kept_macros,
        "dropped": [{**d, "text": texts.get(place_of(d))} for d in dropped],
        "dropped_total": len(build.dropped),
        "flagged": [
            {
                "id": rows[i]["id"],
                "flags": f,
                "where": _where(src[0]),
                "text": rows[i]["abstract_raw"],
            }
            for i, f, src, _ in scan.flagged
        ],
        "flagged_total": scan.flagged_total,
    }


def _markdown(text: str) -> Markup:
    """The changelog's Markdown as HTML (CommonMark; any HTML in it is shown as text)."""
    from markdown_it import MarkdownIt

    return Markup(MarkdownIt("commonmark", {"html": False}).enable("strikethrough").render(text))


def _findings_view(
    findings: list[dict[str, Any]], by_code: dict[str, dict[str, Any]]
) -> tuple[dict[str, Counter[str]], dict[str, list[dict[str, Any]]]]:
    """Findings per file and severity, and the first few of each code."""
    by_file: dict[str, Counter[str]] = {}
    first: dict[str, list[dict[str, Any]]] = {code: [] for code in by_code}
    for f in findings:
        by_file.setdefault(f["file"], Counter())[f["severity"]] += 1
        if len(first.setdefault(f["code"], [])) < FINDINGS_PER_CODE:
            first[f["code"]].append(f)
    return by_file, first


def _wanted_texts(
    wanted: set[Place],
    record_texts: RecordTexts | None,
    manifest: dict[str, Any],
    sources: Iterable[str | Path],
) -> dict[Place, str]:
    """The texts of the records at ``wanted``: from the build, else the drops."""
    if not wanted:
        return {}
    if record_texts is not None:
        return record_texts(wanted)
    return _record_texts(_source_texts(manifest, sources), wanted)


def collect(
    folder: str | Path,
    sources: Iterable[str | Path] = (),
    record_texts: RecordTexts | None = None,
    changed: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Everything the page shows, read from the build folder (and the drops, for the text of
    merged duplicates, which the table does not keep: found in ``sources`` by name and hash,
    or given by ``record_texts``, as a build that still holds them does).

    ``changed``: the row numbers whose abstract differs from its raw text, if the caller knows
    them (a build counts them as it writes the table); else both text columns of every row
    are read to find them, the largest part of this function's memory (500 MB at 300,000
    rows)."""
    folder = Path(folder)
    build = _read_build(folder)
    manifest, summary = build.manifest, build.summary
    text = _text_columns(build.manifest)
    scan = _scan_rows(build.files, changed is None, text)
    _placed(folder, scan)
    clusters_shown = scan.clusters[:CLUSTER_LIMIT]
    if changed is None:
        changed = scan.changed
    step = max(1, len(changed) // CLEANED_SAMPLE)
    sampled = [int(i) for i in changed[::step][:CLEANED_SAMPLE]]
    flagged_rows = {i for i, _, _, _ in scan.flagged}
    rows = _rows(build.files, {i for i, _, _ in clusters_shown} | set(sampled) | flagged_rows, text)
    dropped = build.dropped[:DROPPED_LIMIT]
    wanted = _texts_wanted(clusters_shown, dropped)
    texts = _wanted_texts(wanted, record_texts, manifest, sources)
    sample = []
    for i in sampled:
        raw, clean = _diff(rows[i]["abstract_raw"], rows[i]["abstract"])
        sample.append({"id": rows[i]["id"], "raw": raw, "clean": clean})

    by_code: dict[str, dict[str, Any]] = summary.get("by_code", {})
    by_file, first = _findings_view(build.findings, by_code)
    lengths = sorted(scan.word_counts)

    merged = manifest.get("duplicates_merged", {})
    return {
        "name": manifest.get("name", folder.name),
        "version": manifest.get("version"),
        "fingerprint": manifest.get("fingerprint", ""),
        "figures": [
            ("records in", manifest.get("records_in", 0)),
            ("records out", scan.rows),
            ("exact duplicates merged", merged.get("exact", 0)),
            ("near-duplicates merged", merged.get("near", 0)),
            ("source files", len(manifest.get("sources", []))),
            ("errors", summary.get("errors", 0)),
            ("warnings", summary.get("warnings", 0)),
            ("rows changed by cleaning", len(changed)),
        ],
        "length_stats": [
            ("min", percentile(lengths, 0)),
            ("median", percentile(lengths, 0.5)),
            ("p95", percentile(lengths, 0.95)),
            ("max", lengths[-1] if lengths else 0),
        ],
        "measures": build.measures,
        "languages": sorted(scan.languages.items(), key=lambda kv: (-kv[1], kv[0])),
        "by_code": by_code,
        "by_file": sorted(by_file.items()),
        "first": first,
        "findings_total": len(build.findings),
        "clusters": _clusters(clusters_shown, rows, texts),
        "clusters_total": len(scan.clusters),
        "texts_found": bool(texts) or not wanted,
        **_left_out(build, scan, dropped, rows, texts),
        "sample": sample,
        "changed_total": len(changed),
        "changelog": _markdown(build.changelog) if build.changelog else None,
        "charts": _charts(scan.word_counts, scan.languages, by_code, _noun(manifest)),
        "noun": _noun(manifest),
        "sources": manifest.get("sources", []),
    }


# The page's template, beside this module (packaged with it).
TEMPLATE = Path(__file__).with_name("report.html.j2")
# The template as jinja2 compiles it to Python, beside it: jinja2's compiler took about 0.03 s
# of every build (1 % of a 5,000-record one), Python's compile of its output takes 0.004. Used
# only while its first line names the jinja2 release and the template's bytes it was made
# from (else the template is compiled as before); tests/report/test_html.py holds it current.
COMPILED = TEMPLATE.with_name("report.html.j2.compiled")


def _environment() -> Environment:
    return Environment(autoescape=True, keep_trailing_newline=True)


def _compiled_stamp(source: str) -> str:
    import jinja2

    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    return f"# jinja2 {jinja2.__version__}, autoescape, keep_trailing_newline, sha256 {digest}"


def compiled_template(source: str) -> str:
    """What :data:`COMPILED` holds for the template ``source``: its stamp, then jinja2's
    Python for it, as ``Environment.from_string`` would compile it."""
    return _compiled_stamp(source) + "\n" + _environment().compile(source, raw=True)


def _template(env: Environment) -> Template:
    source = TEMPLATE.read_text(encoding="utf-8")
    try:
        stamp, code = COMPILED.read_text(encoding="utf-8").split("\n", 1)
    except (OSError, ValueError):
        stamp = code = ""
    if stamp != _compiled_stamp(source):
        return env.from_string(source)
    # What ``from_string`` does with the Python it compiles the template to.
    return Template.from_code(env, compile(code, "<template>", "exec"), env.make_globals(None))


def render_report(
    folder: str | Path,
    sources: Iterable[str | Path] = (),
    record_texts: RecordTexts | None = None,
    changed: Sequence[int] | None = None,
) -> str:
    """The page for the build in ``folder``; ``sources`` are where to find the drops."""
    data = collect(folder, sources, record_texts, changed)
    return _template(_environment()).render(**data)


def _is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(600)
    except OSError:
        return False
    return path.is_file() and GENERATOR.encode() in head


def write_report(
    folder: str | Path, sources: Iterable[str | Path] = (), out: str | Path | None = None
) -> Path:
    """Write the page (atomically) to ``out``, by default ``folder/report.html``.

    An existing file is replaced only if it is such a page: a report never overwrites a file
    that curate did not write.
    """
    from curate.io import output_kind, write_output

    target = Path(out) if out is not None else Path(folder) / REPORT_HTML
    why = output_kind(target)
    if why is not None:
        raise ReportError(f"{target} is {why}: not written")
    # (a FIFO or a device is written to, never opened to be read first: that would block)
    if target.is_file() and not _is_ours(target):
        raise ReportError(f"{target} exists and is not a curate report: not overwriting it")
    write_output(target, render_report(folder, sources))
    return target
