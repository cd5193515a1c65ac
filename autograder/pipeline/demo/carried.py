"""The demo's student who carries the grader's held-out names into unit 14: full marks, and
its graded cell listed for an instructor's review.

The held-out names are public (the ``names`` package), so a ``train()`` can add their samples
to the training samples it is given. That scores; the grader marks the cell for review
(``autograder.checks.language_training.carried``) and the run's summary lists it, which
``make demo`` shows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import nbformat

from autograder.held_out import held_out_names
from autograder.pipeline.demo.mutations import Mutation

UNIT = "14_language"
STUDENT = "cheat-carries-held-out-names"
STORY = "trains on the grader's held-out names too, copied from the names package"


def edit() -> tuple[str, str]:
    """The change to the source's ``train``: the held-out names' samples added to X and y."""
    return ("TensorDataset(X, y)", "TensorDataset(*(np.concatenate(pair) for pair in zip((X, y), "
            f"context_windows({held_out_names()!r}, CharTokenizer(train_words), 3))))")


def builder(source: Path) -> Callable[[Path], None]:
    """Writes the submission: the unit's source notebook with ``edit`` in its train cell."""
    change = Mutation("carried_held_out_names", UNIT, "train-language-model", (edit(),))
    nb = change.apply(nbformat.read(str(source), as_version=4))
    return lambda folder: nbformat.write(nb, str(folder / source.name))
