"""minitorch_ref: the reference solution of the course, a numpy framework with
PyTorch's names and semantics and hand-written gradients (no autograd)."""
from minitorch_ref import data, gradcheck, nn, optim
from minitorch_ref._random import default_rng, manual_seed

__all__ = ["nn", "optim", "data", "gradcheck", "manual_seed", "default_rng"]
