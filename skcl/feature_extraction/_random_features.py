"""Random nonlinear features: a fixed random projection and an activation.

φ(x) = g(xW + b) with W and b drawn once from a seed and never trained:
the random-features view of kernel machines (Rahimi and Recht, 2007) and of
RanPAC (McDonnell et al., 2023), which puts a random ReLU layer between a
frozen backbone and a least-squares head. The features are fixed, so any
exact classifier on them (:class:`~skcl.LeastSquaresClassifier`,
:class:`~skcl.GaussianDiscriminantClassifier`) still learns a task sequence
with nothing approximated.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import Interval, StrOptions, store_parameters, validate_params

__all__ = ["RandomFeatures"]

_ACTIVATIONS = {
    "relu": lambda z: np.maximum(z, 0, out=z),
    "tanh": lambda z: np.tanh(z, out=z),
    "cos": lambda z: np.cos(z, out=z),
}


class RandomFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """φ(x) = activation(x W + b), W and b random and fixed.

    Parameters
    ----------
    n_components : int, default=2000
        The number of features, columns of W.
    activation : {"relu", "tanh", "cos"}, default="relu"
        g. ``"cos"`` with ``scale`` = √(2γ·n_features_in_) and
        ``bias="uniform"`` gives
        random Fourier features of the RBF kernel exp(−γ‖x − x'‖²),
        scikit-learn's ``RBFSampler`` up to its √(2/n_components) factor.
    scale : float, default=1.0
        W's entries are N(0, scale² / n_features_in_): a row of typical
        norm √n_features_in_ gets pre-activations of spread ``scale``.
        Standardise the inputs (or choose ``scale``) so that this holds.
    bias : {"normal", "uniform", "none"}, default="normal"
        b ~ N(0, scale²), b ~ U(0, 2π) (for ``"cos"``), or b = 0.
    dtype : {"float32", "float64"}, default="float32"
        Of W and of the features (float32 halves memory and time).
    random_state : int, RandomState instance or None, default=None
        Draws W and b. An int gives identical features run to run.

    Attributes
    ----------
    weights_ : ndarray of shape (n_features_in_, n_components)
        W.
    bias_ : ndarray of shape (n_components,)
        b.
    n_features_in_ : int

    Examples
    --------
    >>> from skcl import LeastSquaresClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.feature_extraction import RandomFeatures
    >>> from skcl.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> data = load_ci_split_iris()
    >>> X0 = data.train[0][0]
    >>> features = RandomFeatures(500, random_state=0).fit(X0)
    >>> features.transform(X0).shape
    (32, 500)
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "scale": [Interval(Real, 0, None, closed="neither")],
        "bias": [StrOptions({"normal", "uniform", "none"})],
        "dtype": [StrOptions({"float32", "float64"})],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=2000, *, activation="relu", scale=1.0, bias="normal",
                 dtype="float32", random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y=None):
        """Draw W and b for X's number of features (X's values are not used).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        validate_params(self)
        X = validate_data(self, X, reset=True)
        rng = check_random_state(self.random_state)
        d, k = X.shape[1], int(self.n_components)
        weights = rng.standard_normal((d, k)) * (self.scale / np.sqrt(d))
        if self.bias == "normal":
            bias = rng.standard_normal(k) * self.scale
        elif self.bias == "uniform":
            bias = rng.uniform(0, 2 * np.pi, k)
        else:
            bias = np.zeros(k)
        self.weights_ = weights.astype(self.dtype)
        self.bias_ = bias.astype(self.dtype)
        self._n_features_out = k
        return self

    def transform(self, X):
        """φ(X).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        # The product in float64, rounded once to the output's dtype: a
        # float32 GEMM may round a row differently with its position in the
        # batch, and a row's features should not depend on its neighbours.
        Z = np.asarray(X, dtype=np.float64) @ self.weights_.astype(np.float64)
        Z += self.bias_
        return _ACTIVATIONS[self.activation](Z).astype(self.weights_.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = [self.dtype]
        return tags
