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
gives the dense input's features, ``backend="jax"`` computes the blocks
on JAX's default device, and a Dask array is transformed lazily, block by
block, into a Dask array (the exact classifiers reduce its blocks where
they lie).

The default ``scale="auto"`` reads one scalar centre and one scalar spread
from the fitted rows (``_input_scale``), so that the features do not
depend on the input's units: raw uint8 pixels, pixels / 255 and
standardised pixels give the same features up to rounding.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._exact.backend import BACKENDS, get_backend, resolve_backend
from .._utils.validation import (
    Interval,
    StrOptions,
    is_dask_array,
    store_parameters,
    validate_params,
)
from ._input_scale import (
    centre_and_spread,
    check_machine_memory,
    check_preactivations,
    nonzero_fraction,
    standardised,
)

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

# The spread of the pre-activations of standardised rows at scale="auto":
# 1, and √2 for "cos", where W ~ N(0, 2/(Dσ²)) is RBFSampler(gamma="scale")'s.
_AUTO_SCALE = {"relu": 1.0, "tanh": 1.0, "cos": float(np.sqrt(2.0))}

# Rows with at most this fraction of nonzero entries (hashed or
# bag-of-words text: about 0.01; pixels: 0.17 to 0.5; tabular: 1) get
# nearly linear random Fourier features, s = 0.3 (γ = 0.045/(Dσ²)): on
# hashed text FAA rose as s fell from √2 to 0.3, where on MNIST pixels it
# fell below 0.7 (benchmarks/accuracy/bench_random_features_defaults.py).
_SPARSE_ROWS = 0.05
_AUTO_SCALE_SPARSE_COS = 0.3

# A normal draw beyond 8 standard deviations has probability 1e-15: a
# scale above the dtype's largest value / 8 would put inf in W or b.
_DRAW_BOUND = 8.0


class RandomFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """φ(x) = activation(((x − μ)/σ) W + b), W and b random and fixed.

    Parameters
    ----------
    n_components : int, default=2000
        M, the number of features, columns of W.
    activation : {"cos", "relu", "tanh"}, default="cos"
        g. ``"cos"`` with a uniform bias (its default) gives random Fourier
        features of the RBF kernel exp(−γ‖x − x'‖²), scikit-learn's
        ``RBFSampler`` up to its √(2/n_components) factor (RanDumb's
        features): with ``scale="auto"``, γ = 1/(D σ²), ``RBFSampler(
        gamma="scale")``'s (γ = 0.045/(D σ²) on sparse rows); with a
        number, γ = scale²/(2D).
    scale : "auto" or float, default="auto"
        s, the spread of the pre-activations. W's entries are
        N(0, s²/D), D = ``n_features_in_``, and b ~ N(0, s²) for
        ``bias="normal"``.

        - ``"auto"``: the rows are first centred and scaled by two
          scalars read from the rows ``fit`` sees, μ the mean and σ the
          standard deviation of all their entries (one number each, as
          ``RBFSampler(gamma="scale")`` reads one variance; never one per
          feature), and s = 1 (√2 for ``"cos"``). A scalar affine change
          of the input (raw uint8 pixels, pixels / 255, standardised
          pixels) then gives the same features up to rounding.
          For ``"cos"``, rows of which at most 5 % of the entries are
          nonzero (hashed or bag-of-words text; pixels are 17 % or more)
          get s = 0.3 instead: nearly linear features, which learned
          hashed text streams where √2 lost them (issue 50). Whether a
          row is zero is read as the rows are given, dense or sparse
          alike (a scalar offset makes sparse rows dense).
        - a float: μ = 0 and σ = 1; a row of typical norm √D gets
          pre-activations of spread ``scale``, so standardise the inputs
          (or choose ``scale``) so that this holds.
    bias : {"auto", "normal", "uniform", "none"}, default="auto"
        b ~ N(0, s²), b ~ U(0, 2π) (for ``"cos"``), or b = 0; ``"auto"``
        is ``"uniform"`` for ``"cos"`` and ``"normal"`` otherwise.
    dtype : {"float32", "float64"}, default="float32"
        Of W and of the features (float32 halves memory and time).
    backend : {"auto", "numpy", "jax"}, default="auto"
        Where the blocks are computed: numpy on the host, or JAX on its
        default device; "auto" is JAX only when that device is a GPU or
        TPU (``skcl._exact.backend.resolve_backend``), decided at ``fit``
        (``backend_``). Both give the same features up to rounding (on
        the device the product is in ``dtype``, on the host in float64
        rounded once to ``dtype``).
    random_state : int, RandomState instance or None, default=None
        Draws W and b. An int gives identical features run to run.

    Attributes
    ----------
    weights_ : ndarray of shape (n_features_in_, n_components)
        W.
    bias_ : ndarray of shape (n_components,)
        b.
    input_centre_ : float
        μ (0 with a numeric ``scale``).
    input_spread_ : float
        σ (1 with a numeric ``scale``).
    scale_ : float
        s, ``scale`` resolved (the rule of ``"auto"`` applied).
    activation_ : {"cos", "relu", "tanh"}
        g, fixed at ``fit`` with W and b: ``set_params(activation=...)``
        acts at the next ``fit``, as every setting does.
    backend_ : {"numpy", "jax"}
        The backend that computes the features (``backend`` resolved),
        as the exact classifiers name theirs.
    n_features_in_ : int

    Notes
    -----
    The default activation: on CI Split MNIST and Fashion-MNIST pixels at
    M = 2,000, learned task by task by either exact classifier at its
    defaults (``benchmarks/accuracy/bench_feature_units.py``), random Fourier
    features were 0.13 to 0.33 points more accurate than ReLU features;
    they are also RanDumb's.

    :meth:`transform` multiplies a block of W's columns (at most 64 MB in
    float64) by a block of rows (at most 32 MB of pre-activations) at a
    time, so its memory beyond the n × M output and W is bounded
    whatever n and M (``transform_memory_bytes`` in this module). Dense
    rows are centred and scaled a block at a time in float64, without
    overflow where (x − μ)/σ is finite (rows spanning ±1.7e308 included);
    sparse rows are scaled, x/σ, and μ folded into each block of b
    instead (b − (μ/σ)·1ᵀW), so that they stay sparse. Sparse
    rows are multiplied as they are (scipy's CSR product, O(nnz·M)),
    never made dense on the host; they give the dense rows' features up
    to the rounding of another order of the same sums (≤ 1e-15 relative
    in the float64 product, hence equal after rounding to float32 but for
    values within that of a float32 boundary).

    Before allocating, ``fit`` and ``transform`` refuse with a
    :class:`MemoryError` what is beyond the machine's physical memory (W
    at ``fit``; the output, W and a block at ``transform``), and with a
    :class:`ValueError` a ``scale`` or inputs whose pre-activations could
    overflow ``dtype``; nothing is changed then.

    A Dask array (rows in blocks) is transformed lazily into a Dask array
    of the same row blocks and one block of M columns, each block computed
    where it lies: the n × M features never exist in one process, and an
    exact classifier's ``partial_fit`` reduces them block by block.

    Examples
    --------
    >>> import numpy as np
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.feature_extraction import RandomFeatures
    >>> data = load_ci_split_iris()
    >>> X0 = data.train[0][0]
    >>> features = RandomFeatures(500, random_state=0).fit(X0)
    >>> features.transform(X0).shape
    (32, 500)
    >>> in_mm = RandomFeatures(500, random_state=0).fit(10 * X0)  # centimetres to millimetres
    >>> bool(np.allclose(in_mm.transform(10 * X0), features.transform(X0), atol=1e-5))
    True
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "scale": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "bias": [StrOptions({"auto", "normal", "uniform", "none"})],
        "dtype": [StrOptions({"float32", "float64"})],
        "backend": [StrOptions(set(BACKENDS))],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=2000, *, activation="cos", scale="auto", bias="auto",
                 dtype="float32", backend="auto", random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y=None):
        """Draw W and b for X's number of features; with ``scale="auto"``, read μ and σ.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            With a numeric ``scale`` only the number of features is read.
            A Dask array's μ and σ are reduced on its workers.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        MemoryError
            When W (D × M of ``dtype``) is beyond the machine's memory.
        ValueError
            When ``scale`` would put values beyond ``dtype``'s range in W or b.
        """
        saved = dict(vars(self))
        try:
            return self._fit(X)
        except BaseException:
            # A rejected fit changes nothing (validate_data sets n_features_in_ first).
            vars(self).clear()
            vars(self).update(saved)
            raise

    def _fit(self, X):
        validate_params(self)
        if is_dask_array(X):
            if X.ndim != 2:
                raise ValueError(f"Expected a 2-D Dask array, got {X.ndim}-D.")
            d = int(X.shape[1])
        else:
            X = validate_data(self, X, reset=True, accept_sparse="csr")
            d = X.shape[1]
        k, dtype = int(self.n_components), np.dtype(self.dtype)
        check_machine_memory(dtype.itemsize * k * (d + 1),
                             f"RandomFeatures({k}): W ({d} × {k}, {dtype}) and b")
        largest = float(np.finfo(dtype).max)
        if self.scale != "auto" and not self.scale * _DRAW_BOUND <= largest:
            raise ValueError(
                f"scale={self.scale!r} would put values beyond {dtype}'s largest value "
                f"{largest:.3g} in W and b (entries up to {_DRAW_BOUND:g} scale): the "
                f"features would be inf or NaN. Use a scale below {largest / _DRAW_BOUND:.3g}, "
                f"or scale='auto', which reads the inputs' units."
            )
        if self.scale == "auto":
            rows = max(1, _BLOCK_VALUES // max(d, 1))
            centre, spread = centre_and_spread(X, rows)
            scale = _AUTO_SCALE[self.activation]
            if self.activation == "cos" and nonzero_fraction(X, rows) <= _SPARSE_ROWS:
                scale = _AUTO_SCALE_SPARSE_COS
        else:
            centre, spread, scale = 0.0, 1.0, float(self.scale)
        backend = resolve_backend(self.backend)
        rng = check_random_state(self.random_state)
        # Drawn a block of rows at a time and rounded to dtype as it goes,
        # so that W never exists in float64 at once: the draws fill a
        # (d, k) array row by row, so the blocks are those of one draw and
        # a seed gives the W it always gave.
        weights = np.empty((d, k), dtype=dtype)
        for a in range(0, d, max(1, _WEIGHT_VALUES // k)):
            rows = min(d, a + max(1, _WEIGHT_VALUES // k)) - a
            weights[a:a + rows] = rng.standard_normal((rows, k)) * (scale / np.sqrt(d))
        kind = ({"cos": "uniform"}.get(self.activation, "normal") if self.bias == "auto"
                else self.bias)
        if kind == "normal":
            bias = rng.standard_normal(k) * scale
        elif kind == "uniform":
            bias = rng.uniform(0, 2 * np.pi, k)
        else:
            bias = np.zeros(k)
        if is_dask_array(X):
            self.n_features_in_ = d
            vars(self).pop("feature_names_in_", None)
        self.weights_ = weights
        self.bias_ = bias.astype(dtype)
        self.input_centre_, self.input_spread_ = float(centre), float(spread)
        # g is part of the fitted map, as W and b are: a later
        # set_params(activation=...) acts at the next fit, not on these draws.
        self.activation_ = self.activation
        self.scale_ = scale
        self.backend_ = backend
        self._n_features_out = k
        return self

    def transform(self, X):
        """φ(X).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features_in_)
            Sparse input (any scipy format, taken as CSR) gives the dense
            input's features. A Dask array gives a Dask array, computed
            block by block where the blocks lie.

        Returns
        -------
        ndarray or dask array of shape (n_samples, n_components)
            Of ``dtype``; a Dask array has X's row blocks and one block of
            columns.

        Raises
        ------
        MemoryError
            When the output, W and a block (``transform_memory_bytes``)
            are beyond the machine's memory: a Dask array's largest block
            of rows is checked.
        ValueError
            When the pre-activations could overflow ``dtype``.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            return self._transform_dask(X)
        X = validate_data(self, X, reset=False, accept_sparse="csr",
                          dtype=[np.float64, np.float32])
        return features(X, self.weights_, self.bias_, self.input_centre_, self.input_spread_,
                        self.activation_, self.backend_)

    def _transform_dask(self, X):
        """φ(X) of a Dask array: one task per block of rows, W and b shipped once."""
        import dask.array as da

        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has shape {X.shape}, but RandomFeatures is expecting "
                f"{self.n_features_in_} features as input."
            )
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        (d, k), dtype = self.weights_.shape, self.weights_.dtype
        rows = max(X.chunks[0], default=0)
        check_machine_memory(
            transform_memory_bytes(rows, d, k, dtype),
            f"RandomFeatures.transform of a Dask block of {rows} rows: the {rows} × {k} "
            f"{dtype} features, W and one block",
        )
        # W and b as one-chunk Dask arrays: one key each, sent once to a
        # worker, instead of a copy inside every block's task.
        W = da.from_array(self.weights_, chunks=self.weights_.shape)
        b = da.from_array(self.bias_, chunks=self.bias_.shape)
        return da.blockwise(
            _dask_block, "ij", X, "ik", W, "kj", b, "j", dtype=dtype, concatenate=True,
            meta=np.empty((0, 0), dtype=dtype), centre=self.input_centre_,
            spread=self.input_spread_, activation=self.activation_, backend=self.backend_,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = [self.dtype]
        return tags


def _dask_block(X, weights, bias, **options):
    """One block of rows of a Dask array's features (run on a worker)."""
    X = np.asarray(X)
    if X.dtype.kind not in "biuf":
        raise ValueError(f"Expected numeric input, got dtype {X.dtype}.")
    if X.dtype.kind == "f" and not np.isfinite(X).all():
        raise ValueError("Input X contains NaN or infinity.")
    return features(X, weights, bias, **options)


def features(X, weights, bias, centre, spread, activation, backend):
    """g(((x − μ)/σ) W + b) of in-memory rows, a block of rows and of columns at a time.

    Parameters
    ----------
    X : ndarray or scipy CSR matrix of shape (n_samples, n_features)
        Validated rows.
    weights : ndarray of shape (n_features, n_components)
        W, of the features' dtype.
    bias : ndarray of shape (n_components,)
        b.
    centre, spread : float
        μ and σ.
    activation : {"relu", "tanh", "cos"}
        g.
    backend : {"numpy", "jax"}

    Returns
    -------
    ndarray of shape (n_samples, n_components), of W's dtype

    Raises
    ------
    MemoryError
        When ``transform_memory_bytes`` is beyond the machine's memory.
    ValueError
        When the pre-activations could overflow W's dtype.
    """
    n, (d, k), dtype = X.shape[0], weights.shape, weights.dtype
    check_machine_memory(transform_memory_bytes(n, d, k, dtype),
                         f"RandomFeatures.transform of {n} rows: the {n} × {k} {dtype} "
                         f"features, W and one block")
    check_preactivations(X, weights, bias, centre, spread, max(1, _BLOCK_VALUES // max(d, 1)))
    if get_backend(backend).name == "jax":
        from .._exact.device import random_features_on_device

        # The device gets standardised rows (made dense a block at a time on
        # the host, as it makes sparse ones): folding σ ≈ 1e308 into W would
        # underflow in float32, and such rows would overflow it.
        rows = X if (centre, spread) == (0.0, 1.0) else _StandardisedRows(X, centre, spread)
        return random_features_on_device(rows, weights, bias, activation, _BLOCK_VALUES)
    out = np.empty((n, k), dtype=dtype)
    columns = max(1, min(k, _WEIGHT_VALUES // max(d, 1)))
    rows = max(1, _BLOCK_VALUES // columns)
    for c in range(0, k, columns):
        # The product in float64, rounded once to the output's dtype: a
        # float32 GEMM may round a row differently with its position in
        # the batch, and a row's features should not depend on its
        # neighbours.
        W = weights[:, c:c + columns].astype(np.float64)
        b = bias[c:c + columns].astype(np.float64)
        if sp.issparse(X) and centre != 0.0:
            # Sparse rows stay sparse: x/σ, and μ folded into b, b − (μ/σ)·1ᵀW
            # (digits lost in proportion to |μ|/σ, 0.4 for pixels). Dense rows
            # are centred first, which keeps them.
            b -= (centre / spread) * W.sum(axis=0)
        for r in range(0, n, rows):
            block = X[r:r + rows]
            if sp.issparse(block):
                block = block.astype(np.float64)
                if spread != 1.0:
                    block.data /= spread
            else:
                block = standardised(block, centre, spread)
            Z = np.asarray(block @ W)
            Z += b
            out[r:r + rows, c:c + columns] = _ACTIVATIONS[activation](Z)
            del Z  # before the next block's: one block at a time
    return out


class _StandardisedRows:
    """X's rows as (x − μ)/σ, dense float64, read a block (a slice of rows) at a time."""

    def __init__(self, X, centre, spread):
        self.X, self.centre, self.spread = X, centre, spread
        self.shape = X.shape

    def __getitem__(self, rows):
        block = self.X[rows]
        return standardised(block.toarray() if sp.issparse(block) else block,
                            self.centre, self.spread)


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
