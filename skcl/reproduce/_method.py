"""One method of a column at one seed: its estimator, its search, its test scores.

:func:`_run_method` fills one row of the results: the method's estimator
gets the column's training settings and the seed, its grid is searched on
the validation sequence (none under ``protocol="defaults"``), and the
selected model is scored on the test sequence. An estimator outside skcl
(scikit-learn's), which a search of task sequences does not take, learns
by ``partial_fit`` alone, its one result laid out as a search's.
"""

import time
from types import SimpleNamespace

import numpy as np
from sklearn.base import clone
from sklearn.metrics import log_loss

from ..metrics import average_forgetting, expected_calibration_error, task_accuracies, task_scores
from ..model_selection import SequenceGridSearch, learn_task_sequence
from ..model_selection._sequence import is_skcl_classifier


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
    train, validation, _ = sequences
    estimator, skcl_estimator = _configured_estimator(row, cls, method, seq, model, seed)
    start = time.perf_counter()
    grid = {**method.param_grid, **seq.method_grids.get(method.name, {})}
    if protocol == "defaults":
        grid = {}
    # Every method of the registry has predict_proba: every row gets log loss and ECE.
    scoring = {"log_loss": log_loss, "ece": expected_calibration_error}
    if skcl_estimator:
        search = SequenceGridSearch(estimator, grid, n_jobs=n_jobs, verbose=verbose,
                                    task_scoring=scoring, scenario=seq.scenario)
        search.fit(train, validation, classes=classes,
                   task_labels=seq.scoring_scenario["task_labels"])
        return _evaluate(row, method, search, sequences, classes, protocol,
                         time.perf_counter() - start, seq.scoring_scenario)
    # scikit-learn's warn of classes not seen yet (GaussianNB: log of a zero
    # prior), as a class-incremental sequence has: expected, so silenced.
    with np.errstate(divide="ignore"):
        search = _learned_without_search(estimator, train, validation, classes, scoring,
                                         seq.scoring_scenario)
        return _evaluate(row, method, search, sequences, classes, protocol,
                         time.perf_counter() - start, seq.scoring_scenario)


def _configured_estimator(row, cls, method, seq, model, seed):
    """The method's estimator with the column's training settings and ``seed``.

    The settings the column fixes for this method are recorded in
    ``row["settings"]``.

    Returns
    -------
    estimator : estimator
    skcl_estimator : bool
        Whether it is one of skcl's classifiers (searched), not
        scikit-learn's (learned at its defaults).
    """
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
    return estimator, skcl_estimator


def _evaluate(row, method, search, sequences, classes, protocol, elapsed, scenario=None):
    """Score the selected estimator on the test sequence; fill ``row``.

    ``scenario``: the keywords ``scenario`` and ``task_labels`` of the
    scoring functions (None: class-incremental). Returns the estimator and
    the search, as :func:`_run_method`.
    """
    train, _, test = sequences
    best = search.best_estimator_
    scenario = scenario or {}
    test_accuracies = task_accuracies(best, test, **scenario)
    test_log_loss = task_scores(best, test, log_loss, **scenario)
    test_ece = task_scores(best, test, expected_calibration_error, **scenario)
    # The chosen parameters again, evaluated on the test sequence after
    # every task: the test accuracy matrix, for forgetting and its figure.
    R = _accuracy_matrix(best, train, test, classes, scenario)
    results = search.cv_results_
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
        grid=_grid_rows(results),
    )
    return best, search


def _grid_rows(results):
    """One dict per candidate of a search's ``cv_results_``: its validation scores (%)."""
    no_scores = [float("nan")] * len(results["params"])
    return [
        {"params": p, "validation": 100 * float(s), "validation_log_loss": float(ll),
         "validation_ece": 100 * float(e), "fit_time_s": float(t)}
        for p, s, ll, e, t in zip(
            results["params"],
            results["mean_test_score"],
            results.get("validation_log_loss", no_scores),
            results.get("validation_ece", no_scores),
            results["mean_fit_time"],
        )
    ]


def _accuracy_matrix(estimator, train, test, classes, scenario=None):
    """A fresh copy of ``estimator`` learns ``train``, evaluated on ``test`` after each task."""
    scenario = scenario or {}
    if is_skcl_classifier(estimator):
        return learn_task_sequence(clone(estimator), train, test, classes=classes, **scenario)
    return _partial_fit_sequence(clone(estimator), train, classes, evaluate=test,
                                 scenario=scenario)


def _partial_fit_sequence(estimator, train, classes, evaluate=None, scenario=None):
    """``partial_fit`` task by task (any classifier); the accuracy matrix on ``evaluate``.

    ``R[i, j]`` is the accuracy on task ``i`` of ``evaluate`` after the
    training tasks ``0..j``, as :func:`~skcl.model_selection.learn_task_sequence`
    gives for skcl's classifiers (which it alone accepts).
    """
    R = np.full((len(train), len(train)), np.nan)
    for j, (X, y) in enumerate(train):
        estimator.partial_fit(X, y, classes=classes)
        if evaluate is not None:
            R[:, j] = task_accuracies(estimator, evaluate, **(scenario or {}))
    return R


def _learned_without_search(estimator, train, validation, classes, scoring, scenario=None):
    """One candidate, learned by ``partial_fit``, laid out as a search's results."""
    scenario = scenario or {}
    start = time.perf_counter()
    fitted = clone(estimator)
    _partial_fit_sequence(fitted, train, classes)
    fit_time = time.perf_counter() - start
    score = float(np.mean(task_accuracies(fitted, validation, **scenario)))
    results = {"params": [{}], "mean_test_score": [score], "mean_fit_time": [fit_time]}
    for name, function in scoring.items():
        results[f"validation_{name}"] = [float(np.mean(task_scores(fitted, validation,
                                                                   function, **scenario)))]
    return SimpleNamespace(best_estimator_=fitted, best_params_={}, best_score_=score,
                           cv_results_=results)
