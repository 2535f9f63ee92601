"""to_sklearn: one skcl estimator, or a pipeline step by step."""

import copy

from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

import skcl

from ..feature_extraction import RandomFeatures
from ._classifiers import (
    SOFTMAX_METHODS,
    VARIATIONAL_METHODS,
    NotExportableError,
    gaussian_to_discriminant_analysis,
    least_squares_to_ridge,
    softmax_to_logistic,
)
from ._features import random_features_to_rbf_sampler

__all__ = ["to_sklearn"]

_CLASSIFIERS = {
    "GaussianDiscriminantClassifier": gaussian_to_discriminant_analysis,
    "LeastSquaresClassifier": least_squares_to_ridge,
    **dict.fromkeys(SOFTMAX_METHODS + VARIATIONAL_METHODS, softmax_to_logistic),
}


def to_sklearn(estimator):
    """A fitted scikit-learn estimator that computes what ``estimator`` computes.

    Nothing is refitted and nothing is approximated: where no
    scikit-learn estimator computes the same function, a
    :class:`NotExportableError` says what blocks the export and what would
    export. The result needs scikit-learn only (no skcl, JAX or torch), so
    it can be pickled, saved with ``skops.io``, or converted to ONNX with
    ``skl2onnx``. It predicts; it does not go on learning the sequence
    (keep the skcl estimator for that).

    =============================================  ==============================================
    skcl                                           scikit-learn
    =============================================  ==============================================
    GaussianDiscriminantClassifier (one            LinearDiscriminantAnalysis (shared
    component per class, plug-in predictive)       covariance) or
                                                   QuadraticDiscriminantAnalysis (one per
                                                   class): ``predict``, ``predict_proba``;
                                                   ``decision_function`` differs from skcl's
                                                   log joint by one number per row with three
                                                   or more classes, equal with two
    LeastSquaresClassifier (``probabilities``      RidgeClassifier: ``predict``,
    "scores" or "ranked")                          ``decision_function``; no ``predict_proba``
                                                   (skcl's calibrated probabilities are not
                                                   carried)
    AQC, EWC, online EWC, SI, NC, joint,           LogisticRegression: ``predict``,
    fine-tuning without a hidden layer             ``predict_proba``, ``decision_function``
    (``predictive="map"``)
    RandomFeatures(activation="cos") followed      RBFSampler with the same draws, the next
    by one of the above (or a StandardScaler)      step's coefficients divided by its
                                                   √(2/n_components)
    skcl.pipeline.Pipeline                         sklearn.pipeline.Pipeline, step by step;
                                                   scikit-learn's own steps copied as they are
    =============================================  ==============================================

    Parameters
    ----------
    estimator : fitted skcl estimator or Pipeline

    Returns
    -------
    estimator : fitted scikit-learn estimator or sklearn.pipeline.Pipeline

    Raises
    ------
    NotExportableError
        Per-(task, class) Gaussian components, the Student-t predictive,
        the least-squares discriminant's ``predict``, hidden layers, the
        variational methods' averaged predictions, the Laplace predictive,
        random ReLU or tanh features, and RandomFeatures not followed by a
        linear step.
    sklearn.exceptions.NotFittedError
        When ``estimator`` (or a step) is not fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from skcl import GaussianDiscriminantClassifier
    >>> from skcl.datasets import load_ci_split_wine
    >>> from skcl.export import to_sklearn
    >>> data = load_ci_split_wine()
    >>> clf = GaussianDiscriminantClassifier(components="class")
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> lda = to_sklearn(clf)
    >>> type(lda).__name__
    'LinearDiscriminantAnalysis'
    >>> X_test = data.test[0][0]
    >>> bool((lda.predict(X_test) == clf.predict(X_test)).all())
    True
    >>> bool(np.allclose(lda.predict_proba(X_test), clf.predict_proba(X_test),
    ...                  rtol=0, atol=1e-10))
    True
    """
    if isinstance(estimator, Pipeline):
        return _pipeline(estimator)
    exported, scale = _step(estimator, 1.0)
    if scale != 1.0:
        raise NotExportableError(_ALONE)
    return exported


_ALONE = ("RandomFeatures alone exports as an RBFSampler, which computes √(2/n_components) "
          "times its features, not the features themselves. Export the Pipeline that ends "
          "with its classifier: the classifier's coefficients absorb the factor.")


def _public_skcl_name(estimator):
    """The public skcl class ``estimator`` is an instance of (exactly), or None."""
    cls = type(estimator)
    if cls is RandomFeatures:
        return "RandomFeatures"
    name = cls.__name__
    if name in _CLASSIFIERS and getattr(skcl, name) is cls:
        return name
    return None


def _step(estimator, input_scale):
    """One step: (its scikit-learn counterpart, the factor its output carries)."""
    if estimator is None or estimator == "passthrough":
        return estimator, input_scale
    name = _public_skcl_name(estimator)
    if name is None:
        if type(estimator).__module__.split(".")[0] == "skcl":
            raise NotExportableError(
                f"{type(estimator).__name__} has no scikit-learn counterpart: it is skcl's own "
                "(a frozen network's features, say). Save it with skops.io instead "
                "(skcl.trusted_types()).")
        if not isinstance(estimator, BaseEstimator):
            raise NotExportableError(f"{estimator!r} is not a scikit-learn estimator.")
        check_is_fitted(estimator)
        return _foreign_step(estimator, input_scale), 1.0 if _absorbs(estimator) else input_scale
    check_is_fitted(estimator)
    if name == "RandomFeatures":
        if input_scale != 1.0:
            raise NotExportableError(
                "RandomFeatures after RandomFeatures: the first one's RBFSampler carries a "
                "factor the second cannot absorb.")
        return random_features_to_rbf_sampler(estimator)
    return _CLASSIFIERS[name](estimator, input_scale), 1.0


def _absorbs(estimator):
    return isinstance(estimator, StandardScaler) and estimator.with_std


def _foreign_step(estimator, input_scale):
    """A step of scikit-learn's (or another library's): a copy, rescaled if it must be."""
    exported = copy.deepcopy(estimator)
    if input_scale == 1.0:
        return exported
    if isinstance(estimator, StandardScaler):
        # (c x − c m) / (c s) = (x − m) / s: the same output from c x.
        if exported.mean_ is not None:
            exported.mean_ = exported.mean_ * input_scale
        if exported.scale_ is not None:
            exported.scale_ = exported.scale_ * input_scale
            exported.var_ = exported.var_ * input_scale**2
        return exported
    raise NotExportableError(
        f"{type(estimator).__name__} after RandomFeatures: RBFSampler gives √(2/M) times the "
        "features, which a linear skcl classifier or a StandardScaler can absorb but "
        f"{type(estimator).__name__} cannot. Put the classifier (or a StandardScaler) "
        "right after RandomFeatures and the Pipeline exports.")


def _pipeline(pipeline):
    steps, scale = [], 1.0
    for name, estimator in pipeline.steps:
        exported, scale = _step(estimator, scale)
        steps.append((name, exported))
    if scale != 1.0:
        raise NotExportableError(_ALONE.replace("alone", "at the end of a Pipeline"))
    return Pipeline(steps, memory=None, verbose=False)
