"""`curate report`: the page renders in a real headless Chromium, every chart draws, nothing is
fetched and nothing is logged to the console; and it says what the build did.

The 20,000-record case runs as ``bench/bench_report.py`` (a build of that size takes longer than
a test should); this test uses the bundled sources. Screenshots are kept in the test's tmp dir.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from browser import colour_pixels, open_page
from conftest import ROOT, SOURCES

import curate.report.html as html_report
from curate.cli import main
from curate.report.charts import bar_chart as _bar_chart
from curate.report.charts import length_chart as _length_chart

# The chart colours, written here and not imported: a chart "draws" when the screenshot holds a
# solid area of its colour (bars and histogram columns are filled with exactly that colour).
CHART_COLOURS = {"lengths": "#4c72b0", "languages": "#55a868", "findings": "#dd8452"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    shutil.copytree(SOURCES, root / "sources")
    out = root / "dist"
    assert main(["build", str(root / "sources"), "--out", str(out), "--no-cache"]) == 0
    return out


@pytest.mark.slow
@pytest.mark.chromium
def test_page_renders_with_every_chart_and_no_console_message(built, tmp_path):
    page = open_page(built / "report.html", tmp_path / "report.png")
    assert page.console == []
    pixels = colour_pixels(page.screenshot, CHART_COLOURS)
    for chart, count in pixels.items():
        assert count > 500, (chart, pixels)
    assert page.dom.count("<svg") == 3
    assert "ICML 2025 Abstracts" in page.dom
    # the browser parsed the bars as SVG with their hover text (not as stray HTML)
    assert "<title>en: 55 abstracts</title>" in page.dom
    assert "<title>latex: 15 findings (warning)</title>" in page.dom


SVG = "{http://www.w3.org/2000/svg}"


def _charts(html: str) -> dict[str, ET.Element]:
    """Each chart's SVG, parsed as XML (so it must be well-formed), by the id of its box."""
    found = re.findall(
        r'<div class="chart" id="chart-(\w+)"><h3>[^<]*</h3>(<svg.*?</svg>)', html, re.S
    )
    return {key: ET.fromstring(svg) for key, svg in found}


def _bars(svg: ET.Element) -> list[tuple[str, float, float]]:
    """(hover text, width, height) of every bar."""
    return [
        (rect.findtext(f"{SVG}title"), float(rect.get("width")), float(rect.get("height")))
        for rect in svg.iter(f"{SVG}rect")
    ]


def test_each_chart_draws_its_data(built):
    """The bars say, and are as long as, what the table and the validation run hold: counted
    here from the Parquet file and validation-report.json, not from the report's code."""
    charts = _charts((built / "report.html").read_text(encoding="utf-8"))
    assert sorted(charts) == ["findings", "languages", "lengths"]
    table = pq.read_table(built / "data" / "train-00000-of-00001.parquet").to_pylist()
    summary = json.loads((built / "validation-report.json").read_text(encoding="utf-8"))["summary"]

    languages = Counter(r["language"] or "not checked" for r in table)
    by_count = sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))
    bars = _bars(charts["languages"])
    assert [b[0] for b in bars] == [f"{k}: {v} abstracts" for k, v in by_count]
    codes = summary["by_code"]
    bars_f = _bars(charts["findings"])
    assert [b[0] for b in bars_f] == [
        f"{c}: {i['count']} findings ({i['severity']})" for c, i in codes.items()
    ]
    counts = [i["count"] for i in codes.values()]
    for (_, width, _), count in zip(bars_f, counts, strict=True):  # lengths in proportion
        assert width / bars_f[0][1] == pytest.approx(count / counts[0], rel=1e-3)
    texts = [t.text for t in charts["findings"].iter(f"{SVG}text")]
    assert {"findings", *codes, *map(str, counts)} <= set(texts)  # axis label, names, counts

    # the histogram: every row in exactly one bar, each bar's word range holding its count
    words = [r["word_count"] for r in table]
    heights_per_row = []
    total = 0
    for text, _, height in _bars(charts["lengths"]):
        m = re.fullmatch(r"([\d,]+)(?:–([\d,]+))? words?: ([\d,]+) abstracts?", text)
        assert m, text
        lo, hi, n = (int((g or m[1]).replace(",", "")) for g in (m[1], m[2], m[3]))
        assert sum(lo <= w <= hi for w in words) == n, text
        heights_per_row.append(height / n)
        total += n
    assert heights_per_row == pytest.approx([heights_per_row[0]] * len(heights_per_row), rel=1e-3)
    assert total == len(words)
    lengths = [t.text for t in charts["lengths"].iter(f"{SVG}text")]
    assert "words per abstract" in lengths and "abstracts" in lengths
    desc = charts["lengths"].findtext(f"{SVG}desc")
    assert f"from {min(words)} to {max(words)} words" in desc


def test_charts_are_well_formed_at_the_edges():
    """No rows, one distinct length, markup-like and CJK labels, huge counts: still valid SVG,
    the labels escaped, and the same bytes twice."""
    charts = [
        _length_chart([]),
        _length_chart([7, 7, 7]),
        _length_chart(list(range(1, 100_000, 7))),
        _bar_chart("a", "A", "x", [], [], [], "findings"),
        _bar_chart(
            "b",
            "B",
            "code",
            ["<b>&", "论文"],
            [1, 12_345_678],
            ["#000", "#111"],
            "findings",
            ["error", "warning"],
        ),
    ]
    for chart in charts:
        ET.fromstring(str(chart))
    assert "<title>7 words: 3 abstracts</title>" in charts[1]
    assert "<title>&lt;b&gt;&amp;: 1 finding (error)</title>" in charts[4]
    assert ">12,345,678</text>" in charts[4]
    assert str(_length_chart([5, 9, 9, 300])) == str(_length_chart([5, 9, 9, 300]))


@pytest.mark.slow
@pytest.mark.chromium
def test_a_console_message_is_caught(tmp_path):
    """The check above is live: a page that fetches from the network is reported."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        (ROOT / "curate" / "report" / "report.html.j2")
        .read_text(encoding="utf-8")
        .split("</head>")[0]
        + '</head><body><img src="https://example.com/x.png"></body></html>',
        encoding="utf-8",
    )
    page = open_page(bad, tmp_path / "bad.png", height=300, dump_dom=False)
    assert any("example.com" in m for m in page.console)


def _compiled_is_current() -> bool:
    """Whether report.html.j2.compiled was made by the jinja2 installed here (the lowest
    version pyproject allows compiles otherwise, and the page is then made from the template)."""
    import jinja2

    stamp = html_report.COMPILED.read_text(encoding="utf-8").split("\n", 1)[0]
    return stamp.startswith(f"# jinja2 {jinja2.__version__},")


REWRITE = (
    'write it again: uv run python -c "from curate.report.html import *; '
    "COMPILED.write_text(compiled_template(TEMPLATE.read_text(encoding='utf-8')), "
    "encoding='utf-8')\""
)


def test_the_compiled_template_is_the_template_as_jinja2_compiles_it_now():
    """The page is rendered from report.html.j2.compiled only while it is current: after an
    edit of the template, this fails until it is written again (the page is still right
    meanwhile, only slower to make). Its Python is jinja2's own for the locked release."""
    import hashlib

    source = html_report.TEMPLATE.read_text(encoding="utf-8")
    stamp, code = html_report.COMPILED.read_text(encoding="utf-8").split("\n", 1)
    assert stamp.endswith(f" sha256 {hashlib.sha256(source.encode()).hexdigest()}"), REWRITE
    if _compiled_is_current():
        assert stamp + "\n" + code == html_report.compiled_template(source), REWRITE


def test_the_compiled_template_renders_the_page_the_template_renders(built, monkeypatch):
    """Where the file is current the template is not compiled, and the page is the one the
    template gives; under another jinja2 release the template is compiled, as before."""
    from jinja2 import Environment

    compiled = html_report.render_report(built, [ROOT / "sources"])
    calls = []
    original = Environment.from_string

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(Environment, "from_string", counted)
        assert html_report.render_report(built, [ROOT / "sources"]) == compiled
    assert calls == ([] if _compiled_is_current() else [1])
    # A stale or missing compiled file: the template itself, the same page.
    monkeypatch.setattr(html_report, "COMPILED", built / "no-such-file")
    assert html_report.render_report(built, [ROOT / "sources"]) == compiled
    assert "<title>" in compiled and "<table" in compiled


def test_page_is_self_contained(built):
    html = (built / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html and "<link" not in html and "<img" not in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert "default-src 'none'" in html


def test_page_shows_duplicates_side_by_side_and_what_cleaning_changed(built):
    html = (built / "report.html").read_text(encoding="utf-8")
    # seeds: 001 line 5 repeats 000 line 25, 001 line 37 repeats 000 line 27 (read by hand)
    pairs = [("000_06b61cfca4c53418.txt:25", "001_4aa885bbda26af6d.txt:5"),
             ("000_06b61cfca4c53418.txt:27", "001_4aa885bbda26af6d.txt:37")]  # fmt: skip
    for kept, merged in pairs:
        pair = re.search(
            rf'<div class="pair">\s*<div><div class="where">{re.escape(kept)} · original</div>'
            rf'.*?<div class="where">{re.escape(merged)} · exact</div>(.*?)</div>',
            html,
            re.S,
        )
        assert pair and "(text not available)" not in pair[1]
    # 000 line 29 holds \emph{out-of-distribution}: raw shows it struck out, clean the words
    assert "<del>\\emph{out-of-distribution}" in html
    assert "<ins>out-of-distribution" in html
    table = pq.read_table(built / "data" / "train-00000-of-00001.parquet")
    changed = sum(r["abstract"] != r["abstract_raw"] for r in table.to_pylist())
    assert f"{changed} rows differ from their raw text" in html


def test_report_is_in_the_build_but_not_in_the_release(built):
    # (two builds giving the same report.html bytes: tests/pipeline/test_build.py compares
    # every file)
    manifest = json.loads((built / "manifest.json").read_text(encoding="utf-8"))
    assert (built / "report.html").is_file()
    assert "report.html" not in manifest["files"]


def test_report_command_rewrites_its_page_but_never_a_foreign_file(built, tmp_path, capsys):
    target = tmp_path / "page.html"
    assert main(["report", str(built), "--output", str(target)]) == 0
    assert capsys.readouterr().out == f"report: {target} (open it in a browser)\n"
    assert main(["report", str(built), "--output", str(target)]) == 0  # its own page: replaced
    foreign = tmp_path / "notes.html"
    foreign.write_text("<p>mine</p>", encoding="utf-8")
    assert main(["report", str(built), "--output", str(foreign)]) == 2
    assert foreign.read_text(encoding="utf-8") == "<p>mine</p>"
    assert "is not a curate report" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nothing")]) == 2


def test_without_the_drops_the_merged_texts_are_marked_missing(built, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no sources/ here
    target = tmp_path / "page.html"
    assert main(["report", str(built), "--output", str(target)]) == 0
    html = target.read_text(encoding="utf-8")
    assert html.count("(text not available)") == 2


def test_changelog_section_is_the_newest_one(built, tmp_path):
    folder = tmp_path / "dist"
    shutil.copytree(built, folder)
    (folder / "CHANGELOG.md").write_text(
        "# Changelog\n\n## 1.1.0\n\n- 2 records added\n\n## 1.0.0\n\n- first release\n",
        encoding="utf-8",
    )
    assert main(["report", str(folder)]) == 0
    html = (folder / "report.html").read_text(encoding="utf-8")
    section = html.split("<h2>Changes since the previous release</h2>", 1)[1]
    section = section.split("<h2>Source files")[0]
    assert "<h2>1.1.0</h2>" in section and "2 records added" in section
    assert "first release" not in section


def test_page_shows_each_measure_beside_its_thresholds(built):
    """The word counts of the bundled abstracts (counted here by splitting the raw texts, with
    no CJK among them) and the two thresholds that decide from them."""
    page = (built / "report.html").read_text(encoding="utf-8")
    table = re.search(r'<table id="measures">(.*?)</table>', page, re.S)
    assert table is not None
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>",
             table.group(1), re.S)]  # fmt: skip
    texts = [t for f in sorted(SOURCES.glob("*.txt")) for t in _raw_records(f)]
    counts = sorted(len(t.split()) for t in texts)
    assert cells[1] == str(len(texts))
    assert (cells[2], cells[6]) == (str(counts[0]), str(counts[-1]))
    assert "min_words = 20" in cells and "max_words = 400" in cells


def _raw_records(path: Path) -> list[str]:
    blocks = path.read_text(encoding="utf-8").split("\n\n")[1:]
    return [" ".join(b.split()) for b in blocks if b.strip()]


def test_the_report_finds_the_texts_of_drops_in_subfolders(tmp_path, monkeypatch):
    """The same discovery as every command: drops in subfolders are found by their names."""
    root = tmp_path / "sources"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    for k, seed in enumerate(sorted(SOURCES.glob("*.txt"))):
        shutil.copy(seed, root / ("a" if k % 2 else "b") / seed.name)
    out = tmp_path / "dist"
    assert main(["build", str(root), "--out", str(out), "--no-cache"]) == 0
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "page.html"
    assert main(["report", str(out), "--output", str(target), "--sources", str(root)]) == 0
    html = target.read_text(encoding="utf-8")
    assert "(text not available)" not in html
    assert "b/" in html  # the merged copy is shown by its name, folder included


def test_the_report_refuses_sources_that_do_not_exist(built, tmp_path, capsys):
    assert main(["report", str(built), "--output", str(tmp_path / "p.html"), "--sources",
                 str(tmp_path / "nowhere")]) == 2  # fmt: skip
    assert "no such file or folder" in capsys.readouterr().err


PLACEHOLDER = "This paper has been withdrawn by the authors."  # dropped by its row policy


@pytest.mark.slow
@pytest.mark.chromium
def test_the_page_lists_what_left_the_dataset_and_chromium_renders_it(tmp_path):
    """A withdrawal notice (placeholder: dropped), a too-long record (flagged), a merged copy:
    the page lists the dropped row with its text and reason, the flagged row with its flags,
    and marks where the merged copy differs; rejected.parquet holds the dropped row."""
    src = tmp_path / "sources"
    shutil.copytree(SOURCES, src)
    seed = sorted(src.glob("*.txt"))[0]
    header, _, body = seed.read_text(encoding="utf-8").partition("\n\n")
    records = body.split("\n\n")
    first = records[0]
    copy = first.replace(" the ", " THE ", 1)  # the same words after folding: an exact copy
    long = " ".join(r.strip() for r in records[1:5])  # 400+ words: too-long, kept with a flag
    (src / "zz.txt").write_text(f"{header}\n\n{PLACEHOLDER}\n\n{copy}\n\n{long}\n", "utf-8")
    (tmp_path / "curate.toml").write_text("rejected = true\n", encoding="utf-8")
    out = tmp_path / "dist"
    assert main(["build", str(src), "--out", str(out), "--no-cache", "--config",
                 str(tmp_path / "curate.toml")]) == 0  # fmt: skip
    page = open_page(out / "report.html", tmp_path / "page.png")
    assert page.console == []
    dom = page.dom
    dropped = re.search(r'<table id="dropped">(.*?)</table>', dom, re.S).group(1)
    assert "zz.txt:3" in dropped and PLACEHOLDER in dropped and "placeholder" in dropped
    flagged = re.search(r'<table id="flagged">(.*?)</table>', dom, re.S).group(1)
    assert "too-long" in flagged and "zz.txt:7" in flagged
    # The copies differ in case alone: the smaller raw text survives ("THE" sorts before
    # "the"), and the seed's copy, merged, shows its difference marked.
    assert "<ins>the</ins>" in dom and "<ins>THE</ins>" not in dom
    rejected = pq.read_table(out / "rejected.parquet").to_pylist()
    assert [(r["file"], r["line"], r["reasons"], r["abstract_raw"]) for r in rejected] == [
        ("zz.txt", 3, ["placeholder"], PLACEHOLDER)
    ]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "rejected.parquet" in manifest["local_files"]
    assert "rejected.parquet" not in manifest["files"]
    # ours: the next build into the folder replaces it without --force
    assert main(["build", str(src), "--out", str(out), "--no-cache", "--config",
                 str(tmp_path / "curate.toml")]) == 0  # fmt: skip


def test_the_changelog_is_rendered_not_shown_as_markdown(built, tmp_path):
    folder = tmp_path / "dist"
    shutil.copytree(built, folder)
    (folder / "CHANGELOG.md").write_text(
        "# Changelog\n\n## 1.1.0 (minor release)\n\n### Edited (1)\n\n"
        "- `abc` → `def`: words ~~novel~~ **new** here\n\n## 1.0.0\n\n- first\n",
        encoding="utf-8",
    )
    target = tmp_path / "page.html"
    assert main(["report", str(folder), "--output", str(target)]) == 0
    html = target.read_text(encoding="utf-8")
    section = html[html.index("Changes since the previous release") :]
    assert "<h2>1.1.0 (minor release)</h2>" in section and "<h3>Edited (1)</h3>" in section
    assert "<s>novel</s>" in section and "<strong>new</strong>" in section
    assert "## 1.1.0" not in section and "1.0.0" not in section.split("Source files")[0]


def test_every_test_that_opens_chromium_is_marked_so():
    """The mark is what makes a machine without Chromium skip them (tests/conftest.py)."""
    import ast

    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            calls = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call)
                     and isinstance(c.func, ast.Name)}  # fmt: skip
            marks = {ast.unparse(d) for d in node.decorator_list}
            if "open_page" in calls:
                assert "pytest.mark.chromium" in marks, f"{path.name}::{node.name}"


@pytest.mark.slow
@pytest.mark.parametrize("ci", [False, True], ids=["developer", "ci"])
def test_without_chromium_its_tests_skip_in_one_line_unless_ci_is_set(ci):
    """pytest itself, on a PATH with no Chromium on it (the environment's own tools only)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CURATE_CHROMIUM")}
    env["PATH"] = str(Path(sys.executable).parent)
    if ci:
        env["CI"] = "true"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-m",
         "chromium", str(Path(__file__))], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    import browser

    if ci:
        assert done.returncode == 1, done.stdout
        assert re.search(r"\n\d+ failed, \d+ deselected in", done.stdout), done.stdout
        assert f"RuntimeError: {browser.MISSING}" in done.stdout
    else:
        assert done.returncode == 0, done.stdout
        assert re.search(r"\n\d+ skipped, \d+ deselected in", done.stdout), done.stdout
        (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("SKIPPED")]
        assert line.endswith(browser.MISSING) and "apt-get install -y chromium" in line


def _seed_records() -> list[str]:
    seed = sorted(SOURCES.glob("*.txt"))[0]
    return seed.read_text(encoding="utf-8").partition("\n\n")[2].strip().split("\n\n")


def _build_own(tmp_path: Path, files: dict[str, str], config: str) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(text, encoding="utf-8")
    (tmp_path / "curate.toml").write_text(config, encoding="utf-8")
    out = tmp_path / "dist"
    assert main(["build", str(src), "--out", str(out), "--no-cache", "--config",
                 str(tmp_path / "curate.toml")]) == 0  # fmt: skip
    return out


def _pair(page: str) -> list[tuple[str, str]]:
    """The first cluster's members: where each is, and its text as the page shows it."""
    block = re.search(r'<div class="pair">(.*?)\n</div>', page, re.S).group(1)
    found = re.findall(r'<div class="where">(.*?)</div>(.*?)</div>', block, re.S)
    return [(where, re.sub(r"</?ins>", "", text).strip()) for where, text in found]


def test_a_merged_copy_from_a_source_with_its_own_ids_shows_its_text(tmp_path):
    """A source that names its records (`id`) is shown as `file:line (id …)`: the merged copy's
    text was looked up by that label and never found ("text not available")."""
    records = _seed_records()[:6]
    copy = records[0].replace(" the ", " THE ", 1)  # an exact copy once case is folded
    lines = [json.dumps({"id": f"paper-{n}", "abstract": r}) for n, r in enumerate(records)]
    lines.append(json.dumps({"id": "paper-copy", "abstract": copy}))
    out = _build_own(tmp_path, {"a.jsonl": "\n".join(lines) + "\n"},
                     '[mapping.jsonl]\ntext = "abstract"\nid = "id"\n')  # fmt: skip
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "(text not available)" not in page
    members = sorted(_pair(page))
    assert [w.split(" · ")[0] for w, _ in members] == [
        "a.jsonl:1 (id paper-0)",
        "a.jsonl:7 (id paper-copy)",
    ]
    assert [html_report.html.unescape(t) for _, t in members] == [records[0], copy]


def test_records_of_a_one_line_array_have_their_own_texts_in_the_page_and_rejected(tmp_path):
    """`json.dump(records, f)` puts every record on line 1: the texts of a merged copy and of
    a dropped record were looked up by line and were the first record's. They are each
    record's own, found by its element's number."""
    first, second, third = _seed_records()[:3]
    copy = third.replace(" the ", " THE ", 1)
    elements = [{"abstract": t} for t in (first, second, PLACEHOLDER, third, copy)]
    out = _build_own(tmp_path, {"a.json": json.dumps(elements)},
                     'rejected = true\n[mapping.jsonl]\ntext = "abstract"\n')  # fmt: skip
    rejected = pq.read_table(out / "rejected.parquet").to_pylist()
    assert [(r["file"], r["line"], r["abstract_raw"]) for r in rejected] == [
        ("a.json", 1, PLACEHOLDER)
    ]
    report = json.loads((out / "validation-report.json").read_text(encoding="utf-8"))
    assert report["dropped"] == [
        {"id": rejected[0]["id"], "file": "a.json", "line": 1, "row": 3,
         "reasons": ["placeholder"]}
    ]  # fmt: skip
    page = (out / "report.html").read_text(encoding="utf-8")
    dropped = re.search(r'<table id="dropped">(.*?)</table>', page, re.S).group(1)
    assert html_report.html.escape(PLACEHOLDER) in dropped
    assert html_report.html.escape(first[:60]) not in dropped
    texts = sorted(html_report.html.unescape(t) for _, t in _pair(page))
    assert texts == sorted([third, copy])
