"""Hyperparameters validated from one declaration per estimator.

Each estimator declares ``_parameter_constraints`` in scikit-learn's
vocabulary (``sklearn.utils._param_validation``); :func:`validate_params`
checks them before anything is learned, with scikit-learn's messages and
its ``InvalidParameterError`` (a ``ValueError`` and a ``TypeError``).
"""

from collections.abc import Mapping, Set
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.multiclass import check_classification_targets, unique_labels

__all__ = [
    "Interval",
    "StrOptions",
    "check_classes",
    "positive_int",
    "positive_real",
    "validate_params",
    "layer_sizes",
    "sorted_labels",
    "store_parameters",
]

positive_int = Interval(Integral, 1, None, closed="left")
positive_real = Interval(Real, 0, None, closed="neither")


def store_parameters(estimator, arguments):
    """Set each ``__init__`` argument as the attribute of the same name.

    scikit-learn reads an estimator's parameters from the signature of its
    ``__init__``, so every estimator spells its signature out in full;
    with this its body need not repeat the names once more, as
    assignments or as a ``super().__init__`` call.

    Parameters
    ----------
    estimator : BaseEstimator
    arguments : dict
        The ``locals()`` of ``__init__``, taken before anything else is
        bound there.
    """
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def validate_params(estimator):
    """Check every hyperparameter of ``estimator`` against its declaration.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
    """
    params = estimator.get_params(deep=False)
    name = type(estimator).__name__
    for param, value in params.items():
        numeric = any(isinstance(c, Interval) for c in estimator._parameter_constraints[param])
        # bool is an int to Python, never a count or a rate to a user.
        if numeric and isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(
                f"The {param!r} parameter of {name} must be a number, not a bool. "
                f"Got {value!r} instead."
            )
    validate_parameter_constraints(estimator._parameter_constraints, params, caller_name=name)


def layer_sizes(value, name):
    """A tuple of positive ints from an int or a sequence of them."""
    sizes = (value,) if np.isscalar(value) else tuple(value)
    if any(isinstance(s, (bool, np.bool_)) or not isinstance(s, Integral) or s < 1 for s in sizes):
        raise InvalidParameterError(f"{name} must be positive integers, got {value!r}.")
    return tuple(int(s) for s in sizes)


def sorted_labels(*labels):
    """The sorted union of label arrays, in the labels' own dtype.

    scikit-learn's ``unique_labels`` checks them (one kind of target, no
    strings mixed with numbers) but turns an ``object`` array of strings
    (and a pandas ``Categorical``) into a ``<U`` array; ``np.unique``, as in
    ``LabelEncoder`` and so in ``LogisticRegression``, ``SVC`` or the
    trees, keeps ``object``, so that ``predict`` returns labels of the
    dtype they were given in.

    Parameters
    ----------
    *labels : array-likes of shape (n,)

    Returns
    -------
    ndarray of shape (n_labels,)
    """
    unique_labels(*labels)  # scikit-learn's checks and messages
    return np.unique(np.concatenate([np.asarray(part).ravel() for part in labels]))


def check_classes(classes):
    """The ``classes`` of a ``partial_fit``, sorted and unique, in their own dtype.

    Raises
    ------
    ValueError
        For what scikit-learn's ``partial_fit`` rejects with a
        ``ValueError``: a set or a mapping (no order; scikit-learn asks
        for an "array-like (array or non-string sequence)"), a string, a
        scalar, an empty or 2-D array, or continuous values.
    """
    if isinstance(classes, (Set, Mapping, str, bytes)) or np.ndim(classes) != 1:
        hint = (
            ": a set has no order; pass a list or an array, e.g. sorted(classes)"
            if isinstance(classes, Set) else ""
        )
        shown = repr(classes)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise ValueError(
            f"classes must be a 1-D array-like of labels (array or non-string "
            f"sequence), as in scikit-learn's partial_fit; got {type(classes).__name__} "
            f"{shown}{hint}."
        )
    classes = np.asarray(classes)
    if classes.size == 0:
        raise ValueError("classes is empty: it must name every class of the sequence.")
    check_classification_targets(classes)
    return sorted_labels(classes)
