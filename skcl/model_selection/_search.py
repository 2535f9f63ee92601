"""Grid search over hyperparameters, scored on a validation task sequence.

The paper's protocol (section IV, appendix D): every candidate learns the
whole *training* task sequence, is scored by its final average accuracy on
the *validation* task sequence, and the best one is evaluated on the test
sequence. Candidates are independent, so they run in parallel through
joblib: in threads by default (JAX computes without holding the GIL, and
threads share the compiled programs and NC's fits), or with any joblib
backend chosen around the search, including Dask's for a cluster.

A pipeline of feature extractors and a classifier is searched without
re-running the extractors: when the grid only sets the final step, the
sequences go through the leading steps once (those that come unfitted are
fitted on the first training task, as each candidate's first
``partial_fit`` would), and the candidates are clones of the final step
learning the features (``_prefix.py``).

:class:`SequenceGridSearch` tries every point of a grid,
:class:`SequenceRandomizedSearch` ``n_iter`` points drawn by scikit-learn's
``ParameterSampler``; both share :class:`_BaseSequenceSearch`. Progress
goes to the ``logging`` logger ``skcl.model_selection``, and with
``progress_bar=True`` to a tqdm bar counting the finished candidates.

This module holds the estimators and runs the candidates; the parts have
one module each: the candidates and the checks that need no training
(``_candidates.py``), the fast path of a pipeline's fitted leading steps
(``_prefix.py``), one candidate's training and scoring
(``_evaluation.py``), and the results and their ``cv_results_`` layout
(``_results.py``).
"""

import logging
import numbers
import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._utils.progress import check_progress_bar, progress_bar
from ._candidates import (
    _check_candidates_can_learn,
    _grid_candidates,
    _sampled_candidates,
)
from ._evaluation import _complete_fold, _evaluate_candidate, _warn_failures
from ._prefix import (
    _final_step_learner,
    _fit_leading_steps,
    _transform_leading,
    _uses_fitted_prefix,
    _with_final_step,
)
from ._results import _CandidateResults
from ._scoring import get_sequence_scorer
from ._sequence import (
    check_multi_scoring,
    check_sequences,
    check_sequential_estimator,
    final_estimator,
)

__all__ = ["SequenceGridSearch", "SequenceRandomizedSearch"]

logger = logging.getLogger("skcl.model_selection")


def _best_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            getattr(self.best_estimator_, attr)
        else:
            getattr(self.estimator, attr)
        return True

    return check


_COMMON_PARAMETERS = """\
    scoring : str or callable, default="final_average_accuracy"
        How a candidate's validation accuracy matrix ``R`` becomes its
        score, greater is better: "final_average_accuracy" (mean of the
        last column of ``R``), "neg_average_forgetting",
        "backward_transfer", or a callable ``scoring(R) -> float``.
    task_scoring : str, callable, list or dict, default=None
        Further per-task scores of the validation sequence after the last
        training task, reported in ``cv_results_`` beside the accuracy;
        they do not choose the best candidate. Anything
        :func:`skcl.metrics.task_scores` takes, e.g.
        ``["neg_log_loss", skcl.metrics.expected_calibration_error]``, or
        a list or dict of them.
    refit : bool, default=True
        Keep the best candidate as ``best_estimator_``. It is the model
        that was scored: the best candidate *trained on the training
        sequence*, which is what the protocol asks for, so no second
        training is needed. (GridSearchCV retrains on all the data because
        its folds hold out data; here nothing is held out of training.)
        False keeps no model, which saves shipping fitted models back from
        parallel workers.
    n_jobs : int, default=None
        Candidates run in parallel. None means 1 unless in a
        ``joblib.parallel_backend`` / ``parallel_config`` context; -1
        means all processors. Results do not depend on it. They run in
        threads of this process, which share its compiled programs and
        NC's consolidator fits; a ``joblib.parallel_config(backend=...)``
        around the search (e.g. "loky" for processes, "dask" for a
        cluster) runs them there instead.
    verbose : int, default=0
        Progress goes to the :mod:`logging` logger
        ``skcl.model_selection``: one record per candidate as it finishes,
        at level INFO when ``verbose`` is 1 or more (DEBUG otherwise), so
        ``logging.basicConfig(level=logging.INFO)`` shows them. Higher
        values also set each candidate's estimator's own ``verbose`` (when
        it has one).
    progress_bar : bool, default=False
        Show a tqdm progress bar on standard error (a widget in a notebook)
        that counts the candidates as they finish; each one learns the
        whole training sequence and is scored on the validation sequence.
        It changes no result. Needs tqdm (``pip install 'skcl[progress]'``):
        without it, ``fit`` raises an ImportError before any work.
    error_score : "raise" or float, default=np.nan
        Score of a candidate whose training raises (e.g. diverges at a
        large λ): "raise" re-raises; a number records it and warns with
        :class:`~sklearn.exceptions.FitFailedWarning`.
    pre_dispatch : int or str, default="2*n_jobs"
        How many candidates joblib dispatches ahead.
"""

_COMMON_ATTRIBUTES = """\
    cv_results_ : dict of ndarrays
        One entry per candidate, with GridSearchCV's keys, so that
        ``pandas.DataFrame(cv_results_)`` and code written for
        GridSearchCV work: ``params`` (list of dicts), ``param_<name>``
        (masked arrays: masked where a candidate does not set ``name``),
        ``split0_test_score`` (the score on the validation sequence),
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``
        (1 is best; ties share the smallest rank, NaN scores rank last,
        as in GridSearchCV), ``mean_fit_time``, ``std_fit_time``,
        ``mean_score_time`` and ``std_score_time`` (seconds learning the
        training sequence and evaluating on the validation sequence).

        There is one split, the validation sequence: every ``mean_*``
        equals its single value and every ``std_*`` is 0 (NaN for a
        failed candidate). They do *not* measure the spread over seeds or
        sequences; for that, run the search once per seed.

        Beside them, per candidate: ``task<i>_validation_accuracy`` (the
        accuracy on validation task i after the last training task) and,
        for each score ``<name>`` of ``task_scoring``,
        ``task<i>_validation_<name>`` and ``validation_<name>`` (its
        mean over the validation tasks).
    accuracy_matrices_ : ndarray of shape (n_candidates, n_tasks, n_tasks)
        The validation accuracy matrices ``R``; columns before the last
        are NaN unless the scoring looks at them.
    best_index_ : int
        Index of the best candidate; the first one among ties.
    best_params_ : dict
    best_score_ : float
    best_estimator_ : estimator
        The best candidate, trained on the training sequence. Only with
        ``refit=True``. When the leading steps of a pipeline transformed
        the sequences once, a pipeline of those steps (the same objects
        where they came fitted, fitted clones where they did not)
        followed by the best final step.
    scorer_ : SequenceScorer
    n_tasks_ : int
    n_candidates_ : int
    classes_ : ndarray of shape (n_classes,)
        Only with ``refit=True``.
"""

_ESTIMATOR_PARAMETER = """\
    estimator : skcl classifier, or a pipeline ending in one
        Must have ``partial_fit``: scikit-learn's ``Pipeline`` has none,
        :class:`skcl.pipeline.Pipeline` does. Its ``random_state`` is
        shared by every candidate, so an int gives reproducible results.

        Leading steps that come unfitted (``make_pipeline(StandardScaler(),
        AQCClassifier())``) are fitted on the first training task, then
        only transform, exactly as in a ``partial_fit`` loop; fitted ones
        (a pre-trained feature extractor) are used as they are.

        For an :class:`skcl.pipeline.Pipeline` whose candidates set only
        parameters of the final step (``<final step>__...``), every
        candidate would meet the same leading steps, so they transform the
        training and validation sequences once, before any candidate
        starts (after fitting, on the first training task, those that come
        unfitted); each candidate is a clone of the final step. The user's
        pipeline is not changed. Otherwise each candidate is a clone of the
        whole pipeline that fits its own unfitted leading steps on the
        first task. Since clone resets every fitted step not wrapped in
        :class:`~sklearn.frozen.FrozenEstimator`, a candidate whose grid
        would reset one of your fitted steps (a grid on its parameters)
        raises :class:`~sklearn.exceptions.NotFittedError` before any
        training, rather than silently refit a pre-trained step on the
        first task.
"""


class _BaseSequenceSearch(MetaEstimatorMixin, BaseEstimator):
    """What the grid and randomized searches share: everything but the candidates."""

    def _candidate_list(self):
        """The list of parameter dicts to try, checked against the estimator."""
        raise NotImplementedError

    def fit(self, train_tasks, validation_tasks, classes=None):
        """Run every candidate through the training sequence and score it.

        Everything that needs no training is checked before the first
        candidate starts: the estimator, the candidates (names and values),
        the scoring, the sequences (lengths, labels, and the same features
        in every task of both) and, for a pipeline, that no candidate's
        clone would reset a step you fitted.

        Parameters
        ----------
        train_tasks : list of (X, y)
            The training task sequence.
        validation_tasks : list of (X, y)
            The validation task sequence, task i matching training task i.
        classes : array-like of shape (n_classes,), default=None
            Every class of the sequence, passed to every ``partial_fit``.
            None takes the labels of all the training tasks.

        Returns
        -------
        self
        """
        candidates, scorer, extra = self._check_search()
        train_tasks, validation_tasks, classes = check_sequences(
            train_tasks, validation_tasks, classes, eval_name="validation_tasks"
        )
        prefix = _uses_fitted_prefix(self.estimator, candidates)
        # The candidates are clones of `learner`: the final step alone when the
        # leading steps transform the sequences here, once for all.
        learner = _final_step_learner(self.estimator) if prefix else self.estimator
        _check_candidates_can_learn(learner, candidates)
        if prefix:
            leading, train_tasks, validation_tasks = self._transform_once(
                train_tasks, validation_tasks
            )

        results = self._run_candidates(
            learner, candidates, train_tasks, validation_tasks, classes, scorer, extra
        )
        # Here, not in a helper, so that its stacklevel points at the caller.
        _warn_failures(results.failures, len(candidates))
        best_index = results.best_index()

        self.scorer_ = scorer
        self.n_tasks_ = len(train_tasks)
        self.n_candidates_ = len(candidates)
        self.accuracy_matrices_ = results.matrices
        self.cv_results_ = results.cv_results()
        self.best_index_ = best_index
        self.best_params_ = candidates[best_index]
        self.best_score_ = float(results.scores[best_index])
        if self.refit:
            best_model = results.best_model
            _complete_fold(final_estimator(best_model))
            self.best_estimator_ = (
                _with_final_step(leading, best_model) if prefix else best_model
            )
            self.classes_ = classes
        return self

    def _check_search(self):
        """Check the search's own parameters; ``(candidates, scorer, extra)``.

        ``extra`` maps the names of ``task_scoring`` to their scorers.
        """
        check_sequential_estimator(self.estimator)
        candidates = self._candidate_list()
        scorer = get_sequence_scorer(self.scoring)
        extra = {} if self.task_scoring is None else check_multi_scoring(self.task_scoring)[0]
        if not (self.error_score == "raise" or isinstance(self.error_score, numbers.Real)):
            raise ValueError(
                f"error_score must be 'raise' or a number, got {self.error_score!r}."
            )
        if not isinstance(self.refit, (bool, np.bool_)):
            raise ValueError(f"refit must be True or False, got {self.refit!r}.")
        check_progress_bar(self)
        return candidates, scorer, extra

    def _log_level(self):
        return logging.INFO if self.verbose > 0 else logging.DEBUG

    def _transform_once(self, train_tasks, validation_tasks):
        """Both sequences through the pipeline's leading steps, once for all candidates.

        Leading steps that are not fitted are fitted on the first training
        task, as every candidate's first ``partial_fit`` would fit them.

        Returns
        -------
        leading : Pipeline
            The estimator with its leading steps fitted (the user's own
            objects where they already were).
        train_tasks, validation_tasks : lists of (X, y)
        """
        start = time.perf_counter()
        leading, X_first = _fit_leading_steps(self.estimator, train_tasks[0])
        train_tasks = [(X_first, train_tasks[0][1])] + _transform_leading(
            leading, train_tasks[1:]
        )
        validation_tasks = _transform_leading(leading, validation_tasks)
        fitted_here = [
            name for (name, own), (_, step) in zip(self.estimator.steps, leading.steps[:-1])
            if own is not step
        ]
        logger.log(
            self._log_level(),
            "[%s] transformed the sequences once with the steps %s%s (%.2f s)",
            type(self).__name__, [step for step, _ in self.estimator.steps[:-1]],
            f", fitting {fitted_here} on the first training task" if fitted_here else "",
            time.perf_counter() - start,
        )
        return leading, train_tasks, validation_tasks

    def _run_candidates(self, learner, candidates, train_tasks, validation_tasks, classes,
                        scorer, extra):
        """Evaluate every candidate through joblib; their results as they came.

        Returns
        -------
        results : _CandidateResults
        """
        name, n_candidates, level = type(self).__name__, len(candidates), self._log_level()
        parallel = Parallel(
            n_jobs=self.n_jobs, pre_dispatch=self.pre_dispatch, return_as="generator",
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
                self.error_score,
                bool(self.refit),
                max(int(self.verbose) - 1, 0),
            )
            for params in candidates
        )
        # Outcomes arrive in candidate order (a generator, not a list), so
        # the results keep only the best model so far.
        results = _CandidateResults(candidates, len(train_tasks), extra)
        with progress_bar(self, total=n_candidates, desc="fit", unit="candidate") as bar:
            for i, outcome in enumerate(outcomes):
                results.record(i, outcome)
                logger.log(
                    level, "[%s] candidate %d/%d %s: %s %.4f (%.2f s)",
                    name, i + 1, n_candidates, candidates[i], scorer.name, results.scores[i],
                    results.fit_times[i], extra={"skcl_candidate": (i + 1, n_candidates)},
                )
                if np.isfinite(results.best_score):
                    bar.set_postfix_str(
                        f"best {scorer.name} {results.best_score:.4f}", refresh=False
                    )
                bar.update()
        return results

    @available_if(_best_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_best_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(_best_has("score"))
    def score(self, X, y):
        """Accuracy of ``best_estimator_`` on one task ``(X, y)``.

        For a whole test sequence use
        ``skcl.metrics.final_average_accuracy(search, test_tasks)``.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)


class SequenceGridSearch(_BaseSequenceSearch):
    __doc__ = """Exhaustive search over a parameter grid, scored on a task sequence.

    Like :class:`~sklearn.model_selection.GridSearchCV`, with cross-
    validation folds replaced by the continual-learning protocol: each
    candidate is a clone of ``estimator`` with the candidate's parameters,
    it learns the training task sequence with one ``partial_fit`` per task,
    and it is scored on the validation task sequence (by default by its
    final average accuracy, the paper's criterion).

    Parameters
    ----------
""" + _ESTIMATOR_PARAMETER + """\
    param_grid : dict or list of dicts
        Parameter names (``alpha``, or ``aqcclassifier__alpha`` for a
        pipeline step) mapped to non-empty lists of values, as in
        ``GridSearchCV``. ``{}`` is the single candidate ``estimator``
        itself (useful for methods without hyperparameters).
""" + _COMMON_PARAMETERS + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES + """
    See Also
    --------
    SequenceRandomizedSearch : ``n_iter`` candidates drawn at random.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcl import AQCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.metrics import final_average_accuracy
    >>> from skcl.model_selection import SequenceGridSearch
    >>> data = load_ci_split_iris()
    >>> search = SequenceGridSearch(
    ...     AQCClassifier(learning_rate=0.1, random_state=0),
    ...     {"alpha": [1, 10, 100, 1000, 10000]},
    ... ).fit(data.train, data.validation, classes=data.classes)
    >>> sorted(search.best_params_)
    ['alpha']
    >>> final_average_accuracy(search, data.test) > 0.5
    True
    >>> results = pd.DataFrame(search.cv_results_)
    >>> int(results["rank_test_score"].min())
    1
    """

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        scoring="final_average_accuracy",
        task_scoring=None,
        refit=True,
        n_jobs=None,
        verbose=0,
        progress_bar=False,
        error_score=np.nan,
        pre_dispatch="2*n_jobs",
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.task_scoring = task_scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.progress_bar = progress_bar
        self.error_score = error_score
        self.pre_dispatch = pre_dispatch

    def _candidate_list(self):
        return _grid_candidates(self.estimator, self.param_grid)


class SequenceRandomizedSearch(_BaseSequenceSearch):
    __doc__ = """Randomized search over parameters, scored on a task sequence.

    Like :class:`~sklearn.model_selection.RandomizedSearchCV`: ``n_iter``
    candidates are drawn by :class:`~sklearn.model_selection.ParameterSampler`
    (from lists uniformly, from scipy.stats distributions by their
    ``rvs``; without replacement when every value is a list), and each is
    trained and scored as in :class:`SequenceGridSearch`, with which it
    shares everything else. Every drawn candidate is checked before the
    first one trains.

    Parameters
    ----------
""" + _ESTIMATOR_PARAMETER + """\
    param_distributions : dict or list of dicts
        Parameter names mapped to non-empty lists of values or to
        distributions with an ``rvs`` method (e.g.
        ``scipy.stats.loguniform(1, 1e4)``). A list of dicts draws each
        candidate from one dict picked at random.
    n_iter : int, default=10
        Number of candidates drawn (fewer when the lists hold fewer
        combinations, with a warning from ``ParameterSampler``).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws; an int gives the same candidates every time.
        (The estimators' own seed is their ``random_state`` parameter.)
""" + _COMMON_PARAMETERS + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES + """
    See Also
    --------
    SequenceGridSearch : every point of a grid.

    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from skcl import AQCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.model_selection import SequenceRandomizedSearch
    >>> data = load_ci_split_iris()
    >>> search = SequenceRandomizedSearch(
    ...     AQCClassifier(learning_rate=0.1, random_state=0),
    ...     {"alpha": loguniform(1, 1e4)}, n_iter=3, random_state=0,
    ... ).fit(data.train, data.validation, classes=data.classes)
    >>> len(search.cv_results_["params"])
    3
    >>> bool(1 <= search.best_params_["alpha"] <= 1e4)
    True
    """

    def __init__(
        self,
        estimator,
        param_distributions,
        *,
        n_iter=10,
        random_state=None,
        scoring="final_average_accuracy",
        task_scoring=None,
        refit=True,
        n_jobs=None,
        verbose=0,
        progress_bar=False,
        error_score=np.nan,
        pre_dispatch="2*n_jobs",
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.random_state = random_state
        self.scoring = scoring
        self.task_scoring = task_scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.progress_bar = progress_bar
        self.error_score = error_score
        self.pre_dispatch = pre_dispatch

    def _candidate_list(self):
        return _sampled_candidates(
            self.estimator, self.param_distributions, self.n_iter, self.random_state
        )
