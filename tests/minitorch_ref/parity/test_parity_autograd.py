"""PyTorch parity of minitorch_ref.autograd, in float64: every op's value and gradients,
repeated backward passes (the same numbers as torch's ``retain_graph=True``), leaf and
dtype rules, the error messages, the losses, and an MLP trained with minitorch_ref.optim.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_ref as mt
from course.datasets import spiral
from minitorch_ref import optim
from minitorch_ref.autograd import Tensor, no_grad
from minitorch_ref.autograd import nn as ann

from .conftest import assert_close, needs_torch, to_torch, torch

pytestmark = needs_torch

TIGHT = dict(rtol=1e-12, atol=1e-14)


def sample(*shape, seed=0, low=None):
    """Standard normal entries, or uniform in [low, low + 1.5) when ``low`` is given."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) if low is None else rng.uniform(low, low + 1.5, shape)


def compare(ours_fn, torch_fn, *arrays, seed=0, tol=None):
    """Forward value and every input gradient of ``ours_fn`` equal ``torch_fn``'s."""
    ours = [Tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]
    theirs = [to_torch(a, requires_grad=True) for a in arrays]
    out, out_t = ours_fn(*ours), torch_fn(*theirs)
    tol = tol or {}
    assert_close(out.data, out_t, "forward", **tol)
    upstream = np.random.default_rng(seed + 1).standard_normal(out.shape)
    out.backward(upstream)
    out_t.backward(to_torch(upstream))
    for i, (t, t_torch) in enumerate(zip(ours, theirs)):
        assert_close(t.grad, t_torch.grad, f"gradient of input {i}", **tol)


def same(fn):
    """The expression reads the same for both libraries."""
    return fn, fn


# ====================================================================== every op
OPS = [
    pytest.param(*same(lambda a, b: a + b), [sample(3, 1), sample(1, 4, seed=1)], id="add-(3,1)+(1,4)"),
    pytest.param(*same(lambda a, b: a + b), [sample(2, 3), sample(3, seed=1)], id="add-(2,3)+(3,)"),
    pytest.param(*same(lambda a, b: a - b), [sample(4), sample(2, 3, 4, seed=1)], id="sub-(4,)-(2,3,4)"),
    pytest.param(*same(lambda a: -a), [sample(2, 3)], id="neg"),
    pytest.param(*same(lambda a, b: a * b), [sample(2, 1, 4), sample(3, 1, seed=1)], id="mul-broadcast"),
    pytest.param(*same(lambda a, b: a / b), [sample(2, 3), sample(2, 1, low=0.5)], id="div-broadcast"),
    pytest.param(*same(lambda a: 2 * a - 1 / (a + 3.0) + a / 4 - (1 - a)), [sample(2, 3, low=0.5)],
                 id="python-scalars-both-sides"),
    pytest.param(*same(lambda a: a**2), [sample(2, 3)], id="pow-2"),
    pytest.param(*same(lambda a: a**-1.5), [sample(2, 3, low=0.5)], id="pow--1.5"),
    pytest.param(*same(lambda a, b: a**b), [sample(2, 3, low=0.5), sample(3, seed=1)], id="pow-tensor"),
    pytest.param(*same(lambda a: 2**a), [sample(2, 3)], id="rpow"),
    pytest.param(*same(lambda a, b: a @ b), [sample(3, 4), sample(4, 2, seed=1)], id="matmul"),
    pytest.param(*same(lambda a, b: a @ b), [sample(4), sample(4, 2, seed=1)], id="matmul-(4,)@(4,2)"),
    pytest.param(*same(lambda a, b: a @ b), [sample(3, 4), sample(4, seed=1)], id="matmul-(3,4)@(4,)"),
    pytest.param(*same(lambda a, b: a @ b), [sample(4), sample(4, seed=1)], id="matmul-(4,)@(4,)"),
    pytest.param(*same(lambda a, b: a @ b), [sample(1, 3, 4), sample(2, 4, 5, seed=1)],
                 id="matmul-batched-broadcast"),
    pytest.param(*same(lambda a: a.exp()), [sample(2, 3)], id="exp"),
    pytest.param(*same(lambda a: a.log()), [sample(2, 3, low=0.5)], id="log"),
    pytest.param(*same(lambda a: a.relu()), [sample(3, 4)], id="relu"),
    pytest.param(*same(lambda a: a.tanh()), [sample(3, 4)], id="tanh"),
    pytest.param(*same(lambda a: a.sigmoid()), [sample(3, 4) * 30], id="sigmoid-large"),
    pytest.param(*same(lambda a: a.sum()), [sample(2, 3)], id="sum"),
    pytest.param(lambda a: a.sum(axis=(0, 2), keepdims=True),
                 lambda a: a.sum(dim=(0, 2), keepdim=True), [sample(2, 3, 4)], id="sum-keepdims"),
    pytest.param(lambda a: a.mean(axis=-1), lambda a: a.mean(dim=-1), [sample(2, 3, 4)], id="mean-axis"),
    pytest.param(*same(lambda a: a.mean()), [sample(2, 3)], id="mean"),
    pytest.param(*same(lambda a: a.reshape(3, -1)), [sample(2, 3)], id="reshape"),
    pytest.param(*same(lambda a: a.T), [sample(2, 3)], id="T"),
    pytest.param(lambda a: a.transpose((1, 2, 0)), lambda a: a.permute(1, 2, 0), [sample(2, 3, 4)],
                 id="transpose-axes"),
    pytest.param(*same(lambda a: a[[0, 2, 0, 0]]), [sample(3, 4)], id="getitem-repeated"),
    pytest.param(*same(lambda a: a[1:, ::2]), [sample(3, 4)], id="getitem-slice"),
]


@pytest.mark.parametrize("ours_fn, torch_fn, arrays", OPS)
def test_op_matches_torch(ours_fn, torch_fn, arrays):
    compare(ours_fn, torch_fn, *arrays, tol=TIGHT)


CONVENTIONS = [
    pytest.param(*same(lambda a: a.relu()), id="relu'(0)=0"),
    pytest.param(*same(lambda a: a**0), id="d/dx x^0 = 0 at 0"),
    pytest.param(*same(lambda a: a**0.5), id="d/dx sqrt(x) = inf at 0"),
    pytest.param(*same(lambda a: a**a), id="0^0: both gradients"),
]


@pytest.mark.parametrize("ours_fn, torch_fn", CONVENTIONS)
def test_gradient_conventions_at_zero(ours_fn, torch_fn):
    compare(ours_fn, torch_fn, np.array([0.0, 0.0, 1.5]))


@settings(max_examples=30, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       op=st.sampled_from(["+", "-", "*", "/"]), seed=st.integers(0, 2**16))
def test_broadcast_ops_match_torch_for_any_shapes(shapes, op, seed):
    fn = {"+": lambda a, b: a + b, "-": lambda a, b: a - b,
          "*": lambda a, b: a * b, "/": lambda a, b: a / (b * b + 0.5)}[op]
    first, second = shapes.input_shapes
    compare(fn, fn, sample(*first, seed=seed), sample(*second, seed=seed + 1), seed=seed, tol=TIGHT)


# ====================================================================== repeated backward passes
def chain(x, w):
    return ((x * 2) * 3).sum() + (w * w).sum()


def reused_intermediate(x, w):
    h = x @ w
    return (h * h + h).sum()


def diamond_with_broadcast(x, w):
    h = (x @ w).tanh()
    return (h * h.sigmoid() + h.mean(axis=0, keepdims=True) * x.sum()).sum()


def torch_diamond(x, w):
    h = (x @ w).tanh()
    return (h * h.sigmoid() + h.mean(dim=0, keepdim=True) * x.sum()).sum()


GRAPHS = [
    pytest.param(chain, chain, id="chain"),
    pytest.param(reused_intermediate, reused_intermediate, id="reused-intermediate"),
    pytest.param(diamond_with_broadcast, torch_diamond, id="diamond-broadcast"),
]


def leaves(seed=0):
    x, w = sample(3, 4, seed=seed), sample(4, 2, seed=seed + 1)
    ours = Tensor(x.copy(), requires_grad=True), Tensor(w.copy(), requires_grad=True)
    return ours, (to_torch(x, requires_grad=True), to_torch(w, requires_grad=True))


@pytest.mark.parametrize("ours_fn, torch_fn", GRAPHS)
def test_backward_three_times_on_one_graph_accumulates_as_torch(ours_fn, torch_fn):
    ours, theirs = leaves()
    loss, loss_t = ours_fn(*ours), torch_fn(*theirs)
    for call in range(1, 4):
        loss.backward()
        loss_t.backward(retain_graph=True)
        for name, t, t_torch in zip("xw", ours, theirs):
            assert_close(t.grad, t_torch.grad, f"{name}.grad after backward #{call}", **TIGHT)


def test_backward_twice_gives_torchs_exact_numbers():
    a, a_t = Tensor(2.0, requires_grad=True), torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    c, c_t = (a * 2) * 3, (a_t * 2) * 3
    for _ in range(2):
        c.backward()
        c_t.backward(retain_graph=True)
        assert a.grad == a_t.grad.item()  # 6, then 12


@pytest.mark.parametrize("ours_fn, torch_fn", GRAPHS)
def test_gradients_of_two_forward_passes_add_up_as_torch(ours_fn, torch_fn):
    ours, theirs = leaves(seed=5)
    for scale in (1.0, -0.5):
        (ours_fn(*ours) * scale).backward()
        (torch_fn(*theirs) * scale).backward()
    for name, t, t_torch in zip("xw", ours, theirs):
        assert_close(t.grad, t_torch.grad, f"{name}.grad", **TIGHT)


def test_retained_intermediate_gradient_accumulates_as_torch():
    (x, w), (x_t, w_t) = leaves()
    h, h_t = x @ w, x_t @ w_t
    h.retain_grad()
    h_t.retain_grad()
    loss, loss_t = (h * h + h).sum(), (h_t * h_t + h_t).sum()
    for call in range(1, 3):
        loss.backward()
        loss_t.backward(retain_graph=True)
        assert_close(h.grad, h_t.grad, f"h.grad after backward #{call}", **TIGHT)


def test_leaf_and_requires_grad_flags_match_torch():
    (x, w), (x_t, w_t) = leaves()
    const, const_t = Tensor(np.ones(4)), torch.ones(4, dtype=torch.float64)
    pairs = [(x, x_t), (x @ w, x_t @ w_t), (const * 2, const_t * 2), (x.detach(), x_t.detach())]
    with no_grad(), torch.no_grad():
        pairs.append((x * 2, x_t * 2))
    for i, (ours, theirs) in enumerate(pairs):
        assert (ours.is_leaf, ours.requires_grad) == (theirs.is_leaf, theirs.requires_grad), i


# ====================================================================== dtypes and errors
DTYPE_CASES = [
    pytest.param(lambda x: 2 * x, lambda x: 2 * x, id="python-int"),
    pytest.param(lambda x: x / 3.0, lambda x: x / 3.0, id="python-float"),
    pytest.param(lambda x: np.float64(2.0) * x, lambda x: np.float64(2.0) * x, id="numpy-float64-scalar"),
    pytest.param(lambda x: x + np.array([1, 2, 3]),
                 lambda x: x + torch.as_tensor(np.array([1, 2, 3])), id="int-array"),
    pytest.param(lambda x: x + np.ones(3), lambda x: x + torch.as_tensor(np.ones(3)), id="float64-array"),
    pytest.param(lambda x: x + np.array(2.0), lambda x: x + torch.as_tensor(np.array(2.0)),
                 id="float64-0d-array"),
    pytest.param(lambda x: (x**2).mean(), lambda x: (x**2).mean(), id="pow-mean"),
]


@pytest.mark.parametrize("ours_fn, torch_fn", DTYPE_CASES)
def test_float32_promotion_matches_torch(ours_fn, torch_fn):
    data = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    x, x_t = Tensor(data.copy(), requires_grad=True), torch.tensor(data, requires_grad=True)
    y, y_t = ours_fn(x), torch_fn(x_t)
    assert str(y.dtype) == str(y_t.dtype).removeprefix("torch.")
    y.sum().backward()
    y_t.sum().backward()
    assert x.grad.dtype == np.float32 and x_t.grad.dtype == torch.float32
    assert_close(x.grad, x_t.grad.double(), "x.grad", rtol=1e-6)


def torch_message(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def test_backward_errors_start_with_torchs_message():
    y = Tensor(np.ones(3), requires_grad=True) * 2
    y_t = torch.ones(3, dtype=torch.float64, requires_grad=True) * 2
    for ours, theirs in [
        (lambda: y.backward(), lambda: y_t.backward()),
        (lambda: (Tensor(np.ones(2)) * 2).sum().backward(), lambda: (torch.ones(2) * 2).sum().backward()),
    ]:
        expected = torch_message(theirs)
        assert torch_message(ours).startswith(expected), expected
    assert "Mismatch in shape" in torch_message(lambda: y_t.backward(torch.ones(2)))
    assert torch_message(lambda: y.backward(np.ones(2))).startswith("Mismatch in shape")


# ====================================================================== losses and an MLP
def test_cross_entropy_matches_torch():
    target = np.array([0, 2, 1, 2, 0])
    compare(lambda z: ann.cross_entropy(z, target),
            lambda z: torch.nn.functional.cross_entropy(z, torch.as_tensor(target)),
            sample(5, 3) * 4, tol=TIGHT)


def test_mse_loss_matches_torch():
    target = sample(4, 2, seed=9)
    compare(lambda p: ann.mse_loss(p, target),
            lambda p: torch.nn.functional.mse_loss(p, to_torch(target)), sample(4, 2), tol=TIGHT)


def torch_mlp(model):
    """A float64 torch twin of an autograd Sequential of Linear and ReLU."""
    layers = []
    for module in model:
        if isinstance(module, ann.Linear):
            twin = torch.nn.Linear(module.in_features, module.out_features, dtype=torch.float64)
            with torch.no_grad():
                twin.weight.copy_(to_torch(module.weight.data.T))
                twin.bias.copy_(to_torch(module.bias.data))
            layers.append(twin)
        else:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def test_autograd_mlp_with_minitorch_adam_follows_torch():
    mt.manual_seed(0)
    model = ann.Sequential(ann.Linear(2, 16), ann.ReLU(), ann.Linear(16, 3))
    twin = torch_mlp(model)
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    torch_optimizer = torch.optim.Adam(twin.parameters(), lr=0.01)
    X, y = spiral(n_per_class=20, n_classes=3, noise=0.2, seed=0)
    for step in range(5):
        optimizer.zero_grad()
        torch_optimizer.zero_grad()
        loss = ann.cross_entropy(model(X), y)
        loss_t = torch.nn.functional.cross_entropy(twin(to_torch(X)), torch.as_tensor(y))
        assert_close(loss.item(), loss_t, f"loss at step {step}")
        loss.backward()
        loss_t.backward()
        optimizer.step()
        torch_optimizer.step()
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert_close(p.data, q.T if p.ndim == 2 else q, name)
