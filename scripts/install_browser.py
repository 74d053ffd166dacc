"""Install what the book and the browser test need: a Chromium, local copies of MathJax 3 and
reveal.js for the book, and axe-core.

    python scripts/install_browser.py            # all four (what `make test` runs)
    python scripts/install_browser.py --mathjax  # only MathJax and reveal.js (enough for `make book`)
    python scripts/install_browser.py --check    # install nothing; say what is there, exit 1 if not all

Quick and idempotent: when all are already there it prints four lines and exits.

- Chromium: any of ``$CHROMIUM_PATH``, ``/usr/bin/chromium``, ``chromium``, ``chromium-browser``,
  ``google-chrome`` on the PATH is used. When none is found and we are root on a system with
  ``apt-get`` (Debian, Ubuntu, the CI image), ``apt-get update && apt-get install -y chromium`` installs
  Debian's build. Otherwise it prints what to do. Playwright's own browser download
  (``playwright install``) is never used: it needs a download site that is not a package registry.
- MathJax: the book's pages typeset their equations with MathJax 3, which Sphinx loads from a CDN by
  default, so an offline reader (and the browser test) would see raw TeX. This script unpacks the npm
  registry's ``mathjax`` package (pinned below) into ``_vendor/mathjax/`` at the repository root (a
  folder that ignores itself in git). ``_config.yml`` lists ``_vendor`` in Sphinx's
  ``html_static_path`` (so the book serves ``_static/mathjax/``) and sets ``mathjax_path`` to
  ``mathjax/tex-chtml-light.js``. Not ``_static/``: Jupyter Book would load every .js file in a root
  ``_static/`` folder on every page.
  ``tex-chtml-light.js`` is written here from the package's own components: MathJax's combined
  ``tex-chtml.js`` less its context menu (``ui/menu``, 430 KB of the 1.2 MB every page loaded). It is
  the loader, the core, the TeX input with its usual packages (base, ams, newcommand, noundefined,
  require, autoload, configmacros: any other package a formula needs loads itself from
  ``input/tex/extensions/``), the HTML output with its TeX font, and the hidden MathML that screen
  readers read (``a11y/assistive-mml``). No MathML input: the pages hold TeX only.
- reveal.js: the lecture slides (``classroom/slides.py``) are reveal.js decks. The npm registry's
  ``reveal.js`` package (pinned below) gives the script, its stylesheet, one theme and the speaker-notes
  plugin, unpacked into ``_vendor/reveal/``: Sphinx serves it with every book as
  ``_static/reveal/``, where the decks beside the book load it. No CDN.
- axe-core: the accessibility engine the browser test runs on every page (WCAG 2.1 A and AA rules).
  The npm registry's ``axe-core`` package (pinned below) gives ``axe.min.js``, kept in
  ``.test_tools/axe-core/`` (a folder that ignores itself in git), outside the book: readers never
  load it; the test injects it into each page it visits.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATHJAX_VERSION = "3.2.2"
VENDOR_DIR = ROOT / "_vendor"  # in html_static_path (see _config.yml); ignores itself in git
MATHJAX_DIR = VENDOR_DIR / "mathjax"
MATHJAX_ENTRY = "tex-chtml-light.js"  # the file the book loads (_config.yml's mathjax_path), made here
# What it is made of, in this order: the startup component (the loader and MathJax.startup) first, so
# that each component after it registers itself with the startup; its MathJax.loader.load() of the
# (empty) list of components to fetch resolves only once the whole file has run.
MATHJAX_PARTS = ("startup.js", "core.js", "input/tex.js", "output/chtml.js", "output/chtml/fonts/tex.js",
                 "a11y/assistive-mml.js")
# ...and then tells the loader that these are here, so that a TeX package loaded later on demand
# (\require, autoload) does not fetch them again.
_MATHJAX_LOADED = ("core", "input/tex", "output/chtml", "output/chtml/fonts/tex", "a11y/assistive-mml")
# Parts of the npm package the book does not need (SVG output, the "full" bundles, node entry points).
_SKIP_PARTS = ("svg", "-full", "node-main", "adaptors")

# reveal.js: the lecture slides' presentation framework (classroom/slides.py). Unpacked into _vendor/, so
# Sphinx serves it with every book as _static/reveal/ and the decks beside the book load it there.
REVEAL_VERSION = "6.0.2"
REVEAL_DIR = VENDOR_DIR / "reveal"
REVEAL_FILES = {"package/dist/reveal.js": "reveal.js", "package/dist/reveal.css": "reveal.css",
                "package/dist/theme/simple.css": "theme/simple.css",
                "package/dist/plugin/notes.js": "plugin/notes.js", "package/LICENSE": "LICENSE"}

AXE_VERSION = "4.14.1"
TEST_TOOLS_DIR = ROOT / ".test_tools"  # what only the tests use; ignores itself in git
AXE_DIR = TEST_TOOLS_DIR / "axe-core"
AXE_SCRIPT = AXE_DIR / "axe.min.js"

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
APT_PACKAGES = ["chromium"]
APT_OPTIONAL = ["fonts-wqy-microhei"]  # draws the glossary's Chinese names in screenshots; best effort


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome executable, or None when there is none."""
    env = os.environ.get("CHROMIUM_PATH")
    if env and Path(env).is_file() and os.access(env, os.X_OK):
        return env
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def can_install_chromium() -> bool:
    """True when we may install Debian's chromium ourselves: root, with apt-get."""
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return is_root and shutil.which("apt-get") is not None


def install_chromium(quiet: bool = False) -> str | None:
    """Find Chromium, installing Debian's package when possible; return its path or None."""
    found = find_chromium()
    if found:
        if not quiet:
            print(f"Chromium: found {found}")
        return found
    if not can_install_chromium():
        print("Chromium: not found, and this is not root on a system with apt-get, so it cannot be "
              "installed here.\n  Install Chromium or Chrome yourself (Debian/Ubuntu: "
              "`sudo apt-get install chromium`) or set CHROMIUM_PATH to its executable.")
        return None
    print(f"Chromium: not found; installing Debian's packages {APT_PACKAGES} with apt-get ...", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    steps = [["apt-get", "update", "-qq"],
             ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *APT_PACKAGES]]
    for cmd in steps:
        result = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            print(f"Chromium: `{' '.join(cmd)}` failed:\n{result.stderr[-2000:]}")
            return None
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *APT_OPTIONAL], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found = find_chromium()
    print(f"Chromium: installed {found}" if found else "Chromium: apt-get succeeded but no chromium found")
    return found


def mathjax_unpacked() -> bool:
    """True when the pinned MathJax's components are unpacked in ``_vendor/mathjax``."""
    stamp = MATHJAX_DIR / ".version"
    return stamp.is_file() and stamp.read_text().strip() == MATHJAX_VERSION and \
        all((MATHJAX_DIR / part).is_file() for part in MATHJAX_PARTS)


def mathjax_installed() -> bool:
    """True when the pinned MathJax is unpacked in ``_vendor/mathjax`` with the book's entry file."""
    return mathjax_unpacked() and (MATHJAX_DIR / MATHJAX_ENTRY).is_file()


def combine_mathjax(folder: Path) -> int:
    """Write ``tex-chtml-light.js`` into ``folder`` from the components beside it; return its size."""
    parts = [(folder / part).read_text(encoding="utf-8") for part in MATHJAX_PARTS]
    loaded = ", ".join(f'"{name}"' for name in _MATHJAX_LOADED)
    text = (f"/* MathJax {MATHJAX_VERSION}: {' + '.join(MATHJAX_PARTS)}; written by "
            "scripts/install_browser.py (tex-chtml.js without the context menu). */\n"
            + "\n".join(part.rstrip() + ";" for part in parts)
            + f"\nMathJax.loader.preLoad({loaded});\n")
    (folder / MATHJAX_ENTRY).write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def _unpack_mathjax(tarball: Path) -> None:
    """Copy the browser (es5) part of the npm tarball into ``_vendor/mathjax``."""
    staging = MATHJAX_DIR.with_name("mathjax.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            name = member.name
            if name == "package/LICENSE":
                rel = "LICENSE"
            elif name.startswith("package/es5/") and member.isfile():
                rel = name[len("package/es5/"):]
                if any(part in rel.split("/")[0] for part in _SKIP_PARTS):
                    continue
            else:
                continue
            if ".." in Path(rel).parts:
                continue
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is not None:
                target.write_bytes(source.read())
    (staging / ".version").write_text(MATHJAX_VERSION + "\n")
    combine_mathjax(staging)
    shutil.rmtree(MATHJAX_DIR, ignore_errors=True)
    staging.rename(MATHJAX_DIR)
    (VENDOR_DIR / ".gitignore").write_text("# Made by scripts/install_browser.py (not in git).\n*\n")


def _write_cdn_loader() -> None:
    """Fallback: a small ``tex-chtml-light.js`` that loads MathJax from a CDN, so the book still builds.

    Pages then need internet to typeset math; the next run of this script replaces the loader with the
    real files as soon as npm works (the loader has no version stamp, so it never counts as installed).
    """
    MATHJAX_DIR.mkdir(parents=True, exist_ok=True)
    (MATHJAX_DIR / ".version").unlink(missing_ok=True)
    (MATHJAX_DIR / MATHJAX_ENTRY).write_text(
        "// CDN fallback written by scripts/install_browser.py because npm was not available.\n"
        "(function () {\n"
        "  var s = document.createElement('script');\n"
        f"  s.src = 'https://cdn.jsdelivr.net/npm/mathjax@{MATHJAX_VERSION}/es5/tex-chtml.js';\n"
        "  s.async = true;\n"
        "  document.head.appendChild(s);\n"
        "})();\n")
    (VENDOR_DIR / ".gitignore").write_text("# Made by scripts/install_browser.py (not in git).\n*\n")


def install_mathjax(quiet: bool = False) -> bool:
    """Unpack MathJax (from the npm registry, with ``npm pack``) unless it is already there."""
    if mathjax_installed():
        if not quiet:
            print(f"MathJax: found {MATHJAX_VERSION} in {MATHJAX_DIR.relative_to(ROOT)}/")
        return True
    if mathjax_unpacked():  # unpacked before the book loaded tex-chtml-light.js: no need to fetch again
        size = combine_mathjax(MATHJAX_DIR)
        print(f"MathJax: wrote {MATHJAX_DIR.relative_to(ROOT)}/{MATHJAX_ENTRY} ({size // 1000} KB)")
        return True
    tarball = _npm_pack("mathjax", MATHJAX_VERSION, "MathJax")
    if tarball is None:
        print("MathJax: so the book will load MathJax from a CDN (math then needs internet to display).")
        _write_cdn_loader()
        return False
    _unpack_mathjax(tarball)
    shutil.rmtree(tarball.parent, ignore_errors=True)
    print(f"MathJax: installed {MATHJAX_VERSION} in {MATHJAX_DIR.relative_to(ROOT)}/")
    return True


def axe_installed() -> bool:
    """True when the pinned axe-core is in ``.test_tools/axe-core``."""
    stamp = AXE_DIR / ".version"
    return AXE_SCRIPT.is_file() and stamp.is_file() and stamp.read_text().strip() == AXE_VERSION


def _npm_pack(package: str, version: str, what: str) -> Path | None:
    """``npm pack package@version`` into a fresh temporary folder; the tarball, or None (said why)."""
    npm = shutil.which("npm")
    if npm is None:
        print(f"{what}: `npm` is missing. Install Node.js/npm (Debian: `apt-get install npm`) and run "
              "this script again.")
        return None
    print(f"{what}: fetching {package}@{version} from the npm registry ...", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="npm-pack-"))
    result = subprocess.run([npm, "pack", f"{package}@{version}", "--silent"], cwd=tmp,
                            capture_output=True, text=True)
    tarballs = list(tmp.glob("*.tgz"))
    if result.returncode != 0 or not tarballs:
        print(f"{what}: `npm pack` failed:\n{result.stderr[-2000:]}")
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    return tarballs[0]


def _unpack(tarball: Path, files: dict[str, str], target: Path, version: str) -> None:
    """Copy ``files`` (name in the tarball -> name in ``target``) out of an npm tarball, atomically."""
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        for name, rel in files.items():
            source = tar.extractfile(tar.getmember(name))
            if source is not None:
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                (staging / rel).write_bytes(source.read())
    (staging / ".version").write_text(version + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    shutil.rmtree(tarball.parent, ignore_errors=True)


def install_axe(quiet: bool = False) -> bool:
    """Unpack axe-core's ``axe.min.js`` and licence (from the npm registry) unless already there."""
    if axe_installed():
        if not quiet:
            print(f"axe-core: found {AXE_VERSION} in {AXE_DIR.relative_to(ROOT)}/")
        return True
    tarball = _npm_pack("axe-core", AXE_VERSION, "axe-core")
    if tarball is None:
        print("axe-core: without it the browser test cannot check accessibility (it skips that test, "
              "and fails under CI).")
        return False
    _unpack(tarball, {"package/axe.min.js": "axe.min.js", "package/LICENSE": "LICENSE"}, AXE_DIR,
            AXE_VERSION)
    (TEST_TOOLS_DIR / ".gitignore").write_text("# Made by scripts/install_browser.py (not in git).\n*\n")
    print(f"axe-core: installed {AXE_VERSION} in {AXE_DIR.relative_to(ROOT)}/")
    return True


def reveal_installed() -> bool:
    """True when the pinned reveal.js is in ``_vendor/reveal``, its theme without web fonts."""
    stamp = REVEAL_DIR / ".version"
    theme = REVEAL_DIR / "theme" / "simple.css"
    return stamp.is_file() and stamp.read_text().strip() == REVEAL_VERSION and \
        all((REVEAL_DIR / rel).is_file() for rel in REVEAL_FILES.values()) and \
        "https://" not in theme.read_text(encoding="utf-8")


def install_reveal(quiet: bool = False) -> bool:
    """Unpack the parts of reveal.js the slides use (from the npm registry) unless already there."""
    if reveal_installed():
        if not quiet:
            print(f"reveal.js: found {REVEAL_VERSION} in {REVEAL_DIR.relative_to(ROOT)}/")
        return True
    tarball = _npm_pack("reveal.js", REVEAL_VERSION, "reveal.js")
    if tarball is None:
        print("reveal.js: without it `python -m classroom.slides` cannot write the lecture slides.")
        return False
    _unpack(tarball, REVEAL_FILES, REVEAL_DIR, REVEAL_VERSION)
    # The theme asks Google Fonts for its two typefaces: an offline reader's deck would wait on them,
    # and the decks name their own (system) fonts anyway (classroom/slides_static/slides.css).
    theme = REVEAL_DIR / "theme" / "simple.css"
    theme.write_text(re.sub(r'@import\s+(?:url\()?["\']?https?://[^;]*;', "",
                            theme.read_text(encoding="utf-8")), encoding="utf-8")
    (VENDOR_DIR / ".gitignore").write_text("# Made by scripts/install_browser.py (not in git).\n*\n")
    print(f"reveal.js: installed {REVEAL_VERSION} in {REVEAL_DIR.relative_to(ROOT)}/")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mathjax", action="store_true",
                        help="only what the book needs: the local MathJax and reveal.js")
    parser.add_argument("--check", action="store_true", help="install nothing; report and exit 1 if missing")
    args = parser.parse_args(argv)
    if args.check:
        chromium, mathjax, axe = find_chromium(), mathjax_installed(), axe_installed()
        reveal = reveal_installed()
        print(f"Chromium: {chromium or 'missing'}")
        print(f"MathJax: {'installed' if mathjax else 'missing'} ({MATHJAX_DIR.relative_to(ROOT)}/)")
        print(f"reveal.js: {'installed' if reveal else 'missing'} ({REVEAL_DIR.relative_to(ROOT)}/)")
        print(f"axe-core: {'installed' if axe else 'missing'} ({AXE_DIR.relative_to(ROOT)}/)")
        return 0 if (chromium and mathjax and axe and reveal) else 1
    # Neither is fatal here: without Chromium the browser test says why it skips (and fails under CI);
    # without npm the book loads MathJax from a CDN, and the browser test reports the offline math.
    install_mathjax()
    install_reveal()
    if not args.mathjax:
        install_chromium()
        install_axe()
    return 0


if __name__ == "__main__":
    sys.exit(main())
