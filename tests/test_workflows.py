"""The CI workflows cannot run here; this checks that what they run exists in the CLI, with those
options, and that the pieces fit together (triggers, secrets, artifacts, order of steps)."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml
from conftest import ROOT

from curate.cli import build_parser

WORKFLOWS = ROOT / ".github" / "workflows"
# Values for the shell and GitHub expressions in `run:` lines.
PLACEHOLDERS = {
    "REPO_ID": "org/name", "GITHUB_REF_NAME#v": "1.2.3", "GITHUB_ENV": "env",
    "GITHUB_SHA": "0" * 40, "GITHUB_REF_NAME": "v1.2.3", "DEFAULT_BRANCH": "main",
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
    (pattern,) = wf["on"]["push"]["tags"]
    assert pattern.startswith("v")
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
