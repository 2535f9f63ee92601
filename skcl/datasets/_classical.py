"""The paper's classical task sequences: CI Split Iris, 2D Iris and Wine.

Iris and Wine ship with scikit-learn, so these need no download.
"""

import numpy as np
from sklearn.datasets import load_iris, load_wine
from sklearn.utils import Bunch

from ._split import PAPER_SEED, make_task_sequences

__all__ = ["load_ci_split_iris", "load_ci_split_2d_iris", "load_ci_split_wine"]


def _one_class_per_task(dataset, name, features, random_state):
    X = dataset.data[:, features]
    y = dataset.target
    classes = np.unique(y)
    sequences = make_task_sequences(
        X, y, [[c] for c in classes], random_state=random_state
    )
    feature_names = [dataset.feature_names[i] for i in features]
    return Bunch(
        **sequences,
        classes=classes,
        target_names=np.asarray(dataset.target_names),
        feature_names=feature_names,
        name=name,
        DESCR=(
            f"{name}: {len(classes)} tasks of one class each, "
            f"{len(feature_names)} features. Stratified 20 % test split, then "
            f"20 % of the rest for validation (seed {random_state})."
        ),
    )


def load_ci_split_iris(*, random_state=PAPER_SEED):
    """CI Split Iris: 3 tasks, one species each, 4 features.

    Parameters
    ----------
    random_state : int, default=1337
        Seed of the stratified test and validation splits (the paper's).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation``, ``test``: lists of 3 ``(X, y)`` tasks,
        ``X`` of shape (n_task_samples, 4), float64; ``y`` integer labels in
        {0, 1, 2}. Also ``classes`` (to pass as ``partial_fit(...,
        classes=...)``), ``target_names``, ``feature_names``, ``name`` and
        ``DESCR``. With the defaults each training task holds 32 samples,
        each validation task 8 and each test task 10.

    Examples
    --------
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> [len(y) for _, y in data.train]
    [32, 32, 32]
    """
    return _one_class_per_task(load_iris(), "CI Split Iris", [0, 1, 2, 3], random_state)


def load_ci_split_2d_iris(*, random_state=PAPER_SEED):
    """CI Split 2D Iris: CI Split Iris on petal length and width only.

    The paper uses it to draw decision surfaces (its Figure 2). Same
    splits and return value as :func:`load_ci_split_iris`, with ``X`` of
    shape (n_task_samples, 2).

    Parameters
    ----------
    random_state : int, default=1337
        Seed of the stratified test and validation splits (the paper's).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        As :func:`load_ci_split_iris`, with 2 features.

    Examples
    --------
    >>> from skcl.datasets import load_ci_split_2d_iris
    >>> data = load_ci_split_2d_iris()
    >>> data.feature_names
    ['petal length (cm)', 'petal width (cm)']
    >>> data.train[0][0].shape
    (32, 2)
    """
    return _one_class_per_task(load_iris(), "CI Split 2D Iris", [2, 3], random_state)


def load_ci_split_wine(*, random_state=PAPER_SEED):
    """CI Split Wine: 3 tasks, one wine cultivar each, 13 features.

    Same splits and return value as :func:`load_ci_split_iris`, with ``X``
    of shape (n_task_samples, 13). The features are not standardised, as
    in the paper (hence its smaller learning rate of 0.01 for Wine).

    Parameters
    ----------
    random_state : int, default=1337
        Seed of the stratified test and validation splits (the paper's).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        As :func:`load_ci_split_iris`, with 13 features; the cultivars
        have different numbers of samples.

    Examples
    --------
    >>> from skcl.datasets import load_ci_split_wine
    >>> data = load_ci_split_wine()
    >>> [X.shape for X, _ in data.train]
    [(38, 13), (45, 13), (30, 13)]
    >>> [len(y) for _, y in data.test]
    [12, 14, 10]
    """
    data = load_wine()
    return _one_class_per_task(data, "CI Split Wine", list(range(13)), random_state)
