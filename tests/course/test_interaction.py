"""``course.widgets.interact``: ipywidgets' interact, but nbclient never answers an Output widget.

ipywidgets' own ``interact`` captures the function's output in an Output widget; headless,
nbclient then sends the widget's state back on the shell channel while it awaits the cell's
``execute_reply`` there, and a reply that arrived just before is never noticed (a hang with
no timeout). These tests pin down that the course's interact gives nbclient nothing to send.
"""
from __future__ import annotations

import re

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.notebooks.units import ROOT, read, units
from headless import RecordingClient

PLOT = """import matplotlib.pyplot as plt
from course.widgets import interact

def show(n=3):
    print("n =", n)
    plt.plot(range(n))
    plt.show()
    if n == 0:
        raise ValueError("n must be positive")

interact(show, n=(0, 5));"""
TO_ZERO = "show.widget.children[0].value = 0"   # what dragging the slider to 0 does


@pytest.mark.notebooks
def test_headless_interact_sends_nothing_back_and_keeps_its_outputs():
    nb = new_notebook(cells=[new_code_cell(PLOT), new_code_cell(TO_ZERO)], metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    client = RecordingClient(nb)
    client.execute()
    assert not client.unexpected(), client.sent
    state = nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    (outputs,) = [model["state"]["outputs"] for model in state.values()
                  if model["model_name"] == "OutputModel"]
    assert [o["output_type"] for o in outputs] == ["stream", "display_data", "error"]
    assert outputs[0]["text"] == "n = 0\n" and "image/png" in outputs[1]["data"]
    error = outputs[2]
    assert (error["ename"], error["evalue"]) == ("ValueError", "n must be positive")
    assert "show" in "".join(error["traceback"]) and "update" not in "".join(error["traceback"])


def test_no_notebook_captures_output_in_an_output_widget():
    """``from ipywidgets import interact`` or an ``Output()`` in a notebook brings the hang back."""
    for unit in units(ROOT):
        for path in (unit.source, unit.release):
            for cell in read(path).cells:
                assert not re.search(r"from ipywidgets import .*\binteract|widgets\.interact\b|"
                                     r"\bOutput\(", cell.source), f"{path.name} {cell.get('id')}"
