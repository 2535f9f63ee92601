"""to_sklearn: one skcl estimator, or a pipeline step by step."""

import copy

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
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
    component per class, plug-in predictive)       covariance; with two classes the
                                                   LogisticRegression of the same
                                                   coefficients, which skl2onnx converts
                                                   right) or
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
    the same with hidden layers of                 MLPClassifier (the same activation):
    ``activation`` "relu", "tanh", "logistic"      ``predict``, ``predict_proba``; swish
    or "identity"                                  hidden units (the default) do not export
    RandomFeatures(activation="cos") followed      RBFSampler with the same draws, the next
    by one of the above (or a StandardScaler)      step's coefficients divided by its
                                                   √(2/n_components)
    skcl.pipeline.Pipeline                         sklearn.pipeline.Pipeline, step by step;
                                                   scikit-learn's own steps copied as they are
    FrozenEstimator(e), and a Pipeline or          the same wrapper around the export of
    ColumnTransformer holding skcl steps           what it holds; a RandomFeatures in a
                                                   ColumnTransformer is followed by a
                                                   StandardScaler(with_mean=False) that
                                                   divides its RBFSampler's factor out
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
        random ReLU or tanh features, RandomFeatures not followed by a
        linear step, and any other scikit-learn estimator (a FeatureUnion,
        say) that holds an skcl object: the result never holds one.
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
        exported, scale = _pipeline(estimator, 1.0)
        if scale != 1.0:
            raise NotExportableError(_ALONE.replace("alone", "at the end of a Pipeline"))
        return exported
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
    # scikit-learn's containers: the same container around the exports.
    if isinstance(estimator, Pipeline):
        return _pipeline(estimator, input_scale)
    if isinstance(estimator, FrozenEstimator):
        exported, scale = _step(estimator.estimator, input_scale)
        return FrozenEstimator(exported), scale
    if isinstance(estimator, ColumnTransformer):
        return _column_transformer(estimator, input_scale), 1.0
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
        if holds_skcl_object(estimator):
            raise NotExportableError(
                f"{type(estimator).__name__} holds an skcl estimator, and this exporter "
                "converts skcl estimators only as steps of a Pipeline, in a FrozenEstimator "
                "or in a ColumnTransformer. Make them such steps and it exports, or save "
                "the model with skops.io (skcl.trusted_types()).")
        return _foreign_step(estimator, input_scale), 1.0 if _absorbs(estimator) else input_scale
    check_is_fitted(estimator)
    if name == "RandomFeatures":
        if input_scale != 1.0:
            raise NotExportableError(
                "RandomFeatures after RandomFeatures: the first one's RBFSampler carries a "
                "factor the second cannot absorb.")
        return random_features_to_rbf_sampler(estimator)
    return _CLASSIFIERS[name](estimator, input_scale), 1.0


def holds_skcl_object(obj, _seen=None):
    """Whether ``obj``, or anything it holds (attributes, lists, dicts), is skcl's.

    Parameters
    ----------
    obj : object

    Returns
    -------
    bool
    """
    seen = set() if _seen is None else _seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, complex, type(None))):
        return False
    seen.add(id(obj))
    if type(obj).__module__.split(".")[0] == "skcl":
        return True
    if isinstance(obj, np.ndarray):
        return obj.dtype == object and any(holds_skcl_object(x, seen) for x in obj.flat)
    if isinstance(obj, dict):
        return any(holds_skcl_object(x, seen) for item in obj.items() for x in item)
    if isinstance(obj, (list, tuple, set, frozenset)):
        return any(holds_skcl_object(x, seen) for x in obj)
    return any(holds_skcl_object(x, seen) for x in getattr(obj, "__dict__", {}).values())


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


def _pipeline(pipeline, scale):
    """A Pipeline of the steps' exports, and the factor its output carries."""
    steps = []
    for name, estimator in pipeline.steps:
        exported, scale = _step(estimator, scale)
        steps.append((name, exported))
    return Pipeline(steps, memory=None, verbose=False), scale


def _column_transformer(transformer, input_scale):
    """A fitted ColumnTransformer whose transformers are exports, each of factor 1.

    Each fitted transformer is exported; one whose output carries a factor
    (a RandomFeatures' RBFSampler) is followed by a StandardScaler that
    divides it out, as the columns beside it carry none. The unfitted
    ``transformers`` parameter is set to the same exports, so that nothing
    in the result is skcl's.
    """
    check_is_fitted(transformer)
    if input_scale != 1.0:
        raise NotExportableError(
            "ColumnTransformer after RandomFeatures: its columns would carry the RBFSampler's "
            "factor. Put the ColumnTransformer first, or RandomFeatures inside it.")
    exported = copy.deepcopy(transformer)
    exports = {}
    for name, step, _ in transformer.transformers_:
        if not isinstance(step, str):  # "drop" and "passthrough" stay
            step, scale = _step(step, 1.0)
            if scale != 1.0:
                step = Pipeline([("features", step), ("unscale", _divide_by(scale, step))])
        exports[name] = step
    exported.transformers_ = [(name, exports[name], columns)
                              for name, _, columns in transformer.transformers_]
    exported.transformers = [(name, exports.get(name, step), columns)
                             for name, step, columns in transformer.transformers]
    if "remainder" in exports:
        exported.remainder = exports["remainder"]
    if holds_skcl_object(exported):
        raise NotExportableError(
            "this ColumnTransformer keeps an skcl object where this exporter does not "
            "look; save the model with skops.io (skcl.trusted_types()).")
    return exported


def _divide_by(scale, step):
    """A fitted StandardScaler(with_mean=False) dividing ``step``'s output by ``scale``."""
    n = len(step.get_feature_names_out())
    scaler = StandardScaler(with_mean=False).fit(np.ones((2, n)))
    scaler.scale_ = np.full(n, scale)
    scaler.var_ = scaler.scale_**2
    return scaler
