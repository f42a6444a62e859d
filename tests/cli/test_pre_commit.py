"""The pre-commit hooks, run by the real pre-commit in a real git repository: a commit that adds
a duplicate of an abstract committed earlier is refused, and the hook leaves no file behind; in a
JSON Lines project a commit that adds a broken line is refused too, since the hooks run on every
file a source format claims.

The hooks are those of .pre-commit-hooks.yaml, with the installed ``curate`` as their command
(``language: system``), so the test needs no network and no hook environment."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from curate.cli import main
from curate.ingest import formats

CLEAN = ROOT / "tests" / "data" / "anyone" / "icml-2024.txt"  # no finding, even --strict
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def git(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)


def test_the_hooks_run_on_every_file_a_source_format_claims_and_on_the_config():
    claimed = [p for entry in formats.REGISTRY.values() for p in entry.patterns]
    assert "*.jsonl.gz" in claimed and "*.parquet" in claimed
    for hook in HOOKS:
        pattern = re.compile(hook["files"])
        for glob in claimed:  # a file each pattern claims, at the top and in a subfolder
            name = glob.replace("*", "papers")
            assert fnmatch.fnmatchcase(name, glob)
            assert pattern.search(name) and pattern.search(f"data/raw/{name}"), (hook["id"], glob)
        for config in ("curate.toml", "pyproject.toml", "sub/curate.toml"):
            assert pattern.search(config)
        for other in ("README.md", "notes.txt.bak", "mycurate.toml", "papers.gz"):
            assert not pattern.search(other), other


def hooked_repo(repo: Path, tmp_path: Path) -> dict[str, str]:
    """``repo`` as a git repository with the strict hook installed; the environment to run in."""
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
    }  # fmt: skip
    env.pop("CURATE_CACHE_DIR", None)  # the hook's own behaviour: no cache anywhere
    curate = Path(sys.executable).with_name("curate")
    strict = next(h for h in HOOKS if h["id"] == "curate-validate-strict")
    local = {
        **strict,
        "language": "system",
        "entry": f"{curate} {strict['entry'].split(' ', 1)[1]}",
    }
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    assert git(repo, "init", "-q", env=env).returncode == 0
    install = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env,
                             capture_output=True, text=True)  # fmt: skip
    assert install.returncode == 0, install.stderr
    return env


@pytest.mark.slow
def test_a_commit_adding_a_duplicate_of_a_committed_abstract_is_refused(tmp_path):
    repo = tmp_path / "data"
    (repo / "sources").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.curate]\nvenues = []\nyears = []\n", "utf-8")
    env = hooked_repo(repo, tmp_path)
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


@pytest.mark.slow
def test_in_a_jsonl_project_a_commit_adding_a_broken_line_is_refused(tmp_path, capsys):
    """A project made by ``curate init --format jsonl``, its sources in data/raw/: the hook runs
    on the .jsonl file (it was skipped as no drop before) and refuses the commit."""
    repo = tmp_path / "papers"
    assert main(["init", str(repo), "--format", "jsonl", "--text-field", "abstract",
                 "--sources", "data/raw"]) == 0  # fmt: skip
    capsys.readouterr()
    env = hooked_repo(repo, tmp_path)
    records = [  # real abstracts of tests/data/anyone/icml-2024.txt, as a JSON Lines export
        {"paper_id": f"icml-2024-{n}", "abstract": text}
        for n, text in enumerate(CLEAN.read_text(encoding="utf-8").split("\n\n")[1:3], 1)
    ]
    lines = "".join(json.dumps(r) + "\n" for r in records)
    papers = repo / "data" / "raw" / "papers.jsonl"
    papers.write_text(lines, encoding="utf-8")
    git(repo, "add", "-A", env=env)
    done = git(repo, "commit", "-qm", "the first export", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    papers.write_text(lines + '{"paper_id": "icml-2024-3", "abstract": "cut off\n', "utf-8")
    git(repo, "add", "data/raw/papers.jsonl", env=env)
    refused = git(repo, "commit", "-qm", "a broken line", env=env)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Skipped" not in said
    assert "papers.jsonl:3" in said and "invalid-json" in said
    assert git(repo, "log", "--oneline", env=env).stdout.count("\n") == 1
