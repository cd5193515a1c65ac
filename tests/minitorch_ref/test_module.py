"""Module and Parameter: registration, traversal, modes, state_dict, printing, dtype."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn, optim

from helpers import build, case_ids, perturb_parameters, randn, warm_up


class Block(nn.Module):
    """A custom module with its own parameter and buffer, and two children."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.scale = nn.Parameter(np.ones(4))
        self.bn = nn.BatchNorm1d(4)
        self.register_buffer("steps", np.zeros(1))
        self.normalized = None

    def forward(self, x):
        self.normalized = self.bn(self.fc(x))
        return self.normalized * self.scale.data

    def backward(self, grad_output):
        self.scale.grad += np.sum(grad_output * self.normalized, axis=0)
        return self.fc.backward(self.bn.backward(grad_output * self.scale.data))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.act = nn.ReLU()
        self.head = nn.Sequential(nn.Linear(4, 2), nn.Sequential(nn.Tanh()))
        self.temperature = nn.Parameter(np.array(1.0))
        self.logits = None

    def forward(self, x):
        self.logits = self.head(self.act(self.block(x)))
        return self.logits * self.temperature.data

    def backward(self, grad_output):
        self.temperature.grad += np.sum(grad_output * self.logits)
        grad = self.head.backward(grad_output * self.temperature.data)
        return self.block.backward(self.act.backward(grad))


NET_PARAMETERS = [
    "temperature", "block.scale", "block.fc.weight", "block.fc.bias",
    "block.bn.weight", "block.bn.bias", "head.0.weight", "head.0.bias",
]
NET_BUFFERS = [
    "block.steps", "block.bn.running_mean", "block.bn.running_var", "block.bn.num_batches_tracked",
]


def make_net(seed=0):
    return build(Net, seed=seed)


def trained_net(seed=0):
    """A Net whose parameters and BatchNorm statistics have moved from their initial values."""
    net = make_net(seed)
    perturb_parameters(net, seed=seed + 1)
    warm_up(net, randn(6, 3, seed=seed))
    return net


# ----------------------------------------------------------------------------- Parameter
@pytest.mark.parametrize(
    "data, dtype",
    [
        (np.arange(6.0).reshape(2, 3), np.float64),
        (np.ones(4, dtype=np.float32), np.float32),
        (np.arange(6).reshape(3, 2), np.float64),
        ([[1, 2], [3, 4]], np.float64),
        (np.array(2.5), np.float64),
    ],
    ids=["float64", "float32_kept", "int_array", "int_list", "scalar"],
)
def test_parameter_data_dtype_and_zero_grad_of_same_shape(data, dtype):
    p = nn.Parameter(data)
    assert p.dtype == dtype and p.data.dtype == dtype
    np.testing.assert_array_equal(p.data, np.asarray(data))
    assert p.grad.shape == p.shape == np.shape(data)
    assert p.grad.dtype == dtype
    assert not np.any(p.grad)
    assert p.size == np.size(data)


def test_parameter_zero_grad_is_in_place():
    p = nn.Parameter(np.ones(3))
    grad = p.grad
    grad += 5
    p.zero_grad()
    assert p.grad is grad and not np.any(grad)


# ----------------------------------------------------------------------------- registration
def test_attribute_assignment_registers_parameters_modules_and_buffers():
    net = make_net()
    assert net.temperature is dict(net.named_parameters())["temperature"]
    assert list(net.children()) == [net.block, net.act, net.head]
    assert [name for name, _ in net.named_modules()] == [
        "", "block", "block.fc", "block.bn", "act", "head", "head.0", "head.1", "head.1.0",
    ]
    assert [name for name, _ in net.named_buffers()] == NET_BUFFERS
    assert net.block.steps is dict(net.named_buffers())["block.steps"]


def test_plain_attributes_are_not_registered():
    net = make_net()
    net.note = "hello"
    net.cache = np.zeros(3)  # an array that is neither a Parameter nor a registered buffer
    assert net.note == "hello"
    assert "cache" not in net.state_dict()
    assert [name for name, _ in net.named_parameters()] == NET_PARAMETERS


def test_assigning_a_new_array_to_a_buffer_keeps_it_registered():
    block = build(Block)
    block.steps = np.array([7.0])
    np.testing.assert_array_equal(block.state_dict()["steps"], [7.0])


@pytest.mark.parametrize(
    "attribute, make_value, registry",
    [
        ("temperature", lambda: None, "named_parameters"),
        ("temperature", lambda: np.array(1.0), "named_parameters"),
        ("temperature", nn.ReLU, "named_parameters"),
        ("act", lambda: None, "named_modules"),
        ("act", lambda: nn.Parameter(np.zeros(2)), "named_modules"),
    ],
    ids=["param_to_none", "param_to_array", "param_to_module", "module_to_none",
         "module_to_param"],
)
def test_reassigning_an_attribute_unregisters_the_old_value(attribute, make_value, registry):
    net = make_net()
    new_value = make_value()
    setattr(net, attribute, new_value)

    assert getattr(net, attribute) is new_value
    assert attribute not in [name for name, _ in getattr(net, registry)()]


def test_deleting_a_parameter_attribute_unregisters_it():
    layer = build(lambda: nn.Linear(2, 3))
    del layer.bias
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    with pytest.raises(AttributeError):
        layer.bias


def test_named_parameters_are_dotted_and_in_registration_order():
    net = make_net()
    assert [name for name, _ in net.named_parameters()] == NET_PARAMETERS
    assert net.parameters() == [p for _, p in net.named_parameters()]
    assert net.parameters()[2] is net.block.fc.weight


@pytest.mark.parametrize(
    "make_model, expected_names",
    [
        (lambda a, b: (setattr(b, "weight", a.weight), nn.Sequential(a, b))[1],
         ["0.weight", "0.bias", "1.bias"]),
        (lambda a, b: nn.Sequential(a, nn.ReLU(), a), ["0.weight", "0.bias"]),
    ],
    ids=["shared_parameter", "shared_module"],
)
def test_parameters_lists_shared_parameters_once(make_model, expected_names):
    a, b = build(lambda: nn.Linear(3, 3)), build(lambda: nn.Linear(3, 3), seed=1)
    model = make_model(a, b)
    assert [name for name, _ in model.named_parameters()] == expected_names
    assert len({id(p) for p in model.parameters()}) == len(model.parameters())


def test_grads_are_the_parameter_grad_arrays_in_order():
    net = make_net()
    net(randn(4, 3))
    net.backward(np.ones((4, 2)))
    grads = net.grads()
    assert len(grads) == len(net.parameters())
    assert all(g is p.grad for g, p in zip(grads, net.parameters()))


def test_zero_grad_zeros_every_parameter_gradient():
    net = make_net()
    net(randn(4, 3))
    net.backward(randn(4, 2))
    assert np.any(net.head[0].weight.grad) and np.any(net.block.scale.grad)
    net.zero_grad()
    assert not any(np.any(p.grad) for p in net.parameters())


# ----------------------------------------------------------------------------- modes
@pytest.mark.parametrize("switch, expected", [
    (lambda m: m.eval(), False),
    (lambda m: m.train(False), False),
    (lambda m: m.eval().train(), True),
    (lambda m: m.eval().train(True), True),
], ids=["eval", "train_false", "eval_then_train", "eval_then_train_true"])
def test_train_and_eval_propagate_to_every_submodule(switch, expected):
    net = make_net()
    assert switch(net) is net
    assert [m.training for m in net.modules()] == [expected] * len(list(net.modules()))


def test_eval_mode_changes_nested_dropout_and_batchnorm_behaviour():
    model = build(lambda: nn.Sequential(nn.Sequential(nn.Dropout(0.5)), nn.BatchNorm1d(3)))
    x = randn(5, 3)
    model.eval()
    # Dropout is the identity and BatchNorm uses its initial running stats (0 mean, 1 var).
    np.testing.assert_allclose(model(x), x / np.sqrt(1 + 1e-5))


# ----------------------------------------------------------------------------- state_dict
def test_state_dict_holds_every_parameter_and_buffer():
    net = trained_net()
    state = net.state_dict()

    assert set(state) == set(NET_PARAMETERS) | set(NET_BUFFERS)
    for name, p in net.named_parameters():
        np.testing.assert_array_equal(state[name], p.data)
    np.testing.assert_array_equal(state["block.bn.running_mean"], net.block.bn.running_mean)
    np.testing.assert_array_equal(state["block.bn.running_var"], net.block.bn.running_var)
    assert state["block.bn.num_batches_tracked"] == 3  # warm_up ran 3 training batches
    assert np.issubdtype(state["block.bn.num_batches_tracked"].dtype, np.integer)


def test_state_dict_returns_copies():
    net = trained_net()
    state = net.state_dict()
    saved = {k: v.copy() for k, v in state.items()}

    warm_up(net, randn(6, 3, seed=9))  # moves running stats
    perturb_parameters(net, seed=9)  # moves parameters in place
    for key, value in state.items():
        np.testing.assert_array_equal(value, saved[key], err_msg=key)

    current = net.state_dict()
    for value in state.values():
        value += 100
    for key, value in net.state_dict().items():
        np.testing.assert_array_equal(value, current[key], err_msg=key)


def test_load_state_dict_round_trip_predicts_identically():
    source, copy = trained_net(seed=0), make_net(seed=5)
    x = randn(7, 3, seed=2)

    copy.load_state_dict(source.state_dict())

    np.testing.assert_array_equal(copy.eval()(x), source.eval()(x))
    for key, value in source.state_dict().items():
        np.testing.assert_array_equal(copy.state_dict()[key], value, err_msg=key)


def test_load_state_dict_is_in_place_so_optimizer_keeps_working():
    net = make_net(seed=5)
    optimizer = optim.SGD(net.parameters(), lr=0.1)
    params = net.parameters()
    arrays = [p.data for p in params]
    source_state = trained_net(seed=0).state_dict()

    net.load_state_dict(source_state)

    assert net.parameters() == params
    assert all(p.data is a for p, a in zip(params, arrays))
    assert all(p is q for p, q in zip(optimizer.param_groups[0]["params"], params))
    np.testing.assert_array_equal(net.head[0].weight.data, source_state["head.0.weight"])
    # A step of the optimizer still moves the model's weights.
    net(randn(4, 3))
    net.backward(np.ones((4, 2)))
    optimizer.step()
    assert not np.array_equal(net.head[0].weight.data, source_state["head.0.weight"])


def _without(state, key):
    del state[key]
    return state


def _with(state, key, value):
    state[key] = value
    return state


@pytest.mark.parametrize(
    "edit, fragments",
    [
        (lambda s: _without(s, "head.0.bias"), ["Missing key", "head.0.bias"]),
        (lambda s: _without(s, "block.bn.running_var"), ["Missing key", "block.bn.running_var"]),
        (lambda s: _with(s, "head.1.weight", np.zeros(2)), ["Unexpected key", "head.1.weight"]),
        (lambda s: _with(s, "head.0.weight", np.zeros((5, 2))),
         ["head.0.weight", "(5, 2)", "(4, 2)"]),
        (lambda s: _with(s, "block.bn.running_mean", np.zeros(3)),
         ["block.bn.running_mean", "(3,)", "(4,)"]),
    ],
    ids=["missing_param", "missing_buffer", "unexpected", "shape_mismatch_param",
         "shape_mismatch_buffer"],
)
def test_load_state_dict_errors_name_the_problem(edit, fragments):
    net = make_net()
    state = edit(trained_net(seed=1).state_dict())
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(state)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_load_state_dict_lists_every_problem_at_once():
    state = make_net().state_dict()
    del state["temperature"]
    state["extra"] = np.zeros(1)
    state["head.0.bias"] = np.zeros(3)
    with pytest.raises(RuntimeError) as info:
        make_net().load_state_dict(state)
    for fragment in ("temperature", "extra", "head.0.bias"):
        assert fragment in str(info.value)


def test_load_state_dict_not_strict_ignores_missing_and_unexpected_keys():
    net, source = make_net(seed=5), trained_net(seed=0)
    untouched = net.head[0].bias.data.copy()
    state = source.state_dict()
    del state["head.0.bias"]
    state["extra.weight"] = np.zeros(3)

    net.load_state_dict(state, strict=False)

    np.testing.assert_array_equal(net.head[0].weight.data, source.head[0].weight.data)
    np.testing.assert_array_equal(net.block.bn.running_mean, source.block.bn.running_mean)
    np.testing.assert_array_equal(net.head[0].bias.data, untouched)


def test_load_state_dict_not_strict_still_rejects_shape_mismatch():
    state = make_net().state_dict()
    state["head.0.weight"] = np.zeros((5, 2))
    with pytest.raises(RuntimeError, match="head.0.weight"):
        make_net().load_state_dict(state, strict=False)


def test_forgetting_super_init_gives_a_clear_error():
    class Forgetful(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(RuntimeError, match=r"super\(\)\.__init__\(\)"):
        Forgetful()


# ----------------------------------------------------------------------------- printing
class Scaled(nn.Module):
    """A module with both an extra_repr and a child."""

    def __init__(self):
        super().__init__()
        self.inner = nn.ReLU()

    def extra_repr(self):
        return "factor=2"


class Printed(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Flatten(), nn.Linear(4, 3, bias=False), nn.LeakyReLU(0.2),
            nn.Sequential(nn.GELU("tanh"), nn.Identity()),
        )
        self.scaled = Scaled()
        self.head = nn.Sequential(nn.Linear(3, 2), nn.Softmax(dim=-1), nn.LogSoftmax(dim=0))


@pytest.mark.parametrize(
    "model, expected",
    [
        (lambda: nn.ReLU(), "ReLU()"),
        (lambda: nn.Sequential(), "Sequential()"),
        (lambda: nn.Linear(2, 3), "Linear(in_features=2, out_features=3, bias=True)"),
        (lambda: nn.Sequential(nn.Linear(2, 3), nn.ReLU()),
         "Sequential(\n"
         "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
         "  (1): ReLU()\n"
         ")"),
        (Scaled, "Scaled(\n  factor=2\n  (inner): ReLU()\n)"),
        (Printed,
         "Printed(\n"
         "  (features): Sequential(\n"
         "    (0): Flatten(start_dim=1, end_dim=-1)\n"
         "    (1): Linear(in_features=4, out_features=3, bias=False)\n"
         "    (2): LeakyReLU(negative_slope=0.2)\n"
         "    (3): Sequential(\n"
         "      (0): GELU(approximate='tanh')\n"
         "      (1): Identity()\n"
         "    )\n"
         "  )\n"
         "  (scaled): Scaled(\n"
         "    factor=2\n"
         "    (inner): ReLU()\n"
         "  )\n"
         "  (head): Sequential(\n"
         "    (0): Linear(in_features=3, out_features=2, bias=True)\n"
         "    (1): Softmax(dim=-1)\n"
         "    (2): LogSoftmax(dim=0)\n"
         "  )\n"
         ")"),
    ],
    ids=["leaf", "empty_sequential", "leaf_with_extra_repr", "sequential", "extra_repr_and_child",
         "nested"],
)
def test_print_matches_pytorch_format(model, expected, capsys):
    print(build(model))
    assert capsys.readouterr().out == expected + "\n"


# ----------------------------------------------------------------------------- dtype
def test_to_float32_casts_parameters_grads_and_float_buffers():
    net = trained_net()
    net(randn(4, 3))
    net.backward(np.ones((4, 2)))

    assert net.to(np.float32) is net

    for name, p in net.named_parameters():
        assert (p.data.dtype, p.grad.dtype) == (np.float32, np.float32), name
    buffers = dict(net.named_buffers())
    for name in ("block.steps", "block.bn.running_mean", "block.bn.running_var"):
        assert buffers[name].dtype == np.float32, name
    assert buffers["block.bn.num_batches_tracked"].dtype == np.int64
    assert net.eval()(randn(4, 3).astype(np.float32)).dtype == np.float32


# ----------------------------------------------------------------------------- misuse
MODULES = [
    ("linear", lambda: nn.Linear(3, 3)),
    ("relu", nn.ReLU),
    ("leaky_relu", nn.LeakyReLU),
    ("sigmoid", nn.Sigmoid),
    ("tanh", nn.Tanh),
    ("gelu", nn.GELU),
    ("softmax", nn.Softmax),
    ("log_softmax", nn.LogSoftmax),
    ("identity", nn.Identity),
    ("flatten", nn.Flatten),
    ("dropout", nn.Dropout),
    ("dropout_eval", lambda: nn.Dropout().eval()),
    ("batchnorm", lambda: nn.BatchNorm1d(3)),
    ("sequential", lambda: nn.Sequential(nn.Linear(3, 3), nn.ReLU())),
]
LOSSES = [
    ("mse", nn.MSELoss),
    ("bce", nn.BCELoss),
    ("bce_with_logits", nn.BCEWithLogitsLoss),
    ("cross_entropy", nn.CrossEntropyLoss),
    ("nll", nn.NLLLoss),
]


@pytest.mark.parametrize("name, factory", MODULES, ids=case_ids(MODULES))
def test_module_backward_before_forward_raises(name, factory):
    module = build(factory)
    with pytest.raises(RuntimeError, match="forward"):
        module.backward(np.ones((2, 3)))


@pytest.mark.parametrize("name, factory", LOSSES, ids=case_ids(LOSSES))
def test_loss_backward_before_forward_raises(name, factory):
    with pytest.raises(RuntimeError, match="forward"):
        factory().backward()


def test_register_buffer_turns_a_plain_attribute_into_a_buffer():
    # Module.__setattr__'s fast path keeps a plain attribute plain; register_buffer
    # must still move one into the buffers.
    layer = nn.Module()
    layer.running = np.zeros(2)
    layer.register_buffer("running", np.ones(2))
    layer.running = np.full(2, 3.0)
    np.testing.assert_array_equal(layer.state_dict()["running"], [3.0, 3.0])
