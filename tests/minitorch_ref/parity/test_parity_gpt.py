"""PyTorch parity of unit 16's pieces, in float64: the whole GPT's logits, loss and every
gradient against the same model in torch (its blocks ``torch.nn.TransformerEncoderLayer``,
its head tied by sharing the Parameter), ``clip_grad_norm_`` and ``clip_grad_value_``, and
AdamW over ``weight_decay_groups``."""
import numpy as np
import pytest

from bench import _twins
from minitorch_ref import nn as mnn
from minitorch_ref import optim
from minitorch_ref.models import GPT, GPTConfig
from minitorch_ref.nn.utils import clip_grad_norm_, clip_grad_value_

from .conftest import assert_close, needs_torch, to_torch, torch, torch_layout

pytestmark = needs_torch


def torch_gpt(model: GPT):
    """The same architecture in torch, in float64, holding ``model``'s parameters."""
    return _twins.torch_gpt(model, torch.float64)


CONFIGS = [
    pytest.param(GPTConfig(vocab_size=13, block_size=8, n_layer=2, n_head=2, n_embd=16),
                 id="tied"),
    pytest.param(GPTConfig(vocab_size=13, block_size=8, n_layer=1, n_head=4, n_embd=16,
                           tie_weights=False, bias=False), id="untied-no-bias"),
]


@pytest.mark.parametrize("length", [8, 5], ids=["full-context", "short"])
@pytest.mark.parametrize("config", CONFIGS)
def test_gpt_logits_loss_and_every_gradient(config, length):
    rng = np.random.default_rng(0)
    model = GPT(config, rng=rng)
    twin = torch_gpt(model)
    idx = rng.integers(0, config.vocab_size, (3, length))
    targets = rng.integers(0, config.vocab_size, (3, length))
    criterion = mnn.CrossEntropyLoss()
    logits = model(idx)
    loss = criterion(logits, targets)
    model.backward(criterion.backward())
    logits_t = twin(torch.as_tensor(idx))
    loss_t = torch.nn.functional.cross_entropy(logits_t.reshape(-1, config.vocab_size),
                                               torch.as_tensor(targets).reshape(-1))
    loss_t.backward()
    assert_close(logits, logits_t, "logits")
    assert_close(loss, loss_t, "loss")
    named = dict(model.named_parameters())
    assert set(named) == {name for name, _ in twin.named_parameters()}
    for name, param in named.items():
        assert_close(param.grad, torch_layout(model, name, twin.get_parameter(name).grad),
                     f"{name}.grad")


def parameters_with_gradients(rng, shapes=((3, 4), (5,), (2, 2, 3))):
    ours, theirs = [], []
    for shape in shapes:
        data, grad = rng.standard_normal(shape), rng.standard_normal(shape) * 3
        param = mnn.Parameter(data.copy())
        param.grad[...] = grad
        twin = torch.nn.Parameter(to_torch(data))
        twin.grad = to_torch(grad)
        ours.append(param)
        theirs.append(twin)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e6], ids=["clipped", "unclipped"])
def test_clip_grad_norm(max_norm, norm_type):
    ours, theirs = parameters_with_gradients(np.random.default_rng(1))
    total = clip_grad_norm_(ours, max_norm, norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert_close(total, total_t, "total norm before clipping")
    for index, (param, twin) in enumerate(zip(ours, theirs)):
        assert_close(param.grad, twin.grad, f"gradient {index}")


def test_clip_grad_norm_skips_a_parameter_without_a_gradient():
    """A parameter whose grad is None (frozen, or reached by no loss) counts for nothing in
    the norm and keeps None, as in torch."""
    ours, theirs = parameters_with_gradients(np.random.default_rng(4))
    ours[1].grad, theirs[1].grad = None, None
    assert_close(clip_grad_norm_(ours, 0.5), torch.nn.utils.clip_grad_norm_(theirs, 0.5),
                 "total norm before clipping")
    assert ours[1].grad is None
    for index in (0, 2):
        assert_close(ours[index].grad, theirs[index].grad, f"gradient {index}")


def test_clip_grad_value():
    ours, theirs = parameters_with_gradients(np.random.default_rng(2))
    clip_grad_value_(ours, 1.5)
    torch.nn.utils.clip_grad_value_(theirs, 1.5)
    for index, (param, twin) in enumerate(zip(ours, theirs)):
        assert_close(param.grad, twin.grad, f"gradient {index}")


def test_adamw_decays_the_matrices_only():
    """Five AdamW steps over ``weight_decay_groups`` equal torch's AdamW over the same groups
    (matrices decay, biases and LayerNorm weights do not)."""
    rng = np.random.default_rng(3)
    model = GPT(GPTConfig(vocab_size=7, block_size=4, n_layer=1, n_head=2, n_embd=8), rng=rng)
    twin = torch_gpt(model)
    groups = optim.weight_decay_groups(model, 0.1)
    optimizer = optim.AdamW(groups, lr=0.01)
    by_id = {id(p): name for name, p in model.named_parameters()}
    optimizer_t = torch.optim.AdamW(
        [{"params": [twin.get_parameter(by_id[id(p)]) for p in group["params"]],
          "weight_decay": group["weight_decay"]} for group in groups], lr=0.01)
    criterion = mnn.CrossEntropyLoss()
    for _ in range(5):
        idx, targets = rng.integers(0, 7, (2, 4)), rng.integers(0, 7, (2, 4))
        optimizer.zero_grad()
        criterion(model(idx), targets)
        model.backward(criterion.backward())
        optimizer.step()
        optimizer_t.zero_grad()
        torch.nn.functional.cross_entropy(twin(torch.as_tensor(idx)).reshape(-1, 7),
                                          torch.as_tensor(targets).reshape(-1)).backward()
        optimizer_t.step()
    for name, param in model.named_parameters():
        assert_close(param.data, torch_layout(model, name, twin.get_parameter(name)), name)
