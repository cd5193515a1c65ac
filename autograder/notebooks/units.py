"""The course's units: where their notebooks are, and how they are read, cleaned and written.

A unit is an nbgrader assignment ``source/NN_topic/NN_topic.ipynb``; its student
version is ``release/NN_topic/NN_topic.ipynb``. Notebooks are written in one
canonical form (nbformat's sorted, one-space-indented JSON, no outputs, only
the metadata listed below), so that a regenerated file is byte-identical to
the committed one unless its content changed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

ROOT = Path(__file__).resolve().parents[2]
UNIT_NAME = re.compile(r"^(?P<number>\d{2})_[a-z0-9_]+$")

# Everything else (execution times, widget state, scroll positions, the kernel's
# Python version...) depends on whoever last saved the notebook.
NOTEBOOK_METADATA = ("kernelspec", "language_info")
LANGUAGE_INFO = ("name",)
CELL_METADATA = ("nbgrader", "minitorch", "tags", "deletable", "editable")


@dataclass(frozen=True)
class Unit:
    """One numbered unit of the course, e.g. ``Unit("02_gradients", root)``."""

    name: str
    root: Path = ROOT

    @property
    def number(self) -> int:
        return int(self.name[:2])

    @property
    def source(self) -> Path:
        return self.root / "source" / self.name / f"{self.name}.ipynb"

    @property
    def release(self) -> Path:
        return self.root / "release" / self.name / f"{self.name}.ipynb"

    def __str__(self) -> str:
        return self.name


def units(root: Path = ROOT) -> list[Unit]:
    """Every unit under ``root/source``, in course order."""
    source = Path(root) / "source"
    found = [
        Unit(path.name, Path(root))
        for path in sorted(source.iterdir())
        if path.is_dir() and UNIT_NAME.match(path.name) and (path / f"{path.name}.ipynb").exists()
    ]
    return found


def read(path: Path) -> NotebookNode:
    return nbformat.read(str(path), as_version=4)


def dumps(nb: NotebookNode) -> str:
    """The canonical text of a notebook."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def write(nb: NotebookNode, path: Path) -> bool:
    """Write ``nb`` to ``path`` in canonical form; return whether the file changed."""
    text = dumps(nb)
    path = Path(path)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def normalise(nb: NotebookNode) -> NotebookNode:
    """Drop outputs, execution counts and volatile metadata, in place; return ``nb``."""
    nb.metadata = nbformat.from_dict({k: nb.metadata[k] for k in NOTEBOOK_METADATA if k in nb.metadata})
    if "language_info" in nb.metadata:
        info = nb.metadata.language_info
        nb.metadata.language_info = nbformat.from_dict({k: info[k] for k in LANGUAGE_INFO if k in info})
    for cell in nb.cells:
        cell.metadata = nbformat.from_dict(
            {k: cell.metadata[k] for k in CELL_METADATA if k in cell.metadata}
        )
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        if "attachments" in cell and not cell.attachments:
            del cell["attachments"]
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


# ------------------------------------------------------------------------ cell metadata
def nbgrader(cell: NotebookNode) -> dict:
    return cell.metadata.get("nbgrader", {})


def is_solution(cell: NotebookNode) -> bool:
    return bool(nbgrader(cell).get("solution"))


def is_grade(cell: NotebookNode) -> bool:
    return bool(nbgrader(cell).get("grade"))


def is_locked(cell: NotebookNode) -> bool:
    return bool(nbgrader(cell).get("locked"))


def minitorch(cell: NotebookNode) -> dict:
    """The course's own cell metadata: ``provides`` or ``provided_from``."""
    return cell.metadata.get("minitorch", {})


WIDGETS = re.compile(r"^\s*(from|import)\s+(ipywidgets|course\.widgets)\b", re.MULTILINE)


def uses_widgets(nb: NotebookNode) -> bool:
    """Whether a code cell of ``nb`` imports ipywidgets or the course's widgets."""
    return any(cell.cell_type == "code" and WIDGETS.search(cell.source) for cell in nb.cells)


def points(nb: NotebookNode) -> float:
    """The notebook's total points (the sum over its grade cells)."""
    return float(sum(nbgrader(c).get("points", 0) for c in nb.cells if is_grade(c)))
