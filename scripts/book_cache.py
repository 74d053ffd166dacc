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

    python scripts/book_cache.py [--build _build]     # drop runs older than the package; say which
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
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
    """When a file of the course package last changed (UTC)."""
    newest = max((p.stat().st_mtime for p in package.rglob("*.py")), default=0.0)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, default=BUILD, help="the build folder (default: _build)")
    args = parser.parse_args(argv)
    for line in prune(args.build):
        print(f"book cache: dropped {line}; it will be executed again")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
