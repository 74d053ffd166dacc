"""The book's execution cache: which executed notebooks a build may reuse, and dropping the others.

`make book` executes each notebook once and keeps the result in ``_build/.jupyter_cache``; a later build
reuses it when the notebook's code is unchanged. jupyter-cache matches on the code alone, so it cannot
see what else changes a notebook's outputs:

- the course package: a run made before ``utils/`` last changed shows what the old package printed;
- the run's settings, which each notebook's set-up cell prints: the CPU threads (``CPU threads: N (``,
  picked from the machine's load unless ``COURSE_THREADS`` says), the device (``Using device: cuda``)
  and a seed offset (``COURSE_SEED``, printed by ``seed_everything`` when it is not 0).

``make book`` drops the runs made with an older package before building (``prune``), so a reader's book
never shows a stale run; it keeps whatever settings the reader's kernels chose. The test suite's build
must show the book as a newcomer's ``make book`` makes it on a quiet machine, so it also drops runs made
with other settings (``prune(settings=...)``, tests/conftest.py): a book built first with one thread,
on a busy machine or with another seed, is then executed again rather than tested as it stands.

Dropping a run is not enough by itself: Sphinx re-reads only pages whose source changed, so the page of
a dropped run would keep its old outputs. ``prune`` therefore also removes the Sphinx environment of
every book built from this cache (English and Chinese), which makes the next build re-read every page;
pages whose runs are still cached render again without executing anything.

Executing the notebooks is most of a build. jupyter-book runs them one after another; ``execute``
runs the ones the cache lacks two at a time, with half the threads each (one thread each on a 2-core
machine: these small models run faster one thread per core than two threads sharing two cores), and
stores them in the cache as jupyter-book would; the build then executes nothing. A notebook that fails
here is not stored: jupyter-book runs it again and reports its error as usual.

    python scripts/book_cache.py [--build _build]            # drop runs older than the package
    python scripts/book_cache.py --execute [--toc book/_toc.yml]
                                  # ...then execute the missing runs side by side (what `make book` does)

``COURSE_BOOK_JOBS`` sets how many notebooks run at a time (1: one after another, with all threads);
``COURSE_THREADS`` set by the reader means one at a time with that many threads.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
PACKAGE = ROOT / "utils"

_THREADS = re.compile(r"CPU threads: (\d+) \(")
_DEVICE = re.compile(r"Using device: (\w+)")
_SEED = re.compile(r"COURSE_SEED=(\d+)")


@dataclass(frozen=True)
class RunSettings:
    """What a run's set-up cell printed first: its CPU threads, its device and its seed offset.

    None where nothing was printed (a page without a set-up cell); a wanted None accepts anything.
    """

    threads: int | None = None
    device: str | None = None
    seed: int | None = None


def run_settings(notebook: dict) -> RunSettings:
    """The settings an executed notebook's outputs show; no seed line means offset 0."""
    text = "\n".join("".join(out.get("text", "")) for cell in notebook.get("cells", [])
                     for out in cell.get("outputs", []) if out.get("output_type") == "stream")
    threads, device, seed = (rx.search(text) for rx in (_THREADS, _DEVICE, _SEED))
    return RunSettings(int(threads.group(1)) if threads else None,
                       device.group(1) if device else None,
                       int(seed.group(1)) if seed else 0)


def package_changed(package: Path) -> dt.datetime:
    """When a file of the course package last changed (UTC): its modules, and the script and texts
    they read (the views' JavaScript, the exercises' data). Not the exercises' Chinese texts
    (``exercises/locale/``): the book runs the English notebooks, which never read them, and every
    catalogue update may rewrite them."""
    newest = max((p.stat().st_mtime for p in package.rglob("*")
                  if p.suffix in (".py", ".js", ".json") and "locale" not in p.relative_to(package).parts),
                 default=0.0)
    return dt.datetime.fromtimestamp(newest, tz=dt.timezone.utc)


def why_stale(created: dt.datetime, settings: RunSettings, *, package_time: dt.datetime,
              wanted: RunSettings | None = None) -> str | None:
    """Why a run must not be reused (None: reuse it). ``wanted`` None accepts any settings."""
    if created.tzinfo is None:  # jupyter-cache stores UTC without a zone
        created = created.replace(tzinfo=dt.timezone.utc)
    if created < package_time:
        return (f"executed {created:%Y-%m-%d %H:%M} UTC, before utils/ last changed "
                f"({package_time:%Y-%m-%d %H:%M})")
    if wanted is None:
        return None
    for label, have, want in (("CPU threads", settings.threads, wanted.threads),
                              ("device", settings.device, wanted.device),
                              ("seed offset (COURSE_SEED)", settings.seed, wanted.seed)):
        if want is not None and have is not None and have != want:
            return f"executed with {label} {have}, this build wants {want}"
    return None


def prune(build: Path = BUILD, *, wanted: RunSettings | None = None,
          package: Path | None = None) -> list[str]:
    """Drop every cached run that ``why_stale`` rejects; return one line per dropped run.

    When anything is dropped, the Sphinx environments of the books under ``build`` go too, so that the
    next build re-reads every page (see the module's docstring).
    """
    cache_dir = build / ".jupyter_cache"
    if not cache_dir.is_dir():
        return []
    from jupyter_cache import get_cache

    store = get_cache(str(cache_dir))
    package_time = package_changed(package or PACKAGE)
    dropped = []
    for record in store.list_cache_records():
        try:
            notebook = store.get_cache_bundle(record.pk).nb
        except KeyError:  # its folder is gone: the record can only mislead
            reason = "its executed notebook is missing"
        else:
            reason = why_stale(record.created, run_settings(notebook),
                               package_time=package_time, wanted=wanted)
        if reason is None:
            continue
        try:
            store.remove_cache(record.pk)
        except KeyError:
            from jupyter_cache.cache.db import NbCacheRecord

            NbCacheRecord.remove_records([record.pk], store.db)
        dropped.append(f"{Path(record.uri).name}: {reason}")
    if dropped:
        for environment in build.glob("**/.doctrees/environment.pickle"):
            environment.unlink()
    return dropped


# ---------------------------------------------------------------------------------------------------
# Executing the missing runs side by side
# ---------------------------------------------------------------------------------------------------
TIMEOUT_S = 600  # _config.yml's execute.timeout, per cell


def plan(total_threads: int, jobs: int | None = None) -> tuple[int, int]:
    """(notebooks at a time, CPU threads each) for ``total_threads`` threads: two at a time when
    there are two threads or more, the threads split between them; ``jobs`` forces the first."""
    if jobs is None:
        jobs = 2 if total_threads >= 2 else 1
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    return jobs, max(1, total_threads // jobs)


def machine_plan(environ: dict[str, str] | None = None) -> tuple[int, int]:
    """What `make book` uses here and now: ``COURSE_THREADS`` when the reader set it (one notebook at
    a time), else the threads ``choose_threads()`` would pick now (the load counts) split as ``plan``
    says; ``COURSE_BOOK_JOBS`` overrides how many notebooks run at a time."""
    environ = os.environ if environ is None else environ
    sys.path.insert(0, str(ROOT))
    from utils.runtime import automatic_threads, idle_cpus, usable_cpus

    jobs_text = environ.get("COURSE_BOOK_JOBS")
    try:
        jobs = int(jobs_text) if jobs_text else None
    except ValueError:
        raise SystemExit(f"COURSE_BOOK_JOBS must be a whole number, got {jobs_text!r}") from None
    if environ.get("COURSE_THREADS"):
        return jobs or 1, int(environ["COURSE_THREADS"])
    return plan(automatic_threads(usable_cpus(), idle_cpus()), jobs)


def toc_notebooks(toc: Path) -> list[Path]:
    """The notebooks a table of contents lists (``file: chapters/NN_name`` with an .ipynb beside it)."""
    names = re.findall(r"^\s*(?:-\s*)?(?:file|root):\s*(\S+)", toc.read_text(), flags=re.M)
    paths = [ROOT / f"{name.removesuffix('.ipynb')}.ipynb" for name in names]
    return [path for path in paths if path.is_file()]


def _execute_one(path: str, environ: dict[str, str]) -> tuple[str | None, float, str | None]:
    """Run one notebook in its own folder as myst-nb would; (executed notebook as JSON, seconds, error)."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    os.environ.clear()  # the kernel inherits this process's environment: exactly the build's
    os.environ.update(environ)
    notebook = nbformat.read(path, as_version=4)
    result = single_nb_execution(notebook, cwd=str(Path(path).parent), allow_errors=False,
                                 timeout=TIMEOUT_S, meta_override=True)
    if result.err is not None:
        return None, result.time, f"{type(result.err).__name__}: {str(result.err)[-1500:]}"
    return nbformat.writes(notebook), result.time, None


def missing_runs(build: Path, notebooks: list[Path]) -> list[Path]:
    """The notebooks whose code has no run in the cache."""
    import nbformat
    from jupyter_cache import get_cache

    store = get_cache(str(build / ".jupyter_cache"))
    missing = []
    for path in notebooks:
        try:
            store.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            missing.append(path)
    return missing


def execute(build: Path, notebooks: list[Path], *, jobs: int, threads: int,
            environ: dict[str, str] | None = None) -> list[str]:
    """Execute the notebooks the cache lacks, ``jobs`` at a time with ``threads`` CPU threads each,
    and store each run that succeeds; return one line per notebook that failed. ``environ`` is the
    kernels' whole environment (default: this process's)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    todo = missing_runs(build, notebooks)
    if not todo:
        return []
    # the notebooks that train longest start first (the later chapters and the labs), so that no worker
    # is left alone with a long one at the end
    todo.sort(key=lambda path: path.name, reverse=True)
    # the whole environment of the kernels: the caller's (a variable it removed stays removed), else
    # this process's, with the thread count of the plan
    kernel_env = {**(dict(os.environ) if environ is None else environ), "COURSE_THREADS": str(threads)}
    print(f"book: executing {len(todo)} notebooks, {jobs} at a time, {threads} CPU thread"
          f"{'s' if threads > 1 else ''} each (COURSE_BOOK_JOBS, COURSE_THREADS)", flush=True)
    store = get_cache(str(build / ".jupyter_cache"))
    failed = []
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:  # the workers import this module by name (spawn copies sys.path)
        sys.path.insert(0, here)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(_execute_one, str(path), kernel_env): path for path in todo}
        for future in as_completed(futures):
            path = futures[future]
            try:
                text, seconds, error = future.result()
            except Exception as err:  # the worker itself died
                text, seconds, error = None, 0.0, f"{type(err).__name__}: {err}"
            if error is not None:
                failed.append(f"{path.name}: {error.splitlines()[0] if error else ''}")
                print(f"  {path.name}: failed after {seconds:.0f} s; jupyter-book runs it again and "
                      "reports the error", flush=True)
                continue
            store.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(text, as_version=4), str(path),
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            print(f"  {path.name}: {seconds:.0f} s", flush=True)
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, default=BUILD, help="the build folder (default: _build)")
    parser.add_argument("--execute", action="store_true",
                        help="then execute the notebooks the cache lacks, side by side")
    parser.add_argument("--toc", type=Path, default=ROOT / "book" / "_toc.yml",
                        help="the table of contents whose notebooks --execute runs")
    args = parser.parse_args(argv)
    for line in prune(args.build):
        print(f"book cache: dropped {line}; it will be executed again")
    if args.execute:
        jobs, threads = machine_plan()
        start = time.perf_counter()
        failed = execute(args.build, toc_notebooks(args.toc), jobs=jobs, threads=threads)
        print(f"book: notebooks executed in {time.perf_counter() - start:.0f} s"
              + (f"; {len(failed)} failed" if failed else ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
