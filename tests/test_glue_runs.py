"""The glued numbers of the runs of each chapter in `make test` agree (the book's, the nbgrader
reference's and the student edition's Run All).

`make test`'s last step: it needs the book built (step 1) and the runs recorded by step 2; it builds
nothing itself and skips a chapter whose book run is missing.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.test_book import NOTEBOOK_ENTRIES, _params

REPO = Path(__file__).resolve().parents[1]
EXECUTED = REPO / "_build" / "jupyter_execute"


# Written in step 2 of `make test`: the glued values of the nbgrader reference run
# (tests/test_nbgrader.py) and of the student edition's Run All (tests/test_student_edition.py), one
# JSON file per run and chapter, `_build/glue_runs/<run>/<chapter>.json`.
GLUE_RUNS = REPO / "_build" / "glue_runs"
_THREADS = re.compile(r"CPU threads: (\d+) \(")


def source_digest(path: Path) -> str:
    """What a run's glued values follow from: the notebook and the course package it imports (a run
    recorded by an earlier `make test`, before utils/ changed, is not compared)."""
    digest = hashlib.sha256(path.read_bytes())
    for module in sorted((REPO / "utils").rglob("*.py")):
        digest.update(str(module.relative_to(REPO)).encode() + module.read_bytes())
    return digest.hexdigest()


def executed_glue(notebook: dict) -> dict:
    """{"threads": the thread counts its set-up cell printed, "seed": its seed offset (COURSE_SEED),
    "values": {name: text}} of a run."""
    from tests.conftest import book_cache
    from utils.glue import glued_values

    threads = {int(n) for cell in notebook.get("cells", []) for out in cell.get("outputs", [])
               for n in _THREADS.findall("".join(out.get("text", "")))}
    return {"threads": sorted(threads), "seed": book_cache().run_settings(notebook).seed,
            "values": glued_values(notebook)}


def book_glue(executed: Path) -> dict:
    """executed_glue of the book's run: myst-nb moves the glued outputs out of the executed notebook
    into ``<name>.glue.json`` beside it (keys are the names, mime types without the glue prefix)."""
    from utils.glue import GLUE_MIME

    notebook = json.loads(executed.read_text(encoding="utf-8"))
    side = executed.with_suffix(".glue.json")
    if side.is_file():
        outputs = [{**out, "data": {GLUE_MIME: out.get("data", {}).get("text/plain", "")}}
                   for out in json.loads(side.read_text(encoding="utf-8")).values()]
        notebook.setdefault("cells", []).append({"cell_type": "code", "outputs": outputs})
    return executed_glue(notebook)


def record_glue(run: str, path: Path, notebook: dict) -> None:
    """Keep a run's glued values for test_glued_numbers_agree_between_runs."""
    folder = GLUE_RUNS / run
    folder.mkdir(parents=True, exist_ok=True)
    record = executed_glue(notebook) | {"source": source_digest(path)}
    (folder / f"{path.stem}.json").write_text(json.dumps(record, indent=1))


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_glued_numbers_agree_between_runs(entry):
    """Every chapter runs three times in `make test`: the book (a newcomer's threads, training every
    model and keeping the runs in _build/kept_runs), then the nbgrader reference run and the student
    edition's Run All (one thread each, loading the kept runs they find; a run not found, say when the
    book was cached, trains). Runs with the same thread count and seed must glue identical values,
    timings aside (names with ``_time_``, shown as measured); a trained result may move with the
    thread count, so runs with different counts share names only.
    A value that depends on the exercises' solutions (a lab's repaired model) has ``_solved_`` in its
    name and is not compared with the student edition's run, which lacks the solutions (and may not
    glue it at all: lab 10 trains its repaired model only once it is repaired)."""
    source = source_digest(REPO / f"{entry}.ipynb")
    executed = EXECUTED / f"{entry}.ipynb"
    if not executed.is_file():
        pytest.skip(f"{entry}: the book is not built ({executed} is missing): `make test` builds it first")
    runs = {"book": book_glue(executed)}
    for record in sorted(GLUE_RUNS.glob(f"*/{Path(entry).name}.json")):
        data = json.loads(record.read_text(encoding="utf-8"))
        if data.get("source") == source:  # recorded from this version of the notebook
            runs[record.parent.name] = data
    names = set(runs["book"]["values"])
    problems = []
    for run, data in runs.items():
        # the student edition's lab trains the repaired model only once it is repaired: without the
        # solutions it glues no _solved_ value at all
        wanted = {n for n in names if "_solved_" not in n} if run == "student" else names
        have = {n for n in data["values"] if run != "student" or "_solved_" not in n}
        if have != wanted:
            problems.append(f"{run} glues other names than the book: {sorted(have ^ wanted)}")
    compared = 0
    setting = {run: (tuple(data["threads"]), data.get("seed", 0)) for run, data in runs.items()}
    for threads, seed in set(setting.values()):
        same = {run: data["values"] for run, data in runs.items() if setting[run] == (threads, seed)}
        first, *others = sorted(same)
        for other in others:
            compared += 1
            problems += [f"{name}: {same[first][name]!r} in the {first} run, {value!r} in the {other} "
                         f"run ({list(threads)} threads)" for name, value in same[other].items()
                         if "_time_" not in name and same[first].get(name) != value
                         and not ("_solved_" in name and "student" in (first, other))]
    assert not problems, f"{entry}:\n  " + "\n  ".join(problems)
    if not compared:
        pytest.skip(f"{entry}: no two runs with the same thread count recorded ({sorted(runs)})")
