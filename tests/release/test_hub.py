"""A Hub that is unreachable, silent, not a Hub, or switched off: one line each, in bounded time.

Each failure is served for real on 127.0.0.1 (``hubserver.BrokenHub``) and reached through the
real huggingface_hub client, for the commands that talk to the Hub: ``publish``,
``diff hub:…``, ``build --previous hub:…`` and a source ``hf://datasets/…``. The deadline is
set small through the documented environment variables, and each command must end within it
(plus the start-up of the command).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace
from pathlib import Path

import hubserver
import pytest
from conftest import ROOT, SEED_FILES
from hubserver import BrokenHub

from curate.cli import main
from curate.pipeline.build import build
from curate.settings import Settings

REPO = "org/name"
TIMEOUT, DEADLINE = 1.0, 3.0
SLACK = 3.0  # start-up, imports and one last request's clean-up, on a busy machine


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hubfail")
    src = root / "src"
    src.mkdir()
    for seed in SEED_FILES:
        shutil.copy(seed, src / seed.name)
    build(
        [src], root / "dist", replace(Settings(), repo_id=REPO), template=ROOT / "dataset_card.md"
    )
    return root


def commands(release: Path, tmp_path: Path) -> dict[str, list[str]]:
    return {
        "publish": ["publish", str(release / "dist"), "--repo-id", REPO],
        "diff": ["diff", f"hub:{REPO}@v1.0.0", str(release / "dist")],
        "build": [
            "build",
            str(release / "src"),
            "--out",
            str(tmp_path / "out"),
            "--previous",
            f"hub:{REPO}",
        ],
        "source": ["validate", f"hf://datasets/{REPO}", "--no-cache"],
    }


@pytest.fixture
def broken(request, tmp_path, monkeypatch):
    with BrokenHub(request.param) as server:
        hubserver.patch_clients(monkeypatch, server, tmp_path / "hf_home")  # type: ignore[arg-type]
        hubserver.block_network(monkeypatch)
        hubserver._reset_client_state()
        monkeypatch.setenv("CURATE_HUB_TIMEOUT", str(TIMEOUT))
        monkeypatch.setenv("CURATE_HUB_DEADLINE", str(DEADLINE))
        yield server
        hubserver._reset_client_state()


def run(argv: list[str], capsys) -> tuple[int, str, float]:
    started = time.monotonic()
    code = main(argv)
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # progress lines ("curate: reading …: retry 1/5") may come first; the failure is one line
    lines = [line for line in err.splitlines() if line.startswith("curate: error")]
    assert len(lines) == 1 and err.endswith(lines[0] + "\n"), err
    return code, lines[0], elapsed


COMMANDS = ["publish", "diff", "build", "source"]


@pytest.mark.parametrize("broken", ["refused"], indirect=True)
@pytest.mark.parametrize("command", COMMANDS)
def test_connection_refused(broken, release, tmp_path, capsys, command):
    code, line, elapsed = run(commands(release, tmp_path)[command], capsys)
    assert code == 1 and elapsed < DEADLINE + SLACK
    assert line.startswith("curate: error: ") and "ConnectError" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("broken", ["silent"], indirect=True)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_server_that_never_answers(broken, release, tmp_path, capsys, command):
    code, line, elapsed = run(commands(release, tmp_path)[command], capsys)
    assert code == 1 and elapsed < DEADLINE + SLACK
    assert broken.accepted >= 1  # it was reached, and said nothing
    assert "ReadTimeout" in line and "deadline" in line and "CURATE_HUB_DEADLINE" in line


@pytest.mark.parametrize("broken", ["html"], indirect=True)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_server_answering_html(broken, release, tmp_path, capsys, command):
    code, line, elapsed = run(commands(release, tmp_path)[command], capsys)
    assert code == 1 and elapsed < DEADLINE + SLACK
    assert "the server's answer is not JSON (is HF_ENDPOINT a Hub?)" in line


@pytest.mark.parametrize("broken", ["html"], indirect=True)
@pytest.mark.parametrize("command", COMMANDS)
def test_offline_mode_is_one_line_and_no_request(
    broken, release, tmp_path, capsys, monkeypatch, command
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, line, _ = run(commands(release, tmp_path)[command], capsys)
    assert code == 1 and "HF_HUB_OFFLINE is set" in line
    assert broken.accepted == 0


@pytest.mark.parametrize("broken", ["refused"], indirect=True)
@pytest.mark.parametrize("value", ["soon", "0", "-3", "nan"])
def test_a_bad_deadline_is_a_usage_error(broken, release, tmp_path, capsys, monkeypatch, value):
    monkeypatch.setenv("CURATE_HUB_DEADLINE", value)
    code, line, _ = run(commands(release, tmp_path)["publish"], capsys)
    assert code == 2 and f"CURATE_HUB_DEADLINE={value!r}" in line


@pytest.mark.parametrize(
    "manifest, message",
    [
        ("[]", "is not a JSON object"),
        ('{"files": ["data/x.parquet"]}', "`files` is not an object"),
        ('{"files": {"data/x.parquet": "abc"}}', "lists data/x.parquet without a sha256"),
        ('{"files": {"../x.parquet": {"sha256": "00"}}}', "'../x.parquet' leaves the folder"),
        ('{"files": {"/tmp/x.parquet": {"sha256": "00"}}}', "is an absolute path"),
    ],
)
def test_manifests_of_the_wrong_shape(release, tmp_path, capsys, manifest, message):
    folder = tmp_path / "odd"
    shutil.copytree(release / "dist", folder)
    (folder / "manifest.json").write_text(manifest)
    for argv, code in (
        (["diff", str(folder), str(release / "dist")], 1),
        (
            [
                "build",
                str(release / "src"),
                "--out",
                str(tmp_path / "o"),
                "--previous",
                str(folder),
            ],
            1,
        ),
        (["publish", str(folder), "--repo-id", REPO, "--dry-run"], 1),
    ):
        assert main(argv) == code
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("\n") == 1, err
        if argv[0] != "publish":
            assert message in err
        else:
            assert "publish refused" in err
    assert json.loads((release / "dist" / "manifest.json").read_text())["version"] == "1.0.0"


class _Nowhere:
    url = "http://hub.curate-test.invalid"  # .invalid never resolves (RFC 2606)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_host_that_does_not_resolve_fails_at_once_in_one_line(
    release, tmp_path, capsys, monkeypatch, command
):
    """No retries for a name that does not resolve (a machine offline, a typo in HF_ENDPOINT):
    one line at once, even for publish --dry-run."""
    hubserver.patch_clients(monkeypatch, _Nowhere(), tmp_path / "hf_home")  # type: ignore[arg-type]
    hubserver.block_network(monkeypatch)
    hubserver._reset_client_state()
    argv = commands(release, tmp_path)[command]
    if command == "publish":
        argv = [*argv, "--dry-run"]
    try:
        code, line, elapsed = run(argv, capsys)
    finally:
        hubserver._reset_client_state()
    assert (code, elapsed < SLACK) == (1, True), line
    assert "does not resolve" in line and "retry" not in line
    assert not (tmp_path / "out").exists()
