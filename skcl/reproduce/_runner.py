"""Running the protocol: columns, seeds, and each method's search and test scores.

For each method of a column, every setting of its grid learns the
training sequence and is scored on the validation sequence; the best is
scored on the test sequence (``protocol="tuned"``, the paper's), or every
method runs at its defaults with no search (``protocol="defaults"``).
"""

import numbers
import time
import warnings
from types import SimpleNamespace

import numpy as np
from sklearn.base import clone
from sklearn.metrics import log_loss

from ..exceptions import SingleClassTaskWarning
from ..metrics import average_forgetting, expected_calibration_error, task_accuracies, task_scores
from ..model_selection import SequenceGridSearch, learn_task_sequence
from ..model_selection._sequence import is_skcl_classifier
from ..pipeline import make_pipeline
from ._extractors import _say, pretrained_extractor, transform_tasks
from ._registry import METHODS
from ._sequences import PRETRAINING, SEQUENCES, column_label, columns_for
from ._tables import _fmt, _reached, summarize

__all__ = ["PROTOCOLS", "reproduce", "run_column"]


def run_column(sequence, model, methods=None, *, n_jobs=None, random_state=0, n_seeds=1,
               log=None, verbose=0, root=None, download=False, pretraining=None,
               extractor=None, protocol="tuned"):
    """Run the protocol for one column of Table I.

    Parameters
    ----------
    sequence : str
        A key of :data:`SEQUENCES`, e.g. "ci-split-iris".
    model : {"sr", "fcnn"}
        Softmax regression or the paper's FCNN for that sequence (image
        sequences: "sr", one dense layer on the extracted features).
    methods : list of Method, default=None
        Default: all of :data:`METHODS`.
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

    Returns
    -------
    rows : list of dict
        One per method: chosen parameters, validation and test final
        average accuracy (%), per-task test accuracies, the test average
        forgetting (percentage points, from the test accuracy matrix of
        the chosen parameters trained again with an evaluation after every
        task, ``test_accuracy_matrix``), the test log loss (nats) and
        expected calibration error (%, 10 bins) per task and averaged,
        timings, the paper's and the reference code's numbers, and the
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
    several = len(seeds) > 1
    common = {"sequence": sequence, "model": model, "column": label}
    if seq.pretraining:
        pretraining = pretraining or seq.pretraining[0]
        if pretraining not in seq.pretraining:
            raise ValueError(
                f"{sequence} is pre-trained on one of {list(seq.pretraining)}, not {pretraining!r}."
            )
        if extractor is None:
            extractor = pretrained_extractor(
                pretraining, root=root, download=download, random_state=random_state, log=log
            )
        extractor, info = extractor
        data = seq.loader(root, download=download)
        start = time.perf_counter()
        # Frozen features: transformed once, shared by every method and candidate.
        train, validation, test = (
            transform_tasks(extractor, tasks) for tasks in (data.train, data.validation, data.test)
        )
        transform_time = time.perf_counter() - start
        n_images = sum(len(y) for tasks in (data.train, data.validation, data.test)
                       for _, y in tasks)
        _say(log, f"[{label}] features of {n_images} images in {transform_time:.1f} s")
        common.update(pretraining=info["pretraining"], paper_pretraining=PRETRAINING[
            seq.pretraining[0]].label, transform_time_s=transform_time)
    else:
        data = seq.loader(root, download=download) if seq.reads_files else seq.loader()
        train, validation, test = data.train, data.validation, data.test
    rows, models = [], {}
    for method in methods or METHODS:
        base = {**common, "method": method.name}
        paper, reference = method.paper.get(label), method.reference.get(label)
        cls = method.resolve()
        if cls is None:
            for seed in seeds:
                rows.append({**base, **({"seed": seed} if several else {}), "paper": paper,
                             "reference": reference, "available": False})
            _say(log, f"[{label}] {method.name}: not available in this build of skcl",
                 skcl_method_done=True, skcl_runs=len(seeds))
            continue
        method_rows = []
        for seed in seeds:
            row = {**base, **({"seed": seed} if several else {}), "paper": paper,
                   "reference": reference}
            with warnings.catch_warnings():
                # The protocol runs one-class tasks on purpose (CI Split Iris).
                warnings.simplefilter("ignore", SingleClassTaskWarning)
                best, search = _run_method(row, cls, method, seq, model, seed, data.classes,
                                           (train, validation, test), n_jobs=n_jobs,
                                           verbose=verbose, protocol=protocol)
            method_rows.append(row)
            if method.name not in models:  # the first seed's
                models[method.name] = make_pipeline(extractor, best) if seq.pretraining else best
            shown = "–" if paper is None else f"{paper:.2f}"
            _say(
                log,
                f"[{label}] {method.name}{f' (seed {seed})' if several else ''}: "
                f"{row['n_candidates']} candidate(s), best "
                f"{search.best_params_ or '(no hyperparameters)'}, validation "
                f"{row['validation']:.2f}, test {row['test']:.2f} (paper {shown}), "
                f"forgetting {row['test_forgetting']:.2f}, log loss {row['test_log_loss']:.3f}, "
                f"ECE {row['test_ece']:.2f}, {row['search_time_s']:.1f} s",
                skcl_method_done=True,
            )
        rows += method_rows
        if several:
            (cell,) = summarize(method_rows)
            reached = "" if paper is None else f"; {_reached(cell)} ≥ paper"
            _say(log, f"[{label}] {method.name} over {len(seeds)} seeds: test "
                      f"{cell['test_mean']:.2f} ± {cell['test_sd']:.2f} (sample sd; min "
                      f"{cell['test_min']:.2f}, max {cell['test_max']:.2f}; paper "
                      f"{_fmt(paper)}{reached})")
    return rows, models


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


def _run_method(row, cls, method, seq, model, seed, classes, sequences, *, n_jobs, verbose,
                protocol="tuned"):
    """The protocol for one method and one seed; fills ``row`` in place.

    ``protocol="defaults"`` leaves the grid out: the estimator as
    constructed, with the column's training settings, and the validation
    sequence only scored. An estimator outside skcl (scikit-learn's) is
    learned by ``partial_fit`` without a search, as a user would.

    Returns the selected estimator (fitted on the training sequence) and
    the fitted search (or its stand-in).
    """
    train, validation, test = sequences
    estimator = cls(**method.params)
    settings = dict(seq.settings(model), random_state=seed)
    fixed = seq.method_settings.get(method.name, {})
    settings.update(fixed)
    if fixed:
        row["settings"] = dict(fixed)
    skcl_estimator = is_skcl_classifier(estimator)
    if not skcl_estimator:
        # The settings are skcl's vocabulary (SGD's learning_rate is a
        # schedule's name): scikit-learn's estimators keep their defaults.
        settings = {"random_state": seed}
    # Only the settings the estimator takes: the exact family has no
    # learning rate, GaussianNB no random_state.
    accepted = estimator.get_params()
    estimator.set_params(**{k: v for k, v in settings.items() if k in accepted})
    start = time.perf_counter()
    grid = {**method.param_grid, **seq.method_grids.get(method.name, {})}
    if protocol == "defaults":
        grid = {}
    # Every method of the registry has predict_proba: every row gets log loss and ECE.
    scoring = {"log_loss": log_loss, "ece": expected_calibration_error}
    if skcl_estimator:
        search = SequenceGridSearch(estimator, grid, n_jobs=n_jobs, verbose=verbose,
                                    task_scoring=scoring)
        search.fit(train, validation, classes=classes)
        return _evaluate(row, method, search, sequences, classes, protocol,
                         time.perf_counter() - start)
    # scikit-learn's warn of classes not seen yet (GaussianNB: log of a zero
    # prior), as a class-incremental sequence has: expected, so silenced.
    with np.errstate(divide="ignore"):
        search = _learned_without_search(estimator, train, validation, classes, scoring)
        return _evaluate(row, method, search, sequences, classes, protocol,
                         time.perf_counter() - start)


def _evaluate(row, method, search, sequences, classes, protocol, elapsed):
    """Score the selected estimator on the test sequence; fill ``row``.

    Returns the estimator and the search, as :func:`_run_method`.
    """
    train, _, test = sequences
    best = search.best_estimator_
    test_accuracies = task_accuracies(best, test)
    test_log_loss = task_scores(best, test, log_loss)
    test_ece = task_scores(best, test, expected_calibration_error)
    # The chosen parameters again, evaluated on the test sequence after
    # every task: the test accuracy matrix, for forgetting and its figure.
    R = _accuracy_matrix(best, train, test, classes)
    results = search.cv_results_
    no_scores = [float("nan")] * len(results["params"])
    row.update(
        available=True,
        protocol=protocol,
        origin=method.origin,
        best_params=search.best_params_,
        validation=100 * search.best_score_,
        test=100 * float(np.mean(test_accuracies)),
        test_task_accuracies=[100 * float(a) for a in test_accuracies],
        test_forgetting=100 * average_forgetting(R),
        test_log_loss=float(np.mean(test_log_loss)),
        test_task_log_loss=[float(v) for v in test_log_loss],
        test_ece=100 * float(np.mean(test_ece)),
        test_task_ece=[100 * float(v) for v in test_ece],
        test_accuracy_matrix=(100 * R).tolist(),
        n_candidates=len(results["params"]),
        search_time_s=elapsed,
        grid=[
            {"params": p, "validation": 100 * float(s), "validation_log_loss": float(ll),
             "validation_ece": 100 * float(e), "fit_time_s": float(t)}
            for p, s, ll, e, t in zip(
                results["params"],
                results["mean_test_score"],
                results.get("validation_log_loss", no_scores),
                results.get("validation_ece", no_scores),
                results["mean_fit_time"],
            )
        ],
    )
    return best, search


def _accuracy_matrix(estimator, train, test, classes):
    """A fresh copy of ``estimator`` learns ``train``, evaluated on ``test`` after each task."""
    if is_skcl_classifier(estimator):
        return learn_task_sequence(clone(estimator), train, test, classes=classes)
    return _partial_fit_sequence(clone(estimator), train, classes, evaluate=test)


def _partial_fit_sequence(estimator, train, classes, evaluate=None):
    """``partial_fit`` task by task (any classifier); the accuracy matrix on ``evaluate``.

    ``R[i, j]`` is the accuracy on task ``i`` of ``evaluate`` after the
    training tasks ``0..j``, as :func:`~skcl.model_selection.learn_task_sequence`
    gives for skcl's classifiers (which it alone accepts).
    """
    R = np.full((len(train), len(train)), np.nan)
    for j, (X, y) in enumerate(train):
        estimator.partial_fit(X, y, classes=classes)
        if evaluate is not None:
            R[:, j] = task_accuracies(estimator, evaluate)
    return R


def _learned_without_search(estimator, train, validation, classes, scoring):
    """One candidate, learned by ``partial_fit``, laid out as a search's results."""
    start = time.perf_counter()
    fitted = clone(estimator)
    _partial_fit_sequence(fitted, train, classes)
    fit_time = time.perf_counter() - start
    score = float(np.mean(task_accuracies(fitted, validation)))
    results = {"params": [{}], "mean_test_score": [score], "mean_fit_time": [fit_time]}
    for name, function in scoring.items():
        results[f"validation_{name}"] = [float(np.mean(task_scores(fitted, validation,
                                                                   function)))]
    return SimpleNamespace(best_estimator_=fitted, best_params_={}, best_score_=score,
                           cv_results_=results)


def reproduce(sequence, model="both", methods=None, *, n_jobs=None, random_state=0, n_seeds=1,
              log=None, verbose=0, root=None, download=False, pretraining=None,
              extractor_weights=None, cache_dir=None, protocol="tuned"):
    """Run every column of ``sequence`` (see :func:`columns_for`).

    Image sequences pre-train their extractor once per pre-training task
    (or load ``extractor_weights``, or the weights cached in
    ``cache_dir`` by an earlier run) and share it between columns.

    With ``n_seeds`` > 1 every column runs the protocol for the seeds
    ``random_state, …, random_state + n_seeds - 1`` (see
    :func:`run_column`); the extractors are pre-trained once, with
    ``random_state``, and shared by every seed. ``protocol`` is
    :func:`run_column`'s.

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
    keys = {}  # image column → its pre-training task
    for seq, _ in columns:
        options = SEQUENCES[seq].pretraining
        if options:
            keys[seq] = pretraining if pretraining in options else options[0]
    if pretraining is not None and pretraining not in keys.values():
        raise ValueError(
            f"No task sequence of {sequence!r} is pre-trained on {pretraining!r}; they take "
            f"{sorted({o for seq, _ in columns for o in SEQUENCES[seq].pretraining})}."
        )
    if extractor_weights is not None and len(set(keys.values())) != 1:
        raise ValueError(
            "extractor_weights needs image sequences that share one pre-training task; "
            f"{sequence!r} uses {sorted(set(keys.values())) or 'none'}."
        )
    _seeds(random_state, n_seeds)  # a bad count fails before any work
    _check_protocol(protocol)
    rows, models, extractors = [], {}, {}
    for seq, mod in columns:
        extractor = None
        if seq in keys:
            key = keys[seq]
            if key not in extractors:
                extractors[key] = pretrained_extractor(
                    key, root=root, download=download, weights=extractor_weights,
                    cache_dir=cache_dir, random_state=random_state, log=log,
                )
            extractor = extractors[key]
        column_rows, column_models = run_column(
            seq, mod, methods, n_jobs=n_jobs, random_state=random_state, n_seeds=n_seeds,
            log=log, verbose=verbose, root=root, download=download, extractor=extractor,
            protocol=protocol,
        )
        rows += column_rows
        models[seq, mod] = column_models
    return rows, models
