"""The scikit-learn surface that every skcl classifier shares.

A call to ``partial_fit`` is one task of the sequence. What does not depend
on how a classifier learns lives here: the transaction that keeps a
rejected call from changing anything, ``fit`` as one ``partial_fit`` of
everything after forgetting, the validation of a task (inputs, labels,
sample weights) and the bookkeeping of ``classes_``, declared on the first
call or grown as new labels arrive.

Two families build on it and know nothing of each other: the
gradient-trained classifiers (:mod:`skcl._gradient.base`), whose stand-in for the
previous loss L_{t-1} is an approximation, and the exact ones
(:mod:`skcl._exact`), whose stand-in is L_{t-1} itself, kept as sums.
"""

from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from ._utils.validation import (
    check_classes,
    check_label_types,
    label_kind,
    sorted_labels,
    validate_params,
)

__all__ = ["BaseSequentialClassifier", "ValidTask", "check_hyperparameters"]


class ValidTask(NamedTuple):
    """A task that passed validation, ready to be learned.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        The labels as given (not yet indices into ``classes_``).
    sample_weight : ndarray of shape (n_samples,)
    first : bool
        Whether this is the sequence's first task.
    grown_classes : ndarray of shape (n_classes,) or None
        The sorted union of the classes so far and the new ones, when the
        task brings classes not in ``classes_`` (``grow_classes=True``
        only); None otherwise.
    """

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray
    first: bool
    grown_classes: np.ndarray | None


class BaseSequentialClassifier(ClassifierMixin, BaseEstimator):
    """Base of every skcl classifier: one ``partial_fit`` per task.

    Not for direct use. A subclass declares ``_parameter_constraints``
    (which must include ``grow_classes``) and implements
    ``_partial_fit(X, y, classes, sample_weight, infer_classes)``, usually
    as :meth:`_validate_task` followed by the learning itself. It must set
    ``classes_`` (the surface does so on the first call) and
    ``n_tasks_seen_``.
    """

    #: The dtypes a task's X is accepted in (the first is the default).
    _input_dtypes = [np.float64, np.float32]

    #: The hyperparameters a prediction reads. ``set_params`` may change
    #: them after fitting (the user guide switches the predictive so), so
    #: each prediction checks them again (:meth:`_check_prediction_params`),
    #: by the same constraints and with the same message as ``fit``.
    _prediction_params = ()

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn one more task.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The task's inputs.
        y : array-like of shape (n_samples,)
            The task's labels; any subset of ``classes``, one class is fine.
        classes : array-like of shape (n_classes,), default=None
            Every class of the whole sequence. Required on the first call
            (unless ``grow_classes=True``); on later calls it may be
            omitted or must be the same. With ``grow_classes=True`` it may
            be omitted on the first call too, and a later call may pass
            more classes (a superset of ``classes_``) or labels not seen
            yet. An array or a list, as in scikit-learn (a set, which has
            no order, is refused with a ValueError); ``classes_`` and
            ``predict`` keep its dtype (``object`` stays ``object``, as in
            ``LogisticRegression``).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples in the likelihood.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On NaN or infinite inputs, empty X, a different number of
            features than before, labels outside ``classes``, a first call
            without ``classes`` (unless ``grow_classes``), ``classes`` that
            lack a class seen before, or labels of another type than
            before. The estimator is then left exactly as it was before the
            call.
        """
        with self._transaction():
            self._partial_fit(X, y, classes, sample_weight)
        return self

    def fit(self, X, y, sample_weight=None):
        """Forget everything and learn ``(X, y)`` as a single task.

        ``classes_`` become the labels present in ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        with self._transaction():
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
            self._partial_fit(X, y, None, sample_weight, infer_classes=True)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    # ------------------------------------------------------- for subclasses

    def _partial_fit(self, X, y, classes, sample_weight, infer_classes=False):
        raise NotImplementedError

    @contextmanager
    def _transaction(self):
        """Restore every attribute if the block raises."""
        saved = dict(vars(self))
        try:
            yield
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            raise

    def _check_params(self):
        """Validate every hyperparameter against ``_parameter_constraints``."""
        validate_params(self)

    def _check_prediction_params(self):
        """Validate the hyperparameters a prediction reads (``_prediction_params``)."""
        validate_params(self, self._prediction_params)

    def _validate_task(self, X, y, classes, sample_weight, *, infer_classes=False,
                       sample_weight_dtype=np.float64):
        """Check a task and settle the classes; the learning is the caller's.

        On the first call this sets ``classes_`` (and, through scikit-learn's
        ``validate_data``, ``n_features_in_``), so it must run inside the
        transaction. With ``grow_classes=True`` a later call's new classes
        are returned in ``grown_classes``, not set: growing is the
        learner's job.

        Returns
        -------
        ValidTask
        """
        first = not hasattr(self, "classes_")
        grow = bool(self.grow_classes) and not infer_classes
        if first and classes is None and not infer_classes and not grow:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        if classes is not None:
            classes = check_classes(classes)
        X, y = validate_data(self, X, y, reset=first, dtype=self._input_dtypes)
        check_label_types(y, "y")
        check_classification_targets(y)
        if infer_classes:
            classes = sorted_labels(y)
        grown = None
        if grow:
            grown = self._grown_classes(y, classes)
            if first:
                self.classes_, grown = grown, None
        else:
            if first:
                self.classes_ = classes
            elif classes is not None and not np.array_equal(self.classes_, classes):
                # scikit-learn's message (_check_partial_fit_first_call).
                raise ValueError(
                    f"`classes={classes!r}` is not the same as on last call to "
                    f"partial_fit, was: {self.classes_!r}"
                )
            unknown = np.setdiff1d(np.unique(y), self.classes_)
            if unknown.size:
                raise ValueError(
                    f"y contains labels not in classes: {unknown.tolist()}; "
                    f"classes are {self.classes_.tolist()}."
                )
        # Checked in float64, then narrowed here: scikit-learn's own cast to
        # float32 overflowed (a RuntimeWarning) before it refused the weights.
        narrow = sample_weight_dtype is not None and np.dtype(sample_weight_dtype).itemsize < 8
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64 if narrow else sample_weight_dtype,
            ensure_non_negative=True,
        )
        with np.errstate(over="ignore"):
            total = np.sum(sample_weight, dtype=np.float64)
        largest = np.max(sample_weight) if sample_weight.size else 0.0
        if not np.isfinite(total) or (narrow and largest > np.finfo(sample_weight_dtype).max):
            room = "its sum overflows float64" if not np.isfinite(total) else (
                f"a weight exceeds {np.dtype(sample_weight_dtype).name}'s largest value")
            raise ValueError(
                f"sample_weight is too large: {room} (largest weight {largest:.3g}); scale "
                "the weights down."
            )
        if narrow:
            sample_weight = sample_weight.astype(sample_weight_dtype)
        return ValidTask(X, y, sample_weight, first, grown)

    def _grown_classes(self, y, classes):
        """The sorted union of the classes so far, ``classes`` and ``y``.

        ``classes`` is checked already (:func:`~skcl._utils.validation.check_classes`).
        None when nothing is new. Rejects ``classes`` that lack a class
        seen before or a label of ``y``, and labels of another type.
        """
        first = not hasattr(self, "classes_")
        labels = np.unique(y)
        parts = [labels] + ([] if first else [self.classes_])
        parts += [] if classes is None else [classes]
        try:
            union = sorted_labels(*parts)
        except ValueError as exc:
            raise ValueError(
                f"grow_classes: the labels must keep one type; {str(exc).rstrip('.')}. "
                f"The classes so far are {[] if first else self.classes_.tolist()}."
            ) from exc
        new = [] if first else np.setdiff1d(union, self.classes_)
        if len(new) and label_kind(union.dtype) != label_kind(self.classes_.dtype):
            # np.unique would turn int classes and a new float label into
            # floats; a float equal to a class (nothing new) is that class,
            # as it is without growth.
            raise ValueError(
                f"grow_classes: the labels must keep one type; the classes so far are "
                f"{label_kind(self.classes_.dtype)} ({self.classes_.tolist()}) and the new "
                f"labels {new.tolist()} would make them {label_kind(union.dtype)}. Pass "
                f"labels of the type of classes_ ({self.classes_.dtype})."
            )
        if classes is not None:
            unknown = np.setdiff1d(labels, classes)
            if unknown.size:
                raise ValueError(
                    f"y contains labels not in classes: {unknown.tolist()}; "
                    f"classes are {classes.tolist()}."
                )
            if not first:
                missing = np.setdiff1d(self.classes_, classes)
                if missing.size:
                    raise ValueError(
                        f"classes lack classes seen before: {missing.tolist()}; with "
                        "grow_classes, classes may grow but never shrink (classes so far: "
                        f"{self.classes_.tolist()})."
                    )
        if first:
            return union
        return union if len(union) > len(self.classes_) else None


def check_hyperparameters(estimator):
    """Check an skcl classifier's hyperparameters now, before it learns anything.

    The checks its ``partial_fit`` makes first (the ``_check_params``
    hook that each family extends), for callers that must reject a bad
    setting before any training: a search checks every candidate this
    way. Anything that is not an skcl classifier is left alone.

    Parameters
    ----------
    estimator : object
        Usually a pipeline's final step.

    Raises
    ------
    ValueError
        On a hyperparameter out of its range or of the wrong type
        (scikit-learn's ``InvalidParameterError`` is a ``ValueError``).
    """
    if isinstance(estimator, BaseSequentialClassifier):
        estimator._check_params()
