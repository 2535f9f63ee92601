"""Metrics of continual learning over task sequences.

The central object is the *accuracy matrix* ``R`` of shape
(n_tasks, n_tasks): ``R[i, j]`` is the accuracy on task ``i`` after learning
tasks ``0..j``. The paper reports the *final average accuracy*, the mean of
the last column.

Any other per-task score makes such a matrix too: :func:`task_scores`
evaluates a fitted classifier on every task with a scikit-learn scorer name
(``"neg_log_loss"``...), a scorer callable or a metric function such as
:func:`expected_calibration_error`, and
:func:`skcl.model_selection.learn_task_sequence` records it after every
task. Each takes the scenario (``scenario="task"``: each task's own labels
compete, van de Ven, Tuytelaars and Tolias, 2022).
"""

import inspect
import numbers
from typing import Any, NamedTuple

import numpy as np
from sklearn.metrics import accuracy_score, brier_score_loss, get_scorer, log_loss, make_scorer
from sklearn.utils.multiclass import unique_labels

from ._utils.scenarios import scored_views

__all__ = [
    "task_accuracies",
    "task_scores",
    "expected_calibration_error",
    "final_average_accuracy",
    "average_accuracy",
    "average_forgetting",
    "backward_transfer",
]


def task_accuracies(estimator, tasks, *, scenario="class", task_labels=None):
    """Accuracy of a fitted classifier on each task of a sequence.

    Parameters
    ----------
    estimator : fitted classifier
        Anything with ``predict``.
    tasks : list of (X, y)
        A task sequence, e.g. ``load_ci_split_iris().test``.
    scenario : {"class", "domain", "task"}, default="class"
        "task": only the task's labels compete, for any classifier (argmax
        over their columns); "class", "domain": all of ``classes_``.
    task_labels : list of array-like, default=None
        Each task's labels (a loader's ``task_labels``), for "task".

    Returns
    -------
    ndarray of shape (n_tasks,)
        Accuracy on each task, in [0, 1].

    Examples
    --------
    A classifier that always answers "setosa" (class 0) gets the first task
    of CI Split Iris right and the two others wrong:

    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.metrics import task_accuracies
    >>> data = load_ci_split_iris()
    >>> always_setosa = DummyClassifier(strategy="constant", constant=0)
    >>> always_setosa = always_setosa.fit(np.zeros((3, 4)), [0, 1, 2])
    >>> task_accuracies(always_setosa, data.test).tolist()
    [1.0, 0.0, 0.0]
    """
    views = scored_views(estimator, len(tasks), scenario, task_labels)
    return np.array([accuracy_score(y, view.predict(X)) for view, (X, y) in zip(views, tasks)])


# Metric functions on probabilities, besides those named by a scorer.
_PROBA_METRICS = {log_loss, brier_score_loss}


class _ScorerParts(NamedTuple):
    """``make_scorer``'s arguments: of a scorer (:func:`_scorer_parts`) or a metric's."""

    score_func: Any
    sign: int
    kwargs: dict
    response_method: Any


def _scorer_parts(scoring):
    """The parts of a scikit-learn scorer (a :class:`_ScorerParts`), or None.

    The only place in skcl that reads a scorer's private attributes:
    ``_score_func``, ``_sign``, ``_kwargs`` and ``_response_method``, the
    arguments ``sklearn.metrics._scorer._BaseScorer.__init__`` stores
    since scikit-learn 1.4 (skcl requires 1.6). No public API gives them
    (``make_scorer`` has no inverse, and the scorer cannot hand its metric
    ``labels=estimator.classes_`` without process-wide metadata routing);
    :func:`_check_task_scoring` rebuilds the scorer from them. Anything
    else (a user's ``scorer(estimator, X, y)``, a metric function): None.
    """
    func = getattr(scoring, "_score_func", None)
    if func is None or not hasattr(scoring, "_sign"):
        return None
    return _ScorerParts(func, scoring._sign, dict(getattr(scoring, "_kwargs", {})),
                        scoring._response_method)


def _scorer_name(scoring):
    if isinstance(scoring, str):
        return scoring
    parts = _scorer_parts(scoring)
    func = scoring if parts is None else parts.score_func
    return getattr(func, "__name__", type(scoring).__name__)


def _check_task_scoring(scoring, response_method=None):
    """Turn ``scoring`` into ``scorer(estimator, X, y) -> float``.

    ``labels=estimator.classes_`` reaches every metric that takes
    ``labels`` (log loss, Brier score, calibration error), so that a task
    whose labels are a subset of the classes is scored against all of
    them. See :func:`task_scores` for what ``scoring`` may be.
    """
    scoring = _looked_up(scoring)
    # A scikit-learn scorer, or a metric function, is rebuilt to pass the
    # classes as labels; a scorer callable of the user's is used as it is.
    parts = _scorer_parts(scoring) or _metric_parts(scoring, response_method)
    if parts is None:
        return scoring
    scorer = _scorer_with_labels(parts)
    scorer.__name__ = _scorer_name(scoring)
    return scorer


def _looked_up(scoring):
    """A scorer name as scikit-learn's scorer; anything else checked callable."""
    if isinstance(scoring, str):
        try:
            scoring = get_scorer(scoring)
        except ValueError as exc:
            raise ValueError(
                f"Unknown scoring {scoring!r}: use a name of "
                "sklearn.metrics.get_scorer_names(), a scorer callable "
                "scorer(estimator, X, y), or a metric function metric(y_true, y_pred)."
            ) from exc
    if not callable(scoring):
        raise TypeError(
            f"scoring must be a scorer name, a scorer callable or a metric function, "
            f"got {type(scoring).__name__}."
        )
    return scoring


def _metric_parts(metric, response_method):
    """The parts of a scorer of ``metric(y_true, y_pred)``, or None for another callable.

    A metric function's first parameter is ``y_true`` (or ``y``,
    ``labels_true``); anything else is taken for a scorer callable. The
    metric is scored as it is (greater is not better); it gets
    ``response_method``'s output, by default ``predict_proba``'s for a
    metric of probabilities and ``predict``'s for any other.
    """
    try:
        params = list(inspect.signature(metric).parameters)
    except (TypeError, ValueError):
        params = []
    if not params or params[0] not in ("y_true", "y", "labels_true"):
        return None
    needs_proba = metric in _PROBA_METRICS or getattr(metric, "_skcl_needs_proba", False)
    method = response_method or ("predict_proba" if needs_proba else "predict")
    return _ScorerParts(metric, 1, {}, method)


def _scorer_with_labels(parts):
    """``scorer(estimator, X, y)`` from :class:`_ScorerParts`, with the classes as labels.

    A metric that takes ``labels`` (and was not given them) gets
    ``labels=estimator.classes_``.
    """
    func, sign, kwargs, method = parts
    takes_labels = "labels" in inspect.signature(func).parameters and "labels" not in kwargs

    def scorer(estimator, X, y):
        classes = estimator.classes_
        if (takes_labels and np.setdiff1d(np.unique(y), classes).size) or (
            len(classes) < 2 and method != "predict"
        ):
            # A class the estimator has not met yet, or a single one met so
            # far (grow_classes): a probability score is undefined.
            return np.nan
        extra = {"labels": estimator.classes_} if takes_labels else {}
        return make_scorer(
            func, greater_is_better=sign > 0, response_method=method, **kwargs, **extra
        )(estimator, X, y)

    return scorer


def task_scores(estimator, tasks, scoring="accuracy", *, response_method=None, scenario="class",
                task_labels=None):
    """Any scikit-learn score of a fitted classifier on each task of a sequence.

    Generalises :func:`task_accuracies` (``scoring="accuracy"``). After
    learning task ``j``, ``task_scores(clf, eval_tasks, scoring)`` is
    column ``j`` of that score's task-by-task matrix;
    :func:`skcl.model_selection.learn_task_sequence` records the whole
    matrix.

    Parameters
    ----------
    estimator : fitted classifier
        With ``predict``, and ``predict_proba`` for probability metrics.
    tasks : list of (X, y)
        A task sequence, e.g. ``load_ci_split_iris().test``.
    scoring : str or callable, default="accuracy"
        One of:

        - a name of :func:`sklearn.metrics.get_scorer_names`, e.g.
          ``"balanced_accuracy"``, ``"neg_log_loss"``, ``"neg_brier_score"``:
          greater is better, as for scikit-learn's scorers;
        - a scorer callable ``scorer(estimator, X, y)``, e.g. from
          :func:`sklearn.metrics.make_scorer`;
        - a metric function whose first parameter is ``y_true``, e.g.
          :func:`sklearn.metrics.log_loss` or
          :func:`expected_calibration_error`: its own value is returned (a
          loss stays a loss). It gets ``predict_proba``'s output for
          :func:`~sklearn.metrics.log_loss`,
          :func:`~sklearn.metrics.brier_score_loss` and
          :func:`expected_calibration_error`, else ``predict``'s, unless
          ``response_method`` says otherwise.

        A metric that takes ``labels`` gets ``labels=estimator.classes_``:
        a task holding some of the classes is still scored against the
        probabilities of all of them. A task holding a class the estimator
        has not met yet (``grow_classes=True``) scores NaN under such a
        metric (there is no probability column for it), as does any
        probability score of an estimator that has met one class only;
        accuracy counts such samples as errors.
    response_method : {"predict", "predict_proba", "decision_function"}, default=None
        For a metric function only: which output it scores.
    scenario, task_labels
        As for :func:`task_accuracies`; "task" renormalises probabilities over each task's.

    Returns
    -------
    ndarray of shape (n_tasks,)

    Examples
    --------
    After learning CI Split Iris, joint training's accuracy, log loss (each
    test task holds one class of three) and its negation as a scorer:

    >>> from sklearn.metrics import log_loss
    >>> from skcl import JointClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.metrics import task_scores
    >>> data = load_ci_split_iris()
    >>> clf = JointClassifier(learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> task_scores(clf, data.test).tolist()  # accuracy
    [1.0, 1.0, 0.9]
    >>> task_scores(clf, data.test, log_loss).round(2).tolist()
    [0.05, 0.27, 0.36]
    >>> task_scores(clf, data.test, "neg_log_loss").round(2).tolist()
    [-0.05, -0.27, -0.36]
    """
    scorer = _check_task_scoring(scoring, response_method)
    views = scored_views(estimator, len(tasks), scenario, task_labels)
    return np.array([float(scorer(view, X, y)) for view, (X, y) in zip(views, tasks)])


def expected_calibration_error(y_true, y_prob, *, n_bins=10, labels=None):
    r"""Expected calibration error of the top-label confidence.

    Each sample's *confidence* is its highest predicted probability,
    :math:`c_n = \max_k p_{nk}`, and it is *correct* when that class
    (the first among ties) is its label. The confidences are sorted into
    ``n_bins`` equal-width bins :math:`B_b = ((b-1)/M, b/M]`,
    :math:`b = 1..M` (a confidence of 0 falls in the first one), and

    .. math::

        \mathrm{ECE} = \sum_{b=1}^{M} \frac{|B_b|}{N}
        \left| \mathrm{acc}(B_b) - \mathrm{conf}(B_b) \right|,

    where :math:`\mathrm{acc}(B_b)` is the fraction of correct samples and
    :math:`\mathrm{conf}(B_b)` the mean confidence in bin :math:`b` (Guo
    et al., 2017; empty bins contribute nothing).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, column k for ``labels[k]``, as from
        ``predict_proba``. A 1-D array is the probability of the second of
        two classes.
    n_bins : int, default=10
        Number of equal-width confidence bins in [0, 1].
    labels : array-like of shape (n_classes,), default=None
        The classes of the columns of ``y_prob`` (pass the estimator's
        ``classes_`` when ``y_true`` holds only some of them). None takes
        the sorted labels of ``y_true``, which must then be as many as the
        columns.

    Returns
    -------
    float
        In [0, 1]; 0 for perfect calibration, lower is better.

    Examples
    --------
    Four samples: three right with confidences 0.9, 0.8 and 0.7, one wrong
    with confidence 0.6:

    >>> from skcl.metrics import expected_calibration_error
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]
    >>> round(expected_calibration_error([0, 0, 1, 1], y_prob, n_bins=5), 4)
    0.3
    """
    if not isinstance(n_bins, numbers.Integral) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    y_true = np.asarray(y_true)
    y_prob = np.asarray(y_prob, dtype=float)
    if y_prob.ndim == 1:
        y_prob = np.column_stack([1 - y_prob, y_prob])
    if y_prob.ndim != 2 or y_true.ndim != 1 or len(y_true) != len(y_prob):
        raise ValueError(
            f"y_true must be of shape (n_samples,) and y_prob of shape (n_samples, "
            f"n_classes) with the same n_samples, got {y_true.shape} and {y_prob.shape}."
        )
    if len(y_true) == 0:
        raise ValueError("y_true is empty.")
    if not np.all(np.isfinite(y_prob)) or y_prob.min() < 0 or y_prob.max() > 1:
        raise ValueError("y_prob must hold probabilities in [0, 1].")
    labels = unique_labels(y_true) if labels is None else np.asarray(labels)
    if len(labels) != y_prob.shape[1]:
        raise ValueError(
            f"y_prob has {y_prob.shape[1]} columns but there are {len(labels)} labels "
            f"{labels.tolist()}; pass labels= (e.g. the estimator's classes_) to name "
            "the columns."
        )
    unknown = np.setdiff1d(y_true, labels)
    if unknown.size:
        raise ValueError(f"y_true holds labels not in labels: {unknown.tolist()}.")
    confidence = y_prob.max(axis=1)
    correct = labels[y_prob.argmax(axis=1)] == y_true
    # Bin b (0-based) holds confidences in (edges[b], edges[b + 1]]; 0 goes to bin 0.
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.searchsorted(edges[1:-1], confidence, side="left")
    n = len(y_true)
    ece = 0.0
    for b in np.unique(bins):
        members = bins == b
        ece += members.sum() / n * abs(correct[members].mean() - confidence[members].mean())
    return float(ece)


# skcl's own mark: the metric scores predict_proba's output. On the function,
# not in a set, so that a wrapper made with functools.wraps keeps it.
expected_calibration_error._skcl_needs_proba = True


def final_average_accuracy(estimator, tasks, *, scenario="class", task_labels=None):
    """The paper's final average accuracy: the mean of the task accuracies.

    Each task counts the same whatever its size (paper, section IV-B).

    Parameters
    ----------
    estimator : fitted classifier
        Usually after learning the whole training sequence.
    tasks : list of (X, y)
        The validation or test task sequence.
    scenario, task_labels
        As for :func:`task_accuracies`.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> from skcl import JointClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.metrics import final_average_accuracy
    >>> data = load_ci_split_iris()
    >>> clf = JointClassifier(learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> final_average_accuracy(clf, data.test) > 0.9
    True
    """
    accuracies = task_accuracies(estimator, tasks, scenario=scenario, task_labels=task_labels)
    return float(np.mean(accuracies))


def _check_matrix(R):
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] == 0:
        raise ValueError("R must be a square accuracy matrix of shape (n_tasks, n_tasks), "
                         f"got shape {R.shape}.")
    return R


def average_accuracy(R):
    """Mean accuracy over all tasks after the last one: mean of ``R[:, -1]``.

    Equal to :func:`final_average_accuracy` computed from the matrix.

    Parameters
    ----------
    R : array-like of shape (n_tasks, n_tasks)
        Accuracy matrix, ``R[i, j]`` = accuracy on task i after task j.

    Returns
    -------
    float

    Examples
    --------
    >>> from skcl.metrics import average_accuracy
    >>> R = [[1.0, 0.5, 0.2],   # task 0 after tasks 0, 1 and 2
    ...      [0.0, 0.9, 0.6],   # task 1
    ...      [0.0, 0.0, 0.8]]   # task 2
    >>> round(average_accuracy(R), 4)
    0.5333
    """
    return float(_check_matrix(R)[:, -1].mean())


def average_forgetting(R):
    """Mean drop from each old task's best accuracy to its final accuracy.

    ``f_i = max_{j < T-1} R[i, j] - R[i, T-1]`` for the first ``T - 1``
    tasks (Chaudhry et al., 2018); the last task cannot be forgotten yet.

    Parameters
    ----------
    R : array-like of shape (n_tasks, n_tasks)

    Returns
    -------
    float
        0 for a single task; larger means more forgetting.

    Examples
    --------
    Task 0 fell from 1.0 to 0.2 and task 1 from 0.9 to 0.6:

    >>> from skcl.metrics import average_forgetting
    >>> R = [[1.0, 0.5, 0.2],   # task 0 after tasks 0, 1 and 2
    ...      [0.0, 0.9, 0.6],   # task 1
    ...      [0.0, 0.0, 0.8]]   # task 2
    >>> round(average_forgetting(R), 4)
    0.55
    """
    R = _check_matrix(R)
    T = R.shape[0]
    if T == 1:
        return 0.0
    best = np.array([R[i, i : T - 1].max() for i in range(T - 1)])
    return float(np.mean(best - R[: T - 1, -1]))


def backward_transfer(R):
    """Mean change of each old task's accuracy since it was learned.

    ``BWT = mean_i (R[i, T-1] - R[i, i])`` over the first ``T - 1`` tasks
    (Lopez-Paz and Ranzato, 2017): negative values mean forgetting.

    Parameters
    ----------
    R : array-like of shape (n_tasks, n_tasks)

    Returns
    -------
    float
        0 for a single task.

    Examples
    --------
    Task 0 went from 1.0 when learnt to 0.2 at the end, task 1 from 0.9 to
    0.6:

    >>> from skcl.metrics import backward_transfer
    >>> R = [[1.0, 0.5, 0.2],   # task 0 after tasks 0, 1 and 2
    ...      [0.0, 0.9, 0.6],   # task 1
    ...      [0.0, 0.0, 0.8]]   # task 2
    >>> round(backward_transfer(R), 4)
    -0.55
    """
    R = _check_matrix(R)
    T = R.shape[0]
    if T == 1:
        return 0.0
    return float(np.mean(R[: T - 1, -1] - np.diag(R)[: T - 1]))
