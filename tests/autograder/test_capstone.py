"""Unit 11's visible graded cells, scored from the grader's own run of the student's training
(``autograder.checks.capstone``, ``autograder.remote.visible``), against a real kernel that
runs the notebook's ``grading-run`` cell."""
from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_output

from autograder.audit_remote import agent_kernel
from autograder.checks import capstone
from autograder.notebooks.units import units
from autograder.remote import hidden, visible
from course.datasets import load_mnist
from course.testing.failure import CheckFailure

UNIT = next(unit for unit in units() if unit.name == "11_capstone")
NOTEBOOK = nbformat.read(str(UNIT.source), as_version=4)
GRADING_RUN = next(c.source for c in NOTEBOOK.cells if c.get("id") == "grading-run")

# The nearest-template classifier as a "network"; train() counts its calls and sleeps, and
# the kernel's clock is frozen, so only a clock outside the kernel sees the time it takes.
STUDENT_CODE = '''
import contextlib, sys, time, warnings
from types import SimpleNamespace
import numpy as np
from course.datasets import load_mnist
from course.testing import expect

X_train, X_test, y_train, y_test = load_mnist()
time.perf_counter = lambda: 0.0
calls = []

def manual_seed(seed):
    np.random.seed(seed)

class Templates:
    def eval(self):
        return self

    def __call__(self, X):
        return X @ self.t.T - 0.5 * (self.t ** 2).sum(axis=1)

def build_model():
    return Templates()

def train(model, X, y):
    calls.append(len(X))
    time.sleep(0.4)
    model.t = np.stack([X[y == digit].mean(axis=0) for digit in range(10)])
    return {"train_acc": [0.8]}
'''


def nearest_template_accuracy() -> float:
    X_train, X_test, y_train, y_test = load_mnist()
    templates = np.stack([X_train[y_train == digit].mean(axis=0) for digit in range(10)])
    scores = X_test @ templates.T - 0.5 * (templates ** 2).sum(axis=1)
    return float(np.mean(scores.argmax(axis=1) == y_test))


@pytest.fixture(scope="module")
def kernel():
    with agent_kernel(STUDENT_CODE + GRADING_RUN) as started:
        yield started


@pytest.fixture(scope="module")
def run(kernel):
    return capstone.graded_run(kernel[1])


def printed(client, code: str) -> str:
    lines = []
    client.execute_interactive(code, timeout=30, output_hook=lambda msg: lines.append(
        msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None)
    return "".join(lines)


def test_the_grader_times_the_training_with_its_own_clock(run, monkeypatch):
    assert run.failure is None and 0.4 <= run.seconds < 5
    monkeypatch.setattr(capstone, "TIME_BUDGET", 0.2)
    with pytest.raises(CheckFailure, match=r"train\(\) took 0\.\d s in the grader's run, more "
                                           r"than the budget of 0\.2 s"):
        capstone.budget(run)


def test_the_accuracy_is_the_graders_on_its_own_test_images(run):
    assert run.accuracy == pytest.approx(nearest_template_accuracy())
    assert 0.6 < run.accuracy < capstone.BUDGET_ACCURACY
    with pytest.raises(CheckFailure, match=f"The test accuracy is {run.accuracy:.1%}; these 5"):
        capstone.budget(run)
    with pytest.raises(CheckFailure, match="these 10 points need at least 90%"):
        capstone.accuracy(run)
    capstone.budget(capstone.Run(seconds=1.0, accuracy=0.86))


def test_the_notebook_shows_the_graders_run_without_training_again(run, kernel):
    text = printed(kernel[0], "r = graded_run()\nprint(len(calls), r.test_accuracy, r.seconds)")
    calls, accuracy, seconds = text.split()
    assert int(calls) == 1 and float(accuracy) == run.accuracy and float(seconds) == run.seconds


@pytest.mark.parametrize("code, message", [
    ("def build_model():\n    raise NotImplementedError", r"build_model\(\) is not implemented"),
    ("Templates.__call__ = lambda self, X: X[:, :3]", r"array of shape \(1000, 3\), expected "
                                                      r"\(1000, 10\)"),
    ("def train(model, X, y):\n    return 1 / 0", r"train\(model, X_train, y_train\) raised "
                                                   "ZeroDivisionError"),
    ("del train", "Your notebook cannot be trained by the grader"),
])
def test_a_broken_run_fails_both_cells_and_says_why(code, message):
    with agent_kernel(STUDENT_CODE + code) as (_, channel):
        broken = capstone.graded_run(channel)
    for verdict in (capstone.budget, capstone.accuracy):
        with pytest.raises(CheckFailure, match=message):
            verdict(broken)


@pytest.mark.parametrize("returned, problem", [
    ("Log([0.5])", r"train\(\) returned Log; return its history"),
    ("{'train_loss': Log([0.5])}", None),          # the kernel's own list: read while it answers
    ("{'loss': [0.5]}", "under keys among"),
])
def test_the_history_is_judged_in_the_budget_cell(returned, problem, monkeypatch):
    code = (f"class Log(list):\n    pass\n_fit = train\n"
            f"def train(model, X, y):\n    _fit(model, X, y)\n    return {returned}")
    with agent_kernel(STUDENT_CODE + code) as (_, channel):
        run = capstone.graded_run(channel)
    assert run.failure is None and run.accuracy == pytest.approx(nearest_template_accuracy())
    monkeypatch.setattr(capstone, "BUDGET_ACCURACY", 0.5)
    if problem is None:
        capstone.budget(run)
    else:
        with pytest.raises(CheckFailure, match=problem):
            capstone.budget(run)


def test_a_cells_score_comes_from_the_verdict_not_the_kernel():
    """The kernel's text stays; its error, stderr and numeric result (which nbgrader would
    score) are dropped or shown as text; the verdict comes last."""
    kernel_outputs = [new_output("stream", name="stdout", text="train took 1.0 s\n"),
                      new_output("stream", name="stderr", text="a warning\n"),
                      new_output("execute_result", data={"text/plain": "5.0"}, execution_count=1),
                      new_output("error", ename="AssertionError", evalue="", traceback=[])]
    verdict = [hidden.failure_output("The test accuracy is 80.0%")]
    outputs = visible.scored(kernel_outputs, verdict)
    assert [(o.output_type, o.get("name")) for o in outputs] == [
        ("stream", "stdout"), ("stream", "stdout"), ("error", None)]
    assert outputs[-1].evalue == "The test accuracy is 80.0%"
    assert visible.scored(kernel_outputs, [])[-1].output_type == "stream"


def test_every_graded_cell_of_every_unit_is_scored_by_the_grader():
    """A grade cell is a hidden check, a visible cell the grader judges, or graded by hand."""
    for unit in units():
        for cell in nbformat.read(str(unit.source), as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and not meta.get("solution"):
                assert hidden.parse(cell.source) or meta["grade_id"] in visible.VERDICTS, \
                    (unit.name, meta["grade_id"])


def test_the_notebook_states_the_graders_budget_and_thresholds():
    assert float(re.search(r"TIME_BUDGET = ([\d.]+)", GRADING_RUN).group(1)) == capstone.TIME_BUDGET
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in NOTEBOOK.cells}
    assert f">= {capstone.BUDGET_ACCURACY:.2f}" in sources["grade-budget"]
    assert f">= {capstone.FULL_ACCURACY:.2f}" in sources["grade-accuracy"]
