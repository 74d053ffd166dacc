"""nbgrader for this course in one command, and the trained runs that make grading fast.

    python -m classroom nbgrader [--course student/nbgrader] generate_assignment 08_transformer_decoder
    python -m classroom nbgrader checkpoints 08_transformer_decoder     # once, after generating it
    python -m classroom nbgrader autograde 08_transformer_decoder       # every submission, fast
    python -m classroom nbgrader generate_feedback 08_transformer_decoder

Every command but ``checkpoints`` is nbgrader's own, run in the course folder with what it needs: this
Python's ``bin/`` first on PATH (nbgrader calls ``alembic`` by name and fails with FileNotFoundError
without it), one CPU thread per notebook unless ``OMP_NUM_THREADS`` says otherwise, and, for
``autograde``, ``COURSE_CHECKPOINTS`` pointing at the assignment's kept training runs.

``checkpoints`` runs the assignment's source notebook (the reference, solutions included) once and
keeps every training run it makes in ``<course>/checkpoints/<assignment>/`` (``utils.checkpoints``).
Autograding then loads those runs instead of training: a learner's code that computes differently
from the reference (a lab's repaired model) is still trained, since its runs are not found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_COURSE = Path("student") / "nbgrader"


def checkpoint_folder(course: Path, assignment: str) -> Path:
    return Path(course).resolve() / "checkpoints" / assignment


def nbgrader_env(course: Path, args: list[str], base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment nbgrader runs in for ``args`` (see the module's docstring)."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.pop("COURSE_CHECKS", None)  # nbgrader sets NBGRADER_EXECUTION; the checks then run strict
    if len(args) > 1 and args[0] == "autograde" and not args[1].startswith("-"):
        env["COURSE_CHECKPOINTS"] = str(checkpoint_folder(course, args[1]))
    return env


def run_nbgrader(course: Path, args: list[str], capture: bool = False) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in the course folder with the course's environment."""
    if not (Path(course) / "nbgrader_config.py").is_file():
        raise FileNotFoundError(
            f"{course} holds no nbgrader_config.py: write the course with `python -m classroom student "
            f"--out student` (it lands in student/nbgrader), or pass --course")
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          env=nbgrader_env(Path(course), args), capture_output=capture, text=True)


def write_checkpoints(course: Path, assignment: str, timeout: int = 1800) -> list[Path]:
    """Run the assignment's reference once, keeping its training runs; return the files.

    A chapter's reference is its source notebook (solutions included). A lab's source holds its bugs,
    not their fixes: its reference is ``reference/<assignment>/`` (the lab solved), so that a repaired
    lab loads the repaired model's training; the source is then run too (errors allowed: its checks
    fail), so that a lab handed in unfinished loads its runs as well."""
    import nbformat
    from nbclient import NotebookClient

    from classroom.nbgrader_course import REFERENCE

    source = Path(course) / "source" / assignment / f"{assignment}.ipynb"
    if not source.is_file():
        raise FileNotFoundError(f"no source notebook {source}: is {assignment!r} an assignment of "
                                f"{course}?")
    solved = Path(course) / REFERENCE / assignment / f"{assignment}.ipynb"
    runs = [(solved, False), (source, True)] if solved.is_file() else [(source, False)]
    target = checkpoint_folder(course, assignment)
    shutil.rmtree(target, ignore_errors=True)
    saved = dict(os.environ)
    os.environ.update({"COURSE_CHECKPOINTS": str(target), "COURSE_CHECKPOINTS_WRITE": "1",
                       "COURSE_CHECKS": "strict"})
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        for notebook, errors_allowed in runs:
            with tempfile.TemporaryDirectory() as work:
                nb = nbformat.read(notebook, as_version=4)
                start = time.perf_counter()
                NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=errors_allowed,
                               resources={"metadata": {"path": work}}).execute()
                print(f"{assignment}: {notebook.parent.parent.name} run in "
                      f"{time.perf_counter() - start:.0f} s")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    written = sorted(target.glob("*.pt"))
    print(f"{assignment}: kept {len(written)} training runs in {target}")
    return written


def main(args: list[str], course: Path) -> int:
    if not args:
        print("usage: python -m classroom nbgrader [--course DIR] COMMAND ... (see --help)")
        return 2
    if args[0] == "checkpoints":
        if len(args) < 2:
            print("usage: python -m classroom nbgrader checkpoints ASSIGNMENT [ASSIGNMENT ...]")
            return 2
        for assignment in args[1:]:
            write_checkpoints(course, assignment)
        return 0
    try:
        return run_nbgrader(course, args).returncode
    except FileNotFoundError as err:
        print(err)
        return 2
