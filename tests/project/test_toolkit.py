"""`curate init` asks the package index whether the release it pins is there, before it writes
workflows whose install step depends on it.

The indexes are real: a folder in the simple layout (PEP 503) served over HTTP on 127.0.0.1, as
`python -m http.server` would, first without our wheel, then with it; the same folder as a
`file:` URL; an index answering PEP 691's JSON. What uv itself resolves from the folder is the
reference for what the check says.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import shutil
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import test_packaging
import yaml
from conftest import ROOT

from curate.cli import main
from curate.project import toolkit
from curate.version import version

CONFIGURED_INDEX = toolkit.configured_index  # conftest points it at a closed port for every test
PIN = f"curate-datasets=={version()}"
WHEEL = f"curate_datasets-{version()}-py3-none-any.whl"
wheel = test_packaging.wheel  # the fixture: the wheel built from this repository


def head_commit() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip


def simple_index(root: Path, files: dict[str, bytes]) -> Path:
    """``root`` holding a PEP 503 index, ``simple/curate-datasets/index.html`` linking each
    file beside it (a project's page with no file when there is none)."""
    project = root / "simple" / "curate-datasets"
    project.mkdir(parents=True)
    links = []
    for name, data in files.items():
        (project / name).write_bytes(data)
        links.append(f'<a href="{html.escape(name)}">{html.escape(name)}</a><br/>')
    page = "<!DOCTYPE html><html><body>" + "".join(links) + "</body></html>"
    (project / "index.html").write_text(page, encoding="utf-8")
    return root


class Served:
    """A folder served over HTTP on 127.0.0.1; ``requests`` keeps each request's headers."""

    def __init__(self, folder: Path, json_body: bytes | None = None) -> None:
        self.requests: list[dict[str, str]] = []
        seen = self.requests

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(dict(self.headers))
                if json_body is not None and "json" in self.headers.get("Accept", ""):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
                    self.send_header("Content-Length", str(len(json_body)))
                    self.end_headers()
                    self.wfile.write(json_body)
                    return
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        handler = functools.partial(Handler, directory=str(folder))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve():
    started: list[Served] = []

    def start(folder: Path, json_body: bytes | None = None) -> Served:
        started.append(Served(folder, json_body))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture
def index_env(monkeypatch):
    """The real lookup of the configured index, with none of the developer's variables."""
    monkeypatch.setattr(toolkit, "configured_index", CONFIGURED_INDEX)
    for name in toolkit.INDEX_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def init(folder: Path, capsys, *args: str) -> tuple[str, list[str]]:
    """Run `curate init`; the CURATE requirement both workflows got, and the notes it printed."""
    assert main(["init", str(folder), *args]) == 0
    out = capsys.readouterr().out
    values = set()
    for name in ("validate.yml", "release.yml"):
        text = (folder / ".github" / "workflows" / name).read_text(encoding="utf-8")
        values.add(yaml.safe_load(text)["env"]["CURATE"])
    (value,) = values
    return value, [ln.strip() for ln in out.splitlines() if ln.strip().startswith("note:")]


def test_an_index_without_the_release_gets_this_checkout_s_commit(
    tmp_path, serve, index_env, capsys
):
    served = serve(simple_index(tmp_path / "index", {}))  # the project's page has no file
    index_env.setenv("UV_INDEX_URL", f"{served.url}/simple")
    url = f"git+https://github.com/curate-datasets/curate@{head_commit()}"
    value, notes = init(tmp_path / "demo", capsys)
    assert value == f"curate-datasets @ {url}"
    (note,) = notes
    assert note.startswith(
        f"note: {PIN} is not on {served.url}/simple: the workflows install {url}"
    )
    assert "the commit of the checkout it runs from" in note
    assert served.requests  # it did ask


def test_an_index_without_the_project_gets_the_commit_too(tmp_path, serve, index_env, capsys):
    served = serve(tmp_path / "empty")  # 404 for every project
    (tmp_path / "empty").mkdir()
    index_env.setenv("PIP_INDEX_URL", f"{served.url}/simple/")
    value, notes = init(tmp_path / "demo", capsys)
    assert (
        value == f"curate-datasets @ git+https://github.com/curate-datasets/curate@{head_commit()}"
    )
    assert len(notes) == 1 and "is not on" in notes[0]


def test_an_index_with_only_other_releases_is_an_index_without_this_one(
    tmp_path, serve, index_env, capsys
):
    older = {
        "curate_datasets-0.0.1-py3-none-any.whl": b"",
        "curate_datasets-0.0.1.tar.gz": b"",
        f"curate-{version()}-py3-none-any.whl": b"",
    }  # fmt: skip  (another project's)
    served = serve(simple_index(tmp_path / "index", older))
    index_env.setenv("UV_DEFAULT_INDEX", f"{served.url}/simple")
    value, _ = init(tmp_path / "demo", capsys)
    assert value.startswith("curate-datasets @ git+https://")


@pytest.mark.slow
def test_the_pin_is_kept_exactly_when_uv_resolves_it_from_the_index(
    tmp_path, serve, index_env, capsys, wheel
):
    """The same folder index, without and then with the wheel built from this checkout; uv's
    own resolution from it says which answer is right."""

    def uv_resolves(index: str) -> bool:
        done = subprocess.run(
            [shutil.which("uv") or "uv", "pip", "compile", "--no-deps", "--no-header", "--no-cache",
             "--index-url", index, "-"], input=f"{PIN}\n", capture_output=True, text=True,
            check=False, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0 or "No solution found" in done.stderr, done.stderr
        return done.returncode == 0 and PIN in done.stdout

    lacking = serve(simple_index(tmp_path / "lacking", {}))
    index_env.setenv("UV_INDEX_URL", f"{lacking.url}/simple")
    assert not uv_resolves(f"{lacking.url}/simple")
    value, notes = init(tmp_path / "before", capsys)
    assert value.startswith("curate-datasets @ git+https://") and len(notes) == 1

    having = serve(simple_index(tmp_path / "having", {wheel.name: wheel.read_bytes()}))
    index_env.setenv("UV_INDEX_URL", f"{having.url}/simple")
    assert uv_resolves(f"{having.url}/simple")
    value, notes = init(tmp_path / "after", capsys)
    assert (value, notes) == (PIN, [])


def test_an_index_that_has_the_release_keeps_the_pin_and_says_nothing(
    tmp_path, serve, index_env, capsys
):
    served = serve(simple_index(tmp_path / "index", {WHEEL: b"x"}))
    index_env.setenv("UV_INDEX_URL", f"{served.url}/simple")
    assert init(tmp_path / "demo", capsys) == (PIN, [])
    # PEP 691's JSON asked first, the HTML page taken when that is all the index has
    assert served.requests[0]["Accept"].startswith("application/vnd.pypi.simple.v1+json")


def test_a_json_index_is_read_as_json(tmp_path, serve, index_env, capsys):
    listing = {"meta": {"api-version": "1.1"}, "name": "curate-datasets",
               "files": [{"filename": WHEEL, "url": WHEEL, "hashes": {}}]}  # fmt: skip
    (tmp_path / "nothing").mkdir()  # the HTML side would be a 404: only the JSON has the file
    served = serve(tmp_path / "nothing", json.dumps(listing).encode())
    index_env.setenv("UV_INDEX_URL", f"{served.url}/simple")
    assert init(tmp_path / "demo", capsys) == (PIN, [])


def test_a_folder_index_by_its_file_url(tmp_path, index_env, capsys):
    lacking = simple_index(tmp_path / "lacking", {})
    index_env.setenv("UV_INDEX_URL", (lacking / "simple").as_uri())
    value, _ = init(tmp_path / "before", capsys)
    assert value.startswith("curate-datasets @ git+https://")
    having = simple_index(tmp_path / "having", {WHEEL: b"x"})
    index_env.setenv("UV_INDEX_URL", (having / "simple").as_uri())
    assert init(tmp_path / "after", capsys) == (PIN, [])


def test_offline_it_says_so_in_one_line_and_keeps_the_pin(tmp_path, capsys):
    """conftest's index: a port on 127.0.0.1 nothing listens on."""
    value, notes = init(tmp_path / "demo", capsys)
    assert value == PIN
    (note,) = notes
    assert note.startswith(f"note: could not ask http://127.0.0.1:9/simple for {PIN} (")
    assert note.endswith("): the workflows pin it unchecked")


def test_a_toolkit_given_is_kept_even_when_the_index_lacks_it(tmp_path, serve, index_env, capsys):
    served = serve(simple_index(tmp_path / "index", {WHEEL: b"x"}))
    index_env.setenv("UV_INDEX_URL", f"{served.url}/simple")
    value, notes = init(tmp_path / "demo", capsys, "--toolkit", "curate-datasets==9.9.9")
    assert value == "curate-datasets==9.9.9"
    (note,) = notes
    assert note.startswith(f"note: curate-datasets==9.9.9 is not on {served.url}/simple: the "
                           "workflows' install step fails until it is uploaded")  # fmt: skip


def test_a_git_toolkit_is_not_looked_up(tmp_path, serve, index_env, capsys):
    served = serve(simple_index(tmp_path / "index", {}))
    index_env.setenv("UV_INDEX_URL", f"{served.url}/simple")
    url = "git+https://github.com/example/curate@" + "0" * 40
    assert init(tmp_path / "demo", capsys, "--toolkit", url) == (f"curate-datasets @ {url}", [])
    assert served.requests == []


def test_the_index_s_password_is_sent_but_never_printed(tmp_path, serve, index_env, capsys):
    served = serve(simple_index(tmp_path / "index", {}))
    host = served.url.removeprefix("http://")
    index_env.setenv("UV_INDEX_URL", f"http://reader:s3cret@{host}/simple")
    _, notes = init(tmp_path / "demo", capsys)
    assert "s3cret" not in " ".join(notes) and f"is not on http://{host}/simple" in notes[0]
    sent = served.requests[0]["Authorization"]
    assert base64.b64decode(sent.removeprefix("Basic ")) == b"reader:s3cret"


def test_the_index_variables_in_uv_s_order_then_pip_s(index_env):
    assert CONFIGURED_INDEX() == "https://pypi.org/simple"
    index_env.setenv("PIP_INDEX_URL", "https://pip.example/simple")
    assert CONFIGURED_INDEX() == "https://pip.example/simple"
    index_env.setenv("UV_INDEX_URL", "https://uv.example/simple")
    assert CONFIGURED_INDEX() == "https://uv.example/simple"
    index_env.setenv("UV_DEFAULT_INDEX", "https://default.example/simple")
    assert CONFIGURED_INDEX() == "https://default.example/simple"


def test_the_repository_is_the_one_of_project_urls():
    """One place names it: [project.urls], read back from the installed metadata; the
    pre-commit snippet of docs/ci.md says the same."""
    import tomllib

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert toolkit._repository() == urls["Repository"]
    ci = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    snippet = ci.split("# .pre-commit-config.yaml", 1)[1].split("```", 1)[0]
    (repo,) = [ln.split("repo:", 1)[1].split()[0] for ln in snippet.splitlines() if "repo:" in ln]
    assert repo == urls["Repository"]
    assert "OWNER" not in ci
