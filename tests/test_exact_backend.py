"""One backend for the exact family: resident on JAX's device, equal to numpy's.

CI has no GPU: ``backend="jax"`` runs on JAX's CPU device, in the scoped
64-bit mode the device path switches on. There ``jax.transfer_guard``
refuses an implicit host-to-device transfer (a numpy array or a Python
scalar handed to a JAX operation); the device path sends rows, means and
scalars only by ``jax.device_put``, which the guard allows, so a fit, a
stream of tasks and every prediction run under it. The D×D arrays are
also watched at the one door that is open: no D×D array is sent by
``device_put`` either, so the scatter, the covariance and its factor are
made on the device and stay there.
"""

import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from sklearn.base import clone

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl.datasets import load_ci_split_digits, load_ci_split_mnist, load_di_split_digits
from skcl.feature_extraction import RandomFeatures
from skcl.pipeline import make_pipeline

from ._same_model import assert_same_model


def _stacked(tasks):
    return np.vstack([X for X, _ in tasks]), np.concatenate([y for _, y in tasks])


def _models(backend):
    return {
        "gaussian": GaussianDiscriminantClassifier(backend=backend),
        "least_squares": LeastSquaresClassifier(backend=backend),
        "random_features": make_pipeline(
            RandomFeatures(300, backend=backend, random_state=0),
            LeastSquaresClassifier(backend=backend)),
    }


class _Sent:
    """Records the shapes that ``jax.device_put`` sends (the explicit transfers)."""

    def __init__(self, monkeypatch):
        self.shapes = []
        put = jax.device_put

        def recording(x, *args, **kwargs):
            self.shapes += [np.shape(leaf) for leaf in jax.tree_util.tree_leaves(x)]
            return put(x, *args, **kwargs)

        monkeypatch.setattr(jax, "device_put", recording)


@pytest.mark.parametrize("name", ["gaussian", "least_squares", "random_features"])
def test_the_jax_backend_stays_on_the_device_from_the_first_row_to_the_score(name,
                                                                              monkeypatch):
    data = load_ci_split_digits()
    model = _models("jax")[name]
    X_all, y_all = _stacked(data.train)
    X_test, y_test = _stacked(data.test)
    sent = _Sent(monkeypatch)
    with jax.transfer_guard("disallow"):
        fitted = clone(model).fit(X_all, y_all)
        for X, y in data.train:
            model.partial_fit(X, y, classes=data.classes)
        scores = [model.predict(X_test), model.predict_proba(X_test),
                  model.decision_function(X_test), model.score(X_test, y_test),
                  fitted.score(X_test, y_test)]
    d = 300 if name == "random_features" else X_all.shape[1]
    assert (d, d) not in sent.shapes  # no D×D array sent, explicitly either
    assert any(len(shape) == 2 and shape[1] == X_all.shape[1] for shape in sent.shapes)
    assert scores[3] > 0.9 and scores[4] > 0.9
    classifier = model[-1] if name == "random_features" else model
    assert classifier.backend_ == "jax"
    assert isinstance(classifier.moments_.scatter, jax.Array)  # resident until read


def _stream(model, tasks, classes):
    for X, y in tasks:
        model.partial_fit(X, y, classes=classes)
    return model


def test_the_gaussian_splitting_classes_is_the_same_on_both_backends():
    # Domain-incremental digits: "auto" keeps each class's tasks apart (its
    # score test runs on the device's scatter and Cholesky factor).
    data = load_di_split_digits()
    X_test, _ = _stacked(data.test)
    models = [_stream(GaussianDiscriminantClassifier(backend=b), data.train, data.classes)
              for b in ("jax", "numpy")]
    assert len(models[1].means_) > len(data.classes)  # the classes are split
    assert models[0].component_classes_.tolist() == models[1].component_classes_.tolist()
    np.testing.assert_allclose(models[0].means_, models[1].means_, rtol=1e-10)
    assert models[0].shrinkage_ == pytest.approx(models[1].shrinkage_, rel=1e-10)
    assert_same_model(*models, X_test, hyperparameters=False)


@pytest.mark.parametrize("covariance", ["per_class", "per_domain"])
@pytest.mark.parametrize("shrinkage", ["auto", "heldout"])
def test_the_solves_on_the_host_start_from_float64_sums_on_both_backends(covariance,
                                                                          shrinkage):
    # These covariances are solved on the host from sums the device kept;
    # the earlier tasks' scatters were once decayed outside JAX's 64-bit
    # scope (float32: 2e-7 apart), and per_domain with the held-out rule
    # raised a TypeError on both backends.
    data = load_di_split_digits()
    X_test, _ = _stacked(data.test)
    models = [_stream(GaussianDiscriminantClassifier(
        covariance=covariance, shrinkage=shrinkage, components="task_class", decay=0.9,
        random_state=0, backend=b), data.train, data.classes) for b in ("jax", "numpy")]
    assert models[1].score(*_stacked(data.test)) > 0.9
    assert_same_model(*models, X_test, hyperparameters=False)


def test_least_squares_with_gcv_is_the_same_on_both_backends():
    data = load_ci_split_digits()
    X_test, _ = _stacked(data.test)
    models = [_stream(LeastSquaresClassifier(backend=b), data.train, data.classes)
              for b in ("jax", "numpy")]
    assert models[0].alpha_ == pytest.approx(models[1].alpha_, rel=1e-10)
    np.testing.assert_allclose(models[0].coef_, models[1].coef_, rtol=1e-8, atol=1e-10)
    assert_same_model(*models, X_test, hyperparameters=False)


@pytest.mark.slow
def test_both_backends_agree_on_2000_random_features_of_mnist(shared_data_dir):
    data = load_ci_split_mnist(shared_data_dir)
    # 500 rows a task (more rows than features) and 500 test rows: the
    # 2,000-feature D×D work of both classifiers on both backends, in a minute.
    tasks = [(X[:500].reshape(500, -1) / 255.0, y[:500]) for X, y in data.train]
    X_test = np.vstack([X[:100].reshape(100, -1) / 255.0 for X, _ in data.test])
    y_test = np.concatenate([y[:100] for _, y in data.test])
    for estimator in (GaussianDiscriminantClassifier, LeastSquaresClassifier):
        models = []
        for backend in ("jax", "numpy"):
            features = RandomFeatures(2000, dtype="float64", backend=backend, random_state=0)
            model = make_pipeline(features, estimator(backend=backend))
            models.append(_stream(model, tasks, data.classes))
        assert_same_model(*models, X_test, hyperparameters=False)
        assert models[0].score(X_test, y_test) > 0.8


@pytest.mark.parametrize("estimator", [GaussianDiscriminantClassifier,
                                       LeastSquaresClassifier])
def test_a_dask_array_keeps_the_backend_chosen(estimator):
    # Each block's sums on the device (in Dask's worker threads), merged there.
    da = pytest.importorskip("dask.array")
    data = load_ci_split_digits()
    X, y = _stacked(data.train)
    X_test, _ = _stacked(data.test)
    lazy = estimator(backend="jax").fit(da.from_array(X, chunks=(150, 64)),
                                        da.from_array(y, chunks=150))
    assert lazy.backend_ == "jax" and isinstance(lazy.moments_.scatter, jax.Array)
    assert_same_model(lazy, estimator(backend="numpy").fit(X, y), X_test,
                      hyperparameters=False)


def test_auto_never_imports_jax_for_a_numpy_fit():
    code = (
        "import sys\n"
        "from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier\n"
        "from skcl.datasets import load_ci_split_digits\n"
        "data = load_ci_split_digits()\n"
        "for model in (GaussianDiscriminantClassifier(), LeastSquaresClassifier()):\n"
        "    for X, y in data.train:\n"
        "        model.partial_fit(X, y, classes=data.classes)\n"
        "    model.predict_proba(data.test[0][0])\n"
        "    assert model.backend_ == 'numpy'\n"
        "print(sorted(m for m in ('jax', 'optax', 'torch') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120, env=env)
    assert out.stdout.strip() == "[]"
