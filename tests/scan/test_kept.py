"""A build keeps each file's scan (its result and spool of rows) in the cache folder, keyed by
the file's bytes, the settings and the code, so that a build interrupted part-way, or run again,
scans only the files it has no complete scan of, and writes the same bytes as one from scratch.

The interrupted builds are real processes, killed (SIGKILL) or interrupted (SIGINT, as Ctrl-C)
once some files' scans are kept, on the dev corpus's seven drops (7,627 real abstracts). The
other tests build the three seed drops in this process."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, SEED_FILES, all_files

import curate.scan.run
from curate.pipeline.build import build
from curate.scan import kept
from curate.scan.kept import KeptScans
from curate.settings import from_mapping
from validation.config import Config

TEMPLATE = ROOT / "dataset_card.md"
DEV_DROPS = Path("/work/shared/corpus/real-dev/drops")
# Two records of the dev corpus hold a control character: an error unless demoted, which a
# build of them needs.
DEV_CONFIG = '[tool.curate.severity]\ncontrol-char = "warning"\n'


@pytest.fixture
def scanned(monkeypatch) -> list[str]:
    """The paths of the files the scan's tasks read, in order."""
    ran: list[str] = []
    real = curate.scan.run.scan_file

    def recorded(task):
        ran.append(Path(task.path).name)
        return real(task)

    monkeypatch.setattr(curate.scan.run, "scan_file", recorded)
    return ran


def _seeds(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for seed in SEED_FILES:
        shutil.copy(seed, folder / seed.name)
    return folder


def _build(src: Path, out: Path, cache: Path | None, settings=None, warn=None):
    return build(
        [src], out, settings or from_mapping({}), engine="serial", template=TEMPLATE,
        cache_dir=cache, warn=warn,
    )  # fmt: skip


def _entries(cache: Path) -> list[Path]:
    """The complete entries kept in the cache folder (not a scan's folder before its rename)."""
    folder = cache / kept.FOLDER
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if not p.name.startswith(".") and (p / kept.RESULT).is_file()
    )


def test_a_second_build_reuses_every_scan_and_writes_the_same_bytes(tmp_path, scanned):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    said: list[str] = []
    first = build([src], tmp_path / "a", from_mapping({}), engine="serial", template=TEMPLATE,
                  cache_dir=cache, progress=said.append)  # fmt: skip
    assert sorted(scanned) == sorted(s.name for s in SEED_FILES)
    assert len(_entries(cache)) == len(SEED_FILES)
    scanned.clear()
    build([src], tmp_path / "b", from_mapping({}), engine="serial", template=TEMPLATE,
          cache_dir=cache, progress=said.append)  # fmt: skip
    assert scanned == []
    assert said.count(f"validated 3 files, {first.records_in} records") == 1  # the first
    assert f"validated 3 files, {first.records_in} records (the scans of 3 files reused)" in said
    _build(src, tmp_path / "scratch", None)
    assert all_files(tmp_path / "b") == all_files(tmp_path / "a") == all_files(tmp_path / "scratch")


def test_without_a_cache_nothing_is_kept_or_reused(tmp_path, scanned):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    _build(src, tmp_path / "a", cache)
    scanned.clear()
    _build(src, tmp_path / "b", None)  # what --no-cache gives the build
    assert len(scanned) == 3


def test_no_cache_on_the_command_line_keeps_no_scan(tmp_path):
    _seeds(tmp_path / "drops")
    cache = tmp_path / "cache"
    done = _cli(tmp_path, cache, "--out", "dist", "--no-cache")
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    assert (tmp_path / "dist" / "manifest.json").is_file() and not cache.exists()


def test_a_file_whose_name_is_not_utf8_is_kept_and_reused(tmp_path, scanned):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    with open(os.fsencode(src) + b"/caf\xe9-\xff.txt", "wb") as fh:
        fh.write(SEED_FILES[0].read_bytes())
    _build(src, tmp_path / "a", cache)
    assert len(_entries(cache)) == 4
    scanned.clear()
    _build(src, tmp_path / "b", cache)
    assert scanned == []
    assert all_files(tmp_path / "b") == all_files(tmp_path / "a")


def test_a_changed_file_is_scanned_again_and_the_others_are_not(tmp_path, scanned):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    _build(src, tmp_path / "a", cache)
    changed = src / SEED_FILES[1].name
    lines = changed.read_text(encoding="utf-8").split("\n")
    changed.write_text("\n".join(lines[:-3] + lines[-2:]), encoding="utf-8")  # a record fewer
    scanned.clear()
    again = _build(src, tmp_path / "b", cache)
    assert scanned == [changed.name]
    scratch = _build(src, tmp_path / "scratch", None)
    assert again.records_in == scratch.records_in
    assert all_files(tmp_path / "b") == all_files(tmp_path / "scratch")
    assert len(_entries(cache)) == 3  # the old scan of the changed file was pruned


def test_pruning_removes_only_the_scans_curate_kept(tmp_path):
    """A cache folder may be one the user pointed `CURATE_CACHE_DIR` at: pruning removes the
    entries a build did not use, never a file or folder it did not make."""
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    _build(src, tmp_path / "a", cache)
    theirs = cache / kept.FOLDER
    (theirs / "notes.txt").write_text("mine", encoding="utf-8")
    (theirs / "results").mkdir()
    (theirs / "results" / "run1.csv").write_text("a,b\n", encoding="utf-8")
    lookalike = theirs / ("f" * 40 + ".bak")  # a key's length, not a name curate gives
    lookalike.mkdir()
    first = _entries(cache)
    changed = src / SEED_FILES[0].name
    changed.write_text(changed.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    _build(src, tmp_path / "b", cache)  # succeeds: prunes the changed file's old scan
    assert len(_entries(cache)) == len(first) and _entries(cache) != first
    assert (theirs / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (theirs / "results" / "run1.csv").read_text(encoding="utf-8") == "a,b\n"
    assert lookalike.is_dir()


@pytest.mark.parametrize(
    "changed",
    [
        {"math": "tex"},  # the cleaning
        {"row_policy": {"markdown": "drop"}},  # which records get a row
        {"min_words": 5},  # the checks
    ],
)
def test_changed_settings_do_not_reuse_a_scan(tmp_path, scanned, changed):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    _build(src, tmp_path / "a", cache)
    scanned.clear()
    _build(src, tmp_path / "b", cache, from_mapping(changed))
    assert len(scanned) == 3
    _build(src, tmp_path / "scratch", None, from_mapping(changed))
    assert all_files(tmp_path / "b") == all_files(tmp_path / "scratch")


def test_other_code_does_not_reuse_a_scan(tmp_path, scanned, monkeypatch):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    _build(src, tmp_path / "a", cache)
    monkeypatch.setattr(kept, "_code", lambda: '{"curate": "another"}')
    scanned.clear()
    _build(src, tmp_path / "b", cache)
    assert len(scanned) == 3


def _truncate(entry: Path) -> None:
    spool = entry / kept.SPOOL
    spool.write_bytes(spool.read_bytes()[: spool.stat().st_size // 2])


def _flip(entry: Path) -> None:  # the same size, one byte other
    spool = entry / kept.SPOOL
    data = bytearray(spool.read_bytes())
    data[len(data) // 2] ^= 0x20
    spool.write_bytes(bytes(data))


def _garble(entry: Path) -> None:
    (entry / kept.RESULT).write_text("not json", encoding="utf-8")


def _plant(entry: Path) -> None:  # a spool file more than the entry lists
    spool = entry / kept.SPOOL
    spool.rename(entry / "x")
    spool.mkdir()
    (entry / "x").rename(spool / "00000.arrow")
    shutil.copy(spool / "00000.arrow", spool / "00001.arrow")


@pytest.mark.parametrize("damage", [_truncate, _flip, _garble, _plant])
def test_a_damaged_entry_is_set_aside_in_one_line_and_its_file_scanned_again(
    tmp_path, scanned, damage
):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    _build(src, tmp_path / "a", cache)
    entry = _entries(cache)[0]
    damage(entry)
    scanned.clear()
    warned: list[str] = []
    _build(src, tmp_path / "b", cache, warn=warned.append)
    assert len(scanned) == 1
    assert len(warned) == 1 and "\n" not in warned[0]
    assert warned[0].startswith("kept scan of ") and "damaged" in warned[0]
    assert f"set aside as {entry}.damaged" in warned[0]
    assert all_files(tmp_path / "b") == all_files(tmp_path / "a")
    # The next successful build kept what it scanned again; what was set aside is pruned.
    assert len(_entries(cache)) == 3 and not Path(f"{entry}.damaged").exists()


def test_a_successful_build_keeps_only_its_own_scans(tmp_path):
    cache = tmp_path / "cache"
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    shutil.copy(SEED_FILES[0], one / SEED_FILES[0].name)
    shutil.copy(SEED_FILES[1], two / SEED_FILES[1].name)
    _build(one, tmp_path / "a", cache)
    first = _entries(cache)
    _build(two, tmp_path / "b", cache)
    assert len(_entries(cache)) == 1 and _entries(cache) != first
    assert sorted(p.name for p in (cache / kept.FOLDER).iterdir()) == sorted(
        [kept.LOCK, _entries(cache)[0].name]
    )


def test_no_entry_is_pruned_while_another_build_uses_the_folder(tmp_path):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    _build(src, tmp_path / "a", cache)
    other = KeptScans(cache, Config(), {}, print)  # another build, running: a shared lock
    try:
        one = tmp_path / "one"
        one.mkdir()
        shutil.copy(SEED_FILES[0], one / SEED_FILES[0].name)
        _build(one, tmp_path / "b", cache)
        assert len(_entries(cache)) == 4  # none removed: the three, and its own
    finally:
        other.close()
    _build(one, tmp_path / "c", cache)
    assert len(_entries(cache)) == 1


def test_a_file_read_in_parts_is_kept_and_reused_as_the_whole(tmp_path, scanned):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "tests" / "data" / "formats_sample.jsonl", src / "records.jsonl")
    fields = {"text": "abstract", "id": "id", "title": "title"}
    settings = from_mapping({"mapping": {"jsonl": fields}, "split_bytes": 8_000})
    cache = tmp_path / "cache"
    _build(src, tmp_path / "a", cache, settings)
    assert len(scanned) > 5  # in parts
    (entry,) = _entries(cache)
    assert len(list((entry / kept.SPOOL).glob("*.arrow"))) > 5
    scanned.clear()
    _build(src, tmp_path / "b", cache, settings)
    assert scanned == []
    _build(src, tmp_path / "whole", None, from_mapping({"mapping": {"jsonl": fields}}))
    assert all_files(tmp_path / "b") == all_files(tmp_path / "a") == all_files(tmp_path / "whole")


# --- a real build process, interrupted ---------------------------------------------------------
def _cli(cwd: Path, cache: Path, *args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "CURATE_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-m", "curate.cli", "build", "drops", "--engine", "serial", *args],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw,
    )  # fmt: skip


def _dev_project(tmp_path: Path) -> Path:
    if not DEV_DROPS.is_dir():
        pytest.fail(f"the dev corpus is missing: {DEV_DROPS}")
    project = tmp_path / "project"
    shutil.copytree(DEV_DROPS, project / "drops")
    for f in (project / "drops").iterdir():
        f.chmod(0o644)
    (project / "pyproject.toml").write_text(DEV_CONFIG, encoding="utf-8")
    return project


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_a_build_interrupted_part_way_resumes_with_only_the_missing_files(tmp_path, how):
    project, cache = _dev_project(tmp_path), tmp_path / "cache"
    files = len(list((project / "drops").iterdir()))
    # A background shell's child ignores SIGINT: this one takes it as a terminal's Ctrl-C.
    child = _cli(project, cache, "--out", "dist",
                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 300
    while not _entries(cache) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    child.send_signal(how)
    _, err = child.communicate(timeout=120)
    assert child.returncode == (-9 if how == signal.SIGKILL else 130), err
    assert "Traceback" not in err
    done = len(_entries(cache))
    assert 1 <= done < files, "the build was stopped part-way through the scan"
    assert not (project / "dist").exists()
    leftovers = [p.name for p in (cache / kept.FOLDER).iterdir() if p.name.startswith(kept.TMP)]
    if how == signal.SIGINT:
        assert leftovers == []  # an interrupted build removes its unfinished spools

    again = _cli(project, cache, "--out", "dist")
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert f"(the scans of {done} files reused)" in err or (
        done == 1 and "(the scans of 1 file reused)" in err
    )
    scratch = _cli(project, cache, "--out", "scratch", "--no-cache")
    _, err = scratch.communicate(timeout=600)
    assert scratch.returncode == 0, err
    assert all_files(project / "dist") == all_files(project / "scratch")
    entries = sorted(p.name for p in (cache / kept.FOLDER).iterdir())
    assert len(entries) == files + 1 and kept.LOCK in entries  # the rest pruned


class _Remote:
    """An engine whose tasks might run elsewhere: it has a preflight, which records the work
    folders it is asked to check, and runs the tasks here."""

    name = "remote"
    workers = 1

    def __init__(self) -> None:
        self.work: list[Path | None] = []

    def preflight(self, roots, work) -> None:
        self.work.append(Path(work) if work is not None else None)

    def map(self, fn, tasks, *, ahead=None):
        return (fn(task) for task in tasks)

    def close(self) -> None:
        pass


def test_the_preflight_checks_the_folder_the_tasks_spool_into(tmp_path):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    remote = _Remote()
    build([src], tmp_path / "a", from_mapping({}), engine=remote, template=TEMPLATE,
          cache_dir=cache)  # fmt: skip
    assert len(remote.work) == 2
    assert remote.work[0] is not None and remote.work[0].name.startswith(".rows-")  # the stage's
    assert remote.work[1] == cache / kept.FOLDER


def test_a_cache_folder_that_cannot_hold_scans_is_one_warning_and_the_build_goes_on(tmp_path):
    src, cache = _seeds(tmp_path / "src"), tmp_path / "cache"
    cache.mkdir()
    (cache / kept.FOLDER).write_text("a file where the folder would be", encoding="utf-8")
    warned: list[str] = []
    _build(src, tmp_path / "a", cache, warn=warned.append)
    assert [w for w in warned if w.startswith("cannot keep scans in")] == warned
    assert len(warned) == 1
    assert (cache / kept.FOLDER).read_text(encoding="utf-8").startswith("a file")
    _build(src, tmp_path / "scratch", None)
    assert all_files(tmp_path / "a") == all_files(tmp_path / "scratch")
