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
"""

import numpy as np

__all__ = [
    "plot_accuracy_matrix",
    "plot_class_probabilities",
    "plot_figure2",
    "plot_final_accuracies",
    "plot_reliability_diagram",
    "plot_reliability_diagram_from_estimator",
    "reliability_bins",
]

# Class colours of the points: pure red, green and blue, matching the
# channel each class's probability drives.
_POINT_COLOURS = np.eye(3)


def _matplotlib():
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(
            "skcl.plotting needs matplotlib; install it with "
            "`pip install matplotlib` or `pip install skcl[plot]`."
        ) from exc
    return matplotlib


def plot_class_probabilities(estimator, X, y, *, ax=None, extent=None, resolution=200,
                             title=None):
    """Pseudocolour image of the class probabilities over a 2-D plane.

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba`` and 2 features
        At most 3 classes: the probability of ``classes_[k]`` is colour
        channel k (red, green, blue).
    X : array-like of shape (n_samples, 2)
        Points to draw (e.g. the training data); also set the default extent.
    y : array-like of shape (n_samples,)
        Their labels, coloured like their class's channel.
    ax : matplotlib Axes, default=None
        Default: the current axes.
    extent : (x_min, x_max, y_min, y_max), default=None
        Plane to draw. Default: the data's range padded by 10 %.
    resolution : int, default=200
        Grid points per axis.
    title : str, default=None

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    Joint training on CI Split 2D Iris, drawn on the axes of a new figure:

    >>> import numpy as np
    >>> from matplotlib.figure import Figure
    >>> from skcl import JointClassifier
    >>> from skcl.datasets import load_ci_split_2d_iris
    >>> from skcl.plotting import plot_class_probabilities
    >>> data = load_ci_split_2d_iris()
    >>> clf = JointClassifier(learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> X = np.concatenate([X for X, _ in data.train])
    >>> y = np.concatenate([y for _, y in data.train])
    >>> ax = plot_class_probabilities(clf, X, y, ax=Figure().subplots(), title="Joint")
    >>> ax.get_title()
    'Joint'
    """
    _matplotlib()
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have 2 features to draw a plane, got shape {X.shape}.")
    classes = np.asarray(estimator.classes_)
    if len(classes) > 3:
        raise ValueError(f"At most 3 classes map to RGB, the estimator has {len(classes)}.")
    if extent is None:
        lo, hi = X.min(axis=0), X.max(axis=0)
        pad = 0.1 * (hi - lo)
        extent = (lo[0] - pad[0], hi[0] + pad[0], lo[1] - pad[1], hi[1] + pad[1])
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.gca()
    xx, yy = np.meshgrid(
        np.linspace(extent[0], extent[1], resolution),
        np.linspace(extent[2], extent[3], resolution),
    )
    proba = estimator.predict_proba(np.column_stack([xx.ravel(), yy.ravel()]))
    rgb = np.zeros((proba.shape[0], 3))
    rgb[:, : proba.shape[1]] = proba
    ax.imshow(
        rgb.reshape(resolution, resolution, 3).clip(0, 1),
        origin="lower",
        extent=extent,
        aspect="auto",
        interpolation="nearest",
    )
    index = np.searchsorted(classes, y)
    ax.scatter(
        X[:, 0], X[:, 1], c=_POINT_COLOURS[index], s=14, edgecolors="black", linewidths=0.6
    )
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_figure2(models, X, y, *, feature_names=("petal length (cm)", "petal width (cm)"),
                 panel_size=2.2, resolution=200, dpi=100):
    """The paper's Figure 2: one row per model, one panel per method.

    Parameters
    ----------
    models : dict
        Row label (e.g. "Softmax regression") → {method name → fitted
        classifier on 2 features}. Rows may hold different methods; the
        panels follow the first row's order.
    X : array-like of shape (n_samples, 2)
        The observed data drawn on every panel (e.g. all training tasks).
    y : array-like of shape (n_samples,)
    feature_names : (str, str)
        Axis labels.
    panel_size : float, default=2.2
        Width and height of a panel in inches.
    resolution : int, default=200
    dpi : int, default=100

    Returns
    -------
    fig : matplotlib Figure
        Of ``panel_size·n_methods × panel_size·n_rows`` inches (plus
        margins fixed by the layout); save it with ``fig.savefig``.

    Examples
    --------
    Fine-tuning against joint training, softmax regression on CI Split 2D
    Iris (the gallery's Figure 2 example runs every method):

    >>> import numpy as np
    >>> from skcl import FineTuningClassifier, JointClassifier
    >>> from skcl.datasets import load_ci_split_2d_iris
    >>> from skcl.plotting import plot_figure2
    >>> data = load_ci_split_2d_iris()
    >>> panels = {}
    >>> for name, cls in [("Joint", JointClassifier), ("Fine-tuning", FineTuningClassifier)]:
    ...     panels[name] = cls(learning_rate=0.1, random_state=0)
    ...     for X, y in data.train:
    ...         panels[name] = panels[name].partial_fit(X, y, classes=data.classes)
    >>> X = np.concatenate([X for X, _ in data.train])
    >>> y = np.concatenate([y for _, y in data.train])
    >>> fig = plot_figure2({"Softmax regression": panels}, X, y, resolution=50)
    >>> [ax.get_title() for ax in fig.axes]
    ['Joint', 'Fine-tuning']
    >>> # fig.savefig("figure2.png")
    """
    _matplotlib()
    from matplotlib.figure import Figure

    rows = [(label, panels) for label, panels in models.items() if panels]
    if not rows:
        raise ValueError("models holds no fitted classifier to draw.")
    methods = list(dict.fromkeys(m for _, panels in rows for m in panels))
    X = np.asarray(X, dtype=float)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.1 * (hi - lo)
    extent = (lo[0] - pad[0], hi[0] + pad[0], lo[1] - pad[1], hi[1] + pad[1])
    # A bare Figure needs no pyplot, so no display and no global state.
    fig = Figure(
        figsize=(panel_size * len(methods), panel_size * len(rows) + 0.3),
        dpi=dpi, layout="constrained",
    )
    axes = fig.subplots(len(rows), len(methods), squeeze=False, sharex=True, sharey=True)
    for r, (label, panels) in enumerate(rows):
        for c, method in enumerate(methods):
            ax = axes[r, c]
            if method in panels:
                plot_class_probabilities(
                    panels[method], X, y, ax=ax, extent=extent, resolution=resolution,
                    title=method,
                )
            else:
                ax.set_title(method, fontsize=10)
                ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
            if r == len(rows) - 1:
                ax.set_xlabel(feature_names[0], fontsize=8)
            if c == 0:
                ax.set_ylabel(f"{label}\n{feature_names[1]}", fontsize=8)
            ax.tick_params(labelsize=7)
    return fig


def plot_final_accuracies(grids, *, cell_size=(0.55, 0.3), cmap="viridis", dpi=100):
    """Which methods keep which tasks: one grid per task sequence, one row per
    method, the accuracy on each task after the last one as columns.

    Each grid's columns are the final column of its methods' accuracy
    matrices (``R[:, -1]``: accuracy on task ``i`` once every task is
    learnt), then their mean, the final average accuracy. All grids share
    one colour scale over [0, 100] % and one colour bar, and every cell
    holds its value, so a forgotten task (a dark cell) and a method that
    keeps all (a bright row) read at once.

    Parameters
    ----------
    grids : dict
        Grid title (e.g. "CI Split MNIST") → {method name → accuracy
        matrix of shape (n_tasks, n_tasks) in [0, 1]}, as
        :func:`plot_accuracy_matrix` takes. Rows follow the order in which
        methods first appear; a method missing from a grid is a blank row
        marked "–" there. Grids may have different numbers of tasks.
    cell_size : (float, float), default=(0.55, 0.3)
        Width and height of one cell in inches: at the default ``dpi`` the
        numbers are legible without zooming.
    cmap : str, default="viridis"
    dpi : int, default=100

    Returns
    -------
    fig : matplotlib Figure
        Save it with ``fig.savefig``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcl.plotting import plot_final_accuracies
    >>> fig = plot_final_accuracies({
    ...     "CI Split Iris": {"Fine-tuning": np.eye(3), "Joint": np.triu(np.ones((3, 3)))},
    ...     "CI Split Wine": {"Joint": np.ones((3, 3))},
    ... })
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['CI Split Iris', 'CI Split Wine']
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['0', '0', '100', '33', '100', '100', '100', '100']
    >>> [t.get_text() for t in fig.axes[1].texts]
    ['–', '100', '100', '100', '100']
    >>> # fig.savefig("final_accuracies.png")
    """
    _matplotlib()
    from matplotlib.figure import Figure

    grids = {title: dict(panels) for title, panels in grids.items() if panels}
    if not grids:
        raise ValueError("grids holds no accuracy matrix to draw.")
    methods = list(dict.fromkeys(m for panels in grids.values() for m in panels))
    finals = {}
    for title, panels in grids.items():
        n_tasks = None
        for method, R in panels.items():
            R = np.asarray(R, dtype=float)
            if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] == 0:
                raise ValueError(f"{title}: {method}'s accuracy matrix must be square, "
                                 f"got shape {R.shape}.")
            if n_tasks not in (None, R.shape[0]):
                raise ValueError(f"{title}: the methods' matrices have different numbers "
                                 f"of tasks ({n_tasks} and {R.shape[0]}).")
            n_tasks = R.shape[0]
        table = np.full((len(methods), n_tasks + 1), np.nan)
        for method, R in panels.items():
            final = np.asarray(R, dtype=float)[:, -1]
            table[methods.index(method)] = [*final, np.nanmean(final)]
        finals[title] = table
    widths = [table.shape[1] for table in finals.values()]
    label_inches = 0.09 * max(len(m) for m in methods) + 0.4
    fig = Figure(
        figsize=(label_inches + cell_size[0] * sum(widths) + 0.45 * len(widths) + 0.9,
                 cell_size[1] * len(methods) + 1.3),
        dpi=dpi, layout="constrained",
    )
    axes = fig.subplots(1, len(finals), squeeze=False, sharey=True,
                        gridspec_kw={"width_ratios": widths})[0]
    for ax, (title, table) in zip(axes, finals.items()):
        image = ax.imshow(np.ma.masked_invalid(100 * table), vmin=0, vmax=100, cmap=cmap,
                          aspect="auto")
        n_tasks = table.shape[1] - 1
        ax.set_xticks(range(n_tasks + 1), [*map(str, range(n_tasks)), "mean"], fontsize=9)
        ax.set_yticks(range(len(methods)), methods, fontsize=9)
        ax.tick_params(length=0)
        ax.set_xlabel("task", fontsize=9)
        ax.set_title(title, fontsize=10)
        # The mean is a summary, not a task: set it apart.
        ax.axvline(n_tasks - 0.5, color="white", linewidth=3)
        for i in range(len(methods)):
            for j in range(n_tasks + 1):
                value = 100 * table[i, j]
                if not np.isfinite(value):
                    if j == 0 and not np.isfinite(table[i]).any():
                        ax.text(n_tasks / 2, i, "–", ha="center", va="center", fontsize=9)
                    continue
                # Dark cells of viridis take white text, light ones black.
                ax.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=9,
                        color="white" if value < 60 else "black",
                        fontweight="bold" if j == n_tasks else "normal")
    fig.colorbar(image, ax=list(axes), label="accuracy after the last task (%)", aspect=40)
    return fig


def plot_accuracy_matrix(R, *, ax=None, title=None, task_names=None, cmap="viridis",
                         annotate=True):
    """Heatmap of an accuracy matrix: task evaluated down, task learnt across.

    Parameters
    ----------
    R : array-like of shape (n_tasks, n_tasks)
        ``R[i, j]``: accuracy on task ``i`` after learning tasks ``0..j``,
        in [0, 1], as from :func:`skcl.model_selection.learn_task_sequence`.
        NaN cells (not evaluated) are left blank.
    ax : matplotlib Axes, default=None
        Default: the axes of a new :class:`~matplotlib.figure.Figure`
        (no pyplot, so no display needed); reach it with ``ax.figure``.
    title : str, default=None
    task_names : list of str, default=None
        Tick labels; default "task 0", "task 1"...
    cmap : str, default="viridis"
        Colour map over [0, 1].
    annotate : bool, default=True
        Write each value (in %) in its cell.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from skcl.plotting import plot_accuracy_matrix
    >>> R = [[1.0, 0.5, 0.2],
    ...      [0.0, 0.9, 0.6],
    ...      [0.0, 0.0, 0.8]]
    >>> ax = plot_accuracy_matrix(R, title="Fine-tuning")
    >>> ax.get_xlabel()
    'after learning task'
    >>> [text.get_text() for text in ax.texts][:3]
    ['100', '50', '20']
    >>> # ax.figure.savefig("accuracy_matrix.png")
    """
    _matplotlib()
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] == 0:
        raise ValueError(
            f"R must be a square accuracy matrix of shape (n_tasks, n_tasks), got shape {R.shape}."
        )
    n_tasks = R.shape[0]
    names = [f"task {i}" for i in range(n_tasks)] if task_names is None else list(task_names)
    if len(names) != n_tasks:
        raise ValueError(f"task_names has {len(names)} names for {n_tasks} tasks.")
    if ax is None:
        from matplotlib.figure import Figure

        size = 1.0 + 0.6 * n_tasks
        ax = Figure(figsize=(size + 1.0, size), layout="constrained").subplots()
    image = ax.imshow(np.ma.masked_invalid(R), vmin=0.0, vmax=1.0, cmap=cmap)
    ax.figure.colorbar(image, ax=ax, label="accuracy")
    ax.set_xticks(range(n_tasks), names, rotation=45, ha="right")
    ax.set_yticks(range(n_tasks), names)
    ax.set_xlabel("after learning task")
    ax.set_ylabel("accuracy on task")
    if annotate:
        for i in range(n_tasks):
            for j in range(n_tasks):
                if np.isfinite(R[i, j]):
                    ax.text(j, i, f"{100 * R[i, j]:.0f}", ha="center", va="center",
                            color="white" if R[i, j] < 0.6 else "black", fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


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

    from .metrics import expected_calibration_error

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
    _matplotlib()
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
