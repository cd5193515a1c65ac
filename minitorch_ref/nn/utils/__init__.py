"""Utilities that act on a model's parameters (PyTorch's ``torch.nn.utils``)."""
from minitorch_ref.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_"]
