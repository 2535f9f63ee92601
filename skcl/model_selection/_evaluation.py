"""One candidate through the task sequence: training, scoring, failures.

:func:`_evaluate_candidate` is what a joblib worker runs: it builds the
candidate, learns the training sequence, scores it on the validation
sequence, and turns an exception into ``error_score`` unless asked to
raise. It returns plain data, so that any joblib backend can ship it back.
"""

import time
import traceback
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning

from .._gradient.deferred_folds import complete_pending_fold, deferred_folds
from ._sequence import _evaluate, _learn, final_estimator


def _evaluate_candidate(estimator, params, train_tasks, validation_tasks, classes, scorer,
                        extra, error_score, keep_model, verbose, task_labels=None):
    """Clone, set the parameters, learn the sequence, score it (in a worker).

    Parameters
    ----------
    estimator : estimator
        What every candidate is a clone of.
    params : dict
        The candidate's parameters.
    train_tasks, validation_tasks : lists of (X, y)
        Checked sequences of the same length.
    classes : ndarray of shape (n_classes,)
    scorer : SequenceScorer
        Turns the validation accuracy matrix into the candidate's score.
    extra : dict
        The further per-task scores of ``task_scoring``, by name; their
        last column (after the last training task) is returned.
    error_score : "raise" or float
    keep_model : bool
        Return the trained candidate (when it did not fail).
    verbose : int
        Set as the final estimator's own ``verbose`` when nonzero and it
        has one.
    task_labels : list of ndarray, default=None
        Each validation task's labels: scored task-incrementally when given.

    Returns
    -------
    result : dict
        ``score``, ``R`` (the accuracy matrix), ``extra`` (by name),
        ``fit_time``, ``score_time``, ``error`` (the traceback, or None)
        and ``estimator`` (the trained candidate, or None).
    """
    candidate = clone(estimator).set_params(**params)
    last = final_estimator(candidate)
    if verbose and "verbose" in last.get_params():
        last.set_params(verbose=verbose)
    n_tasks = len(train_tasks)
    start = time.perf_counter()
    try:
        # Only the best candidate is used after its last task: the others
        # skip the fold that would prepare a next one; fit() completes the
        # best one's.
        with deferred_folds():
            matrices, fit_time, score_time = _learn(
                candidate, train_tasks, validation_tasks, classes, scorer.needs_history,
                {"accuracy": None}, task_labels,
            )
        R = matrices["accuracy"]
        score = scorer(R)
        if extra:
            start = time.perf_counter()
            # Score the trained candidate once more, on the extra scores alone.
            finals = _evaluate(candidate, validation_tasks, extra, task_labels)
            score_time += time.perf_counter() - start
        else:
            finals = {}
        error = None
    except Exception:
        if error_score == "raise":
            raise
        R = np.full((n_tasks, n_tasks), np.nan)
        fit_time, score_time = time.perf_counter() - start, 0.0
        score, error = float(error_score), traceback.format_exc()
        finals = {name: np.full(n_tasks, np.nan) for name in extra}
    return {
        "score": score,
        "R": R,
        "extra": finals,
        "fit_time": fit_time,
        "score_time": score_time,
        "error": error,
        "estimator": candidate if keep_model and error is None else None,
    }


def _complete_fold(estimator):
    """Make the kept candidate an ordinary estimator (see _evaluate_candidate).

    Its deferred last fold is done, exactly as it would have been during
    training.
    """
    complete_pending_fold(estimator)


def _warn_failures(failures, n_candidates):
    """One FitFailedWarning for all the failed candidates, showing the first.

    Called from the search's ``fit``: ``stacklevel=3`` points at the
    caller's ``fit`` line.
    """
    if failures:
        params, message = failures[0]
        warnings.warn(
            f"{len(failures)} of the {n_candidates} candidates failed and got "
            f"error_score. The first, {params}, raised:\n{message}",
            FitFailedWarning,
            stacklevel=3,
        )
