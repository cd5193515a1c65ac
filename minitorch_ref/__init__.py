"""minitorch_ref: the reference solution of the course, a numpy framework with
PyTorch's names and semantics and hand-written gradients; ``autograd`` is the
bonus unit's reverse-mode engine built on the same arrays."""
from minitorch_ref import autograd, data, gradcheck, nn, optim
from minitorch_ref._random import default_rng, manual_seed
from minitorch_ref.serialization import load, save
from minitorch_ref.training import evaluate, fit, predict

__all__ = ["nn", "optim", "data", "gradcheck", "autograd", "manual_seed", "default_rng", "save", "load",
           "fit", "evaluate", "predict"]
