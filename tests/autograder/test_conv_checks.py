"""Unit 13's checks (conv2d_naive, im2col, col2im, Conv2d, MaxPool2d, AvgPool2d) on the
notebook's own solution and on hand-written mistakes: each cell judges its own part, so a
Conv2d built on a wrong im2col, or a consistently flipped layer, loses one cell; a trivial
part (zeros) earns nothing; the messages name the mistake."""
from __future__ import annotations

import pytest

from autograder import registry
from autograder.mutants.conv import MUTANTS
from students import (MODULES, assert_mutants_cover, assert_says, family, family_tests, grade,
                      grade_student, notebook, solution_source)

FAMILY = family("conv", "conv_functions", "conv_init", "conv_layout", "pooling")
CONV_CELLS = ("conv2d_forward", "conv2d_backward_input", "conv2d_backward_params",
              "conv2d_padding", "conv2d_stride")
# The cells a Conv2d cell's excuses rest on (their verdicts and what they kept), before it in
# the notebook.
UPSTREAM = ("im2col_rows", "col2im_adds_overlaps", "conv2d_init")
# The notebook's read-only input checks and its solution cells, on the students' Module.
SOLUTION = MODULES + "\nfrom numpy.lib.stride_tricks import sliding_window_view\n" + "\n\n".join(
    solution_source("13_conv", cell) for cell in (
        "conv-helpers", "conv2d-naive", "im2col", "col2im", "conv2d", "maxpool2d", "avgpool2d"))


def test_family_has_the_expected_checks():
    assert set(FAMILY) == {
        "conv2d_naive_values", "im2col_rows", "col2im_adds_overlaps", "conv2d_init", *CONV_CELLS,
        "maxpool2d_forward", "maxpool2d_backward", "avgpool2d"}
    assert registry.CHECKS["conv2d_forward"].targets == ("Conv2d", "im2col")
    assert registry.CHECKS["conv2d_stride"].targets == ("Conv2d", "im2col", "col2im")
    assert registry.CHECKS["conv2d_padding"].targets == ("Conv2d", "im2col", "col2im")


def test_mutants_cover_every_function_and_class():
    assert_mutants_cover(MUTANTS, ("Conv2d", "conv2d_naive", "im2col", "col2im", "MaxPool2d",
                                   "AvgPool2d"), at_least=36)


test_the_family_runs_fast, test_a_correct_student_passes = family_tests(FAMILY, SOLUTION,
                                                                       seconds=3.0)


def _failed(student: dict, cells=CONV_CELLS) -> dict[str, str]:
    """The cells of ``cells`` a student's notebook fails, with their messages, graded in the
    notebook's order after the cells they build on."""
    found = {name: grade_student(name, student) for name in UPSTREAM + cells}
    return {name: message for name, message in found.items()
            if message is not None and name in cells}


# --------------------------------------------------------------------------- own parts
def test_a_conv2d_on_a_wrong_im2col_loses_the_im2col_cell_only():
    """Columns in (p, q, c) order: the notebook's Conv2d, built on it, is right on what it
    gets, and its gradient is its own forward's."""
    student = notebook(SOLUTION + '''
def im2col(x, kernel_size, stride=1):
    n, c = x.shape[:2]
    windows = sliding_window_view(x, (kernel_size, kernel_size), axis=(2, 3))[:, :, ::stride, ::stride]
    oh, ow = windows.shape[2:4]
    return windows.transpose(0, 2, 3, 4, 5, 1).reshape(n * oh * ow, -1)
''')
    assert _failed(student) == {}
    assert_says(grade_student("im2col_rows", student), "(kernel row, kernel column, channel)")


def test_an_im2col_that_answers_the_forward_input_wrongly_is_not_excused():
    """The probe attack (issue 47, +3 before): a forward with its columns in (p, q, c) order on
    a private im2col, and an im2col right everywhere but on the array the forward just padded.
    The excuse computes with what im2col returned to its own cell, never asks it again."""
    student = notebook(SOLUTION + """
_seen = []

def _columns_last(x, kernel_size, stride=1):
    n, c = x.shape[:2]
    windows = sliding_window_view(x, (kernel_size, kernel_size), axis=(2, 3))[:, :, ::stride, ::stride]
    oh, ow = windows.shape[2:4]
    return windows.transpose(0, 2, 3, 4, 5, 1).reshape(n * oh * ow, -1)

_right = im2col

def im2col(x, kernel_size, stride=1):
    if any(x.shape == seen.shape and np.array_equal(x, seen) for seen in _seen):
        return _columns_last(x, kernel_size, stride)
    return _right(x, kernel_size, stride)

class Conv2d(Conv2d):
    def forward(self, x):
        p = self.padding
        _seen.append(np.pad(x, ((0, 0), (0, 0), (p, p), (p, p))))
        y = super().forward(x)
        cols = _columns_last(_seen[-1], self.kernel_size, self.stride)
        return (cols @ self.filters()).reshape(len(x), *y.shape[2:], -1).transpose(0, 3, 1, 2) \
            + (0 if self.bias is None else self.bias.data[:, None, None])
""")
    assert grade_student("im2col_rows", student) is None
    assert "conv2d_forward" in _failed(student)


def test_an_im2col_of_zeros_explains_nothing():
    """A Conv2d that returns only its bias, on an im2col that returns zeros, is wrong."""
    student = notebook(SOLUTION + '''
def im2col(x, kernel_size, stride=1):
    n, c, h, w = x.shape
    oh, ow = (h - kernel_size) // stride + 1, (w - kernel_size) // stride + 1
    return np.zeros((n * oh * ow, c * kernel_size * kernel_size))
''')
    assert_says(grade_student("conv2d_forward", student), "Conv2d.forward output is wrong")


def test_a_conv2d_on_an_overwriting_col2im_loses_the_col2im_cell_only():
    student = notebook(SOLUTION + '''
def col2im(cols, shape, kernel_size, stride=1):
    n, c = shape[:2]
    k = kernel_size
    out = np.zeros(shape)
    windows = sliding_window_view(out, (k, k), axis=(2, 3), writeable=True)[:, :, ::stride, ::stride]
    oh, ow = windows.shape[2:4]
    windows += cols.reshape(n, oh, ow, c, k, k).transpose(0, 3, 1, 2, 4, 5)
    return out
''')
    assert _failed(student) == {}
    assert_says(grade_student("col2im_adds_overlaps", student), "np.add.at")


FLIPPED = '''
def filters(self):
    return self.weight.data[:, :, ::-1, ::-1].transpose(0, 2, 3, 1).reshape(-1, self.out_channels)

def backward(self, grad_output):
    before = self.weight.grad.copy()
    dx = super().backward(grad_output)
    self.weight.grad[...] = before + (self.weight.grad - before)[:, :, ::-1, ::-1]
    return dx
'''


def test_a_consistently_flipped_layer_loses_the_forward_cell_only():
    """A true convolution, forward and backward: its gradients are its own forward's."""
    student = notebook(SOLUTION + "\n\nclass Conv2d(Conv2d):\n" + "\n".join(
        "    " + line for line in FLIPPED.strip("\n").splitlines()))
    failed = _failed(student)
    assert set(failed) == {"conv2d_forward"}
    assert_says(failed["conv2d_forward"], "the kernel is flipped")


def test_a_layer_of_zeros_earns_nothing():
    """Zeros forward and backward: no own part to stand on, so the reference decides."""
    student = notebook(SOLUTION + '''
class Conv2d(Conv2d):
    def forward(self, x):
        super().forward(x)
        return np.zeros((len(x), self.out_channels, *[(n + 2 * self.padding - self.kernel_size)
                         // self.stride + 1 for n in x.shape[2:]]))

    def backward(self, grad_output):
        return np.zeros(self.input_shape)
''')
    assert set(_failed(student)) == set(CONV_CELLS)


def test_a_stride_forgotten_in_backward_costs_the_stride_cell_and_is_named():
    student = notebook(SOLUTION + '''
class Conv2d(Conv2d):
    def backward(self, grad_output):
        k, p = self.kernel_size, self.padding
        g = grad_output.transpose(0, 2, 3, 1).reshape(-1, self.out_channels)
        self.weight.grad += (self.cols.T @ g).reshape(self.in_channels, k, k, -1).transpose(0, 3, 1, 2)
        if self.bias is not None:
            self.bias.grad += g.sum(axis=0)
        n, c, hp, wp = self.padded_shape
        oh, ow = grad_output.shape[2:]
        grads = (g @ self.filters().T).reshape(n, oh, ow, c, k, k)
        out = np.zeros(self.padded_shape, dtype=g.dtype)
        for i in range(oh):
            for j in range(ow):
                out[:, :, i:i + k, j:j + k] += grads[:, i, j]
        h, w = self.input_shape[2:]
        return out[:, :, p:p + h, p:p + w]
''')
    failed = _failed(student)
    assert set(failed) == {"conv2d_stride"}
    assert_says(failed["conv2d_stride"], "the stride is ignored in backward",
                "disagrees with finite differences of your own forward")


def test_a_weight_gradient_averaged_over_the_batch_is_named_with_the_backward_to_blame():
    student = notebook(SOLUTION + '''
class Conv2d(Conv2d):
    def backward(self, grad_output):
        dx = super().backward(grad_output)
        self.weight.grad /= len(grad_output)
        return dx
''')
    failed = _failed(student)
    assert set(failed) == {"conv2d_backward_params"}
    assert_says(failed["conv2d_backward_params"], "averaged over the batch a second time",
                "Conv2d.backward itself is wrong")


# --------------------------------------------------------------------------- messages
@pytest.mark.parametrize("name, source, phrases", [
    pytest.param("conv2d_naive_values", '''
def conv2d_naive(x, weight, bias=None, stride=1, padding=0):
    return conv2d_right(x, weight[:, :, ::-1, ::-1], bias, stride, padding)
''', ["the kernel is flipped"], id="naive_flipped"),
    pytest.param("maxpool2d_backward", '''
class MaxPool2d(MaxPool2d):
    def backward(self, grad_output):
        k, s = self.kernel_size, self.stride
        windows = sliding_window_view(self.x, (k, k), axis=(2, 3))[:, :, ::s, ::s]
        mask = windows == windows.max(axis=(-2, -1), keepdims=True)
        dx = np.zeros(self.input_shape)
        view = sliding_window_view(dx, (k, k), axis=(2, 3), writeable=True)[:, :, ::s, ::s]
        np.add.at(view, (slice(None),), mask * grad_output[..., None, None])
        return dx

    def forward(self, x):
        self.x = x
        return super().forward(x)
''', ["several maxima", "the first maximum, row by row"], id="maxpool_every_tie"),
])
def test_a_broken_student_is_told_what_is_wrong(name, source, phrases):
    student = notebook(SOLUTION + "\nconv2d_right = conv2d_naive\n" + source)
    assert_says(grade_student(name, student), *phrases)


def test_a_pool_that_ignores_its_stride_argument_is_told_so_with_the_arguments_used():
    """The issue's case: the notebook's output_size raises '(5 + 2*0 - 3) / 3 + 1 is not an
    integer'; the message now names the layer the check built and the ignored stride."""
    student = notebook(SOLUTION + '''
class MaxPool2d(MaxPool2d):
    def __init__(self, kernel_size, stride=None):
        super().__init__(kernel_size)
''')
    assert_says(grade_student("maxpool2d_forward", student), "MaxPool2d(3, stride=1)",
                "x of shape (1, 2, 5, 5)", "the stride argument is ignored")

