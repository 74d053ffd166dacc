"""Shared test set-up: a headless matplotlib for in-process tests and the ``built_book`` fixture.

``built_book`` builds the Jupyter Book once per test session (executing every notebook, with warnings
as errors) and returns the path of the HTML. Under pytest-xdist two workers may both ask for it (the
book tests and the browser tests): a file lock serialises them and a marker file, stamped with the
test run's id and a hash of the book's sources, lets the second worker reuse the first one's result,
success or failure, instead of building again.

Environment variables (for developing the tests; CI sets neither):

- ``COURSE_BOOK_TOC``    an alternative table of contents (e.g. listing only chapter 0), built into
                         ``_build/alt_toc/`` so the real book in ``_build/html`` is left alone.
- ``COURSE_BOOK_OUTPUT`` where to put the build (``--path-output``); the HTML lands in ``<it>/_build/html``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import matplotlib

# In-process tests draw figures without a display. This only affects the pytest process: the book
# build and nbval kernels are other processes and keep the inline backend (never export MPLBACKEND,
# or the book's figures silently disappear).
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import pytest  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TOC = REPO_ROOT / "book" / "_toc.yml"
BUILD_TIMEOUT_S = 3 * 3600  # every notebook is executed; generous for a slow, shared 2-core machine
_SESSION_ID = uuid.uuid4().hex  # one id per pytest process; xdist workers share the controller's id


# The book's build, `make test`'s first step, keeps every training run and translation score it makes
# in this folder (utils.checkpoints); the nbgrader reference run and the student editions' Run All in
# the next step load them instead of training every chapter again: each model trains once per
# `make test`. A run that is not found there (the book came from the execution cache, or a run's key
# came out otherwise at one thread) is trained as usual.
KEPT_RUNS = REPO_ROOT / "_build" / "kept_runs"


def drop_stale_kept_runs() -> None:
    """Delete the kept runs older than the newest chapter notebook or module of the package."""
    if not KEPT_RUNS.is_dir():
        return
    sources = [*REPO_ROOT.glob("chapters/*.ipynb"), *(REPO_ROOT / "utils").rglob("*.py")]
    newest = max(path.stat().st_mtime for path in sources)
    for run in KEPT_RUNS.glob("*.pt"):
        if run.stat().st_mtime < newest:
            run.unlink(missing_ok=True)


def kept_runs_env() -> dict[str, str]:
    """``{"COURSE_CHECKPOINTS": folder}`` for a run that may load the book's kept runs; {} if none."""
    drop_stale_kept_runs()
    if KEPT_RUNS.is_dir() and any(KEPT_RUNS.glob("*.pt")):
        return {"COURSE_CHECKPOINTS": str(KEPT_RUNS)}
    return {}


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every figure a test opened, so figures do not pile up across tests."""
    yield
    plt.close("all")


def venv_tool(name: str) -> Path | None:
    """The console script ``name`` installed next to the running Python (the venv's bin/), if any."""
    candidate = Path(sys.executable).parent / name
    return candidate if candidate.exists() else None


def book_toc_path() -> Path:
    """The table of contents the book tests use: ``$COURSE_BOOK_TOC`` or ``book/_toc.yml``."""
    override = os.environ.get("COURSE_BOOK_TOC")
    return Path(override).resolve() if override else DEFAULT_TOC


def book_output_dir() -> Path:
    """The ``--path-output`` of the build; the HTML is in ``<it>/_build/html``."""
    override = os.environ.get("COURSE_BOOK_OUTPUT")
    if override:
        return Path(override).resolve()
    if os.environ.get("COURSE_BOOK_TOC"):
        return REPO_ROOT / "_build" / "alt_toc"
    return REPO_ROOT


def _sources_hash(toc: Path) -> str:
    """A hash of everything the build reads: config, toc, book pages, notebooks and the package."""
    digest = hashlib.sha256()
    files = [REPO_ROOT / "_config.yml", toc]
    for pattern in ("book/**/*", "chapters/*.ipynb", "utils/*.py", "utils/*.js", "locales/**/*.po",
                    "scripts/translations.py", "classroom/slide*.py", "classroom/slides_static/*"):
        files += sorted(p for p in REPO_ROOT.glob(pattern) if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_run_id() -> str:
    """One id per test run: shared by the xdist workers of one pytest process."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID", _SESSION_ID)


test_run_id.__test__ = False  # a helper, not a test


def build_book(toc: Path, output: Path) -> tuple[int, str]:
    """Run ``jupyter-book build . --toc <toc> -W -n --keep-going`` from the repo root, then (with the
    book's own toc) the Chinese books as `make book` does; (exit code, log)."""
    jupyter_book = venv_tool("jupyter-book")
    if jupyter_book is None:
        pytest.skip(f"jupyter-book is not installed next to {sys.executable}")
    command = [str(jupyter_book), "build", ".", "--toc", str(toc), "-W", "-n", "--keep-going"]
    if output != REPO_ROOT:
        command += ["--path-output", str(output)]
    env = newcomers_book_env()
    if output == REPO_ROOT:  # keep the training runs for the suite's other runs of the chapters
        drop_stale_kept_runs()
        env.update({"COURSE_CHECKPOINTS": str(KEPT_RUNS), "COURSE_CHECKPOINTS_WRITE": "1"})
    # A run left in the execution cache by an earlier `make book` (with one thread on a busy machine,
    # with COURSE_SEED, before utils changed) is dropped and executed again, not tested as it stands.
    for line in book_cache().prune(output / "_build", wanted=newcomers_run_settings()):
        print(f"book cache: dropped {line}", file=sys.stderr)
    # as `make book` does: the runs the cache lacks executed side by side first (book_cache.execute)
    jobs, threads = book_plan()
    cache = book_cache()
    start = time.perf_counter()
    failed = cache.execute(output / "_build", cache.toc_notebooks(toc), jobs=jobs, threads=threads,
                           environ=env)
    executed = f"notebooks executed in {time.perf_counter() - start:.0f} s\n" + "".join(
        f"failed: {line}\n" for line in failed)
    whole = output == REPO_ROOT and toc.resolve() == (REPO_ROOT / "book" / "_toc.yml").resolve()
    chinese = None
    if whole and not failed:
        # the Chinese books, from the same executed notebooks, as `make book` builds them but beside the
        # English build rather than after it: every run is cached, so no notebook executes twice, and
        # one Sphinx alone leaves a core idle (about a minute of the suite)
        # (its log goes to a file: a pipe nobody reads until the English build ends would stall it)
        chinese_file = (output / "_build" / "chinese-books.log").open("w+", encoding="utf-8")
        chinese = subprocess.Popen([sys.executable, str(REPO_ROOT / "scripts" / "translations.py"), "books"],
                                   cwd=REPO_ROOT, env=env, stdout=chinese_file, stderr=subprocess.STDOUT,
                                   text=True)
    result = subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=BUILD_TIMEOUT_S)
    code, log = result.returncode, executed + result.stdout
    if chinese is not None:
        chinese.wait(timeout=BUILD_TIMEOUT_S)
        chinese_file.seek(0)
        code, log = code or chinese.returncode, log + chinese_file.read()
        chinese_file.close()
    elif code == 0 and whole:  # a notebook failed to execute first: one build after the other
        late = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "translations.py"), "books"],
                              cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=BUILD_TIMEOUT_S)
        code, log = late.returncode, log + late.stdout
    if code == 0 and whole:  # as `make book` does: the lecture slides beside each book
        slides = subprocess.run([sys.executable, "-m", "classroom.slides"], cwd=REPO_ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=BUILD_TIMEOUT_S)
        code, log = slides.returncode, log + slides.stdout
    return code, re.sub(r"\x1b\[[0-9;]*m", "", log)  # without colour codes


def book_cache():
    """scripts/book_cache.py, imported (scripts/ is not a package)."""
    sys.path.insert(0, str(REPO_ROOT / "scripts"))
    try:
        import book_cache
    finally:
        sys.path.remove(str(REPO_ROOT / "scripts"))
    return book_cache


def newcomers_book_env() -> dict[str, str]:
    """The environment of the suite's book build: a newcomer's `make book` on a quiet machine."""
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # a headless backend here would drop every figure from the HTML
    env.pop("OMP_NUM_THREADS", None)  # the suite's one thread is not what a newcomer's build gets
    env.pop("COURSE_SEED", None)  # nor is another seed, or a device chosen by hand
    env.pop("COURSE_DEVICE", None)
    env["COURSE_THREADS"] = str(book_threads())
    env["COURSE_PLAIN_PROGRESS"] = "1"  # as `make book` does: one summary line instead of a live bar
    return env


def newcomers_run_settings():
    """The settings each notebook's set-up prints in that build (threads, device, seed offset)."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() \
        else "cpu"
    return book_cache().RunSettings(threads=book_threads(), device=device, seed=0)


def book_plan() -> tuple[int, int]:
    """(notebooks at a time, CPU threads each) of a newcomer's `make book` on a quiet machine.

    `make test` runs pytest with OMP_NUM_THREADS=1 (two workers on two cores). A newcomer's `make book`
    sets nothing: it takes the threads `choose_threads()` picks on a quiet machine (every usable CPU, up
    to its cap) and runs two notebooks at a time with half of them each (scripts/book_cache.py): one
    thread each on a 2-core machine. Trained results move with the thread count, so the book is built
    with that count spelled out; the busy test machine would otherwise make the build pick fewer.
    """
    from utils.runtime import automatic_threads

    return book_cache().plan(automatic_threads())


def book_threads() -> int:
    """The CPU threads each notebook of a newcomer's `make book` runs with (``book_plan``)."""
    return book_plan()[1]


@pytest.fixture(scope="session")
def book_toc() -> Path:
    """Path of the table of contents the book was (or will be) built from."""
    return book_toc_path()


@pytest.fixture(scope="session")
def built_book(book_toc: Path) -> Path:
    """Build the book once per test session (xdist-safe) and return the ``_build/html`` folder."""
    from filelock import FileLock  # imported here: the unit-test-only CI job does not install it

    output = book_output_dir()
    build_dir = output / "_build"
    build_dir.mkdir(parents=True, exist_ok=True)
    marker = build_dir / ".built_book.json"
    run_id = test_run_id()
    key = f"{run_id}:{_sources_hash(book_toc)}:{book_toc}"

    with FileLock(str(build_dir / ".built_book.lock"), timeout=BUILD_TIMEOUT_S):
        record = json.loads(marker.read_text()) if marker.exists() else {}
        if record.get("key") != key:  # nobody in this session has built these sources yet
            marker.unlink(missing_ok=True)
            start = time.perf_counter()
            code, log = build_book(book_toc, output)
            record = {"key": key, "returncode": code, "seconds": round(time.perf_counter() - start, 1),
                      "log_tail": log[-3000:]}
            (build_dir / "book-build.log").write_text(log)
            marker.write_text(json.dumps(record, indent=1))

    assert record["returncode"] == 0, (
        f"`jupyter-book build . --toc {book_toc} -W -n --keep-going` failed with exit code "
        f"{record['returncode']} (full log in {build_dir / 'book-build.log'}); last lines:\n"
        f"{record['log_tail']}"
    )
    html = build_dir / "html"
    assert (html / "index.html").exists(), f"the build succeeded but {html / 'index.html'} is missing"
    return html


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep each notebook's nbval cells on one xdist worker, and start the slowest tests first.

    ``make test`` runs with ``--dist loadgroup``: an nbval notebook is one group (its cells share one
    kernel), every other test is handed to whichever worker is free. The slow tests (each executes a
    notebook or more) go first, so that no worker is left with a long one at the end.
    """
    for item in items:
        if type(item).__module__.startswith("nbval"):
            item.add_marker(pytest.mark.xdist_group(name=str(item.path)))
    items.sort(key=lambda item: 0 if item.get_closest_marker("slow") else 1)
