"""The image a class's JupyterHub (or Binder) runs, and the nbgrader wrapper a teacher uses.

repo2docker builds the image from ``binder/``: it installs ``binder/requirements.txt``, then runs
``binder/postBuild``. There is no container engine here, so the slow test does what repo2docker does,
in a fresh virtual environment: installs exactly what the file lists, runs postBuild from a copy of
the repository, and executes chapter 0 there, whose first cell must then install nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        found = re.match(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", line.strip())
        if found:
            pins[found.group(1).lower()] = found.group(2)
    return pins


def test_the_image_pins_what_the_course_pins():
    image, course = _pins(BINDER / "requirements.txt"), _pins(REPO / "requirements.txt")
    assert {"torch", "ipykernel", "jupyterlab", "nbgrader"} <= set(image)
    assert {name: version for name, version in image.items() if course.get(name) != version} == {}, (
        "binder/requirements.txt pins other versions than requirements.txt")
    assert "jupyter-book" not in image and "playwright" not in image  # a learner's server needs neither
    assert os.access(BINDER / "postBuild", os.X_OK), "repo2docker runs postBuild only when executable"
    assert (BINDER / "runtime.txt").read_text().strip().startswith("python-3.")


def test_the_wrapper_puts_nbgrader_s_tools_on_path_and_keeps_runs_for_autograde(tmp_path):
    from classroom.hub import checkpoint_folder, nbgrader_env

    env = nbgrader_env(tmp_path, ["autograde", "08_transformer_decoder", "--force"],
                       base={"PATH": "/usr/bin", "COURSE_CHECKS": "strict"})
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)  # alembic is there
    assert env["COURSE_CHECKPOINTS"] == str(checkpoint_folder(tmp_path, "08_transformer_decoder"))
    assert env["OMP_NUM_THREADS"] == "1" and "COURSE_CHECKS" not in env
    assert "COURSE_CHECKPOINTS" not in nbgrader_env(tmp_path, ["generate_assignment", "x"], base={})


def test_the_wrapper_says_where_the_course_is_when_it_is_not(tmp_path, capsys):
    import classroom.__main__ as cli

    assert cli.main(["nbgrader", "--course", str(tmp_path), "autograde", "x"]) == 2
    assert "no nbgrader_config.py" in capsys.readouterr().out


@pytest.mark.slow
def test_a_fresh_image_runs_a_chapter_and_its_first_cell_installs_nothing(tmp_path):
    env_dir, repo = tmp_path / "image", tmp_path / "repo"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV", "COURSE_"))}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_RETRIES"], env["PIP_TIMEOUT"] = "0", "5"  # offline here: the extra index fails at once
    # --no-compile: the same packages, without compiling every module to bytecode up front (Python
    # compiles what the notebook imports when it imports it); it halves this install's time.
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile", "-r",
                              str(BINDER / "requirements.txt")],
                             env=env, capture_output=True, text=True, timeout=1500)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    for name in tracked.stdout.splitlines():  # a clone, as repo2docker gets it
        if (REPO / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, repo / name)
    built = subprocess.run([str(repo / "binder" / "postBuild")], cwd=repo, env=env, capture_output=True,
                           text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    shutil.rmtree(repo / "utils")  # the notebook must find the installed package, not the copy's folder
    script = (
        "import nbformat, sys\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=600, kernel_name='python3').execute()\n"
        "first = ''.join(o.get('text', '') for o in nb.cells[0].outputs)\n"
        "checks = [o.get('text', '') for c in nb.cells for o in c.get('outputs', [])\n"
        "          if 'Exercise 0.' in o.get('text', '')]\n"
        "print('FIRST CELL:', repr(first)); print('CHECKS:', len(checks))\n")
    ran = subprocess.run([str(python), "-c", script, str(repo / "chapters" / "00_getting_started.ipynb")],
                         cwd=repo / "chapters", env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "FIRST CELL: ''" in ran.stdout, f"the first cell did something: {ran.stdout[-1500:]}"
    assert int(ran.stdout.rsplit("CHECKS:", 1)[1]) >= 4, "the exercises' checks did not run"
