"""Running the protocol: columns and seeds, each method in turn.

For each method of a column, every setting of its grid learns the
training sequence and is scored on the validation sequence; the best is
scored on the test sequence (``protocol="tuned"``, the paper's), or every
method runs at its defaults with no search (``protocol="defaults"``).

:func:`run_column` loads the column once (:func:`_load_column`: the
sequences, or for an image column the frozen extractor's features), then
runs each method for every seed (:func:`_run_seeds`), one row per seed;
one method at one seed is ``_method.py``'s job.
"""

import numbers
import time
import warnings
from typing import Any, NamedTuple

import numpy as np

from .._exact.openblas import refuse_wide_products
from ..exceptions import CrashingBLASError, SingleClassTaskWarning
from ..pipeline import make_pipeline
from ._extractors import _say, logger, pretrained_extractor, transform_tasks
from ._method import _configured_estimator, _run_method
from ._sequences import (
    PRETRAINING,
    SEQUENCES,
    column_label,
    columns_for,
    methods_for,
    pretraining_tasks,
)
from ._tables import _fmt, _reached, summarize

__all__ = ["PROTOCOLS", "reproduce", "run_column"]


def run_column(sequence, model, methods=None, *, n_jobs=None, random_state=0, n_seeds=1,
               log=None, verbose=0, root=None, download=False, pretraining=None,
               extractor=None, protocol="tuned", rows_per_task=None, overrides=None,
               on_row=None):
    """Run the protocol for one column of Table I.

    Parameters
    ----------
    sequence : str
        A key of :data:`SEQUENCES`, e.g. "ci-split-iris".
    model : {"sr", "fcnn"}
        Softmax regression or the paper's FCNN for that sequence (image
        sequences: "sr", one dense layer on the extracted features).
    methods : list of Method, default=None
        Default: the sequence's (:func:`methods_for`), every method of
        :data:`METHODS` run by default unless the sequence names its own.
    n_jobs : int, default=None
        Parallel candidates of each grid search.
    random_state : int, default=0
        Seed of every estimator (and of the extractor's pre-training); with
        several seeds, the first.
    n_seeds : int, default=1
        Run the whole protocol (grid on validation, best candidate on test)
        once per seed ``random_state, random_state + 1, …,
        random_state + n_seeds - 1``: each seed sets every estimator's
        initialisation and minibatch order. The data, the extracted
        features and the extractor are shared by all seeds: the extractor
        is pre-trained once, with ``random_state``, and stays frozen.
        Seeds run one after another in this process, reusing its compiled
        programs (the seed is data to them, not a shape).
    log : callable, default=None
        Called with one progress line per method and seed (and, with
        several seeds, one summary line per method); None sends them to
        the logger ``skcl.reproduce``.
    verbose : int, default=0
        Passed to the search (one line per candidate when positive).
    root, download
        Where the image loaders read, and whether torchvision may
        download (image sequences only).
    pretraining : str, default=None
        Image sequences: the pre-training task, a key of
        :data:`PRETRAINING` among the sequence's ``pretraining`` (default:
        the paper's).
    extractor : tuple, default=None
        Image sequences: an ``(extractor, info)`` pair from
        :func:`pretrained_extractor` to use instead of pre-training here.
    protocol : {"tuned", "defaults"}, default="tuned"
        The paper's protocol (each method's grid chosen on the validation
        sequence), or every method at its defaults with the column's
        training settings and no search (the validation sequence is only
        scored): what a user gets without a validation sequence of future
        tasks.
    rows_per_task : int, default=None
        Shrink the run: each task of the three sequences keeps this many
        of its rows (a seeded draw, in their order; None: all).
    overrides : dict, default=None
        Shrink the run: parameters set on every estimator that takes them,
        after the column's settings, e.g. ``{"n_epochs": 2,
        "n_components": 500}`` (None: the full run).
    on_row : callable, default=None
        Called with the rows so far each time a method finishes at a seed
        (to write them as they come).

    Returns
    -------
    rows : list of dict
        One per method: chosen parameters, validation and test final
        average accuracy (%), per-task test accuracies, the test average
        forgetting (percentage points, from the test accuracy matrix of
        the chosen parameters trained again with an evaluation after every
        task, ``test_accuracy_matrix``), the test log loss (nats) and
        expected calibration error (%, 10 bins) per task and averaged,
        timings (``time_s``: the method's whole time, its search and its
        evaluation on the test sequence; ``search_time_s``: the search's
        part), the paper's and the reference code's numbers, and the
        grid's scores (with each candidate's validation log loss and
        calibration error). Image columns also name the pre-training task.
        With several seeds, one row per method and seed, seed by seed
        within each method, each with its ``seed``; a single seed's rows
        have no ``seed`` key (its value is ``random_state``).
    models : dict
        Method name → the selected estimator, trained on the training
        sequence (for image sequences, a pipeline of the extractor and
        the classifier); with several seeds, the first seed's.

    Examples
    --------
    >>> from skcl.reproduce import METHODS, run_column
    >>> fine_tuning = [m for m in METHODS if m.name == "Fine-tuning"]
    >>> rows, models = run_column("ci-split-iris", "sr", fine_tuning)
    >>> rows[0]["method"], round(rows[0]["test"], 2)
    ('Fine-tuning', 33.33)
    >>> models["Fine-tuning"]
    FineTuningClassifier(learning_rate=0.1, random_state=0)

    Three seeds, 0, 1 and 2: one row each.

    >>> rows, _ = run_column("ci-split-iris", "sr", fine_tuning, n_seeds=3)
    >>> [(row["method"], row["seed"], round(row["test"], 2)) for row in rows]
    [('Fine-tuning', 0, 33.33), ('Fine-tuning', 1, 33.33), ('Fine-tuning', 2, 33.33)]
    """
    seq = SEQUENCES[sequence]
    label = column_label(sequence, model)
    seeds = _seeds(random_state, n_seeds)
    _check_protocol(protocol)
    _refuse_crashing_methods([(sequence, model)], methods, overrides)
    column = _load_column(seq, sequence, model, label, root=root, download=download,
                          pretraining=pretraining, extractor=extractor,
                          random_state=random_state, log=log)
    if rows_per_task is not None:
        column = _shrunk(column, rows_per_task, random_state)
    rows, models = [], {}
    for method in methods_for(sequence, methods):
        method_rows, best = _run_seeds(
            column, method, seeds, n_jobs=n_jobs, verbose=verbose, protocol=protocol, log=log,
            overrides=overrides, on_row=None if on_row is None else lambda r: on_row(rows + r),
        )
        if best is not None and method.name not in models:  # the first seed's
            models[method.name] = best
        rows += method_rows
    return rows, models


def _refuse_crashing_methods(columns, methods, overrides):
    """Raise before any data loads where a method would crash the loaded BLAS.

    scikit-learn's models (RanDumb's) run their products of
    ``n_components`` columns in the loaded BLAS, which skcl cannot block
    as it blocks its own: above :data:`~skcl._exact.openblas.DIRECT_MAX_COLUMNS`
    a threaded OpenBLAS segfaults, which would end the run hours in
    (:func:`~skcl._exact.openblas.refuse_wide_products` says why and the
    workaround). Raises :class:`~skcl.exceptions.CrashingBLASError`, a RuntimeError.
    """
    for sequence, model in columns:
        seq, chosen = SEQUENCES[sequence], methods_for(sequence, methods)
        for method in chosen:
            cls = method.resolve()
            if cls is None or method.origin != "scikit-learn":
                continue  # skcl's own products are blocked below the limit
            estimator, _ = _configured_estimator({}, cls, method, seq, model, 0,
                                                 overrides or {})
            n = estimator.get_params().get("n_components")
            try:
                refuse_wide_products(n, f"{method.name} ({cls.__name__}(n_components={n}))")
            except CrashingBLASError as refused:
                others = " ".join(m.key for m in chosen if m is not method)
                raise CrashingBLASError(
                    f"{refused} Or leave {method.name} out: methods={others}") from None


def _shrunk(column, rows_per_task, seed):
    """``column`` with ``rows_per_task`` rows of each task (a seeded draw, kept in order)."""
    if isinstance(rows_per_task, bool) or not isinstance(rows_per_task, numbers.Integral) \
            or rows_per_task < 1:
        raise ValueError(f"rows_per_task must be a positive integer, got {rows_per_task!r}.")
    rng = np.random.default_rng(seed)

    def keep(X, y):
        if len(y) <= rows_per_task:
            return X, y
        rows = np.sort(rng.choice(len(y), rows_per_task, replace=False))
        return X[rows], y[rows]

    sequences = tuple([keep(X, y) for X, y in tasks] for tasks in column.sequences)
    common = {**column.common, "rows_per_task": int(rows_per_task)}
    return column._replace(sequences=sequences, common=common)


class _Column(NamedTuple):
    """One column of Table I, loaded once for all its methods and seeds.

    Attributes
    ----------
    seq : TaskSequence
    model : {"sr", "fcnn"}
    label : str
        The column's name in the table, e.g. "Iris SR".
    sequences : tuple of lists of (X, y)
        The training, validation and test sequences (for an image
        column, the extractor's features).
    classes : ndarray of shape (n_classes,)
    common : dict
        The keys every row of the column starts with.
    extractor : estimator or None
        An image column's frozen extractor, which the selected models are
        returned behind; None for a classical column.
    """

    seq: Any
    model: str
    label: str
    sequences: tuple
    classes: Any
    common: dict
    extractor: Any


def _load_column(seq, sequence, model, label, *, root, download, pretraining, extractor,
                 random_state, log):
    """The column's sequences, ready for every method (a :class:`_Column`).

    An image column's are the features of its frozen extractor:
    pre-trained here unless ``extractor`` gives one, and transformed once
    for every method and candidate.
    """
    common = {"sequence": sequence, "model": model, "column": label}
    if not seq.pretraining:
        data = seq.loader(root, download=download) if seq.reads_files else seq.loader()
        return _Column(seq, model, label, (data.train, data.validation, data.test),
                       data.classes, common, None)
    extractor, info = _column_extractor(seq, sequence, pretraining, extractor, root=root,
                                        download=download, random_state=random_state, log=log)
    data = seq.loader(root, download=download)
    start = time.perf_counter()
    # Frozen features: transformed once, shared by every method and candidate.
    sequences = tuple(
        transform_tasks(extractor, tasks) for tasks in (data.train, data.validation, data.test)
    )
    transform_time = time.perf_counter() - start
    n_images = sum(len(y) for tasks in (data.train, data.validation, data.test) for _, y in tasks)
    _say(log, f"[{label}] features of {n_images} images in {transform_time:.1f} s")
    common.update(pretraining=info["pretraining"], paper_pretraining=PRETRAINING[
        seq.pretraining[0]].label, transform_time_s=transform_time)
    return _Column(seq, model, label, sequences, data.classes, common, extractor)


def _column_extractor(seq, sequence, pretraining, extractor, *, root, download, random_state,
                      log):
    """An image column's ``(extractor, info)``: the one given, or pre-trained here.

    ``pretraining`` defaults to the paper's task and must be one the
    sequence offers.
    """
    pretraining = pretraining or seq.pretraining[0]
    if pretraining not in seq.pretraining:
        raise ValueError(
            f"{sequence} is pre-trained on one of {list(seq.pretraining)}, not {pretraining!r}."
        )
    if extractor is None:
        extractor = pretrained_extractor(
            pretraining, root=root, download=download, random_state=random_state, log=log
        )
    return extractor


def _run_seeds(column, method, seeds, *, n_jobs, verbose, protocol, log, overrides=None,
               on_row=None):
    """One method of the column for every seed: its rows, and the first seed's model.

    The model is the selected estimator (behind the column's extractor
    for an image column), or None for a method this build lacks.
    """
    several = len(seeds) > 1
    paper, reference = method.paper.get(column.label), method.reference.get(column.label)
    base = {**column.common, "method": method.name}
    cls = method.resolve()
    if cls is None:
        _say(log, f"[{column.label}] {method.name}: not available in this build of skcl",
             skcl_method_done=True, skcl_runs=len(seeds))
        return [{**base, **({"seed": seed} if several else {}), "paper": paper,
                 "reference": reference, "available": False} for seed in seeds], None
    rows, first_model = [], None
    for seed in seeds:
        row = {**base, **({"seed": seed} if several else {}), "paper": paper,
               "reference": reference}
        # A record for a listener that shows progress inside the method.
        logger.debug("[%s] %s started", column.label, method.name,
                     extra={"skcl_method_start": f"[{column.label}] {method.name}"})
        start = time.perf_counter()
        best, search = _run_one_seed(row, cls, method, column, seed, n_jobs=n_jobs,
                                     verbose=verbose, protocol=protocol, overrides=overrides)
        row["time_s"] = time.perf_counter() - start  # the search and the test evaluation
        rows.append(row)
        if on_row is not None:
            on_row(rows)
        if first_model is None:
            first_model = (make_pipeline(column.extractor, best) if column.seq.pretraining
                           else best)
        _say_seed_done(log, column.label, method.name, seed if several else None, row,
                       search)
    if several:
        _say_over_seeds(log, column.label, method.name, rows, paper)
    return rows, first_model


def _run_one_seed(row, cls, method, column, seed, *, n_jobs, verbose, protocol, overrides):
    """:func:`_run_method` for ``seed``, the one-class tasks' warnings silenced."""
    with warnings.catch_warnings():
        # The protocol runs one-class tasks on purpose (CI Split Iris).
        warnings.simplefilter("ignore", SingleClassTaskWarning)
        return _run_method(row, cls, method, column.seq, column.model, seed, column.classes,
                           column.sequences, n_jobs=n_jobs, verbose=verbose,
                           protocol=protocol, overrides=overrides)


def _say_seed_done(log, label, name, seed, row, search):
    """The progress line of one method at one seed (``seed`` None: the only one)."""
    paper = row["paper"]
    shown = "–" if paper is None else f"{paper:.2f}"
    _say(
        log,
        f"[{label}] {name}{'' if seed is None else f' (seed {seed})'}: "
        f"{row['n_candidates']} candidate(s), best "
        f"{search.best_params_ or '(no hyperparameters)'}, validation "
        f"{row['validation']:.2f}, test {row['test']:.2f} (paper {shown}), "
        f"forgetting {row['test_forgetting']:.2f}, log loss {row['test_log_loss']:.3f}, "
        f"ECE {row['test_ece']:.2f}, {row['time_s']:.1f} s (search "
        f"{row['search_time_s']:.1f} s, then the test sequence)",
        skcl_method_done=True,
    )


def _say_over_seeds(log, label, name, rows, paper):
    """The summary line of one method over several seeds: mean, spread, paper reached."""
    (cell,) = summarize(rows)
    reached = "" if paper is None else f"; {_reached(cell)} ≥ paper"
    _say(log, f"[{label}] {name} over {len(rows)} seeds: test "
              f"{cell['test_mean']:.2f} ± {cell['test_sd']:.2f} (sample sd; min "
              f"{cell['test_min']:.2f}, max {cell['test_max']:.2f}; paper "
              f"{_fmt(paper)}{reached})")


#: How :func:`run_column` picks each method's setting: "tuned" is the
#: paper's protocol (its grid, chosen on the validation sequence);
#: "defaults" trains each estimator at its defaults, with no validation
#: sequence, as a user with a stream and no future tasks would.
PROTOCOLS = ("tuned", "defaults")


def _check_protocol(protocol):
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {list(PROTOCOLS)}, got {protocol!r}.")


def _seeds(random_state, n_seeds):
    """The seeds ``random_state, random_state + 1, …`` of ``n_seeds`` runs."""
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, numbers.Integral) or n_seeds < 1:
        raise ValueError(f"n_seeds must be a positive integer, got {n_seeds!r}.")
    if n_seeds == 1:
        return [random_state]
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise ValueError(
            f"Several seeds (n_seeds={n_seeds}) count up from an integer random_state, "
            f"got {random_state!r}."
        )
    return [int(random_state) + i for i in range(n_seeds)]


def reproduce(sequence, model="both", methods=None, *, n_jobs=None, random_state=0, n_seeds=1,
              log=None, verbose=0, root=None, download=False, pretraining=None,
              extractor_weights=None, cache_dir=None, protocol="tuned", rows_per_task=None,
              overrides=None, on_row=None):
    """Run every column of ``sequence`` (see :func:`columns_for`).

    Image sequences pre-train their extractor once per pre-training task
    (or load ``extractor_weights``, or the weights cached in
    ``cache_dir`` by an earlier run) and share it between columns.

    With ``n_seeds`` > 1 every column runs the protocol for the seeds
    ``random_state, …, random_state + n_seeds - 1`` (see
    :func:`run_column`); the extractors are pre-trained once, with
    ``random_state``, and shared by every seed. ``protocol``,
    ``rows_per_task``, ``overrides`` and ``on_row`` (called with every
    column's rows so far) are :func:`run_column`'s.

    Returns
    -------
    rows : list of dict
        As :func:`run_column`, all columns.
    models : dict
        (sequence, model) → {method name → selected estimator} (with
        several seeds, the first seed's).

    Examples
    --------
    >>> from skcl.reproduce import METHODS, format_table, reproduce
    >>> references = [m for m in METHODS if m.name in ("Joint", "Fine-tuning")]
    >>> rows, models = reproduce("ci-split-iris", "sr", references)
    >>> print(format_table(rows))
    Test final average accuracy (%): ours / paper's Table I / paper's code on 2 cores
    method              Iris SR
                   ours / paper / ref
    Joint        96.67 / 96.67 / 96.67
    Fine-tuning  33.33 / 33.33 / 33.33
    """
    columns = columns_for(sequence, model)
    keys = pretraining_tasks(sequence, columns, pretraining)
    if extractor_weights is not None and len(set(keys.values())) != 1:
        raise ValueError(
            "extractor_weights needs image sequences that share one pre-training task; "
            f"{sequence!r} uses {sorted(set(keys.values())) or 'none'}."
        )
    _seeds(random_state, n_seeds)  # a bad count fails before any work
    _check_protocol(protocol)
    _refuse_crashing_methods(columns, methods, overrides)
    rows, models, extractors = [], {}, {}
    for seq, mod in columns:
        extractor = None
        if seq in keys:
            key = keys[seq]
            if key not in extractors:  # pre-trained once, shared by the columns
                extractors[key] = pretrained_extractor(
                    key, root=root, download=download, weights=extractor_weights,
                    cache_dir=cache_dir, random_state=random_state, log=log,
                )
            extractor = extractors[key]
        done = list(rows)
        column_rows, column_models = run_column(
            seq, mod, methods, n_jobs=n_jobs, random_state=random_state, n_seeds=n_seeds,
            log=log, verbose=verbose, root=root, download=download, extractor=extractor,
            protocol=protocol, rows_per_task=rows_per_task, overrides=overrides,
            on_row=None if on_row is None else lambda r: on_row(done + r),
        )
        rows += column_rows
        models[seq, mod] = column_models
    return rows, models

