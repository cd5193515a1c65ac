"""PyTorch parity of what unit 14's language models need, in float64: ``Embedding`` (lookup,
gradient into repeated rows, ``padding_idx``, initialisation), ``CrossEntropyLoss`` and
``NLLLoss`` over ``(B, T, V)`` logits and with ``ignore_index``, and a whole Bengio-style
MLP language model trained for a few Adam steps.
"""
import numpy as np
import pytest

from minitorch_ref import nn as mnn
from minitorch_ref import optim

from .conftest import assert_close, assert_same_parameters, needs_torch, to_torch, torch, twin

pytestmark = needs_torch

SEEDS = [0, 1, 2]
VOCAB, DIM = 7, 4


def token_batch(rng, shape, padding_idx=None):
    """Indices in [0, VOCAB) with repeats (few rows, many lookups) and the padding row."""
    indices = rng.integers(0, VOCAB, shape)
    if padding_idx is not None and indices.size:
        indices.reshape(-1)[::4] = padding_idx % VOCAB
    return indices


def check_embedding(module, indices, rng, backward_passes=1):
    """Forward output and the weight's gradient after ``backward_passes`` backward passes
    (accumulating, as in torch) equal the twin's."""
    twin_module = twin(module)
    y = module(indices)
    y_t = twin_module(torch.as_tensor(indices))
    assert_close(y, y_t, "forward output")
    for _ in range(backward_passes):
        grad_output = rng.standard_normal(np.shape(y))
        assert module.backward(grad_output) is None, "indices have no gradient"
        y_t.backward(to_torch(grad_output), retain_graph=True)
    assert_same_parameters(module, twin_module, attr="grad")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("padding_idx", [None, 0, 3, -1], ids=["nopad", "pad0", "pad3", "pad-1"])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (4, 3), (2, 3, 5), (0,)],
                         ids=["1d", "BT", "context3", "3d", "empty"])
def test_embedding(shape, padding_idx, seed):
    rng = np.random.default_rng(seed)
    module = mnn.Embedding(VOCAB, DIM, padding_idx=padding_idx, rng=rng)
    check_embedding(module, token_batch(rng, shape, padding_idx), rng)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_gradient_accumulates_over_backward_passes(padding_idx):
    rng = np.random.default_rng(4)
    module = mnn.Embedding(VOCAB, DIM, padding_idx=padding_idx, rng=rng)
    check_embedding(module, token_batch(rng, (6, 3), padding_idx), rng, backward_passes=3)


def test_embedding_of_one_row_repeated_sums_every_gradient():
    """Every lookup reads row 2: its gradient is the sum of all 12 upstream rows."""
    rng = np.random.default_rng(5)
    module = mnn.Embedding(VOCAB, DIM, rng=rng)
    check_embedding(module, np.full((4, 3), 2), rng)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_embedding_takes_any_integer_dtype(dtype):
    rng = np.random.default_rng(6)
    module = mnn.Embedding(VOCAB, DIM, rng=rng)
    indices = token_batch(rng, (3, 2)).astype(dtype)
    y = module(indices)
    torch_y = twin(module)(torch.as_tensor(indices.astype(np.int64)))
    assert_close(y, torch_y, "forward output")


@pytest.mark.parametrize("padding_idx", [0, 4, -1, -VOCAB])
def test_embedding_padding_idx_is_normalised_and_zeroed_as_torch(padding_idx):
    ours = mnn.Embedding(VOCAB, DIM, padding_idx=padding_idx, rng=np.random.default_rng(0))
    theirs = torch.nn.Embedding(VOCAB, DIM, padding_idx=padding_idx)
    assert ours.padding_idx == theirs.padding_idx
    assert np.all(ours.weight.data[ours.padding_idx] == 0)
    assert np.count_nonzero(ours.weight.data == 0) == DIM, "only the padding row is zero"


@pytest.mark.parametrize("padding_idx", [VOCAB, VOCAB + 3, -VOCAB - 1])
def test_embedding_rejects_the_padding_idx_torch_rejects(padding_idx):
    with pytest.raises(AssertionError):
        torch.nn.Embedding(VOCAB, DIM, padding_idx=padding_idx)
    with pytest.raises(ValueError, match=f"padding_idx={padding_idx}"):
        mnn.Embedding(VOCAB, DIM, padding_idx=padding_idx)


def test_embedding_init_is_torchs_standard_normal():
    ours = mnn.Embedding(1000, 200, rng=np.random.default_rng(0)).weight.data
    torch.manual_seed(0)
    theirs = torch.nn.Embedding(1000, 200, dtype=torch.float64).weight.detach().numpy()
    for sample in (ours, theirs):
        assert abs(sample.mean()) < 0.01
        np.testing.assert_allclose(sample.std(), 1.0, rtol=0.01)
    np.testing.assert_allclose(np.quantile(ours, [0.05, 0.5, 0.95]),
                               np.quantile(theirs, [0.05, 0.5, 0.95]), atol=0.02)


def test_embedding_draws_from_the_packages_seeded_generator():
    import minitorch_ref as mt

    mt.manual_seed(3)
    first = mnn.Embedding(VOCAB, DIM).weight.data
    mt.manual_seed(3)
    np.testing.assert_array_equal(first, mnn.Embedding(VOCAB, DIM).weight.data)


# ====================================================================== losses over sequences
def sequence_logits(rng, shape, scale=1.0, ignore_index=None):
    """Logits (..., V) and targets (...); every fifth target ignored when asked."""
    logits = rng.standard_normal(shape) * scale
    target = rng.integers(0, shape[-1], shape[:-1])
    if ignore_index is not None:
        target.reshape(-1)[::5] = ignore_index
    return logits, target


def check_rows_loss(loss, torch_loss, pred, target, log_probs=False):
    """Ours on ``(..., V)`` against torch on the same rows, ``reshape(-1, V)``."""
    if log_probs:
        pred = torch.log_softmax(to_torch(pred), dim=-1).numpy()
    value = loss(pred, target)
    pred_t = to_torch(pred, requires_grad=True)
    value_t = torch_loss(pred_t.reshape(-1, pred.shape[-1]), torch.as_tensor(target).reshape(-1))
    value_t.backward()
    assert_close(value, value_t, "loss value")
    assert_close(loss.backward(), pred_t.grad, "gradient wrt pred (in pred's shape)")


LOSSES = [
    pytest.param("CrossEntropyLoss", {}, id="CE"),
    pytest.param("CrossEntropyLoss", {"label_smoothing": 0.1}, id="CE-smooth0.1"),
    pytest.param("NLLLoss", {}, id="NLL"),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 1, 27), (4, 8, 27), (2, 2, 3, 4)],
                         ids=["B2T3V5", "B1T1", "B4T8V27", "4d"])
@pytest.mark.parametrize("name, kwargs", LOSSES)
def test_loss_over_sequences_is_the_loss_over_their_rows(name, kwargs, shape, reduction, seed):
    pred, target = sequence_logits(np.random.default_rng(seed), shape, scale=3.0)
    check_rows_loss(getattr(mnn, name)(reduction=reduction, **kwargs),
                    getattr(torch.nn, name)(reduction=reduction, **kwargs),
                    pred, target, log_probs=name == "NLLLoss")


def test_cross_entropy_over_sequences_is_torchs_with_the_classes_moved_second():
    """The same numbers as torch's own (N, C, T) layout once the class axis is moved."""
    pred, target = sequence_logits(np.random.default_rng(7), (3, 4, 6))
    value = mnn.CrossEntropyLoss()(pred, target)
    expected = torch.nn.functional.cross_entropy(to_torch(pred).transpose(1, 2),
                                                 torch.as_tensor(target))
    assert_close(value, expected, "loss value")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("ignore_index", [-100, 0, 3], ids=["default", "ignore0", "ignore3"])
@pytest.mark.parametrize("shape", [(10, 5), (2, 5, 5)], ids=["NC", "BTV"])
@pytest.mark.parametrize("name, kwargs", LOSSES)
def test_loss_ignore_index(name, kwargs, shape, ignore_index, reduction, seed):
    pred, target = sequence_logits(np.random.default_rng(seed), shape, ignore_index=ignore_index)
    check_rows_loss(getattr(mnn, name)(reduction=reduction, ignore_index=ignore_index, **kwargs),
                    getattr(torch.nn, name)(reduction=reduction, ignore_index=ignore_index,
                                            **kwargs),
                    pred, target, log_probs=name == "NLLLoss")


# ====================================================================== an MLP language model
def mlp_language_model(seed, vocab=VOCAB, block_size=3, dim=4, hidden=8):
    """Bengio et al. (2003): embed each of ``block_size`` tokens, concatenate, tanh layer, head."""
    rng = np.random.default_rng(seed)
    return mnn.Sequential(
        mnn.Embedding(vocab, dim, rng=rng), mnn.Flatten(),
        mnn.Linear(block_size * dim, hidden, rng=rng), mnn.Tanh(),
        mnn.Linear(hidden, vocab, rng=rng),
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_mlp_language_model_trains_as_torchs(seed):
    """Five Adam steps on the same batches: every parameter and its gradient as torch's."""
    rng = np.random.default_rng(seed)
    model = mlp_language_model(seed)
    twin_model = twin(model)
    criterion, twin_criterion = mnn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=0.05)
    twin_optimizer = torch.optim.Adam(twin_model.parameters(), lr=0.05)
    for _ in range(5):
        contexts, targets = rng.integers(0, VOCAB, (16, 3)), rng.integers(0, VOCAB, 16)
        model.zero_grad()
        loss = criterion(model(contexts), targets)
        model.backward(criterion.backward())
        twin_optimizer.zero_grad()
        twin_loss = twin_criterion(twin_model(torch.as_tensor(contexts)), torch.as_tensor(targets))
        twin_loss.backward()
        assert_close(loss, twin_loss, "loss")
        assert_same_parameters(model, twin_model, attr="grad")
        optimizer.step()
        twin_optimizer.step()
    assert_same_parameters(model, twin_model)
