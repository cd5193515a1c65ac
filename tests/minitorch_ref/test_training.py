"""End to end: models built from minitorch_ref actually learn."""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import minitorch_ref as mt
from course.datasets import spiral
from minitorch_ref import demo, nn, optim
from minitorch_ref.data import DataLoader, TensorDataset

REPO = Path(__file__).resolve().parents[2]


def accuracy(model: nn.Module, X: np.ndarray, y: np.ndarray) -> float:
    model.eval()
    try:
        return float(np.mean(model(X).argmax(axis=1) == y))
    finally:
        model.train()


def fit(model, criterion, optimizer, X, y, epochs, batch_size=32):
    """The standard loop; returns the mean training loss of each epoch."""
    loader = DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True)
    history = []
    for _ in range(epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            loss = criterion(model(xb), yb)
            optimizer.zero_grad()
            model.backward(criterion.backward())
            optimizer.step()
            total += loss * len(xb)
        history.append(total / len(X))
    return history


def test_demo_mlp_fits_the_3_class_spiral():
    start = time.perf_counter()
    model, history = demo.train_spiral(epochs=200, seed=0, verbose=False)
    elapsed = time.perf_counter() - start
    X, y = spiral(n_per_class=100, n_classes=3, noise=0.2, seed=0)
    acc = accuracy(model, X, y)
    print(f"spiral: {acc:.1%} training accuracy in {elapsed:.2f} s")  # timing reported, not asserted
    assert acc >= 0.95
    assert history[-1] < history[0] / 10


def test_own_loop_fits_the_spiral_with_sgd_momentum():
    mt.manual_seed(1)
    X, y = spiral(n_per_class=100, n_classes=3, noise=0.2, seed=1)
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 3))
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    fit(model, nn.CrossEntropyLoss(), optimizer, X, y, epochs=150)
    assert accuracy(model, X, y) >= 0.95


def test_regression_with_mse_learns():
    mt.manual_seed(0)
    X = np.random.default_rng(0).uniform(-2, 2, size=(256, 1))
    y = np.sin(2 * X) + 0.5 * X
    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
    history = fit(model, nn.MSELoss(), optim.Adam(model.parameters(), lr=1e-2), X, y, epochs=100)
    assert history[-1] < history[0] / 20, f"loss {history[0]:.3g} -> {history[-1]:.3g}"


def test_binary_classification_with_bce_with_logits_learns():
    mt.manual_seed(0)
    X, labels = spiral(n_per_class=100, n_classes=2, noise=0.1, seed=0)
    y = labels.reshape(-1, 1).astype(np.float64)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 1))
    history = fit(model, nn.BCEWithLogitsLoss(), optim.AdamW(model.parameters(), lr=1e-2),
                  X, y, epochs=150)
    assert history[-1] < history[0] / 10, f"loss {history[0]:.3g} -> {history[-1]:.3g}"
    model.eval()
    assert np.mean((model(X) > 0) == (y > 0.5)) >= 0.95


def dropout_batchnorm_model():
    return nn.Sequential(nn.Linear(2, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.1),
                         nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.1),
                         nn.Linear(64, 3))


def test_dropout_batchnorm_model_trains_and_evaluates_deterministically():
    mt.manual_seed(0)
    X, y = spiral(n_per_class=100, n_classes=3, noise=0.2, seed=0)
    model, criterion = dropout_batchnorm_model(), nn.CrossEntropyLoss()

    def eval_loss():
        # Dropout noise makes the training loss jumpy; judge learning in eval mode.
        model.eval()
        loss = criterion(model(X), y)
        model.train()
        return loss

    before = eval_loss()
    fit(model, criterion, optim.Adam(model.parameters(), lr=1e-2), X, y, epochs=40)
    after = eval_loss()
    assert after < before / 5, f"eval loss {before:.3g} -> {after:.3g}"
    assert accuracy(model, X, y) >= 0.9

    model.eval()
    first = model(X)
    np.testing.assert_array_equal(model(X), first, err_msg="eval mode: same input, same output")
    # A single sample in eval mode gives the same row as inside the batch (running statistics).
    np.testing.assert_allclose(model(X[5:6]), first[5:6], rtol=1e-12, atol=1e-12)
    model.train()
    assert not np.array_equal(model(X), model(X)), "train mode: Dropout draws new masks"


def test_demo_module_runs_as_a_script():
    result = subprocess.run([sys.executable, "-m", "minitorch_ref.demo"], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    match = re.search(r"final training accuracy\s+\d+(\.\d+)?%", result.stdout)
    assert match, f"no final accuracy line in:\n{result.stdout}"
