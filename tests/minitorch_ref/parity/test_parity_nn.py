"""PyTorch parity of minitorch_ref.nn: modules, losses and init, in float64.

Each module test copies identical parameters into a torch twin, then compares the
forward output, dL/dx for a random upstream gradient G (torch: ``y.backward(G)``)
and every parameter gradient.
"""
import math

import numpy as np
import pytest

from minitorch_ref import nn as mnn

from .conftest import (
    assert_close, assert_same_buffers, assert_same_parameters, make_mlp, needs_torch, to_torch,
    torch, twin,
)

pytestmark = needs_torch

SEEDS = [0, 1, 2]


# ====================================================================== helpers
def sample_input(rng, shape, scale=1.0, zeros=True):
    """Normal entries times ``scale``; every third entry exactly 0 (gradient conventions at 0)."""
    x = rng.standard_normal(shape) * scale
    if zeros:
        x.reshape(-1)[::3] = 0.0
    return x


def check_forward_backward(module, twin_module, x, rng):
    """Forward output, input gradient and parameter gradients equal the twin's."""
    y = module(x)
    x_t = to_torch(x, requires_grad=True)
    y_t = twin_module(x_t)
    assert_close(y, y_t, "forward output")
    grad_output = rng.standard_normal(np.shape(y))
    grad_input = module.backward(grad_output)
    y_t.backward(to_torch(grad_output))
    assert_close(grad_input, x_t.grad, "input gradient")
    assert_same_parameters(module, twin_module, attr="grad")


# ====================================================================== stateless modules and Linear
ACTIVATIONS = [
    pytest.param(mnn.ReLU, id="ReLU"),
    pytest.param(mnn.LeakyReLU, id="LeakyReLU-default"),
    pytest.param(lambda: mnn.LeakyReLU(0.2), id="LeakyReLU-0.2"),
    pytest.param(lambda: mnn.LeakyReLU(1.5), id="LeakyReLU-1.5"),
    pytest.param(mnn.Sigmoid, id="Sigmoid"),
    pytest.param(mnn.Tanh, id="Tanh"),
    pytest.param(mnn.GELU, id="GELU-none"),
    pytest.param(lambda: mnn.GELU("tanh"), id="GELU-tanh"),
    pytest.param(lambda: mnn.Softmax(dim=-1), id="Softmax-dim-1"),
    pytest.param(lambda: mnn.Softmax(dim=0), id="Softmax-dim0"),
    pytest.param(lambda: mnn.LogSoftmax(dim=-1), id="LogSoftmax-dim-1"),
    pytest.param(lambda: mnn.LogSoftmax(dim=0), id="LogSoftmax-dim0"),
    pytest.param(mnn.Identity, id="Identity"),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", [1.0, 1000.0], ids=["unit", "large"])
@pytest.mark.parametrize("shape", [(1, 5), (6, 5)], ids=["N1", "N6"])
@pytest.mark.parametrize("make", ACTIVATIONS)
def test_activation(make, shape, scale, seed):
    rng = np.random.default_rng(seed)
    module = make()
    check_forward_backward(module, twin(module), sample_input(rng, shape, scale), rng)


@pytest.mark.parametrize("make", ACTIVATIONS[:4])
def test_gradient_at_exactly_zero(make):
    """All-zero input: torch's convention is ReLU'(0) = 0 and LeakyReLU'(0) = slope."""
    module = make()
    check_forward_backward(module, twin(module), np.zeros((3, 4)), np.random.default_rng(0))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 7])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("sizes", [(4, 3), (1, 6), (5, 1)], ids=["4to3", "1to6", "5to1"])
def test_linear(sizes, bias, n, seed):
    rng = np.random.default_rng(seed)
    module = mnn.Linear(*sizes, bias=bias, rng=rng)
    check_forward_backward(module, twin(module), rng.standard_normal((n, sizes[0])), rng)


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize(
    "shape, dims",
    [
        ((2, 3, 4), (1, -1)),
        ((1, 3, 4), (1, -1)),
        ((2, 3, 2, 2), (1, -1)),
        ((2, 3, 2, 2), (2, 3)),
        ((2, 3, 2, 2), (0, 1)),
        ((2, 3, 2, 2), (1, 2)),
    ],
    ids=["3d", "3d-N1", "4d", "4d-dims2-3", "4d-dims0-1", "4d-dims1-2"],
)
def test_flatten(shape, dims, seed):
    rng = np.random.default_rng(seed)
    module = mnn.Flatten(*dims)
    check_forward_backward(module, twin(module), rng.standard_normal(shape), rng)


# ====================================================================== BatchNorm1d
BATCHNORM_CONFIGS = [
    pytest.param({}, id="default"),
    pytest.param({"affine": False}, id="no-affine"),
    pytest.param({"momentum": None}, id="cumulative-average"),
    pytest.param({"momentum": 0.3, "eps": 1e-3}, id="momentum0.3-eps1e-3"),
    pytest.param({"track_running_stats": False}, id="no-running-stats"),
    pytest.param({"affine": False, "track_running_stats": False}, id="no-affine-no-stats"),
]


def make_batchnorm(config, features, rng):
    module = mnn.BatchNorm1d(features, **config)
    if module.affine:
        module.weight.data[...] = rng.uniform(0.5, 2.0, features)
        module.bias.data[...] = rng.normal(0, 1, features)
    return module


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [2, 9])
@pytest.mark.parametrize("config", BATCHNORM_CONFIGS)
def test_batchnorm_train(config, n, seed):
    """Three training batches: outputs, gradients (accumulated), running statistics."""
    rng = np.random.default_rng(seed)
    module = make_batchnorm(config, 4, rng)
    twin_module = twin(module)
    for _ in range(3):
        x = rng.normal(2.0, 3.0, (n, 4))
        check_forward_backward(module, twin_module, x, rng)
        assert_same_buffers(module, twin_module)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 5])
@pytest.mark.parametrize(
    "config", [c for c in BATCHNORM_CONFIGS if c.values[0].get("track_running_stats", True)]
)
def test_batchnorm_eval_uses_running_statistics(config, n, seed):
    """After three training batches, eval normalises with the running estimates (N=1 legal)."""
    rng = np.random.default_rng(seed)
    module = make_batchnorm(config, 4, rng)
    twin_module = twin(module)
    for _ in range(3):
        x = rng.normal(2.0, 3.0, (6, 4))
        module(x)
        twin_module(to_torch(x))
    module.eval()
    twin_module.eval()
    check_forward_backward(module, twin_module, rng.normal(2.0, 3.0, (n, 4)), rng)
    assert_same_buffers(module, twin_module)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("affine", [True, False])
def test_batchnorm_eval_without_running_stats_uses_batch_statistics(affine, seed):
    rng = np.random.default_rng(seed)
    module = make_batchnorm({"affine": affine, "track_running_stats": False}, 4, rng).eval()
    check_forward_backward(module, twin(module), rng.normal(2.0, 3.0, (5, 4)), rng)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_batchnorm_without_running_stats_rejects_batch_of_one(mode):
    """torch raises 'Expected more than 1 value per channel when training' whenever it
    uses batch statistics, so also in eval when track_running_stats=False."""
    module = mnn.BatchNorm1d(3, track_running_stats=False).train(mode == "train")
    twin_module = twin(module)
    x = np.random.default_rng(0).standard_normal((1, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        twin_module(to_torch(x))
    with pytest.raises(ValueError):
        module(x)


# ====================================================================== Dropout
def torch_dropout_with_mask(values, keep, p):
    """torch's dropout kernel for a given mask: ``values * keep * 1/(1-p)``.

    ``native_dropout_backward(grad, mask, scale)`` is what autograd runs for dropout's
    backward; it is also the forward map once the mask is fixed.
    """
    return torch.ops.aten.native_dropout_backward(to_torch(values), torch.as_tensor(keep), 1 / (1 - p))


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_torch_dropout_is_the_masked_scaling(p):
    """Pins down torch's semantics that the next test relies on: drop with probability
    p, scale the kept entries by 1/(1-p), backward multiplies by the same."""
    torch.manual_seed(0)
    x = to_torch(np.random.default_rng(0).uniform(1, 2, (40, 50)), requires_grad=True)
    y = torch.nn.functional.dropout(x, p, training=True)
    keep = (y != 0).numpy()
    assert_close(y, torch_dropout_with_mask(x.detach(), keep, p), "torch dropout forward")
    grad_output = np.random.default_rng(1).standard_normal(x.shape)
    y.backward(to_torch(grad_output))
    assert_close(x.grad, torch_dropout_with_mask(grad_output, keep, p), "torch dropout backward")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", [(1, 7), (8, 5), (2, 3, 4)], ids=["N1", "N8", "3d"])
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_train_matches_torch_for_its_mask(p, shape, seed):
    rng = np.random.default_rng(seed)
    module = mnn.Dropout(p, rng=np.random.default_rng(seed + 100))
    x = rng.uniform(1, 2, shape)  # no zeros: y != 0 exactly where kept
    y = module(x)
    keep = y != 0
    assert_close(y, torch_dropout_with_mask(x, keep, p), "forward")
    grad_output = rng.standard_normal(shape)
    assert_close(module.backward(grad_output), torch_dropout_with_mask(grad_output, keep, p),
                 "input gradient")


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_drops_a_fraction_p(p):
    """p is the probability of *zeroing* (torch's meaning), not of keeping."""
    y = mnn.Dropout(p, rng=np.random.default_rng(0))(np.ones((200, 500)))
    assert abs(np.mean(y == 0) - p) < 0.01


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize(
    "p, training", [(0.5, False), (0.9, False), (0.0, True), (0.0, False)],
    ids=["p0.5-eval", "p0.9-eval", "p0-train", "p0-eval"],
)
def test_dropout_identity_cases(p, training, seed):
    rng = np.random.default_rng(seed)
    module = mnn.Dropout(p).train(training)
    check_forward_backward(module, twin(module), rng.standard_normal((4, 6)), rng)


# ====================================================================== Sequential MLP
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "training, n", [(True, 2), (True, 7), (False, 1), (False, 7)],
    ids=["train-N2", "train-N7", "eval-N1", "eval-N7"],
)
def test_sequential_mlp_end_to_end(training, n, seed):
    """Forward, CrossEntropy loss, backward, BatchNorm buffers, for a whole MLP."""
    rng = np.random.default_rng(seed)
    model = make_mlp(seed).train(training)
    twin_model = twin(model)
    x = rng.standard_normal((n, 2, 3))
    target = rng.integers(0, 3, n)
    loss = mnn.CrossEntropyLoss()
    value = loss(model(x), target)
    x_t = to_torch(x, requires_grad=True)
    value_t = torch.nn.functional.cross_entropy(twin_model(x_t), torch.as_tensor(target))
    assert_close(value, value_t, "loss")
    value_t.backward()
    assert_close(model.backward(loss.backward()), x_t.grad, "input gradient")
    assert_same_parameters(model, twin_model, attr="grad")
    assert_same_buffers(model, twin_model)


@pytest.mark.parametrize("seed", SEEDS)
def test_sequential_gradients_accumulate_until_zero_grad(seed):
    """Two backward passes without zero_grad add up, as torch's .grad does."""
    rng = np.random.default_rng(seed)
    model = make_mlp(seed)
    twin_model = twin(model)
    for _ in range(2):
        x = rng.standard_normal((5, 2, 3))
        grad_output = rng.standard_normal((5, 3))
        model(x)
        model.backward(grad_output)
        twin_model(to_torch(x)).backward(to_torch(grad_output))
        assert_same_parameters(model, twin_model, attr="grad")
    model.zero_grad()
    twin_model.zero_grad(set_to_none=False)
    assert_same_parameters(model, twin_model, attr="grad")
    assert all(np.all(g == 0) for g in model.grads())


# ====================================================================== losses
def regression(rng, shape):
    return rng.standard_normal(shape), rng.standard_normal(shape)


def probabilities(rng, shape):
    """Probabilities including exact 0 and 1 (against targets 0, 1 and soft 0.3),
    where torch clamps each log at -100 and the gradient's denominator at 1e-12."""
    pred = rng.uniform(0.01, 0.99, shape)
    target = rng.integers(0, 2, shape).astype(float)
    edge_pred = [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    edge_target = [0.0, 1.0, 0.0, 1.0, 0.3, 0.3]
    k = min(len(edge_pred), pred.size)
    pred.reshape(-1)[:k] = edge_pred[:k]
    target.reshape(-1)[:k] = edge_target[:k]
    return pred, target


def logits_binary(rng, shape):
    """Logits including +-100 and 0, targets in {0, 1} plus a soft 0.3."""
    pred = rng.normal(0, 3, shape)
    target = rng.integers(0, 2, shape).astype(float)
    edges = [(100.0, 1.0), (100.0, 0.0), (-100.0, 1.0), (-100.0, 0.0), (0.0, 0.3)]
    for i, (logit, label) in enumerate(edges[: pred.size]):
        pred.reshape(-1)[i], target.reshape(-1)[i] = logit, label
    return pred, target


def class_scores(scale, log_probs=False):
    def make(rng, shape):
        scores = rng.standard_normal(shape) * scale
        if log_probs:
            scores = torch.log_softmax(to_torch(scores), dim=1).numpy()
        return scores, rng.integers(0, shape[1], shape[0])
    return make


def check_loss(loss, torch_loss, pred, target):
    value = loss(pred, target)
    assert isinstance(value, float), f"loss returned {type(value).__name__}, not float"
    pred_t = to_torch(pred, requires_grad=True)
    target_t = torch.as_tensor(target) if np.issubdtype(target.dtype, np.integer) else to_torch(target)
    value_t = torch_loss(pred_t, target_t)
    value_t.backward()
    assert_close(value, value_t, "loss value")
    assert_close(loss.backward(), pred_t.grad, "gradient wrt pred")


POS_WEIGHT = np.array([0.5, 2.0, 3.0, 1.0])  # one per column of the (N, 4) cases

LOSS_CASES = [
    pytest.param("MSELoss", {}, regression, id="MSE"),
    pytest.param("BCELoss", {}, probabilities, id="BCE"),
    pytest.param("BCEWithLogitsLoss", {}, logits_binary, id="BCEWithLogits"),
    pytest.param("BCEWithLogitsLoss", {"pos_weight": 3.0}, logits_binary, id="BCEWithLogits-posw-scalar"),
    pytest.param("BCEWithLogitsLoss", {"pos_weight": POS_WEIGHT}, logits_binary,
                 id="BCEWithLogits-posw-column"),
    pytest.param("NLLLoss", {}, class_scores(1.0, log_probs=True), id="NLL"),
    *(
        pytest.param("CrossEntropyLoss", {"label_smoothing": eps}, class_scores(scale),
                     id=f"CE-smooth{eps}-{name}")
        for eps in (0.0, 0.1, 0.3)
        for scale, name in ((1.0, "unit"), (1000.0, "large"))
    ),
]


def torch_kwargs(kwargs):
    return {k: to_torch(np.atleast_1d(v)) if k == "pos_weight" else v for k, v in kwargs.items()}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", [(1, 4), (6, 4)], ids=["N1", "N6"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("name, kwargs, make_data", LOSS_CASES)
def test_loss(name, kwargs, make_data, reduction, shape, seed):
    pred, target = make_data(np.random.default_rng(seed), shape)
    check_loss(
        getattr(mnn, name)(reduction=reduction, **kwargs),
        getattr(torch.nn, name)(reduction=reduction, **torch_kwargs(kwargs)),
        pred, target,
    )


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)], ids=["1d", "3d"])
@pytest.mark.parametrize(
    "name, make_data",
    [("MSELoss", regression), ("BCELoss", probabilities), ("BCEWithLogitsLoss", logits_binary)],
    ids=["MSE", "BCE", "BCEWithLogits"],
)
def test_elementwise_loss_other_shapes(name, make_data, shape, reduction):
    pred, target = make_data(np.random.default_rng(0), shape)
    check_loss(getattr(mnn, name)(reduction=reduction),
               getattr(torch.nn, name)(reduction=reduction), pred, target)


# ====================================================================== init
GAIN_CASES = [
    *((name, None) for name in (
        "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "sigmoid", "tanh", "relu", "selu")),
    ("leaky_relu", None), ("leaky_relu", 0), ("leaky_relu", 0.2), ("leaky_relu", 1),
    ("leaky_relu", 3), ("leaky_relu", -0.5),
]


@pytest.mark.parametrize("nonlinearity, param", GAIN_CASES)
def test_calculate_gain(nonlinearity, param):
    expected = torch.nn.init.calculate_gain(nonlinearity, param)
    assert mnn.init.calculate_gain(nonlinearity, param) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    "nonlinearity, param",
    [("identity", None), ("gelu", None), ("softmax", None), ("leaky_relu", True), ("leaky_relu", "0.2")],
)
def test_calculate_gain_rejects_what_torch_rejects(nonlinearity, param):
    with pytest.raises(ValueError):
        torch.nn.init.calculate_gain(nonlinearity, param)
    with pytest.raises(ValueError):
        mnn.init.calculate_gain(nonlinearity, param)


def torch_sample(init_fn, in_features, out_features, seed, **kwargs):
    """torch's initialiser on a (out, in) tensor, returned in our (in, out) layout."""
    torch.manual_seed(seed)
    weight = torch.empty(out_features, in_features, dtype=torch.float64)
    init_fn(weight, **kwargs)
    return weight.numpy().T


def assert_same_distribution(ours, theirs, uniform):
    """Loose statistical comparison of two large samples of a zero-mean initialiser."""
    assert abs(ours.mean()) < 0.02 * theirs.std()
    np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.01, err_msg="std")
    if uniform:  # both maxima sit within ~1/size of the common bound
        np.testing.assert_allclose(np.abs(ours).max(), np.abs(theirs).max(), rtol=2e-3,
                                   err_msg="bound")


@pytest.mark.parametrize("in_features, out_features", [(1, 5), (7, 3), (300, 40)])
def test_linear_default_init_bounds(in_features, out_features):
    bound = 1 / math.sqrt(in_features)
    for seed in SEEDS:
        module = mnn.Linear(in_features, out_features, rng=np.random.default_rng(seed))
        assert np.all(np.abs(module.weight.data) <= bound)
        assert np.all(np.abs(module.bias.data) <= bound)


def test_linear_default_init_distribution():
    """Same law as torch.nn.Linear's kaiming_uniform_(a=sqrt(5)) weight and uniform bias."""
    in_features, out_features = 400, 300
    module = mnn.Linear(in_features, out_features, rng=np.random.default_rng(0))
    torch.manual_seed(0)
    reference = torch.nn.Linear(in_features, out_features, dtype=torch.float64)
    assert_same_distribution(module.weight.data, reference.weight.detach().numpy().T, uniform=True)
    # Biases: many short layers with a wide output, so the bound is 1/sqrt(4) = 0.5.
    biases = np.concatenate([
        mnn.Linear(4, 20_000, rng=np.random.default_rng(s)).bias.data for s in range(5)
    ])
    reference_biases = np.concatenate([
        torch.nn.Linear(4, 20_000, dtype=torch.float64).bias.detach().numpy() for _ in range(5)
    ])
    assert_same_distribution(biases, reference_biases, uniform=True)


INIT_CASES = [
    pytest.param("xavier_uniform_", {}, True, id="xavier_uniform"),
    pytest.param("xavier_uniform_", {"gain": 2.5}, True, id="xavier_uniform-gain2.5"),
    pytest.param("xavier_normal_", {}, False, id="xavier_normal"),
    pytest.param("xavier_normal_", {"gain": 0.5}, False, id="xavier_normal-gain0.5"),
    *(
        pytest.param(f"kaiming_{law}_", {"mode": mode, "nonlinearity": nl, "a": a}, law == "uniform",
                     id=f"kaiming_{law}-{mode}-{nl}-a{a}")
        for law in ("uniform", "normal")
        for mode in ("fan_in", "fan_out")
        for nl, a in (("relu", 0), ("leaky_relu", 0), ("leaky_relu", math.sqrt(5)), ("tanh", 0))
    ),
]


@pytest.mark.parametrize("name, kwargs, uniform", INIT_CASES)
def test_init_distribution(name, kwargs, uniform):
    """fan_in = shape[0] in our (in, out) layout; in != out makes a mix-up visible (x2 in std)."""
    in_features, out_features = 400, 100
    ours = getattr(mnn.init, name)(np.empty((in_features, out_features)),
                                   rng=np.random.default_rng(0), **kwargs)
    theirs = torch_sample(getattr(torch.nn.init, name), in_features, out_features, 0, **kwargs)
    assert_same_distribution(ours, theirs, uniform)
