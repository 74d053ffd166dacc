"""Static checks of the stored chapter notebooks (no execution): format, the chapter pattern, exercises.

Every test is parametrised by notebook, so a failure names the chapter and the cell. The pattern these
tests enforce is described in CONTRIBUTING.md ("Chapter notebooks").
"""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path

import pytest

from classroom.exercises import cell_python

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "chapters").glob("*.ipynb"))
TOC = REPO / "book" / "_toc.yml"

_EXERCISE = re.compile(r"^([`:]{3,})\s*\{exercise\}", re.M)
_LABEL = re.compile(r"^\s*:label:\s*(\S+)", re.M)
_SOLUTION_START = re.compile(r"^[`:]{3,}\s*\{solution-start\}[ \t]*(\S*)", re.M)
_SOLUTION_END = re.compile(r"^[`:]{3,}\s*\{solution-end\}", re.M)
_DROPDOWN = re.compile(r"^\s*:class:[^\n]*\bdropdown\b", re.M)
_TITLE = re.compile(r"^# (\d+)\. \S")
# /work/..., /home/..., /Users/..., /root/... not inside a URL or a longer path, and Windows drives.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:-])/(?:work|home|Users|root)/"
                            r"|(?<![\w$])[A-Za-z]:\\(?:Users|Documents|Windows|Program|work|home)")


def _params(paths: list[Path]) -> list:
    return [pytest.param(p, id=p.stem) for p in paths]


@cache
def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _parse(source: str, where: str) -> ast.Module:
    try:
        return ast.parse(cell_python(source))
    except SyntaxError as err:
        pytest.fail(f"{where}: the code does not parse: {err}")


def _module_functions(module: str) -> set[str]:
    """Public top-level function names of ``utils/<module>.py`` (read with ast, nothing imported)."""
    tree = ast.parse((REPO / "utils" / f"{module}.py").read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}


CHECK_FUNCTIONS = _module_functions("checks")
PLOT_FUNCTIONS = _module_functions("plots")


def _calls(tree: ast.AST) -> list[ast.Call]:
    """Calls made when the cell runs (calls inside a def or lambda body are not made by the cell)."""
    found: list[ast.Call] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.Call):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _chapter(path: Path) -> str:
    return path.name[:2]


# ---------------------------------------------------------------------------------------------------
# Format: nbformat 4, no outputs, python3 kernel, no machine-specific paths
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_file_name_and_nbformat(path):
    nbformat = pytest.importorskip("nbformat")
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path.name), (
        f"{path.name}: chapter notebooks are named NN_lower_case_words.ipynb")
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    assert nb.nbformat == 4, f"{path.name}: nbformat {nb.nbformat}, expected 4"
    nbformat.validate(nb)


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_stored_without_outputs(path):
    dirty = [i for i, c in enumerate(_load(path)["cells"])
             if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: cells {dirty} have outputs or execution counts; store the notebook "
                       "without outputs (regenerate it with jupytext, never save an executed copy)")


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_kernelspec_is_python3(path):
    kernelspec = _load(path)["metadata"].get("kernelspec", {})
    assert kernelspec.get("name") == "python3", (
        f"{path.name}: kernelspec name is {kernelspec.get('name')!r}, expected 'python3' (nbval and the "
        "book build start that kernel)")


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_no_absolute_paths(path):
    nb = _load(path)
    found = []
    for i, cell in enumerate(nb["cells"]):
        text = _source(cell) + json.dumps(cell.get("metadata", {}))
        found += [(i, m.group(0)) for m in _ABSOLUTE_PATH.finditer(text)]
    found += [("notebook metadata", m.group(0)) for m in _ABSOLUTE_PATH.finditer(json.dumps(nb["metadata"]))]
    assert not found, f"{path.name}: machine-specific absolute paths (cell, match): {found}"


# ---------------------------------------------------------------------------------------------------
# The chapter pattern: bootstrap, title, learning goals, seed, Summary, Exercises
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_first_cell_is_the_colab_bootstrap(path):
    cell = _load(path)["cells"][0]
    src = _source(cell)
    where = f"{path.name}, cell 0 (the Colab bootstrap)"
    assert cell["cell_type"] == "code", f"{where}: must be a code cell"
    assert "remove-cell" in _tags(cell), f"{where}: must be tagged remove-cell (hidden in the book)"
    # Its text is written by scripts/course_address.py; tests/test_bootstrap.py checks it and runs it.
    assert "COURSE_REPO, COURSE_VERSION" in src, f"{where}: run python scripts/course_address.py"
    _parse(src, where)


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_title_and_learning_goals(path):
    cells = _load(path)["cells"]
    title = cells[1] if len(cells) > 1 else {"cell_type": "none", "source": ""}
    first_line = _source(title).lstrip().split("\n", 1)[0]
    match = _TITLE.match(first_line)
    assert title["cell_type"] == "markdown" and match, (
        f"{path.name}: cell 1 must be a markdown title '# N. Title', got {first_line[:80]!r}")
    assert int(match.group(1)) == int(_chapter(path)), (
        f"{path.name}: the title number {match.group(1)} does not match the file name")
    opening = "\n".join(_source(c) for c in cells[1:4] if c["cell_type"] == "markdown")
    assert re.search(r"learning goals", opening, re.I), f"{path.name}: no 'Learning goals' near the title"


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_seeds_everything(path):
    code = [_source(c) for c in _load(path)["cells"] if c["cell_type"] == "code"]
    assert any(re.search(r"\bseed_everything\(", src) for src in code), (
        f"{path.name}: no code cell calls seed_everything(...): the chapter must be repeatable")


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_threads_are_chosen_in_one_place(path):
    code = "\n".join(_source(c) for c in _load(path)["cells"] if c["cell_type"] == "code")
    assert re.search(r"\bchoose_threads\(", code), (
        f"{path.name}: the set-up cell must call utils.choose_threads() (threads for this machine)")
    assert not re.search(r"\bset_num_threads\(", code), (
        f"{path.name}: calls torch.set_num_threads itself; utils.runtime.choose_threads is the one place "
        "that picks the thread count (set COURSE_THREADS to override it)")


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_has_summary_then_exercises(path):
    headings = [line.strip() for c in _load(path)["cells"] if c["cell_type"] == "markdown"
                for line in _source(c).splitlines() if line.startswith("## ")]
    assert "## Summary" in headings, f"{path.name}: no '## Summary' heading"
    assert "## Exercises" in headings, f"{path.name}: no '## Exercises' heading"
    assert headings.index("## Summary") < headings.index("## Exercises"), (
        f"{path.name}: '## Summary' must come before '## Exercises'")


# ---------------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------------
def _exercises(path: Path) -> list[dict]:
    """Each exercise's label and the indices of its cells (None where a part is missing)."""
    cells = _load(path)["cells"]
    starts = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and _EXERCISE.search(_source(c))]
    found = []
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(cells)
        src = _source(cells[start])
        label = _LABEL.search(src)
        ex = {"cell": start, "label": label.group(1) if label else None, "count": len(_EXERCISE.findall(src)),
              "solution_start": None, "solution_end": None, "solution_cells": [], "check": None}
        for i in range(start + 1, stop):
            markdown, cell_src = cells[i]["cell_type"] == "markdown", _source(cells[i])
            opened, closed = ex["solution_start"] is not None, ex["solution_end"] is not None
            if markdown and not opened and _SOLUTION_START.search(cell_src):
                ex["solution_start"] = i
            elif markdown and opened and not closed and _SOLUTION_END.search(cell_src):
                ex["solution_end"] = i
            elif not markdown and opened and not closed:
                ex["solution_cells"].append(i)
            elif not markdown and closed and ex["check"] is None:
                ex["check"] = i
        found.append(ex)
    return found


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_at_least_three_exercises(path):
    exercises = _exercises(path)
    assert len(exercises) >= 3, f"{path.name}: {len(exercises)} {{exercise}} blocks, need at least 3"


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_exercise_blocks_are_complete(path):
    cells = _load(path)["cells"]
    problems = []
    for ex in _exercises(path):
        where = f"exercise in cell {ex['cell']}"
        label = ex["label"]
        if ex["count"] != 1:
            problems.append(f"{where}: put each {{exercise}} in its own markdown cell")
        if not label:
            problems.append(f"{where}: no ':label:'")
        elif not label.startswith(f"ex-{_chapter(path)}-"):
            problems.append(f"{where}: label {label!r} should start with 'ex-{_chapter(path)}-'")
        if ex["solution_start"] is None:
            problems.append(f"{where}: no {{solution-start}} cell after it")
            continue
        start_src = _source(cells[ex["solution_start"]])
        if _SOLUTION_START.search(start_src).group(1) != label:
            problems.append(f"{where}: {{solution-start}} in cell {ex['solution_start']} names "
                            f"{_SOLUTION_START.search(start_src).group(1)!r}, not the label {label!r}")
        if not _DROPDOWN.search(start_src):
            problems.append(f"{where}: {{solution-start}} needs ':class: dropdown' (collapsed solution)")
        if ex["solution_end"] is None:
            problems.append(f"{where}: no {{solution-end}} cell after its {{solution-start}}")
            continue
        marked = [i for i in ex["solution_cells"]
                  if "### BEGIN SOLUTION" in _source(cells[i]) and "### END SOLUTION" in _source(cells[i])
                  or "lab-solution" in cells[i].get("metadata", {}).get("tags", [])]
        if not marked:
            problems.append(f"{where}: no code cell between {{solution-start}} and {{solution-end}} "
                            "with '### BEGIN SOLUTION' ... '### END SOLUTION' (or, in a lab, tagged "
                            "'lab-solution')")
        if ex["check"] is None:
            problems.append(f"{where}: no auto-check code cell after {{solution-end}}")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_solution_markers_sit_inside_a_function(path):
    """The student edition swaps the marked body for ``raise NotImplementedError``: it must stay valid."""
    cells = _load(path)["cells"]
    problems = []
    for ex in _exercises(path):
        for i in ex["solution_cells"]:
            lines = _source(cells[i]).splitlines()
            begins = [n for n, line in enumerate(lines) if line.strip() == "### BEGIN SOLUTION"]
            ends = [n for n, line in enumerate(lines) if line.strip() == "### END SOLUTION"]
            if len(begins) != len(ends) or any(b >= e for b, e in zip(begins, ends, strict=False)):
                problems.append(f"cell {i}: unbalanced BEGIN/END SOLUTION markers")
                continue
            stub, skip = [], False
            for n, line in enumerate(lines):
                if n in begins:
                    indent = line[: len(line) - len(line.lstrip())]
                    stub.append(f"{indent}raise NotImplementedError()")
                    skip = True
                elif n in ends:
                    skip = False
                elif not skip:
                    stub.append(line)
            try:
                tree = ast.parse(cell_python("\n".join(stub)))
            except SyntaxError as err:
                problems.append(f"cell {i}: the student stub does not parse ({err}); keep the def line "
                                "outside the markers and the whole body inside")
                continue
            if any(isinstance(node, ast.Raise) for node in tree.body):
                problems.append(f"cell {i}: the markers are at top level; the student stub would raise "
                                "when the cell runs. Put them inside the function body")
            if not any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) for node in tree.body):
                problems.append(f"cell {i}: the solution defines no function: every exercise asks for one")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_auto_checks_call_utils_checks_on_the_students_function(path):
    """Every exercise's check cell calls ``utils.exercises.check("N.k", answer)`` with the name the
    learner defines (the reference and the hint live in the package, out of the learner's sight)."""
    cells = _load(path)["cells"]
    problems = []
    for ex in _exercises(path):
        if ex["check"] is None:
            continue
        where = f"check cell {ex['check']} (exercise {ex['label']})"
        source = _source(cells[ex["check"]])
        tree = _parse(source, f"{path.name}, {where}")
        calls = [c for c in _calls(tree) if _call_name(c) == "check"]
        if "from utils.exercises import check" not in source or len(calls) != 1:
            problems.append(f"{where}: make one call of utils.exercises.check (imported in the cell)")
            continue
        args = calls[0].args
        if len(args) != 2 or not isinstance(args[0], ast.Constant) or not isinstance(args[1], ast.Name):
            problems.append(f"{where}: call check(\"N.k\", the_learners_function), "
                            f"got {ast.unparse(calls[0])}")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


def test_exercise_labels_are_unique_across_the_book():
    seen: dict[str, str] = {}
    duplicates = []
    for path in NOTEBOOKS:
        for ex in _exercises(path):
            if ex["label"] in seen:
                duplicates.append(f"{ex['label']} in {seen[ex['label']]} and {path.name}")
            seen.setdefault(ex["label"], path.name)
    assert not duplicates, f"duplicate exercise labels: {duplicates}"


# ---------------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------------
def _figure_cells(path: Path) -> list[int]:
    """Code cells that draw a figure: they call plt.show() or a utils.plots function."""
    found = []
    for i, cell in enumerate(_load(path)["cells"]):
        if cell["cell_type"] != "code":
            continue
        tree = _parse(_source(cell), f"{path.name}, cell {i}")
        names = {_call_name(c) for c in _calls(tree)}
        if "show" in names and re.search(r"\bplt\.show\(", _source(cell)) or names & PLOT_FUNCTIONS:
            found.append(i)
    return found


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_figure_cells_have_caption_name_and_alt_text(path):
    cells = _load(path)["cells"]
    problems = []
    for i in _figure_cells(path):
        meta = cells[i].get("metadata", {}).get("mystnb", {})
        figure, image = meta.get("figure", {}), meta.get("image", {})
        if not str(figure.get("caption", "")).strip():
            problems.append(f"cell {i}: no mystnb.figure.caption")
        if not str(figure.get("name", "")).startswith(f"fig-{_chapter(path)}-"):
            problems.append(f"cell {i}: mystnb.figure.name should be 'fig-{_chapter(path)}-...', "
                            f"got {figure.get('name')!r}")
        if not str(image.get("alt", "")).strip():
            problems.append(f"cell {i}: no mystnb.image.alt (alt text for screen readers)")
        if len(re.findall(r"\bplt\.show\(", _source(cells[i]))) > 1:
            problems.append(f"cell {i}: one figure per cell (it calls plt.show() more than once)")
    assert not problems, f"{path.name}: figure cells need metadata\n  " + "\n  ".join(problems)


def test_figure_names_are_unique_across_the_book():
    seen: dict[str, str] = {}
    duplicates = []
    for path in NOTEBOOKS:
        for cell in _load(path)["cells"]:
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name")
            if name and name in seen:
                duplicates.append(f"{name} in {seen[name]} and {path.name}")
            if name:
                seen.setdefault(name, path.name)
    assert not duplicates, f"duplicate figure names: {duplicates}"


# ---------------------------------------------------------------------------------------------------
# The table of contents and the chapters folder agree
# ---------------------------------------------------------------------------------------------------
def _toc_files() -> list[str]:
    yaml = pytest.importorskip("yaml")
    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))
    files: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("root", "file") and isinstance(value, str):
                    files.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return files


def _toc_params() -> list:
    try:
        return [pytest.param(f, id=f) for f in _toc_files()]
    except pytest.skip.Exception:
        return []


@pytest.mark.parametrize("entry", _toc_params())
def test_every_toc_entry_exists(entry):
    candidates = [REPO / entry] + [REPO / f"{entry}{suffix}" for suffix in (".ipynb", ".md")]
    assert any(p.is_file() for p in candidates), (
        f"book/_toc.yml lists {entry!r}, but there is no such .ipynb or .md file")


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_every_chapter_is_in_the_toc(path):
    entries = {str(Path(e).with_suffix("")) if e.endswith((".ipynb", ".md")) else e for e in _toc_files()}
    assert f"chapters/{path.stem}" in entries, (
        f"{path.name} is not listed in book/_toc.yml (add '- file: chapters/{path.stem}')")


# --- the page: literal tokens and code width ---------------------------------------------------------
_TOKEN = re.compile(r"<(?:pad|BOS|EOS|bos|eos|unk|UNK)>")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\{[\w-]+\})?(.*)$")


def bare_tokens(markdown: str) -> list[str]:
    """Literal tokens like <pad> that MyST would read as an HTML tag (not in code, not in math).

    Fenced code is skipped; a directive's title and body are Markdown and are checked.
    """
    found, fences, in_math = [], [], False
    for line in markdown.splitlines():
        fence = _FENCE.match(line)
        if fence and not in_math:
            marks, directive, rest = fence.groups()
            if fences and not directive and not rest.strip() and marks[0] == fences[-1][0][0]:
                fences.pop()  # a closing fence
                continue
            fences.append((marks, directive is None or directive.startswith(("{code", "{math"))))
            line = "" if fences[-1][1] else rest  # a directive's argument (its title) is Markdown
        if any(code for _, code in fences):
            continue
        if line.strip().startswith("$$"):
            in_math = not in_math if line.strip().count("$$") == 1 else in_math
            continue
        if in_math:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        line = re.sub(r"\$[^$]*\$", "", line)
        found += _TOKEN.findall(line)
    return found


def test_bare_tokens_finds_tokens_outside_code_and_math():
    text = ("a <pad> b `<pad>` $x=\\texttt{<eos>}$\n```{admonition} Misconception: <BOS> first\n"
            "body <EOS>\n```\n```python\n'<unk>'\n```\n$$\n\\texttt{<bos>}\n$$\n")
    assert bare_tokens(text) == ["<pad>", "<BOS>", "<EOS>"]


def _markdown_sources() -> list:
    pages = sorted((REPO / "book").glob("*.md"))
    return _params(NOTEBOOKS + pages)


def _markdown_texts(path: Path) -> dict[str, str]:
    """A book page's text, or a notebook's Markdown cells by name ("cell 3")."""
    if path.suffix == ".md":
        return {"the page": path.read_text(encoding="utf-8")}
    texts = {}
    for i, cell in enumerate(_load(path)["cells"]):
        if cell["cell_type"] == "markdown":
            texts[f"cell {i}"] = "".join(cell["source"])
        caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption")
        if caption:  # myst-nb reads a figure's caption as Markdown too
            texts[f"cell {i}'s figure caption"] = caption
    return texts


@pytest.mark.parametrize("path", _markdown_sources())
def test_literal_tokens_are_written_as_code(path):
    texts = _markdown_texts(path)
    bare = [f"{where}: {token}" for where, text in texts.items() for token in bare_tokens(text)]
    assert not bare, (f"{path.name}: tokens the page would swallow as HTML tags; write them in "
                      f"backticks, e.g. `<pad>`: {bare}")


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_code_fits_the_books_code_box(path):
    """88 columns, the width the book's code box shows without scrolling (also ruff, chapters/ruff.toml)."""
    long = [f"cell {i}: {len(line)} columns: {line[:60]}..."
            for i, cell in enumerate(_load(path)["cells"]) if cell["cell_type"] == "code"
            for line in "".join(cell["source"]).splitlines() if len(line) > 88]
    assert not long, f"{path.name}: code lines longer than 88 columns:\n  " + "\n  ".join(long)


_CMAP = re.compile(r"""cmap\s*=\s*["']([\w_]+)["']""")
# Sequential maps that grow monotonically in lightness: they read in greyscale and for colour-blind
# readers (jet, rainbow, hsv and the red-green diverging maps do not).
READABLE_CMAPS = {"viridis", "cividis", "magma", "inferno", "plasma", "Greys", "gray", "binary"}


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_colour_maps_read_in_greyscale(path):
    used = {name for cell in _load(path)["cells"] if cell["cell_type"] == "code"
            for name in _CMAP.findall("".join(cell["source"]))}
    assert used <= READABLE_CMAPS, (f"{path.name}: colour maps {sorted(used - READABLE_CMAPS)} do not read "
                                    f"in greyscale or for colour-blind readers; use one of "
                                    f"{sorted(READABLE_CMAPS)}")


def markup_traps(text: str) -> list[str]:
    """Markdown that silently renders as something else: a backtick fence whose title holds a
    backtick (CommonMark then reads no directive: the box shows as a paragraph with its fences), and a
    line starting with "+ ", "- " or "* " inside unclosed inline math (a list item splits the formula)."""
    traps = []
    in_math = False
    previous = ""
    for line in text.splitlines():
        if line.strip() == "$$":
            in_math = not in_math
        if in_math:
            previous = ""
            continue
        if re.match(r"^\s*`{3,}(?!`)[^`]*`", line):
            traps.append(f"backtick in a ``` fence's title (use a ::: fence): {line[:70]}")
        if re.match(r"^\s*[-+*] ", line) and previous.count("$") % 2:
            traps.append(f"a list marker breaks the inline math of the line before: {line[:70]}")
        previous = previous + line if line.strip() and previous.count("$") % 2 else line
    return traps


def test_markup_traps_are_found():
    text = ("```{admonition} Misconception: `<pad>` is zero\nbody\n```\n:::{admonition} `<pad>`\n:::\n"
            "a sum $x\n+ y$ of two\n\n$$\nx\n+ y\n$$\n- a list item $z$\n")
    assert len(markup_traps(text)) == 2


@pytest.mark.parametrize("path", _markdown_sources())
def test_markdown_renders_as_written(path):
    texts = _markdown_texts(path)
    traps = [f"{where}: {trap}" for where, text in texts.items() for trap in markup_traps(text)]
    assert not traps, f"{path.name}:\n  " + "\n  ".join(traps)
