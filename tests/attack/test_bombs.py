"""Resource bombs: small files that expand to far more than they are. Each is read within a
bounded memory, with one finding that names the limit it hit and how to raise it, and the
rest of the run goes on.

The two bombs the limits exist for are measured as a user meets them: ``curate validate`` in
a process of its own, whose peak resident memory (VmHWM) must stay under 500 MB:

- a 0.7 MB ``.jsonl.gz`` of 1,036,269 copies of one record (200 MB expanded), which took
  `validate` to 3.1 GB and 288 s and wrote a 404 MB report;
- ``tests/data/bombs/cell.parquet``, 57 KB holding one zstd-compressed cell of 670 MB, which
  took it to 3.4 GB. It was written once by ``pyarrow.parquet.write_table(pa.table({"abstract":
  [cell]}), path, compression="zstd", compression_level=19)`` with ``cell`` the sentence "We
  study the effect of stochastic gradient noise on deep networks. " 10,000,000 times (making
  it takes 1.3 GB, so it is kept rather than made by the test).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from hostile import GOOD, errors, validate

RSS_LIMIT_KB = 500 * 1024
# The peak of this process's own memory: Linux's VmHWM, which starts anew at exec. ru_maxrss
# there keeps the peak of the process it was forked from (a pytest worker of 563 MiB made
# both bombs fail), so it is the measure only where there is no /proc.
MEASURED = """
import resource, sys
from curate.cli import main
status = main(sys.argv[1:])
try:
    with open("/proc/self/status") as fh:
        peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("maxrss", peak, file=sys.stderr)
sys.exit(status)
"""


def _validate_measured(folder, config, timeout: float = 300) -> tuple[int, dict, int]:
    """``curate validate`` in a process of its own: exit status, JSON report, peak RSS (KiB)."""
    proc = subprocess.run(
        [sys.executable, "-c", MEASURED, "validate", str(folder), "--format", "json",
         "--config", str(config), "--no-cache", "--engine", "serial"],
        capture_output=True, text=True, timeout=timeout, cwd=folder.parent,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    rss = int(proc.stderr.rsplit("maxrss", 1)[1].split()[0])
    return proc.returncode, json.loads(proc.stdout), rss


def test_a_gzip_bomb_is_refused_within_500_mb(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    # One record of 193 bytes (a real abstract's first sentence), as in the bomb found.
    line = (json.dumps({"abstract": GOOD[0]["abstract"][:175]}) + "\n").encode()
    with gzip.open(src / "bomb.jsonl.gz", "wb", compresslevel=9) as fh:
        for _ in range(1_036_269 // 10_000):
            fh.write(line * 10_000)
        fh.write(line * (1_036_269 % 10_000))
    assert len(line) * 1_036_269 > 190_000_000 and (src / "bomb.jsonl.gz").stat().st_size < 1e6
    (src / "good.jsonl").write_text(json.dumps(GOOD[1]) + "\n")  # still checked
    config = tmp_path / "curate.toml"
    config.write_text('[mapping.jsonl]\ntext = "abstract"\n')

    status, report, rss = _validate_measured(src, config)
    assert status == 1
    assert rss < RSS_LIMIT_KB, f"peak RSS {rss / 1024:.0f} MiB"
    (bomb,) = [f for f in report["findings"] if f["code"] == "file-too-large"]
    assert bomb["file"].endswith("bomb.jsonl.gz")
    assert "max_expansion" in bomb["message"] and "raise max_expansion" in bomb["message"]
    assert ("text-field", "good.jsonl", 1) not in errors(report)
    assert report["summary"]["files"] == 2


def test_a_parquet_cell_bomb_is_refused_within_500_mb(tmp_path):
    bomb = ROOT / "tests/data/bombs/cell.parquet"
    assert bomb.stat().st_size < 100_000
    src = tmp_path / "src"
    src.mkdir()
    (src / "cell.parquet").write_bytes(bomb.read_bytes())
    (src / "good.jsonl").write_text(json.dumps(GOOD[1]) + "\n")
    config = tmp_path / "curate.toml"
    config.write_text('[mapping.parquet]\ntext = "abstract"\n[mapping.jsonl]\ntext = "abstract"\n')

    status, report, rss = _validate_measured(src, config)
    assert status == 1
    assert rss < RSS_LIMIT_KB, f"peak RSS {rss / 1024:.0f} MiB"
    assert errors(report) == [("record-too-large", "cell.parquet", 1)]
    (found,) = report["findings"]
    held = int(re.search(r"hold ([\d,]+) bytes", found["message"])[1].replace(",", ""))
    assert held > 600_000_000 and "raise max_file_bytes" in found["message"]
    assert report["summary"]["records"] == 1  # good.jsonl's


def test_a_file_of_more_records_than_max_records_per_file_stops_there(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    texts = [SAMPLE_TEXT + f" Variant {w}." for w in ("alpha", "beta", "gamma", "delta", "eps")]
    (src / "a.jsonl").write_text("".join(json.dumps({"abstract": t}) + "\n" for t in texts))
    (tmp_path / "curate.toml").write_text(
        'max_records_per_file = 3\n[mapping.jsonl]\ntext = "abstract"\n'
    )
    status, report = validate(src, capsys)
    assert status == 1
    assert [e for e in errors(report) if e[0] == "file-too-large"] == [
        ("file-too-large", "a.jsonl", 4)
    ]
    assert report["summary"]["records"] == 3
    (found,) = [f for f in report["findings"] if f["code"] == "file-too-large"]
    assert "more than 3 records, over max_records_per_file" in found["message"]


SAMPLE_TEXT = GOOD[0]["abstract"]


def _wide_csv(path, columns: int, repeat_last: bool = False) -> None:
    names = ["abstract", *(f"c{i}" for i in range(columns - 1))]
    if repeat_last:
        names[-1] = "c7"
    path.write_text(",".join(names) + "\n" + '"' + SAMPLE_TEXT + '"' + "," * (columns - 1) + "\n")


def test_a_header_of_a_million_columns_is_one_finding(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    _wide_csv(src / "a.csv", 1_000_000)  # 8.9 MB: the duplicate check never finished
    config = tmp_path / "curate.toml"
    config.write_text('[mapping.csv]\ntext = "abstract"\n')
    status, report, _ = _validate_measured(src, config, timeout=120)
    assert (status, errors(report)) == (1, [("invalid-row", "a.csv", 1)])
    assert "1,000,000 columns, over max_columns = 10,000" in report["findings"][0]["message"]


@pytest.mark.parametrize("repeat", [False, True])
def test_a_wide_header_without_a_column_limit_is_checked_in_one_pass(repeat, tmp_path):
    # 200,000 names, each compared with those before it, is 2e10 comparisons: the check
    # pairwise would not end within the time given here (40,000 names took 19 s).
    src = tmp_path / "src"
    src.mkdir()
    _wide_csv(src / "a.csv", 200_000, repeat_last=repeat)
    config = tmp_path / "curate.toml"
    config.write_text('max_columns = 0\n[mapping.csv]\ntext = "abstract"\n')
    proc = subprocess.run(
        [sys.executable, "-c", MEASURED, "validate", str(src), "--format", "json",
         "--config", str(config), "--no-cache"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    if repeat:
        (found,) = report["findings"]
        assert found["code"] == "invalid-row" and "names 'c7' twice" in found["message"]
    else:
        assert report["summary"]["records"] == 1
