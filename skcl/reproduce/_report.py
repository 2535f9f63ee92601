"""Reporting: summaries over seeds, the printed table, CSV/JSON/text files, figures.

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

from ._registry import METHODS
from ._sequences import SEQUENCES, columns_for

__all__ = ["FIGURE_ROWS", "environment", "environment_line", "format_table", "summarize",
           "write_accuracy_matrices", "write_figure2", "write_results"]


def _fmt(value):
    return "–" if value is None else f"{value:.2f}"


#: Table I's numbers are rounded (to 4 decimals); ours are exact fractions.
#: A seed "reaches" the paper's number when it is at most this far below.
_REACH_TOLERANCE = 1e-3


def _several_seeds(rows):
    """Whether ``rows`` hold several seeds' runs (rows with a ``seed``)."""
    return any("seed" in row for row in rows)


def _reached(cell):
    return f"{cell['n_reach_paper']}/{cell['n_seeds']}"


def summarize(rows):
    """Each cell (column × method) over its seeds.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`, one row
        per column, method and seed.

    Returns
    -------
    list of dict
        One per column and method, in the rows' order: ``sequence``,
        ``model``, ``column``, ``method``, ``available``, ``n_seeds``,
        ``seeds``; the test final average accuracy's ``test_mean``,
        ``test_sd`` (the *sample* standard deviation, ``ddof=1``; None for
        a single seed), ``test_min``, ``test_median`` and ``test_max`` (%);
        ``test_forgetting_mean``; the paper's and the reference code's
        numbers (``paper``, ``reference``); and ``n_reach_paper``, the
        number of seeds whose test accuracy reaches the paper's number
        (at least it, up to its rounding), with ``fraction_reach_paper``
        (None where the paper has no number). A method this build lacks
        has ``available`` False and no statistics.

    Examples
    --------
    >>> from skcl.reproduce import summarize
    >>> rows = [{"sequence": "ci-split-iris", "model": "sr", "column": "Iris SR",
    ...          "method": "EWC", "seed": seed, "paper": 63.3333, "reference": 63.33,
    ...          "available": True, "test": test, "test_forgetting": 50.0}
    ...         for seed, test in enumerate([33.3333, 66.6667, 66.6667])]
    >>> (cell,) = summarize(rows)
    >>> round(cell["test_mean"], 2), round(cell["test_sd"], 2), cell["n_reach_paper"]
    (55.56, 19.25, 2)
    """
    cells = {}
    for row in rows:
        cells.setdefault((row["column"], row["method"]), []).append(row)
    summary = []
    for (column, method), group in cells.items():
        first = group[0]
        cell = {
            "sequence": first["sequence"], "model": first["model"], "column": column,
            "method": method, "available": bool(first["available"]), "n_seeds": len(group),
            "seeds": [row.get("seed") for row in group],
        }
        done = [row for row in group if row["available"]]
        if done:
            tests = np.array([row["test"] for row in done])
            paper = first["paper"]
            reach = None if paper is None else int(np.sum(tests >= paper - _REACH_TOLERANCE))
            cell.update(
                test_mean=float(np.mean(tests)),
                test_sd=float(np.std(tests, ddof=1)) if len(tests) > 1 else None,
                test_min=float(np.min(tests)),
                test_median=float(np.median(tests)),
                test_max=float(np.max(tests)),
                test_forgetting_mean=float(np.mean([row["test_forgetting"] for row in done])),
                n_reach_paper=reach,
                fraction_reach_paper=None if reach is None else reach / len(tests),
            )
        cell.update(paper=first["paper"], reference=first["reference"])
        summary.append(cell)
    return summary


def _seed_range(seeds):
    seeds = sorted(set(seeds))
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


_ORIGIN_MARKS = {"paper": "", "skcl": " †", "scikit-learn": " ‡"}


def _label(row):
    """A row's method as the table shows it: † skcl's baselines, ‡ scikit-learn's."""
    return row["method"] + _ORIGIN_MARKS[row.get("origin") or _origin(row["method"])]


def _origin(name):
    return next((m.origin for m in METHODS if m.name == name), "paper")


def _protocol_note(rows):
    if any(row.get("protocol") == "defaults" for row in rows):
        return " at every method's defaults, no validation sequence"
    return ""


def _footnotes(rows):
    lines = []
    origins = {row.get("origin") or _origin(row["method"]) for row in rows}
    if "skcl" in origins:
        lines.append("† not in the paper: skcl's exact family, L_{t-1} kept as sums, "
                     "no grid (its one hyperparameter from held-out sums).")
    if "scikit-learn" in origins:
        lines.append("‡ not in the paper: scikit-learn's, by partial_fit at its defaults.")
    for column in dict.fromkeys(row["column"] for row in rows):
        row = next(r for r in rows if r["column"] == column)
        if "pretraining" in row:
            ours, papers = row["pretraining"], row["paper_pretraining"]
            note = "as in the paper" if ours == papers else f"the paper: {papers}"
            lines.append(f"{column}: features of an extractor pre-trained on {ours} ({note}).")
    for row in rows:
        if row.get("settings"):
            fixed = ", ".join(f"{k}={v!r}" for k, v in row["settings"].items())
            lines.append(f"{row['column']}: {row['method']} with {fixed}.")
    return list(dict.fromkeys(lines))  # once, however many seeds


def _format_seeds_table(rows):
    """One line per column × method: mean ± sd, range, paper, ref, seeds ≥ paper."""
    summary = summarize(rows)
    seeds = [row["seed"] for row in rows if "seed" in row]
    col_width = max(len("column"), *(len(c["column"]) for c in summary))
    labels = {row["method"]: _label(row) for row in rows}
    name_width = max(len("method"), *(len(labels[c["method"]]) for c in summary))
    header = ["mean ±    sd", "min", "max", "paper", "ref", "≥ paper"]
    widths = [len("100.00 ± 100.00"), 6, 6, 6, 6, 7]
    lines = [
        f"Test final average accuracy (%){_protocol_note(rows)} over {len(set(seeds))} seeds "
        f"({_seed_range(seeds)}): mean ± sample standard deviation,",
        "min and max; paper: Table I (one seed); ref: the paper's code on 2 cores (one seed);",
        "≥ paper: the seeds whose accuracy reaches the paper's number",
        "  ".join([
            "column".ljust(col_width), "method".ljust(name_width),
            *(h.rjust(w) for h, w in zip(header, widths)),
        ]),
    ]
    previous = None
    for cell in summary:
        label = "" if cell["column"] == previous else cell["column"]
        previous = cell["column"]
        if "test_mean" in cell:
            sd = "–" if cell["test_sd"] is None else f"{cell['test_sd']:.2f}"
            values = [f"{cell['test_mean']:.2f} ± {sd:>5}", _fmt(cell["test_min"]),
                      _fmt(cell["test_max"])]
            reach = "–" if cell["n_reach_paper"] is None else _reached(cell)
        else:
            values, reach = ["n/a", "", ""], ""
        values += [_fmt(cell["paper"]), _fmt(cell["reference"]), reach]
        lines.append("  ".join([
            label.ljust(col_width), labels[cell["method"]].ljust(name_width),
            *(v.rjust(w) for v, w in zip(values, widths)),
        ]).rstrip())
    return "\n".join(lines + _footnotes(rows))


def format_table(rows):
    """Table I's layout: methods down, columns across, ``ours / paper / ref``.

    ``paper`` is Table I (it has no 2D Iris column and no Fashion-MNIST
    column); ``ref`` is the paper's public code on a 2-core CPU (classical
    sequences only); "n/a" marks a method this build of skcl lacks. Image
    columns get a footnote naming the extractor's pre-training task, and
    whether it is the paper's.

    Rows of several seeds (``run_column(..., n_seeds=N)``) give one line
    per column × method instead, whatever the number of columns: the
    mean ± the sample standard deviation of the test final average
    accuracy over the seeds, its minimum and maximum, the paper's and
    the reference code's single numbers, and how many seeds reach the
    paper's number (e.g. ``3/10``); see :func:`summarize`.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`.

    Returns
    -------
    str

    Examples
    --------
    >>> from skcl.reproduce import METHODS, format_table, run_column
    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"])
    >>> print(format_table(rows))
    Test final average accuracy (%): ours / paper's Table I / paper's code on 2 cores
    method         Iris SR
              ours / paper / ref
    Joint   96.67 / 96.67 / 96.67

    Several seeds:

    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"],
    ...                      n_seeds=3)
    >>> print(format_table(rows))  # doctest: +NORMALIZE_WHITESPACE
    Test final average accuracy (%) over 3 seeds (0–2): mean ± sample standard deviation,
    min and max; paper: Table I (one seed); ref: the paper's code on 2 cores (one seed);
    ≥ paper: the seeds whose accuracy reaches the paper's number
    column   method     mean ±    sd     min     max   paper     ref  ≥ paper
    Iris SR  Joint    96.67 ±  0.00   96.67   96.67   96.67   96.67      3/3
    """
    if not rows:
        return "Test final average accuracy (%): no method was run."
    if _several_seeds(rows):
        return _format_seeds_table(rows)
    columns = list(dict.fromkeys(row["column"] for row in rows))
    methods = list(dict.fromkeys(_label(row) for row in rows))
    cells = {}
    for row in rows:
        ours = _fmt(row.get("test")) if row["available"] else "n/a"
        cells[_label(row), row["column"]] = (
            f"{ours} / {_fmt(row['paper'])} / {_fmt(row['reference'])}"
        )
    subheader = "ours / paper / ref"
    width = max(len(text) for text in [subheader, *columns, *cells.values()])
    name_width = max(len("method"), *(len(m) for m in methods))
    lines = [
        f"Test final average accuracy (%){_protocol_note(rows)}: ours / paper's Table I / "
        "paper's code on 2 cores",
        "  ".join(["method".ljust(name_width)] + [c.center(width) for c in columns]),
        "  ".join([" " * name_width] + [subheader.center(width)] * len(columns)),
    ]
    for method in methods:
        lines.append("  ".join(
            [method.ljust(name_width)]
            + [cells.get((method, column), "").rjust(width) for column in columns]
        ))
    return "\n".join([line.rstrip() for line in lines] + _footnotes(rows))


_CSV_FIELDS = [
    "sequence", "model", "column", "method", "origin", "protocol", "available", "best_params",
    "validation", "test", "test_task_accuracies", "test_forgetting", "test_log_loss", "test_task_log_loss",
    "test_ece", "test_task_ece", "paper", "reference", "n_candidates", "search_time_s",
    "pretraining", "paper_pretraining", "transform_time_s", "settings",
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
    """One heatmap per (column, method) of the test accuracy matrices (with
    several seeds, their mean over the seeds), saved as ``path`` (needs
    matplotlib). Returns ``path``."""
    from matplotlib.figure import Figure

    from ..plotting import plot_accuracy_matrix

    matrices = {}
    for row in rows:
        if row.get("available") and "test_accuracy_matrix" in row:
            matrices.setdefault((row["column"], row["method"]), []).append(
                np.asarray(row["test_accuracy_matrix"]))
    columns = list(dict.fromkeys(column for column, _ in matrices))
    methods = list(dict.fromkeys(method for _, method in matrices))
    n_tasks = max((len(R[0]) for R in matrices.values()), default=1)
    panel = 1.2 + 0.45 * n_tasks
    fig = Figure(figsize=(panel * max(len(methods), 1) + 1, panel * max(len(columns), 1)),
                 dpi=100, layout="constrained")
    axes = fig.subplots(max(len(columns), 1), max(len(methods), 1), squeeze=False)
    for ax in axes.ravel():
        ax.set_axis_off()
    for (column, method), Rs in matrices.items():
        ax = axes[columns.index(column), methods.index(method)]
        ax.set_axis_on()
        title = f"{column}: {method}"
        if len(Rs) > 1:
            title += f"\nmean of {len(Rs)} seeds"
        plot_accuracy_matrix(np.mean(Rs, axis=0) / 100, ax=ax, title=title)
    fig.savefig(path)
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
