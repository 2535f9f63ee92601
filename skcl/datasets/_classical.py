"""Task sequences from scikit-learn's bundled datasets.

The paper's CI Split Iris, 2D Iris and Wine, and Split digits (the
8×8 digits cut as Split MNIST is, class- and domain-incremental). These
datasets ship with scikit-learn, so none of these loaders downloads.
"""

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.utils import Bunch

from ._split import PAPER_SEED, make_task_sequences

__all__ = [
    "load_ci_split_iris",
    "load_ci_split_2d_iris",
    "load_ci_split_wine",
    "load_ci_split_digits",
    "load_di_split_digits",
]

# Split digits' tasks: consecutive pairs of digits, as in Split MNIST.
_PAIRS = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]


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


def _split_digits(name, domain_incremental, random_state):
    digits = load_digits()
    # Pixel intensities 0..16 scaled to [0, 1], as the MNIST sequences'
    # pixels are after /255; the models' defaults are set for that range.
    X = digits.data / 16.0
    sequences = make_task_sequences(X, digits.target, _PAIRS, random_state=random_state)
    scenario = "domain" if domain_incremental else "class"
    if domain_incremental:
        for part in ("train", "validation", "test"):
            sequences[part] = [(X_task, y_task % 2) for X_task, y_task in sequences[part]]
    return Bunch(
        **sequences,
        classes=np.arange(2 if domain_incremental else 10),
        target_names=np.asarray(
            ["even", "odd"] if domain_incremental else [str(d) for d in range(10)]
        ),
        feature_names=list(digits.feature_names),
        task_classes=[list(pair) for pair in _PAIRS],
        scenario=scenario,
        name=name,
        DESCR=(
            f"{name}: scikit-learn's 1,797 8x8 digits as 5 tasks of 2 digits, "
            "(0, 1), (2, 3), ..., (8, 9)"
            + (", each labelled by parity (0 even, 1 odd)" if domain_incremental else "")
            + "; 64 features, pixel intensities / 16 in [0, 1]. Stratified 20 % "
            f"test split, then 20 % of the rest for validation (seed {random_state})."
        ),
    )


def load_ci_split_digits(*, random_state=PAPER_SEED):
    """CI Split digits: scikit-learn's 8×8 digits as 5 tasks of 2 digits.

    Class-incremental, as CI Split MNIST: the tasks hold the digits
    (0, 1), (2, 3), ..., (8, 9) and after the last one all 10 must be
    told apart. The bundled stand-in for Split MNIST: no download, 64
    features, seconds to learn.

    Parameters
    ----------
    random_state : int, default=1337
        Seed of the stratified test and validation splits (the paper's).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation``, ``test``: lists of 5 ``(X, y)`` tasks,
        ``X`` of shape (n_task_samples, 64), float64 in [0, 1] (the
        pixel intensities 0..16 divided by 16); ``y`` the digits 0..9.
        Also ``classes`` (``0..9``, to pass as ``partial_fit(...,
        classes=...)``), ``task_classes`` (each task's digits),
        ``scenario`` (``"class"``), ``target_names``, ``feature_names``,
        ``name`` and ``DESCR``.

    See Also
    --------
    load_di_split_digits : The same tasks, domain-incremental.

    Examples
    --------
    >>> from skcl.datasets import load_ci_split_digits
    >>> data = load_ci_split_digits()
    >>> [sorted(set(y.tolist())) for _, y in data.train]
    [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    >>> sum(len(y) for _, y in data.train), sum(len(y) for _, y in data.test)
    (1149, 360)
    """
    return _split_digits("CI Split digits", False, random_state)


def load_di_split_digits(*, random_state=PAPER_SEED):
    """DI Split digits: the 5 tasks of CI Split digits, labelled by parity.

    Domain-incremental, as DI Split MNIST: every task asks the same
    question, even (0) or odd (1), about a new pair of digits.

    Parameters
    ----------
    random_state : int, default=1337
        Seed of the stratified test and validation splits (the paper's).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        As :func:`load_ci_split_digits`, with ``y = digit % 2``,
        ``classes`` ``[0, 1]``, ``target_names`` ``["even", "odd"]`` and
        ``scenario`` ``"domain"``; ``task_classes`` still names each
        task's digits.

    Examples
    --------
    >>> from skcl.datasets import load_di_split_digits
    >>> data = load_di_split_digits()
    >>> [sorted(set(y.tolist())) for _, y in data.train]
    [[0, 1], [0, 1], [0, 1], [0, 1], [0, 1]]
    >>> data.target_names.tolist()
    ['even', 'odd']
    """
    return _split_digits("DI Split digits", True, random_state)
