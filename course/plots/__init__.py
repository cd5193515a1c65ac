"""Plots for the course, in one colour-blind-safe style (``course.plots.style``).

Every function draws on the Axes it is given, or on a new figure, and returns
its Axes (an array of them for multi-panel plots); none calls ``plt.show()``.
In a notebook, end the line with ``;`` to hide the returned object's text.
"""
from course.plots.boundary import plot_decision_boundary, predict_classes
from course.plots.classification import plot_confusion_matrix, plot_misclassified
from course.plots.curves import HISTORY_KEYS, new_history, plot_loss_curves
from course.plots.layers import plot_layer_histograms
from course.plots.style import OKABE_ITO
from course.plots.trajectories import plot_optimizer_trajectories

__all__ = [
    "plot_decision_boundary", "predict_classes", "plot_loss_curves", "new_history", "HISTORY_KEYS",
    "plot_layer_histograms", "plot_optimizer_trajectories", "plot_confusion_matrix",
    "plot_misclassified", "OKABE_ITO",
]
