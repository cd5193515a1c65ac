"""The differentiable operations: each a ``Function`` with forward and local backward."""
from minitorch_ref.autograd.functions.arithmetic import Add, Div, MatMul, Mul, Neg, Pow, Sub
from minitorch_ref.autograd.functions.elementwise import Exp, Log, ReLU, Sigmoid, Tanh
from minitorch_ref.autograd.functions.function import Function, unbroadcast
from minitorch_ref.autograd.functions.shape import GetItem, Mean, Reshape, Sum, Transpose

__all__ = [
    "Function", "unbroadcast",
    "Add", "Sub", "Neg", "Mul", "Div", "Pow", "MatMul",
    "Exp", "Log", "ReLU", "Tanh", "Sigmoid",
    "Sum", "Mean", "Reshape", "Transpose", "GetItem",
]
