"""The student's book: the course's book, in its three languages, without what a student who hands in
work must not see (the solutions, the open questions' answers, the labs' fixes, the ablation ladder's
measured results and the authors' predictions, the instructor guide). book/_ext/student_book.py says
what it leaves out; the public book is the teacher's edition.

    make student-book                   # -> _build/student_book/html/index.html (English),
                                        #    .../html/zh_CN/index.html, .../html/zh_TW/index.html
    python scripts/student_book.py [--languages en zh_CN zh_TW]

It renders the executed notebooks of `make book`'s cache (`make student-book` first executes, as
`make book` does, only the notebooks the cache lacks): with a warm cache nothing runs. The download
button of a chapter serves the chapter's student edition (the English one made here as `make student`
makes it, the Chinese ones from translations/<lang>/student), and the pages have no launch or
repository buttons, which open the full notebooks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import translations  # noqa: E402  (scripts/ is not a package)

OUT = translations.STUDENT_HTML
ENGLISH_BUILD = translations.BUILD / "student_book_en"


def english_book() -> Path:
    """Build the English student's book into _build/student_book/html; return that folder."""
    config = translations.config_for(None)
    # --all: every page read again, since Sphinx cannot see a change of book/_ext/student_book.py
    translations._jupyter_book("--config", str(config), "--path-output", str(ENGLISH_BUILD), "-W", "-n",
                               "--keep-going", "--all", language=None)
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():  # the Chinese books beside it are rebuilt on their own
        if old.name not in translations.LANGUAGES:
            shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
    shutil.copytree(ENGLISH_BUILD / "_build" / "html", OUT, dirs_exist_ok=True)
    serve_student_notebooks(OUT)
    translations.withhold_sources(OUT)
    return OUT


def serve_student_notebooks(html: Path) -> None:
    """The download button's notebooks (_sources/chapters/*.ipynb): the English student edition."""
    sys.path.insert(0, str(ROOT))
    from classroom.edition import write_student_edition

    with tempfile.TemporaryDirectory() as tmp:
        write_student_edition(ROOT / "chapters", tmp)
        for notebook in sorted(Path(tmp).glob("*.ipynb")):
            served = html / "_sources" / "chapters" / notebook.name
            if served.exists():
                shutil.copyfile(notebook, served)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", nargs="*", default=["en", *translations.LANGUAGES],
                        choices=["en", *translations.LANGUAGES])
    args = parser.parse_args(argv)
    os.environ["COURSE_EDITION"] = "student"
    if "en" in args.languages:
        english_book()
        print(f"English: {OUT.relative_to(ROOT)}/index.html")
    chinese = [language for language in args.languages if language != "en"]
    if chinese:
        translations.books(chinese)
    return 0


if __name__ == "__main__":
    sys.exit(main())
