"""Grid search over hyperparameters, scored on a validation task sequence.

The paper's protocol (section IV, appendix D): every candidate learns the
whole *training* task sequence, is scored by its final average accuracy on
the *validation* task sequence, and the best one is evaluated on the test
sequence. Candidates are independent, so they run in parallel through
joblib, in threads by default or on any backend chosen around the search
(``_dispatch.py``).

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

This module holds the estimators: their checks, the order of the steps
of ``fit`` and the fitted attributes. The steps have one module each: the
candidates and the checks that need no training (``_candidates.py``), the
fast path of a pipeline's fitted leading steps (``_prefix.py``), all the
candidates through joblib (``_dispatch.py``), one candidate's training
and scoring (``_evaluation.py``), and the results and their
``cv_results_`` layout (``_results.py``); the documentation the two
searches share is in ``_docs.py``.
"""

import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._utils.progress import check_progress_bar
from ._candidates import (
    _check_candidates_can_learn,
    _grid_candidates,
    _sampled_candidates,
)
from ._dispatch import _log_level, _run_candidates, logger
from ._docs import _COMMON_ATTRIBUTES, _COMMON_PARAMETERS, _ESTIMATOR_PARAMETER
from ._evaluation import _complete_fold, _warn_failures
from ._prefix import (
    _final_step_learner,
    _steps_fitted_here,
    _transform_sequences,
    _uses_fitted_prefix,
    _with_final_step,
)
from ._scoring import get_sequence_scorer
from ._sequence import (
    check_multi_scoring,
    check_sequences,
    check_sequential_estimator,
    check_task_labels,
    final_estimator,
)

__all__ = ["SequenceGridSearch", "SequenceRandomizedSearch"]


def _best_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            getattr(self.best_estimator_, attr)
        else:
            getattr(self.estimator, attr)
        return True

    return check


class _BaseSequenceSearch(MetaEstimatorMixin, BaseEstimator):
    """What the grid and randomized searches share: everything but the candidates."""

    def _candidate_list(self):
        """The list of parameter dicts to try, checked against the estimator."""
        raise NotImplementedError

    def fit(self, train_tasks, validation_tasks, classes=None, task_labels=None):
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
        task_labels : list of array-like, default=None
            The labels of each validation task (a loader's
            ``task_labels``), for ``scenario="task"``.

        Returns
        -------
        self
        """
        candidates, scorer, extra = self._check_search()
        train_tasks, validation_tasks, classes = check_sequences(
            train_tasks, validation_tasks, classes, eval_name="validation_tasks"
        )
        task_labels = check_task_labels(self.scenario, task_labels, len(validation_tasks))
        prefix = _uses_fitted_prefix(self.estimator, candidates)
        # The candidates are clones of `learner`: the final step alone when the
        # leading steps transform the sequences here, once for all.
        learner = _final_step_learner(self.estimator) if prefix else self.estimator
        _check_candidates_can_learn(learner, candidates)
        leading = None
        if prefix:
            leading, train_tasks, validation_tasks = self._transform_once(
                train_tasks, validation_tasks
            )
        results = _run_candidates(
            self, learner, candidates, train_tasks, validation_tasks, classes, scorer, extra,
            task_labels,
        )
        # Here, not in a helper, so that its stacklevel points at the caller.
        _warn_failures(results.failures, len(candidates))
        self._set_results(results, scorer, classes, leading)
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

    def _transform_once(self, train_tasks, validation_tasks):
        """Both sequences through the pipeline's leading steps (``_transform_sequences``), logged.

        Returns
        -------
        leading : Pipeline
        train_tasks, validation_tasks : lists of (X, y)
        """
        start = time.perf_counter()
        leading, train_tasks, validation_tasks = _transform_sequences(
            self.estimator, train_tasks, validation_tasks
        )
        fitted_here = _steps_fitted_here(self.estimator, leading)
        logger.log(
            _log_level(self),
            "[%s] transformed the sequences once with the steps %s%s (%.2f s)",
            type(self).__name__, [step for step, _ in self.estimator.steps[:-1]],
            f", fitting {fitted_here} on the first training task" if fitted_here else "",
            time.perf_counter() - start,
        )
        return leading, train_tasks, validation_tasks

    def _set_results(self, results, scorer, classes, leading):
        """Set the fitted attributes from the candidates' results.

        ``leading`` is the pipeline whose leading steps transformed the
        sequences once (the best final step goes back behind them), or
        None.

        Raises
        ------
        ValueError
            When every candidate failed or scored NaN; nothing is set then.
        """
        best_index = results.best_index()
        self.scorer_ = scorer
        self.n_tasks_ = results.matrices.shape[1]
        self.n_candidates_ = len(results.candidates)
        self.accuracy_matrices_ = results.matrices
        self.cv_results_ = results.cv_results()
        self.best_index_ = best_index
        self.best_params_ = results.candidates[best_index]
        self.best_score_ = float(results.scores[best_index])
        if self.refit:
            best_model = results.best_model
            _complete_fold(final_estimator(best_model))
            self.best_estimator_ = (
                best_model if leading is None else _with_final_step(leading, best_model)
            )
            self.classes_ = classes

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
        scenario="class",
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
        self.scenario = scenario
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
        scenario="class",
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
        self.scenario = scenario
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
