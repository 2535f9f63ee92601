"""Every candidate of a search through joblib, its outcomes collected in order.

Candidates are independent, so they run in parallel: in threads by
default (JAX computes without holding the GIL, and threads share the
compiled programs and NC's fits), or with any joblib backend chosen
around the search, including Dask's for a cluster. Each finished
candidate is recorded, logged to the ``skcl.model_selection`` logger and
counted by the search's progress bar.
"""

import logging

import numpy as np
from joblib import Parallel, delayed

from .._utils.progress import progress_bar
from ._evaluation import _evaluate_candidate
from ._results import _CandidateResults

logger = logging.getLogger("skcl.model_selection")


def _log_level(search):
    """The level of the search's records: INFO when ``verbose``, DEBUG otherwise."""
    return logging.INFO if search.verbose > 0 else logging.DEBUG


def _run_candidates(search, learner, candidates, train_tasks, validation_tasks, classes,
                    scorer, extra, task_labels=None):
    """Evaluate every candidate through joblib; their results as they came.

    Parameters
    ----------
    search : SequenceGridSearch or SequenceRandomizedSearch
        Read for its public parameters only: ``n_jobs``, ``pre_dispatch``,
        ``error_score``, ``refit``, ``verbose`` and ``progress_bar``.
    learner : estimator
        What every candidate is a clone of.
    candidates : list of dict
    train_tasks, validation_tasks : lists of (X, y)
    classes : ndarray of shape (n_classes,)
    scorer : SequenceScorer
    extra : dict
        The scorers of ``task_scoring``, by name.
    task_labels : list of ndarray, default=None
        Each validation task's labels, for task-incremental scoring.

    Returns
    -------
    results : _CandidateResults
    """
    parallel = Parallel(
        n_jobs=search.n_jobs, pre_dispatch=search.pre_dispatch, return_as="generator",
        # Threads, not processes, unless the caller chose a backend:
        # a worker process would compile every program again.
        prefer="threads",
    )
    outcomes = parallel(
        delayed(_evaluate_candidate)(
            learner,
            params,
            train_tasks,
            validation_tasks,
            classes,
            scorer,
            extra,
            search.error_score,
            bool(search.refit),
            max(int(search.verbose) - 1, 0),
            task_labels,
        )
        for params in candidates
    )
    # Outcomes arrive in candidate order (a generator, not a list), so
    # the results keep only the best model so far.
    results = _CandidateResults(candidates, len(train_tasks), extra)
    _collect(search, outcomes, results, scorer.name)
    return results


def _collect(search, outcomes, results, score_name):
    """Record each outcome as it arrives; log it and advance the progress bar."""
    name, n_candidates, level = type(search).__name__, len(results.candidates), _log_level(search)
    with progress_bar(search, total=n_candidates, desc="fit", unit="candidate") as bar:
        for i, outcome in enumerate(outcomes):
            results.record(i, outcome)
            logger.log(
                level, "[%s] candidate %d/%d %s: %s %.4f (%.2f s)",
                name, i + 1, n_candidates, results.candidates[i], score_name,
                results.scores[i], results.fit_times[i],
                extra={"skcl_candidate": (i + 1, n_candidates)},
            )
            if np.isfinite(results.best_score):
                bar.set_postfix_str(f"best {score_name} {results.best_score:.4f}", refresh=False)
            bar.update()
