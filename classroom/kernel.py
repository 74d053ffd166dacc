"""The slow fallback for an exercise that is not self-contained: run its whole notebook in a kernel."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat

from classroom.context import Run, exercise_sources
from classroom.exercises import find_exercises

_KERNEL_HELPER = """
import os as __os
__os.environ["COURSE_CHECKS"] = "strict"
import json as __json
__results__ = {}
def __try__(key, sources):
    try:
        for source in sources:
            exec(compile(source, key, "exec"), globals())
    except Exception as err:
        __results__[key] = [type(err).__name__, [c.__name__ for c in type(err).__mro__], str(err)]
    else:
        __results__[key] = [None, [], ""]
"""


def run_exercises_in_kernel(nb: nbformat.NotebookNode, path: str | Path,
                            timeout: int = 600) -> dict[tuple[int, bool], Run]:
    """Run the whole notebook in a Jupyter kernel, each exercise first as a stub, then solved.

    The fallback for exercises that are not self-contained; keyed by (exercise number, student).
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    exercises = [ex for ex in find_exercises(nb, path) if ex.check_cell is not None]
    solution_cells = {i for ex in exercises for i in [*ex.solution_cells, *ex.lab_cells]}
    at_check = {ex.check_cell: ex for ex in exercises}
    cells = [nbformat.v4.new_code_cell(_KERNEL_HELPER)]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or i in solution_cells:
            continue
        if i in at_check:
            ex = at_check[i]
            for student in (True, False):
                key = f"{ex.number}:{int(student)}"
                sources = exercise_sources(nb, ex, student)
                cells.append(nbformat.v4.new_code_cell(f"__try__({key!r}, {sources!r})"))
        else:
            cells.append(nbformat.v4.new_code_cell(cell.source))
    cells.append(nbformat.v4.new_code_cell('print("__RESULTS__" + __json.dumps(__results__))'))
    runner = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(nb.metadata))
    client = NotebookClient(runner, timeout=timeout, kernel_name="python3", startup_timeout=300,
                            resources={"metadata": {"path": str(Path(path).parent)}})
    try:
        client.execute()
    except CellExecutionError as err:
        failed = Run("CellExecutionError", ("CellExecutionError",), f"the notebook failed: {err}"[:2000])
        return {(ex.number, student): failed for ex in exercises for student in (True, False)}
    text = "".join(out.get("text", "") for out in runner.cells[-1].outputs)
    raw = json.loads(text.split("__RESULTS__", 1)[1])
    results = {}
    for key, (error, kinds, message) in raw.items():
        number, student = key.split(":")
        results[(int(number), bool(int(student)))] = Run(error, tuple(kinds), message)
    return results
