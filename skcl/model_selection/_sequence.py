"""Running an estimator through a task sequence, and checking the inputs.

A *task sequence* is a list of ``(X, y)`` pairs learned one after another
with ``partial_fit``, as returned by the loaders of :mod:`skcl.datasets`.
"""

import time
from collections.abc import Sequence

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import _num_samples

from .._sequential import BaseSequentialClassifier
from .._utils.scenarios import scored_views
from .._utils.validation import check_classes, sorted_labels
from ..metrics import _check_task_scoring, _scorer_name, task_accuracies
from ..pipeline import Pipeline

__all__ = ["learn_task_sequence"]


def learn_task_sequence(estimator, train_tasks, eval_tasks=None, classes=None, *, history=True,
                        scoring="accuracy", scenario="class", task_labels=None):
    """Learn a task sequence with ``partial_fit`` and record the accuracy matrix.

    The estimator is trained in place, one ``partial_fit`` call per task
    (``classes`` is passed on every call), and evaluated on every task of
    ``eval_tasks`` after each training task.

    Parameters
    ----------
    estimator : skcl classifier, or a pipeline ending in one
        Anything with ``partial_fit(X, y, classes=...)`` and ``predict``,
        e.g. an :class:`skcl.pipeline.Pipeline` of fitted feature
        extractors and an skcl classifier. Usually unfitted; a fitted one
        continues from where it is.
    train_tasks : list of (X, y)
        The training task sequence, e.g. ``load_ci_split_iris().train``.
    eval_tasks : list of (X, y), default=None
        The sequence to evaluate on, of the same length (e.g. the
        validation or test sequence). None evaluates on ``train_tasks``.
    classes : array-like of shape (n_classes,), default=None
        Every class of the sequence. None takes the labels of all the
        training tasks. A classifier with ``grow_classes=True`` is not
        told them: it meets each class in the first task that holds it.
    history : bool, default=True
        Evaluate after every task. False evaluates only after the last
        one, which is all the final average accuracy needs; the other
        columns of ``R`` are then NaN.
    scoring : str, callable, list or dict, default="accuracy"
        The per-task score recorded, as for :func:`skcl.metrics.task_scores`
        (a scorer name such as ``"neg_log_loss"``, a scorer callable, or a
        metric function such as :func:`sklearn.metrics.log_loss`). A list
        or tuple of them, or a dict of name → scorer, records one matrix
        per score.
    scenario : {"class", "domain", "task"}, default="class"
        How the evaluation tasks are scored, as for
        :func:`skcl.metrics.task_accuracies`: "task" lets only each
        task's own labels compete (``task_labels``).
    task_labels : list of array-like, default=None
        The labels of each evaluation task (a loader's ``task_labels``),
        for ``scenario="task"``.

    Returns
    -------
    R : ndarray of shape (n_tasks, n_tasks), or dict of them
        ``R[i, j]`` is the score (by default the accuracy) on evaluation
        task ``i`` after learning training tasks ``0..j``; feed an
        accuracy matrix to :func:`skcl.metrics.average_accuracy`,
        :func:`~skcl.metrics.average_forgetting` or
        :func:`~skcl.metrics.backward_transfer`. With several scores, a
        dict of matrices by name (a scorer's name, or a function's
        ``__name__``).

    Examples
    --------
    >>> from skcl import JointClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.model_selection import learn_task_sequence
    >>> data = load_ci_split_iris()
    >>> R = learn_task_sequence(JointClassifier(learning_rate=0.1, random_state=0),
    ...                         data.train, data.test)
    >>> R.shape
    (3, 3)

    Several scores at once, e.g. the log loss beside the accuracy:

    >>> from sklearn.metrics import log_loss
    >>> matrices = learn_task_sequence(
    ...     JointClassifier(learning_rate=0.1, random_state=0), data.train, data.test,
    ...     scoring=["accuracy", log_loss])
    >>> sorted(matrices)
    ['accuracy', 'log_loss']
    """
    check_sequential_estimator(estimator)
    scorers, single = check_multi_scoring(scoring)
    train_tasks, eval_tasks, classes = check_sequences(train_tasks, eval_tasks, classes)
    task_labels = check_task_labels(scenario, task_labels, len(eval_tasks))
    matrices = _learn(estimator, train_tasks, eval_tasks, classes, history, scorers,
                      task_labels)[0]
    return matrices[next(iter(matrices))] if single else matrices


def check_multi_scoring(scoring):
    """``(scorers, single)``: a dict of name → ``scorer(estimator, X, y)``.

    ``"accuracy"`` maps to the exact :func:`~skcl.metrics.task_accuracies`.
    """
    single = isinstance(scoring, str) or callable(scoring)
    if single:
        items = [(_scorer_name(scoring), scoring)]
    elif isinstance(scoring, dict):
        items = list(scoring.items())
    elif isinstance(scoring, (list, tuple)):
        items = [(_scorer_name(s), s) for s in scoring]
    else:
        raise TypeError(
            "scoring must be a scorer name, a callable, or a list or dict of them, "
            f"got {type(scoring).__name__}."
        )
    if not items:
        raise ValueError("scoring is empty: name at least one score.")
    scorers = {}
    for name, value in items:
        if name in scorers:
            raise ValueError(f"scoring names {name!r} twice.")
        scorers[name] = None if value == "accuracy" else _check_task_scoring(value)
    return scorers, single


def check_task_labels(scenario, task_labels, n_tasks):
    """The task labels that task-incremental scoring needs; None for the other scenarios.

    Checked before anything is learned (:func:`~skcl._utils.scenarios.scored_views`).
    """
    scored_views(None, n_tasks, scenario, task_labels)
    return None if scenario != "task" else [np.asarray(labels) for labels in task_labels]


def _evaluate(estimator, tasks, scorers, task_labels=None):
    # Task-incremental (task_labels given): each task scored among its own labels.
    scenario = "class" if task_labels is None else "task"
    views = scored_views(estimator, len(tasks), scenario, task_labels)
    return {
        name: task_accuracies(estimator, tasks, scenario=scenario, task_labels=task_labels)
        if scorer is None
        else np.array([float(scorer(view, X, y)) for view, (X, y) in zip(views, tasks)])
        for name, scorer in scorers.items()
    }


def _learn(estimator, train_tasks, eval_tasks, classes, history, scorers=None, task_labels=None):
    """:func:`learn_task_sequence` without the checks; also the timings.

    Returns a dict of matrices by score name (accuracy only when
    ``scorers`` is None), the fit time and the score time. With
    ``task_labels``, the evaluation tasks are scored task-incrementally.
    """
    scorers = {"accuracy": None} if scorers is None else scorers
    n_tasks = len(train_tasks)
    matrices = {name: np.full((n_tasks, n_tasks), np.nan) for name in scorers}
    fit_time = score_time = 0.0
    # A classifier whose classes grow meets them task by task, as in a
    # stream that does not announce them; the others are told them all.
    announce = None if getattr(final_estimator(estimator), "grow_classes", False) else classes
    for j, (X, y) in enumerate(train_tasks):
        start = time.perf_counter()
        estimator.partial_fit(X, y, classes=announce)
        fit_time += time.perf_counter() - start
        if history or j == n_tasks - 1:
            start = time.perf_counter()
            for name, column in _evaluate(estimator, eval_tasks, scorers, task_labels).items():
                matrices[name][:, j] = column
            score_time += time.perf_counter() - start
    return matrices, fit_time, score_time


def final_estimator(estimator):
    """The last step of a pipeline, or the estimator itself."""
    steps = getattr(estimator, "steps", None)
    if steps:
        return final_estimator(steps[-1][1])
    return estimator


def check_sequential_estimator(estimator):
    """Reject estimators that cannot learn a task sequence, before training.

    Raises
    ------
    TypeError
        When ``estimator`` has no ``partial_fit`` or its final step is not
        an skcl classifier.
    """
    name = type(estimator).__name__
    if isinstance(estimator, type):
        raise TypeError(
            f"estimator must be an estimator instance, not the class {estimator.__name__}."
        )
    if not callable(getattr(estimator, "partial_fit", None)):
        if isinstance(estimator, Pipeline):
            hint = (
                f" Its final step, {type(final_estimator(estimator)).__name__}, has "
                f"none: it must be an skcl classifier."
            )
        elif getattr(estimator, "steps", None):
            hint = (
                " scikit-learn's Pipeline has none; build the pipeline with "
                "skcl.pipeline.Pipeline or skcl.pipeline.make_pipeline, whose "
                "partial_fit transforms each task with the fitted leading steps and "
                "learns it with the final step."
            )
        else:
            hint = ""
        raise TypeError(
            f"estimator {name} has no partial_fit: a task sequence is learned one "
            f"partial_fit call per task.{hint}"
        )
    last = final_estimator(estimator)
    if not is_skcl_classifier(last):
        raise TypeError(
            f"The final estimator must be an skcl continual-learning classifier "
            f"(e.g. skcl.AQCClassifier), got {type(last).__name__} from module "
            f"{type(last).__module__}."
        )
    return last


def is_skcl_classifier(estimator):
    """Whether ``estimator`` is one of skcl's continual-learning classifiers."""
    if isinstance(estimator, BaseSequentialClassifier):
        return True
    # Estimators of skcl that do not derive from the shared surface
    # qualify by their package.
    module = type(estimator).__module__ or ""
    return module.split(".")[0] == "skcl" and is_classifier(estimator)


def check_task_sequence(tasks, name):
    """A non-empty list of (X, y) pairs with matching, non-zero lengths."""
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Sequence):
        raise TypeError(
            f"{name} must be a list of (X, y) tasks, got {type(tasks).__name__}."
        )
    if len(tasks) == 0:
        raise ValueError(f"{name} is empty: a task sequence needs at least one (X, y) task.")
    checked = []
    for i, task in enumerate(tasks):
        if not (isinstance(task, Sequence) and len(task) == 2):
            raise TypeError(f"{name}[{i}] must be an (X, y) pair, got {type(task).__name__}.")
        X, y = task
        n_X, n_y = _num_samples(X), _num_samples(y)
        if n_X != n_y:
            raise ValueError(f"{name}[{i}] has {n_X} samples in X but {n_y} labels in y.")
        if n_X == 0:
            raise ValueError(f"{name}[{i}] has no samples.")
        checked.append((X, y))
    return checked


def _feature_shape(X):
    shape = getattr(X, "shape", None)
    if shape is None:
        shape = np.shape(X)
    return tuple(shape[1:])


def check_same_features(sequences):
    """Every task of every sequence has the same features, or a clear error.

    ``sequences`` maps a name ("train_tasks") to a checked task list.
    """
    reference = None
    for name, tasks in sequences.items():
        for i, (X, _) in enumerate(tasks):
            shape = _feature_shape(X)
            if reference is None:
                reference = (f"{name}[{i}]", shape)
            elif shape != reference[1]:
                def describe(s):
                    return f"{s[0]} features" if len(s) == 1 else f"samples of shape {s}"
                raise ValueError(
                    f"{name}[{i}] has {describe(shape)} but {reference[0]} has "
                    f"{describe(reference[1])}: every task of the training and "
                    f"evaluation sequences must have the same features."
                )


def check_sequences(train_tasks, eval_tasks, classes, eval_name="eval_tasks"):
    """Check a training and an evaluation sequence; settle ``classes``.

    Returns
    -------
    train_tasks, eval_tasks : lists of (X, y)
    classes : ndarray of shape (n_classes,)
        Given, or the labels of all the training tasks.
    """
    train_tasks = check_task_sequence(train_tasks, "train_tasks")
    if eval_tasks is None:
        eval_tasks = train_tasks
    else:
        eval_tasks = check_task_sequence(eval_tasks, eval_name)
    if len(eval_tasks) != len(train_tasks):
        raise ValueError(
            f"{eval_name} has {len(eval_tasks)} tasks but train_tasks has "
            f"{len(train_tasks)}: task i of both must be the same task."
        )
    check_same_features({"train_tasks": train_tasks, eval_name: eval_tasks})
    if classes is None:
        classes = sorted_labels(*[np.asarray(y) for _, y in train_tasks])
    else:
        classes = check_classes(classes)
    labels = unique_labels(*[np.asarray(y) for _, y in train_tasks + eval_tasks])
    unknown = np.setdiff1d(labels, classes)
    if unknown.size:
        raise ValueError(
            f"The tasks contain labels not in classes: {unknown.tolist()}; "
            f"classes are {classes.tolist()}."
        )
    return train_tasks, eval_tasks, classes
