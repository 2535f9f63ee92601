"""The candidates' results: collected, ranked, and laid out as ``cv_results_``.

The layout is GridSearchCV's, so that ``pandas.DataFrame(cv_results_)``
and code written for GridSearchCV work; the one split is the validation
sequence.
"""

import numpy as np
from scipy.stats import rankdata


class _CandidateResults:
    """The candidates' results, filled in candidate order as they arrive.

    Only the best trained model so far is kept, so memory holds at most a
    few fitted models at a time.

    Parameters
    ----------
    candidates : list of dict
    n_tasks : int
    extra_names : iterable of str
        The names of the further per-task scores of ``task_scoring``.
    """

    def __init__(self, candidates, n_tasks, extra_names):
        n_candidates = len(candidates)
        self.candidates = candidates
        self.scores = np.empty(n_candidates)
        self.fit_times = np.empty(n_candidates)
        self.score_times = np.empty(n_candidates)
        self.matrices = np.empty((n_candidates, n_tasks, n_tasks))
        self.extra_scores = {key: np.empty((n_candidates, n_tasks)) for key in extra_names}
        self.failed = np.zeros(n_candidates, dtype=bool)
        self.failures = []  # (params, traceback) of each failed candidate
        self.advice = []  # the advisory warnings the candidates gave (reason, message, category)
        self.best_model, self.best_score = None, -np.inf

    def record(self, i, result):
        """Store candidate ``i``'s result, as returned by ``_evaluate_candidate``."""
        self.scores[i], self.matrices[i] = result["score"], result["R"]
        self.fit_times[i], self.score_times[i] = result["fit_time"], result["score_time"]
        self.advice.extend(result["advice"])
        for key, values in self.extra_scores.items():
            values[i] = result["extra"][key]
        if result["error"] is not None:
            self.failed[i] = True
            self.failures.append((self.candidates[i], result["error"]))
        elif self.scores[i] > self.best_score:
            self.best_model, self.best_score = result["estimator"], self.scores[i]

    def best_index(self):
        """Index of the best candidate that neither failed nor scored NaN.

        The first one among ties, as ``np.argmax``.

        Raises
        ------
        ValueError
            When every candidate failed or scored NaN.
        """
        valid = ~self.failed & ~np.isnan(self.scores)
        if not valid.any():
            raise ValueError(
                f"All {len(self.candidates)} candidates failed or scored NaN; the first "
                f"error was:\n{self.failures[0][1] if self.failures else 'a NaN score'}"
            )
        return int(np.argmax(np.where(valid, self.scores, -np.inf)))

    def cv_results(self):
        """The ``cv_results_`` dict (see :func:`_results_dict`)."""
        return _results_dict(
            self.candidates, self.scores, self.fit_times, self.score_times, self.matrices,
            self.extra_scores,
        )


def _rank(scores):
    """GridSearchCV's ranks: 1 is best, ties share the smallest, NaN comes last."""
    if np.isnan(scores).all():
        return np.ones(len(scores), dtype=np.int32)
    filled = np.nan_to_num(scores, nan=np.nanmin(scores) - 1)
    return rankdata(-filled, method="min").astype(np.int32)


def _results_dict(candidates, scores, fit_times, score_times, matrices, extra_scores):
    """GridSearchCV's ``cv_results_`` keys, plus the per-task validation scores.

    Parameters
    ----------
    candidates : list of dict
    scores, fit_times, score_times : ndarrays of shape (n_candidates,)
    matrices : ndarray of shape (n_candidates, n_tasks, n_tasks)
        The validation accuracy matrices.
    extra_scores : dict of ndarrays of shape (n_candidates, n_tasks)
        The further per-task scores after the last training task, by name.

    Returns
    -------
    results : dict
    """
    n_candidates = len(candidates)
    results = {"params": candidates}
    names = sorted({name for params in candidates for name in params})
    for name in names:
        column = np.ma.MaskedArray(np.empty(n_candidates, dtype=object), mask=True)
        for i, params in enumerate(candidates):
            if name in params:
                column[i] = params[name]
        results[f"param_{name}"] = column
    # One split, the validation sequence: means are its values, spreads 0
    # (NaN where the candidate failed, as np.std of one NaN).
    zero = np.where(np.isnan(scores), np.nan, 0.0)
    results["split0_test_score"] = scores
    results["mean_test_score"] = scores
    results["std_test_score"] = zero
    results["rank_test_score"] = _rank(scores)
    results["mean_fit_time"] = fit_times
    results["std_fit_time"] = np.zeros(n_candidates)
    results["mean_score_time"] = score_times
    results["std_score_time"] = np.zeros(n_candidates)
    for i in range(matrices.shape[1]):
        results[f"task{i}_validation_accuracy"] = matrices[:, i, -1]
    for key, values in extra_scores.items():
        results[f"validation_{key}"] = values.mean(axis=1)
        for i in range(values.shape[1]):
            results[f"task{i}_validation_{key}"] = values[:, i]
    return results
