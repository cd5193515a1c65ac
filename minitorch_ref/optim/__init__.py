"""Optimizers and learning-rate schedules with PyTorch's update rules."""
from minitorch_ref.optim import lr_scheduler
from minitorch_ref.optim.adam import Adam, AdamW
from minitorch_ref.optim.groups import weight_decay_groups
from minitorch_ref.optim.optimizer import Optimizer
from minitorch_ref.optim.rmsprop import RMSprop
from minitorch_ref.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler",
           "weight_decay_groups"]
