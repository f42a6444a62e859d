"""The TeX a build keeps as it is (`math-kept`) is listed by macro, with the number of rows that
hold each, in validation-report.json and on the report page, the most frequent first."""

from __future__ import annotations

import json
import re
from pathlib import Path

from curate.cli import main

# Written for the test: an author's own units (`\kms` in two records), an unknown macro kept
# with its `{}` and one a package table converts (`\ion`, which must not be listed).
RECORDS = [
    r"We measure outflows of 300\kms in the nuclei of nearby galaxies and compare them with the "
    r"velocities that models of feedback predict for the same black hole masses.",
    r"The winds reach 1200\kms in two of the quasars, faster than the escape speed of the host "
    r"halo, and we discuss what removes the gas from the galaxy in each case.",
    r"We introduce \benchname{}, a benchmark of long documents, and show that retrieval helps "
    r"every model we test on the questions that need more than one passage.",
    r"The \ion{Fe}{2} emission of the broad line region varies with the continuum, with a lag "
    r"of about forty days in the five sources we monitored over three years.",
]


def test_kept_macros_are_listed_with_their_rows(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    text = "ICML 2025 Papers\n\n" + "\n\n".join(RECORDS) + "\n"
    (drop / "a.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "dist"
    assert main(["build", str(drop), "--out", str(out), "--no-cache"]) == 0
    report = json.loads((out / "validation-report.json").read_text(encoding="utf-8"))
    assert report["kept_macros"] == [
        {"macro": "\\kms", "rows": 2},
        {"macro": "\\benchname", "rows": 1},
    ]
    page = (out / "report.html").read_text(encoding="utf-8")
    table = re.search(r'<table id="kept-macros">(.*?)</table>', page, re.S)
    assert table is not None
    cells = re.findall(r"<td><code>([^<]+)</code></td><td>(\d+)</td>", table.group(1))
    assert cells == [("\\kms", "2"), ("\\benchname", "1")]
