"""Decision regions: class probabilities over a 2-D plane, and the paper's Figure 2.

:func:`plot_class_probabilities` draws one classifier's predicted class
probabilities as an RGB image (class k's probability is colour channel k)
with the data points on top; :func:`plot_figure2` arranges one such panel
per method and one row per model.
"""

import numpy as np

from ._matplotlib import import_matplotlib

__all__ = ["plot_class_probabilities", "plot_figure2"]

# Class colours of the points: pure red, green and blue, matching the
# channel each class's probability drives.
_POINT_COLOURS = np.eye(3)


def _padded_extent(X):
    """The plane drawn by default: the data's range padded by 10 % on each side.

    Parameters
    ----------
    X : ndarray of shape (n_samples, 2)

    Returns
    -------
    extent : (x_min, x_max, y_min, y_max)
    """
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.1 * (hi - lo)
    return (lo[0] - pad[0], hi[0] + pad[0], lo[1] - pad[1], hi[1] + pad[1])


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
    import_matplotlib()
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have 2 features to draw a plane, got shape {X.shape}.")
    classes = np.asarray(estimator.classes_)
    if len(classes) > 3:
        raise ValueError(f"At most 3 classes map to RGB, the estimator has {len(classes)}.")
    if extent is None:
        extent = _padded_extent(X)
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
    import_matplotlib()
    from matplotlib.figure import Figure

    rows = [(label, panels) for label, panels in models.items() if panels]
    if not rows:
        raise ValueError("models holds no fitted classifier to draw.")
    methods = list(dict.fromkeys(m for _, panels in rows for m in panels))
    X = np.asarray(X, dtype=float)
    extent = _padded_extent(X)
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
