"""The checks of the functions students write outside a class: unit 1's array functions,
unit 3's initialisers, unit 9's training loop and unit 11's confusion_matrix
(test_mutation_audit runs them on the source notebooks' solutions and every mutant)."""
from __future__ import annotations

import time

import pytest

from autograder import audit, registry
from autograder.integrity import trusting
from autograder.mutants import basics, init, metrics, training
from autograder.mutants._solutions import solution
from autograder.notebooks.sync import providers
from autograder.notebooks.units import Unit
from students import assert_mutants_cover, assert_says, failure, family, grade, notebook

CHECKS = family("basics", "init", "training", "training_fit", "metrics")


def unit3_namespace() -> dict:
    """What unit 3's notebook defines: its own Parameter, default_rng, calculate_gain and
    the initialisers, from the source notebook's providing cells."""
    code = "\n\n".join(p.code for p in providers([Unit("03_module_linear")])["03_module_linear"])
    return notebook("import numpy as np\n\n" + code)


def test_the_new_checks_are_registered_and_fast():
    assert len(CHECKS) == 12
    start = time.perf_counter()
    assert {name: audit.run(registry.CHECKS[name]) for name in CHECKS} == dict.fromkeys(CHECKS)
    assert time.perf_counter() - start < 15  # all twelve, on a shared machine


@pytest.mark.parametrize("name", ["xavier_normal_init", "kaiming_normal_init"])
def test_unit3s_own_initialisers_pass_with_its_parameter(name):
    namespace = unit3_namespace()
    function = namespace[name.replace("_init", "_")]
    assert grade(name, function, namespace["Parameter"]) is None


def test_the_initialisers_are_graded_statistically_not_against_one_draw():
    namespace = notebook('''
import numpy as np

def xavier_normal_(tensor, gain=1.0, rng=None):
    data = tensor if isinstance(tensor, np.ndarray) else tensor.data
    std = gain * np.sqrt(2.0 / sum(data.shape))
    data[...] = rng.standard_normal(data.shape[::-1]).T * std   # other draws, same law
    return tensor
''')
    assert grade("xavier_normal_init", namespace["xavier_normal_"]) is None


@pytest.mark.parametrize("mutants, targets", [
    (basics.MUTANTS, ["affine", "standardize", "pairwise_sq_distances"]),
    (init.MUTANTS, ["xavier_normal_", "kaiming_normal_"]),
    (training.MUTANTS, ["train_epoch", "evaluate", "fit"]),
    (metrics.MUTANTS, ["confusion_matrix"]),
])
def test_every_function_has_several_mutants(mutants, targets):
    assert_mutants_cover(mutants, targets, at_least=2 * len(targets))
    for target in targets:
        assert sum(m.target == target for m in mutants) >= 2


BROKEN = {
    "returns_none": ("def f(*args, **kwargs):\n    pass", ("None", "return")),
    "raises": ("def f(*args, **kwargs):\n    return 1 / 0", ("ZeroDivisionError", "line 2")),
    "stub": ("def f(*args, **kwargs):\n    raise NotImplementedError()", ("not implemented yet",)),
    "returns_text": ("def f(*args, **kwargs):\n    return 'done'", ()),
}


@pytest.mark.parametrize("name", CHECKS)
@pytest.mark.parametrize("kind", BROKEN)
def test_broken_functions_fail_with_a_message(name, kind):
    source, phrases = BROKEN[kind]
    message = failure(name, notebook(source)["f"])
    if name != "affine_shape_errors" and kind != "returns_text":
        assert_says(message, *phrases)


@pytest.mark.parametrize("name", ["affine_values", "standardize_columns",
                                  "pairwise_sq_distances_values"])
def test_nan_results_are_explained(name):
    nan = notebook("import numpy as np\ndef f(X, *args, **kwargs):\n"
                   "    columns = np.shape(args[0])[-1] if args else X.shape[1]\n"
                   "    return np.full((len(X), columns), np.nan)")
    assert_says(failure(name, nan["f"]), "inf or NaN")


@pytest.mark.parametrize("name", ["train_epoch_steps", "fit_history", "evaluate_mode"])
def test_an_endless_loop_is_stopped(name, timed_out):
    endless = notebook("def f(*args, **kwargs):\n    while True:\n        pass")["f"]
    assert_says(grade(name, endless), timed_out)


def test_a_loop_that_calls_forward_and_model_zero_grad_passes():
    train_epoch = notebook('''

def train_epoch(model, loader, criterion, optimizer):
    model.train()
    total, correct, count = 0.0, 0, 0
    for xb, yb in loader:
        model.zero_grad()
        logits = model.forward(xb)
        loss = criterion.forward(logits, yb)
        model.backward(criterion.backward())
        optimizer.step()
        total, count = total + loss * len(yb), count + len(yb)
        correct += int((logits.argmax(axis=1) == yb).sum())
    return total / count, correct / count
''')["train_epoch"]
    assert grade("train_epoch_steps", train_epoch) is None
    assert grade("train_epoch_metrics", train_epoch) is None


def test_the_capstone_confusion_matrix_solution_is_the_notebooks():
    assert grade("confusion_matrix_counts", solution("confusion_matrix")) is None


def test_pytorchs_loop_that_zeroes_after_each_step_passes():
    """optimizer.step(); optimizer.zero_grad() at the end of each batch (issue 34): the same
    weights from the zero gradients an epoch starts with, so no point is lost."""
    train_epoch = notebook('''
def train_epoch(model, loader, criterion, optimizer):
    model.train()
    total, correct, count = 0.0, 0, 0
    for xb, yb in loader:
        logits = model(xb)
        loss = criterion(logits, yb)
        model.backward(criterion.backward())
        optimizer.step()
        optimizer.zero_grad()
        total, count = total + loss * len(yb), count + len(yb)
        correct += int((logits.argmax(axis=1) == yb).sum())
    return total / count, correct / count
''')["train_epoch"]
    assert grade("train_epoch_steps", train_epoch) is None
    assert grade("train_epoch_metrics", train_epoch) is None


def test_a_loop_that_forges_the_spies_log_still_fails():
    """A loop with no model.train() that rewrites the spies' log (every call in training mode)
    still fails: the weights after the epoch are what count, the log only names the mistake."""
    untrained = next(m.cls for m in training.MUTANTS if m.name == "train_epoch_no_train_mode")

    def train_epoch(model, loader, criterion, optimizer):
        result = untrained(model, loader, criterion, optimizer)
        log = criterion._spied[3].log
        log[:] = [entry[:4] + (True,) for entry in log]
        return result
    with trusting([train_epoch]):
        message = grade("train_epoch_steps", train_epoch)
    assert message is not None and "parameter 0 after train_epoch is wrong" in message
