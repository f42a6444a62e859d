"""Filesystem and process safety: where a build may write, what it reads, the cache, workers.

Every refusal test checks that every byte that was there before is still there afterwards.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, SEED_FILES, SOURCES

import curate.dataset.describe
import curate.pipeline.build
import curate.pipeline.validate
import curate.scan.run
from curate.cli import main
from curate.ingest.discover import discover
from curate.ingest.formats.text import parse_file
from curate.pipeline.validate import validate_paths
from curate.release import output as export
from curate.settings import Settings
from validation.config import Config

PARQUET = "data/train-00000-of-00001.parquet"
TEMPLATE = ROOT / "dataset_card.md"


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder`` with its bytes (None for a folder)."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def seeds(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for seed in SEED_FILES:
        shutil.copy(seed, folder / seed.name)
    return folder


def build_cli(*args: str) -> int:
    return main(["build", *args, "--template", str(TEMPLATE), "--no-cache"])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A build of the seeds, to copy as "the previous build"."""
    out = tmp_path_factory.mktemp("built") / "dist"
    assert build_cli(str(SOURCES), "--out", str(out)) == 0
    return out


# --- 1. the output folder is ours or empty -------------------------------------------------------
def test_folder_with_a_users_file_is_refused_and_kept(tmp_path, capsys):
    src = seeds(tmp_path / "src")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    (out / "data").mkdir()
    (out / "data" / "notes.md").write_text("more")
    before = snapshot(tmp_path)
    assert build_cli(str(src), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "thesis.tex" in err and "not from a curate build" in err
    assert snapshot(tmp_path) == before


def test_force_moves_a_users_folder_aside_and_keeps_it(tmp_path, capsys):
    src = seeds(tmp_path / "src")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    assert build_cli(str(src), "--out", str(out), "--force") == 0
    assert (tmp_path / "mine.replaced-1" / "thesis.tex").read_text() == "years of work"
    assert (out / "manifest.json").is_file() and not (out / "thesis.tex").exists()
    assert "mine.replaced-1" in capsys.readouterr().err


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_current_folder_and_its_parent_are_refused_even_with_force(
    tmp_path, monkeypatch, capsys, force
):
    src = seeds(tmp_path / "src")
    work = tmp_path / "checkout"
    (work / ".git").mkdir(parents=True)
    (work / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / "code.py").write_text("print('hi')\n")
    monkeypatch.chdir(work)
    before = snapshot(tmp_path)
    for out in (".", "..", str(work), str(tmp_path), "/"):
        assert build_cli(str(src), "--out", out, *force) == 2
        err = capsys.readouterr().err
        assert "current folder" in err and "even with --force" in err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_empty_out_is_refused_even_with_force(tmp_path, monkeypatch, capsys, force):
    src = seeds(tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("mine")
    before = snapshot(tmp_path)
    assert build_cli(str(src), "--out", "", *force) == 2
    assert "empty" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_source_folder_and_a_folder_holding_it_are_refused(tmp_path, capsys, force):
    src = seeds(tmp_path / "project" / "src")
    before = snapshot(tmp_path)
    for out in (src, tmp_path / "project", src / "dist"):
        assert build_cli(str(src), "--out", str(out), *force) == 2
        assert "source" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_out_that_is_a_file_or_under_one_is_refused_before_validation(
    tmp_path, monkeypatch, capsys
):
    src = seeds(tmp_path / "src")
    (tmp_path / "file").write_text("x")

    def never(*a, **k):
        raise AssertionError("validation must not start")

    monkeypatch.setattr(curate.pipeline.build, "validate_paths", never)
    assert build_cli(str(src), "--out", str(tmp_path / "file")) == 2
    assert build_cli(str(src), "--out", str(tmp_path / "file" / "dist")) == 2
    assert build_cli(str(src), "--out", str(tmp_path / "ok"), "--version", "1.x") == 2
    err = capsys.readouterr().err
    assert "is a file" in err and "under the file" in err and "1.x" in err
    assert (tmp_path / "file").read_text() == "x" and not (tmp_path / "ok").exists()


def test_rebuilding_into_the_previous_build_works_and_leaves_nothing_beside(built, tmp_path):
    out = tmp_path / "dist"
    shutil.copytree(built, out)
    before = snapshot(out)
    assert build_cli(str(SOURCES), "--out", str(out)) == 0
    assert snapshot(out) == before  # same sources: byte-identical
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]


def test_a_previous_build_edited_by_hand_is_no_longer_ours(built, tmp_path, capsys):
    out = tmp_path / "dist"
    shutil.copytree(built, out)
    (out / "README.md").write_text("my own notes on this dataset")
    before = snapshot(tmp_path)
    assert build_cli(str(SOURCES), "--out", str(out)) == 2
    assert "README.md (changed since the build)" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_a_second_build_into_a_locked_folder_is_refused(tmp_path, capsys):
    src = seeds(tmp_path / "src")
    out = tmp_path / "dist"
    with export.output_lock(out.absolute()):
        assert build_cli(str(src), "--out", str(out)) == 2
    assert "another curate build" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]  # the lock file is gone too


KILL_BETWEEN_RENAMES = """
import os, signal, sys
import curate.release.output as export
real = os.rename
def rename(a, b):
    real(a, b)
    if ".old-" in str(b):
        os.kill(os.getpid(), signal.SIGKILL)  # between the two renames of the swap
export.os.rename = rename
from curate.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_kill_between_the_two_renames_is_recovered(built, tmp_path, capsys):
    out = tmp_path / "dist"
    shutil.copytree(built, out)
    before = snapshot(out)
    args = ["build", str(SOURCES), "--out", str(out), "--template", str(TEMPLATE), "--no-cache"]
    args += ["--version", "2.0.0"]
    done = subprocess.run([sys.executable, "-c", KILL_BETWEEN_RENAMES, *args], cwd=ROOT)
    assert done.returncode == -signal.SIGKILL
    assert not out.exists()  # the state a kill there leaves: the previous build set aside
    aside = [p.name for p in tmp_path.iterdir() if p.name.startswith(".dist.")]
    assert any(".old-" in n for n in aside) and any(".build-" in n for n in aside)
    # a folder with the staging name but no marker is not ours: it stays
    (tmp_path / ".dist.build-theirs").mkdir()
    (tmp_path / ".dist.build-theirs" / "x").write_text("theirs")

    export.recover(out.absolute(), lambda _m: None)
    assert snapshot(out) == before
    # a SIGKILL runs no cleanup: the lock file stays, and the next build takes it over
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".dist.build-theirs",
        ".dist.lock",
        "dist",
    ]

    assert build_cli(str(SOURCES), "--out", str(out), "--version", "2.0.0") == 0
    assert json.loads((out / "manifest.json").read_text())["version"] == "2.0.0"
    assert (tmp_path / ".dist.build-theirs" / "x").read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dist.build-theirs", "dist"]


def test_ctrl_c_during_the_build_leaves_nothing_behind(built, tmp_path, monkeypatch, capsys):
    out = tmp_path / "dist"
    shutil.copytree(built, out)
    before = snapshot(tmp_path)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(curate.dataset.describe, "write_croissant", interrupted)
    assert build_cli(str(SOURCES), "--out", str(out), "--version", "3.0.0") == 130
    assert "interrupted" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


# --- 2. inputs -----------------------------------------------------------------------------------
def drop_text(abstract: str) -> str:
    return f"ICML 2025 Papers\n\n{abstract}\n"


SEED_ABSTRACT = SEED_FILES[0].read_text(encoding="utf-8").split("\n")[2]


def test_drops_are_found_in_subfolders_and_named_relative_to_the_folder(tmp_path):
    root = tmp_path / "drops"
    for sub in ("b", "a", "a/deeper"):
        (root / sub).mkdir(parents=True)
        (root / sub / "x.txt").write_bytes(SEED_FILES[0].read_bytes())
    (root / "a" / "notes.md").write_text("not a drop")
    found = discover([root])
    assert [f.name for f in found] == ["a/deeper/x.txt", "a/x.txt", "b/x.txt"]
    assert [f.name for f in discover([root], ("deeper",))] == ["a/x.txt", "b/x.txt"]
    assert [f.name for f in discover([root], ("b/*",))] == ["a/deeper/x.txt", "a/x.txt"]


def test_symlinks_are_followed_only_inside_the_folders(tmp_path):
    root = tmp_path / "drops"
    root.mkdir()
    secret = tmp_path / "outside.txt"
    secret.write_text(drop_text("root:x:0:0:root:/root:/bin/bash " * 5))
    (root / "real.txt").write_bytes(SEED_FILES[0].read_bytes())
    (root / "inside.txt").symlink_to(root / "real.txt")
    (root / "evil.txt").symlink_to(secret)
    (root / "gone.txt").symlink_to(tmp_path / "missing.txt")
    (root / "loop.txt").symlink_to(root / "loop.txt")
    (root / "up").symlink_to(tmp_path)  # a folder outside
    run = validate_paths([root], Config())
    by_file = {Path(f.file).name: f.code for f in run.report if f.line == 0}
    assert by_file == {
        "evil.txt": "outside-link",
        "gone.txt": "unreadable",
        "loop.txt": "unreadable",
        "up": "outside-link",
    }
    texts = [r.text for f in ("inside.txt", "real.txt") for r in parse_file(root / f).records]
    assert not any("root:x:0:0" in t for t in texts)
    assert {r.path for r in run.files} >= {(root / "inside.txt").as_posix()}


def test_a_fifo_and_a_device_are_unreadable_and_never_opened(tmp_path):
    root = tmp_path / "drops"
    root.mkdir()
    (root / "real.txt").write_bytes(SEED_FILES[0].read_bytes())
    os.mkfifo(root / "pipe.txt")  # opening it for reading would block forever
    (root / "zero.txt").symlink_to("/dev/zero")
    started = time.monotonic()
    report = validate_paths([root, "/dev/null"], Config(max_file_bytes=0)).report
    assert time.monotonic() - started < 30
    codes = {(Path(f.file).name, f.code) for f in report if f.line == 0}
    assert ("pipe.txt", "unreadable") in codes
    assert ("null", "unreadable") in codes
    assert ("zero.txt", "outside-link") in codes  # /dev is outside the folder given
    assert parse_file(Path("/dev/zero")).findings[0].message.startswith("not a regular file")


def test_a_folder_with_no_drops_is_an_error_for_validate_and_build(tmp_path, capsys):
    empty = tmp_path / "moved"
    empty.mkdir()
    (empty / "README.md").write_text("the drops moved elsewhere")
    assert main(["validate", str(empty)]) == 2
    assert build_cli(str(empty), "--out", str(tmp_path / "dist")) == 2
    err = capsys.readouterr().err
    assert err.count("no sources (*.txt, *.jsonl, *.jsonl.gz, *.json, *.csv, *.tsv,") == 2
    assert not (tmp_path / "dist").exists()


def test_a_file_name_that_is_not_utf8_works_in_validate_and_build(tmp_path, capsys):
    src = seeds(tmp_path / "src")
    raw = os.fsencode(src) + b"/caf\xe9-\xff.txt"
    with open(raw, "wb") as fh:
        fh.write(SEED_FILES[0].read_bytes())
    report_file = tmp_path / "report.json"
    assert main(["validate", str(src), "--json", str(report_file), "--no-cache"]) == 0
    report = json.loads(report_file.read_text(encoding="utf-8"))
    assert any(f["file"].endswith(r"/caf\xe9-\xff.txt") for f in report["findings"])
    assert "caf" in capsys.readouterr().out
    out = tmp_path / "dist"
    assert build_cli(str(src), "--out", str(out)) == 0
    names = {s["name"] for s in json.loads((out / "manifest.json").read_text())["sources"]}
    assert r"caf\xe9-\xff.txt" in names


# --- 3. limits -----------------------------------------------------------------------------------
def test_file_larger_than_max_file_bytes_is_an_error_and_not_read(tmp_path):
    root = seeds(tmp_path / "drops")
    big = root / "zz_big.txt"
    limit = max(seed.stat().st_size for seed in SEED_FILES)
    big.write_text("ICML 2025 Papers\n\n" + "word " * (limit // 5))
    config = Config(max_file_bytes=limit)
    report = validate_paths([root], config).report
    found = [f for f in report if f.code == "file-too-large"]
    assert [(Path(f.file).name, f.line, f.severity) for f in found] == [("zz_big.txt", 0, "error")]
    assert f"{big.stat().st_size:,} bytes" in found[0].message
    assert f"max_file_bytes = {limit:,}" in found[0].message
    assert not parse_file(big, config).records


def test_record_longer_than_max_record_chars_is_an_error_and_not_a_row(tmp_path):
    root = tmp_path / "drops"
    root.mkdir()
    limit = len(SEED_ABSTRACT) + 10
    long_one = "a " * (limit // 2) + "end."
    (root / "x.txt").write_text(drop_text(SEED_ABSTRACT) + "\n" + long_one + "\n")
    config = Config(max_record_chars=limit)
    parsed = parse_file(root / "x.txt", config)
    assert [r.line for r in parsed.records] == [3]
    found = [f for f in validate_paths([root], config).report if f.code == "record-too-large"]
    assert [(f.line, f.severity) for f in found] == [(5, "error")]
    with pytest.raises(curate.pipeline.build.BuildRefused):
        settings = Settings(checks=config)
        curate.pipeline.build.build([root], tmp_path / "dist", settings, template=TEMPLATE)
    assert not (tmp_path / "dist").exists()


# --- 4. outputs do not depend on where the sources lived ------------------------------------------
def test_the_same_drops_in_another_folder_give_a_byte_identical_build(tmp_path):
    outs = []
    for where in ("one/place", "somewhere/else/entirely"):
        src = tmp_path / where / "sources"
        shutil.copytree(SOURCES, src)
        (src / "sub").mkdir()
        shutil.copy(SEED_FILES[0], src / "sub" / SEED_FILES[0].name)  # duplicates, by path
        out = tmp_path / where / "dist"
        assert build_cli(str(src), "--out", str(out)) == 0
        outs.append(out)
    assert snapshot(outs[0]) == snapshot(outs[1])
    for content in snapshot(outs[0]).values():
        assert content is None or str(tmp_path).encode() not in content
    report = json.loads((outs[0] / "validation-report.json").read_text())
    related = {f.get("related", "").rpartition(":")[0] for f in report["findings"]}
    assert f"sub/{SEED_FILES[0].name}" in {f["file"] for f in report["findings"]}
    assert SEED_FILES[0].name in related
    rows = pq.read_table(outs[0] / PARQUET).to_pylist()
    files = {s["file"] for r in rows for s in r["sources"]}
    assert {SEED_FILES[0].name, f"sub/{SEED_FILES[0].name}"} <= files


# --- 7. the cache holds data, not code -----------------------------------------------------------
class Planted:
    def __reduce__(self):
        return (os.system, (f"touch {os.environ['PLANTED_MARKER']}",))


def test_a_planted_pickle_executes_nothing_and_changes_nothing(tmp_path, monkeypatch):
    root = seeds(tmp_path / "drops")
    (root / "broken.txt").write_text(drop_text("Broken \x00 record with a NUL byte."))
    cache = tmp_path / "cache"
    clean = validate_paths([root], Config(), cache_dir=cache).report
    marker = tmp_path / "executed"
    monkeypatch.setenv("PLANTED_MARKER", str(marker))
    payload = pickle.dumps(Planted())
    with sqlite3.connect(cache / "validation.sqlite") as db:
        db.execute("UPDATE entries SET v = ?", (payload,))
    warnings: list[str] = []
    again = validate_paths([root], Config(), cache_dir=cache, warn=warnings.append)
    assert not marker.exists()
    assert again.cache_hits == 0 and warnings
    assert [f.to_dict() for f in again.report] == [f.to_dict() for f in clean]
    assert any(f.code == "control-char" for f in again.report)


def test_an_entry_edited_without_its_checksum_is_a_miss(tmp_path):
    root = tmp_path / "drops"
    root.mkdir()
    (root / "broken.txt").write_text(drop_text("Broken \x00 record with a NUL byte " * 5))
    cache = tmp_path / "cache"
    first = validate_paths([root], Config(), cache_dir=cache).report
    with sqlite3.connect(cache / "validation.sqlite") as db:
        for key, value in db.execute("SELECT k, v FROM entries").fetchall():
            entry = json.loads(value)
            entry["findings"] = []  # "this broken file is clean"
            db.execute("UPDATE entries SET v = ? WHERE k = ?", (json.dumps(entry), key))
    again = validate_paths([root], Config(), cache_dir=cache, warn=lambda _m: None)
    assert again.cache_hits == 0
    assert [f.to_dict() for f in again.report] == [f.to_dict() for f in first]


def test_a_read_only_cache_is_used_read_only(tmp_path, monkeypatch):
    root = seeds(tmp_path / "drops")
    cache = tmp_path / "cache"
    validate_paths([root], Config(), cache_dir=cache)
    before = snapshot(cache)
    # The tests run as root, whom permission bits do not stop: make the cache look read-only.
    real_access = os.access
    monkeypatch.setattr(
        "curate.scan.cache.os.access",
        lambda p, mode: False if mode == os.W_OK else real_access(p, mode),
    )
    (root / "new.txt").write_text(drop_text(SEED_ABSTRACT.replace("We ", "Here we ", 1)))
    warnings: list[str] = []
    run = validate_paths([root], Config(), cache_dir=cache, warn=warnings.append)
    assert warnings == [] and run.cache_hits >= len(SEED_FILES)
    assert snapshot(cache) == before  # not renamed, not written


# --- 5. workers ----------------------------------------------------------------------------------
ORPHAN = """
import os, signal, sys, time
from curate.engine.local import LocalPool
workers = LocalPool(2)
pool = workers.pool()
pids = [pool.submit(os.getpid).result() for _ in range(4)]
print(" ".join(str(p) for p in set(pids)), flush=True)
pool.submit(time.sleep, 600)
time.sleep(0.5)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="parent-death signal is Linux only")
def test_workers_die_with_the_main_process(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == -signal.SIGKILL
    pids = [int(p) for p in done.stdout.split()]
    assert pids
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


CTRL_C = """
import os, signal, time
from curate.engine.local import LocalPool
workers = LocalPool(2)
pool = workers.pool()
pids = sorted({pool.submit(os.getpid).result() for _ in range(8)})
busy = pool.submit(time.sleep, 1.0)  # one worker at work, the other waiting in the queue
time.sleep(0.3)
try:
    os.killpg(0, signal.SIGINT)  # what Ctrl-C in a terminal does: every process of the group
    time.sleep(5)
except KeyboardInterrupt:
    workers.close()
    print("closed", busy.done(), *pids, flush=True)
"""


@pytest.mark.slow
def test_ctrl_c_stops_the_run_from_the_main_process_and_the_workers_say_nothing():
    """The workers ignore Ctrl-C: interrupted in the pool's queue, each printed a traceback, and
    one interrupted while it held the queue's lock left the others waiting, so that a build hung
    at exit. The main process closes the pool: the running task finishes, the workers end."""
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C], cwd=ROOT, capture_output=True, text=True, timeout=60,
        start_new_session=True,  # its own process group, which the script interrupts
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    word, finished, *pids = done.stdout.split()
    assert word == "closed" and finished == "True" and pids
    assert not any(_alive(int(p)) for p in pids)


TWICE = """
import os, signal, sys, time
from pathlib import Path
from curate.release.output import staged_folder
out = Path(sys.argv[1]) / "dist"
calls = []
def close_pool():
    calls.append(len(calls))
    if len(calls) == 1:  # the copy of the Ctrl-C that `uv run` passes on, while we abort
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
try:
    with staged_folder(out, on_abort=close_pool) as stage:
        (stage / ".rows-x").mkdir()
        (stage / ".rows-x" / "0000001.arrow").write_bytes(b"rows")
        os.kill(os.getpid(), signal.SIGINT)  # the terminal's Ctrl-C
        time.sleep(5)
except KeyboardInterrupt:
    print("interrupted", len(calls), *sorted(p.name for p in out.parent.iterdir()), flush=True)
"""


def test_a_second_ctrl_c_while_the_build_aborts_still_removes_its_staging_folder(tmp_path):
    """Under `uv run` a Ctrl-C reaches the build twice (the terminal's and the one uv passes
    on), the second while the first is handled: the abort stopped there, and the staging folder
    (5.5 MB of rows on the dev corpus's drops) stayed beside dist."""
    done = subprocess.run(
        [sys.executable, "-c", TWICE, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.split() == ["interrupted", "2"]  # the pool closed; nothing left behind


def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_killed_worker_is_one_line_and_exit_3(tmp_path, monkeypatch, capsys):
    root = seeds(tmp_path / "drops")
    monkeypatch.setattr(curate.scan.run, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(curate.scan.run, "scan_file", die)
    assert main(["validate", str(root), "--jobs", "2", "--force-jobs", "--no-cache"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "worker process died" in err and "Traceback" not in err


def test_jobs_are_capped_at_the_cpus_unless_forced(tmp_path, monkeypatch, capsys):
    root = seeds(tmp_path / "drops")
    seen = []
    real = curate.pipeline.validate.validate_paths

    def spy(paths, config, **kw):
        seen.append(kw["jobs"])
        return real(paths, config, **{**kw, "jobs": 1})

    monkeypatch.setattr(curate.pipeline.validate, "validate_paths", spy)
    monkeypatch.setattr("curate.engine.default_jobs", lambda: 2)
    assert main(["validate", str(root), "--jobs", "32"]) == 0
    assert main(["validate", str(root), "--jobs", "32", "--force-jobs"]) == 0
    assert seen == [2, 32]
    assert "--jobs 32 capped at 2" in capsys.readouterr().err


def test_validate_output_that_is_a_folder_or_under_a_file_is_refused_before_work(
    tmp_path, monkeypatch, capsys
):
    root = seeds(tmp_path / "drops")
    (tmp_path / "file").write_text("x")

    def never(*a, **k):
        raise AssertionError("validation must not start")

    monkeypatch.setattr(curate.pipeline.validate, "validate_paths", never)
    assert main(["validate", str(root), "--output", str(tmp_path)]) == 2
    assert main(["validate", str(root), "--output", str(tmp_path / "file" / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and "under the file" in err
    assert (tmp_path / "file").read_text() == "x"


def test_exclude_on_the_command_line_adds_to_the_config(tmp_path, capsys):
    root = seeds(tmp_path / "drops")
    (root / "drafts").mkdir()
    (root / "drafts" / "bad.txt").write_text("not a header\n\nBroken \x00 record.\n")
    (tmp_path / "curate.toml").write_text('exclude = ["nothing-*"]\n')
    config = ["--config", str(tmp_path / "curate.toml"), "--no-cache"]
    assert main(["validate", str(root), *config]) == 1
    assert "drafts/bad.txt" in capsys.readouterr().out
    assert main(["validate", str(root), *config, "--exclude", "drafts"]) == 0
    assert "bad.txt" not in capsys.readouterr().out


SLOW_PARALLEL_BUILD = """
import sys, time
import curate.dataset.assemble as assemble, curate.scan.run as validate
assemble.PARALLEL_MIN_RECORDS = 0
assemble.TASK_ROWS = 1  # a task per file
validate.PARALLEL_MIN_BYTES = 0
real = assemble.rows_of_files
def slow(*args):
    time.sleep(0.5)  # workers still writing into the staging folder when Ctrl-C comes
    return real(*args)
assemble.rows_of_files = slow
from curate.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_sigint_while_workers_write_leaves_the_old_build_and_no_traceback(built, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(6):  # six files: six slow worker tasks
        shutil.copy(SEED_FILES[i % len(SEED_FILES)], src / f"{i}.txt")
    out = tmp_path / "dist"
    shutil.copytree(built, out)
    before = snapshot(tmp_path)
    args = ["build", str(src), "--out", str(out), "--template", str(TEMPLATE), "--no-cache"]
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_PARALLEL_BUILD, *args, "--jobs", "2", "--force-jobs"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        # as a terminal starts it: a shell without job control starts a background command
        # with SIGINT ignored, and Python keeps that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "deduplicated" in line:  # validation done: the workers now write rows
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)  # the main process only, as `kill -INT` does
            break
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 130
    assert "Traceback" not in err and "interrupted" in err
    assert snapshot(tmp_path) == before
