"""The sampled Fisher (EWC's ``fisher="sampled"``): its draws follow the
model's own predictive, and their mean is the exact Fisher (the GGN)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import softmax
from sklearn.preprocessing import StandardScaler

from skcl import AQCClassifier, EWCClassifier, FineTuningClassifier, OnlineEWCClassifier
from skcl._gradient.consolidation.curvature import _at_labels, task_curvature
from skcl._gradient.likelihoods import task_rows
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP, apply_numpy
from skcl.datasets import load_ci_split_digits
from skcl.metrics import final_average_accuracy


@pytest.fixture(scope="module")
def problem(wine):
    """A third of Wine, a hidden layer, a θ whose predictions are unsure."""
    X = np.concatenate([X for X, _ in wine.train])[::3]
    y = np.concatenate([y for _, y in wine.train])[::3].astype(np.int32)
    X = StandardScaler().fit_transform(X).astype(np.float32)
    model = Model(MLP(X.shape[1], (5,), 3), "categorical")
    theta = np.asarray(model.network.init(jax.random.PRNGKey(0)))
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y)).astype(np.float32)
    return model, theta, X, y, w


def _diagonal(model, kind, theta, X, y, w, key=None):
    C = task_curvature(model, kind, "diag", jnp.asarray(theta), X, y, w, batch_size=16, key=key)
    return np.asarray(C.to_dense()).diagonal().astype(np.float64)


def _mean_of_draws(model, theta, X, y, w, n_draws):
    keys = jax.random.split(jax.random.PRNGKey(7), n_draws)
    return np.mean([_diagonal(model, "sampled_fisher", theta, X, y, w, k) for k in keys], axis=0)


def _error(estimate, exact):
    return np.linalg.norm(estimate - exact) / np.linalg.norm(exact)


def test_draws_follow_the_predictive_and_stay_in_the_task(problem):
    model, theta, X, y, _ = problem
    p = softmax(apply_numpy(model.network, theta, X), axis=1)
    n_draws = 4000
    noise = jax.random.gumbel(jax.random.PRNGKey(1), (n_draws, len(y), 3))
    logits = model.network.apply(jnp.asarray(theta), X)
    draw = jax.vmap(lambda g: _at_labels(model.likelihood, logits, (y, g)))
    counts = np.stack([(np.asarray(draw(noise)) == c).mean(axis=0) for c in range(3)], axis=1)
    # Each frequency within 5 standard errors of its probability.
    assert np.all(np.abs(counts - p) <= 5 * np.sqrt(p * (1 - p) / n_draws) + 1e-9)
    # Task-incremental: only the task's two classes are drawn, renormalised.
    rows = task_rows(np.minimum(y, 1), np.array([0, 1]), 3)
    drawn = np.asarray(jax.vmap(
        lambda g: _at_labels(model.likelihood, logits, (rows, g)))(noise))
    assert set(np.unique(drawn[:, :, 0])) <= {0, 1}
    masks = np.broadcast_to(rows[:, 1:], drawn[:, :, 1:].shape)
    np.testing.assert_array_equal(drawn[:, :, 1:], masks)
    within = p[:, 0] / (p[:, 0] + p[:, 1])
    share = (drawn[:, :, 0] == 0).mean(axis=0)
    assert np.all(np.abs(share - within) <= 5 * np.sqrt(within * (1 - within) / n_draws) + 1e-9)


@pytest.mark.parametrize("scenario", ["class", "task"])
def test_the_mean_of_the_draws_is_the_exact_fisher(problem, scenario):
    model, theta, X, y, w = problem
    if scenario == "task":  # two classes compete; the GGN renormalises over them
        y = task_rows(np.minimum(y, 1), np.array([0, 1]), 3)
    exact = _diagonal(model, "ggn", theta, X, y, w)
    n_draws = 400
    sampled = _mean_of_draws(model, theta, X, y, w, n_draws)
    # The Monte Carlo error of 400 draws is 1.5-1.7 % here; the Fisher at
    # the most probable label (a common stand-in) is 27-39 % off.
    assert _error(sampled, exact) < 0.06
    labels = y if y.ndim == 1 else y[:, 0]
    logits = apply_numpy(model.network, theta, X)
    if scenario == "task":
        logits = np.where(y[:, 1:] > 0, logits, -np.inf)
    predicted = np.argmax(logits, axis=1).astype(np.int32)
    at_prediction = predicted if y.ndim == 1 else np.column_stack([predicted, y[:, 1:]])
    assert not np.array_equal(labels, predicted)
    assert _error(_diagonal(model, "empirical_fisher", theta, X, at_prediction, w), exact) > 0.2


def test_the_bernoulli_draws_average_to_the_exact_fisher(problem):
    model, _, X, y, w = problem
    model = Model(MLP(X.shape[1], (5,), 1), "bernoulli")
    theta = np.asarray(model.network.init(jax.random.PRNGKey(2)))
    y = (y == 1).astype(np.int32)
    exact = _diagonal(model, "ggn", theta, X, y, w)
    assert _error(_mean_of_draws(model, theta, X, y, w, 400), exact) < 0.06


@pytest.mark.parametrize("scenario", ["class", "task"])
def test_every_structure_and_path_draws_the_same_labels(problem, scenario):
    """One key, the same draws: the factored diagonal, the per-sample path
    and the full matrix (autodiff) agree, in small chunks and in one."""
    model, theta, X, y, w = problem
    if scenario == "task":
        y = task_rows(np.minimum(y, 1), np.array([0, 1]), 3)
    key = jax.random.PRNGKey(11)

    def curvature(structure, **options):
        C = task_curvature(model, "sampled_fisher", structure, jnp.asarray(theta), X, y, w,
                           key=key, **options)
        return np.asarray(C.to_dense(), np.float64)

    factored = curvature("diag", batch_size=16)
    np.testing.assert_allclose(curvature("diag", batch_size=16, method="autodiff"), factored,
                               rtol=1e-4, atol=1e-6 * factored.max())
    full = curvature("full", batch_size=7)
    np.testing.assert_allclose(np.diag(full), np.diag(factored), rtol=1e-4,
                               atol=1e-6 * factored.max())


def test_the_draws_need_a_key(problem):
    model, theta, X, y, w = problem
    with pytest.raises(ValueError, match="PRNG key"):
        _diagonal(model, "sampled_fisher", theta, X, y, w)


@pytest.fixture(scope="module")
def digits():
    data = load_ci_split_digits()
    scaler = StandardScaler().fit(np.concatenate([X for X, _ in data.train]))
    train = [(scaler.transform(X), y) for X, y in data.train]
    test = [(scaler.transform(X), y) for X, y in data.test]
    return train, test, data.classes, data.task_classes


def _fit(clf, train, classes):
    for X, y in train:
        clf.partial_fit(X, y, classes=classes)
    return clf


def test_sampled_ewc_on_split_digits_scores_as_the_exact_one(digits):
    """Task-incremental Split digits: the sampled Fisher's EWC keeps the old
    tasks as the exact one's does (fine-tuning forgets half of them), and
    the same random_state gives the same draws.

    Its importances are not compared entry by entry: at a confident solution
    the exact Fisher is mostly the improbable labels' large gradients, which
    one draw per sample rarely meets (unbiased, but heavy-tailed; the tests
    above check the mean at an unsure θ)."""
    train, test, classes, task_labels = digits
    # A prior too weak to hide the Fisher (λ·precision·I would pin θ alone).
    params = dict(hidden_layer_sizes=(32,), n_epochs=10, batch_size=32, learning_rate=0.01,
                  prior_precision=1e-6, random_state=0, scenario="task")
    exact = _fit(EWCClassifier(1e4, **params), train, classes)
    sampled = _fit(EWCClassifier(1e4, fisher="sampled", **params), train, classes)
    again = _fit(EWCClassifier(1e4, fisher="sampled", **params), train, classes)
    other = _fit(EWCClassifier(1e4, fisher="sampled", **{**params, "random_state": 1}), train,
                 classes)
    np.testing.assert_array_equal(sampled.importance_, again.importance_)
    assert not np.array_equal(sampled.importance_, other.importance_)
    assert not np.array_equal(sampled.importance_, exact.importance_)
    score = {name: final_average_accuracy(clf, test, scenario="task", task_labels=task_labels)
             for name, clf in [("exact", exact), ("sampled", sampled), ("other", other),
                               ("fine-tuning", _fit(FineTuningClassifier(**params), train,
                                                    classes))]}
    assert score["fine-tuning"] < 0.7  # measured 0.53: what the Fisher has to keep
    assert score["exact"] > 0.95  # 0.98
    assert abs(score["sampled"] - score["exact"]) < 0.02
    assert abs(score["other"] - score["exact"]) < 0.02


@pytest.mark.parametrize("estimator", [EWCClassifier, OnlineEWCClassifier])
def test_fisher_names_the_curvature(estimator):
    kinds = {fisher: estimator(fisher=fisher)._make_consolidation().kind
             for fisher in ("exact", "sampled", "empirical")}
    assert kinds == {"exact": "ggn", "sampled": "sampled_fisher", "empirical": "empirical_fisher"}


def test_a_bad_fisher_is_refused_and_changes_nothing(digits):
    train, _, classes, _ = digits
    clf = EWCClassifier(hidden_layer_sizes=(8,), n_epochs=1, random_state=0)
    clf.partial_fit(*train[0], classes=classes)
    before = clf.importance_.copy()
    clf.set_params(fisher="labels")
    with pytest.raises(ValueError, match="fisher"):
        clf.partial_fit(*train[1])
    np.testing.assert_array_equal(clf.importance_, before)
    assert clf.n_tasks_seen_ == 1
    assert AQCClassifier(curvature="sampled_fisher").get_params()["curvature"] == "sampled_fisher"
