"""Reverse-mode automatic differentiation on numpy arrays: the bonus unit's reference.

``Tensor`` records every operation in a graph; ``loss.backward()`` applies each
operation's local rule in reverse topological order. ``autograd.nn`` rebuilds the
MLP of the earlier units on it, trained by the optimizers of ``minitorch_ref.optim``.
"""
from minitorch_ref.autograd import functions, nn
from minitorch_ref.autograd.draw import draw_graph
from minitorch_ref.autograd.functions import Function
from minitorch_ref.autograd.grad_mode import is_grad_enabled, no_grad
from minitorch_ref.autograd.graph import topological_order
from minitorch_ref.autograd.tensor import Tensor

__all__ = ["Tensor", "Function", "no_grad", "is_grad_enabled", "topological_order",
           "draw_graph", "functions", "nn"]
