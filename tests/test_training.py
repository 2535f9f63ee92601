"""The training loop reaches the minimiser of the loss the paper defines.

The reference is SciPy's L-BFGS in float64 on the same loss written out
independently in NumPy: ½·precision·‖θ‖² + Σ_n CE for the first task, and
λ/2 (θ−θ*)ᵀH(θ−θ*) + Σ_n CE for AQC's second task (eq. 3)."""

import numpy as np
import pytest
from scipy.optimize import minimize as scipy_minimize
from scipy.special import logsumexp

from skcl import AQCClassifier, FineTuningClassifier
from skcl._gradient.networks import apply_numpy


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
    def loss(t):
        return 0.5 * 2.0 * t @ t + nll(t)

    reference = scipy_minimize(loss, np.zeros(clf.network_.n_params), method="L-BFGS-B").x
    np.testing.assert_allclose(clf.theta_, reference, atol=5e-3)
    assert loss(clf.theta_) - loss(reference) < 1e-5 * loss(reference)


def test_aqc_second_task_minimises_the_quadratic_plus_nll(iris):
    clf = AQCClassifier(alpha=10.0, n_epochs=1000, batch_size=16, learning_rate=0.05,
                        random_state=0)
    clf.partial_fit(*iris.train[0], classes=iris.classes)
    center = clf.theta_.astype(np.float64)
    H = clf.hessian_.astype(np.float64)
    X, y = iris.train[1]
    clf.partial_fit(X, y)
    nll = softmax_regression_loss(clf.network_, X, y)
    def loss(t):
        return 0.5 * 10.0 * (t - center) @ H @ (t - center) + nll(t)

    reference = scipy_minimize(loss, center, method="L-BFGS-B").x
    assert loss(clf.theta_) - loss(reference) < 1e-5 * loss(reference)
    np.testing.assert_allclose(clf.theta_, reference, atol=5e-3)


@pytest.mark.parametrize("with_trace", [False, True])
def test_stepwise_driver_takes_the_same_steps_as_the_compiled_loop(iris, with_trace):
    """minimize_stepwise (one jitted step per minibatch, for CNNs) and
    minimize (one compiled scan) share the steps, minibatches, keys and the
    consolidation's per-step trace (SI's path integral)."""
    import jax

    from skcl._gradient.consolidation import PathIntegral, Prior, prior_state
    from skcl._gradient.model import Model
    from skcl._gradient.networks import MLP
    from skcl._gradient.training import minimize, minimize_stepwise

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


def _sequential_task_args(method, n_samples, wine):
    import jax

    from skcl._gradient.consolidation import prior_state
    from skcl._gradient.model import Model
    from skcl._gradient.networks import MLP

    X = np.concatenate([X for X, _ in wine.train])[:n_samples].astype(np.float32)
    y = np.concatenate([y for _, y in wine.train])[:n_samples].astype(np.int32)
    X = (X - X.mean(0)) / X.std(0)
    network = MLP(X.shape[1], (5,), 3)
    return (Model(network, "categorical"), method, prior_state(network.n_params, 1.0),
            network.init(jax.random.PRNGKey(0)), X, y, np.ones(n_samples, np.float32),
            jax.random.PRNGKey(1), 0.05)


@pytest.mark.parametrize("n_samples", [10, 30, 38, 113])
def test_a_padded_task_takes_exactly_the_steps_of_the_task_alone(wine, monkeypatch, n_samples):
    # Small tasks train padded (rows never drawn, minibatch slots skipped);
    # with padding turned off the very same steps run on the task alone.
    from skcl._gradient import minibatches
    from skcl._gradient.consolidation import PathIntegral
    from skcl._gradient.training import minimize

    args = _sequential_task_args(PathIntegral(1.0, 1.0), n_samples, wine)
    padded = minimize(*args, n_epochs=5, batch_size=16)
    monkeypatch.setattr(minibatches, "PAD_MAX", 0)
    alone = minimize(*args, n_epochs=5, batch_size=16)
    np.testing.assert_array_equal(padded[0], alone[0])  # θ, bit for bit
    np.testing.assert_array_equal(padded[2], alone[2])  # SI's path integral
    np.testing.assert_allclose(padded[1], alone[1], rtol=1e-6)  # the epoch losses
    assert np.abs(np.asarray(padded[0]) - np.asarray(args[3])).max() > 0.05  # it learned


@pytest.mark.parametrize("name", ["JointClassifier", "GVCLClassifier", "SIClassifier"])
def test_padding_leaves_every_estimator_result_as_it_was(wine, monkeypatch, name):
    import jax

    import skcl
    from skcl._gradient import minibatches

    def learn():
        clf = getattr(skcl, name)(hidden_layer_sizes=(4,), n_epochs=10, learning_rate=0.01,
                                  random_state=0)
        for X, y in wine.train:
            clf.partial_fit(X, y, classes=wine.classes)
        return clf

    padded = learn()
    monkeypatch.setattr(minibatches, "PAD_MAX", 0)
    alone = learn()
    np.testing.assert_array_equal(padded.theta_, alone.theta_)
    # Every leaf of the state, and the same structure (tree.map refuses another).
    jax.tree.map(np.testing.assert_array_equal, padded.consolidation_, alone.consolidation_)


def test_tasks_of_different_sizes_share_one_compiled_training_loop(wine):
    # CI Split Wine's tasks have 38, 45 and 30 rows; joint training's union
    # grows to 113: one compiled loop for each method, not one per size.
    from skcl import FineTuningClassifier, JointClassifier
    from skcl._gradient.training import _minimize

    for cls in (FineTuningClassifier, JointClassifier):
        clf = cls(hidden_layer_sizes=(3, 2), n_epochs=2, random_state=0)  # a network of its own
        before = _minimize._cache_size()
        for X, y in wine.train:
            clf.partial_fit(X, y, classes=wine.classes)
        assert _minimize._cache_size() == before + 1, cls.__name__


def test_padded_sizes_and_learning_rates():
    import jax.numpy as jnp
    import optax

    from skcl._gradient.minibatches import PAD_MAX, PAD_MIN, padded_size
    from skcl._gradient.training import learning_rates

    assert [padded_size(n) for n in (1, 30, 128, 129, 1000)] == [PAD_MIN, PAD_MIN, 128, 256, 1024]
    assert padded_size(PAD_MAX) == PAD_MAX and padded_size(PAD_MAX + 1) == PAD_MAX + 1
    rates = np.asarray(learning_rates(jnp.float32(0.1), n_steps=300, n_slots=400))
    schedule = optax.cosine_onecycle_schedule(300, 0.1)
    # (evaluated one count at a time outside jit, optax's float32 rounding differs a little)
    np.testing.assert_allclose(rates[:300], [schedule(i) for i in range(300)], rtol=1e-4)
    assert rates[:300].max() == pytest.approx(0.1) and rates[0] == pytest.approx(0.1 / 25)
    assert not rates[300:].any()


def test_constant_schedule_is_adam_at_the_fixed_rate(wine):
    """learning_rate_schedule="constant" (set after a task, by set_params):
    the second task's steps are optax.adam's at the fixed rate on the same
    objective (data term + the stand-in for the first task), one full-batch
    step at a time; the one-cycle schedule's differ."""
    import copy

    import jax
    import jax.numpy as jnp
    import optax

    (X1, y1), (X2, y2) = wine.train[:2]
    X1, X2 = X1.astype(np.float32) / 100, X2.astype(np.float32) / 100
    clf = FineTuningClassifier(hidden_layer_sizes=(4,), n_epochs=2, batch_size=1000,
                               learning_rate=0.05, random_state=0)
    clf.partial_fit(X1, y1, classes=wine.classes)
    model, method, state = clf._model(), clf._make_consolidation(), clf.consolidation_
    start = jnp.asarray(clf.theta_)
    w = jnp.ones(len(y2), jnp.float32)
    key = jax.random.PRNGKey(0)

    def objective(p):
        return (method.data_term(model, p, jnp.asarray(X2), jnp.asarray(y2), w, key)
                + method.penalty(state, p, key))

    optimiser = optax.adam(0.05)
    params, opt_state = start, optimiser.init(start)
    for _ in range(3):
        updates, opt_state = optimiser.update(jax.grad(objective)(params), opt_state, params)
        params = optax.apply_updates(params, updates)
    one_cycle = copy.deepcopy(clf).set_params(n_epochs=3).partial_fit(X2, y2)
    clf.set_params(learning_rate_schedule="constant", n_epochs=3).partial_fit(X2, y2)
    np.testing.assert_allclose(clf.theta_, params, rtol=1e-4, atol=1e-6)
    assert np.abs(one_cycle.theta_ - params).max() > 1e-3


def test_learning_rate_schedule_is_validated_where_it_acts(wine):
    (X1, y1), (X2, y2) = wine.train[:2]
    with pytest.raises(ValueError, match="learning_rate_schedule"):
        FineTuningClassifier(learning_rate_schedule="cosine").partial_fit(X1, y1,
                                                                         classes=wine.classes)
    clf = FineTuningClassifier(n_epochs=2, random_state=0).partial_fit(X1, y1,
                                                                       classes=wine.classes)
    theta = clf.theta_.copy()
    with pytest.raises(ValueError, match="learning_rate_schedule"):
        clf.set_params(learning_rate_schedule="Constant").partial_fit(X2, y2)
    np.testing.assert_array_equal(clf.theta_, theta)
    assert clf.n_tasks_seen_ == 1
