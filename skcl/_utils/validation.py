"""Hyperparameters validated from one declaration per estimator.

Each estimator declares ``_parameter_constraints`` in scikit-learn's
vocabulary (``sklearn.utils._param_validation``); :func:`validate_params`
checks them before anything is learned, with scikit-learn's messages and
its ``InvalidParameterError`` (a ``ValueError`` and a ``TypeError``).
"""

import sys
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
    "is_dask_array",
    "StrOptions",
    "SCENARIOS",
    "check_classes",
    "check_scenario",
    "check_label_types",
    "label_kind",
    "positive_int",
    "positive_real",
    "validate_params",
    "layer_sizes",
    "sorted_labels",
    "store_parameters",
]

positive_int = Interval(Integral, 1, None, closed="left")
# Finite: an infinite rate, precision or weight is no setting but an overflow
# waiting to happen (inf·0 is NaN).
positive_real = Interval(Real, 0, np.inf, closed="neither")


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


def validate_params(estimator, names=None):
    """Check hyperparameters of ``estimator`` against its declaration.

    Parameters
    ----------
    estimator : BaseEstimator
        With ``_parameter_constraints``.
    names : sequence of str or None, default=None
        The parameters to check; None: every one. A prediction checks
        the few it reads (microseconds; ``get_params`` alone costs a
        hundred or more).

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
    """
    if names is None:
        params = estimator.get_params(deep=False)
    else:
        params = {param: getattr(estimator, param) for param in names}
    constraints = {param: estimator._parameter_constraints[param] for param in params}
    name = type(estimator).__name__
    for param, value in params.items():
        numeric = any(isinstance(c, Interval) for c in constraints[param])
        # bool is an int to Python, never a count or a rate to a user.
        if numeric and isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(
                f"The {param!r} parameter of {name} must be a number, not a bool. "
                f"Got {value!r} instead."
            )
    validate_parameter_constraints(constraints, params, caller_name=name)


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


def check_label_types(labels, name):
    """Refuse an ``object`` array that mixes strings with other labels.

    numpy cannot sort them (a ``TypeError`` comparing int and str) and
    scikit-learn calls them an "unknown" target; the user needs to hear
    which values do not go together.

    Parameters
    ----------
    labels : array-like of shape (n,)
    name : str
        What the labels are called in the message ("y", "classes").

    Raises
    ------
    ValueError
    """
    labels = np.asarray(labels)
    if labels.dtype != object:
        return
    is_str = np.array([isinstance(v, str) for v in labels.ravel()], dtype=bool)
    if is_str.any() and not is_str.all():
        text, other = labels.ravel()[is_str][0], labels.ravel()[~is_str][0]
        raise ValueError(
            f"{name} mixes strings with labels of another type, e.g. {text!r} and "
            f"{other!r} ({type(other).__name__}); labels must be all strings or all "
            "numbers.")


def label_kind(dtype):
    """The kind of labels a dtype holds: "integer", "float", "bool" or "string".

    Two arrays of labels have one type when their kinds agree (int32 and
    int64 do; int and float do not).
    """
    kinds = {"i": "integer", "u": "integer", "f": "float", "b": "bool",
             "U": "string", "S": "string", "O": "string"}
    return kinds.get(np.dtype(dtype).kind, np.dtype(dtype).name)


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
    check_label_types(classes, "classes")
    check_classification_targets(classes)
    return sorted_labels(classes)


def is_dask_array(X):
    """Whether X is a Dask array (without importing Dask when it is not)."""
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(X, dask_array.Array)


SCENARIOS = ("task", "domain", "class")
"""The three scenarios of continual learning (van de Ven, Tuytelaars and Tolias, 2022)."""


def check_scenario(scenario):
    """``scenario`` if it is one of :data:`SCENARIOS`, else a clear ValueError."""
    if not isinstance(scenario, str) or scenario not in SCENARIOS:
        raise ValueError(
            f"scenario must be one of {', '.join(map(repr, SCENARIOS))} (task-, domain- or "
            f"class-incremental), got {scenario!r}."
        )
    return scenario
