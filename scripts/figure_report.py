"""How large each figure's smallest text will show in the book, without building the book.

    python scripts/figure_report.py chapters/05_multi_head_attention.ipynb [more notebooks]
    python scripts/figure_report.py --from-build          # the notebooks the last `make book` ran

Executes each notebook (or reads the executed copies in ``_build/jupyter_execute``), and for every
figure reads the smallest font size that ``utils.plots`` wrote into the PNG. The book shows a figure at
its natural width, shrunk to the 672-px text column when wider, so its smallest text renders at
``points * dpi / 72 * min(1, 672 / width)`` CSS pixels; below 9 px the line is marked TOO SMALL and the
exit status is 1. The browser test (tests/test_browser.py) measures the same on the built pages.
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
from pathlib import Path

import nbformat
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from utils.plots import COLUMN_PX, MIN_TEXT_PX, SMALLEST_TEXT_KEY  # noqa: E402


def figure_sizes(notebook: nbformat.NotebookNode) -> list[tuple[int, int, float | None, float]]:
    """(cell index, PNG width px, smallest text pt or None, rendered px) for every PNG output."""
    rows = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("image/png")
            if not data:
                continue
            with Image.open(io.BytesIO(base64.b64decode(data))) as image:
                points = image.text.get(SMALLEST_TEXT_KEY)
                dpi = float(image.info.get("dpi", (100, 100))[0])
                width = image.width
            scale = min(1.0, COLUMN_PX / width)
            shown = float(points) * dpi / 72 * scale if points else 0.0
            rows.append((index, width, float(points) if points else None, shown))
    return rows


def execute(path: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return notebook


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--from-build", action="store_true",
                        help="read _build/jupyter_execute/chapters/*.ipynb instead of executing")
    args = parser.parse_args()
    if args.from_build:
        paths = sorted((REPO / "_build" / "jupyter_execute" / "chapters").glob("*.ipynb"))
    else:
        paths = args.notebooks
    if not paths:
        parser.error("name notebooks to execute, or pass --from-build")
    too_small = 0
    for path in paths:
        notebook = nbformat.read(path, as_version=4) if args.from_build else execute(path)
        for index, width, points, shown in figure_sizes(notebook):
            verdict = "ok" if shown >= MIN_TEXT_PX else "TOO SMALL"
            too_small += verdict != "ok"
            drawn = f"{points:.1f} pt" if points else "no size recorded (utils.plots not imported?)"
            print(f"{path.name}  cell {index:3d}  {width:5d} px wide  {drawn:>8}  -> {shown:4.1f} px  "
                  f"{verdict}")
    return 1 if too_small else 0


if __name__ == "__main__":
    sys.exit(main())
