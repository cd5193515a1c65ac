"""Bad input must fail early with an error that says what is wrong and what was expected.

Each case is ``(action, exception type, fragments)``: calling ``action()`` must raise
that exception, and its message must contain every fragment (plain text, not regex).
"""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn, optim
from minitorch_ref.data import (
    CharTokenizer, DataLoader, Dataset, TensorDataset, context_windows, random_split,
)
from minitorch_ref.optim import lr_scheduler


def check_raises(action, exc, fragments):
    with pytest.raises(exc) as info:
        action()
    message = str(info.value)
    missing = [f for f in fragments if f not in message]
    assert not missing, f"message {message!r} does not mention {missing}"


def case(action, exc, *fragments, id):
    return pytest.param(action, exc, fragments, id=id)


# ----------------------------------------------------------------------------- builders
def floats(*shape):
    return np.random.default_rng(0).standard_normal(shape)


def labels(*values):
    return np.array(values, dtype=np.int64)


def params(n=2):
    return [nn.Parameter(np.zeros(3)) for _ in range(n)]


def sgd():
    return optim.SGD(params(), lr=0.1)


def forwarded(module, x):
    """``module`` after a forward pass on ``x`` (so backward may run)."""
    module(x)
    return module


OPTIMIZERS = {
    "SGD": lambda ps, **kw: optim.SGD(ps, **{"lr": 0.1, **kw}),
    "Adam": optim.Adam,
    "AdamW": optim.AdamW,
    "RMSprop": optim.RMSprop,
}

LOSSES = {
    "MSELoss": nn.MSELoss,
    "BCELoss": nn.BCELoss,
    "BCEWithLogitsLoss": nn.BCEWithLogitsLoss,
    "CrossEntropyLoss": nn.CrossEntropyLoss,
    "NLLLoss": nn.NLLLoss,
}


# ----------------------------------------------------------------------------- layers
LAYER_CASES = [
    case(lambda: nn.Linear(3, 2)(floats(3)), ValueError,
         "Linear", "(N, 3)", "(3,)", "batch dimension", id="linear-1d-input"),
    case(lambda: nn.Linear(3, 2)(floats(4, 5)), ValueError,
         "Linear", "(N, 3)", "(4, 5)", id="linear-wrong-features"),
    case(lambda: nn.Linear(3, 2)(np.ones((4, 3), dtype=np.int64)), ValueError,
         "Linear", "floating", "int64", id="linear-integer-input"),
    case(lambda: nn.BatchNorm1d(3)(floats(4, 5)), ValueError,
         "BatchNorm1d", "(N, 3)", "(4, 5)", id="batchnorm-wrong-features"),
    case(lambda: nn.BatchNorm1d(3)(floats(1, 3)), ValueError,
         "BatchNorm1d", "(1, 3)", "eval()", id="batchnorm-batch-of-1-training"),
    case(lambda: nn.Dropout(p=1), ValueError, "Dropout", "[0, 1)", id="dropout-p-1"),
    case(lambda: nn.Dropout(p=-0.1), ValueError, "[0, 1)", "-0.1", id="dropout-p-negative"),
    case(lambda: nn.Dropout(p=1.5), ValueError, "[0, 1)", "1.5", id="dropout-p-above-1"),
    case(lambda: nn.GELU(approximate="fast"), ValueError,
         "approximate", "'fast'", id="gelu-bad-approximate"),
    case(lambda: nn.Flatten(start_dim=3)(floats(2, 3, 4)), ValueError,
         "dim 3", "out of range", "(2, 3, 4)", id="flatten-start-dim-too-large"),
    case(lambda: nn.Flatten(end_dim=-4)(floats(2, 3, 4)), ValueError,
         "dim -4", "out of range", "(2, 3, 4)", id="flatten-end-dim-too-small"),
    case(lambda: nn.Embedding(5, 2)(np.array([[0.0, 1.0]])), ValueError,
         "Embedding", "integer", "float64", id="embedding-float-indices"),
    case(lambda: nn.Embedding(5, 2)(np.array([True, False])), ValueError,
         "Embedding", "integer", "bool", id="embedding-bool-indices"),
    case(lambda: nn.Embedding(5, 2)(labels(0, -1, 3)), IndexError,
         "Embedding", "index -1", "negative", "[0, 5)", id="embedding-negative-index"),
    case(lambda: nn.Embedding(5, 2)(labels(0, 5, 3)), IndexError,
         "Embedding", "index 5", "vocabulary of size 5", "[0, 5)", id="embedding-index-too-large"),
    case(lambda: nn.Embedding(5, 2, padding_idx=5), ValueError,
         "padding_idx=5", "num_embeddings=5", id="embedding-padding-idx-too-large"),
    case(lambda: nn.Embedding(5, 2, padding_idx=-6), ValueError,
         "padding_idx=-6", "[-5, 5)", id="embedding-padding-idx-too-negative"),
    case(lambda: nn.Embedding(0, 2), ValueError, "num_embeddings=0", id="embedding-empty-table"),
    case(lambda: forwarded(nn.Embedding(5, 4), labels(0, 1, 2)).backward(floats(3, 2)), ValueError,
         "Embedding.backward", "grad_output", "(3, 4)", "(3, 2)", id="embedding-wrong-grad-shape"),
]


@pytest.mark.parametrize("action, exc, fragments", LAYER_CASES)
def test_layer_rejects_bad_input(action, exc, fragments):
    check_raises(action, exc, fragments)


def test_batchnorm_accepts_a_batch_of_one_in_eval_mode():
    bn = nn.BatchNorm1d(3).eval()
    x = floats(1, 3)
    # Fresh running statistics are mean 0, variance 1.
    np.testing.assert_allclose(bn(x), x / np.sqrt(1 + bn.eps))


# ----------------------------------------------------------------------------- backward
BEFORE_FORWARD = {
    "Linear": lambda: nn.Linear(3, 2),
    "BatchNorm1d": lambda: nn.BatchNorm1d(3),
    "ReLU": nn.ReLU,
    "Sigmoid": nn.Sigmoid,
    "Softmax": nn.Softmax,
    "Dropout": nn.Dropout,
    "Flatten": nn.Flatten,
    "Embedding": lambda: nn.Embedding(5, 2),
    "Sequential": lambda: nn.Sequential(nn.Linear(3, 2), nn.ReLU()),
}


@pytest.mark.parametrize("name", BEFORE_FORWARD)
def test_module_backward_before_forward_raises(name):
    module = BEFORE_FORWARD[name]()
    # Sequential's error comes from its last module, which names itself.
    culprit = "ReLU" if name == "Sequential" else name
    check_raises(lambda: module.backward(floats(4, 2)), RuntimeError,
                 [f"{culprit}.backward()", "before forward()"])


@pytest.mark.parametrize("name", LOSSES)
def test_loss_backward_before_forward_raises(name):
    loss = LOSSES[name]()
    check_raises(loss.backward, RuntimeError, [f"{name}.backward()", "before forward()"])


WRONG_GRAD_OUTPUT = [
    # (module, input shape, output shape, wrong grad_output shape)
    pytest.param(lambda: nn.Linear(3, 2), (4, 3), (4, 2), (4, 3), id="Linear"),
    pytest.param(lambda: nn.BatchNorm1d(3), (4, 3), (4, 3), (4, 2), id="BatchNorm1d"),
    pytest.param(nn.ReLU, (4, 3), (4, 3), (3, 4), id="ReLU"),
    pytest.param(nn.Softmax, (4, 3), (4, 3), (4, 1), id="Softmax"),
    pytest.param(lambda: nn.Dropout(0.5), (4, 3), (4, 3), (4, 1), id="Dropout"),
    # Same number of elements, so a bare reshape would silently accept it.
    pytest.param(nn.Flatten, (2, 3, 4), (2, 12), (12, 2), id="Flatten"),
]


@pytest.mark.parametrize("build, in_shape, out_shape, bad_shape", WRONG_GRAD_OUTPUT)
def test_backward_rejects_grad_output_of_the_wrong_shape(build, in_shape, out_shape, bad_shape):
    module = forwarded(build(), floats(*in_shape))
    check_raises(lambda: module.backward(floats(*bad_shape)), ValueError,
                 ["grad_output", str(out_shape), str(bad_shape)])


# ----------------------------------------------------------------------------- losses
LOSS_CASES = [
    *[
        case(lambda cls=cls: cls()(np.full((4, 1), 0.5), np.ones(4)), ValueError,
             "(4, 1)", "(4,)", id=f"{name}-pred-target-shape-mismatch")
        for name, cls in LOSSES.items() if name in ("MSELoss", "BCELoss", "BCEWithLogitsLoss")
    ],
    *[
        case(lambda cls=cls: cls(reduction="avg"), ValueError, "reduction", "'avg'",
             id=f"{name}-invalid-reduction")
        for name, cls in LOSSES.items()
    ],
    *[
        case(action, ValueError, name, *fragments, id=f"{name}-{what}")
        for name, cls in LOSSES.items() if name in ("CrossEntropyLoss", "NLLLoss")
        for what, action, fragments in [
            ("float-targets", lambda cls=cls: cls()(floats(4, 3), np.array([0.0, 1.0, 2.0, 1.0])),
             ("integer", "float64")),
            ("negative-target", lambda cls=cls: cls()(floats(4, 3), labels(-1, 0, 1, 2)),
             ("[0, 3)", "-1")),
            ("target-equal-to-C", lambda cls=cls: cls()(floats(4, 3), labels(0, 1, 3, 2)),
             ("[0, 3)", "3")),
            ("wrong-target-length", lambda cls=cls: cls()(floats(4, 3), labels(0, 1, 2, 1, 0)),
             ("(4,)", "(5,)")),
            ("1d-scores", lambda cls=cls: cls()(floats(3), labels(0, 1, 2)),
             ("(N, C)", "(3,)")),
            ("3d-scores", lambda cls=cls: cls()(floats(4, 3, 2), labels(0, 1, 2, 1)),
             ("(N, C)", "(4, 3, 2)")),
        ]
    ],
    *[
        case(lambda cls=cls: cls()(floats(4, 3, 2), labels(0, 1, 1, 0)), ValueError, name,
             "(4, 3)", "(4, 3, 2)", "(4,)", "classes last", id=f"{name}-sequence-target-shape")
        for name, cls in LOSSES.items() if name in ("CrossEntropyLoss", "NLLLoss")
    ],
    case(lambda: nn.CrossEntropyLoss(ignore_index=0)(floats(4, 3), labels(0, 1, 3, 2)),
         ValueError, "[0, 3)", "ignore_index=0", "3", id="CrossEntropyLoss-target-besides-ignored"),
    case(lambda: nn.BCELoss()(np.array([0.5, 1.5]), np.array([0.0, 1.0])), ValueError,
         "probabilities", "[0, 1]", "1.5", id="BCELoss-probability-above-1"),
    case(lambda: nn.BCELoss()(np.array([-0.1, 0.5]), np.array([0.0, 1.0])), ValueError,
         "probabilities", "[0, 1]", "-0.1", id="BCELoss-negative-probability"),
]


@pytest.mark.parametrize("action, exc, fragments", LOSS_CASES)
def test_loss_rejects_bad_input(action, exc, fragments):
    check_raises(action, exc, fragments)


# ----------------------------------------------------------------------------- state_dict
def small_model():
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))


def edited_state(edit):
    state = small_model().state_dict()
    edit(state)
    return state


STATE_DICT_CASES = [
    case(lambda: small_model().load_state_dict(edited_state(lambda s: s.pop("2.bias"))),
         RuntimeError, "Missing key", "2.bias", id="missing-key"),
    case(lambda: small_model().load_state_dict(
             edited_state(lambda s: s.__setitem__("extra.weight", np.zeros(2)))),
         RuntimeError, "Unexpected key", "extra.weight", id="unexpected-key"),
    case(lambda: small_model().load_state_dict(
             edited_state(lambda s: s.__setitem__("0.weight", np.zeros((3, 2))))),
         RuntimeError, "0.weight", "(3, 2)", "(2, 3)", id="shape-mismatch"),
]


@pytest.mark.parametrize("action, exc, fragments", STATE_DICT_CASES)
def test_load_state_dict_rejects_mismatched_state(action, exc, fragments):
    check_raises(action, exc, fragments)


def test_failed_load_state_dict_leaves_the_model_unchanged():
    model = small_model()
    before = model.state_dict()
    bad = {name: value + 1 for name, value in before.items()}
    bad["0.weight"] = np.zeros((3, 2))
    with pytest.raises(RuntimeError):
        model.load_state_dict(bad)
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)


# ----------------------------------------------------------------------------- optimizers
OPTIMIZER_CASES = [
    *[
        case(lambda make=make: make([]), ValueError, "empty parameter list",
             id=f"{name}-empty-parameter-list")
        for name, make in OPTIMIZERS.items()
    ],
    *[
        case(lambda make=make: make(params(), lr=-0.1), ValueError, "learning rate", "-0.1",
             id=f"{name}-negative-lr")
        for name, make in OPTIMIZERS.items()
    ],
    case(lambda: optim.SGD(params(), lr=0.1, nesterov=True), ValueError,
         "Nesterov", "momentum", id="SGD-nesterov-without-momentum"),
    case(lambda: optim.SGD(params(), lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
         ValueError, "Nesterov", "dampening", id="SGD-nesterov-with-dampening"),
    case(lambda: optim.SGD([np.zeros(3)], lr=0.1), ValueError,
         "Parameter", "ndarray", id="array-instead-of-parameter"),
    case(lambda: optim.SGD([*params(), np.zeros(3)], lr=0.1), ValueError,
         "Parameter", "ndarray", id="array-among-parameters"),
    case(lambda: optim.Adam(small_model(), lr=0.1), ValueError,
         "Linear", "model.parameters()", id="model-instead-of-parameters"),
]


@pytest.mark.parametrize("action, exc, fragments", OPTIMIZER_CASES)
def test_optimizer_rejects_bad_arguments(action, exc, fragments):
    check_raises(action, exc, fragments)


# ----------------------------------------------------------------------------- schedulers
SCHEDULER_CASES = [
    case(lambda: lr_scheduler.StepLR(sgd(), step_size=0), ValueError,
         "step_size", "0", id="StepLR-step-size-0"),
    case(lambda: lr_scheduler.CosineAnnealingLR(sgd(), T_max=0), ValueError,
         "T_max", "0", id="CosineAnnealingLR-T-max-0"),
    case(lambda: lr_scheduler.WarmupCosineLR(sgd(), warmup_steps=10, total_steps=10), ValueError,
         "warmup_steps", "total_steps", id="WarmupCosineLR-warmup-equals-total"),
    case(lambda: lr_scheduler.WarmupCosineLR(sgd(), warmup_steps=-1, total_steps=10), ValueError,
         "warmup_steps", "-1", id="WarmupCosineLR-negative-warmup"),
    case(lambda: lr_scheduler.LinearLR(sgd(), start_factor=0.0), ValueError,
         "start_factor", id="LinearLR-start-factor-0"),
    case(lambda: lr_scheduler.LinearLR(sgd(), total_iters=0), ValueError,
         "total_iters", id="LinearLR-total-iters-0"),
    case(lambda: lr_scheduler.LambdaLR(sgd(), [lambda e: 1.0] * 3), ValueError,
         "lr_lambdas", "1", "3", id="LambdaLR-wrong-number-of-lambdas"),
]


@pytest.mark.parametrize("action, exc, fragments", SCHEDULER_CASES)
def test_scheduler_rejects_bad_arguments(action, exc, fragments):
    check_raises(action, exc, fragments)


# ----------------------------------------------------------------------------- data
def dataset(n=10):
    return TensorDataset(floats(n, 3), np.arange(n))


DATA_CASES = [
    case(lambda: DataLoader(TensorDataset(np.zeros((0, 3)))), ValueError,
         "empty dataset", id="loader-empty-dataset"),
    *[
        case(lambda bs=bs: DataLoader(dataset(), batch_size=bs), ValueError,
             "batch_size", repr(bs), id=f"loader-batch-size-{bs!r}")
        for bs in (0, -1, 2.0, True)
    ],
    case(lambda: TensorDataset(np.zeros((10, 3)), np.zeros(9)), ValueError,
         "first dimension", "(10, 3)", "(9,)", id="tensordataset-mismatched-lengths"),
    case(lambda: TensorDataset(), ValueError, "at least one array", id="tensordataset-no-arrays"),
    *[
        case(lambda lengths=lengths: random_split(dataset(), lengths), ValueError,
             "random_split", "10", id=f"random_split-{lengths}")
        for lengths in ([5, 4], [6, 6], [12, -2], [0.5, 0.4])
    ],
    # A negative fraction must not silently produce a split of the wrong size.
    case(lambda: random_split(dataset(), [1.2, -0.2]), ValueError,
         id="random_split-fraction-outside-0-1"),
    case(lambda: Dataset(), TypeError, "abstract", id="dataset-is-abstract"),
    case(lambda: CharTokenizer(["emma"]).encode("eve"), ValueError,
         "'v'", "position 1", "'eve'", "vocabulary of 4 tokens", id="tokenizer-unknown-character"),
    case(lambda: CharTokenizer(["ann", "st.john"]), ValueError,
         "'.'", "'st.john'", "boundary", id="tokenizer-boundary-in-a-word"),
    case(lambda: CharTokenizer(["ann"], boundary="<>"), ValueError,
         "single character", "'<>'", id="tokenizer-long-boundary"),
    case(lambda: CharTokenizer(["ann"]).decode([0, 3]), IndexError,
         "decode", "index 3", "vocabulary of size 3", id="tokenizer-decode-out-of-range"),
    case(lambda: CharTokenizer(["ann"]).decode(np.array([0.0, 1.0])), ValueError,
         "decode", "integer", id="tokenizer-decode-floats"),
    *[
        case(lambda b=b: context_windows(["ann"], CharTokenizer(["ann"]), b), ValueError,
             "block_size", repr(b), id=f"context-windows-block-size-{b!r}")
        for b in (0, 2.0, True)
    ],
]


@pytest.mark.parametrize("action, exc, fragments", DATA_CASES)
def test_data_rejects_bad_arguments(action, exc, fragments):
    check_raises(action, exc, fragments)
