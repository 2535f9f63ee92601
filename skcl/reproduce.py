"""The paper's experiments on the classical task sequences (Table I(a)).

The protocol (paper, section IV and appendix D): for each method, every
hyperparameter setting of its grid learns the training task sequence and
is scored by final average accuracy on the validation sequence; the best
one is evaluated by final average accuracy on the test sequence.

:data:`METHODS` is the registry of Table I's rows: the estimator (looked
up lazily in :mod:`skcl`, so a method whose estimator is not in this build
is reported as "not available" rather than failing), its grid from
appendix D, and the numbers of the paper and of the paper's public code.
:func:`reproduce` runs it; ``skcl reproduce`` is its command line.
"""

import csv
import importlib
import json
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import datasets
from .metrics import task_accuracies
from .model_selection import SequenceGridSearch

__all__ = [
    "METHODS",
    "SEQUENCES",
    "GROUPS",
    "Method",
    "TaskSequence",
    "columns_for",
    "format_table",
    "reproduce",
    "run_column",
    "write_results",
]

#: λ's grid for EWC, SI, AQC and NC (appendix D).
LAMBDAS = [1, 10, 100, 1000, 10000]


@dataclass(frozen=True)
class Method:
    """One row of Table I.

    Attributes
    ----------
    name : str
        The paper's name, e.g. "AQC".
    estimator : str or class
        Name of the estimator class in :mod:`skcl` (or "module:Class"),
        resolved lazily by :meth:`resolve`.
    param_grid : dict
        The appendix-D grid (``{}``: no hyperparameter to tune).
    paper : dict
        Table I(a)'s test final average accuracy (%) by column label.
    reference : dict
        The paper's public code run on a 2-core CPU (REFERENCE-RESULTS).
    """

    name: str
    estimator: str
    param_grid: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)
    reference: dict = field(default_factory=dict)

    @property
    def key(self):
        """Command-line name: lower case, e.g. "aqc", "fine-tuning"."""
        return self.name.lower()

    def resolve(self):
        """The estimator class, or None when this build of skcl lacks it.

        ``estimator`` may be a class, a name in :mod:`skcl`, or an import
        path "package.module:Class".
        """
        if isinstance(self.estimator, type):
            return self.estimator
        module_name, _, name = self.estimator.rpartition(":")
        try:
            module = importlib.import_module(module_name or "skcl")
        except ImportError:
            return None
        return getattr(module, name, None)


def _row(*values):
    labels = ["Iris SR", "Iris FCNN", "Wine SR", "Wine FCNN", "2D Iris SR", "2D Iris FCNN"]
    return {label: value for label, value in zip(labels, values) if value is not None}


_T = 100 / 3  # 33.33 %: only the last task's class is ever predicted

METHODS = (
    Method("Joint", "JointClassifier", {},
           _row(96.6667, 100.0, 91.1111, 91.1111),
           _row(96.67, 100.0, 91.11, 93.89, 93.33, 93.33)),
    Method("Fine-tuning", "FineTuningClassifier", {},
           _row(_T, _T, _T, _T), _row(_T, _T, _T, _T, _T, _T)),
    Method("G-VCL", "GVCLClassifier", {},
           _row(_T, _T, _T, _T), _row(_T, _T, _T, _T, _T, _T)),
    Method("GM-VCL", "GMVCLClassifier", {},
           _row(_T, _T, _T, _T), _row(_T, _T, _T, _T, _T, _T)),
    Method("G-SFSVI", "GSFSVIClassifier", {},
           _row(66.6667, _T, _T, _T), _row(66.67, _T, _T, _T, 66.67, 66.67)),
    Method("EWC", "EWCClassifier", {"alpha": LAMBDAS},
           _row(63.3333, _T, 46.6667, _T), _row(63.33, _T, 46.67, _T, 63.33, 66.67)),
    Method("SI", "SIClassifier", {"alpha": LAMBDAS, "damping": [0.1, 1.0, 10.0]},
           _row(_T, _T, _T, _T), _row(_T, _T, _T, _T, _T, 66.67)),
    Method("AQC", "AQCClassifier", {"alpha": LAMBDAS},
           _row(66.6667, 63.3333, 49.6032, 33.3333), _row(66.67, 66.67, 49.60, _T, 66.67, 43.33)),
    Method("NC", "NCClassifier", {"alpha": LAMBDAS, "radius": [1.0, 10.0, 100.0]},
           _row(93.3333, 63.3333, 62.6984, 48.2540), _row(93.33, 50.0, 58.41, 40.56, 86.67, 90.0)),
)


@dataclass(frozen=True)
class TaskSequence:
    """A classical task sequence and the paper's training settings for it."""

    key: str
    label: str
    loader: object
    learning_rate: float
    fcnn_hidden: tuple
    batch_size: int = 16
    n_epochs: int = 100

    def settings(self, model):
        """Estimator parameters for model "sr" (softmax regression) or "fcnn"."""
        return {
            "hidden_layer_sizes": () if model == "sr" else self.fcnn_hidden,
            "learning_rate": self.learning_rate,
            "batch_size": self.batch_size,
            "n_epochs": self.n_epochs,
        }


SEQUENCES = {
    seq.key: seq
    for seq in [
        TaskSequence("ci-split-iris", "Iris", datasets.load_ci_split_iris, 0.1, (4,)),
        TaskSequence("ci-split-wine", "Wine", datasets.load_ci_split_wine, 0.01, (16,)),
        TaskSequence("ci-split-2d-iris", "2D Iris", datasets.load_ci_split_2d_iris, 0.1, (4,)),
    ]
}

MODELS = ("sr", "fcnn")

#: Named groups of (sequence, model) columns. "classical" is Table I(a).
GROUPS = {
    "classical": [("ci-split-iris", "sr"), ("ci-split-iris", "fcnn"),
                  ("ci-split-wine", "sr"), ("ci-split-wine", "fcnn")],
}


def column_label(sequence, model):
    """E.g. "Iris SR"."""
    return f"{SEQUENCES[sequence].label} {model.upper()}"


def columns_for(sequence, model="both"):
    """The (sequence, model) columns that ``skcl reproduce`` runs."""
    models = MODELS if model == "both" else (model,)
    if sequence in GROUPS:
        return [(s, m) for s, m in GROUPS[sequence] if m in models]
    if sequence not in SEQUENCES:
        raise ValueError(
            f"Unknown task sequence {sequence!r}; choose from {sorted(SEQUENCES) + sorted(GROUPS)}."
        )
    return [(sequence, m) for m in models]


def select_methods(names=None):
    """Methods of :data:`METHODS` by (case-insensitive) name, in Table I order."""
    if not names:
        return list(METHODS)
    by_key = {m.key: m for m in METHODS}
    aliases = {"ft": "fine-tuning", "finetuning": "fine-tuning", "gvcl": "g-vcl",
               "gmvcl": "gm-vcl", "gsfsvi": "g-sfsvi"}
    wanted = set()
    for name in names:
        key = aliases.get(name.lower(), name.lower())
        if key not in by_key:
            raise ValueError(f"Unknown method {name!r}; choose from {[m.key for m in METHODS]}.")
        wanted.add(key)
    return [m for m in METHODS if m.key in wanted]


def run_column(sequence, model, methods=None, *, n_jobs=None, random_state=0, log=None,
               verbose=0):
    """Run the protocol for one column of Table I.

    Parameters
    ----------
    sequence : str
        A key of :data:`SEQUENCES`, e.g. "ci-split-iris".
    model : {"sr", "fcnn"}
        Softmax regression or the paper's FCNN for that sequence.
    methods : list of Method, default=None
        Default: all of :data:`METHODS`.
    n_jobs : int, default=None
        Parallel candidates of each grid search.
    random_state : int, default=0
        Seed of every estimator.
    log : callable, default=None
        Called with one progress line per method.
    verbose : int, default=0
        Passed to the search (one line per candidate when positive).

    Returns
    -------
    rows : list of dict
        One per method: chosen parameters, validation and test final
        average accuracy (%), per-task test accuracies, timings, the
        paper's and the reference code's numbers, and the grid's scores.
    models : dict
        Method name → the selected estimator, trained on the training
        sequence.
    """
    seq = SEQUENCES[sequence]
    data = seq.loader()
    label = column_label(sequence, model)
    rows, models = [], {}
    for method in methods or METHODS:
        row = {
            "sequence": sequence, "model": model, "column": label, "method": method.name,
            "paper": method.paper.get(label), "reference": method.reference.get(label),
        }
        cls = method.resolve()
        if cls is None:
            row.update(available=False)
            rows.append(row)
            if log:
                log(f"[{label}] {method.name}: not available in this build of skcl")
            continue
        estimator = cls()
        settings = dict(seq.settings(model), random_state=random_state)
        accepted = estimator.get_params()
        estimator.set_params(**{k: v for k, v in settings.items() if k in accepted})
        start = time.perf_counter()
        search = SequenceGridSearch(estimator, method.param_grid, n_jobs=n_jobs, verbose=verbose)
        search.fit(data.train, data.validation, classes=data.classes)
        elapsed = time.perf_counter() - start
        test = task_accuracies(search.best_estimator_, data.test)
        row.update(
            available=True,
            best_params=search.best_params_,
            validation=100 * search.best_score_,
            test=100 * float(np.mean(test)),
            test_task_accuracies=[100 * float(a) for a in test],
            n_candidates=len(search.cv_results_["params"]),
            search_time_s=elapsed,
            grid=[
                {"params": p, "validation": 100 * float(s), "fit_time_s": float(t)}
                for p, s, t in zip(
                    search.cv_results_["params"],
                    search.cv_results_["validation_score"],
                    search.cv_results_["fit_time"],
                )
            ],
        )
        rows.append(row)
        models[method.name] = search.best_estimator_
        if log:
            paper = "–" if row["paper"] is None else f"{row['paper']:.2f}"
            log(
                f"[{label}] {method.name}: {row['n_candidates']} candidate(s), best "
                f"{search.best_params_ or '(no hyperparameters)'}, validation "
                f"{row['validation']:.2f}, test {row['test']:.2f} (paper {paper}), "
                f"{elapsed:.1f} s"
            )
    return rows, models


def reproduce(sequence, model="both", methods=None, *, n_jobs=None, random_state=0, log=None,
              verbose=0):
    """Run every column of ``sequence`` (see :func:`columns_for`).

    Returns
    -------
    rows : list of dict
        As :func:`run_column`, all columns.
    models : dict
        (sequence, model) → {method name → selected estimator}.
    """
    rows, models = [], {}
    for seq, mod in columns_for(sequence, model):
        column_rows, column_models = run_column(
            seq, mod, methods, n_jobs=n_jobs, random_state=random_state, log=log,
            verbose=verbose,
        )
        rows += column_rows
        models[seq, mod] = column_models
    return rows, models


def _fmt(value):
    return "–" if value is None else f"{value:.2f}"


def format_table(rows):
    """Table I's layout: methods down, columns across, ``ours / paper / ref``.

    ``paper`` is Table I(a) (it has no 2D Iris column); ``ref`` is the
    paper's public code on a 2-core CPU; "n/a" marks a method this build
    of skcl lacks.
    """
    columns = list(dict.fromkeys(row["column"] for row in rows))
    methods = list(dict.fromkeys(row["method"] for row in rows))
    cells = {}
    for row in rows:
        ours = _fmt(row.get("test")) if row["available"] else "n/a"
        cells[row["method"], row["column"]] = (
            f"{ours} / {_fmt(row['paper'])} / {_fmt(row['reference'])}"
        )
    subheader = "ours / paper / ref"
    width = max(len(text) for text in [subheader, *columns, *cells.values()])
    name_width = max(len("method"), *(len(m) for m in methods))
    lines = [
        "Test final average accuracy (%): ours / paper's Table I(a) / paper's code on 2 cores",
        "  ".join(["method".ljust(name_width)] + [c.center(width) for c in columns]),
        "  ".join([" " * name_width] + [subheader.center(width)] * len(columns)),
    ]
    for method in methods:
        lines.append("  ".join(
            [method.ljust(name_width)]
            + [cells.get((method, column), "").rjust(width) for column in columns]
        ))
    return "\n".join(lines)


_CSV_FIELDS = [
    "sequence", "model", "column", "method", "available", "best_params", "validation",
    "test", "test_task_accuracies", "paper", "reference", "n_candidates", "search_time_s",
]


def write_results(rows, output, stem, *, meta=None):
    """Write ``<stem>.csv`` (one line per column × method), ``<stem>.json``
    (everything, including every candidate's validation score) and
    ``<stem>.txt`` (the table) into the folder ``output``.

    Returns
    -------
    dict of str → Path
    """
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    paths = {ext: output / f"{stem}.{ext}" for ext in ("csv", "json", "txt")}
    with open(paths["csv"], "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=_CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            flat = dict(row)
            for name in ("best_params", "test_task_accuracies"):
                if name in flat:
                    flat[name] = json.dumps(flat[name])
            writer.writerow(flat)
    document = {"meta": {**_environment(), **(meta or {})}, "results": rows}
    paths["json"].write_text(json.dumps(document, indent=2, default=_json_default) + "\n")
    paths["txt"].write_text(format_table(rows) + "\n")
    return paths


def _environment():
    import jax
    import sklearn

    import skcl

    return {
        "skcl": skcl.__version__,
        "jax": jax.__version__,
        "scikit-learn": sklearn.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"Cannot write {type(value).__name__} to JSON.")
