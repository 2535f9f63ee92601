"""Random nonlinear features: a fixed random projection and an activation.

φ(x) = g(xW + b) with W and b drawn once from a seed and never trained:
the random-features view of kernel machines (Rahimi and Recht, 2007) and of
RanPAC (McDonnell et al., 2023), which puts a random ReLU layer between a
frozen backbone and a least-squares head. The features are fixed, so any
exact classifier on them (:class:`~skcl.LeastSquaresClassifier`,
:class:`~skcl.GaussianDiscriminantClassifier`) still learns a task sequence
with nothing approximated.

At RanPAC's and RanDumb's sizes (10,000 to 25,000 features) the features
are computed a block of rows and of columns at a time, so that beyond the
output itself memory stays bounded (``transform_memory_bytes``); sparse
input (a ``HashingVectorizer``'s CSR rows, say) is multiplied as it is and
gives the dense input's features, and ``backend="jax"`` computes the blocks
on JAX's default device.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._exact.backend import BACKENDS, resolve_backend
from .._utils.validation import Interval, StrOptions, store_parameters, validate_params

__all__ = ["RandomFeatures", "transform_memory_bytes"]

# float64 values in one block of W's columns (64 MB) and in one block of
# pre-activations (32 MB): the scratch beyond the output, whatever n and M.
_WEIGHT_VALUES = 2**23
_BLOCK_VALUES = 2**22

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
        M, the number of features, columns of W.
    activation : {"relu", "tanh", "cos"}, default="relu"
        g. ``"cos"`` with ``scale`` = √(2γ·n_features_in_) and
        ``bias="uniform"`` gives
        random Fourier features of the RBF kernel exp(−γ‖x − x'‖²),
        scikit-learn's ``RBFSampler`` up to its √(2/n_components) factor
        (RanDumb's features).
    scale : float, default=1.0
        W's entries are N(0, scale² / n_features_in_): a row of typical
        norm √n_features_in_ gets pre-activations of spread ``scale``.
        Standardise the inputs (or choose ``scale``) so that this holds.
    bias : {"normal", "uniform", "none"}, default="normal"
        b ~ N(0, scale²), b ~ U(0, 2π) (for ``"cos"``), or b = 0.
    dtype : {"float32", "float64"}, default="float32"
        Of W and of the features (float32 halves memory and time).
    backend : {"auto", "numpy", "jax"}, default="auto"
        Where the blocks are computed: numpy on the host, or JAX on its
        default device; "auto" is JAX only when that device is a GPU or
        TPU (``skcl._exact.backend.resolve_backend``). Both give the
        same features up to rounding (on the device the product is in
        ``dtype``, on the host in float64 rounded once to ``dtype``).
    random_state : int, RandomState instance or None, default=None
        Draws W and b. An int gives identical features run to run.

    Attributes
    ----------
    weights_ : ndarray of shape (n_features_in_, n_components)
        W.
    bias_ : ndarray of shape (n_components,)
        b.
    n_features_in_ : int

    Notes
    -----
    :meth:`transform` multiplies a block of W's columns (at most 64 MB in
    float64) by a block of rows (at most 32 MB of pre-activations) at a
    time, so its memory beyond the n × M output and W is bounded
    whatever n and M (``transform_memory_bytes`` in this module). Sparse rows are
    multiplied as they are (scipy's CSR product, O(nnz·M)), never made
    dense on the host; they give the dense rows' features up to the
    rounding of another order of the same sums (≤ 1e-15 relative in the
    float64 product, hence equal after rounding to float32 but for values
    within that of a float32 boundary).

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
        "backend": [StrOptions(set(BACKENDS))],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=2000, *, activation="relu", scale=1.0, bias="normal",
                 dtype="float32", backend="auto", random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y=None):
        """Draw W and b for X's number of features (X's values are not used).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        validate_params(self)
        X = validate_data(self, X, reset=True, accept_sparse="csr")
        rng = check_random_state(self.random_state)
        d, k = X.shape[1], int(self.n_components)
        # Drawn a block of rows at a time and rounded to dtype as it goes,
        # so that W never exists in float64 at once: the draws fill a
        # (d, k) array row by row, so the blocks are those of one draw and
        # a seed gives the W it always gave.
        weights = np.empty((d, k), dtype=self.dtype)
        for a in range(0, d, max(1, _WEIGHT_VALUES // k)):
            rows = min(d, a + max(1, _WEIGHT_VALUES // k)) - a
            weights[a:a + rows] = rng.standard_normal((rows, k)) * (self.scale / np.sqrt(d))
        if self.bias == "normal":
            bias = rng.standard_normal(k) * self.scale
        elif self.bias == "uniform":
            bias = rng.uniform(0, 2 * np.pi, k)
        else:
            bias = np.zeros(k)
        self.weights_ = weights
        self.bias_ = bias.astype(self.dtype)
        self._n_features_out = k
        return self

    def transform(self, X):
        """φ(X).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_in_)
            Sparse input (any scipy format, taken as CSR) gives the dense
            input's features.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            Of ``dtype``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, accept_sparse="csr",
                          dtype=[np.float64, np.float32])
        if resolve_backend(self.backend) == "jax":
            from .._exact.device import random_features_on_device

            return random_features_on_device(X, self.weights_, self.bias_, self.activation,
                                             _BLOCK_VALUES)
        n, (d, k) = X.shape[0], self.weights_.shape
        out = np.empty((n, k), dtype=self.weights_.dtype)
        columns = max(1, min(k, _WEIGHT_VALUES // max(d, 1)))
        rows = max(1, _BLOCK_VALUES // columns)
        for c in range(0, k, columns):
            # The product in float64, rounded once to the output's dtype: a
            # float32 GEMM may round a row differently with its position in
            # the batch, and a row's features should not depend on its
            # neighbours.
            W = self.weights_[:, c:c + columns].astype(np.float64)
            b = self.bias_[c:c + columns].astype(np.float64)
            for r in range(0, n, rows):
                block = X[r:r + rows]
                block = block.astype(np.float64) if sp.issparse(block) else np.asarray(
                    block, dtype=np.float64)
                Z = np.asarray(block @ W)
                Z += b
                out[r:r + rows, c:c + columns] = _ACTIVATIONS[self.activation](Z)
                del Z  # before the next block's: one block at a time
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = [self.dtype]
        return tags


def transform_memory_bytes(n_samples, n_features, n_components, dtype="float32"):
    """Peak memory of :meth:`RandomFeatures.transform`, in bytes, beyond its input.

    The n × M output and W (in ``dtype``), a block of W's columns in
    float64 (at most 64 MB) and one block of pre-activations (at most
    32 MB): linear in n·M, with no n·M float64 temporary.

    Parameters
    ----------
    n_samples, n_features, n_components : int
        n, D and M.
    dtype : {"float32", "float64"}

    Returns
    -------
    int
    """
    size = np.dtype(dtype).itemsize
    n, d, k = int(n_samples), int(n_features), int(n_components)
    columns = max(1, min(k, _WEIGHT_VALUES // max(d, 1)))
    rows = max(1, _BLOCK_VALUES // columns)
    return size * (n * k + d * k + k) + 8 * (d * columns + min(rows, n) * columns + columns)
