"""The training loop reaches the minimiser of the loss the paper defines.

The reference is SciPy's L-BFGS in float64 on the same loss written out
independently in NumPy: ½·precision·‖θ‖² + Σ_n CE for the first task, and
λ/2 (θ−θ*)ᵀH(θ−θ*) + Σ_n CE for AQC's second task (eq. 3)."""

import numpy as np
import pytest
from scipy.optimize import minimize as scipy_minimize
from scipy.special import logsumexp

from skcl import AQCClassifier, FineTuningClassifier
from skcl._networks import apply_numpy


def softmax_regression_loss(network, X, y):
    X = X.astype(np.float64)

    def loss(theta):
        z = apply_numpy(network, theta, X)
        return float(np.sum(logsumexp(z, axis=1) - z[np.arange(len(y)), y]))

    return loss


@pytest.mark.parametrize("batch_size, n_epochs", [(16, 1000), (1000, 2000)])
def test_first_task_is_the_map_estimate_under_the_prior(iris, batch_size, n_epochs):
    # 4 minibatches of 16: the prior divided by 4 per step must add up to
    # exactly one prior per epoch for the minimiser to be the MAP estimate.
    X = np.concatenate([X for X, _ in iris.train[:2]])
    y = np.concatenate([y for _, y in iris.train[:2]])
    clf = FineTuningClassifier(
        n_epochs=n_epochs,
        batch_size=batch_size,
        learning_rate=0.05,
        prior_precision=2.0,
        random_state=0,
    ).partial_fit(X, y, classes=iris.classes)
    nll = softmax_regression_loss(clf.network_, X, y)
    loss = lambda t: 0.5 * 2.0 * t @ t + nll(t)
    reference = scipy_minimize(loss, np.zeros(clf.network_.n_params), method="L-BFGS-B").x
    np.testing.assert_allclose(clf.theta_, reference, atol=5e-3)
    assert loss(clf.theta_) - loss(reference) < 1e-5 * loss(reference)


def test_aqc_second_task_minimises_the_quadratic_plus_nll(iris):
    clf = AQCClassifier(alpha=10.0, n_epochs=1000, batch_size=16, learning_rate=0.05, random_state=0)
    clf.partial_fit(*iris.train[0], classes=iris.classes)
    center = clf.theta_.astype(np.float64)
    H = clf.hessian_.astype(np.float64)
    X, y = iris.train[1]
    clf.partial_fit(X, y)
    nll = softmax_regression_loss(clf.network_, X, y)
    loss = lambda t: 0.5 * 10.0 * (t - center) @ H @ (t - center) + nll(t)
    reference = scipy_minimize(loss, center, method="L-BFGS-B").x
    assert loss(clf.theta_) - loss(reference) < 1e-5 * loss(reference)
    np.testing.assert_allclose(clf.theta_, reference, atol=5e-3)


@pytest.mark.parametrize("with_trace", [False, True])
def test_stepwise_driver_takes_the_same_steps_as_the_compiled_loop(iris, with_trace):
    """minimize_stepwise (one jitted step per minibatch, for CNNs) and
    minimize (one compiled scan) share the steps, minibatches, keys and the
    consolidation's per-step trace (SI's path integral)."""
    import jax

    from skcl._consolidation import PathIntegral, Prior, prior_state
    from skcl._model import Model
    from skcl._networks import MLP
    from skcl._training import minimize, minimize_stepwise

    X, y = iris.train[0]
    X = np.concatenate([X, iris.train[1][0]]).astype(np.float32)
    y = np.concatenate([y, iris.train[1][1]]).astype(np.int32)
    network = MLP(4, (5,), 3)
    method = PathIntegral(1.0, 1.0) if with_trace else Prior()
    args = (Model(network, "categorical"), method, prior_state(network.n_params, 1.0),
            network.init(jax.random.PRNGKey(0)), X, y, np.ones(len(y), np.float32),
            jax.random.PRNGKey(1), 0.05)
    kwargs = dict(n_epochs=7, batch_size=16)  # 64 samples: 4 batches
    seen = []
    *compiled, start_loss = minimize(*args, **kwargs)
    stepwise = minimize_stepwise(*args, **kwargs, on_epoch=lambda e, loss: seen.append((e, loss)))
    np.testing.assert_allclose(stepwise[0], compiled[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stepwise[1], compiled[1], rtol=1e-5)
    assert [e for e, _ in seen] == list(range(1, 8))
    np.testing.assert_allclose([loss for _, loss in seen], compiled[1], rtol=1e-5)
    assert np.abs(np.asarray(compiled[0]) - np.asarray(args[3])).max() > 0.1  # it learned
    assert float(start_loss) > compiled[1][-1]  # the whole objective at the start, above the end
    if with_trace:
        np.testing.assert_allclose(stepwise[2], compiled[2], rtol=1e-4, atol=1e-6)
        assert np.abs(np.asarray(compiled[2])).max() > 0.1
    else:
        assert stepwise[2] is None and compiled[2] is None
