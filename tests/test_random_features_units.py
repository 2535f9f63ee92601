"""RandomFeatures whatever the input's units and size: scale="auto", overflow, memory, Dask."""

import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import rbf_kernel

import skcl.feature_extraction._input_scale as input_scale
from skcl import LeastSquaresClassifier
from skcl.feature_extraction import RandomFeatures
from skcl.pipeline import make_pipeline

ACTIVATIONS = {"relu": lambda z: np.maximum(z, 0), "cos": np.cos, "tanh": np.tanh}


@pytest.fixture(scope="module")
def digits_uint8():
    """scikit-learn's 8 × 8 digits: integer pixels 0..16, like uint8 images."""
    X, y = load_digits(return_X_y=True)
    return X.astype(np.uint8), y


@pytest.mark.parametrize("activation", ["relu", "cos", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_units_of_the_input_do_not_change_the_features(digits_uint8, activation, dtype):
    # Raw integer pixels, pixels / 16 and standardised pixels (one scalar
    # offset and scale, as RanDumb normalises MNIST) give the same features.
    X = digits_uint8[0][:300]
    forms = [X, X / 16.0, (X / 16.0 - 0.3) / 0.4, 1e-6 * X.astype(np.float64) + 5.0]
    out = [RandomFeatures(400, activation=activation, dtype=dtype, backend="numpy",
                          random_state=0).fit(F).transform(F) for F in forms]
    tol = 1e-5 if dtype == "float32" else 1e-9
    for other in out[1:]:
        np.testing.assert_allclose(other, out[0], rtol=tol, atol=tol)
    # Without the data-driven scale the units matter (what the default fixes).
    fixed = [RandomFeatures(400, activation=activation, scale=1.0, random_state=0)
             .fit(F).transform(F) for F in forms[:2]]
    assert np.abs(fixed[0] - fixed[1]).max() > 0.1


def test_auto_scale_is_one_scalar_centre_and_spread_by_the_formula(digits_uint8):
    # φ(x) = g(((x − μ)/σ) W + b), μ and σ the mean and standard deviation
    # of every entry of the fitted rows, W ~ N(0, 1/D): checked against
    # numpy's own mean and std and a float64 product.
    X = digits_uint8[0][:200].astype(np.float64)
    features = RandomFeatures(300, activation="relu", dtype="float64", backend="numpy",
                              random_state=1).fit(X)
    assert features.input_centre_ == pytest.approx(X.mean(), rel=1e-12)
    assert features.input_spread_ == pytest.approx(X.std(), rel=1e-12)
    expected = np.maximum(((X - X.mean()) / X.std()) @ features.weights_ + features.bias_, 0)
    np.testing.assert_allclose(features.transform(X), expected, rtol=1e-10, atol=1e-10)
    # W's spread: entries N(0, 1/D) (s = 1 for ReLU).
    assert np.std(features.weights_) * np.sqrt(X.shape[1]) == pytest.approx(1.0, abs=0.02)


def test_auto_cos_features_approximate_rbfsampler_gamma_scale_kernel(digits_uint8):
    # With bias="uniform", (2/M) φφᵀ estimates exp(−γ‖x − x'‖²) with
    # γ = 1/(D·Var(X)), RBFSampler(gamma="scale")'s kernel (RanDumb's).
    X = digits_uint8[0][:40].astype(np.float64)
    features = RandomFeatures(20000, activation="cos", bias="uniform", dtype="float64",
                              backend="numpy", random_state=0).fit(X)
    phi = features.transform(X)
    estimate = 2.0 / 20000 * phi @ phi.T
    exact = rbf_kernel(X, gamma=1.0 / (X.shape[1] * X.var()))
    assert np.abs(estimate - exact).max() < 0.04
    # The kernel of a γ twice or half as large is far from the estimate.
    for wrong in (0.5, 2.0):
        assert np.abs(estimate - rbf_kernel(X, gamma=wrong / (X.shape[1] * X.var()))).max() > 0.1


def test_sparse_rows_give_the_dense_centre_spread_and_features():
    rng = np.random.default_rng(0)
    X = rng.random((150, 30)) * 40
    X[rng.random(X.shape) < 0.7] = 0
    dense = RandomFeatures(200, dtype="float64", backend="numpy", random_state=0).fit(X)
    sparse = RandomFeatures(200, dtype="float64", backend="numpy", random_state=0).fit(
        sp.csr_matrix(X))
    assert sparse.input_centre_ == pytest.approx(dense.input_centre_, rel=1e-13)
    assert sparse.input_spread_ == pytest.approx(dense.input_spread_, rel=1e-13)
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)), dense.transform(X),
                               rtol=1e-12, atol=1e-12)


def test_a_constant_input_gets_spread_one():
    features = RandomFeatures(10, random_state=0).fit(np.full((5, 3), 7.0))
    assert (features.input_centre_, features.input_spread_) == (7.0, 1.0)
    assert np.isfinite(features.transform(np.full((2, 3), 7.0))).all()


def test_a_numeric_scale_keeps_the_raw_units(digits_uint8):
    X = digits_uint8[0][:50].astype(np.float64)
    features = RandomFeatures(100, activation="relu", scale=0.5, dtype="float64",
                              random_state=0).fit(X)
    assert (features.input_centre_, features.input_spread_) == (0.0, 1.0)
    np.testing.assert_allclose(features.transform(X),
                               np.maximum(X @ features.weights_ + features.bias_, 0),
                               rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------ overflow (issue 38, item 6)

@pytest.mark.parametrize("dtype, scale", [("float32", 1e39), ("float64", 1e308)])
def test_a_scale_that_overflows_the_dtype_is_refused_and_changes_nothing(digits_uint8, dtype,
                                                                         scale):
    X = digits_uint8[0][:20]
    features = RandomFeatures(50, scale=scale, dtype=dtype, random_state=0)
    before = dict(vars(features))
    message = re.escape(f"scale={scale!r}") + f".*{dtype}'s largest value"
    with pytest.raises(ValueError, match=message):
        features.fit(X)
    assert vars(features) == before


@pytest.mark.parametrize("activation", ["relu", "cos"])
@pytest.mark.parametrize("dtype, big", [("float32", 1e39), ("float64", 1e307)])
def test_inputs_whose_preactivations_overflow_are_refused(digits_uint8, activation, dtype, big):
    X = digits_uint8[0][:20].astype(np.float64)
    features = RandomFeatures(50, activation=activation, dtype=dtype, random_state=0).fit(X)
    with pytest.raises(ValueError, match=f"overflow.*{dtype}|{dtype}.*overflow"):
        features.transform(X * big)
    # With a numeric scale the raw inputs themselves are the pre-activations' units.
    fixed = RandomFeatures(50, activation=activation, scale=1.0, dtype=dtype,
                           random_state=0).fit(X)
    with pytest.raises(ValueError, match="overflow"):
        fixed.transform(X * big)
    # Fitted on the large rows, scale="auto" reads their units: finite features.
    assert np.isfinite(RandomFeatures(50, activation=activation, dtype=dtype, random_state=0)
                       .fit(X * big).transform(X * big)).all()


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("activation", ["relu", "cos"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_near_the_float64_limit_give_their_standardised_features(activation, dtype,
                                                                      backend):
    # Rows spanning ±1.7e308 standardise to values of a few units (x − μ
    # alone would overflow): their features are those of the same rows in
    # units 1e300 smaller, dense or sparse, on the host or the device
    # (issue 50, item 14: they were refused as "could reach inf").
    X = np.random.default_rng(0).uniform(-1, 1, (30, 6)) * 1.7e308
    X[0, 0], X[1, 0] = 1.7e308, -1.7e308
    features = RandomFeatures(60, activation=activation, dtype=dtype, backend=backend,
                              random_state=0).fit(X)
    halves = (X / 2 - features.input_centre_ / 2) / (features.input_spread_ / 2)
    assert np.abs(halves).max() < 3
    out = features.transform(X)
    assert np.isfinite(out).all()
    small = RandomFeatures(60, activation=activation, dtype=dtype, backend=backend,
                           random_state=0).fit(X / 1e300)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out, small.transform(X / 1e300), rtol=tol, atol=tol)
    np.testing.assert_allclose(features.transform(sp.csr_matrix(X)), out, rtol=tol, atol=tol)
    # What truly overflows is still refused: rows of 1e308 standardised units.
    unit = RandomFeatures(60, activation=activation, dtype=dtype, backend=backend,
                          random_state=0).fit(X / 1e308)
    with pytest.raises(ValueError, match="overflow"):
        unit.transform(X)


_EVERY_FLOAT64 = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(data=st.data(), activation=st.sampled_from(["relu", "cos", "tanh"]),
       dtype=st.sampled_from(["float32", "float64"]))
def test_any_finite_rows_give_finite_features_or_a_clear_error(data, activation, dtype):
    # Rows drawn across float64's whole range (subnormals, ±1.8e308, mixed
    # magnitudes): a model's own training rows always map to finite
    # features; other rows give finite features or the overflow ValueError,
    # never NaN, inf or another error.
    shape = st.tuples(st.integers(2, 6), st.integers(1, 4))
    X = data.draw(arrays(np.float64, shape, elements=_EVERY_FLOAT64), label="X")
    features = RandomFeatures(16, activation=activation, dtype=dtype, backend="numpy",
                              random_state=0).fit(X)
    assert np.isfinite(features.transform(X)).all()
    assert np.isfinite(features.transform(sp.csr_matrix(X))).all()
    other = data.draw(arrays(np.float64, (3, X.shape[1]), elements=_EVERY_FLOAT64),
                      label="other rows")
    try:
        out = features.transform(other)
    except ValueError as error:
        assert "RandomFeatures: the pre-activations" in str(error) and "overflow" in str(error)
    else:
        assert np.isfinite(out).all()


def test_a_pipeline_names_the_features_not_the_classifier(digits_uint8):
    X, y = digits_uint8
    pipe = make_pipeline(RandomFeatures(50, scale=1.0, random_state=0),
                         LeastSquaresClassifier())
    with pytest.raises(ValueError, match="RandomFeatures: the pre-activations"):
        pipe.partial_fit(X[:40] * 1e38, y[:40], classes=np.arange(10))


# ------------------------------------------------------------ memory (issue 38, item 5)

def test_weights_beyond_the_machine_memory_are_refused_before_allocation(digits_uint8):
    X = digits_uint8[0][:5]
    features = RandomFeatures(10**12, random_state=0)
    before = dict(vars(features))
    with pytest.raises(MemoryError, match=r"W \(64 × 1000000000000, float32\).*beyond this "
                                          r"machine's memory of .* GiB"):
        features.fit(X)
    assert vars(features) == before


def test_features_beyond_the_machine_memory_are_refused_before_allocation(monkeypatch,
                                                                          digits_uint8):
    X = digits_uint8[0][:100]
    features = RandomFeatures(1000, random_state=0).fit(X)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(features).items()}
    # A machine of 1 MB: W (256 kB) fits, 100 × 1000 features and a block do not.
    monkeypatch.setattr(input_scale, "machine_memory", lambda: 10**6)
    with pytest.raises(MemoryError, match=r"transform of 100 rows.*needs .* GiB \(\d+ bytes\), "
                                          r"beyond this machine's memory of .*\(1000000 bytes\)"):
        features.transform(X)
    assert vars(features).keys() == before.keys()
    for key, value in before.items():
        np.testing.assert_array_equal(vars(features)[key], value)
    # A refit beyond memory keeps the fitted state.
    with pytest.raises(MemoryError):
        features.set_params(n_components=10**6).fit(X)
    assert features.weights_.shape == (64, 1000)


# ------------------------------------------------------------ fixed at fit (issue 50, item 9)

@pytest.mark.parametrize("fitted, changed", [("cos", "relu"), ("relu", "cos"), ("cos", "tanh")])
def test_set_params_after_fit_keeps_the_fitted_activation(digits_uint8, fitted, changed):
    # W and b were drawn for g = `fitted` (cos's uniform bias, relu's
    # normal one): changing `activation` afterwards acts at the next fit,
    # as scikit-learn's settings do; the fitted map stays g(xW + b).
    X = digits_uint8[0][:60]
    features = RandomFeatures(80, activation=fitted, dtype="float64", random_state=0).fit(X)
    before = features.transform(X)
    Z = ((X - features.input_centre_) / features.input_spread_) @ features.weights_ \
        + features.bias_
    np.testing.assert_allclose(before, ACTIVATIONS[fitted](Z), rtol=1e-12, atol=1e-12)
    features.set_params(activation=changed)
    assert features.activation_ == fitted
    np.testing.assert_array_equal(features.transform(X), before)
    refit = features.fit(X)
    assert refit.activation_ == changed
    np.testing.assert_array_equal(
        refit.transform(X),
        RandomFeatures(80, activation=changed, dtype="float64", random_state=0).fit(X)
        .transform(X))


def test_a_bogus_activation_after_fit_is_refused_at_the_next_fit(digits_uint8):
    from sklearn.utils._param_validation import InvalidParameterError

    X = digits_uint8[0][:60]
    features = RandomFeatures(40, random_state=0).fit(X)
    before = features.transform(X)
    features.set_params(activation="bogus")
    # The fitted map does not read the setting (no KeyError at transform) ...
    np.testing.assert_array_equal(features.transform(X), before)
    # ... and the fit that would act on it refuses it clearly, keeping the model.
    with pytest.raises(InvalidParameterError, match="'activation' parameter.*'bogus'"):
        features.fit(X)
    assert features.activation_ == "cos"
    np.testing.assert_array_equal(features.transform(X), before)


_UNDER_AN_ADDRESS_SPACE_LIMIT = """
import resource, sys
import numpy as np
from skcl.feature_extraction import RandomFeatures

# 1 GiB beyond what the process maps now (a container's limit, say)
with open("/proc/self/statm") as statm:
    mapped = int(statm.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (mapped + 2**30, resource.getrlimit(resource.RLIMIT_AS)[1]))
features = RandomFeatures(2**31 // 24)  # W and b of 5 rows: 2 GiB of float32
try:
    features.fit(np.zeros((4, 5)))
except MemoryError as error:
    print(type(error).__name__, error, "fitted:", hasattr(features, "weights_"))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")
def test_weights_beyond_the_address_space_limit_are_refused_before_allocation():
    # The machine has the memory; the process may not map it.
    result = subprocess.run([sys.executable, "-c", _UNDER_AN_ADDRESS_SPACE_LIMIT],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^MemoryError RandomFeatures\(89478485\): W .* needs 2 GiB .*beyond what "
                     r"this process's address-space limit \(RLIMIT_AS.*leaves it, .*GiB.* "
                     r"fitted: False$", result.stdout.strip()), result.stdout


# ------------------------------------------------------------ backend_

@pytest.mark.parametrize("backend, expected", [("numpy", "numpy"), ("jax", "jax")])
def test_the_fitted_backend_is_stated(digits_uint8, backend, expected):
    features = RandomFeatures(20, backend=backend, random_state=0).fit(digits_uint8[0][:10])
    assert features.backend_ == expected


def test_auto_backend_is_numpy_on_a_cpu(digits_uint8):
    import jax

    features = RandomFeatures(20, random_state=0).fit(digits_uint8[0][:10])
    assert features.backend_ == ("numpy" if jax.default_backend() == "cpu" else "jax")


# ------------------------------------------------------------ Dask (issue 40, item 3)

def _digit_tasks(digits_uint8):
    """CI Split digits: five tasks of two classes, as (X, y) in memory."""
    X, y = digits_uint8
    return [(X[y // 2 == t], y[y // 2 == t]) for t in range(5)]


@pytest.mark.parametrize("scale", ["auto", 2.0])
def test_a_dask_array_gives_a_lazy_dask_array_of_the_same_features(digits_uint8, scale):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X = digits_uint8[0][:300]
    features = RandomFeatures(120, scale=scale, random_state=0).fit(X)
    computed = []

    def block(start):
        computed.append(start)
        return X[start:start + 70]

    lazy_X = da.concatenate([da.from_delayed(dask.delayed(block)(s), (len(X[s:s + 70]), 64),
                                             dtype=X.dtype) for s in range(0, 300, 70)])
    out = features.transform(lazy_X)
    assert isinstance(out, da.Array) and not computed  # nothing ran yet
    assert out.dtype == np.float32 and out.shape == (300, 120)
    assert out.chunks == ((70, 70, 70, 70, 20), (120,))
    np.testing.assert_array_equal(out.compute(), features.transform(X))
    # Features chunked along their columns are rechunked to whole rows.
    np.testing.assert_array_equal(features.transform(da.from_array(X, chunks=(50, 10))),
                                  features.transform(X))


def test_fit_on_a_dask_array_reads_the_same_centre_and_spread(digits_uint8):
    da = pytest.importorskip("dask.array")
    X = digits_uint8[0][:300]
    memory = RandomFeatures(50, random_state=0).fit(X)
    lazy = RandomFeatures(50, random_state=0).fit(da.from_array(X, chunks=(64, 64)))
    assert lazy.n_features_in_ == 64
    assert lazy.input_centre_ == pytest.approx(memory.input_centre_, rel=1e-12)
    assert lazy.input_spread_ == pytest.approx(memory.input_spread_, rel=1e-12)
    np.testing.assert_array_equal(lazy.weights_, memory.weights_)
    # The rule of scale="auto" reads the same fraction of nonzero entries.
    rows = np.zeros((40, 64))
    rows[np.arange(40), np.arange(40) % 64] = 1.0  # 1.6 % nonzero, as hashed text
    sparse_memory = RandomFeatures(50, random_state=0).fit(rows)
    sparse_lazy = RandomFeatures(50, random_state=0).fit(da.from_array(rows, chunks=(16, 64)))
    assert sparse_lazy.scale_ == sparse_memory.scale_ == 0.3
    np.testing.assert_array_equal(sparse_lazy.weights_, sparse_memory.weights_)


def test_a_dask_block_with_nan_is_refused_when_computed(digits_uint8):
    da = pytest.importorskip("dask.array")
    X = digits_uint8[0][:100].astype(np.float64)
    features = RandomFeatures(20, random_state=0).fit(X)
    X[50, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        features.transform(da.from_array(X, chunks=(30, 64))).compute()
    with pytest.raises(ValueError, match="expecting 64 features"):
        features.transform(da.from_array(X[:, :10], chunks=(30, 10)))


def test_a_dask_pipeline_learns_the_in_memory_sequence(digits_uint8):
    # Pipeline([RandomFeatures, LeastSquaresClassifier]).partial_fit on Dask
    # arrays: the features and the moments are computed block by block, and
    # the classifier equals the one learned from the same rows in memory.
    da = pytest.importorskip("dask.array")
    tasks = _digit_tasks(digits_uint8)[:3]
    classes = np.arange(10)

    def pipe():
        return make_pipeline(RandomFeatures(200, backend="numpy", random_state=0),
                             LeastSquaresClassifier(backend="numpy", random_state=0))

    memory, lazy = pipe(), pipe()
    for X, y in tasks:
        memory.partial_fit(X, y, classes=classes)
        lazy.partial_fit(da.from_array(X, chunks=(90, 64)), da.from_array(y, chunks=90),
                         classes=classes)
    head, lazy_head = memory.steps[-1][1], lazy.steps[-1][1]
    # The features are float32, multiplied in float32 blocks (moments.float32_products):
    # Dask's blocks and memory's chunks round apart, within float32's 6e-8 of the sums.
    scale = np.abs(head.coef_).max()
    np.testing.assert_allclose(lazy_head.coef_, head.coef_, rtol=0, atol=1e-5 * scale)
    X_all = digits_uint8[0][digits_uint8[1] < 6]
    np.testing.assert_array_equal(lazy.predict(X_all), memory.predict(X_all))
    np.testing.assert_allclose(lazy.predict_proba(X_all), memory.predict_proba(X_all),
                               rtol=0, atol=1e-5)
    assert np.mean(memory.predict(X_all) == digits_uint8[1][digits_uint8[1] < 6]) > 0.9
