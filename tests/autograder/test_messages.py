"""Messages that name the real cause (issue 34): each classic mistake, as a catalogued mutant
graded the way its notebook grades it, gets a message about what is wrong, not about a part
that is right."""
from __future__ import annotations

import linecache

import numpy as np
import pytest

from autograder import audit_cells
from autograder.mutants import catalogue
from autograder.remote.agent import PROVIDED
from autograder.sandbox import call
from course.testing.failure import CheckFailure

MUTANTS = {m.name: m for m in catalogue()}


def message(mutant: str, cell: str) -> str:
    return audit_cells.cells(MUTANTS[mutant])[cell]


def passes(mutant: str, cell: str) -> bool:
    return cell not in audit_cells.cells(MUTANTS[mutant])


def test_lost_optimizer_state_is_named_at_step_two():
    said = message("adam_state_lost", "adam_step")
    assert said.startswith("step 2 of Adam()") and "step 1 is right" in said
    assert "m and v are rebuilt from zeros" in said


@pytest.mark.parametrize("mutant, cell", [("step_lr_one_epoch_early", "step_lr_schedule"),
                                          ("cosine_starts_at_epoch_one",
                                           "cosine_annealing_lr_schedule"),
                                          ("exponential_lr_one_epoch_late",
                                           "exponential_lr_schedule")])
def test_a_shifted_lr_at_is_blamed_not_the_given_construction(mutant, cell):
    said = message(mutant, cell)
    assert "lr_at(base_lr, epoch) gives the rate of the epoch" in said
    assert "last_epoch = -1" not in said and "Construction performs" not in said


def test_a_centered_rmsprop_that_subtracts_the_mean_is_told_of_the_negative_variance():
    said = message("rmsprop_centered_mean_not_squared", "rmsprop_centered_momentum")
    assert "negative variance" in said and "g_avg**2" in said
    assert "numerically unstable formula" not in said


def test_parameters_in_the_wrong_order_within_a_module_are_named_as_such():
    said = message("sequential_named_parameters_sorted", "sequential_named_parameters")
    assert "within a module the parameters do not" in said and "depth first" not in said
    assert passes("sequential_named_parameters_sorted", "sequential_grads")
    assert passes("sequential_named_parameters_sorted", "sequential_parameters")


def test_a_state_dict_of_registration_time_buffers_is_named_in_state_dict():
    said = message("sequential_state_dict_stale_buffers", "sequential_state_dict_buffers")
    assert said.startswith("state_dict()['1.running_mean'] is wrong")
    assert "was registered with" in said and "after load_state_dict" not in said


def test_an_eval_forward_that_updates_the_running_estimates_first_is_named():
    said = message("batchnorm_eval_updates_running_stats", "batchnorm_eval")
    assert "updated with this batch before normalising" in said


def test_batchnorm_counts_every_training_batch_as_pytorch_does():
    said = message("batchnorm_counts_only_cumulative", "batchnorm_running_stats")
    assert "whatever the momentum" in said and "momentum=None" not in said


def test_a_bias_summed_over_the_wrong_axis_costs_the_parameters_cell_only():
    said = message("linear_bias_grad_wrong_axis", "linear_backward_params")
    assert "summed over the wrong axis" in said and "shape (N,)" in said
    assert set(audit_cells.cells(MUTANTS["linear_bias_grad_wrong_axis"])) == {
        "linear_backward_params"}


def test_a_one_hot_mistake_does_not_cost_the_stability_cell():
    cells = audit_cells.cells(MUTANTS["cross_entropy_one_hot_columns"])
    assert "cross_entropy_loss_stability" not in cells
    assert "sets whole columns" in cells["cross_entropy_loss_forward"]


# --------------------------------------------------------------------------- where it raised
def cell(source: str, number: int) -> dict:
    """Run ``source`` as notebook cell ``number`` (its lines in linecache, as IPython keeps
    them; the grader's agent reads them there)."""
    filename = f"/tmp/ipykernel_0/{number}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {"np": np, "__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


STUDENT_FUNCTIONS = '''
class Mul:
    def backward(self, grad):
        return grad * 2


class Sum:
    def backward(self, grad):
        return grad.reshape(4, 4)
'''


def test_an_error_names_the_class_and_method_it_arose_in():
    """Unit 12 has sixteen classes with a backward(): the message names which one."""
    space = cell(STUDENT_FUNCTIONS, 1)
    with pytest.raises(CheckFailure) as raised:
        call("backward()", space["Sum"]().backward, np.ones(3))
    assert "at line 9 of your Sum.backward(): return grad.reshape(4, 4)" in str(raised.value)


PROVIDED_LINEAR = f'''{PROVIDED}: the reference solution of unit 03_module_linear: Linear.
class Linear:
    def forward(self, x):
        if x.shape[1] != 3:
            raise ValueError("Linear expected input of shape (N, 3)")
        return x
'''

STUDENT_SEQUENTIAL = '''
class Sequential:
    def __init__(self, *layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x.T)
        return x
'''


def test_an_error_in_provided_code_names_the_students_line_that_called_it():
    """Unit 6's Linear is provided: its line is not the student's, the call in their
    Sequential.forward is."""
    Linear = cell(PROVIDED_LINEAR, 2)["Linear"]
    Sequential = cell(STUDENT_SEQUENTIAL, 3)["Sequential"]
    with pytest.raises(CheckFailure) as raised:
        call("Sequential.forward", Sequential(Linear()).forward, np.ones((2, 3)))
    said = str(raised.value)
    assert "in the provided Linear.forward(), called" in said
    assert "at line 8 of your Sequential.forward(): x = layer.forward(x.T)" in said
    assert "line 5" not in said


def test_provided_cells_start_as_the_agent_recognises_them():
    from autograder.notebooks.units import Unit, read
    from autograder.notebooks.units import minitorch
    provided = [c.source for c in read(Unit("06_sequential").source).cells
                if "provided_from" in minitorch(c)]
    assert provided and all(source.startswith(PROVIDED) for source in provided)
