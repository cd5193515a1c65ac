"""summary(), fit()/evaluate()/predict() and save()/load() in .npz and .json."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch_ref as mt
from course.datasets import regression_curve, spiral
from minitorch_ref import nn, optim
from minitorch_ref.data import DataLoader, TensorDataset


def classifier(seed: int = 0, dtype=np.float64) -> nn.Sequential:
    mt.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 16, dtype=dtype), nn.BatchNorm1d(16, dtype=dtype), nn.ReLU(),
                         nn.Dropout(0.1), nn.Sequential(nn.Linear(16, 3, dtype=dtype)))


def loaders(X, y, batch_size=32):
    return (DataLoader(TensorDataset(X, y), batch_size, shuffle=True),
            DataLoader(TensorDataset(X, y), 128))


# ------------------------------------------------------------------------ summary
def test_summary_lists_leaf_layers_with_output_shapes_and_parameter_counts():
    table = classifier().summary((8, 2))
    assert [(r.name, r.kind, r.output_shape, r.params) for r in table.rows] == [
        ("0", "Linear", (8, 16), 48), ("1", "BatchNorm1d", (8, 16), 32), ("2", "ReLU", (8, 16), 0),
        ("3", "Dropout", (8, 16), 0), ("4.0", "Linear", (8, 3), 51)]
    assert table.total_params == 131
    text = str(table)
    assert "4.0 (Linear)" in text and "Total params: 131" in text and "(8, 3)" in text


def test_summary_leaves_the_model_as_it_was():
    model = classifier()
    before = model.state_dict()
    model.summary((4, 2))
    assert model.training and all(m.training for m in model.modules())
    assert "forward" not in vars(model[0])  # the class's forward is back
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[key])


# ------------------------------------------------------------------------ fit / evaluate / predict
def test_fit_returns_the_history_the_plots_read_and_learns(capsys):
    X, y = spiral(n_per_class=60, seed=1)
    model = classifier()
    optimizer = optim.Adam(model.parameters(), lr=0.05)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    train, val = loaders(X, y)
    history = mt.fit(model, nn.CrossEntropyLoss(), optimizer, train, epochs=40,
                     val_loader=val, scheduler=scheduler)
    assert set(history) == {"train_loss", "train_acc", "test_loss", "test_acc"}
    assert all(len(values) == 40 for values in history.values())
    assert history["train_loss"][-1] < 0.5 * history["train_loss"][0]
    assert history["test_acc"][-1] > 0.9
    assert scheduler.last_epoch == 40 and optimizer.param_groups[0]["lr"] == pytest.approx(0.0125)
    assert "epoch 40/40" in capsys.readouterr().out


def test_fit_on_regression_has_no_accuracy_and_can_be_silent(capsys):
    X, y = regression_curve(n_samples=64, seed=0)
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
    history = mt.fit(model, nn.MSELoss(), optim.SGD(model.parameters(), lr=0.1),
                     DataLoader(TensorDataset(X, y), 16), epochs=3, progress=False)
    assert set(history) == {"train_loss"}
    assert capsys.readouterr().out == ""


def test_evaluate_and_predict_use_eval_mode_and_restore_the_mode():
    X, y = spiral(n_per_class=20, seed=2)
    model = classifier()
    loss, acc = mt.evaluate(model, nn.CrossEntropyLoss(), DataLoader(TensorDataset(X, y), 7))
    assert model.training and 0 <= acc <= 1 and loss > 0
    model.eval()
    expected = model(X)
    model.train()
    np.testing.assert_allclose(mt.predict(model, X, batch_size=7), expected)
    assert model.training


def test_fit_rejects_zero_epochs():
    model = classifier()
    with pytest.raises(ValueError, match="epochs >= 1"):
        mt.fit(model, nn.CrossEntropyLoss(), optim.SGD(model.parameters(), lr=0.1), [], epochs=0)


# ------------------------------------------------------------------------ save / load
@pytest.mark.parametrize("suffix", [".npz", ".json"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_reloaded_model_predicts_identically(tmp_path, suffix, dtype):
    X, y = spiral(n_per_class=30, seed=3)
    model = classifier(seed=4, dtype=dtype)
    mt.fit(model, nn.CrossEntropyLoss(), optim.Adam(model.parameters(), lr=0.01),
           loaders(X.astype(dtype), y)[0], epochs=3, progress=False)
    path = tmp_path / f"model{suffix}"
    mt.save(model.state_dict(), path)
    fresh = classifier(seed=5, dtype=dtype)
    fresh.load_state_dict(mt.load(path))
    assert np.array_equal(mt.predict(fresh, X.astype(dtype)), mt.predict(model, X.astype(dtype)))
    assert all(v.dtype == model.state_dict()[k].dtype for k, v in mt.load(path).items())


def test_save_rejects_unknown_formats(tmp_path):
    with pytest.raises(ValueError, match=r"\.npz and \.json"):
        mt.save({}, tmp_path / "model.pt")
