"""The CI workflows cannot run here; this checks that what they run exists in the CLI, with those
options, and that the pieces fit together (triggers, secrets, artifacts, order of steps)."""

from __future__ import annotations

import json
import re
import shlex
import shutil

import pytest
import yaml
from conftest import ROOT

from curate.cli import build_parser

WORKFLOWS = ROOT / ".github" / "workflows"
# Values for the shell and GitHub expressions in `run:` lines.
PLACEHOLDERS = {
    "REPO_ID": "org/name", "GITHUB_REF_NAME#dataset-v": "1.2.3", "GITHUB_ENV": "env",
    "GITHUB_SHA": "0" * 40, "GITHUB_REF_NAME": "dataset-v1.2.3", "DEFAULT_BRANCH": "main",
}  # fmt: skip


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def curate_commands(step: dict) -> list[list[str]]:
    """The `curate` invocations of a step, as argv lists with placeholders filled in."""
    out = []
    for line in step.get("run", "").splitlines():
        line = re.sub(r"\$\{\{[^}]*\}\}", "x", line)
        line = re.sub(r"\$\{([^}]+)\}|\$([A-Z_]+)", lambda m: PLACEHOLDERS[m[1] or m[2]], line)
        argv = shlex.split(line)
        if argv[:3] == ["uv", "run", "curate"]:
            out.append(argv[3:])
    return out


def parse(argv: list[str]):
    try:
        return build_parser().parse_args(argv)
    except SystemExit:  # argparse: unknown command or option
        pytest.fail(f"`curate {' '.join(argv)}` is not a valid command line")


def uses(step: dict, action: str) -> bool:
    return step.get("uses", "").startswith(action + "@")


def test_validate_workflow():
    wf = load("validate.yml")
    # the drops, and what decides their findings: the config and the checks
    paths = wf["on"]["pull_request"]["paths"]
    assert {"sources/**", "pyproject.toml", "validation/**"} <= set(paths)
    all_steps = steps(wf)
    assert any(uses(s, "actions/checkout") for s in all_steps)
    assert any(uses(s, "astral-sh/setup-uv") for s in all_steps)
    commands = [c for s in all_steps for c in curate_commands(s)]
    assert len(commands) == 1
    args = parse(commands[0])
    assert args.command == "validate" and args.format == "github"
    assert args.paths == ["sources"]
    (upload,) = [s for s in all_steps if uses(s, "actions/upload-artifact")]
    assert upload["with"]["path"] == args.json  # the JSON report the command wrote
    assert upload["if"] == "always()"  # kept when validation fails, which is when it matters


def test_release_workflow():
    wf = load("release.yml")
    assert "workflow_dispatch" in wf["on"]
    # dataset-vX.Y.Z: a tag vX.Y.Z is a release of curate itself (pypi.yml), not of the dataset
    (pattern,) = wf["on"]["push"]["tags"]
    assert pattern.startswith("dataset-v")
    assert "refs/tags/dataset-v" in wf["jobs"]["release"]["if"]
    all_steps = steps(wf)
    assert any(uses(s, "astral-sh/setup-uv") for s in all_steps)

    builds, publishes = [], []
    for index, step in enumerate(all_steps):
        for argv in curate_commands(step):
            args = parse(argv)
            if args.command == "build":
                builds.append((index, step, args))
            elif args.command == "publish":
                publishes.append((index, step, args))
    assert builds and publishes
    # A tag releases only a commit of the default branch: checked before anything is built.
    (guard,) = [
        i for i, s in enumerate(all_steps) if "merge-base --is-ancestor" in s.get("run", "")
    ]
    assert all_steps[guard]["if"] == "github.ref_type == 'tag'"
    assert guard < min(i for i, _, _ in builds)
    for _, step, args in builds:
        assert args.previous == "hub:org/name" and args.allow_first_release
        assert step["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"  # private repos, rate limits
    tagged = [args for _, step, args in builds if step["if"] == "github.ref_type == 'tag'"]
    assert [a.set_version for a in tagged] == ["1.2.3"]
    assert {args.out for _, _, args in builds} == {args.dir for _, _, args in publishes}
    assert max(i for i, _, _ in builds) < min(i for i, _, _ in publishes)
    # The repository comes from [tool.curate] (read into REPO_ID for --previous) and the build's
    # manifest (for publish): no second source that could disagree.
    assert "curate config --get repo_id" in str(all_steps)
    assert "vars." not in str(wf)
    for _, step, args in publishes:
        assert args.repo_id is None
        assert step["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"
    assert any(args.dry_run for _, _, args in publishes)
    assert any(not args.dry_run for _, _, args in publishes)


def test_no_workflow_prints_or_stores_the_token():
    for path in WORKFLOWS.glob("*.yml"):
        for step in steps(load(path.name)):
            assert "HF_TOKEN" not in step.get("run", ""), (path.name, step.get("name"))
            assert "secrets" not in str(step.get("with", {})), (path.name, step.get("name"))


def test_pypi_workflow_uploads_only_a_checked_tagged_build_by_trusted_publishing():
    wf = load("pypi.yml")
    assert wf["on"]["push"] == {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}
    assert "pyproject.toml" in wf["on"]["pull_request"]["paths"]
    assert wf["permissions"] == {"contents": "read"}
    build, upload = wf["jobs"]["build"], wf["jobs"]["upload"]
    scripts = [s.get("run", "") for s in build["steps"]]
    # the tag names this version and a commit of the default branch, checked before the build
    (guard,) = [i for i, s in enumerate(scripts) if "merge-base --is-ancestor" in s]
    assert '"v$version"' in scripts[guard] and "uv version --short" in scripts[guard]
    assert build["steps"][guard]["if"] == "github.ref_type == 'tag'"
    (made,) = [i for i, s in enumerate(scripts) if s.startswith("uv build")]
    (checked,) = [i for i, s in enumerate(scripts) if "twine" in s and " check --strict" in s]
    (tried,) = [i for i, s in enumerate(scripts) if "curate init demo" in s]
    assert guard < made < checked < tried
    assert "curate build" in scripts[tried] and "dist/*.whl" in scripts[tried]
    assert "id-token" not in str(build)  # only the upload job can ask for a token
    # the upload: after the build, on a tag, in the environment PyPI's publisher names, with an
    # OIDC token and no password
    assert upload["needs"] == "build" and upload["if"] == "github.ref_type == 'tag'"
    assert upload["permissions"] == {"id-token": "write"}
    assert upload["environment"]["name"] == "pypi"
    (kept,) = [s for s in build["steps"] if uses(s, "actions/upload-artifact")]
    fetched, publish = upload["steps"]
    assert uses(fetched, "actions/download-artifact")
    assert fetched["with"]["name"] == kept["with"]["name"]
    assert uses(publish, "pypa/gh-action-pypi-publish") and "with" not in publish


@pytest.mark.slow
def test_pypi_workflow_s_try_step_builds_a_dataset_from_the_wheel(tmp_path):
    """The step that installs the wheel into a clean environment and starts a project with it,
    run as the runner would, on the wheel built from this checkout."""
    import os
    import subprocess

    (step,) = [s for s in load("pypi.yml")["jobs"]["build"]["steps"]
               if "curate init demo" in s.get("run", "")]  # fmt: skip
    workspace, runner = tmp_path / "workspace", tmp_path / "runner"
    runner.mkdir()
    (workspace / "dist").mkdir(parents=True)
    shutil.copytree(ROOT / "sources", workspace / "sources")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    subprocess.run(["uv", "build", "--wheel", "-q", "--out-dir", str(workspace / "dist"),
                    str(ROOT)], env=env, check=True, capture_output=True)  # fmt: skip
    constraints = tmp_path / "constraints.txt"  # the locked versions: uv's cache holds them
    subprocess.run(["uv", "export", "--project", str(ROOT), "--frozen", "--no-dev",
                    "--no-emit-project", "--no-hashes", "-q", "-o", str(constraints)],
                   check=True, capture_output=True)  # fmt: skip
    env |= {"RUNNER_TEMP": str(runner), "GITHUB_WORKSPACE": str(workspace),
            "UV_CONSTRAINT": str(constraints)}  # fmt: skip
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=workspace, env=env,
                          capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((runner / "demo" / "dist" / "manifest.json").read_text("utf-8"))
    assert (manifest["rows"], manifest["records_in"]) == (55, 57)  # the bundled build's
