"""Fixtures for the tests of course/: a headless matplotlib, and minitorch_ref as "a student's correct classes"."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import minitorch_ref as mt  # noqa: E402
from minitorch_ref import nn, optim  # noqa: E402
from minitorch_ref.data import DataLoader, TensorDataset  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def classes() -> dict:
    """The keyword arguments a notebook passes to Playground, with the reference classes."""
    return dict(
        Linear=nn.Linear, Sequential=nn.Sequential, ReLU=nn.ReLU, Tanh=nn.Tanh, Sigmoid=nn.Sigmoid,
        Dropout=nn.Dropout, CrossEntropyLoss=nn.CrossEntropyLoss, SGD=optim.SGD, Adam=optim.Adam,
        DataLoader=DataLoader, TensorDataset=TensorDataset, manual_seed=mt.manual_seed,
    )
