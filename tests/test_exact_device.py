"""The exact family's statistics update on JAX's device, against the host's numpy sums.

CI has no GPU: the JAX path runs on JAX's CPU device (``backend="jax"``),
which runs the same kernels the GPU would, in the same precisions.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact import device
from skcl._exact.device import device_moments_bytes, float64_is_fast
from skcl._exact.task import task_moments
from skcl.datasets import load_ci_split_wine


def _task(n=900, d=24, groups=4, seed=0):
    """Rows with a large offset and a small spread, unequal weights, a group left empty."""
    rng = np.random.default_rng(seed)
    X = 50.0 + rng.standard_normal((n, d)) * rng.uniform(0.1, 3.0, d)
    y = rng.integers(0, groups, n)
    X += y[:, None] * 0.5
    weights = rng.uniform(0.0, 2.0, n)
    weights[:40] = 0.0
    return X, y, weights, list(range(groups + 1))


def _exact(X, y, weights, keys):
    """The moments by their definitions, in one float64 pass (no shifting, no chunks)."""
    means, counts = {}, {}
    W = np.zeros((X.shape[1], X.shape[1]))
    per_group = {}
    for g in np.unique(y):
        rows, w = X[y == g], weights[y == g]
        if w.sum() == 0:
            continue
        mu = (w[:, None] * rows).sum(0) / w.sum()
        centred = rows - mu
        per_group[keys[g]] = (w[:, None] * centred).T @ centred
        W += per_group[keys[g]]
        means[keys[g]], counts[keys[g]] = mu, w.sum()
    return counts, means, W, per_group


def _assert_moments_equal(a, b, rtol):
    assert a.keys == b.keys
    np.testing.assert_allclose(a.counts, b.counts, rtol=1e-13)
    np.testing.assert_allclose(a.means, b.means, rtol=1e-13)
    scale = np.abs(a.scatter).max()
    np.testing.assert_allclose(a.scatter, b.scatter, rtol=0, atol=rtol * scale)
    if a.group_scatter is None:
        assert b.group_scatter is None
    else:
        np.testing.assert_allclose(a.group_scatter, b.group_scatter, rtol=0,
                                   atol=rtol * max(np.abs(a.group_scatter).max(initial=0), 1))


@pytest.mark.parametrize("per_group_scatter", [False, True])
@pytest.mark.parametrize("fraction", [0.0, 0.2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_update_equals_the_host_update(per_group_scatter, fraction, dtype):
    X, y, weights, keys = _task()
    X = X.astype(dtype)
    options = dict(fraction=fraction, seed=5, per_group_scatter=per_group_scatter,
                   chunk_rows=130)
    host = task_moments(X, y, weights, keys, **options)
    on_device = task_moments(X, y, weights, keys, backend="jax", precision="float64",
                             **options)
    # The same rows held out, the same groups; the sums differ only by
    # the order of the additions (and, for float32 rows, by the host's
    # float32 block products: moments.float32_products).
    for a, b in zip(host, on_device):
        _assert_moments_equal(a, b, rtol=1e-12 if dtype == np.float64 else 1e-6)
    if fraction:
        assert on_device[1].total > 0
    # And both are the definitions' moments (learned and held-out rows together).
    learned, held = on_device
    counts, means, W, per_group = _exact(X.astype(np.float64), y, weights, keys)
    assert learned.total + held.total == pytest.approx(sum(counts.values()), rel=1e-13)
    if not fraction:
        np.testing.assert_allclose(learned.means, [means[k] for k in learned.keys], rtol=1e-12)
        np.testing.assert_allclose(learned.scatter, W, rtol=0, atol=1e-11 * np.abs(W).max())
        if per_group_scatter:
            np.testing.assert_allclose(learned.group_scatter,
                                       [per_group[k] for k in learned.keys],
                                       rtol=0, atol=1e-11 * np.abs(W).max())


@pytest.mark.parametrize("per_group_scatter", [False, True])
def test_float32_products_of_shifted_blocks_stay_near_the_float64_sums(per_group_scatter):
    # An offset of 50 against a spread of 0.1–3: unshifted float32 sums
    # would lose every digit of the small features' scatter.
    X, y, weights, keys = _task(n=3000)
    options = dict(fraction=0.1, seed=1, per_group_scatter=per_group_scatter)
    host = task_moments(X, y, weights, keys, **options)
    f32 = task_moments(X, y, weights, keys, backend="jax", precision="float32", **options)
    for a, b in zip(host, f32):
        # Means and weights stay float64; the scatter errs by float32's rounding.
        _assert_moments_equal(a, b, rtol=2e-6)
    # Relative to each feature's own scatter too (the small features).
    diag = np.diag(host[0].scatter)
    assert np.all(np.abs(np.diag(f32[0].scatter) - diag) <= 2e-6 * diag)
    # Not float64: the scheme is really float32.
    assert np.abs(f32[0].scatter - host[0].scatter).max() > 0


@pytest.mark.parametrize("rule", ["auto", "heldout"])
@pytest.mark.parametrize("estimator", [LeastSquaresClassifier, GaussianDiscriminantClassifier])
def test_classifiers_on_the_device_equal_the_host(estimator, rule):
    data = load_ci_split_wine()
    options = dict(random_state=0, validation_fraction=0.2)
    if estimator is GaussianDiscriminantClassifier:
        options.update(covariance="per_class", shrinkage=rule)
    else:
        options["alpha"] = rule
    host, on_device = estimator(backend="numpy", **options), estimator(backend="jax", **options)
    rng = np.random.default_rng(0)
    for X, y in data.train:
        w = rng.uniform(0.5, 2.0, len(y))
        host.partial_fit(X, y, classes=data.classes, sample_weight=w)
        on_device.partial_fit(X, y, classes=data.classes, sample_weight=w)
    X_test = np.vstack([X for X, _ in data.test])
    def outputs(model):
        method = "decision_function" if hasattr(model, "decision_function") else "predict_proba"
        return getattr(model, method)(X_test)

    np.testing.assert_allclose(outputs(on_device), outputs(host), rtol=1e-8, atol=1e-10)
    assert (host.backend_, on_device.backend_) == ("numpy", "jax")
    _assert_moments_equal(host.moments_, on_device.moments_, rtol=1e-12)
    _assert_moments_equal(host.heldout_moments_, on_device.heldout_moments_, rtol=1e-12)


@pytest.mark.parametrize("estimator", [LeastSquaresClassifier, GaussianDiscriminantClassifier])
def test_auto_takes_the_device_only_when_jax_is_imported_and_an_accelerator(estimator,
                                                                             monkeypatch):
    # JAX is imported here (this module): on its CPU device "auto" is numpy;
    # on an accelerator it is JAX; with JAX not imported it is numpy, without
    # importing it (tests/test_layout.py runs that in a fresh interpreter).
    # The device is set both ways, so that the test means the same on a
    # machine with a GPU (where it failed when it took the real one).
    data = load_ci_split_wine()
    X, y = data.train[0]
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    assert estimator().partial_fit(X, y, classes=data.classes).backend_ == "numpy"
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert estimator().partial_fit(X, y, classes=data.classes).backend_ == "jax"
    monkeypatch.delitem(sys.modules, "jax")
    assert estimator().partial_fit(X, y, classes=data.classes).backend_ == "numpy"


def test_device_refuses_an_update_beyond_its_memory_and_changes_nothing(monkeypatch):
    data = load_ci_split_wine()
    model = LeastSquaresClassifier(alpha="heldout", backend="jax", validation_fraction=0.1,
                                   random_state=0)
    model.partial_fit(*data.train[0], classes=data.classes)
    before = {k: v for k, v in vars(model).items()}
    moments = model.moments_
    d = data.train[0][0].shape[1]
    # What one group of the task would need: less than the task needs.
    need = device_moments_bytes(d, 1, chunk_rows=len(data.train[1][1]), heldout=True)
    monkeypatch.setattr(device, "device_memory_available", lambda device=None: need - 1)
    sent = []
    monkeypatch.setattr(jax, "device_put", lambda *a, **k: sent.append(a))
    with pytest.raises(MemoryError, match="device memory.*nothing was computed"):
        model.partial_fit(*data.train[1])
    assert not sent  # refused before anything went to the device
    assert model.moments_ is moments and model.n_tasks_seen_ == 1
    assert set(vars(model)) == set(before)
    # With the memory it needs, the same task is learned.
    monkeypatch.undo()
    model.partial_fit(*data.train[1])
    assert model.n_tasks_seen_ == 2


def test_memory_needed_grows_as_stated():
    d, c = 10_000, 3355
    pooled = device_moments_bytes(d, 10, chunk_rows=c, itemsize=4)
    assert pooled == 8 * d * d * 2 + c * d * 20 + 32 * 10 * d
    # Held-out rows double the sums; per-group scatter multiplies them by G.
    assert device_moments_bytes(d, 10, chunk_rows=c, itemsize=4, heldout=True) - pooled \
        == 8 * d * d
    assert device_moments_bytes(d, 10, chunk_rows=c, itemsize=4, per_group_scatter=True) \
        - pooled == 9 * 8 * d * d
    assert device_moments_bytes(d, 10, chunk_rows=c, itemsize=4, precision="float32") \
        - pooled == 4 * d * d + 4 * c * d


def test_precision_follows_the_device_and_x64_stays_off():
    cpu = jax.devices("cpu")[0]
    assert float64_is_fast(cpu)

    class Card:
        platform = "gpu"

        def __init__(self, kind):
            self.device_kind = kind

    assert float64_is_fast(Card("NVIDIA H100 80GB HBM3"))
    assert not float64_is_fast(Card("NVIDIA GeForce RTX 4090"))
    with pytest.raises(ValueError, match="precision"):
        task_moments(np.ones((3, 2)), np.zeros(3, dtype=int), np.ones(3), [0], fraction=0.0,
                     seed=0, per_group_scatter=False, backend="jax", precision="float16")
    # The update switched 64-bit mode on only inside itself.
    task_moments(np.ones((3, 2)), np.zeros(3, dtype=int), np.ones(3), [0], fraction=0.0,
                 seed=0, per_group_scatter=False, backend="jax")
    assert jnp.zeros(1).dtype == jnp.float32


def test_device_update_rejects_nan_like_the_host():
    X, y, weights, keys = _task(n=200)
    X[7, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        task_moments(X, y, weights, keys, fraction=0.0, seed=0, per_group_scatter=False,
                     backend="jax")
