"""Task-incremental scoring: a classifier seen through one task's classes.

In the task-incremental scenario (van de Ven, Tuytelaars and Tolias, 2022)
the task is known at test time and only its classes compete: the
prediction is the argmax of the classifier's scores over the task's
columns. :class:`TaskRestricted` is that classifier, for any fitted
classifier with ``predict_proba``, ``predict_log_proba`` or
``decision_function``: its ``classes_`` are the task's labels that the
classifier knows, its probabilities the classifier's renormalised over
them, so that any scikit-learn scorer scores it as it would a classifier
of the task alone. :func:`scored_views` gives the estimator each task of a
sequence is scored with, for each scenario.
"""

import numpy as np
from scipy.special import log_softmax
from sklearn.base import BaseEstimator, ClassifierMixin

from .validation import check_scenario

__all__ = ["TaskRestricted", "scored_views"]


class TaskRestricted(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose predictions choose among ``labels`` only.

    Parameters
    ----------
    estimator : fitted classifier
        With ``classes_`` and ``predict_log_proba``, ``predict_proba`` or
        ``decision_function`` (the first there is: its ranking is the one
        ``predict`` follows).
    labels : array-like
        The task's labels: the classes that compete.

    Attributes
    ----------
    classes_ : ndarray
        The task's labels among the estimator's ``classes_``, in its order.
        A label the estimator has not met (``grow_classes``) has no column:
        its samples count as errors.
    """

    def __init__(self, estimator, labels):
        self.estimator = estimator
        self.labels = labels

    @property
    def _columns(self):
        return np.isin(self.estimator.classes_, np.asarray(self.labels))

    @property
    def classes_(self):
        return self.estimator.classes_[self._columns]

    def _scores(self, X):
        """The estimator's log probabilities (or decision values) of the task's columns."""
        estimator = self.estimator
        if hasattr(estimator, "predict_log_proba"):
            scores = estimator.predict_log_proba(X)
        elif hasattr(estimator, "predict_proba"):
            with np.errstate(divide="ignore"):
                scores = np.log(estimator.predict_proba(X))
        else:
            scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
            if scores.ndim == 1:  # two classes: the second's score against the first's 0
                scores = np.column_stack([np.zeros_like(scores), scores])
        return scores[:, self._columns]

    def predict(self, X):
        """The task's most probable class of each sample.

        When the estimator knows none of the task's labels, its own
        prediction, which is then wrong.
        """
        if not self._columns.any():
            return self.estimator.predict(X)
        return self.classes_[np.argmax(self._scores(X), axis=1)]

    def predict_log_proba(self, X):
        """log p(c | x, c in the task), shape (n_samples, n_task_classes)."""
        return log_softmax(self._scores(X), axis=1)

    def predict_proba(self, X):
        """p(c | x, c in the task): the estimator's, renormalised over the task."""
        return np.exp(self.predict_log_proba(X))

    def decision_function(self, X):
        """The task's columns of the estimator's scores (1-D for two, as scikit-learn's)."""
        scores = self._scores(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def __sklearn_is_fitted__(self):
        return True


def scored_views(estimator, n_tasks, scenario, task_labels):
    """The estimator to score each of ``n_tasks`` tasks with.

    Parameters
    ----------
    estimator : fitted classifier
    n_tasks : int
    scenario : {"task", "domain", "class"}
        "task": each task through :class:`TaskRestricted` with its labels;
        "domain" and "class": the estimator itself (every class it knows
        competes; the labels make the two scenarios differ).
    task_labels : sequence of n_tasks array-likes, or None
        Each task's labels (a loader's ``task_labels``); required for
        "task".

    Returns
    -------
    list of classifiers
    """
    check_scenario(scenario)
    if scenario != "task":
        return [estimator] * n_tasks
    if task_labels is None:
        raise ValueError(
            "scenario='task' scores each task among its own classes: pass task_labels, "
            "the labels of each task (e.g. task_labels=data.task_labels of a loader's Bunch)."
        )
    if isinstance(task_labels, (str, bytes)) or len(task_labels) != n_tasks:
        raise ValueError(
            f"task_labels must hold the labels of each of the {n_tasks} tasks, got "
            f"{task_labels!r:.80}."
        )
    return [TaskRestricted(estimator, np.asarray(labels)) for labels in task_labels]
