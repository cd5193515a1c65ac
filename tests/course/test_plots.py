"""course.plots: each function returns its Axes, draws headless (Agg), and leaves the model alone."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.axes import Axes

import minitorch_ref as mt
from course import plots
from course.datasets import spiral
from course.plots import style
from minitorch_ref import nn


@pytest.fixture
def model():
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))


class ThresholdModel:
    """Not a Module: only ``forward``, one score per sample (class 1 right of x1 = 0)."""

    def forward(self, x):
        return x[:, :1]


def _rendered(ax: Axes) -> None:
    ax.figure.canvas.draw()


def test_decision_boundary_restores_train_mode_and_draws_points(model):
    X, y = spiral(n_per_class=20, n_classes=3)
    ax = plots.plot_decision_boundary(model, X, y, X_test=X[:9], y_test=y[:9], resolution=40)
    _rendered(ax)
    assert model.training is True
    assert len(ax.images) == 1 and len(ax.collections) == 2
    model.eval()
    plots.plot_decision_boundary(model, X, y, resolution=20)
    assert model.training is False


def test_decision_boundary_of_a_single_score_model_has_two_regions():
    X = np.array([[-1.0, 0.0], [1.0, 0.0]])
    fig, ax = plt.subplots()
    assert plots.plot_decision_boundary(ThresholdModel(), X, np.array([0, 1]), ax=ax, resolution=10) is ax
    regions = ax.images[0].get_array()
    assert set(np.unique(regions)) == {0, 1} and regions[0, 0] == 0 and regions[0, -1] == 1


def test_predict_classes_reads_logits_scores_and_rejects_other_shapes():
    X = np.array([[0.2, 0.0], [-0.3, 0.0]])
    assert list(plots.predict_classes(lambda x: x, X)) == [0, 1]
    assert list(plots.predict_classes(lambda x: x[:, 0], X)) == [1, 0]
    assert list(plots.predict_classes(lambda x: x[:, :1] + 0.5, X, threshold=0.5)) == [1, 0]
    with pytest.raises(ValueError, match="expected logits"):
        plots.predict_classes(lambda x: x[:1], X)


def test_decision_boundary_rejects_points_that_are_not_2d(model):
    with pytest.raises(ValueError, match=r"shape \(N, 2\)"):
        plots.plot_decision_boundary(model, np.zeros((5, 3)), np.zeros(5, dtype=int))


def test_loss_curves_draw_train_and_test_per_metric():
    history = {"train_loss": [1.0, 0.5, 0.2], "test_loss": [1.1, 0.7, 0.6],
               "train_acc": [0.5, 0.8, 0.9], "test_acc": [0.4, 0.7, 0.8]}
    axes = plots.plot_loss_curves(history)
    _rendered(axes[0])
    assert axes.shape == (2,)
    assert [len(ax.lines) for ax in axes] == [2, 2]
    assert axes[0].get_yscale() == "log"
    np.testing.assert_array_equal(axes[1].lines[1].get_ydata(), history["test_acc"])
    assert axes[0].lines[0].get_color() == style.TRAIN_COLOR


def test_loss_curves_of_a_loss_only_history_have_one_panel():
    axes = plots.plot_loss_curves({"train_loss": [0.3, -0.1]})
    assert axes.shape == (1,) and axes[0].get_yscale() == "linear"


@pytest.mark.parametrize("history, message", [
    ({"val_loss": [1.0]}, "unknown history key"),
    ({"train_loss": []}, "the history is empty"),
])
def test_loss_curves_reject_malformed_histories(history, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_loss_curves(history)


def test_layer_histograms_have_two_rows_per_layer_and_keep_gradients(model):
    X, y = spiral(n_per_class=10, n_classes=3)
    axes = plots.plot_layer_histograms(model, X, y, nn.CrossEntropyLoss())
    _rendered(axes[0, 0])
    assert axes.shape == (2, 4)
    assert axes[0, 1].get_title() == "1: ReLU"
    assert all(np.all(p.grad == 0) for p in model.parameters())


def test_optimizer_trajectories_draw_every_path_over_contours():
    steps = 0.8 ** np.arange(15)[:, None]
    paths = [("SGD", np.array([[2.0, 1.0]]) * steps), ("Adam", np.array([[-2.0, 1.0]]) * steps)]
    ax = plots.plot_optimizer_trajectories(paths, lambda x, y: x**2 + 10 * y**2)
    _rendered(ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["SGD", "Adam"]
    assert ax.get_xlim()[0] < -2 and ax.get_xlim()[1] > 2
    with pytest.raises(ValueError, match="must have shape"):
        plots.plot_optimizer_trajectories([("bad", np.zeros(3))], lambda x, y: x)


def test_confusion_matrix_draws_the_counts_it_is_given():
    counts = np.array([[1, 1, 0], [0, 1, 0], [1, 0, 1]])
    ax = plots.plot_confusion_matrix(counts, class_names=["a", "b", "c"])
    _rendered(ax)
    np.testing.assert_array_equal(ax.images[0].get_array(), counts)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    normalised = plots.plot_confusion_matrix(np.array([[1, 1], [0, 0]]), normalize=True)
    np.testing.assert_allclose(normalised.images[0].get_array(), [[0.5, 0.5], [0, 0]])


@pytest.mark.parametrize("counts, names, message", [
    (np.array([0, 1]), None, "square"),
    (np.zeros((2, 3)), None, "square"),
    (np.array([[1, -1], [0, 0]]), None, "non-negative"),
    (np.eye(2), ["a", "b", "c"], "3 class names for a 2x2"),
])
def test_confusion_matrix_rejects_what_is_not_one(counts, names, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_confusion_matrix(counts, class_names=names)


def test_misclassified_grid_shows_only_the_errors():
    X = np.random.default_rng(0).random((30, 64))
    y = np.arange(30) % 10
    pred = y.copy()
    pred[[3, 7, 11]] = 0
    axes = plots.plot_misclassified(X, y, pred, ncols=2)
    _rendered(axes[0, 0])
    assert axes.shape == (2, 2)
    assert [ax.get_title() for ax in axes.flat if ax.images] == ["3 \u2192 0", "7 \u2192 0", "1 \u2192 0"]
    none_wrong = plots.plot_misclassified(X, y, y)
    assert none_wrong[0, 0].texts[0].get_text() == "no misclassified samples"
    with pytest.raises(ValueError, match="square images"):
        plots.plot_misclassified(np.zeros((30, 10)), y, pred)


def test_palette_is_okabe_ito_and_class_colours_repeat():
    assert plots.OKABE_ITO[0] == "#E69F00" and len(set(plots.OKABE_ITO)) == 8
    assert style.class_colors(10)[8] == style.class_colors(10)[0]


def test_the_decision_boundary_legend_names_each_class_and_set():
    import matplotlib
    matplotlib.use("Agg")
    from course.plots import plot_decision_boundary
    model = lambda X: X[:, :1] - 0.5                     # class 1 where x1 > 0.5
    X, y = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([0, 1])
    ax = plot_decision_boundary(model, X, y, X_test=X, y_test=y)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["train", "test", "class 0", "class 1"]
