"""The design as docs/architecture.md states it holds in the code: the modules it lists are the
modules there are, the import directions and the absence of cycles, and the size of functions.

The import graph is read from the source (every ``import`` and ``from ... import``, at any
depth: inside functions too), not by importing anything.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGES = ("curate", "validation")
MAX_FUNCTION_LINES = 80
# What a function longer than that says in its docstring, with the reason after it.
LONG_BECAUSE = "It is long because"


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            inside.update(id(sub) for sub in ast.walk(node))
    return inside


def _imports(name: str, path: Path) -> tuple[set[str], set[str]]:
    """The modules of ours that ``name`` imports: at run time, and for type checking only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    runtime: set[str] = set()
    typing: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            # `from pkg import submodule` is an import of the submodule.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]  # fmt: skip
        for target in targets:
            while target not in MODULES and "." in target:
                target = target.rpartition(".")[0]
            if target in MODULES and target != name:
                (typing if id(node) in typing_only else runtime).add(target)
    return runtime, typing


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    if module.split(".")[0] == "validation":
        return 0
    if module == "curate.cli" or module.startswith("curate.cli."):
        return 3
    if module == "curate" or module.startswith("curate.pipeline"):
        return 2
    return 1  # the stages


def test_validation_never_imports_curate():
    offenders = [
        f"{m} imports {t}"
        for m, (runtime, typing) in GRAPH.items()
        if _layer(m) == 0
        for t in runtime | typing
        if t.split(".")[0] == "curate"
    ]
    assert offenders == []


def test_imports_go_from_the_command_line_to_the_api_to_the_stages_to_validation():
    offenders = [
        f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)})"
        for m, (runtime, typing) in sorted(GRAPH.items())
        for t in sorted(runtime | typing)
        if _layer(t) > _layer(m)
    ]
    assert offenders == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _with_packages(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each import also of the packages above its target (their ``__init__`` runs first),
    but not of the importer's own (they ran before it)."""
    out: dict[str, set[str]] = defaultdict(set)
    for m, targets in edges.items():
        mine = {".".join(m.split(".")[:k]) for k in range(1, m.count(".") + 1)}
        for t in targets:
            out[m].add(t)
            parts = t.split(".")
            out[m].update(
                p for k in range(1, len(parts))
                if (p := ".".join(parts[:k])) in MODULES and p not in mine and p != m
            )  # fmt: skip
    return out


def test_no_import_cycle_counting_imports_inside_functions_and_package_inits():
    assert _cycles(_with_packages({m: runtime for m, (runtime, _) in GRAPH.items()})) == []


def test_the_cycle_finder_finds_a_cycle():
    """The test above can fail: a cycle of three, with a module outside it."""
    edges = defaultdict(set, {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert _cycles(edges) == [["a", "b", "c"]]


def test_the_architecture_document_lists_every_module_and_nothing_else():
    section = DOC[DOC.index("## Modules") : DOC.index("## Adding one")]
    listed = re.findall(r"^\| `([\w/]+\.py)` \|", section, re.M)
    actual = sorted(p.relative_to(ROOT).as_posix() for p in MODULES.values())
    assert sorted(listed) == actual
    assert len(listed) == len(set(listed))


def test_every_path_the_architecture_document_names_exists():
    named = set(re.findall(r"`((?:curate|validation|tests|docs)/[\w/.-]*)`", DOC))
    named |= {"README.md"} if "`README.md`" in DOC else set()
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == []


def test_every_dotted_name_the_architecture_document_gives_exists():
    import importlib

    names = set(re.findall(r"`((?:curate|validation)\.[\w.]+)`", DOC))
    missing = []
    for dotted in sorted(names):
        module, attribute = dotted, None
        while module not in MODULES and "." in module:
            module, _, last = module.rpartition(".")
            attribute = last if attribute is None else f"{last}.{attribute}"
        if module not in MODULES:
            missing.append(dotted)
            continue
        target: object = importlib.import_module(module)
        for part in (attribute or "").split(".") if attribute else []:
            if not hasattr(target, part):
                missing.append(dotted)
                break
            target = getattr(target, part)
    assert missing == []


def _functions():
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield name, node


@pytest.mark.parametrize("package", PACKAGES)
def test_no_library_function_is_longer_than_80_lines_unless_it_says_why(package):
    long = [
        f"{m}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for m, node in _functions()
        if m.split(".")[0] == package
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
        and LONG_BECAUSE not in (ast.get_docstring(node) or "")
    ]
    assert long == []


# A path of this repository named in its code and documentation: a test, a bench script, a page.
_NAMED_PATH = re.compile(r"\b((?:tests|bench|docs)/(?:[A-Za-z0-9_]+/)*[A-Za-z0-9_]+\.(?:py|md))\b")


def test_every_file_the_code_and_docs_name_exists():
    """A file moved without its mentions leaves readers looking for it (tests moved into folders
    once and a dozen comments kept the old paths)."""
    files = [ROOT / "README.md", ROOT / ".ci" / "run"]
    for folder in ("curate", "validation", "tests", "bench", "docs"):
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md"))
    missing = []
    for path in files:
        if "out" in path.relative_to(ROOT).parts:
            continue  # bench/out: what the benchmarks wrote
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for named in _NAMED_PATH.findall(line):
                # relative to the repository, or (a link in docs/ or bench/) to the file's folder
                if not (ROOT / named).exists() and not (path.parent / named).exists():
                    missing.append(f"{path.relative_to(ROOT)}:{n}: {named}")
    assert not missing, "\n".join(missing)
