"""Unit 14's visible graded cell, scored from the grader's own run of the student's ``train``
(``autograder.checks.language_training`` on ``autograder.checks.graded_training``), against a
real kernel that ran the source notebook up to its ``grading-run`` cell, with a classic
mistake typed into ``train`` where a test says so."""
from __future__ import annotations

import contextlib
import re

import nbformat
import numpy as np
import pytest

from autograder.audit_remote import agent_kernel
from autograder.cells import hidden, visible
from autograder.checks import language_training as lm
from autograder.checks.graded_training import Run
from autograder.notebooks.units import units
from autograder.pipeline.demo import carried
from autograder.pipeline.sandbox.kernel_cpu import KernelCPU
from course.testing.failure import CheckFailure

UNIT = next(unit for unit in units() if unit.name == "14_language")
NOTEBOOK = nbformat.read(str(UNIT.source), as_version=4)
CELLS = [cell for cell in NOTEBOOK.cells
         if cell.cell_type == "code" and hidden.parse(cell.source) is None]   # no hidden tests
UP_TO_RUN = CELLS[:next(i for i, cell in enumerate(CELLS) if cell.get("id") == "grading-run") + 1]
TRAIN_CELL = "train-language-model"
ON_VALIDATION = ("TensorDataset(X, y)", "TensorDataset(X_val, y_val)")
ONE_EPOCH = ("for epoch in range(10):", "for epoch in range(1):")
CARRIED = carried.edit()    # a submission that carries the public held-out names, trains on them


def notebook_code(*edits: tuple[str, str]) -> str:
    """The source's code cells up to the grading run, ``edits`` made in the train cell."""
    sources = []
    for cell in UP_TO_RUN:
        source = cell.source
        if cell.get("id") == TRAIN_CELL:
            for old, new in edits:
                assert source.count(old) == 1, old
                source = source.replace(old, new)
        sources.append(source)
    return "import matplotlib\nmatplotlib.use('agg')\n" + "\n\n".join(sources) + "\nimport os\n"


@contextlib.contextmanager
def student(*edits: tuple[str, str]):
    """The run of the grader on a kernel that ran the notebook with ``edits``; its client."""
    with agent_kernel(notebook_code(*edits)) as (client, channel):
        lines = []
        client.execute_interactive("print(os.getpid())", timeout=30, output_hook=lambda msg: lines.append(
            msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None)
        yield client, lm.graded_run(channel, KernelCPU(pid=int("".join(lines))))


@pytest.fixture(scope="module")
def reference():
    with student() as (client, run):
        yield client, run


def test_the_reference_trains_within_the_budget_and_below_the_threshold(reference):
    _, run = reference
    assert run.failure is None and run.history_problem is None
    assert 0.5 < run.seconds < lm.TIME_BUDGET / 2
    assert lm.NLL_IMPLAUSIBLE < 2.0 < run.score < lm.NLL_THRESHOLD - 0.05
    assert abs(run.figures["val_nll"] - run.score) < 0.1
    assert lm.language_model(run) is None           # passes, nothing to review


def test_the_nll_is_the_graders_own_from_the_models_logits(reference):
    """Recomputed here from the trained model's logits for the contexts of the grader's
    held-out names."""
    client, run = reference
    lines = []
    client.execute_interactive(
        "r = graded_run()\nprint(r.graded_nll, r.val_nll, r.graded_on)", timeout=30,
        output_hook=lambda msg: lines.append(msg["content"].get("text", ""))
        if msg["msg_type"] == "stream" else None)
    graded, validation, *graded_on = "".join(lines).split()
    assert float(graded) == run.score and float(validation) == run.figures["val_nll"]
    assert " ".join(graded_on) == "the grader's 509 held-out names"


def test_training_on_the_validation_split_is_caught_and_named():
    with student(ON_VALIDATION) as (_, run):
        pass
    assert run.failure is None and run.score > lm.NLL_THRESHOLD
    with pytest.raises(CheckFailure, match=r"Likely mistake: its NLL on the validation names is "
                                           r"\d\.\d+, far below the held-out names': it was trained "
                                           r"on the validation split"):
        lm.language_model(run)


def test_a_model_trained_too_little_misses_the_threshold_and_is_told_to_train_longer():
    with student(ONE_EPOCH) as (_, run):
        pass
    assert run.failure is None and run.score > lm.NLL_THRESHOLD
    with pytest.raises(CheckFailure, match="Train longer or with a larger learning rate"):
        lm.language_model(run)


def test_the_budget_is_the_kernels_cpu_time(reference, monkeypatch):
    _, run = reference
    monkeypatch.setattr(lm, "TIME_BUDGET", run.seconds / 2)
    with pytest.raises(CheckFailure, match=r"MLPLanguageModel\(27\), train\(\) and the predictions "
                                           r"used \d+\.\d s of CPU time in the grader's run"):
        lm.language_model(run)


@pytest.mark.parametrize("figures, message", [
    (Run(history_problem="train() returned list; return its history", seconds=1.0, score=2.0),
     "train\\(\\) returned list"),
    (Run(failure="train(model, X_train, y_train) raised ZeroDivisionError", score=2.0),
     "raised ZeroDivisionError"),
    (Run(seconds=1.0, score=float("nan"), figures={"val_nll": float("nan")}), "is nan"),
])
def test_a_broken_run_fails_the_cell_and_says_why(figures, message):
    with pytest.raises(CheckFailure, match=message):
        lm.language_model(figures)


def test_the_notebook_states_the_graders_budget_and_threshold():
    source = next(c.source for c in UP_TO_RUN if c.get("id") == "grading-run")
    assert float(re.search(r"TIME_BUDGET = ([\d.]+)", source).group(1)) == lm.TIME_BUDGET
    assert float(re.search(r"NLL_THRESHOLD = ([\d.]+)", source).group(1)) == lm.NLL_THRESHOLD
    grade = next(c.source for c in NOTEBOOK.cells if c.get("id") == "grade-language-model")
    assert f"run.graded_nll - run.val_nll > {lm.MEMORISED_GAP}" in grade
    assert visible.VERDICTS["grade-language-model"] == (lm.graded_run, lm.language_model)


def test_a_model_trained_on_the_held_out_names_passes_and_is_flagged_for_review():
    """The names are public (the ``names`` package): a train() that carries them scores, and
    the cell says so to whoever reviews it."""
    with student(CARRIED) as (_, run):
        pass
    review = lm.language_model(run)
    assert run.failure is None and run.score < run.figures["val_nll"] - lm.MEMORISED_GAP
    assert review.startswith(f"the NLL on the held-out names, {run.score:.3f}, is ")
    assert "carries the held-out names" in review


@pytest.mark.parametrize("score, validation, flagged", [
    (1.90, 2.0, "below 1.95"), (2.02, 2.20, "far below the validation names' 2.200"),
    (2.04, 2.07, None), (2.10, 2.10, None)])
def test_only_a_run_implausibly_good_on_the_held_out_names_is_flagged(score, validation, flagged):
    review = lm.language_model(Run(seconds=1.0, score=score, figures={"val_nll": validation}))
    assert review is None if flagged is None else flagged in review


def test_a_run_that_fails_the_threshold_is_never_excused_as_flagged():
    with pytest.raises(CheckFailure, match="these points need at most 2.15"):
        lm.language_model(Run(seconds=1.0, score=2.3, figures={"val_nll": 2.5}))


def test_the_held_out_contexts_come_in_a_new_order_every_run():
    first, again, other = lm.samples(1), lm.samples(1), lm.samples(2)
    assert np.array_equal(first["X_held_out"], again["X_held_out"])
    assert not np.array_equal(first["X_held_out"], other["X_held_out"])
    as_made = lm._splits()
    assert sorted(map(tuple, first["X_held_out"])) == sorted(map(tuple, as_made["X_held_out"]))
    # in the names' order, each context's next token would be the last of the next context
    follows = first["X_held_out"][1:, 2] == first["y_held_out"][:-1]
    assert follows.mean() < 0.2 < (as_made["X_held_out"][1:, 2] == as_made["y_held_out"][:-1]).mean()


def test_the_grader_samples_the_splits_as_the_notebook_does():
    """The reference's windows of the training names: 26,044 samples, 27 tokens."""
    samples = lm.TRAINING.inputs()
    assert samples["X"].shape == (26044, 3) and lm.vocab_size() == 27
    assert np.array_equal(samples["X"][:4], [[0, 0, 0], [0, 0, samples["y"][0]],
                                             [0, samples["y"][0], samples["y"][1]],
                                             [samples["y"][0], samples["y"][1], samples["y"][2]]])

