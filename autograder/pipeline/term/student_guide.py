"""The README of the student bundle: how to install, work through a unit, and hand in.

Its table of units is read from the release notebooks (title, autograded points,
points graded by hand, whether the unit ends with a stretch exercise), so it
cannot drift from what students open. The text promises only what the course
does: visible tests after every exercise, hidden tests that replace their
placeholder cells when the notebook is graded, read-only and graded cells that
grading restores, and a Validate button that reports every failing cell (the
bundle's ``nbgrader_config.py``, see ``bundle.py``).
"""
from __future__ import annotations

from pathlib import Path

from nbformat import NotebookNode

from autograder.notebooks.units import read

GUIDE = """# minitorch-course

In these notebooks you build a small deep-learning framework in numpy: the parts of
PyTorch's `torch.nn`, `torch.optim` and `torch.utils.data` that train a network, with
every gradient derived on paper and written by hand. Each unit adds a piece, tests it,
and trains something with it; in unit 11 your own classes read handwritten digits.

## Set up, once

With Python {python}, from this folder:

    python3 -m venv .venv
    . .venv/bin/activate            # Windows: .venv\\Scripts\\activate
    python -m pip install -r requirements.txt
    jupyter lab notebooks

Open `01_setup/01_setup.ipynb` and run its first cells: they check the environment
(versions, and that interactive widgets show) and say what to fix if something is
missing. Next time, activate the environment and run `jupyter lab notebooks` again.

## The units

Work through them in order: each builds on the ideas of the ones before. A unit never
depends on your code from earlier units, though: it gives their classes as read-only
reference code, so a mistake in unit 4 costs no points in unit 5.

| unit | notebook | points |
|---|---|---|
{units}

## How to work through a unit

- Read from the top and run the cells in order (Shift+Enter). A unit reads like a
  chapter: the idea, the maths in batch-first row-vector notation (`Y = X @ W + b`,
  `X` of shape `(N, in_features)`), a picture, then an exercise.
- Write code only where a cell says `# YOUR CODE HERE`, and delete the
  `raise NotImplementedError()` below it. Keep the names and signatures you are
  given: grading calls your functions and classes by those names.
- After each exercise a visible test runs your code and says what is wrong, if
  anything: which value or shape, and often the likely mistake. Fix your code, run
  your cell again, then the test. A test that passes prints so.
- A cell that reads "Hidden tests of ...: they run when your notebook is graded
  (N points)" is a placeholder. When your notebook is graded it holds checks that are
  more thorough than the visible tests (finite-difference gradients, edge cases,
  comparisons with a reference implementation), and those points go to each check
  separately. Passing the visible tests is the start, not a guarantee.
- The experiments and widgets after the exercises run on your classes: if a curve
  looks wrong, suspect your code first.
- Units ending with a *Stretch* section have an optional exercise that is not graded.

## Before you hand in

1. Save, then **Kernel > Restart Kernel and Run All Cells**. Everything you hand in
   must run from a fresh start, top to bottom.
2. Press **Validate** in the notebook's toolbar. In this environment it reports every
   cell that stops with an error or writes to stderr, graded or not, so an unfinished
   exercise shows up there; "Success" means the whole notebook ran cleanly.
3. Hand in the `.ipynb` file the way your instructor tells you.

When your notebook is graded, read-only cells and test cells are put back as they were
handed out: editing or deleting them changes nothing. Every hidden check has a time
limit of a few seconds; a Python loop over every element of an array can exceed it, so
let numpy do such work.

## When you are stuck

- Read the test's message to the end: it names what differs and how.
- Print shapes. Rows are samples: a batch of `N` inputs is `(N, features)`, and
  `(N, 1)` and `(N,)` broadcast to `(N, N)` when subtracted (unit 1 shows the trap).
- Check a gradient numerically with unit 2's `numerical_gradient` and `rel_error`.
- Widgets do not show: restart JupyterLab from the activated environment;
  `jupyter labextension list` should list `@jupyter-widgets/jupyterlab-manager`.
"""


def _title(nb: NotebookNode) -> str:
    first = nb.cells[0].source.splitlines()[0] if nb.cells else ""
    return first.lstrip("# ").strip()


def _points(nb: NotebookNode) -> str:
    auto = by_hand = 0
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("task"):
            by_hand += meta.get("points", 0)
        elif meta.get("grade"):
            auto += meta.get("points", 0)
    return f"{auto} + {by_hand} graded by hand" if by_hand else str(auto)


def _has_stretch(nb: NotebookNode) -> bool:
    return any("stretch" in cell.metadata.get("tags", []) for cell in nb.cells)


def unit_row(notebook: Path) -> str:
    """One row of the units table: ``| Unit 2: ... | `02_x/02_x.ipynb` | 10 |``."""
    nb = read(notebook)
    title = _title(nb) + (" (with a stretch exercise)" if _has_stretch(nb) else "")
    return f"| {title} | `{notebook.parent.name}/{notebook.name}` | {_points(nb)} |"


def guide(notebooks: list[Path], python: str) -> str:
    """The bundle's README for these release notebooks, in course order."""
    return GUIDE.format(python=python, units="\n".join(unit_row(path) for path in notebooks))
