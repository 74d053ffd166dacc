"""The notebooks' set-up cell (cell 0) and the one place that sets the course's address and release.

scripts/course_address.py writes the repository and release from pyproject.toml into every notebook's
first cell, _config.yml, README.md and utils/__init__.py. Here: every place agrees, a fork's one-line
change reaches them all, and the cell itself behaves in each situation a student meets: the course
already installed, no `utils` at all, a foreign package named `utils`, an older release of the course,
pip failing on a wrong address, and no internet. pip is never run: a stand-in replaces subprocess.run
and plays its part (installing a package folder, or failing with git's messages).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import course_address  # noqa: E402

NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
REPO, VERSION = course_address.settings()


# ---------------------------------------------------------------------------------------------------
# One setting, every derived place
# ---------------------------------------------------------------------------------------------------
def test_every_derived_place_agrees_with_pyproject():
    wrong = course_address.disagreements()
    assert not wrong, (f"these places disagree with pyproject.toml ({REPO}, v{VERSION}): {wrong}; "
                       "run python scripts/course_address.py")


def test_the_package_carries_the_marker_and_version_the_cell_looks_for():
    text = (ROOT / "utils" / "__init__.py").read_text(encoding="utf-8")
    assert f'__course__ = "{course_address.MARKER}"' in text
    import utils

    assert utils.__version__ == VERSION and utils.__course__ == course_address.MARKER


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_cell_installs_the_release_not_a_branch(path):
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][0]
    source = "".join(cell["source"])
    assert source == course_address.bootstrap_source(REPO, VERSION), (
        f"{path.name}: cell 0 is not the set-up cell of scripts/course_address.py")
    assert "remove-cell" in cell["metadata"].get("tags", []), f"{path.name}: cell 0 must be remove-cell"
    assert "@v{COURSE_VERSION}" in source and "@main" not in source
    assert "--no-deps" in source, "the set-up cell must never reinstall torch (Colab's own)"


def test_a_fork_changes_one_line_and_the_script_rewrites_every_place(tmp_path):
    for name in ("pyproject.toml", "_config.yml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "utils").mkdir()
    shutil.copy(ROOT / "utils" / "__init__.py", tmp_path / "utils" / "__init__.py")
    shutil.copytree(ROOT / "chapters", tmp_path / "chapters",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    pyproject = tmp_path / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert f'repository = "{REPO}"' in text
    pyproject.write_text(text.replace(f'repository = "{REPO}"', 'repository = "someone/fork"')
                         .replace(f'version = "{VERSION}"', 'version = "9.8.7"', 1), encoding="utf-8")
    assert course_address.disagreements(tmp_path), "the copy should disagree before the rewrite"
    assert course_address.main(["--root", str(tmp_path)]) == 0
    assert course_address.disagreements(tmp_path) == []
    for path in course_address.derived_places(tmp_path):
        text = path.read_text(encoding="utf-8")
        assert REPO not in text, f"{path.name} still names {REPO}"
    config = (tmp_path / "_config.yml").read_text(encoding="utf-8")
    assert "url: https://github.com/someone/fork" in config and "branch: v9.8.7" in config
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    colab = "colab.research.google.com/github/someone/fork/blob/v9.8.7/chapters/"
    assert readme.count(colab) == len(NOTEBOOKS)
    assert '__version__ = "9.8.7"' in (tmp_path / "utils" / "__init__.py").read_text(encoding="utf-8")
    first = next((tmp_path / "chapters").glob("*.ipynb"))
    cell = "".join(json.loads(first.read_text(encoding="utf-8"))["cells"][0]["source"])
    assert '"someone/fork", "9.8.7"' in cell


# ---------------------------------------------------------------------------------------------------
# The cell, run as a student's kernel would, with a stand-in for pip
# ---------------------------------------------------------------------------------------------------
_HARNESS = textwrap.dedent('''
    import json, os, pathlib, subprocess, sys
    calls, mode = [], os.environ["FAKE_PIP"]

    def write_package(folder, version, marker=True):
        pkg = pathlib.Path(folder) / "utils"
        pkg.mkdir(parents=True, exist_ok=True)
        lines = [f'__version__ = "{version}"']
        if marker:
            lines.append('__course__ = "attention-course"')
        (pkg / "__init__.py").write_text("\\n".join(lines) + "\\n")

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        if mode == "offline":
            err = ("  fatal: unable to access 'https://github.com/o/r/': Could not resolve host: "
                   "github.com\\nerror: subprocess-exited-with-error\\n")
            return subprocess.CompletedProcess(cmd, 1, "", err)
        if mode == "wrong-address":
            err = ("  remote: Repository not found.\\n"
                   "  fatal: repository 'https://github.com/o/r/' not found\\n")
            return subprocess.CompletedProcess(cmd, 1, "", err)
        write_package(os.environ["INSTALL_INTO"], cmd[-1].rsplit("@v", 1)[1])
        return subprocess.CompletedProcess(cmd, 0, "", "")

    subprocess.run = fake_run
    try:
        exec(compile(os.environ["CELL"], "cell 0", "exec"), {"__name__": "__main__"})
        outcome = "ok"
    except ImportError as err:
        outcome = f"ImportError: {err}"
    print(json.dumps({"calls": calls, "outcome": outcome}))
''')


def _write_package(folder: Path, version: str, marker: bool = True) -> None:
    (folder / "utils").mkdir(parents=True, exist_ok=True)
    lines = [f'__version__ = "{version}"'] + (['__course__ = "attention-course"'] if marker else [])
    (folder / "utils" / "__init__.py").write_text("\n".join(lines) + "\n")


def _run_cell(tmp_path: Path, fake_pip: str, path_entries: list[Path], deps: bool = True,
              isolated: bool = True) -> dict:
    """Run cell 0 in a fresh Python; ``isolated`` hides site-packages (and so the real course)."""
    site = tmp_path / "site-packages"  # where the stand-in pip installs
    site.mkdir(exist_ok=True)
    entries = [str(p) for p in path_entries] + [str(site)]
    if deps:  # torch, numpy, matplotlib and tqdm, as empty stand-ins
        stub = tmp_path / "deps"
        for name in ("torch", "numpy", "matplotlib", "tqdm"):
            (stub / name).mkdir(parents=True, exist_ok=True)
            (stub / name / "__init__.py").write_text("")
        entries.append(str(stub))
    env = {**os.environ, "FAKE_PIP": fake_pip, "INSTALL_INTO": str(site),
           "CELL": course_address.bootstrap_source(REPO, VERSION),
           "PYTHONPATH": os.pathsep.join(entries)}
    command = [sys.executable, *(["-S"] if isolated else []), "-c", _HARNESS]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_already_installed_does_nothing(tmp_path):
    result = _run_cell(tmp_path, "install", [], isolated=False)  # the real course package
    assert result == {"calls": [], "outcome": "ok"}


def test_missing_package_is_installed_from_the_release_tag(tmp_path):
    result = _run_cell(tmp_path, "install", [])
    assert result["outcome"] == "ok"
    [call] = result["calls"]
    assert call[-1] == f"git+https://github.com/{REPO}@v{VERSION}"
    assert "--no-deps" in call, "pip must not touch torch"


def test_foreign_utils_that_pip_replaces_is_replaced(tmp_path):
    _write_package(tmp_path / "site-packages", "1.0", marker=False)  # e.g. PyPI's `utils`
    result = _run_cell(tmp_path, "install", [])
    assert result["outcome"] == "ok" and len(result["calls"]) == 1


def test_foreign_utils_that_shadows_the_course_is_named(tmp_path):
    _write_package(tmp_path / "project", "1.0", marker=False)  # a folder utils/ earlier on the path
    result = _run_cell(tmp_path, "install", [tmp_path / "project"])
    assert len(result["calls"]) == 1
    message = result["outcome"]
    assert message.startswith("ImportError: Installed")
    assert "another package" in message and str(tmp_path / "project" / "utils") in message
    assert "Rename or remove" in message


def test_an_older_release_is_replaced_by_the_notebooks_own(tmp_path):
    _write_package(tmp_path / "site-packages", "0.0.1")
    result = _run_cell(tmp_path, "install", [])
    assert result["outcome"] == "ok" and result["calls"][0][-1].endswith(f"@v{VERSION}")


def test_install_failure_says_what_failed_and_what_to_do(tmp_path):
    result = _run_cell(tmp_path, "wrong-address", [])
    message = result["outcome"]
    assert message.startswith("ImportError: Could not install the course package from git+https://")
    assert "Repository not found" in message or "not found" in message
    assert "no internet" not in message
    assert "pip install --no-deps -e" in message and "restart the kernel" in message
    assert "CalledProcessError" not in message


def test_offline_says_so_and_how_to_install_from_a_clone(tmp_path):
    result = _run_cell(tmp_path, "offline", [])
    message = result["outcome"]
    assert "Could not resolve host" in message and "no internet" in message
    assert "pip install --no-deps -e /path/to/your/clone" in message


def test_missing_libraries_are_named_not_installed(tmp_path):
    result = _run_cell(tmp_path, "install", [], deps=False)
    assert len(result["calls"]) == 1  # only the course package
    assert result["outcome"].startswith("ImportError: The course also needs torch, numpy")
    assert "pytorch.org" in result["outcome"]
