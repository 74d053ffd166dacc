"""Measured numbers for the prose: a value computed in a cell, shown in the text of the book.

The chapters never type a measured number (an accuracy, a loss, a timing, a ratio) into their prose.
The cell that measures it calls ``glue("ch08_exact_match", exact, ".1%")``, and the Markdown says
``{glue:text}`ch08_exact_match```: when the book is built, Jupyter Book (myst-nb) puts the value of
that run into the sentence, so text and output cannot disagree.

This module writes the same output that ``myst_nb.glue(name, value, display=False)`` writes, without
importing myst-nb, so the notebooks run where it is not installed (Colab, a plain JupyterLab). The
glued output is invisible in a notebook; in JupyterLab or Colab the Markdown shows the role itself, and
the number is in the printed output of the cell that measured it.

Conventions checked by the tests: names start with the chapter (``ch05_...``); names of timings and
of speed-ups measured with a clock start with ``chNN_time_`` (they differ from run to run and are shown
as measured, never promised). Every other glued value must come out identical on every run.
"""

from __future__ import annotations

import numbers
import re

__all__ = ["GLUE_MIME", "glue", "glued_values"]

# The MIME prefix and metadata key myst-nb reads (myst_nb.ext.glue.GLUE_PREFIX, "scrapbook").
GLUE_MIME = "application/papermill.record/text/plain"
_NAME = re.compile(r"^ch\d\d_[a-z0-9_]+$")


def _as_text(value: object, fmt: str) -> str:
    if hasattr(value, "item") and callable(value.item):  # a 0-d tensor or NumPy scalar
        value = value.item()
    if fmt:
        return format(value, fmt)
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    raise ValueError(f"glue: give a format for the float {value!r} (for example '.3f' or '.1%'), "
                     "so the prose shows as many digits as the measurement supports")


class Glued(str):
    """The text ``glue`` returns: a plain ``str`` that a notebook cell ending with ``glue(...)`` does not
    echo (IPython's display hook shows nothing for an object whose ``_ipython_display_`` shows nothing),
    so the book and the notebooks show no stray ``'0.782'`` under the cell."""

    def _ipython_display_(self) -> None:
        pass


def glue(name: str, value: object, fmt: str = "") -> str:
    """Record ``value``, formatted with ``fmt`` (``format(value, fmt)``), under ``name`` for the book.

    Returns the text that the book will show, so a cell can print it too. Floats need a format;
    integers are written with thousands separators unless ``fmt`` says otherwise.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"glue: the name must look like 'ch05_mean_offset' (the chapter, then "
                         f"lower-case words joined by '_'); got {name!r}")
    text = _as_text(value, fmt)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python: nothing to record, the value is still returned
        return Glued(text)
    if get_ipython() is not None:
        display({GLUE_MIME: repr(text)}, raw=True,
                metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_MIME[:-len("text/plain")]}})
    return Glued(text)


def glued_values(notebook: dict) -> dict[str, str]:
    """Every glued name and its text in an executed notebook (a dict read from an .ipynb file)."""
    values: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            data = output.get("data", {})
            if name and GLUE_MIME in data:
                raw = data[GLUE_MIME]
                raw = "".join(raw) if isinstance(raw, list) else raw
                values[name] = raw[1:-1] if raw[:1] in "'\"" and raw[-1:] == raw[:1] else raw
    return values
