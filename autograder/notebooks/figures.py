"""The stretch plots of the source notebooks as PNG files in ``docs/img/``.

A code cell tagged ``stretch-figure`` draws a figure that the documentation shows
too. ``figures(root)`` executes every source notebook that has such a cell, top to
bottom in a fresh kernel started in the notebook's folder (as nbval and nbgrader
run it), and writes the last PNG each tagged cell displayed to
``docs/img/<cell id, '-' read as '_'>.png``: cell ``stretch-spiral-softmax`` gives
``docs/img/stretch_spiral_softmax.png``. The experiment lives only in the notebook.
"""
from __future__ import annotations

import base64
import os
from pathlib import Path

from nbclient import NotebookClient
from nbformat import NotebookNode

from autograder.notebooks.units import ROOT, Unit, read, units

FIGURE_TAG = "stretch-figure"
IMAGE_DIR = Path("docs") / "img"
# ipykernel's own default; an inherited MPLBACKEND=Agg would draw nothing into the outputs.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


class FigureError(RuntimeError):
    """A tagged cell displayed no PNG image."""


def is_figure(cell: NotebookNode) -> bool:
    return cell.cell_type == "code" and FIGURE_TAG in cell.metadata.get("tags", ())


def figure_path(root: Path, cell: NotebookNode) -> Path:
    """Where the figure of a tagged cell goes: ``docs/img/<id with '_' for '-'>.png``."""
    return Path(root) / IMAGE_DIR / f"{cell.id.replace('-', '_')}.png"


def execute(unit: Unit, timeout: int = 600) -> NotebookNode:
    """The unit's source notebook, executed in a fresh kernel in its own folder."""
    nb = read(unit.source)
    env = dict(os.environ, MPLBACKEND=INLINE_BACKEND)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(unit.source.parent)}})
    client.execute(env=env)
    return nb


def last_png(cell: NotebookNode) -> bytes | None:
    """The last PNG image among the cell's outputs, decoded, or None."""
    images = [out.data["image/png"] for out in cell.outputs
              if out.output_type in ("display_data", "execute_result") and "image/png" in out.get("data", {})]
    return base64.b64decode(images[-1]) if images else None


def figures(root: Path = ROOT, names: list[str] | None = None) -> list[Path]:
    """Execute the units (or ``names``) that have tagged cells; write and return their PNG files."""
    written = []
    for unit in units(root):
        if (names and unit.name not in names) or not any(map(is_figure, read(unit.source).cells)):
            continue
        for cell in filter(is_figure, execute(unit).cells):
            png = last_png(cell)
            if png is None:
                raise FigureError(f"{unit}: cell {cell.id} is tagged '{FIGURE_TAG}' but displayed no "
                                  "PNG image (did its experiment run?)")
            path = figure_path(root, cell)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png)
            written.append(path)
    return written
