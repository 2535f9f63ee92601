"""Helpers that turn one labelled dataset into task sequences.

A *task sequence* is a list of ``(X, y)`` pairs, one per task, learned in
order with ``partial_fit``. The paper builds every sequence the same way
(appendix A): a stratified test split, a stratified validation split of
the rest, then each split cut into tasks by groups of classes.
"""

from collections.abc import Callable, Mapping

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import Bunch

__all__ = [
    "split_by_class",
    "train_validation_test_split",
    "relabel",
]

PAPER_SEED = 1337
"""Seed of the paper's splits (the reference code's ``seed``): 1337.

The default ``random_state`` of every loader and splitter of
:mod:`skcl.datasets`, so that their splits are the paper's.
"""


def split_by_class(X, y, class_groups):
    """Cut a dataset into tasks, one per group of classes.

    Samples keep their order inside each task.

    Parameters
    ----------
    X : array-like of shape (n_samples, ...)
        Inputs; any number of trailing dimensions (features, or images).
    y : array-like of shape (n_samples,)
        Labels.
    class_groups : sequence of sequences of labels
        The classes of each task, in task order, e.g. ``[[0, 1], [2, 3]]``
        for the first two tasks of Split MNIST. A label may appear in one
        group only.

    Returns
    -------
    tasks : list of (X_task, y_task)
        One pair per group, ``len(tasks) == len(class_groups)``.

    Raises
    ------
    ValueError
        If ``X`` and ``y`` differ in length, a group is empty, a class
        appears in two groups, or a group selects no sample.

    Examples
    --------
    >>> import numpy as np
    >>> from skcl.datasets import split_by_class
    >>> X = np.arange(6).reshape(6, 1)
    >>> y = np.array([0, 1, 2, 0, 1, 2])
    >>> tasks = split_by_class(X, y, [[0, 1], [2]])
    >>> [t_y.tolist() for _, t_y in tasks]
    [[0, 1, 0, 1], [2, 2]]
    >>> tasks[1][0].ravel().tolist()
    [2, 5]
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if len(X) != len(y):
        raise ValueError(
            f"X and y have different lengths: {len(X)} and {len(y)}."
        )
    groups = [np.atleast_1d(np.asarray(group)) for group in class_groups]
    if not groups or any(group.size == 0 for group in groups):
        raise ValueError("class_groups must be a non-empty list of non-empty groups.")
    seen = np.concatenate(groups)
    if len(np.unique(seen)) != len(seen):
        raise ValueError("A class appears in more than one group of class_groups.")
    tasks = []
    for group in groups:
        mask = np.isin(y, group)
        if not mask.any():
            raise ValueError(f"No sample has a label in the group {group.tolist()}.")
        tasks.append((X[mask], y[mask]))
    return tasks


def train_validation_test_split(
    X, y, *, test_size=0.2, validation_size=0.2, random_state=PAPER_SEED
):
    """Split a dataset as the paper does: test first, then validation.

    Both splits are stratified by label and use the same seed, so with the
    defaults the proportions are 64 % training, 16 % validation and 20 %
    test (paper, appendix A).

    Parameters
    ----------
    X : array-like of shape (n_samples, ...)
    y : array-like of shape (n_samples,)
    test_size : float, default=0.2
        Fraction of all samples held out for testing.
    validation_size : float, default=0.2
        Fraction of the remaining (non-test) samples held out for
        validation. ``0`` gives no validation split (``None`` in its place).
    random_state : int, default=1337
        Seed of both splits; 1337 is the paper's.

    Returns
    -------
    train, validation, test : tuple of (X, y)
        ``validation`` is ``None`` when ``validation_size == 0``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skcl.datasets import train_validation_test_split
    >>> X, y = load_iris(return_X_y=True)
    >>> train, validation, test = train_validation_test_split(X, y)
    >>> train[0].shape, validation[0].shape, test[0].shape
    ((96, 4), (24, 4), (30, 4))
    """
    X = np.asarray(X)
    y = np.asarray(y)
    X_rest, X_test, y_rest, y_test = train_test_split(
        X, y, test_size=test_size, random_state=random_state, stratify=y
    )
    if not validation_size:
        return (X_rest, y_rest), None, (X_test, y_test)
    X_train, X_val, y_train, y_val = train_test_split(
        X_rest,
        y_rest,
        test_size=validation_size,
        random_state=random_state,
        stratify=y_rest,
    )
    return (X_train, y_train), (X_val, y_val), (X_test, y_test)


def relabel(tasks, mapping):
    """Map the labels of every task, e.g. to a domain-incremental sequence.

    In a domain-incremental sequence every task asks the same question of
    a different part of the input space: DI Split MNIST keeps the digit
    images of Split MNIST but labels them even (0) or odd (1).

    Parameters
    ----------
    tasks : list of (X, y)
        A task sequence.
    mapping : mapping or callable
        Old label to new label: a dict, or a function applied elementwise
        (vectorised over the label array).

    Returns
    -------
    list of (X, y_new)
        The same inputs (not copied) with new labels.

    Raises
    ------
    ValueError
        If a dict ``mapping`` has no entry for a label that occurs.

    Examples
    --------
    Class-incremental tasks of digit pairs become domain-incremental ones
    that ask "even or odd?":

    >>> import numpy as np
    >>> from skcl.datasets import relabel
    >>> tasks = [(np.zeros((2, 1)), np.array([0, 1])), (np.ones((2, 1)), np.array([2, 3]))]
    >>> [y.tolist() for _, y in relabel(tasks, lambda y: y % 2)]
    [[0, 1], [0, 1]]
    >>> [y.tolist() for _, y in relabel(tasks, {0: 0, 1: 1, 2: 0, 3: 1})]
    [[0, 1], [0, 1]]
    """
    if isinstance(mapping, Mapping):
        table = dict(mapping)

        def apply(y):
            missing = set(np.unique(y).tolist()) - set(table)
            if missing:
                raise ValueError(f"mapping has no entry for the labels {sorted(missing)}.")
            return np.array([table[label] for label in y.tolist()])

    elif isinstance(mapping, Callable):

        def apply(y):
            return np.asarray(mapping(y))

    else:
        raise TypeError("mapping must be a dict or a callable.")
    return [(X, apply(np.asarray(y))) for X, y in tasks]


def make_task_sequences(X, y, class_groups, *, random_state=PAPER_SEED, **split):
    """Training, validation and test task sequences from one dataset.

    Parameters
    ----------
    X, y : array-like
        The whole dataset.
    class_groups : sequence of sequences of labels
        The classes of each task.
    random_state : int, default=1337
        Seed of the splits.
    **split
        ``test_size`` and ``validation_size`` for
        :func:`train_validation_test_split`.

    Returns
    -------
    sequences : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation`` and ``test``: lists of ``(X, y)`` pairs,
        one per class group (``validation`` is None when
        ``validation_size=0``). Keys and attributes both work, as for the
        loaders.

    Examples
    --------
    Iris as two tasks, setosa first, then the two other species:

    >>> from sklearn.datasets import load_iris
    >>> from skcl.datasets import make_task_sequences
    >>> X, y = load_iris(return_X_y=True)
    >>> sequences = make_task_sequences(X, y, [[0], [1, 2]])
    >>> [len(task_y) for _, task_y in sequences["train"]]
    [32, 64]
    >>> [len(task_y) for _, task_y in sequences["test"]]
    [10, 20]
    """
    parts = train_validation_test_split(X, y, random_state=random_state, **split)
    names = ("train", "validation", "test")
    return Bunch(
        **{
            name: (None if part is None else split_by_class(*part, class_groups))
            for name, part in zip(names, parts)
        }
    )

