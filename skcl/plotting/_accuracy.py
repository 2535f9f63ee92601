"""Accuracy matrices: one as a heatmap, and many methods' final accuracies side by side.

:func:`plot_accuracy_matrix` draws a task-by-task accuracy matrix;
:func:`plot_final_accuracies` draws the last column of many methods'
matrices, one grid per task sequence on one shared colour scale.
"""

import numpy as np

from ._matplotlib import import_matplotlib

__all__ = ["plot_accuracy_matrix", "plot_final_accuracies"]


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
    import_matplotlib()
    from matplotlib.figure import Figure

    grids = {title: dict(panels) for title, panels in grids.items() if panels}
    if not grids:
        raise ValueError("grids holds no accuracy matrix to draw.")
    methods = list(dict.fromkeys(m for panels in grids.values() for m in panels))
    finals = {title: _final_table(title, panels, methods) for title, panels in grids.items()}
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
        image = _draw_final_grid(ax, title, table, methods, cmap)
    fig.colorbar(image, ax=list(axes), label="accuracy after the last task (%)", aspect=40)
    return fig


def _final_table(title, panels, methods):
    """One grid's numbers: a row per method, its final accuracies and their mean.

    Parameters
    ----------
    title : str
        The grid's title, for the errors.
    panels : dict
        Method name → square accuracy matrix; all of one number of tasks.
    methods : list of str
        The rows of every grid, in order: a method missing here is a row of NaN.

    Returns
    -------
    table : ndarray of shape (len(methods), n_tasks + 1)
    """
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
    return table


def _draw_final_grid(ax, title, table, methods, cmap):
    """One grid of :func:`plot_final_accuracies` on ``ax``; returns its image."""
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
    return image


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
    import_matplotlib()
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
