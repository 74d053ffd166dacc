"""Write the course's address and release into every place that repeats them, or check them.

One setting decides where the course lives: ``repository`` under ``[tool.attention-course]`` in
pyproject.toml ("owner/name" on GitHub). The release is the package version, ``version`` under
``[project]``; its git tag is ``v`` + version. Everything below is derived from those two values:

- every notebook's first cell, the set-up cell that installs the course package in Colab or a fresh
  kernel, from the release's tag (never a moving branch), so a notebook gets the ``utils`` it was
  written for;
- ``_config.yml``: the repository button and the launch buttons (Colab, Binder, JupyterHub), at the
  release's tag, so a launched notebook and the package it installs come from one commit;
- README.md: the "Open in Colab" badge of every chapter, at the same tag;
- ``utils/__init__.py``: ``__version__``, which the set-up cell compares with its own.

A fork changes the one line in pyproject.toml and runs

    python scripts/course_address.py           # rewrite every derived place
    python scripts/course_address.py --check   # exit 1, listing what disagrees (tests/test_bootstrap.py)

A release bumps ``version`` in pyproject.toml, runs the script, commits, and tags the commit
``v<version>`` (see CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = "attention-course"  # utils.__course__: tells this course's `utils` from any other

# The set-up cell. {repo} and {version} are filled in; everything else is the same in every notebook.
BOOTSTRAP = '''\
# Set-up for Colab and fresh kernels: makes sure that `import utils` gives this course's
# package, at the release this notebook was written for. Does nothing when it already
# does (a clone after `make setup`, or a second run); otherwise installs it with pip.
# PyTorch and the other libraries are never reinstalled: Colab's own stay.
import importlib.util, re, subprocess, sys

# Written by scripts/course_address.py from pyproject.toml:
COURSE_REPO, COURSE_VERSION = "{repo}", "{version}"
SOURCE = f"git+https://github.com/{{COURSE_REPO}}@v{{COURSE_VERSION}}"


def course_utils():
    """(True, "") if `import utils` gives this course's package, else (False, why)."""
    importlib.invalidate_caches()
    spec = importlib.util.find_spec("utils")
    if spec is None:
        return False, "no package named utils is installed"
    init = spec.origin or ""
    text = open(init, encoding="utf-8").read() if init.endswith(".py") else ""
    if '__course__ = "{marker}"' not in text:
        return False, f"`import utils` finds another package: {{init or 'a folder'}}"
    found = re.search(r'__version__ = "([^"]*)"', text)
    version = found.group(1) if found else "?"
    if version != COURSE_VERSION:
        return False, f"utils {{version}} is here; this notebook needs {{COURSE_VERSION}}"
    return True, ""


ready, why = course_utils()
if not ready:
    print(f"{{why}}: installing {{SOURCE}}")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                          "--force-reinstall", SOURCE], capture_output=True, text=True)
    said = [ln for ln in pip.stderr.splitlines() if re.search("fatal|error", ln, re.I)]
    error = " / ".join(said[:2]) or pip.stderr.strip() or "(no message)"
    offline = re.search("resolve|connect|network|unreachable", pip.stderr, re.I)
    if pip.returncode != 0:
        raise ImportError(
            f"Could not install the course package from {{SOURCE}}: pip said: {{error}}\\n"
            + ("This machine seems to have no internet. " if offline else "")
            + "To install it from a local copy instead, run in a terminal\\n"
            "    pip install --no-deps -e /path/to/your/clone/of/the/course\\n"
            "then restart the kernel and run this cell again.") from None
    for name in [m for m in sys.modules if m.split(".")[0] == "utils"]:
        del sys.modules[name]  # an earlier `import utils` must not stay in the way
    ready, why = course_utils()
    if not ready:
        raise ImportError(f"Installed {{SOURCE}}, but {{why}}. Rename or remove that "
                          "package (or folder), restart the kernel and run this cell "
                          "again.") from None
    print(f"the course package {{COURSE_VERSION}} is installed")
missing = [m for m in ("torch", "numpy", "matplotlib", "tqdm")
           if importlib.util.find_spec(m) is None]
if missing:
    raise ImportError(f"The course also needs {{', '.join(missing)}}: pip install them "
                      "(PyTorch: see https://pytorch.org/get-started).")
'''


def _toml_string(text: str, table: str, key: str) -> str | None:
    """``key = "value"`` in ``[table]`` of a TOML text (tomllib is not in Python 3.10)."""
    section = re.search(rf"(?ms)^\[{re.escape(table)}\]\n(.*?)(?=^\[|\Z)", text)
    found = section and re.search(rf'(?m)^{re.escape(key)}\s*=\s*"([^"]*)"', section.group(1))
    return found.group(1) if found else None


def settings(root: Path = ROOT) -> tuple[str, str]:
    """The one setting (repository "owner/name") and the release (package version)."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    repo = _toml_string(text, "tool.attention-course", "repository")
    version = _toml_string(text, "project", "version")
    if repo is None or not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise SystemExit("pyproject.toml: [tool.attention-course] needs repository = "
                         f'"owner/name" (the repository on GitHub), got {repo!r}')
    if version is None:
        raise SystemExit('pyproject.toml: [project] needs version = "X.Y.Z"')
    return repo, version


def bootstrap_source(repo: str, version: str) -> str:
    """The first cell of every notebook for this repository and release."""
    return BOOTSTRAP.format(repo=repo, version=version, marker=MARKER).rstrip("\n")


def colab_url(repo: str, version: str, notebook: str) -> str:
    """Where Colab opens ``notebook`` (a path like chapters/01_x.ipynb) of the release."""
    return f"https://colab.research.google.com/github/{repo}/blob/v{version}/{notebook}"


# ---------------------------------------------------------------------------------------------------
# Each derived place: a function text -> text that writes the settings into it
# ---------------------------------------------------------------------------------------------------
def _config(text: str, repo: str, version: str) -> str:
    text = re.sub(r"(?m)^(repository:\n  url: ).*$", rf"\g<1>https://github.com/{repo}", text)
    return re.sub(r"(?m)^(repository:\n(?:  .*\n)*?  branch: ).*$", rf"\g<1>v{version}", text)


def _readme(text: str, repo: str, version: str) -> str:
    return re.sub(r"https://colab\.research\.google\.com/github/[^/\s)]+/[^/\s)]+/blob/[^/\s)]+/"
                  r"(chapters/[^\s)]+\.ipynb)",
                  lambda m: colab_url(repo, version, m.group(1)), text)


def _package(text: str, repo: str, version: str) -> str:
    return re.sub(r'(?m)^__version__ = "[^"]*"', f'__version__ = "{version}"', text)


def _notebook(text: str, repo: str, version: str) -> str:
    nb = json.loads(text)
    cell = nb["cells"][0]
    cell["source"] = bootstrap_source(repo, version).splitlines(keepends=True)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def derived_places(root: Path = ROOT) -> dict[Path, object]:
    """Every file that repeats the settings, with the function that writes them into it."""
    places: dict[Path, object] = {root / "_config.yml": _config, root / "README.md": _readme,
                                  root / "utils" / "__init__.py": _package}
    for path in sorted((root / "chapters").glob("*.ipynb")):
        places[path] = _notebook
    return places


def disagreements(root: Path = ROOT) -> list[str]:
    """The places whose text differs from what the settings give (empty when all agree)."""
    repo, version = settings(root)
    wrong = []
    for path, write in derived_places(root).items():
        text = path.read_text(encoding="utf-8")
        if write(text, repo, version) != text:  # type: ignore[operator]
            wrong.append(str(path.relative_to(root)))
    return wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report places that disagree")
    parser.add_argument("--root", type=Path, default=ROOT, help="the course folder (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    repo, version = settings(root)
    if args.check:
        wrong = disagreements(root)
        for place in wrong:
            print(f"{place}: does not match repository {repo!r}, release v{version}; "
                  "run python scripts/course_address.py")
        return 1 if wrong else 0
    for path, write in derived_places(root).items():
        text = path.read_text(encoding="utf-8")
        new = write(text, repo, version)  # type: ignore[operator]
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path.relative_to(root)}")
    print(f"repository {repo}, release v{version}: every place agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
