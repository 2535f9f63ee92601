"""Neural consolidation: ball sampling, the consolidator's target and fit,
warm starts, and NC on CI Split Iris with the paper's grids."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import log_softmax

from skcl import AQCClassifier, FineTuningClassifier, NCClassifier
from skcl._gradient.consolidation import Neural, Prior, prior_state
from skcl._gradient.consolidation.memo import FitMemo, digest
from skcl._gradient.consolidation.neural import (
    FITS,
    NeuralState,
    ball_sample,
    fit_consolidator,
    target_values,
)
from skcl._gradient.deferred_folds import _PendingFold, complete_pending_fold, deferred_folds
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP
from skcl.metrics import final_average_accuracy
from skcl.model_selection import SequenceGridSearch, learn_task_sequence

from .conftest import IRIS_SETTINGS


def test_ball_samples_are_uniform_in_the_ball():
    """Uniform in a d-ball: P(‖θ − c‖ ≤ s·r) = s^d, directions isotropic."""
    d, r, n = 5, 3.0, 20000
    center = jnp.arange(d, dtype=jnp.float32)
    points = np.asarray(ball_sample(jax.random.PRNGKey(0), center, r, n))
    offsets = points - np.asarray(center)
    radii = np.linalg.norm(offsets, axis=1)
    assert radii.max() <= r * (1 + 1e-6)
    for s in (0.5, 0.8, 0.95):
        assert np.mean(radii <= s * r) == pytest.approx(s**d, abs=0.015)
    # Isotropy: the mean offset is ~0 and the covariance is r²/(d+2)·I.
    np.testing.assert_allclose(offsets.mean(axis=0), 0.0, atol=0.05)
    np.testing.assert_allclose(np.cov(offsets.T), r**2 / (d + 2) * np.eye(d), atol=0.06)


def _iris_task(iris, index=0):
    X, y = iris.train[index]
    return X.astype(np.float32), y.astype(np.int32), np.ones(len(y), np.float32)


def _numpy_target(theta, X, y, w, precision, scale):
    """scale·½·precision·‖θ‖² + Σ_n w_n·(−log softmax(x_n W + b)_{y_n}), by hand."""
    theta = np.asarray(theta, np.float64)
    W, b = theta[:12].reshape(4, 3), theta[12:]
    logp = log_softmax(X.astype(np.float64) @ W + b, axis=1)
    nll = -np.sum(w * logp[np.arange(len(y)), y])
    return scale * 0.5 * precision * theta @ theta + nll


def test_target_is_the_penalty_plus_the_whole_tasks_nll_in_chunks(iris):
    X, y, w = _iris_task(iris)
    w = w * np.linspace(0.5, 2.0, len(y), dtype=np.float32)
    network = MLP(4, (), 3)
    model = Model(network, "categorical")
    thetas = np.asarray(
        ball_sample(jax.random.PRNGKey(1), jnp.zeros(network.n_params), 3.0, 6)
    )
    # 32 samples in chunks of 7: four full chunks and a padded one. The
    # previous penalty is the prior (weight 1) ...
    prior = prior_state(network.n_params, 2.0)
    got = np.asarray(target_values(model, Prior(), prior, thetas, X, y, w, chunk_size=7))
    expected = [_numpy_target(t, X, y, w, precision=2.0, scale=1.0) for t in thetas]
    np.testing.assert_allclose(got, expected, rtol=2e-5)
    # ... or, after a task, λ·κ(θ; φ) with κ evaluated apart.
    consolidator = MLP(network.n_params, (8,), 1)
    phi = consolidator.init(jax.random.PRNGKey(2))
    state = NeuralState(prior, phi, None, consolidator)
    nc = Neural(5.0, 1.0, 0.01, 1.0, (8,), 10, 4)
    got = np.asarray(target_values(model, nc, state, thetas, X, y, w, chunk_size=7))
    kappa = np.asarray(consolidator.apply(phi, jnp.asarray(thetas)))[:, 0]
    expected = [5.0 * k + _numpy_target(t, X, y, w, precision=2.0, scale=0.0)
                for k, t in zip(kappa, thetas)]
    np.testing.assert_allclose(got, expected, rtol=2e-5)


@pytest.fixture(scope="module")
def first_task_fit(iris):
    """Task 1 of CI Split Iris (softmax regression) and a consolidator fitted
    with the paper's defaults at r = 10 (the radius validation picks)."""
    X, y, w = _iris_task(iris)
    clf = FineTuningClassifier(**IRIS_SETTINGS, random_state=0).partial_fit(
        X, y, classes=iris.classes
    )
    network = clf.network_
    model = Model(network, clf.likelihood_)
    prior = prior_state(network.n_params, 1.0)
    consolidator = MLP(network.n_params, (256, 256), 1)
    phi, losses = fit_consolidator(
        model, consolidator, consolidator.init(jax.random.PRNGKey(0)), Prior(), prior,
        clf.theta_, 10.0, X, y, w, jax.random.PRNGKey(1), 0.01, 1.0,
        n_steps=1000, n_points=64,
    )
    return dict(X=X, y=y, w=w, theta=clf.theta_, model=model, prior=prior,
                kappa=NeuralState(prior, phi, losses, consolidator), losses=np.asarray(losses))


def test_consolidator_fits_the_loss_on_held_out_ball_samples(first_task_fit):
    f = first_task_fit
    held_out = ball_sample(jax.random.PRNGKey(123), jnp.asarray(f["theta"]), 10.0, 512)
    target = np.asarray(
        target_values(f["model"], Prior(), f["prior"], held_out, f["X"], f["y"], f["w"])
    )
    predicted = np.asarray(jax.vmap(f["kappa"].kappa)(held_out))
    spread = target.std()
    assert spread > 100  # the loss varies a lot over the ball...
    errors = np.abs(predicted - target)
    assert np.median(errors) < 0.03 * spread  # ...and κ follows it closely
    assert np.corrcoef(predicted, target)[0, 1] > 0.99
    # The optimiser made progress on eq. 6.
    assert f["losses"][-50:].mean() < 0.05 * f["losses"][:50].mean()


def test_penalty_is_lambda_times_the_consolidator_network(first_task_fit):
    state = first_task_fit["kappa"]
    theta = np.linspace(-1, 1, state.consolidator.n_features).astype(np.float32)
    by_hand = state.consolidator.apply(state.phi, theta[None])[0, 0]
    assert float(state.kappa(jnp.asarray(theta))) == pytest.approx(float(by_hand))
    nc = Neural(7.0, 1.0, 0.01, 1.0, (256, 256), 10, 4)
    assert float(nc.penalty(state, jnp.asarray(theta), None)) == pytest.approx(
        7.0 * float(by_hand), rel=1e-6
    )


def test_consolidator_is_warm_started_from_the_previous_task(iris):
    """With a vanishing learning rate φ*_2 stays at φ*_1 (warm start), not at
    a fresh initialisation."""
    clf = NCClassifier(
        **IRIS_SETTINGS, consolidator_hidden_layer_sizes=(8,), consolidator_n_steps=200,
        random_state=0,
    )
    clf.partial_fit(*iris.train[0], classes=iris.classes)
    phi_1 = np.asarray(clf.consolidation_.phi)
    clf.set_params(consolidator_learning_rate=1e-12)
    clf.partial_fit(*iris.train[1])
    np.testing.assert_allclose(clf.consolidation_.phi, phi_1, atol=1e-6)
    assert clf.consolidator_loss_curve_.shape == (200,)


def test_second_task_minimises_alpha_kappa_plus_nll(iris):
    """The training objective of task 2 is λ·κ(θ; φ*_1) + nll_2: a
    consolidator pinned by a huge λ keeps θ where κ is smallest."""
    common = dict(**IRIS_SETTINGS, consolidator_hidden_layer_sizes=(8,),
                  consolidator_n_steps=200, random_state=0)
    weak = NCClassifier(alpha=1e-6, **common)
    strong = NCClassifier(alpha=1e4, **common)
    for clf in (weak, strong):
        clf.partial_fit(*iris.train[0], classes=iris.classes)
    kappa = weak.consolidation_  # φ*_1: the same in both (same seed, same task 1)
    np.testing.assert_array_equal(kappa.phi, strong.consolidation_.phi)
    for clf in (weak, strong):
        clf.partial_fit(*iris.train[1])
    # λ ≈ 0 is fine-tuning on task 2; λ large lowers κ at θ*_2.
    assert (float(kappa.kappa(jnp.asarray(strong.theta_)))
            < float(kappa.kappa(jnp.asarray(weak.theta_))))


@pytest.mark.slow
def test_nc_beats_aqc_on_ci_split_iris_with_validation_chosen_hyperparameters(iris):
    """Issue 3 acceptance: λ ∈ {1,…,10⁴} chosen on the validation
    sequence, softmax regression, test final average accuracy ≥ 0.8 and
    above AQC's (the paper: NC 93.3 %, AQC 66.7 %). NC's radius is r = 10,
    what the paper's whole grid (r ∈ {1, 10, 100}) picks here (measured:
    λ = 1, r = 10, validation 100 %, test 93.3 %); the whole grid, three
    times the fits, runs in ``examples/nc_vi_table.py`` and ``skcl
    reproduce ci-split-iris``."""

    # Chosen by the search (each candidate's final average accuracy on the
    # validation sequence, the first of ties), which skips the consolidator
    # fit after each NC candidate's last task: a third of this test's folds.
    def chosen_on_validation(estimator, grid):
        search = SequenceGridSearch(estimator, grid).fit(
            iris.train, iris.validation, classes=iris.classes
        )
        return search.best_estimator_

    lambdas = [1, 10, 100, 1000, 10000]
    nc = chosen_on_validation(NCClassifier(**IRIS_SETTINGS, random_state=0),
                              {"alpha": lambdas, "radius": [10]})
    aqc = chosen_on_validation(AQCClassifier(**IRIS_SETTINGS, random_state=0),
                               {"alpha": lambdas})
    nc_test = final_average_accuracy(nc, iris.test)
    assert nc_test >= 0.8
    assert nc_test > final_average_accuracy(aqc, iris.test)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_search_skips_only_the_consolidator_fit_nobody_uses(iris, n_jobs):
    # The search defers each candidate's last fold and completes the best
    # one's: the scores, θ*_T and φ*_T are those of plain partial_fit calls,
    # also when the candidates run in two threads sharing the fits' memo.
    common = dict(consolidator_hidden_layer_sizes=(16,), consolidator_n_steps=50,
                  learning_rate=0.1, n_epochs=20, random_state=0)
    grid = {"alpha": [1.0, 100.0]}
    search = SequenceGridSearch(NCClassifier(**common), grid, n_jobs=n_jobs).fit(
        iris.train, iris.validation, classes=iris.classes
    )
    for i, params in enumerate(search.cv_results_["params"]):
        R = learn_task_sequence(NCClassifier(**common, **params), iris.train, iris.validation,
                                classes=iris.classes)
        np.testing.assert_array_equal(search.accuracy_matrices_[i][:, -1], R[:, -1])
    best = search.best_estimator_
    reference = NCClassifier(**common, **search.best_params_)
    for X, y in iris.train:
        reference.partial_fit(X, y, classes=iris.classes)
    np.testing.assert_array_equal(best.theta_, reference.theta_)
    np.testing.assert_array_equal(best.consolidation_.phi, reference.consolidation_.phi)
    np.testing.assert_array_equal(best.consolidator_loss_curve_,
                                  reference.consolidator_loss_curve_)
    # Inside deferred_folds, an estimator folds each task when the next one needs it.
    lazy = NCClassifier(**common, **search.best_params_)
    with deferred_folds():
        for X, y in iris.train:
            lazy.partial_fit(X, y, classes=iris.classes)
    assert isinstance(lazy._pending_fold_, _PendingFold)
    assert "consolidation_" not in vars(lazy)  # never a fitted attribute of another type
    np.testing.assert_array_equal(lazy.theta_, reference.theta_)
    complete_pending_fold(lazy)
    assert "_pending_fold_" not in vars(lazy)
    np.testing.assert_array_equal(lazy.consolidation_.phi, reference.consolidation_.phi)
    # Or on first use: the consolidator's loss curve finishes the fold.
    lazy = NCClassifier(**common, **search.best_params_)
    with deferred_folds():
        for X, y in iris.train:
            lazy.partial_fit(X, y, classes=iris.classes)
    np.testing.assert_array_equal(lazy.consolidator_loss_curve_,
                                  reference.consolidator_loss_curve_)
    assert "_pending_fold_" not in vars(lazy)



def test_digest_tells_apart_any_difference_in_content_type_shape_or_structure():
    def tree(x=np.arange(4, dtype=np.float32), key=0):
        return {"x": x, "key": jax.random.PRNGKey(key), "scale": 1.0}

    same = digest(tree())
    assert digest(tree()) == same
    nudged = np.arange(4, dtype=np.float32)
    nudged[3] = np.nextafter(nudged[3], np.float32(4))
    assert digest(tree(nudged)) != same
    assert digest(tree(np.arange(4, dtype=np.float64))) != same
    assert digest(tree(np.arange(4, dtype=np.float32).reshape(2, 2))) != same
    assert digest(tree(key=1)) != same
    assert digest([tree()]) != same
    assert digest(1.0) != digest(1)


def test_fit_memo_keeps_the_latest_results_within_its_byte_budget():
    memo, calls = FitMemo(max_bytes=3 * 400), []  # room for three results of 400 bytes

    def compute(i):
        calls.append(i)
        return np.full(100, i, np.float32)

    for i in range(4):
        memo.get_or_compute(i, lambda i=i: compute(i))
    assert len(memo) == 3 and calls == [0, 1, 2, 3]
    np.testing.assert_array_equal(memo.get_or_compute(1, lambda: compute(-1)), np.full(100, 1))
    memo.get_or_compute(0, lambda: compute(0))  # the oldest was dropped: computed again
    assert calls == [0, 1, 2, 3, 0] and (memo.hits, memo.misses) == (1, 5)
    with pytest.raises(ValueError, match="read-only"):
        memo.get_or_compute(1, lambda: compute(-1))[0] = 7.0  # shared: nobody may change it
    small = FitMemo(max_bytes=10)
    small.get_or_compute("big", lambda: compute(9))
    assert len(small) == 0


def test_fit_memo_computes_a_key_once_while_threads_wait_for_it():
    # A grid's candidates run in threads: the second request for a fit that
    # is being computed waits for it instead of computing it again.
    memo, calls = FitMemo(max_bytes=10_000), []
    started, release = threading.Event(), threading.Event()

    def slow():
        calls.append("slow")
        started.set()
        assert release.wait(30)
        return np.arange(4, dtype=np.float32)

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(memo.get_or_compute, "fit", slow)
        assert started.wait(30)
        second = pool.submit(memo.get_or_compute, "fit", lambda: calls.append("again"))
        time.sleep(0.2)  # let the second request find the fit running (a hit either way)
        release.set()
        np.testing.assert_array_equal(second.result(30), first.result(30))
    assert calls == ["slow"] and (memo.hits, memo.misses) == (1, 1)

    # A computation that fails leaves nothing behind: the waiter computes.
    started.clear()
    release.clear()

    def failing():
        started.set()
        assert release.wait(30)
        raise FloatingPointError("diverged")

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(memo.get_or_compute, "bad", failing)
        assert started.wait(30)
        second = pool.submit(memo.get_or_compute, "bad", lambda: np.ones(2, np.float32))
        release.set()
        with pytest.raises(FloatingPointError):
            first.result(30)
        np.testing.assert_array_equal(second.result(30), np.ones(2))


def test_after_task_1_every_lambda_of_a_radius_shares_one_consolidator_fit(iris):
    # θ*_1 and the target (prior + nll_1) do not depend on λ, so a grid's λ
    # values get one fit per radius; what the memo hands back is exactly a
    # new fit's result.
    common = dict(consolidator_hidden_layer_sizes=(16,), consolidator_n_steps=50,
                  **IRIS_SETTINGS, random_state=0)
    X, y = iris.train[0]
    FITS.clear()
    small = NCClassifier(alpha=1.0, radius=10.0, **common).partial_fit(X, y, classes=iris.classes)
    large = NCClassifier(alpha=1000.0, radius=10.0, **common).partial_fit(
        X, y, classes=iris.classes
    )
    assert (FITS.hits, FITS.misses) == (1, 1)
    np.testing.assert_array_equal(large.consolidation_.phi, small.consolidation_.phi)
    FITS.clear()
    again = NCClassifier(alpha=1000.0, radius=10.0, **common).partial_fit(
        X, y, classes=iris.classes
    )
    assert (FITS.hits, FITS.misses) == (0, 1)
    np.testing.assert_array_equal(again.consolidation_.phi, large.consolidation_.phi)
    np.testing.assert_array_equal(again.consolidator_loss_curve_, large.consolidator_loss_curve_)
    # Another radius is another fit; after task 2 the target holds λ·κ(θ; φ*_1).
    NCClassifier(alpha=1.0, radius=1.0, **common).partial_fit(X, y, classes=iris.classes)
    assert (FITS.hits, FITS.misses) == (0, 2)
    small.partial_fit(*iris.train[1])
    large.partial_fit(*iris.train[1])
    assert (FITS.hits, FITS.misses) == (0, 4)
    assert not np.array_equal(small.consolidation_.phi, large.consolidation_.phi)


def test_a_subsampled_target_is_an_unbiased_estimate_of_the_whole_tasks_target(first_task_fit):
    f = first_task_fit
    thetas = ball_sample(jax.random.PRNGKey(5), jnp.asarray(f["theta"]), 10.0, 4)
    args = (f["model"], Prior(), f["prior"], thetas, f["X"], f["y"])
    prior = np.asarray(target_values(*args, np.zeros_like(f["w"])))  # the penalty alone
    nll = np.asarray(target_values(*args, f["w"])) - prior
    n = len(f["y"])
    draws = np.stack([
        np.asarray(target_values(*args, f["w"], rows=jax.random.randint(k, (8,), 0, n)))
        for k in jax.random.split(jax.random.PRNGKey(6), 1000)
    ]) - prior
    spread = draws.std(axis=0)
    assert (spread > 0.1 * nll).any()  # one draw is noisy...
    # ...their mean is the sum, up to its standard error (1,000 draws)
    np.testing.assert_array_less(np.abs(draws.mean(0) - nll), 4 * spread / np.sqrt(1000) + 1e-4)
    every_row = np.asarray(target_values(*args, f["w"], rows=jnp.arange(n))) - prior
    np.testing.assert_allclose(every_row, nll, rtol=1e-5)


def test_nc_with_a_subsampled_target_still_fits_the_loss(iris, first_task_fit):
    f = first_task_fit
    common = dict(**IRIS_SETTINGS, random_state=0, radius=10.0)
    X, y = iris.train[0]
    # A target over at least the whole task is the paper's, bit for bit.
    whole = NCClassifier(**common, consolidator_n_steps=50).partial_fit(X, y, classes=iris.classes)
    at_least = NCClassifier(**common, consolidator_n_steps=50, consolidator_target_size=len(y))
    at_least.partial_fit(X, y, classes=iris.classes)
    np.testing.assert_array_equal(at_least.consolidation_.phi, whole.consolidation_.phi)
    # Eight of the task's 32 samples per step: κ still follows the whole loss.
    sub = NCClassifier(**common, consolidator_target_size=8).partial_fit(X, y, classes=iris.classes)
    held_out = ball_sample(jax.random.PRNGKey(123), jnp.asarray(sub.theta_), 10.0, 512)
    target = np.asarray(target_values(f["model"], Prior(), f["prior"], held_out,
                                      f["X"], f["y"], f["w"]))
    predicted = np.asarray(jax.vmap(sub.consolidation_.kappa)(held_out))
    assert np.corrcoef(predicted, target)[0, 1] > 0.98
    assert np.median(np.abs(predicted - target)) < 0.1 * target.std()
