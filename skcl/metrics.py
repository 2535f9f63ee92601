"""Metrics of continual learning over task sequences.

The central object is the *accuracy matrix* ``R`` of shape
(n_tasks, n_tasks): ``R[i, j]`` is the accuracy on task ``i`` after learning
tasks ``0..j``. The paper reports the *final average accuracy*, the mean of
the last column.
"""

import numpy as np
from sklearn.metrics import accuracy_score

__all__ = [
    "task_accuracies",
    "final_average_accuracy",
    "average_accuracy",
    "average_forgetting",
    "backward_transfer",
]


def task_accuracies(estimator, tasks):
    """Accuracy of a fitted classifier on each task of a sequence.

    Parameters
    ----------
    estimator : fitted classifier
        Anything with ``predict``.
    tasks : list of (X, y)
        A task sequence, e.g. ``load_ci_split_iris().test``.

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
    return np.array([accuracy_score(y, estimator.predict(X)) for X, y in tasks])


def final_average_accuracy(estimator, tasks):
    """The paper's final average accuracy: the mean of the task accuracies.

    Each task counts the same whatever its size (paper, section IV-B).

    Parameters
    ----------
    estimator : fitted classifier
        Usually after learning the whole training sequence.
    tasks : list of (X, y)
        The validation or test task sequence.

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
    return float(np.mean(task_accuracies(estimator, tasks)))


def _check_matrix(R):
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] == 0:
        raise ValueError(
            "R must be a square accuracy matrix of shape (n_tasks, n_tasks), "
            f"got shape {R.shape}."
        )
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
