"""utils.glue: the measured numbers the prose shows, recorded as myst-nb reads them."""

from __future__ import annotations

import nbformat
import pytest
import torch
from nbclient import NotebookClient

from utils.glue import GLUE_MIME, glue, glued_values


def test_glue_formats_and_returns_the_text():
    assert glue("ch01_exact_match", 0.90625, ".3f") == "0.906"
    assert glue("ch08_share", 0.3125, ".0%") == "31%"
    assert glue("ch07_params", 3146752) == "3,146,752"
    assert glue("ch05_best_head", torch.tensor(2)) == "2"
    assert glue("ch09_time_speedup", torch.tensor(3.25), ".1f") == "3.2"


@pytest.mark.parametrize("name", ["acc", "ch1_acc", "ch01-acc", "ch01_Acc", ""])
def test_glue_names_say_the_chapter(name):
    with pytest.raises(ValueError, match="ch05_mean_offset"):
        glue(name, 1)


def test_a_float_needs_a_format():
    with pytest.raises(ValueError, match="give a format"):
        glue("ch01_loss", 0.123456)


def test_glue_in_a_kernel_writes_what_myst_nb_reads():
    """Executed in a real kernel: one invisible output per name, with myst-nb's prefix and metadata."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from utils.glue import glue\n"
        "shown = glue('ch03_accuracy', 0.40625, '.1%')\n"
        "glue('ch03_note', \"it's\")\n"
        "print(shown)")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    glued = [o for o in outputs if "scrapbook" in o.get("metadata", {})]
    assert [o.metadata["scrapbook"]["name"] for o in glued] == ["ch03_accuracy", "ch03_note"]
    assert all(set(o.data) == {GLUE_MIME} for o in glued)
    assert glued[0].metadata["scrapbook"]["mime_prefix"] == "application/papermill.record/"
    assert glued_values(nb) == {"ch03_accuracy": "40.6%", "ch03_note": "it's"}
    assert outputs[-1].text.strip() == "40.6%"
    myst_nb = pytest.importorskip("myst_nb.core.variables")
    assert myst_nb.format_plain_text(glued[0].data[GLUE_MIME], "") == "40.6%"
