"""minitorch_ref: the reference solution of the course, a numpy framework with
PyTorch's names and semantics and hand-written gradients (no autograd)."""
from minitorch_ref import data, gradcheck, nn, optim
from minitorch_ref._random import default_rng, manual_seed
from minitorch_ref.serialization import load, save
from minitorch_ref.training import evaluate, fit, predict

__all__ = ["nn", "optim", "data", "gradcheck", "manual_seed", "default_rng", "save", "load",
           "fit", "evaluate", "predict"]
