"""The book's execution cache (scripts/book_cache.py): a test run never tests what an earlier command
left as it stands (issue: `make test` failed after `COURSE_THREADS=1 make book`).

The unit tests fill a real jupyter-cache with made-up executed notebooks; the last test runs the whole
sequence a newcomer can run: a book built with a thread count other than a newcomer's, then the book
tests, which must pass (on a one-page table of contents, so that it takes seconds, not minutes).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, book_cache, book_threads, newcomers_run_settings, venv_tool

jupyter_cache = pytest.importorskip("jupyter_cache")
nbformat = pytest.importorskip("nbformat")
cache = book_cache()


def executed(*printed: str, code: str = "x = 1") -> nbformat.NotebookNode:
    """A one-cell executed notebook whose cell printed ``printed``."""
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(code)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=line + "\n") for line in printed]
    notebook.cells = [cell]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


def fill(build: Path, notebooks: dict[str, nbformat.NotebookNode]) -> None:
    store = jupyter_cache.get_cache(str(build / ".jupyter_cache"))
    from jupyter_cache.base import CacheBundleIn

    for uri, notebook in notebooks.items():
        store.cache_notebook_bundle(CacheBundleIn(notebook, uri), check_validity=False)


def sphinx_environments(build: Path) -> list[Path]:
    """Where the English book and a Chinese one keep their Sphinx environments."""
    paths = [build / ".doctrees" / "environment.pickle",
             build / "book_zh_CN" / "_build" / ".doctrees" / "environment.pickle"]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"pickle")
    return paths


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A stand-in for utils/, last changed an hour ago."""
    folder = tmp_path / "utils"
    folder.mkdir()
    (folder / "module.py").write_text("x = 1\n")
    hour_ago = time.time() - 3600
    os.utime(folder / "module.py", (hour_ago, hour_ago))
    return folder


def test_run_settings_are_read_from_what_the_set_up_printed():
    settings = cache.run_settings(executed("CPU threads: 2 (2 usable CPUs, 2.0 idle now)",
                                           "Using device: cpu (x86_64)"))
    assert settings == cache.RunSettings(threads=2, device="cpu", seed=0)
    shifted = cache.run_settings(executed("Seeds shifted by COURSE_SEED=3: seed_everything(s) seeds s + 3",
                                          "CPU threads: 1 (from COURSE_THREADS)",
                                          "Using device: cuda (NVIDIA H100)", "Using device: cpu (x)"))
    assert shifted == cache.RunSettings(threads=1, device="cuda", seed=3)  # the set-up cell's: the first
    assert cache.run_settings(executed("hello")) == cache.RunSettings(seed=0)


def test_the_seed_offset_is_printed_once_when_it_is_set(monkeypatch, capsys):
    from utils import runtime

    monkeypatch.setattr(runtime, "_SEED_OFFSET_SHOWN", False)
    runtime.seed_everything(0)
    assert capsys.readouterr().out == ""  # the default run prints nothing
    monkeypatch.setenv("COURSE_SEED", "4")
    runtime.seed_everything(0)
    runtime.seed_everything(1)
    out = capsys.readouterr().out
    assert out.count("COURSE_SEED=4") == 1
    assert cache.run_settings(executed(out)).seed == 4


@pytest.mark.parametrize("have, reason", [
    (dict(threads=1, device="cpu", seed=0), "CPU threads 1, this build wants 2"),
    (dict(threads=2, device="cuda", seed=0), "device cuda, this build wants cpu"),
    (dict(threads=2, device="cpu", seed=3), "seed offset (COURSE_SEED) 3, this build wants 0"),
    (dict(threads=2, device="cpu", seed=0), None),
    (dict(threads=None, device=None, seed=0), None),  # a page without a set-up cell
])
def test_a_run_with_other_settings_is_stale_only_where_settings_are_wanted(have, reason):
    now = dt.datetime.now(dt.timezone.utc)
    package_time = now - dt.timedelta(hours=1)
    wanted = cache.RunSettings(threads=2, device="cpu", seed=0)
    got = cache.why_stale(now, cache.RunSettings(**have), package_time=package_time, wanted=wanted)
    assert (got is None) == (reason is None) and (reason is None or reason in got)
    # `make book` wants nothing in particular: it keeps the reader's own settings
    assert cache.why_stale(now, cache.RunSettings(**have), package_time=package_time) is None


def test_a_run_older_than_the_package_is_stale_for_everyone():
    package_time = dt.datetime.now(dt.timezone.utc)
    created = (package_time - dt.timedelta(minutes=5)).replace(tzinfo=None)  # as jupyter-cache stores it
    reason = cache.why_stale(created, cache.RunSettings(threads=2), package_time=package_time)
    assert reason and "before utils/ last changed" in reason


def test_prune_drops_runs_with_other_settings_and_the_sphinx_environments(tmp_path, package):
    build = tmp_path / "_build"
    fill(build, {"a.ipynb": executed("CPU threads: 1 (from COURSE_THREADS)", code="a = 1"),
                 "b.ipynb": executed("CPU threads: 2 (from COURSE_THREADS)", code="b = 2")})
    environments = sphinx_environments(build)
    wanted = cache.RunSettings(threads=2, device=None, seed=0)

    dropped = cache.prune(build, wanted=wanted, package=package)
    assert len(dropped) == 1 and dropped[0].startswith("a.ipynb: executed with CPU threads 1")
    store = jupyter_cache.get_cache(str(build / ".jupyter_cache"))
    assert [Path(r.uri).name for r in store.list_cache_records()] == ["b.ipynb"]
    assert not any(p.exists() for p in environments), "a dropped run's page would not be re-read"

    environments = sphinx_environments(build)
    assert cache.prune(build, wanted=wanted, package=package) == []  # nothing stale: nothing touched
    assert all(p.exists() for p in environments), "a build with nothing dropped must stay incremental"


def test_make_books_prune_drops_only_runs_older_than_the_package(tmp_path, package, monkeypatch,
                                                                 capsys):
    build = tmp_path / "_build"
    fill(build, {"a.ipynb": executed("CPU threads: 1 (from COURSE_THREADS)")})
    monkeypatch.setattr(cache, "PACKAGE", package)
    assert cache.main(["--build", str(build)]) == 0
    assert capsys.readouterr().out == ""  # one thread on a busy machine: kept for the reader's book

    later = time.time() + 60
    os.utime(package / "module.py", (later, later))  # the package changes after the run
    environments = sphinx_environments(build)
    assert cache.main(["--build", str(build)]) == 0
    assert "dropped a.ipynb: executed" in capsys.readouterr().out
    store = jupyter_cache.get_cache(str(build / ".jupyter_cache"))
    assert store.list_cache_records() == [], "a run made before utils/ changed was kept"
    assert not any(p.exists() for p in environments)


def test_prune_of_a_missing_cache_is_nothing(tmp_path):
    assert cache.prune(tmp_path / "_build") == []


@pytest.mark.slow
def test_the_book_tests_pass_after_a_book_built_with_other_threads(tmp_path):
    """The issue's sequence: `COURSE_THREADS=1 make book` (or a busy machine), then the book tests."""
    jupyter_book = venv_tool("jupyter-book")
    if jupyter_book is None:
        pytest.skip(f"jupyter-book is not installed next to {sys.executable}")
    toc, output = tmp_path / "_toc.yml", tmp_path / "book"
    toc.write_text("format: jb-book\nroot: chapters/00_getting_started\n")
    foreign = 1 if book_threads() != 1 else 2
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "COURSE_", "OMP_NUM_THREADS", "MPLBACKEND"))}

    # what `make book` runs, with the reader's COURSE_THREADS (one page of the book)
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "book_cache.py"), "--build",
                    str(output / "_build")], check=True, cwd=REPO_ROOT, env=env)
    built = subprocess.run(
        [str(jupyter_book), "build", ".", "--toc", str(toc), "--path-output", str(output), "-W", "-n",
         "--keep-going"], cwd=REPO_ROOT, env={**env, "COURSE_THREADS": str(foreign),
                                               "COURSE_PLAIN_PROGRESS": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:]
    page = output / "_build" / "html" / "chapters" / "00_getting_started.html"
    assert f"CPU threads: {foreign} (" in page.read_text(encoding="utf-8")

    # then the book tests, as `make test` runs them
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_book.py", "-q", "-p", "no:cacheprovider"],
        cwd=REPO_ROOT, env={**env, "COURSE_BOOK_TOC": str(toc), "COURSE_BOOK_OUTPUT": str(output)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    assert tests.returncode == 0, tests.stdout[-4000:]
    assert "newcomers_threads" not in tests.stdout and " passed" in tests.stdout
    assert f"CPU threads: {book_threads()} (" in page.read_text(encoding="utf-8"), (
        "the book tests passed on a page they did not re-execute")
    store = jupyter_cache.get_cache(str(output / "_build" / ".jupyter_cache"))
    settings = [cache.run_settings(store.get_cache_bundle(r.pk).nb) for r in store.list_cache_records()]
    assert settings == [newcomers_run_settings()]


# --- executing the missing runs side by side (`make book`'s first step) ----------------------------
def test_the_plan_splits_the_threads_between_two_notebooks():
    assert cache.plan(1) == (1, 1)
    assert cache.plan(2) == (2, 1)
    assert cache.plan(4) == (2, 2)
    assert cache.plan(4, jobs=1) == (1, 4)
    with pytest.raises(ValueError, match="at least 1"):
        cache.plan(2, jobs=0)


def test_the_machine_plan_follows_the_readers_settings():
    assert cache.machine_plan({"COURSE_THREADS": "3"}) == (1, 3)          # one at a time
    assert cache.machine_plan({"COURSE_THREADS": "1", "COURSE_BOOK_JOBS": "2"}) == (2, 1)
    jobs, threads = cache.machine_plan({"COURSE_BOOK_JOBS": "1"})
    assert jobs == 1 and threads >= 1
    with pytest.raises(SystemExit, match="COURSE_BOOK_JOBS must be a whole number"):
        cache.machine_plan({"COURSE_BOOK_JOBS": "two"})


def test_the_notebooks_of_a_table_of_contents(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: chapters/00_getting_started\n"
                   "  - file: chapters/02_soft_lookup.ipynb\n  - file: book/glossary\n")
    assert cache.toc_notebooks(toc) == [REPO_ROOT / "chapters" / "00_getting_started.ipynb",
                                        REPO_ROOT / "chapters" / "02_soft_lookup.ipynb"]
    assert len(cache.toc_notebooks(REPO_ROOT / "book" / "_toc.yml")) == len(
        list((REPO_ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")))


def test_execute_stores_runs_made_in_the_builds_environment(tmp_path, monkeypatch):
    """A run executed here is found by the cache as jupyter-book looks it up, and its kernel saw the
    plan's thread count and exactly the environment given: a variable the build removed stays
    removed (the build removes a headless MPLBACKEND, which would drop every figure)."""
    folder = tmp_path / "chapters"
    folder.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(
        "import os\nprint(os.environ.get('COURSE_THREADS'), os.environ.get('BOOK_CACHE_PROBE'))")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "tiny.ipynb"
    nbformat.write(notebook, path)
    monkeypatch.setenv("BOOK_CACHE_PROBE", "set in the calling process")
    environ = {k: v for k, v in os.environ.items() if k != "BOOK_CACHE_PROBE"}
    build = tmp_path / "_build"
    assert cache.execute(build, [path], jobs=1, threads=3, environ=environ) == []
    store = jupyter_cache.get_cache(str(build / ".jupyter_cache"))
    record = store.match_cache_notebook(nbformat.read(path, as_version=4))
    printed = store.get_cache_bundle(record.pk).nb.cells[0].outputs[0]["text"]
    assert printed.strip() == "3 None"
    assert cache.missing_runs(build, [path]) == []      # a second `make book` executes nothing


def test_the_exercises_chinese_texts_do_not_make_the_runs_stale(tmp_path):
    """The book executes the English notebooks, which never read utils/exercises/locale/*.json; a
    catalogue update rewrites those files, and must not cost a re-execution of all 13 notebooks."""
    import os

    package = tmp_path / "utils"
    (package / "exercises" / "locale").mkdir(parents=True)
    module, texts = package / "attention.py", package / "exercises" / "locale" / "zh_TW.json"
    module.write_text("x = 1\n")
    texts.write_text("{}\n")
    os.utime(module, (1_000_000_000, 1_000_000_000))
    os.utime(texts, (2_000_000_000, 2_000_000_000))
    assert cache.package_changed(package).timestamp() == 1_000_000_000
