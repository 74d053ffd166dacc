"""The single-source guard (CONTRIBUTING.md): the package is the source, the notebooks show and test it.

- A notebook may not define (``def`` / ``class`` at any indentation, or ``name = lambda ...``) a name that
  a ``utils`` module defines at top level: that would be a hand-kept copy that can drift.
- Every ``show_source(...)`` in a notebook names a real object of the ``utils`` package.
- Every ``utils`` module has a module docstring; every public function and class has a docstring; public
  functions and methods have type hints on their arguments (and functions on their return value).

Everything is read with ``ast``; only the show_source targets are imported.
"""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

from classroom.exercises import cell_python

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "chapters").glob("*.ipynb"))
MODULES = sorted(p for p in (REPO / "utils").glob("*.py"))
# The classroom tooling (student editions) is not course content: its generic names (check, main) are
# not taught in any chapter, so a notebook may use them.
NOT_TAUGHT = {"classroom.py"}


def _module_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _package_names() -> dict[str, str]:
    """Every name a utils module defines at top level with def or class -> 'utils.module'."""
    names: dict[str, str] = {}
    for path in MODULES:
        if path.name in NOT_TAUGHT:
            continue
        for node in _module_tree(path).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.setdefault(node.name, f"utils.{path.stem}")
    return names


def _code_cells(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for i, c in enumerate(cells) if c["cell_type"] == "code"]


def _cell_trees(path: Path) -> list[tuple[int, ast.Module]]:
    trees = []
    for i, src in _code_cells(path):
        try:
            trees.append((i, ast.parse(cell_python(src))))
        except SyntaxError as err:
            pytest.fail(f"{path.name}, cell {i}: the code does not parse: {err}")
    return trees


def _params(paths: list[Path]) -> list:
    return [pytest.param(p, id=p.stem if p.suffix == ".ipynb" else p.name) for p in paths]


# ---------------------------------------------------------------------------------------------------
# No hand-kept copies
# ---------------------------------------------------------------------------------------------------
def _defined_names(tree: ast.AST) -> list[tuple[str, int]]:
    """(name, line) of every def/class at any depth and of every ``name = lambda ...``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.name, node.lineno))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            found += [(t.id, node.lineno) for t in node.targets if isinstance(t, ast.Name)]
    return found


def test_the_package_defines_names():
    names = _package_names()
    assert "get_device" in names and "plot_attention" in names, "reading utils/*.py with ast found too little"


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_notebook_defines_no_package_name(path):
    package = _package_names()
    clashes = [f"cell {i}, line {line}: `{name}` is defined in {package[name]}"
               for i, tree in _cell_trees(path) for name, line in _defined_names(tree) if name in package]
    assert not clashes, (
        f"{path.name} defines names that the package defines (a hand-kept copy can drift from the "
        "package). Build the computation step by step without redefining it, then "
        "show_source(utils....) and assert that both agree; for a helper of your own, pick another name:"
        "\n  " + "\n  ".join(clashes))


# ---------------------------------------------------------------------------------------------------
# show_source targets
# ---------------------------------------------------------------------------------------------------
def _import_aliases(trees: list[tuple[int, ast.Module]]) -> dict[str, str]:
    """Local name -> dotted origin for every import in the notebook ('att' -> 'utils.attention')."""
    aliases: dict[str, str] = {}
    for _, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        head = a.name.split(".")[0]
                        aliases[head] = head
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _resolve(dotted: str) -> object:
    """Import the longest module prefix of ``dotted`` and get the remaining attributes from it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no importable module in {dotted!r}")


def _show_source_calls(path: Path) -> list[tuple[int, ast.Call]]:
    calls = []
    for i, tree in _cell_trees(path):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name == "show_source":
                    calls.append((i, node))
    return calls


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_show_source_targets_are_package_objects(path):
    from utils.runtime import show_source

    aliases = _import_aliases(_cell_trees(path))
    problems = []
    for i, call in _show_source_calls(path):
        where = f"cell {i}, line {call.lineno}"
        if len(call.args) != 1 or call.keywords:
            problems.append(f"{where}: show_source takes exactly one object")
            continue
        parts = _dotted(call.args[0])
        if parts is None:
            problems.append(f"{where}: pass a name such as utils.attention.causal_mask, "
                            f"not {ast.unparse(call.args[0])}")
            continue
        if parts[0] not in aliases:
            problems.append(f"{where}: `{parts[0]}` is not imported in this notebook, so "
                            f"`{'.'.join(parts)}` cannot come from utils")
            continue
        dotted = ".".join([aliases[parts[0]], *parts[1:]])
        if dotted.split(".")[0] != "utils":
            problems.append(f"{where}: show_source({'.'.join(parts)}) shows {dotted}, not a utils object")
            continue
        try:
            obj = _resolve(dotted)
            show_source(obj)
        except (ImportError, AttributeError, TypeError) as err:
            problems.append(f"{where}: show_source({'.'.join(parts)}) -> {dotted} does not resolve: {err}")
            continue
        module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
        if not module.startswith("utils"):
            problems.append(f"{where}: {dotted} is defined in {module}, not in the utils package")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------------
# Docstrings and type hints in the package
# ---------------------------------------------------------------------------------------------------
def _unannotated(fn: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> list[str]:
    args = fn.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if method and every and every[0].arg in ("self", "cls") and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        every = every[1:]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return [a.arg for a in every if a.annotation is None]


@pytest.mark.parametrize("path", _params(MODULES))
def test_module_has_a_docstring(path):
    doc = ast.get_docstring(_module_tree(path))
    assert doc and doc.strip(), f"utils/{path.name} has no module docstring saying what it holds"


@pytest.mark.parametrize("path", _params(MODULES))
def test_public_api_has_docstrings_and_type_hints(path):
    problems = []
    for node in _module_tree(path).body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if node.name.startswith("_"):
            continue
        if not ast.get_docstring(node):
            problems.append(f"{node.name} (line {node.lineno}): no docstring")
        if isinstance(node, ast.ClassDef):
            methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            for item in methods:
                public = not item.name.startswith("_") or item.name in ("__init__", "__call__")
                if public and (missing := _unannotated(item, method=True)):
                    problems.append(f"{node.name}.{item.name} (line {item.lineno}): "
                                    f"no type hints on {missing}")
        else:
            if missing := _unannotated(node, method=False):
                problems.append(f"{node.name} (line {node.lineno}): no type hints on {missing}")
            if node.returns is None:
                problems.append(f"{node.name} (line {node.lineno}): no return type hint")
    assert not problems, f"utils/{path.name}:\n  " + "\n  ".join(problems)
