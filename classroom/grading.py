"""Grading students' notebooks by running them and reading each auto-check's verdict."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from classroom.exercises import _CHECK_NAME

_CHECK_CALL = re.compile(r"\bcheck_(function|value)\s*\(")


def grade_notebook(path: str | Path, timeout: int = 600) -> list[tuple[str, bool, str]]:
    """Run a student's notebook top to bottom (errors allowed) and read each auto-check's verdict.

    Returns (exercise name, passed, message) per check cell: passed when the cell ran without an error;
    the message is the check's last line (its verdict, or the error with the hint).
    """
    import os

    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    os.environ["COURSE_CHECKS"] = "strict"  # the kernel inherits it: a failed check raises
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(Path(path).parent)}}).execute()
    results = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not _CHECK_CALL.search(cell.source):
            continue
        found = _CHECK_NAME.search(cell.source)
        name = found.group("name") if found else f"cell {i}"
        errors = [out for out in cell.outputs if out.output_type == "error"]
        if errors:
            results.append((name, False, f"{errors[0].ename}: {errors[0].evalue}".replace("\n", " ")))
        else:
            text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
            results.append((name, True, text.strip().splitlines()[-1] if text.strip() else "ran"))
    return results


