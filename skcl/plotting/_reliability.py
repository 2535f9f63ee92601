"""Reliability diagrams: how often a classifier is right against how sure it says it is.

:func:`reliability_bins` gives the numbers (the bins of
:func:`skcl.metrics.expected_calibration_error`);
:func:`plot_reliability_diagram` draws them from probabilities and
:func:`plot_reliability_diagram_from_estimator` from a fitted classifier.
"""

import numpy as np

from ._matplotlib import import_matplotlib

__all__ = [
    "plot_reliability_diagram",
    "plot_reliability_diagram_from_estimator",
    "reliability_bins",
]


def reliability_bins(y_true, y_prob, *, n_bins=10, labels=None):
    r"""Top-label confidence bins: count, accuracy and mean confidence of each.

    The bins of :func:`skcl.metrics.expected_calibration_error`: equal
    width over [0, 1], bin b holding confidences in ((b−1)/M, b/M] (a
    confidence of 0 in the first), the confidence of a sample being its
    highest probability and it being correct when that class (the first
    among ties) is its label. ECE = Σ_b count_b/N · \|accuracy_b − confidence_b\|.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, column k for ``labels[k]``; a 1-D array
        is the probability of the second of two classes.
    n_bins : int, default=10
        M.
    labels : array-like of shape (n_classes,), default=None
        The classes of the columns (default: the sorted labels of y_true).

    Returns
    -------
    edges : ndarray of shape (n_bins + 1,)
    counts : ndarray of shape (n_bins,)
        Samples per bin.
    accuracy : ndarray of shape (n_bins,)
        Fraction correct per bin, NaN for an empty bin.
    confidence : ndarray of shape (n_bins,)
        Mean confidence per bin, NaN for an empty bin.
    ece : float

    Examples
    --------
    >>> from skcl.plotting import reliability_bins
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]
    >>> edges, counts, accuracy, confidence, ece = reliability_bins(
    ...     [0, 0, 1, 1], y_prob, n_bins=5)
    >>> counts.tolist()  # confidences 0.6 | 0.7, 0.8 | 0.9
    [0, 0, 1, 2, 1]
    >>> round(ece, 4)
    0.3
    """
    from sklearn.utils.multiclass import unique_labels

    from ..metrics import expected_calibration_error

    # Validates everything (shapes, probabilities, labels) before any binning.
    ece = expected_calibration_error(y_true, y_prob, n_bins=n_bins, labels=labels)
    y_true = np.asarray(y_true)
    y_prob = np.asarray(y_prob, dtype=float)
    if y_prob.ndim == 1:
        y_prob = np.column_stack([1 - y_prob, y_prob])
    labels = unique_labels(y_true) if labels is None else np.asarray(labels)
    confidence = y_prob.max(axis=1)
    correct = labels[y_prob.argmax(axis=1)] == y_true
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.searchsorted(edges[1:-1], confidence, side="left")
    counts = np.bincount(bins, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.bincount(bins, weights=correct, minlength=n_bins) / counts
        mean_confidence = np.bincount(bins, weights=confidence, minlength=n_bins) / counts
    return edges, counts, accuracy, mean_confidence, ece


def plot_reliability_diagram(y_true, y_prob, *, n_bins=10, labels=None, ax=None, title=None):
    """Reliability diagram: accuracy against confidence, bin by bin.

    A bar per confidence bin (see :func:`reliability_bins`) as high as
    the fraction of its samples classified correctly, the bin's mean
    confidence marked on it (the gap to the bar is the miscalibration),
    the diagonal of perfect calibration, each bin's number of samples
    written above it, and the ECE in the title. Bars below the diagonal:
    over-confident; above: under-confident.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        As from ``predict_proba``; a 1-D array is the probability of the
        second of two classes.
    n_bins : int, default=10
    labels : array-like of shape (n_classes,), default=None
        The classes of the columns (pass the estimator's ``classes_`` when
        y_true holds only some of them).
    ax : matplotlib Axes, default=None
        Default: the axes of a new :class:`~matplotlib.figure.Figure` (no
        pyplot, so no display needed); reach it with ``ax.figure``.
    title : str, default=None
        Put before the ECE in the title.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from skcl.plotting import plot_reliability_diagram
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]
    >>> ax = plot_reliability_diagram([0, 0, 1, 1], y_prob, n_bins=5, title="toy")
    >>> ax.get_title()
    'toy — ECE 30.0 %'
    >>> [text.get_text() for text in ax.texts]  # samples per non-empty bin
    ['1', '2', '1']
    """
    import_matplotlib()
    edges, counts, accuracy, confidence, ece = reliability_bins(
        y_true, y_prob, n_bins=n_bins, labels=labels)
    if ax is None:
        from matplotlib.figure import Figure

        ax = Figure(figsize=(4.0, 4.0), layout="constrained").subplots()
    width = np.diff(edges)
    filled = counts > 0
    ax.bar(edges[:-1][filled], accuracy[filled], width=width[filled], align="edge",
           color="tab:blue", edgecolor="black", linewidth=0.5, label="accuracy")
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1,
            label="perfect calibration")
    centres = edges[:-1] + width / 2
    # The bin's mean confidence, on the bar: its distance to the bar's top
    # is the bin's term of the ECE (before weighting by its count).
    ax.scatter(centres[filled], confidence[filled], marker="_", s=200, color="tab:red",
               zorder=3, label="mean confidence")
    for x, n, a in zip(centres[filled], counts[filled], accuracy[filled]):
        ax.text(x, min(a, 0.9) + 0.02, f"{n}", ha="center", va="bottom", fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("confidence (highest probability)")
    ax.set_ylabel("accuracy")
    ax.set_aspect("equal")
    ax.legend(loc="upper left", fontsize=7)
    text = f"ECE {100 * ece:.1f} %"
    ax.set_title(f"{title} — {text}" if title else text, fontsize=10)
    return ax


def plot_reliability_diagram_from_estimator(estimator, X, y, *, n_bins=10, ax=None,
                                            title=None):
    """Reliability diagram of a fitted classifier's ``predict_proba`` on (X, y).

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba`` and ``classes_``
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    n_bins : int, default=10
    ax : matplotlib Axes, default=None
    title : str, default=None
        Default: the estimator's class name.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcl.plotting import plot_reliability_diagram_from_estimator
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LogisticRegression(max_iter=1000).fit(X, y)
    >>> ax = plot_reliability_diagram_from_estimator(clf, X, y)
    >>> ax.get_title().startswith("LogisticRegression — ECE")
    True
    """
    if not hasattr(estimator, "predict_proba"):
        raise TypeError(f"{type(estimator).__name__} has no predict_proba.")
    y_prob = estimator.predict_proba(X)
    return plot_reliability_diagram(
        y, y_prob, n_bins=n_bins, labels=estimator.classes_, ax=ax,
        title=type(estimator).__name__ if title is None else title)
