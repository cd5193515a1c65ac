"""Every notebook with widgets executes headless, as ``jupyter nbconvert --execute`` runs it
(nbclient, no timeout), and each of its widget cells runs again and again without a stall: 20
times in a row under ``make soak``, twice in the suite (tests/soak.py).

A stall needs the executor to send on the shell channel during a cell (nbclient issue #312:
it answers an ipywidgets ``Output`` widget, and misses the cell's reply that came just
before). So besides running the cells, the test requires that the executor sent nothing but
execution requests: the cause is absent, not merely lucky timing. Release notebooks use the
same widgets (tests/course/test_interaction.py checks that no notebook captures output in an
``Output`` widget); the bundle test runs them headless to their first stub.
``bench/headless.py`` runs whole notebooks 20 times with ``jupyter nbconvert`` itself.
"""
from __future__ import annotations

import shutil

import pytest

from autograder.notebooks.units import ROOT, read, units, uses_widgets
from headless import RecordingClient, watched

pytestmark = pytest.mark.notebooks

WIDGET_UNITS = [unit for unit in units(ROOT) if uses_widgets(read(unit.source))]
SECONDS = 240   # a whole notebook then its widget cells 19 more times; normally 10-30 s
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def shows_a_widget(cell) -> bool:
    return any(WIDGET_VIEW in out.get("data", {}) for out in cell.get("outputs", ()))


@pytest.mark.soak(full=20, suite=2)
@pytest.mark.parametrize("widget_unit", WIDGET_UNITS, ids=str)
def test_widget_cells_run_headless_again_and_again_without_a_stall(widget_unit, repetitions,
                                                                  tmp_path, isolated_jupyter):
    unit = widget_unit
    folder = shutil.copytree(unit.source.parent, tmp_path / unit.name)
    nb = read(folder / unit.source.name)
    client = RecordingClient(nb, resources={"metadata": {"path": str(folder)}})
    shown: list[int] = []

    def run() -> None:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            shown.extend(i for i, cell in enumerate(nb.cells) if shows_a_widget(cell))
            for _ in range(repetitions - 1):
                for index in shown:
                    client.execute_cell(nb.cells[index], index)

    watched(client, run, SECONDS)
    assert shown, f"{unit} imports widgets but no cell showed one"
    assert not client.unexpected(), (
        f"{unit}: the headless executor sent {sorted(client.unexpected())} on the shell channel "
        "during a cell (an Output widget captured output?): that is how nbclient stalls")
    print(f"{unit}: widget cells {[nb.cells[i].id for i in shown]} ran {repetitions} times each")
