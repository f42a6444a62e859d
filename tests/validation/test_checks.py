"""`curate validate`: every finding code fires at its exact file and line, and nothing else does."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, SEED_FILES, SOURCES, seed_records

from curate.cli import main
from curate.ingest.formats.text import parse_file
from curate.pipeline.validate import validate_paths
from validation.config import Config
from validation.findings import Severity

SEED0, SEED1, SEED2 = SEED_FILES
S0 = dict(seed_records(SEED0))  # line -> abstract of the first seed
P = S0[3]  # "Cascade Ranking is ...": no markup, ends with a full stop

# Abstracts written for these tests, so that a fault file shares nothing with the seeds.
EN1 = (
    "We study how small language models can learn arithmetic from very few examples. We "
    "propose a curriculum that orders training problems by the number of carries they need, "
    "and we show that it halves the data required to reach high accuracy. Our analysis links "
    "this gain to the way attention heads specialise during training. Experiments on four "
    "model sizes confirm that the curriculum helps most when data is scarce, and that it "
    "does not hurt performance when data is plentiful."
)
EN2 = (
    "Graph neural networks often fail on graphs that are larger than the ones seen during "
    "training. We identify the cause as a drift in the distribution of node degrees, and we "
    "introduce a simple normalisation that removes it without changing the architecture. "
    "On molecular and social benchmarks the method improves size generalisation by a wide "
    "margin. Code is available at https://github.com/example/degree-norm"
)
EN3 = (
    "Reinforcement learning agents are brittle when the reward is sparse. We present a method "
    "that shapes rewards with a learned model of task progress, trained only from successful "
    "demonstrations, and we prove that the shaped reward keeps the optimal policy unchanged. "
    "Across twelve robotic tasks the agent learns three times faster (see the appendix.)"
)
GERMAN = (
    "Wir untersuchen, wie große Sprachmodelle während des Trainings Wissen speichern und "
    "wieder abrufen. Dazu entwickeln wir eine neue Methode, die die internen Darstellungen "
    "der Modelle schrittweise analysiert und mit menschlichen Urteilen vergleicht. Unsere "
    "Experimente auf mehreren Datensätzen zeigen, dass die Methode zuverlässiger ist als "
    "bisherige Ansätze und deutlich weniger Rechenzeit benötigt."
)
CHINESE = (
    "我们研究大型语言模型在训练过程中如何存储和调用知识。为此，我们提出了一种新的分析方法，"
    "逐层比较模型的内部表示与人类的判断。在多个数据集上的实验表明，该方法比以往的方法更可靠。"
)

# Read off the seed files by a person: these lines carry LaTeX or Markdown, and two abstracts
# of the first file reappear in the second.
SEED_LATEX = {
    (SEED0.name, 5), (SEED0.name, 7), (SEED0.name, 23), (SEED0.name, 27), (SEED0.name, 29),
    (SEED0.name, 37), (SEED1.name, 9), (SEED1.name, 11), (SEED1.name, 17), (SEED1.name, 27),
    (SEED1.name, 29), (SEED1.name, 37), (SEED2.name, 3), (SEED2.name, 5), (SEED2.name, 25),
}  # fmt: skip
SEED_MARKDOWN = {
    (SEED0.name, 11), (SEED1.name, 3), (SEED1.name, 9), (SEED1.name, 17), (SEED1.name, 21),
    (SEED1.name, 35), (SEED2.name, 31), (SEED2.name, 37),
}  # fmt: skip
SEED_FINDINGS = (
    {("latex", n, line) for n, line in SEED_LATEX}
    | {("markdown", n, line) for n, line in SEED_MARKDOWN}
    | {("duplicate", SEED1.name, 5), ("duplicate", SEED1.name, 37)}
)


def run(*paths: Path, config: Config | None = None):
    return validate_paths(list(paths), config or Config()).report


def at(report, name: str) -> list[tuple[str, int]]:
    """(code, line) of every finding in the file called ``name``, sorted."""
    return sorted((f.code, f.line) for f in report if Path(f.file).name == name)


def text(*records: str, header: str = "ICML 2025 Papers") -> str:
    return header + "\n\n" + "\n\n".join(records) + "\n"


def near_copy(abstract: str) -> str:
    """``abstract`` with its 10th and 30th words changed: a near, not exact, duplicate."""
    words = abstract.split()
    words[10], words[30] = "banana", "mango"
    return " ".join(words)


def wrapped_with(abstract: str, word: str, replacement: str) -> tuple[str, int]:
    """``abstract`` hard-wrapped at 72 columns with ``word`` replaced; and the drop line of it."""
    body = textwrap.fill(abstract.replace(word, replacement, 1), 72)
    index = next(i for i, ln in enumerate(body.split("\n")) if replacement in ln)
    assert index > 0, "the fault should not be on the record's first line"
    return body, 3 + index


ZW_BODY, ZW_LINE = wrapped_with(EN1, "attention", "atten\u200btion")
TEX_BODY, TEX_LINE = wrapped_with(EN1, "Experiments", "Experiments \\cite{smith20}")

# (case, content of zz_fault.txt, expected (code, line) in that file): each written by hand.
CASES = [
    ("encoding", text(EN1, EN2).encode() + b"\nBroken \xff bytes\n", [("encoding", 7)]),
    ("encoding-binary", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)), [("encoding", 1)]),
    ("bom", "\ufeff" + text(EN1), [("bom", 1)]),
    ("crlf", text(EN1).replace("\n", "\r\n"), [("line-endings", 1)]),
    ("cr", text(EN1).replace("\n", "\r"), [("line-endings", 1)]),
    ("empty", "", [("empty-file", 1)]),
    ("header-alone", "ICML 2025 Papers\n\n", [("empty-file", 1)]),
    ("header-missing", EN1 + "\n\n" + EN2 + "\n", [("header-missing", 1)]),
    ("header-language-ja", text(EN1, header="ICML 2025 論文一覧"), [("header-language", 1)]),
    ("header-language-es", text(EN1, header="ICML 2025 Artículos aceptados"),
     [("header-language", 1)]),
    ("header-mismatch-year", text(EN1, header="ICML 2024 Papers"), [("header-mismatch", 1)]),
    ("header-mismatch-venue", text(EN1, header="NeurIPS 2025 Papers"),
     [("header-mismatch", 1)]),
    ("language", text(EN1, GERMAN), [("language", 5)]),
    # Written without spaces: counted by character, so neither too short nor unchecked.
    ("language-zh", text(EN1, CHINESE), [("language", 5)]),
    ("duplicate", text(EN1, P.upper().replace(" ", "  ")), [("duplicate", 5)]),
    ("duplicate-markdown-vs-html",
     text(EN1.replace("curriculum", "**curriculum**", 1),
          EN1.replace("curriculum", "<b>curriculum</b>", 1).replace("and", "&#97;nd", 1)),
     [("duplicate", 5), ("html", 5), ("markdown", 3)]),
    ("near-duplicate", text(EN2, near_copy(P)), [("near-duplicate", 5)]),
    ("latex-wrapped", text(TEX_BODY), [("latex", TEX_LINE)]),
    ("latex", text(EN1.replace("very few", "$k \\ll n$")), [("latex", 3)]),
    ("markdown", text(EN1.replace("curriculum", "`curriculum`").replace("Our", "__Our__")),
     [("markdown", 3)]),
    ("markdown-link", text(EN1 + " See [our site](https://example.org/a_b)."), [("markdown", 3)]),
    ("html", text(EN1.replace("four", "<i>four</i> &amp; more")), [("html", 3)]),
    ("mojibake", text(EN1.replace("does not", "doesnâ€™t")), [("mojibake", 3)]),
    ("control-char", text(ZW_BODY), [("control-char", ZW_LINE)]),
    ("too-short", text(EN1, "Small models learn arithmetic from examples."), [("too-short", 5)]),
    ("too-long", text(S0[33] + "\n" + S0[31]), [("too-long", 3)]),
    ("truncated", text(EN1[: EN1.index(" the way")]), [("truncated", 3)]),
    ("schema", text(EN1, header="ICML 1066 Papers"),
     [("header-mismatch", 1), ("schema", 3)]),
]  # fmt: skip


@pytest.mark.parametrize(("content", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_fault_is_found_at_its_file_and_line(drop, content, expected):
    drop("zz_fault.txt", content)
    report = run(drop.folder)
    assert at(report, "zz_fault.txt") == expected
    # The clean copies beside it still give exactly their own findings: nothing is hidden.
    others = {(f.code, Path(f.file).name, f.line) for f in report if "zz_fault" not in f.file}
    assert others == SEED_FINDINGS


def test_duplicate_names_the_first_occurrence_and_near_duplicate_its_score(drop):
    drop("zz_fault.txt", text(P, near_copy(S0[5])))
    report = run(drop.folder)
    (dup,) = [f for f in report if f.code == "duplicate" and "zz_fault" in f.file]
    assert dup.related == f"{drop.folder.as_posix()}/{SEED0.name}:3"
    (near,) = [f for f in report if f.code == "near-duplicate"]
    assert near.related == f"{drop.folder.as_posix()}/{SEED0.name}:5"
    assert 0.8 <= near.score < 1.0


def test_near_duplicate_below_threshold_is_not_reported(drop):
    words = P.split()
    # Change every 12th word: about a quarter of the 3-word shingles differ.
    far = " ".join(w + "x" if i % 12 == 0 else w for i, w in enumerate(words))
    drop("zz_fault.txt", text(far))
    assert at(run(drop.folder), "zz_fault.txt") == []


def test_language_finding_gives_language_and_probability(drop):
    drop("zz_fault.txt", text(GERMAN))
    (f,) = [f for f in run(drop.folder) if f.code == "language"]
    assert "'de'" in f.message
    assert f.score is not None and f.score > 0.9


def test_chinese_header_over_english_abstracts_is_no_finding(tmp_path):
    (tmp_path / "a.txt").write_text(text(EN1, header="ICML 2025 论文列表"), encoding="utf-8")
    (tmp_path / "b.txt").write_text(text(EN2, header="ICML 2025 Papers"), encoding="utf-8")
    run = validate_paths([tmp_path], Config())
    files, report = run.files, run.report
    assert list(report) == []
    assert [f.header.language for f in files] == ["zh", "en"]
    assert {(f.header.venue, f.header.year) for f in files} == {("ICML", 2025)}


def test_clean_controls_give_no_finding(tmp_path):
    """Hard-wrapped paragraphs, extra blank lines, a trailing newline, URL and bracket endings."""
    body = (
        "ICML 2025 论文列表\n\n"
        + textwrap.fill(EN1, 60)
        + "\n\n\n\n"
        + textwrap.fill(EN2, 50)
        + "\n\n"
        + EN3
        + "\n"
    )
    (tmp_path / "controls.txt").write_text(body, encoding="utf-8")
    (tmp_path / "no-final-newline.txt").write_text(text(P).rstrip("\n"), encoding="utf-8")
    run = validate_paths([tmp_path], Config())
    files, report = run.files, run.report
    assert list(report) == []
    controls = files[0]
    second = 3 + len(textwrap.wrap(EN1, 60)) + 3  # after three blank lines
    third = second + len(textwrap.wrap(EN2, 50)) + 1
    assert list(controls.lines) == [3, second, third]
    parsed = parse_file(tmp_path / "controls.txt")
    assert parsed.records[0].text == EN1  # hard-wrapped lines joined with single spaces


def test_header_missing_keeps_the_records(tmp_path):
    (tmp_path / "a.txt").write_text(EN1 + "\n\n" + GERMAN + "\n", encoding="utf-8")
    run = validate_paths([tmp_path], Config())
    files, report = run.files, run.report
    assert list(files[0].lines) == [1, 3]
    assert sorted((f.code, f.line) for f in report) == [("header-missing", 1), ("language", 3)]


def test_configured_venue_and_year(tmp_path):
    (tmp_path / "a.txt").write_text(text(EN1), encoding="utf-8")
    report = run(tmp_path, config=Config(venue="NeurIPS", year=2025))
    (f,) = list(report)
    assert (f.code, f.line) == ("header-mismatch", 1)
    assert "the configured venue ('NeurIPS')" in f.message  # as configured, not upper-cased


def test_severity_and_threshold_come_from_config(tmp_path, capsys):
    cfg = tmp_path / "curate.toml"
    cfg.write_text('min_words = 500\n[severity]\nduplicate = "error"\n', encoding="utf-8")
    assert main(["validate", str(SOURCES), "--config", str(cfg), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    codes = {(f["code"], f["severity"]) for f in data["findings"]}
    assert ("duplicate", "error") in codes
    assert ("too-short", "warning") in codes


# --- the command line -----------------------------------------------------------------------------
def test_json_format_is_one_object_with_findings_and_summary(capsys):
    assert main(["validate", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"findings", "summary", "measures"}
    dup = next(f for f in data["findings"] if f["code"] == "duplicate")
    assert set(dup) == {"code", "severity", "file", "line", "message", "related", "id"}
    assert data["summary"]["by_code"]["duplicate"] == {"severity": "warning", "count": 2}
    assert data["summary"]["records"] == 57


def test_github_format_annotates_what_github_shows_and_logs_the_rest(drop, capsys):
    drop("zz_fault.txt", text(EN1, GERMAN))
    assert main(["validate", str(drop.folder), "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    commands = [ln for ln in lines if ln.startswith(("::error ", "::warning "))]
    assert len(commands) == 1 + 10  # GitHub shows at most 10 warnings per step
    error = f"::error file={drop.folder.as_posix()}/zz_fault.txt,line=5,title=language::"
    assert commands[0].startswith(error)
    start, end = (
        lines.index(next(ln for ln in lines if ln.startswith("::group::"))),
        lines.index("::endgroup::"),
    )
    assert len(lines[start + 1 : end]) == len(SEED_FINDINGS) - 10  # the rest, still in the log


def test_text_format_groups_by_file_with_file_line(drop, capsys):
    drop("zz_fault.txt", text(EN1, GERMAN))
    assert main(["validate", str(drop.folder)]) == 1
    out = capsys.readouterr().out
    fault = f"{drop.folder.as_posix()}/zz_fault.txt"
    assert f"\n{fault} (1 finding)\n  {fault}:5: error   language" in out
    assert "1 error, 25 warnings" in out


def test_strict_makes_warnings_fail(capsys):
    assert main(["validate", str(SOURCES), "--strict"]) == 1


def test_missing_path_is_a_usage_error(capsys):
    assert main(["validate", "no/such/folder"]) == 2
    err = capsys.readouterr().err
    assert err == "curate: error: no such file or folder: no/such/folder\n"


def test_bad_config_is_a_usage_error(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("near_duplicate_threshold = 'high'\n", encoding="utf-8")
    assert main(["validate", "--config", str(cfg)]) == 2
    assert "near_duplicate_threshold must be a number" in capsys.readouterr().err


def test_console_script_never_shows_a_traceback_on_binary_input(tmp_path):
    (tmp_path / "a.bin.txt").write_bytes(bytes(range(256)) * 4)
    proc = subprocess.run(
        ["curate", "validate", str(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    (f,) = json.loads(proc.stdout)["findings"]
    # bytes 0-127 are valid UTF-8 and hold one newline (0x0a): the first bad byte is on line 2.
    assert (f["code"], f["line"]) == ("encoding", 2)


# --- tabular sources: a record's own venue and year; no header checks ------------------------
def test_record_mismatch_checks_each_tabular_records_venue_and_year(tmp_path):
    from validation.mapping import parse

    path = tmp_path / "papers.csv"
    path.write_text(
        f'venue,year,abstract\nICML,2025,"{EN1}"\nNeurIPS,2025,"{EN2}"\nicml,2019,"{EN3}"\n',
        encoding="utf-8",
    )
    mapping = parse({"csv": {"text": "abstract", "venue": "venue", "year": "year"}})
    config = Config(venues=("ICML",), years=(2024, 2025), mapping=mapping)
    found = [(f.code, f.line, f.message) for f in validate_paths([path], config).report]
    assert [(code, line) for code, line, _ in found] == [
        ("record-mismatch", 3),
        ("record-mismatch", 4),
    ]
    assert "venue 'NeurIPS' is not one of ICML" in found[0][2]
    assert "year 2019 is not one of 2024, 2025" in found[1][2]  # `icml`: case is not a fault
    unset = validate_paths([path], Config(mapping=mapping)).report
    assert not [f for f in unset if f.code == "record-mismatch"]  # no majority without a header


def test_the_header_checks_apply_to_text_drops_only(tmp_path):
    from validation.mapping import parse

    path = tmp_path / "papers.jsonl"
    path.write_text(
        "".join(json.dumps({"abstract": t}) + "\n" for t in (EN1, EN2, EN3)), encoding="utf-8"
    )
    drop = tmp_path / "drop.txt"
    drop.write_text(text(EN1, header="NeurIPS 2019 Papers"), encoding="utf-8")
    config = Config(header_languages=("fr",), mapping=parse({"jsonl": {"text": "abstract"}}))
    codes = {(Path(f.file).name, f.code) for f in validate_paths([tmp_path], config).report}
    assert {c for n, c in codes if n == "papers.jsonl"} & {"header-missing", "header-language",
        "header-mismatch"} == set()  # fmt: skip
    assert ("drop.txt", "header-language") in codes


def test_the_control_char_message_says_what_the_build_does_at_its_severity(tmp_path):
    """It said "a build removes it from `abstract`" at every severity and whatever the text
    column: at its default, error, the build refuses instead."""
    drop = tmp_path / "zw.txt"
    drop.write_text(text(ZW_BODY), encoding="utf-8")
    (error,) = [f for f in run(drop) if f.code == "control-char"]
    assert error.message == (
        "invisible character U+200B ZERO WIDTH SPACE; as a warning ([tool.curate.severity] "
        'control-char = "warning") the build removes it from the text'
    )
    warned = run(drop, config=Config(severity={"control-char": Severity.WARNING}))
    (warning,) = [f for f in warned if f.code == "control-char"]
    assert warning.message.endswith("; the build removes it from the text")
