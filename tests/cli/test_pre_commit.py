"""The pre-commit hooks, run by the real pre-commit in a real git repository: a commit that adds
a duplicate of an abstract committed earlier is refused, and the hook leaves no file behind.

The hooks are those of .pre-commit-hooks.yaml, with the installed ``curate`` as their command
(``language: system``), so the test needs no network and no hook environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

CLEAN = ROOT / "tests" / "data" / "anyone" / "icml-2024.txt"  # no finding, even --strict


def git(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_a_commit_adding_a_duplicate_of_a_committed_abstract_is_refused(tmp_path):
    repo = tmp_path / "data"
    (repo / "sources").mkdir(parents=True)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
    }  # fmt: skip
    env.pop("CURATE_CACHE_DIR", None)  # the hook's own behaviour: no cache anywhere
    curate = Path(sys.executable).with_name("curate")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    strict = next(h for h in hooks if h["id"] == "curate-validate-strict")
    local = {
        **strict,
        "language": "system",
        "entry": f"{curate} {strict['entry'].split(' ', 1)[1]}",
    }
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (repo / "pyproject.toml").write_text("[tool.curate]\nvenues = []\nyears = []\n", "utf-8")
    assert git(repo, "init", "-q", env=env).returncode == 0
    install = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env,
                             capture_output=True, text=True)  # fmt: skip
    assert install.returncode == 0, install.stderr
    first = CLEAN
    shutil.copy(first, repo / "sources" / first.name)
    git(repo, "add", "-A", env=env)
    done = git(repo, "commit", "-qm", "first drop", env=env)
    assert done.returncode == 0, done.stdout + done.stderr

    # A new drop holding one abstract of the committed one: only the new file is staged.
    header, _, body = first.read_text(encoding="utf-8").partition("\n\n")
    copied = body.split("\n\n")[0]
    (repo / "sources" / "new.txt").write_text(f"{header}\n\n{copied}\n", encoding="utf-8")
    git(repo, "add", "sources/new.txt", env=env)
    refused = git(repo, "commit", "-qm", "a duplicate", env=env)
    assert refused.returncode != 0
    assert "duplicate" in refused.stdout + refused.stderr
    assert git(repo, "log", "--oneline", env=env).stdout.count("\n") == 1
    left = git(repo, "status", "--porcelain", "--ignored", env=env).stdout
    assert ".curate-cache" not in left and not (repo / ".curate-cache").exists()
