"""minitorch_ref.autograd: every op against finite differences, broadcasting, PyTorch's
accumulation rules, deep graphs, error messages, the MLP rebuilt on it, and the graph picture.

(Exact agreement with PyTorch itself is in parity/test_parity_autograd.py.)
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402

import minitorch_ref as mt  # noqa: E402
from course.datasets import spiral  # noqa: E402
from minitorch_ref import nn, optim  # noqa: E402
from minitorch_ref.autograd import Function, Tensor, draw_graph, is_grad_enabled, no_grad  # noqa: E402
from minitorch_ref.autograd import nn as ann  # noqa: E402
from minitorch_ref.gradcheck import FD_NORM_FLOOR, numerical_gradient, rel_error  # noqa: E402

from helpers import GRAD_TOL, randn  # noqa: E402

FEW = settings(max_examples=25, deadline=None)


def positive(*shape: int, seed: int = 0) -> np.ndarray:
    """Entries in [0.5, 2): safe for log, division and fractional powers."""
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


def gradient_errors(fn, *arrays: np.ndarray, seed: int = 0) -> list[float]:
    """Relative error of each input's autograd gradient against central differences.

    The scalar checked is ``sum(fn(*inputs) * G)`` for a fixed random ``G``, so the
    backward pass starts from ``out.backward(G)``.
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    inputs = [Tensor(a, requires_grad=True) for a in arrays]
    out = fn(*inputs)
    upstream = np.random.default_rng(seed + 1).standard_normal(out.shape)
    out.backward(upstream)

    def loss() -> float:  # Tensor(a) shares a's memory, so it sees each perturbation
        return float(np.sum(fn(*(Tensor(a) for a in arrays)).data * upstream))

    for t in inputs:
        assert t.grad is not None and t.grad.shape == t.shape, f"grad shape for input {t.shape}"
    return [rel_error(numerical_gradient(loss, a), t.grad, FD_NORM_FLOOR)
            for a, t in zip(arrays, inputs)]


def assert_gradients_match(fn, *arrays, seed=0):
    errors = gradient_errors(fn, *arrays, seed=seed)
    assert max(errors) < GRAD_TOL, f"relative errors per input: {errors}"


# ====================================================================== every op vs finite differences
OP_CASES = [
    # (id, function of Tensors, inputs)
    ("add", lambda a, b: a + b, [randn(3, 4), randn(3, 4, seed=1)]),
    ("add_(3,1)+(1,4)", lambda a, b: a + b, [randn(3, 1), randn(1, 4, seed=1)]),
    ("add_(2,3)+(3,)", lambda a, b: a + b, [randn(2, 3), randn(3, seed=1)]),
    ("add_(2,3)+()", lambda a, b: a + b, [randn(2, 3), randn(seed=1)]),
    ("sub_(3,1)-(1,4)", lambda a, b: a - b, [randn(3, 1), randn(1, 4, seed=1)]),
    ("sub_(4,)-(2,3,4)", lambda a, b: a - b, [randn(4), randn(2, 3, 4, seed=1)]),
    ("neg", lambda a: -a, [randn(2, 3)]),
    ("mul_(2,3)*(3,)", lambda a, b: a * b, [randn(2, 3), randn(3, seed=1)]),
    ("mul_(2,1,4)*(3,1)", lambda a, b: a * b, [randn(2, 1, 4), randn(3, 1, seed=1)]),
    ("mul_(2,1,1)*(3,4)", lambda a, b: a * b, [randn(2, 1, 1), randn(3, 4, seed=1)]),
    ("div_(2,3)/(2,1)", lambda a, b: a / b, [randn(2, 3), positive(2, 1)]),
    ("div_(3,)/(2,3)", lambda a, b: a / b, [randn(3), positive(2, 3)]),
    ("scalars_both_sides", lambda a: 2 * a - 1 / (a + 3.0) + a / 4 - (1 - a), [positive(2, 3)]),
    ("numpy_operands", lambda a: np.ones(3) * a + np.float64(2.0) - a * np.arange(3.0)
     + np.array([1, 2, 3]) / a, [positive(2, 3)]),
    ("pow_2", lambda a: a**2, [randn(2, 3)]),
    ("pow_3", lambda a: a**3, [randn(2, 3)]),
    ("pow_0.5", lambda a: a**0.5, [positive(2, 3)]),
    ("pow_-1.5", lambda a: a**-1.5, [positive(2, 3)]),
    ("pow_tensor_exponent_(2,3)**(3,)", lambda a, b: a**b, [positive(2, 3), randn(3, seed=1)]),
    ("rpow_2**t", lambda a: 2**a, [randn(2, 3)]),
    ("matmul", lambda a, b: a @ b, [randn(3, 4), randn(4, 2, seed=1)]),
    ("matmul_(4,)@(4,2)", lambda a, b: a @ b, [randn(4), randn(4, 2, seed=1)]),
    ("matmul_(3,4)@(4,)", lambda a, b: a @ b, [randn(3, 4), randn(4, seed=1)]),
    ("matmul_(4,)@(4,)", lambda a, b: a @ b, [randn(4), randn(4, seed=1)]),
    ("matmul_(2,3,4)@(4,5)", lambda a, b: a @ b, [randn(2, 3, 4), randn(4, 5, seed=1)]),
    ("matmul_(1,3,4)@(2,4,5)", lambda a, b: a @ b, [randn(1, 3, 4), randn(2, 4, 5, seed=1)]),
    ("rmatmul_array@t", lambda a: np.arange(6.0).reshape(2, 3) @ a, [randn(3, 2)]),
    ("exp", lambda a: a.exp(), [randn(2, 3)]),
    ("log", lambda a: a.log(), [positive(2, 3)]),
    ("relu", lambda a: a.relu(), [randn(3, 4)]),
    ("tanh", lambda a: a.tanh(), [randn(3, 4)]),
    ("sigmoid", lambda a: a.sigmoid(), [randn(3, 4, scale=3.0)]),
    ("sum", lambda a: a.sum(), [randn(2, 3)]),
    ("sum_axis0", lambda a: a.sum(axis=0), [randn(2, 3)]),
    ("sum_axis-1_keepdims", lambda a: a.sum(axis=-1, keepdims=True), [randn(2, 3)]),
    ("sum_axes(0,2)", lambda a: a.sum(axis=(0, 2)), [randn(2, 3, 4)]),
    ("mean", lambda a: a.mean(), [randn(2, 3)]),
    ("mean_axis1", lambda a: a.mean(axis=1), [randn(2, 3, 4)]),
    ("mean_axes(0,2)_keepdims", lambda a: a.mean(axis=(0, 2), keepdims=True), [randn(2, 3, 4)]),
    ("reshape", lambda a: a.reshape(3, 2) * np.arange(6.0).reshape(3, 2), [randn(2, 3)]),
    ("reshape_-1", lambda a: a.reshape((-1,)), [randn(2, 3)]),
    ("T", lambda a: a.T, [randn(2, 3)]),
    ("transpose_(1,2,0)", lambda a: a.transpose((1, 2, 0)), [randn(2, 3, 4)]),
    ("transpose_negative_axes", lambda a: a.transpose((0, -1, -2)) * np.arange(24.0).reshape(2, 4, 3),
     [randn(2, 3, 4)]),
    ("getitem_slice", lambda a: a[1:, ::2], [randn(3, 4)]),
    ("getitem_repeated_rows", lambda a: a[[0, 2, 0, 0]], [randn(3, 4)]),
    ("getitem_pairs", lambda a: a[np.arange(3), [1, 0, 1]], [randn(3, 2)]),
    ("softmax_keepdims", lambda a: a.exp() / a.exp().sum(axis=1, keepdims=True), [randn(3, 4)]),
    ("standardise_keepdims", lambda a: (a - a.mean(axis=0, keepdims=True))
     / ((a - a.mean(axis=0, keepdims=True)) ** 2 + 1e-3).mean(axis=0, keepdims=True) ** 0.5,
     [randn(5, 3)]),
]


@pytest.mark.parametrize("fn, arrays", [c[1:] for c in OP_CASES], ids=[c[0] for c in OP_CASES])
def test_op_gradient_matches_finite_differences(fn, arrays):
    assert_gradients_match(fn, *arrays)


# ====================================================================== broadcasting
def test_broadcast_gradients_are_summed_to_each_operand_shape():
    a = Tensor(np.zeros((3, 1)), requires_grad=True)
    b = Tensor(np.zeros((1, 4)), requires_grad=True)
    (a + b).sum().backward()
    np.testing.assert_array_equal(a.grad, np.full((3, 1), 4.0))  # each a_i is used 4 times
    np.testing.assert_array_equal(b.grad, np.full((1, 4), 3.0))


def test_row_vector_and_scalar_tensor_receive_sums():
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    bias = Tensor(np.zeros(3), requires_grad=True)
    scale = Tensor(2.0, requires_grad=True)
    (x * scale + bias).sum().backward()
    np.testing.assert_array_equal(bias.grad, [2.0, 2.0, 2.0])
    assert scale.grad.shape == () and scale.grad == x.data.sum()
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 2.0))


@FEW
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       op=st.sampled_from(["add", "sub", "mul", "div", "pow"]), seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_any_shapes(shapes, op, seed):
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "pow": lambda a, b: a**b}[op]
    a_shape, b_shape = shapes.input_shapes
    first = positive(*a_shape, seed=seed) if op == "pow" else randn(*a_shape, seed=seed)
    second = positive(*b_shape, seed=seed + 1) if op == "div" else randn(*b_shape, seed=seed + 1)
    assert_gradients_match(fn, first, second, seed=seed)


@FEW
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), data=st.data(),
       keepdims=st.booleans(), mean=st.booleans(), seed=st.integers(0, 2**16))
def test_reductions_over_any_axes(shape, data, keepdims, mean, seed):
    axes = data.draw(st.none() | st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
    axis = None if axes is None else tuple(axes)
    reduce = (lambda a: a.mean(axis, keepdims)) if mean else (lambda a: a.sum(axis, keepdims))
    expected = np.mean if mean else np.sum
    x = randn(*shape, seed=seed)
    assert reduce(Tensor(x)).shape == expected(x, axis=axis, keepdims=keepdims).shape
    assert_gradients_match(reduce, x, seed=seed)


@FEW
@given(n=st.integers(1, 4), k=st.integers(1, 4), m=st.integers(1, 4),
       batch=st.sampled_from([(), (2,), (2, 1)]), seed=st.integers(0, 2**16))
def test_matmul_any_sizes(n, k, m, batch, seed):
    assert_gradients_match(lambda a, b: (a @ b).tanh(), randn(*batch, n, k, seed=seed),
                           randn(k, m, seed=seed + 1), seed=seed)


# ====================================================================== accumulation, as in PyTorch
def test_backward_twice_accumulates_like_pytorch_not_micrograd():
    """micrograd keeps b.grad from the first call and sends it again: a.grad would be 18."""
    a = Tensor(2.0, requires_grad=True)
    c = (a * 2) * 3
    c.backward()
    assert a.grad == 6.0
    c.backward()
    assert a.grad == 12.0


def test_backward_twice_through_a_reused_intermediate():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * 3
    y = (h * h + h).sum()  # dy/dx = 3 (2h + 1) = [21, 39]
    y.backward()
    np.testing.assert_array_equal(x.grad, [21.0, 39.0])
    y.backward()
    np.testing.assert_array_equal(x.grad, [42.0, 78.0])


def test_intermediate_gradients_are_not_kept_unless_retained():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    h, kept = x * 3, x * 3
    kept.retain_grad()
    y = (h * h + kept).sum()
    y.backward()
    assert h.grad is None and y.grad is None and not h.is_leaf and x.is_leaf
    np.testing.assert_array_equal(kept.grad, [1.0, 1.0])
    y.backward()
    np.testing.assert_array_equal(kept.grad, [2.0, 2.0])


def test_backward_from_an_intermediate_with_explicit_grad_sends_only_that_grad():
    x = Tensor(np.array([1.0, -1.0]), requires_grad=True)
    h = x * 2
    (h * 5).sum().backward()
    h.backward(np.array([1.0, 10.0]))
    np.testing.assert_array_equal(x.grad, [10 + 2, 10 + 20])


def test_a_tensor_used_several_times_gets_the_sum_of_its_uses():
    x = Tensor(3.0, requires_grad=True)
    (x * x + x * x * x + x).backward()  # 2x + 3x^2 + 1
    assert x.grad == 2 * 3 + 3 * 9 + 1


def test_setting_grad_to_none_starts_afresh():
    x = Tensor(np.ones(2), requires_grad=True)
    (x * 4).sum().backward()
    x.grad = None
    (x * 5).sum().backward()
    np.testing.assert_array_equal(x.grad, [5.0, 5.0])


def test_leaf_gradients_are_independent_arrays():
    """Add hands the same array to both inputs; the leaves must not share it."""
    a, b = Tensor(np.zeros(2), requires_grad=True), Tensor(np.zeros(2), requires_grad=True)
    (a + b).sum().backward()
    a.grad += 100
    np.testing.assert_array_equal(b.grad, [1.0, 1.0])


@FEW
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16))
def test_second_backward_doubles_every_leaf_gradient(shapes, seed):
    a = Tensor(randn(*shapes.input_shapes[0], seed=seed), requires_grad=True)
    b = Tensor(randn(*shapes.input_shapes[1], seed=seed + 1), requires_grad=True)
    h = (a * b).tanh()
    loss = (h * h + h * a - b.sigmoid()).sum()
    loss.backward()
    once = a.grad.copy(), b.grad.copy()
    loss.backward()
    np.testing.assert_allclose(a.grad, 2 * once[0], rtol=1e-14)
    np.testing.assert_allclose(b.grad, 2 * once[1], rtol=1e-14)


# ====================================================================== graph building
def test_deep_chain_of_10000_ops_has_no_recursion_error():
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = (y * 1.0001) + 0.0
    y.backward()
    assert x.grad == pytest.approx(1.0001**5000, rel=1e-12)


def test_wide_reuse_visits_each_node_once():
    x = Tensor(1.5, requires_grad=True)
    total = x
    for _ in range(2000):
        total = total + x
    total.backward()
    assert x.grad == 2001.0


def test_constants_and_no_grad_inputs_record_nothing():
    x = Tensor(np.ones(3))
    y = x * 2 + 1
    assert not y.requires_grad and y.grad_fn is None and y.parents == ()


def test_no_grad_stops_recording_and_restores_on_exit():
    w = Tensor(np.ones(3), requires_grad=True)
    with no_grad():
        assert not is_grad_enabled()
        y = w * 2
    assert is_grad_enabled() and not y.requires_grad and y.grad_fn is None
    with pytest.raises(ZeroDivisionError), no_grad():
        1 / 0
    assert is_grad_enabled()

    @no_grad()
    def evaluate(t):
        return t.exp()

    assert not evaluate(w).requires_grad


def test_detach_cuts_the_gradient_and_shares_data():
    x = Tensor(np.array([2.0]), requires_grad=True)
    frozen = x.detach()
    assert frozen.data is x.data and not frozen.requires_grad
    (x * frozen).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0])  # not 2x: the detached factor is a constant


# ====================================================================== the Tensor itself
def test_dtypes_follow_pytorch():
    assert Tensor([1, 2]).dtype == np.float64 and Tensor(3).dtype == np.float64
    x = Tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    results = [2 * x, x / 3.0, np.float64(2.0) * x, x + np.array([1, 2, 3]), x**2, x.mean(), x.T]
    assert all(r.dtype == np.float32 for r in results)
    assert (x + np.ones(3)).dtype == np.float64  # a float64 array promotes, as in numpy and torch
    (x * 3).sum().backward()
    assert x.grad.dtype == np.float32


def test_floating_arrays_are_shared_not_copied():
    data = np.zeros(3)
    assert Tensor(data).data is data


def test_properties_item_and_repr():
    x = Tensor(np.zeros((2, 3), dtype=np.float32), requires_grad=True)
    assert (x.shape, x.ndim, x.size, x.dtype) == ((2, 3), 2, 6, np.float32)
    assert x.sum().item() == 0.0 and isinstance(x.sum().item(), float)
    assert repr(Tensor([1.0, 2.0])) == "Tensor([1., 2.])"
    assert repr(x * 2).endswith("dtype=float32, grad_fn=<Mul>)")
    assert "requires_grad=True" in repr(x)


def test_numpy_operands_on_the_left_give_tensors():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    for y in (np.ones(2) + x, np.float64(3.0) * x, np.ones((2, 2)) @ x):
        assert isinstance(y, Tensor) and y.requires_grad


def test_numpy_conversion_refuses_to_leave_the_graph_silently():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(TypeError):
        np.exp(x)  # would return an array and lose the gradient
    with pytest.raises(RuntimeError, match="detach"):
        np.asarray(x)
    np.testing.assert_array_equal(np.asarray(x.detach()), [1.0, 2.0])


# ====================================================================== errors a student meets
def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(5, 2\).*4 columns.*5 rows"):
        Tensor(np.ones((3, 4))) @ Tensor(np.ones((5, 2)))
    with pytest.raises(ValueError, match=r"at least 1 dimension.*Use \*"):
        Tensor(2.0) @ Tensor(np.ones(2))


def test_backward_on_a_non_scalar_needs_a_grad():
    y = Tensor(np.ones((2, 3)), requires_grad=True) * 2
    with pytest.raises(RuntimeError,
                       match=r"grad can be implicitly created only for scalar outputs.*\(2, 3\)"):
        y.backward()


def test_backward_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="does not require grad.*requires_grad=True"):
        (Tensor(np.ones(2)) * 2).sum().backward()
    y = Tensor(np.ones(2), requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"Mismatch in shape.*\(3,\).*\(2,\)"):
        y.backward(np.ones(3))
    with pytest.raises(ValueError, match=r"one element, got shape \(2,\)"):
        y.item()


def test_a_broken_function_is_reported_by_name():
    class Twice(Function):
        def forward(self, a):
            return 2 * a

        def backward(self, grad):
            return (grad.sum(),)  # forgot the shape

    from minitorch_ref.autograd.tensor import apply
    x = Tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Twice.backward returned a gradient of shape \(\)"):
        apply(Twice(), x).sum().backward()


# ====================================================================== the MLP on autograd
def manual_and_autograd_mlps(seed: int = 0):
    """The same 2-16-16-3 ReLU MLP twice: the manual reference and the autograd one."""
    mt.manual_seed(seed)
    manual = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                           nn.Linear(16, 3))
    mt.manual_seed(seed)
    auto = ann.Sequential(ann.Linear(2, 16), ann.ReLU(), ann.Linear(16, 16), ann.ReLU(),
                          ann.Linear(16, 3))
    return manual, auto


def test_autograd_mlp_has_the_manual_mlps_initial_weights_and_names():
    manual, auto = manual_and_autograd_mlps()
    manual_state, auto_state = manual.state_dict(), auto.state_dict()
    assert list(auto_state) == list(manual_state) == ["0.weight", "0.bias", "2.weight",
                                                      "2.bias", "4.weight", "4.bias"]
    for name in manual_state:
        np.testing.assert_array_equal(auto_state[name], manual_state[name], err_msg=name)
    assert repr(auto) == repr(manual)


def test_autograd_mlp_gradients_equal_the_manual_backward():
    manual, auto = manual_and_autograd_mlps()
    X, y = spiral(n_per_class=20, n_classes=3, noise=0.2, seed=0)
    criterion = nn.CrossEntropyLoss()
    manual_loss = criterion(manual(X), y)
    manual.backward(criterion.backward())
    auto_loss = ann.cross_entropy(auto(X), y)
    auto_loss.backward()
    assert abs(auto_loss.item() - manual_loss) < 1e-12
    for (name, m), a in zip(manual.named_parameters(), auto.parameters()):
        assert np.max(np.abs(a.grad - m.grad)) < 1e-10, name
        assert rel_error(m.grad, a.grad) < 1e-10, name


def test_autograd_mlp_gradients_match_finite_differences():
    _, auto = manual_and_autograd_mlps(seed=3)
    X, y = spiral(n_per_class=5, n_classes=3, noise=0.2, seed=3)
    ann.cross_entropy(auto(X), y).backward()
    for name, p in auto.named_parameters():
        numeric = numerical_gradient(lambda: ann.cross_entropy(auto(X), y).item(), p.data)
        assert rel_error(numeric, p.grad, FD_NORM_FLOOR) < GRAD_TOL, name


def test_the_same_sgd_steps_give_the_same_weights():
    manual, auto = manual_and_autograd_mlps(seed=1)
    X, y = spiral(n_per_class=20, n_classes=3, noise=0.2, seed=1)
    criterion = nn.CrossEntropyLoss()
    manual_opt = optim.SGD(manual.parameters(), lr=0.1, momentum=0.9)
    auto_opt = optim.SGD(auto.parameters(), lr=0.1, momentum=0.9)
    for _ in range(5):
        criterion(manual(X), y)
        manual_opt.zero_grad()
        manual.backward(criterion.backward())
        manual_opt.step()
        auto_opt.zero_grad()
        ann.cross_entropy(auto(X), y).backward()
        auto_opt.step()
    for name, value in manual.state_dict().items():
        np.testing.assert_allclose(auto.state_dict()[name], value, rtol=0, atol=1e-10,
                                   err_msg=name)


def test_mse_loss_equals_the_manual_loss_and_gradient():
    pred, target = randn(6, 2), randn(6, 2, seed=1)
    criterion = nn.MSELoss()
    expected = criterion(pred, target)
    p = Tensor(pred, requires_grad=True)
    loss = ann.mse_loss(p, target)
    loss.backward()
    assert loss.item() == pytest.approx(expected, rel=1e-14)
    np.testing.assert_allclose(p.grad, criterion.backward(), rtol=1e-14)


def test_autograd_mlp_fits_the_spiral():
    mt.manual_seed(0)
    X, y = spiral(n_per_class=100, n_classes=3, noise=0.2, seed=0)
    model = ann.Sequential(ann.Linear(2, 64), ann.ReLU(), ann.Linear(64, 64), ann.ReLU(),
                           ann.Linear(64, 3))
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(300):
        optimizer.zero_grad()
        ann.cross_entropy(model(X), y).backward()
        optimizer.step()
    with no_grad():
        accuracy = np.mean(model(X).data.argmax(axis=1) == y)
    assert accuracy >= 0.95


def test_parameters_plug_into_the_manual_framework():
    layer = ann.Linear(3, 2)
    assert all(isinstance(p, nn.Parameter) and isinstance(p, Tensor) for p in layer.parameters())
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    np.testing.assert_array_equal(layer.weight.grad, np.zeros((3, 2)))  # ready for any optimizer
    (layer(np.ones((4, 3))).sum()).backward()
    np.testing.assert_array_equal(layer.bias.grad, [4.0, 4.0])
    layer.zero_grad()
    np.testing.assert_array_equal(layer.bias.grad, [0.0, 0.0])
    layer.weight.grad = None  # PyTorch habit
    optim.SGD(layer.parameters(), lr=0.1).zero_grad()
    np.testing.assert_array_equal(layer.weight.grad, np.zeros((3, 2)))
    assert repr(layer.bias).startswith("Parameter containing:\nTensor(")


def test_sequential_and_module_behaviour():
    model = ann.Sequential(ann.Linear(2, 4), ann.Tanh(), ann.Linear(4, 1), ann.Sigmoid())
    head = model[:2]
    assert isinstance(head, ann.Sequential) and isinstance(model[1], ann.Tanh)
    out = head(np.ones((5, 2)))
    assert isinstance(out, Tensor) and out.shape == (5, 4)
    with pytest.raises(RuntimeError, match="Call .backward\\(\\) on the loss Tensor"):
        model.backward(np.ones((5, 1)))


def test_nn_input_errors():
    with pytest.raises(ValueError, match=r"Linear expected input of shape \(N, 3\), got \(3,\)"):
        ann.Linear(3, 2)(np.ones(3))
    with pytest.raises(ValueError, match="integer class indices"):
        ann.cross_entropy(Tensor(np.ones((2, 3))), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"\(4, 1\) and target shape \(4,\)"):
        ann.mse_loss(Tensor(np.ones((4, 1))), np.ones(4))


def test_cross_entropy_is_stable_for_huge_logits():
    logits = Tensor(np.array([[1000.0, 0.0, -1000.0]]), requires_grad=True)
    loss = ann.cross_entropy(logits, np.array([1]))
    loss.backward()
    assert loss.item() == pytest.approx(1000.0)
    np.testing.assert_allclose(logits.grad, [[1.0, -1.0, 0.0]], atol=1e-12)


# ====================================================================== the graph picture
def small_expression():
    a, c = Tensor(2.0, requires_grad=True), Tensor(-3.0, requires_grad=True)
    e = a * c
    d = e + a**2
    return a, c, e, d


def test_draw_graph_draws_one_box_per_tensor_and_one_arrow_per_edge():
    a, c, e, d = small_expression()  # tensors: a, c, the constant 2, e, a**2, d
    d.backward()
    ax = draw_graph(d, labels={a: "a", c: "c", e: "e", d: "d"})
    try:
        assert isinstance(ax, Axes)
        boxes = [t.get_text() for t in ax.texts if not isinstance(t, Annotation)]
        arrows = [t for t in ax.texts if isinstance(t, Annotation)]
        assert len(boxes) == 6 and len(arrows) == 6
        assert "a\nscalar\ndata 2\ngrad 1" in boxes  # dd/da = c + 2a = 1
        assert "e = Mul\nscalar\ndata -6" in boxes and any(b.startswith("Pow") for b in boxes)
    finally:
        plt.close(ax.figure)


def test_draw_graph_on_given_axes_with_a_reused_tensor():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    h = x.tanh()
    fig, ax = plt.subplots()
    try:
        assert draw_graph((h * h).sum(), ax=ax) is ax
        arrows = [t for t in ax.texts if isinstance(t, Annotation)]
        assert len(arrows) == 4  # x -> h, h -> Mul twice, Mul -> Sum
        assert any("shape (2, 3)" in t.get_text() for t in ax.texts)
    finally:
        plt.close(fig)


def test_draw_graph_refuses_huge_graphs():
    y = Tensor(1.0, requires_grad=True)
    for _ in range(100):
        y = y * 2
    with pytest.raises(ValueError, match="201 tensors"):  # 100 products, 100 constants, y
        draw_graph(y)
