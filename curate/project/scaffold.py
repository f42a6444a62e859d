"""``curate init``: a new dataset project, ready for its drops, or curate added to an existing one.

Everything it writes comes from templates inside the package, so it works from an installed
wheel with no file of this repository. It never overwrites: in a folder that already has a
``pyproject.toml`` (an existing project) the settings go into ``curate.toml`` instead, an
existing ``.gitignore`` is left as it is (the lines to add are said), and if any other file it
would write already exists it writes nothing and says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from curate.version import version

TEMPLATES = Path(__file__).with_name("templates")

# target (relative to the project folder) -> template file (relative to TEMPLATES)
FILES: dict[str, str] = {
    "pyproject.toml": "pyproject.toml",
    "dataset_card.md": "dataset_card.md",
    ".gitignore": "gitignore",
    ".github/workflows/validate.yml": "workflows/validate.yml",
    ".github/workflows/release.yml": "workflows/release.yml",
    "sources/.gitkeep": "",
}
# Templates filled with string.Template ($name); the card is Jinja2 for the build, copied as is.
FILLED = {"pyproject.toml", "workflows/validate.yml", "workflows/release.yml"}


class InitRefused(Exception):
    """``curate init`` would overwrite something: nothing was written."""


@dataclass
class Scaffold:
    root: Path
    written: list[Path]
    notes: list[str] = field(default_factory=list)  # what the user has to do by hand


def _own_table(pyproject: str) -> str:
    """The settings of the pyproject template as a file of their own (``curate.toml``)."""
    lines = []
    for line in pyproject.splitlines(keepends=True):
        if line.strip() == "[tool.curate]":
            continue
        lines.append(line.replace("[tool.curate.", "["))
    return "".join(lines)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-") or "dataset"


def init_project(folder: str | Path = ".", *, name: str | None = None) -> Scaffold:
    """Write a new dataset project into ``folder`` (created if missing).

    Raises :class:`InitRefused` naming every file that already exists, before writing any.
    """
    root = Path(folder)
    title = name or root.resolve().name or "dataset"
    values = {
        "name": title.replace('"', "'"),
        "repo_id": f"your-org/{_slug(title)}",
        "version": version(),
    }
    files = dict(FILES)
    notes = []
    if _present(root / "pyproject.toml"):  # an existing project: its file stays as it is
        files["curate.toml"] = files.pop("pyproject.toml")
    if _present(root / ".gitignore"):
        ignored = (TEMPLATES / files.pop(".gitignore")).read_text(encoding="utf-8").split()
        notes.append("add to .gitignore: " + ", ".join(ignored))
    existing = [rel for rel in files if _present(root / rel)]
    if existing:
        raise InitRefused(f"{root}: already has " + ", ".join(existing) + "; nothing was written")
    written = []
    for rel, template in files.items():
        target = root / rel
        text = ""
        if template:
            text = (TEMPLATES / template).read_text(encoding="utf-8")
            if template in FILLED:
                text = Template(text).substitute(values)
            if rel == "curate.toml":
                text = _own_table(text)
        target.parent.mkdir(parents=True, exist_ok=True)
        # "x": never replace a file that appeared since the check above.
        with open(target, "x", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        written.append(target)
    return Scaffold(root, written, notes)


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()
