"""``python -m autograder.notebooks figures``: the plots of cells tagged ``stretch-figure``
become ``docs/img/<cell id>.png``, from an executed made-up unit; the course's are committed."""
from __future__ import annotations

from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.notebooks.figures import FIGURE_TAG, FigureError, figure_path, figures, is_figure
from autograder.notebooks.units import ROOT, Unit, read, units, write

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PLOT = "import matplotlib.pyplot as plt\nplt.plot([0, 1], [{}, 2])\nplt.show()"


def tagged(cell_id: str, source: str):
    return new_code_cell(source, id=cell_id, metadata={"tags": [FIGURE_TAG]})


def make_unit(root: Path, name: str, *cells) -> Unit:
    unit = Unit(name, root)
    write(new_notebook(cells=list(cells), metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}), unit.source)
    return unit


@pytest.mark.notebooks
def test_saves_the_plot_of_each_tagged_cell_only(tmp_path, isolated_jupyter):
    make_unit(tmp_path, "01_first", new_code_cell(PLOT.format(0), id="untagged-plot"),
              tagged("stretch-first", "x = 1\n" + PLOT.format(1)))
    make_unit(tmp_path, "02_plain", new_code_cell(PLOT.format(3), id="plain-plot"))

    written = figures(tmp_path)

    assert written == [tmp_path / "docs" / "img" / "stretch_first.png"]
    assert written[0].read_bytes().startswith(PNG_SIGNATURE)
    assert sorted(p.name for p in (tmp_path / "docs" / "img").iterdir()) == ["stretch_first.png"]


@pytest.mark.notebooks
def test_a_tagged_cell_without_a_plot_is_an_error(tmp_path, isolated_jupyter):
    make_unit(tmp_path, "01_first", tagged("stretch-silent", "print('run the stretch cell first')"))
    with pytest.raises(FigureError, match="stretch-silent.*no PNG"):
        figures(tmp_path)


def test_every_figure_of_the_course_is_committed():
    """Run ``python -m autograder.notebooks figures`` after changing a stretch experiment."""
    cells = [cell for unit in units(ROOT) for cell in read(unit.source).cells if is_figure(cell)]
    assert cells, "the course has stretch figures"
    missing = [str(figure_path(ROOT, cell).relative_to(ROOT)) for cell in cells
               if not figure_path(ROOT, cell).exists()]
    assert missing == [], "run: python -m autograder.notebooks figures"
