"""``curate init``: a new dataset project, ready for its drops, or curate added to an existing one.

Everything it writes comes from templates inside the package, so it works from an installed
wheel with no file of this repository. It never overwrites: in a folder that already has a
``pyproject.toml`` (an existing project) the settings go into ``curate.toml`` instead, an
existing ``.gitignore`` is left as it is (the lines to add are said), and if any other file it
would write already exists it writes nothing and says which.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath
from string import Template

from curate.errors import UsageError
from curate.project.toolkit import choose, toolkit_requirement

TEMPLATES = Path(__file__).with_name("templates")

# target (relative to the project folder) -> template file (relative to TEMPLATES)
FILES: dict[str, str] = {
    "pyproject.toml": "pyproject.toml",
    "dataset_card.md": "dataset_card.md",
    ".gitignore": "gitignore",
    ".github/workflows/validate.yml": "workflows/validate.yml",
    ".github/workflows/release.yml": "workflows/release.yml",
}
DEFAULT_SOURCES = "sources"  # the folder of the sources, unless `curate init --sources DIR`
# Templates filled with string.Template ($name); the card is Jinja2 for the build, copied as is.
FILLED = {"pyproject.toml", "workflows/validate.yml", "workflows/release.yml"}
# The field mapping of a project whose sources have fields, at the end of pyproject.toml: its
# table and text field, then the other keys as commented examples (all of it commented out for
# text drops).
MAPPING_EXAMPLES = """\
# id = "id"                          # the source's own id: the column `source_id`
# title = "title"                    # carried as the string column `title`
# venue = "venue"                    # the fields of a record's venue and year ...
# year = "year"
# default_venue = "ICML"             # ... or the venue and year of a record without them
# default_year = 2025
# columns = { authors = "list<string>" }  # more fields carried as typed columns; others dropped
"""


def _mapping(format_name: str, text_field: str | None) -> str:
    table = "jsonl" if format_name == "text" else format_name
    text = f"text = {json.dumps(text_field or 'text', ensure_ascii=False)}"
    lead = "# " if format_name == "text" else ""
    head = f"{lead}[tool.curate.mapping.{table}]\n{lead}{text:<{35 - len(lead)}}"
    return f"{head}  # the field holding the text\n{MAPPING_EXAMPLES}"


def _sources_setting(text: str, folder: str) -> str:
    """The config with ``sources`` set to ``folder``, when it is not the default (left as the
    commented example then)."""
    if folder == DEFAULT_SOURCES:
        return text
    example = '# sources = "sources"               '
    setting = f"sources = {json.dumps(folder, ensure_ascii=False)}"
    return text.replace(example, f"{setting:<36} ", 1)


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


def sources_hint(format_name: str = "text") -> str:
    """The files ``curate init`` asks for, as its next step says."""
    from curate.ingest import formats

    claimed = ", ".join(formats.REGISTRY[format_name].patterns)
    return f"drops ({claimed})" if format_name == "text" else f"{format_name} files ({claimed})"


def init_project(
    folder: str | Path = ".",
    *,
    name: str | None = None,
    format_name: str = "text",
    text_field: str | None = None,
    toolkit: str | None = None,
    sources: str = DEFAULT_SOURCES,
) -> Scaffold:
    """Write a new dataset project into ``folder`` (created if missing), for sources in
    ``format_name``; a format with fields gets its mapping, its text in ``text_field``. Its
    workflows install curate as :func:`toolkit_requirement` says for ``toolkit``. The sources
    go in ``sources`` (a folder of the project), which the settings name for every command
    and which the validate workflow triggers on, with the file the settings are in.

    Raises :class:`InitRefused` naming every file that already exists, before writing any.
    """
    root = Path(folder)
    title = name or root.resolve().name or "dataset"
    folder_name = source_folder(sources)
    config = "curate.toml" if _present(root / "pyproject.toml") else "pyproject.toml"
    values = {
        "folder": folder_name,
        "folder_glob": json.dumps(f"{folder_name}/**", ensure_ascii=False),
        "config": json.dumps(config),
        "name": title.replace('"', "'"),
        "repo_id": f"your-org/{_slug(title)}",
        "sources": sources_hint(format_name),
    }
    requirement = toolkit_requirement(toolkit)  # a bad --toolkit is refused before anything
    files = dict(FILES)
    if not _present(root / folder_name):  # a folder the repository has already is kept as is
        files[f"{folder_name}/.gitkeep"] = ""
    notes = []
    if config == "curate.toml":  # an existing project: its pyproject.toml stays as it is
        files["curate.toml"] = files.pop("pyproject.toml")
    if _present(root / ".gitignore"):
        ignored = (TEMPLATES / files.pop(".gitignore")).read_text(encoding="utf-8").split()
        # What it ignores already is not asked for again (`dist/` ignores `/dist/` too).
        have = {ln.strip().strip("/") for ln in _read_lines(root / ".gitignore")}
        missing = [entry for entry in ignored if entry.strip("/") not in have]
        if missing:
            notes.append("add to .gitignore: " + ", ".join(missing))
    existing = [rel for rel in files if _present(root / rel)]
    if existing:
        raise InitRefused(f"{root}: already has " + ", ".join(existing) + "; nothing was written")
    chosen = choose(requirement, given=toolkit is not None)
    # JSON's string syntax is YAML's double-quoted scalar: the workflows' env value
    values["toolkit"] = json.dumps(chosen.requirement)
    notes += [chosen.note] if chosen.note else []
    written = []
    for rel, template in files.items():
        target = root / rel
        text = ""
        if template:
            text = (TEMPLATES / template).read_text(encoding="utf-8")
            if template in FILLED:
                text = Template(text).substitute(values)
            if rel in ("pyproject.toml", "curate.toml"):  # (not in the template: it stays valid)
                text = _sources_setting(text, folder_name) + _mapping(format_name, text_field)
            if rel == "curate.toml":
                text = _own_table(text)
        target.parent.mkdir(parents=True, exist_ok=True)
        # "x": never replace a file that appeared since the check above.
        with open(target, "x", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        written.append(target)
    return Scaffold(root, written, notes)


def source_folder(given: str) -> str:
    """``--sources DIR`` as the settings and the workflow name it: a folder inside the project,
    written with ``/`` (the workflow's path filter is relative to the repository)."""
    parts = PurePath(given.strip()).parts
    if not parts or PurePath(given).is_absolute() or ".." in parts:
        raise UsageError(f"--sources {given!r}: give a folder inside the project, e.g. data/raw")
    if any(c in given for c in '"*?[]{}!\\\n'):
        raise UsageError(f"--sources {given!r}: a folder name without quotes or glob characters")
    return PurePosixPath(*parts).as_posix()


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _read_lines(path: Path) -> list[str]:
    """The lines of a text file of the user's, or none if it cannot be read as text."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
