"""Where validate's reports go: ``--output`` takes the report in ``--format``, ``--json`` the JSON
report beside it; SARIF validates against its schema and names each score for what it is;
annotations and SARIF name files relative to the repository (``GITHUB_WORKSPACE``)."""

from __future__ import annotations

import json

import jsonschema
from conftest import ROOT, SEED_FILES

from curate.cli import main

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))
GERMAN = (
    "Wir untersuchen die Frage, wie neuronale Netze mit wenigen Daten lernen koennen, und zeigen "
    "in zahlreichen Experimenten, dass eine einfache Regularisierung die Ergebnisse deutlich "
    "verbessert und die Modelle robuster gegen Rauschen in den Daten macht."
)


def drops(tmp_path):
    folder = tmp_path / "repo" / "sources"
    folder.mkdir(parents=True)
    text = SEED_FILES[0].read_text(encoding="utf-8")
    (folder / "a.txt").write_text(text, encoding="utf-8")
    (folder / "b.txt").write_text(text.rstrip("\n") + "\n\n" + GERMAN + "\n", encoding="utf-8")
    return folder


def test_sarif_output_is_sarif_that_validates(tmp_path, capsys):
    folder = drops(tmp_path)
    target = tmp_path / "x.sarif"
    assert main(["validate", str(folder), "--format", "sarif", "--output", str(target)]) == 1
    assert capsys.readouterr().out == ""  # the report went to the file, not stdout
    sarif = json.loads(target.read_text(encoding="utf-8"))
    jsonschema.validate(sarif, SCHEMA)
    props = [r.get("properties", {}) for r in sarif["runs"][0]["results"]]
    language = [p for r, p in zip(sarif["runs"][0]["results"], props, strict=True)
                if r["ruleId"] == "language"]  # fmt: skip
    assert language and all(set(p) == {"probability"} for p in language)
    assert not any("similarity" in p for p in language)


def test_json_goes_beside_whatever_the_format_prints(tmp_path, capsys):
    folder = drops(tmp_path)
    target = tmp_path / "r.json"
    assert main(["validate", str(folder), "--format", "github", "--json", str(target)]) == 1
    assert "::error " in capsys.readouterr().out
    assert json.loads(target.read_text(encoding="utf-8"))["summary"]["errors"] >= 1


def test_annotations_name_files_from_the_repository_root(tmp_path, capsys, monkeypatch):
    folder = drops(tmp_path)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "repo"))
    monkeypatch.chdir(folder)  # a step that runs in a subfolder
    assert main(["validate", ".", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert "file=sources/b.txt," in out
    assert main(["validate", ".", "--format", "sarif"]) == 1
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(capsys.readouterr().out)["runs"][0]["results"]}  # fmt: skip
    assert "sources/b.txt" in uris
