"""Whether the release ``curate init`` pins can be installed, and what to pin when it cannot.

A workflow that pins ``curate-datasets==X.Y.Z`` fails at its install step while that release is
not on the index (before the first upload, or on a private index that lacks it), and nothing
says so until the first pull request. So ``init`` asks the index the workflows' installer would
ask (one request, a short timeout). When the release is not there, the workflows get what this
curate was installed from instead, when that is a source that cannot move: this checkout's
commit in the repository of ``[project.urls]``, the commit of the git URL it was installed from,
or the wheel URL with its sha256. Offline, it says so and keeps the pin.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from packaging.version import Version

from curate.errors import UsageError
from curate.version import DISTRIBUTION, version

PYPI = "https://pypi.org/simple"
TIMEOUT = 5.0  # seconds for the one request: init waits at most this long
# The index the workflows' uv and pip would use, in uv's order of precedence; pip's own last.
INDEX_VARIABLES = ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")
# PEP 691's JSON first, PEP 503's HTML for an index that only has that.
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SHA256 = re.compile(r"(?:^|&)sha256=[0-9a-f]{64}(?:&|$)")
# What a URL written into a workflow may hold: no quote, space, backslash or `$` (a GitHub
# expression or a shell variable).
_URL = re.compile(r"[A-Za-z0-9._~:/?#@!&+,;=%-]+")


def toolkit_requirement(spec: str | None = None) -> str:
    """The requirement the workflows install curate with: exactly our distribution.

    By default the running release from the index, pinned (``curate-datasets==X.Y.Z``).
    ``spec`` may pin another release the same way, or name a URL of our distribution (bare, or
    as ``curate-datasets @ URL``) whose content cannot change under it: a ``git+https`` URL
    pinned to a full commit id, or an ``https`` URL of a wheel or sdist with its ``#sha256=``.
    Anything else (another name, a range, a branch or tag, a URL without its hash) is a
    :class:`UsageError`: the release workflow holds the Hub token, and a name or a reference
    that can move installs whatever is published under it then.
    """
    if spec is None:
        return f"{DISTRIBUTION}=={version()}"
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    def refuse(why: str) -> UsageError:
        return UsageError(f"--toolkit {spec!r}: {why}")

    text = spec.strip()
    try:
        req = Requirement(text)
    except InvalidRequirement:
        try:  # a bare URL: the distribution it must hold is ours
            req = Requirement(f"{DISTRIBUTION} @ {text}")
        except InvalidRequirement:
            raise refuse("not a requirement nor a URL") from None
    if canonicalize_name(req.name) != DISTRIBUTION:
        raise refuse(f"installs {req.name!r}, not {DISTRIBUTION!r} (curate's distribution)")
    if req.extras or req.marker is not None:
        raise refuse("extras and markers have no use here")
    if req.url is None:
        pins = list(req.specifier)
        if len(pins) != 1 or pins[0].operator != "==" or "*" in pins[0].version:
            raise refuse(f"pin one release ({DISTRIBUTION}==X.Y.Z), or give a URL")
        return f"{DISTRIBUTION}{req.specifier}"
    url = req.url
    if not _URL.fullmatch(url):
        raise refuse("the URL holds a character a workflow would read otherwise")
    base, _, fragment = url.partition("#")
    if url.startswith("git+https://"):
        path = base.split("://", 1)[1].partition("/")[2]
        if not _COMMIT.fullmatch(path.rpartition("@")[2] if "@" in path else ""):
            raise refuse("a git URL must end in @ and a full commit id (a branch or tag moves)")
    elif url.startswith("https://"):
        if not base.endswith((".whl", ".tar.gz")) or not _SHA256.search(fragment):
            raise refuse("an https URL must be a .whl or .tar.gz with its #sha256=")
    else:
        raise refuse("give a git+https URL pinned to a commit or an https URL with #sha256=")
    return f"{DISTRIBUTION} @ {url}"


@dataclass(frozen=True)
class Choice:
    """The requirement the workflows install, and the line ``init`` says about it (or None)."""

    requirement: str
    note: str | None = None


def configured_index() -> str:
    for name in INDEX_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return PYPI


def shown(url: str) -> str:
    """``url`` without the user and password an index URL may carry: it is printed."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            path = urllib.parse.urlsplit(href).path
            self.names.append(urllib.parse.unquote(path.rstrip("/").rpartition("/")[2]))


def _version_of(filename: str) -> Version | None:
    from packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        parse_sdist_filename,
        parse_wheel_filename,
    )

    try:
        if filename.endswith(".whl"):
            name, found, _, _ = parse_wheel_filename(filename)
        else:
            name, found = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return found if name == DISTRIBUTION else None


def _file_names(index: str) -> list[str] | None:
    """The file names the index lists for our distribution; None if it has no such project.

    Raises OSError (``urllib.error.URLError`` among them) when the index cannot be asked.
    """
    url = f"{index.rstrip('/')}/{DISTRIBUTION}/"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":  # a folder in the simple layout, or flat (as uv accepts both)
        folder = Path(urllib.request.url2pathname(parts.path))
        if not folder.is_dir():
            return None
        page = folder / "index.html"
        if not page.is_file():
            return [p.name for p in folder.iterdir()]
        body, kind = page.read_bytes(), "text/html"
    else:
        request = urllib.request.Request(shown(url), headers={"Accept": ACCEPT})
        if parts.username is not None:
            import base64

            user, password = (
                urllib.parse.unquote(p or "") for p in (parts.username, parts.password)
            )
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                body, kind = response.read(), response.headers.get_content_type()
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410):
                return None
            raise
    if kind.endswith("json"):
        return [str(f.get("filename", "")) for f in json.loads(body).get("files", [])]
    links = _Links()
    links.feed(body.decode("utf-8", "replace"))
    return links.names


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                              timeout=10, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _repository() -> str | None:
    """The ``Repository`` URL of ``[project.urls]``, from the installed metadata."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata(DISTRIBUTION).get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().casefold() == "repository" and url.strip().startswith("https://"):
            return url.strip().removesuffix(".git").rstrip("/")
    return None


def _checkout_commit(folder: Path) -> tuple[str, str] | None:
    """``(spec, what)``: the commit of the checkout holding ``folder``, if it is curate's."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    repository = _repository()
    if top is None or repository is None:
        return None
    try:
        own = f'name = "{DISTRIBUTION}"' in (Path(top) / "pyproject.toml").read_text("utf-8")
    except OSError:
        return None
    commit = _git(folder, "rev-parse", "HEAD")
    if not own or commit is None:
        return None
    caveats = []
    if _git(folder, "status", "--porcelain", "--untracked-files=no"):
        caveats.append("its uncommitted changes are not in it")
    if not _git(folder, "branch", "--remotes", "--contains", commit):
        caveats.append("push it before the first pull request")
    said = f" ({'; '.join(caveats)})" if caveats else ""
    return f"git+{repository}@{commit}", f"the commit of the checkout it runs from{said}"


def _installed_from() -> tuple[str, str] | None:
    """``(spec, what)`` for where this curate came from, when that cannot move under it."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        origin = json.loads(distribution(DISTRIBUTION).read_text("direct_url.json") or "{}")
    except (PackageNotFoundError, ValueError):
        origin = {}
    url = origin.get("url", "")
    vcs = origin.get("vcs_info", {})
    archive = origin.get("archive_info", {})
    if vcs.get("vcs") == "git" and url.startswith("https://") and vcs.get("commit_id"):
        return f"git+{url}@{vcs['commit_id']}", "the commit it was installed from"
    digest = (archive.get("hashes") or {}).get("sha256")
    if archive and url.startswith("https://") and digest:
        return f"{url.partition('#')[0]}#sha256={digest}", "the file it was installed from"
    if "dir_info" in origin or not origin:  # a checkout: installed from it, or on the path
        here = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path)) if url else None
        return _checkout_commit(here or Path(__file__).resolve().parent)
    return None


def choose(requirement: str, given: bool) -> Choice:
    """What the workflows install: ``requirement``, or (when it is the default pin and the
    index lacks it) what this curate came from. ``given``: the user named it (``--toolkit``),
    so it is kept whatever the index says, with a warning."""
    if " @ " in requirement:  # a URL: nothing to look up
        return Choice(requirement)
    index = configured_index()
    try:
        names = _file_names(index)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        why = getattr(exc, "reason", None) or exc
        return Choice(requirement, f"could not ask {shown(index)} for {requirement} ({why}): "
                      "the workflows pin it unchecked")  # fmt: skip
    wanted = Version(requirement.partition("==")[2])
    if any(_version_of(name) == wanted for name in names or []):
        return Choice(requirement)
    missing = f"{requirement} is not on {shown(index)}"
    found = None if given else _installed_from()
    if found is not None:
        try:
            chosen = toolkit_requirement(found[0])
        except UsageError:  # a URL a workflow could not hold as it is
            chosen = None
        if chosen is not None:
            return Choice(chosen, f"{missing}: the workflows install {found[0]}, {found[1]}; "
                          "--toolkit SPEC chooses another")  # fmt: skip
    return Choice(requirement, f"{missing}: the workflows' install step fails until it is "
                  "uploaded (--toolkit takes a git+https URL pinned to a commit, or a wheel URL "
                  "with #sha256=)")  # fmt: skip
