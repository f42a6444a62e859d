"""What the workflows install curate from: exactly our distribution, never a name on an index
that someone else owns.

`curate` on PyPI is another project (Curation Utilities for CKAN, with its own `curate`
command); our distribution is `curate-datasets`. The workflows `curate init` writes install the
requirement `--toolkit` gives (by default this release, pinned), from a requirements file so that
uv checks a wheel URL's `#sha256=`; this repository's own workflows install the checkout. The
check reads the YAML with PyYAML: every `run:` script (with the workflow's `env:` values put in
for `$NAME`), every `env:` value and every action input.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import test_packaging
import yaml
from conftest import ROOT
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from test_reports_workflows import _zizmor

from curate.cli import build_parser, main
from curate.version import version

WHEEL_URL = "https://example.org/wheels/curate_datasets-0.1.0-py3-none-any.whl"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
GIT_URL = f"git+https://github.com/example/curate@{COMMIT}"
wheel = test_packaging.wheel  # the fixture: the wheel built from this repository

# An install of the name `curate` from an index, in a shell line: as a requirement with a
# version (`curate==0.1`, `"curate>=0.1"`), as uvx's/uv's `--from`/`--with`, or as what
# pip, uv, pipx or uvx install or run. `curate-datasets`, `curate @ URL`, a path ending in
# `/curate` and the `curate` command after `uvx --from X` are not.
_ARGS = r"(?:-[^\s=]+(?:[=\s]+[^\s-]\S*)?\s+)*"  # options, with or without a value
_NAME = r"[\"'`]?curate(?:\[[^\]]*\])?(?=[\"'`\s]|$)(?!\s*@)"
INDEX_INSTALL = re.compile(
    rf"""
    (?<![\w.@/$-])curate\s*(?:\[[^\]]*\])?\s*(?:===?|[<>!~]=|[<>])
    | --(?:from|with|spec)(?:=|\s+){_NAME}
    | \b(?:pip3?|uv\s+pip|pipx|uv\s+tool)\s+install\s+{_ARGS}{_NAME}
    | \buv\s+add\s+{_ARGS}{_NAME}
    | \b(?:uvx|uv\s+tool\s+run|pipx\s+run)\s+(?![^\n]*--(?:from|spec)\b){_ARGS}{_NAME}
    """,
    re.VERBOSE | re.IGNORECASE | re.MULTILINE,
)


def _index_requirement_of_curate(value: str) -> bool:
    """True if ``value`` is a requirement of the name ``curate`` without a URL (an index)."""
    try:
        req = Requirement(value.strip())
    except InvalidRequirement:
        return False
    return canonicalize_name(req.name) == "curate" and req.url is None


def _filled(script: str, env: dict[str, str]) -> str:
    """``script`` with the workflow's values for ``$NAME``, ``${NAME}``, ``${{ env.NAME }}``."""
    script = re.sub(r"\$\{\{\s*env\.(\w+)\s*\}\}", lambda m: env.get(m[1], m[0]), script)
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m[1] or m[2], m[0]), script)


def index_installs_of_curate(workflow: Path) -> list[str]:
    """Every place in ``workflow`` that can install the name ``curate`` from an index."""
    data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    found: list[str] = []

    def env_of(node: dict, outer: dict[str, str]) -> dict[str, str]:
        env = dict(outer)
        for key, value in (node.get("env") or {}).items():
            env[key] = str(value)
            if _index_requirement_of_curate(str(value)):
                found.append(f"env {key}: {value}")
        return env

    top = env_of(data, {})
    for job in (data.get("jobs") or {}).values():
        job_env = env_of(job, top)
        for step in job.get("steps") or []:
            env = env_of(step, job_env)
            texts = [str(step.get("run", ""))] + [str(v) for v in (step.get("with") or {}).values()]
            for text in map(_filled, texts, [env] * len(texts)):
                lines = text.splitlines()
                found += [ln.strip() for ln in lines if INDEX_INSTALL.search(ln)]
    return found


def written_workflows(folder: Path, *toolkit: str) -> dict[str, Path]:
    """The workflows ``curate init`` writes into ``folder`` (with ``--toolkit`` if given)."""
    assert main(["init", str(folder), *(["--toolkit", *toolkit] if toolkit else [])]) == 0
    found = {p.name: p for p in (folder / ".github" / "workflows").glob("*.yml")}
    assert sorted(found) == ["release.yml", "validate.yml"]
    return found


def env_value(workflow: Path, name: str) -> str:
    return yaml.safe_load(workflow.read_text(encoding="utf-8"))["env"][name]


@pytest.mark.parametrize(
    "toolkit",
    [(), ("curate-datasets==0.3.1",), (GIT_URL,), (f"{WHEEL_URL}#sha256={'ab' * 32}",)],
    ids=["default", "pin", "git", "wheel"],
)
def test_no_workflow_init_writes_installs_curate_from_an_index(tmp_path, toolkit):
    for workflow in written_workflows(tmp_path / "demo", *toolkit).values():
        assert index_installs_of_curate(workflow) == [], workflow.name


def test_no_workflow_of_this_repository_installs_curate_from_an_index():
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {p.name for p in workflows} >= {"release.yml", "test.yml", "validate.yml"}
    for workflow in workflows:
        assert index_installs_of_curate(workflow) == [], workflow.name


# The workflows `curate init` wrote before it had a distribution name of its own (the index
# resolved `curate==0.1.0` to the other project's 0.1), and other ways of asking an index for it.
OLD_TEMPLATE = """
env:
  CURATE: "curate==0.1.0"
jobs:
  validate:
    steps:
      - run: uvx --from "$CURATE" curate validate --format github
"""
INDEX_LINES = [
    "pip install curate",
    "python -m pip install -q 'curate>=0.1'",
    "pip install --index-url https://pypi.org/simple curate",
    "uv pip install --python .venv curate",
    'uv pip install "curate[all]"',
    "uv add curate",
    "uv tool install curate",
    "uvx curate validate",
    "uvx -q curate validate",
    "uv tool run curate validate",
    "pipx run curate validate",
    "uvx --from curate curate validate",
    "uv run --with curate curate build",
    'uvx --from "curate==0.1.0" curate validate',
    "echo 'curate~=0.1' > requirements.txt",
    "curate is a Python package (`pip install curate` where it is published",  # the old README
]


def test_the_documentation_installs_our_distribution_by_its_name():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install curate-datasets" in readme and "uv add curate-datasets" in readme
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = page.read_text(encoding="utf-8").splitlines()
        assert [ln for ln in lines if INDEX_INSTALL.search(ln)] == [], page.name


def test_the_check_finds_an_index_install_of_curate(tmp_path):
    old = tmp_path / "old.yml"
    old.write_text(OLD_TEMPLATE, encoding="utf-8")
    assert index_installs_of_curate(old) == [
        "env CURATE: curate==0.1.0",
        'uvx --from "curate==0.1.0" curate validate --format github',
    ]
    for line in INDEX_LINES:
        wf = tmp_path / "one.yml"
        wf.write_text(yaml.safe_dump({"jobs": {"j": {"steps": [{"run": line}]}}}), "utf-8")
        assert index_installs_of_curate(wf), line
    wf.write_text(yaml.safe_dump({"env": {"TOOL": "Curate"}, "jobs": {}}), "utf-8")
    assert index_installs_of_curate(wf) == ["env TOOL: Curate"]


def test_the_check_leaves_our_distribution_and_the_curate_command_alone(tmp_path):
    lines = [
        "uv run curate build",
        "uv run --frozen --no-dev curate validate sources",
        "curate validate --format github --output validation-report.json",
        'uvx --from "curate-datasets==0.1.0" curate validate',
        f'uvx --from "curate @ {GIT_URL}" curate validate',
        'uv pip install --quiet --python "$RUNNER_TEMP/curate" -r "$RUNNER_TEMP/curate.txt"',
        'echo "$RUNNER_TEMP/curate/bin" >> "$GITHUB_PATH"',
        "pip install curate-datasets",
        "uv add curate_datasets",
    ]
    wf = tmp_path / "fine.yml"
    wf.write_text(
        yaml.safe_dump({"jobs": {"j": {"steps": [{"run": ln} for ln in lines]}}}), "utf-8"
    )
    assert index_installs_of_curate(wf) == []


def test_init_pins_this_release_of_our_distribution_by_default(tmp_path):
    for workflow in written_workflows(tmp_path / "demo").values():
        assert env_value(workflow, "CURATE") == f"curate-datasets=={version()}"


@pytest.mark.parametrize(
    ("spec", "written"),
    [
        ("curate-datasets==0.3.1", "curate-datasets==0.3.1"),
        ("Curate_Datasets == 0.3.1", "curate-datasets==0.3.1"),
        (GIT_URL, f"curate-datasets @ {GIT_URL}"),
        (f"curate-datasets @ {GIT_URL}", f"curate-datasets @ {GIT_URL}"),
        (f"{WHEEL_URL}#sha256={'ab' * 32}", f"curate-datasets @ {WHEEL_URL}#sha256={'ab' * 32}"),
    ],
)
def test_init_writes_the_toolkit_it_is_given_into_every_workflow(tmp_path, spec, written):
    for workflow in written_workflows(tmp_path / "demo", spec).values():
        assert env_value(workflow, "CURATE") == written


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("curate==0.1.0", "installs 'curate', not 'curate-datasets'"),
        ("curate", "installs 'curate'"),
        ("curate-datasets", "pin one release"),
        ("curate-datasets>=0.1", "pin one release"),
        ("curate-datasets==0.1.*", "pin one release"),
        ("curate-datasets===0.1.0", "pin one release"),
        ("curate-datasets[hub]==0.1.0", "extras and markers"),
        ("git+https://github.com/example/curate@main", "full commit id"),
        ("git+https://github.com/example/curate", "full commit id"),
        (WHEEL_URL, "#sha256="),
        (f"{WHEEL_URL}#md5={'ab' * 16}", "#sha256="),
        (f"http://example.org/curate_datasets-0.1.0-py3-none-any.whl#sha256={'ab' * 32}", "https"),
        (f"https://example.org/$(id)/x.whl#sha256={'ab' * 32}", "character"),
        ("not a requirement!", "not a requirement"),
    ],
)
def test_a_toolkit_that_can_move_or_is_someone_else_s_is_refused(tmp_path, capsys, spec, why):
    folder = tmp_path / "demo"
    assert main(["init", str(folder), "--toolkit", spec]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"curate: error: --toolkit {spec!r}: ") and why in err, err
    assert not folder.exists()  # nothing written


# A `curate` command in a script (not a path such as `$RUNNER_TEMP/curate`), up to the end of
# its line or of the `$( ... )` around it; and values for the shell variables in its arguments.
COMMAND = re.compile(r"(?<![\w/.$-])curate\s+([a-z][^\n)]*)")
PLACEHOLDERS = {"repo": "org/name", "DRY_RUN": "--dry-run"}


def test_the_written_workflows_run_curate_commands_that_exist(tmp_path):
    commands = []
    for workflow in written_workflows(tmp_path / "demo").values():
        for job in yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"].values():
            for step in job["steps"]:
                for m in COMMAND.finditer(str(step.get("run", ""))):
                    line = re.sub(r"\$(\w+)", lambda v: PLACEHOLDERS[v[1]], m[1])
                    commands.append(shlex.split(line))
    assert sorted(c[0] for c in commands) == ["build", "config", "publish", "validate"]
    parser = build_parser()
    for argv in commands:
        try:
            parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"`curate {' '.join(argv)}` is not a valid command line")


def test_zizmor_finds_nothing_in_the_workflows_init_writes(tmp_path):
    written_workflows(tmp_path / "demo", GIT_URL)
    findings = _zizmor(tmp_path / "demo" / ".github")
    assert findings == [], [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in findings]


def install_step(workflow: Path) -> str:
    data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    (script,) = [s["run"] for j in data["jobs"].values() for s in j["steps"]
                 if s.get("name") == "Install curate"]  # fmt: skip
    return script


@pytest.mark.slow
def test_the_install_step_installs_the_wheel_only_with_its_sha256(tmp_path, wheel):
    """The written step, run as the runner would (bash, $RUNNER_TEMP, $GITHUB_PATH), on the
    requirement init wrote for a wheel URL, with the URL pointing at a local copy."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    url = f"https://example.org/wheels/{wheel.name}"
    workflow = written_workflows(tmp_path / "demo", f"{url}#sha256={digest}")["validate.yml"]
    requirement = env_value(workflow, "CURATE").replace("https://example.org/wheels/",
                                                        wheel.parent.as_uri() + "/")  # fmt: skip
    constraints = tmp_path / "constraints.txt"  # the locked versions: uv's cache holds them
    subprocess.run(["uv", "export", "--project", str(ROOT), "--frozen", "--no-dev",
                    "--no-emit-project", "--no-hashes", "-q", "-o", str(constraints)],
                   check=True, capture_output=True)  # fmt: skip
    script = install_step(workflow)

    def run(requirement: str, runner: Path) -> subprocess.CompletedProcess[str]:
        runner.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env |= {"CURATE": requirement, "RUNNER_TEMP": str(runner),
                "GITHUB_PATH": str(runner / "path"), "UV_CONSTRAINT": str(constraints)}  # fmt: skip
        return subprocess.run(["bash", "-eo", "pipefail", "-c", script], env=env,
                              capture_output=True, text=True, check=False)  # fmt: skip

    forged = requirement.replace(digest, digest[::-1])
    refused = run(forged, tmp_path / "forged")
    assert refused.returncode != 0 and "hash" in refused.stderr.lower(), refused.stderr
    assert not (tmp_path / "forged" / "curate" / "bin" / "curate").exists()

    done = run(requirement, tmp_path / "runner")
    assert done.returncode == 0, done.stderr
    (bin_dir,) = (tmp_path / "runner" / "path").read_text(encoding="utf-8").split()
    out = subprocess.run([str(Path(bin_dir) / "curate"), "--version"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert out == f"curate {version()}\n"


def test_the_ray_hint_installs_the_extra_s_ray_whatever_curate_came_from():
    """`pip install 'curate-datasets[ray]'` needs the name on an index; Ray in the extra's
    range works beside a curate from a wheel or a commit as well."""
    import tomllib

    from curate.engine.ray import INSTALL

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (extra,) = project["optional-dependencies"]["ray"]
    (quoted,) = re.findall(r"pip install '([^']+)'", INSTALL)
    assert Requirement(quoted).specifier == Requirement(extra).specifier
    assert Requirement(quoted).name == "ray"
