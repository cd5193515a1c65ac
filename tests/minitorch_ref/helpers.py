"""Shared builders for the minitorch_ref unit tests (imported as ``helpers``)."""
from __future__ import annotations

import numpy as np
from scipy import special

import minitorch_ref
from minitorch_ref import nn

# A correct backward agrees with central differences (h=1e-5, float64) to ~1e-9;
# anything above this is a bug.
GRAD_TOL = 1e-6

# Entries closer to 0 than this are pushed out to +-KINK_GAP, so that the
# finite-difference step (1e-5) never crosses the kink of ReLU / LeakyReLU.
KINK_GAP = 1e-3


def randn(*shape: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """A float64 standard-normal array (times ``scale``) with no entry within KINK_GAP of 0."""
    x = scale * np.random.default_rng(seed).standard_normal(shape)
    return away_from_zero(x)


def away_from_zero(x: np.ndarray, gap: float = KINK_GAP) -> np.ndarray:
    x = np.array(x, dtype=np.float64)
    small = np.abs(x) < gap
    x[small] = np.where(x[small] < 0, -gap, gap)
    return x


def loss_inputs(kind: str, n: int, c: int, seed: int = 0, scale: float = 2.0):
    """(pred, target) of shape (n, c) (class targets: (n,)) for a loss of the given kind."""
    rng = np.random.default_rng(seed)
    if kind == "regression":
        return randn(n, c, seed=seed, scale=scale), rng.standard_normal((n, c))
    if kind in ("probs_hard", "probs_soft"):
        # Kept away from 0 and 1 so that p +- h stays a probability.
        pred = rng.uniform(0.05, 0.95, (n, c))
    elif kind in ("logits_hard", "logits_soft", "class_logits"):
        pred = randn(n, c, seed=seed, scale=scale)
    elif kind == "class_log_probs":
        pred = special.log_softmax(randn(n, c, seed=seed, scale=scale), axis=1)
    else:
        raise ValueError(kind)
    if kind.endswith("_hard"):
        return pred, rng.integers(0, 2, (n, c)).astype(np.float64)
    if kind.endswith("_soft"):
        return pred, rng.uniform(0, 1, (n, c))
    return pred, rng.integers(0, c, n)


# (id, factory(reduction, n_columns), kind of inputs for loss_inputs)
LOSS_CASES = [
    ("mse", lambda r, c: nn.MSELoss(reduction=r), "regression"),
    ("bce", lambda r, c: nn.BCELoss(reduction=r), "probs_hard"),
    ("bce_soft_targets", lambda r, c: nn.BCELoss(reduction=r), "probs_soft"),
    ("bce_with_logits", lambda r, c: nn.BCEWithLogitsLoss(reduction=r), "logits_hard"),
    ("bce_with_logits_pos_weight",
     lambda r, c: nn.BCEWithLogitsLoss(reduction=r, pos_weight=3.0), "logits_hard"),
    ("bce_with_logits_pos_weight_per_column",
     lambda r, c: nn.BCEWithLogitsLoss(reduction=r, pos_weight=np.linspace(0.5, 4.0, c)),
     "logits_soft"),
    ("cross_entropy", lambda r, c: nn.CrossEntropyLoss(reduction=r), "class_logits"),
    ("cross_entropy_smoothing",
     lambda r, c: nn.CrossEntropyLoss(reduction=r, label_smoothing=0.2), "class_logits"),
    ("nll", lambda r, c: nn.NLLLoss(reduction=r), "class_log_probs"),
]


def case_ids(cases) -> list[str]:
    return [case[0] for case in cases]


def build(factory, seed: int = 0) -> nn.Module:
    """Build a module with the package generator seeded, so initial weights are reproducible."""
    minitorch_ref.manual_seed(seed)
    return factory()


def warm_up(model: nn.Module, x: np.ndarray, steps: int = 3, seed: int = 0) -> nn.Module:
    """Run a few training forwards on shifted/scaled copies of ``x`` so that
    BatchNorm running statistics are far from their initial zeros/ones."""
    model.train()
    rng = np.random.default_rng(seed + 100)
    for _ in range(steps):
        model(x * rng.uniform(0.5, 2.0) + rng.normal(size=x.shape[1:]))
    return model


def set_mode(model: nn.Module, mode: str) -> nn.Module:
    assert mode in ("train", "eval")
    return model.train(mode == "train")


def assert_gradients_ok(errors: dict[str, float], expected_keys, tol: float = GRAD_TOL) -> None:
    """Every gradient checked (input and the expected parameters) and every error below tol."""
    assert set(errors) == {"input", *expected_keys}, f"checked gradients: {sorted(errors)}"
    bad = {name: err for name, err in errors.items() if not err < tol}
    assert not bad, f"relative errors above {tol}: {bad}"


def perturb_parameters(model: nn.Module, seed: int = 1) -> None:
    """Change every parameter in place (a stand-in for a few training steps)."""
    rng = np.random.default_rng(seed)
    for p in model.parameters():
        p.data += rng.normal(size=p.shape)


class Recorder(nn.Module):
    """``y = scale * x + shift``; logs (event, name, received array) for forward and backward."""

    def __init__(self, name: str, log: list, scale: float = 1.0, shift: float = 0.0) -> None:
        super().__init__()
        self.name, self.log, self.scale, self.shift = name, log, scale, shift

    def forward(self, x):
        self.log.append(("forward", self.name, np.array(x, copy=True)))
        return self.scale * x + self.shift

    def backward(self, grad_output):
        self.log.append(("backward", self.name, np.array(grad_output, copy=True)))
        return self.scale * grad_output
