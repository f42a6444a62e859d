"""The workflows pass zizmor's audit, and the pre-commit hooks run through the real CLI parser.

zizmor comes from PyPI through the lock (a dev dependency), so this runs offline and the same
everywhere; a workflow template added elsewhere is checked by adding its folder to AUDITED.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from curate.cli import build_parser

# Every folder holding GitHub workflows (or dependabot config) that this project ships.
AUDITED = [ROOT / ".github", ROOT / "curate" / "project" / "templates" / "workflows"]
ZIZMOR = Path(sys.executable).parent / "zizmor"


def _zizmor(folder: Path) -> list[dict]:
    # zizmor collects a `.github` folder by its layout; other folders are given file by file.
    inputs = [folder] if folder.name == ".github" else sorted(folder.glob("*.yml"))
    assert inputs, f"no workflow in {folder}"
    proc = subprocess.run(
        [str(ZIZMOR), "--offline", "--format", "json", "--no-progress", *map(str, inputs)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # zizmor exits non-zero when it finds something; the JSON on stdout says what.
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("folder", AUDITED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_zizmor_finds_nothing(folder):
    findings = _zizmor(folder)
    assert findings == [], [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in findings]


def test_zizmor_does_find_an_unpinned_action(tmp_path):
    """The audit is live: the same call reports a workflow as this project's used to be."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "bad.yml").write_text(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v4\n",
        encoding="utf-8",
    )
    idents = {f["ident"] for f in _zizmor(tmp_path / ".github")}
    assert {"unpinned-uses", "artipacked"} <= idents


def _workflow_steps(path: Path) -> list[tuple[dict, dict]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [(job, step) for job in data["jobs"].values() for step in job["steps"]]


def test_every_action_is_pinned_by_commit_with_its_version():
    for path in (ROOT / ".github" / "workflows").glob("*.yml"):
        text = path.read_text(encoding="utf-8")
        for line in text.splitlines():
            if "uses:" in line:
                ref, _, comment = line.split("uses:", 1)[1].partition("#")
                sha = ref.strip().rpartition("@")[2]
                assert len(sha) == 40 and int(sha, 16) >= 0, (path.name, line)
                assert comment.strip().startswith("v"), (path.name, line)
        for job, step in _workflow_steps(path):
            assert job["timeout-minutes"] <= 60, path.name
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, path.name


def test_release_only_from_the_default_branch_or_a_tag():
    data = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8"))
    condition = " ".join(data["jobs"]["release"]["if"].split())
    assert "github.event.repository.default_branch" in condition
    assert "startsWith(github.ref, 'refs/tags/dataset-v')" in condition
    for _, step in _workflow_steps(ROOT / ".github/workflows/release.yml"):
        assert step.get("with", {}).get("enable-cache") is not True, step  # no cache to poison


def test_test_workflow_runs_the_ci_entry_point_on_pull_requests():
    data = yaml.safe_load((ROOT / ".github/workflows/test.yml").read_text(encoding="utf-8"))
    assert "pull_request" in data[True]  # YAML 1.1 reads the key `on` as True
    runs = [step.get("run") for _, step in _workflow_steps(ROOT / ".github/workflows/test.yml")]
    assert ".ci/run" in runs
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "ruff format --check" in ci and "apt-get install" in ci and "chromium" in ci


def test_dependabot_updates_actions_and_the_python_lock():
    data = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    assert {u["package-ecosystem"] for u in data["updates"]} == {"github-actions", "uv"}


def test_pre_commit_hooks_run_curate_validate():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {h["id"] for h in hooks} == {"curate-validate", "curate-validate-strict"}
    for hook in hooks:
        argv = shlex.split(hook["entry"])
        assert argv[0] == "curate"
        # the whole drops folder, not the staged files: pre-commit passes no file names
        assert hook["pass_filenames"] is False
        args = build_parser().parse_args(argv[1:])
        assert args.command == "validate" and args.paths == [] and args.no_cache
        assert args.strict is (hook["id"] == "curate-validate-strict")
        assert hook["language"] == "python"
