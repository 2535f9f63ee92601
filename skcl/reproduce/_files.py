"""The files of a run: CSV/JSON/text results, the environment they record, figures.

Every result file records :func:`environment`, the versions, processor
and JAX device that produced it.
"""

import csv
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from ._sequences import SEQUENCES, columns_for
from ._tables import _label, _several_seeds, format_table, summarize

__all__ = ["FIGURE_ROWS", "environment", "environment_line", "write_accuracy_matrices",
           "write_figure2", "write_results"]


_CSV_FIELDS = [
    "sequence", "model", "column", "method", "origin", "protocol", "available", "best_params",
    "validation", "test", "test_task_accuracies", "test_forgetting",
    "test_log_loss", "test_task_log_loss",
    "test_ece", "test_task_ece", "paper", "reference", "n_candidates", "time_s", "search_time_s",
    "pretraining", "paper_pretraining", "transform_time_s", "settings", "rows_per_task",
]


_SUMMARY_FIELDS = [
    "sequence", "model", "column", "method", "available", "n_seeds", "seeds", "test_mean",
    "test_sd", "test_min", "test_median", "test_max", "test_forgetting_mean", "paper",
    "reference", "n_reach_paper", "fraction_reach_paper",
]


def write_results(rows, output, stem, *, meta=None):
    """Write ``<stem>.csv`` (one line per column × method), ``<stem>.json``
    (everything, including every candidate's validation score and each
    method's test accuracy matrix) and ``<stem>.txt`` (the table) into the
    folder ``output``.

    Rows of several seeds keep every seed: the CSV has one line per
    column × method × seed, with a ``seed`` column after ``method``; the
    JSON's ``results`` hold every seed's row and its ``summary`` the
    statistics of :func:`summarize` (mean, sample standard deviation,
    min, median, max, seeds reaching the paper's number), which also go
    to ``<stem>_summary.csv`` (key ``"summary"`` of the returned dict).

    The CSV's columns: ``validation`` and ``test`` final average accuracy
    (%), ``test_task_accuracies`` (%, per task), ``test_forgetting``
    (average forgetting on the test sequence, percentage points),
    ``test_log_loss`` (nats, mean over tasks) and ``test_task_log_loss``,
    ``test_ece`` (expected calibration error, %, mean over tasks) and
    ``test_task_ece``, beside the paper's numbers and timings.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`.
    output : str or path-like
        The folder, created if missing.
    stem : str
        File name without extension, e.g. "ci-split-iris".
    meta : dict, default=None
        Extra entries of the JSON's ``meta`` (:func:`environment`, the
        versions, processor and date, is always written, and to the other
        files too).

    Returns
    -------
    dict of str → Path
        The files written, by extension.

    Examples
    --------
    >>> import tempfile
    >>> from skcl.reproduce import METHODS, run_column, write_results
    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"])
    >>> paths = write_results(rows, tempfile.mkdtemp(), "ci-split-iris")
    >>> sorted(path.name for path in paths.values())
    ['ci-split-iris.csv', 'ci-split-iris.json', 'ci-split-iris.txt']
    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"],
    ...                      n_seeds=2)
    >>> paths = write_results(rows, tempfile.mkdtemp(), "ci-split-iris")
    >>> sorted(path.name for path in paths.values())
    ['ci-split-iris.csv', 'ci-split-iris.json', 'ci-split-iris.txt', 'ci-split-iris_summary.csv']
    """
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    paths = {ext: output / f"{stem}.{ext}" for ext in ("csv", "json", "txt")}
    several = _several_seeds(rows)
    fields = list(_CSV_FIELDS)
    if several:
        fields.insert(fields.index("method") + 1, "seed")
    env = environment()
    line = environment_line(env)
    _write_csv(paths["csv"], [{**row, "environment": line} for row in rows],
               fields + ["environment"])
    document = {"meta": {**env, **(meta or {})}, "results": rows}
    if several:
        document["summary"] = summarize(rows)
        paths["summary"] = output / f"{stem}_summary.csv"
        _write_csv(paths["summary"], document["summary"], _SUMMARY_FIELDS)
    paths["json"].write_text(json.dumps(document, indent=2, default=_json_default) + "\n")
    paths["txt"].write_text(format_table(rows) + f"\nEnvironment: {line}.\n")
    return paths


def _write_csv(path, rows, fields):
    """One line per row; lists and dicts as JSON text."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            flat = dict(row)
            for name in ("best_params", "test_task_accuracies", "test_task_log_loss",
                         "test_task_ece", "settings", "seeds"):
                if name in flat:
                    flat[name] = json.dumps(flat[name])
            writer.writerow(flat)


def environment():
    """The versions, processor and JAX device that produce a table.

    Every result file records it (the JSON's ``meta``, the CSV's
    ``environment`` column, the text table's last line): the same seed
    gives the same numbers on one install, and the numbers move across
    installs (the user guide's "Reproducing the paper" says how far).

    Returns
    -------
    dict
        Versions of skcl and of what it computes with, Python, the
        processor (``machine``, ``cpu``, ``cpu_count``), JAX's backend and
        the date.

    Examples
    --------
    >>> from skcl.reproduce import environment
    >>> env = environment()
    >>> sorted(env)[:4]
    ['cpu', 'cpu_count', 'date', 'jax']
    >>> env["jax_backend"] in ("cpu", "gpu", "tpu")
    True
    """
    import jax
    import jaxlib
    import optax
    import scipy
    import sklearn

    import skcl

    return {
        "skcl": skcl.__version__,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "optax": optax.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "jax_backend": jax.default_backend(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _cpu_name():
    """The processor's model name (Linux), else what the platform says."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment_line(env):
    """:func:`environment` in one line, as the result files and the command print it."""
    return (f"skcl {env['skcl']}, jax {env['jax']} ({env['jax_backend']}), numpy {env['numpy']}, "
            f"scikit-learn {env['scikit-learn']}, optax {env['optax']}, Python {env['python']}; "
            f"{env['cpu']}, {env['cpu_count']} cores")


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"Cannot write {type(value).__name__} to JSON.")


def write_accuracy_matrices(rows, path):
    """Which methods keep which tasks, as one PNG saved at ``path``.

    One grid per column (e.g. "Iris SR", "CI Split MNIST"), one row per
    method (marked † or ‡ as in the table), the test accuracy on each task
    after the last one (the final column of the test accuracy matrix) and
    their mean, on one shared colour scale: see
    :func:`skcl.plotting.plot_final_accuracies`. With several seeds, the
    matrices' mean over the seeds. The full matrices are in the JSON.
    Needs matplotlib.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`; rows
        without a ``test_accuracy_matrix`` (a method this build lacks) are
        left out.
    path : str or path-like

    Returns
    -------
    path
    """
    from ..plotting import plot_final_accuracies

    matrices = {}
    for row in rows:
        if row.get("available") and "test_accuracy_matrix" in row:
            matrices.setdefault(row["column"], {}).setdefault(_label(row), []).append(
                np.asarray(row["test_accuracy_matrix"], dtype=float) / 100)
    if not matrices:
        raise ValueError("No row holds a test accuracy matrix to draw.")
    grids = {}
    for column, methods in matrices.items():
        n_seeds = max(len(Rs) for Rs in methods.values())
        title = column if n_seeds == 1 else f"{column} (mean of {n_seeds} seeds)"
        grids[title] = {method: np.mean(Rs, axis=0) for method, Rs in methods.items()}
    plot_final_accuracies(grids).savefig(path)
    return path


#: Figure 2's panel rows by model.
FIGURE_ROWS = {"sr": "Softmax regression", "fcnn": "Fully connected neural network"}


def write_figure2(models, model, output):
    """The paper's Figure 2 from the fitted CI Split 2D Iris models, as a PNG.

    Parameters
    ----------
    models : dict
        (sequence, model) → {method name → fitted estimator}, as
        :func:`~skcl.reproduce.reproduce` returns.
    model : {"sr", "fcnn", "both"}
        The rows to draw.
    output : str or path-like
        The folder; the file is ``figure2_ci-split-2d-iris.png`` (needs
        matplotlib).

    Returns
    -------
    Path
    """
    from ..plotting import plot_figure2

    data = SEQUENCES["ci-split-2d-iris"].loader()
    X = [X for X, _ in data.train]
    y = [y for _, y in data.train]
    rows = {
        FIGURE_ROWS[mod]: models[seq, mod]
        for seq, mod in columns_for("ci-split-2d-iris", model)
        if models.get((seq, mod))
    }
    fig = plot_figure2(rows, np.concatenate(X), np.concatenate(y),
                       feature_names=data.feature_names)
    path = Path(output) / "figure2_ci-split-2d-iris.png"
    fig.savefig(path)
    return path
