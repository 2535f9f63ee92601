"""Plots of the paper's figures. Needs matplotlib (``pip install skcl[plot]``).

:func:`plot_class_probabilities` draws one classifier's predicted class
probabilities over a 2-D input plane as an RGB image (class k's
probability is colour channel k), with the data points on top;
:func:`plot_figure2` arranges one panel per method and one row per model,
as the paper's Figure 2 does for CI Split 2D Iris.
:func:`plot_accuracy_matrix` draws a task-by-task accuracy matrix as a
heatmap; :func:`plot_final_accuracies` compares many methods at a glance,
one grid per task sequence with a row per method and the accuracy on each
task at the end as columns, on one shared colour scale.
:func:`plot_reliability_diagram` (from probabilities) and
:func:`plot_reliability_diagram_from_estimator` draw how often a
classifier is right against how sure it says it is, with
:func:`reliability_bins` giving the numbers drawn.

matplotlib is imported when a function is called, not with this module.

One module per kind of figure: ``_decision_regions`` (class probabilities
over a plane, Figure 2), ``_accuracy`` (accuracy matrices) and
``_reliability`` (reliability diagrams); ``_matplotlib`` imports matplotlib
on first use.
"""

from ._accuracy import plot_accuracy_matrix, plot_final_accuracies
from ._decision_regions import plot_class_probabilities, plot_figure2
from ._reliability import (
    plot_reliability_diagram,
    plot_reliability_diagram_from_estimator,
    reliability_bins,
)

__all__ = [
    "plot_accuracy_matrix",
    "plot_class_probabilities",
    "plot_figure2",
    "plot_final_accuracies",
    "plot_reliability_diagram",
    "plot_reliability_diagram_from_estimator",
    "reliability_bins",
]

