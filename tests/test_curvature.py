"""AQC's Hessian, EWC's Fisher and SI's path integral against independent
computations: closed forms in float64 NumPy, finite differences, and the
fundamental theorem of calculus for line integrals."""

import jax
import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from skcl import AQCClassifier, EWCClassifier, SIClassifier
from skcl._consolidation import DiagonalQuadratic, MAPObjective
from skcl._consolidation.curvature import fisher_diagonal, nll_hessian
from skcl._networks import MLP, apply_numpy
from skcl._training import minimize


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_regression_hessian(theta, X, w, n_classes):
    """Closed form: Σ_n w_n (x̃ x̃ᵀ) ⊗ (diag p − p pᵀ), x̃ = [x, 1].

    θ is [vec(W) row-major, b], i.e. the row-major flattening of the
    augmented (n_features + 1, n_classes) matrix [W; b], hence the order of
    the Kronecker product.
    """
    network = MLP(X.shape[1], (), n_classes)
    p = _softmax(apply_numpy(network, theta, X))
    X_aug = np.hstack([X, np.ones((len(X), 1))]).astype(np.float64)
    H = np.zeros((network.n_params,) * 2)
    for x, pn, wn in zip(X_aug, p, w):
        H += wn * np.kron(np.outer(x, x), np.diag(pn) - np.outer(pn, pn))
    return H


def logistic_regression_hessian(theta, X, w):
    """Closed form for one sigmoid output: Σ_n w_n σ(1−σ) x̃ x̃ᵀ."""
    network = MLP(X.shape[1], (), 1)
    s = 1 / (1 + np.exp(-apply_numpy(network, theta, X)[:, 0]))
    X_aug = np.hstack([X, np.ones((len(X), 1))]).astype(np.float64)
    return (X_aug * (w * s * (1 - s))[:, None]).T @ X_aug


def relative_error(A, B):
    return np.linalg.norm(np.asarray(A, np.float64) - B) / np.linalg.norm(B)


@pytest.fixture(scope="module")
def wine_scaled(wine):
    X = np.concatenate([X for X, _ in wine.train])
    y = np.concatenate([y for _, y in wine.train])
    return StandardScaler().fit_transform(X).astype(np.float32), y.astype(np.int32)


@pytest.mark.parametrize("batch_size", [7, 16, 1000])
def test_hessian_matches_softmax_regression_closed_form(wine_scaled, batch_size):
    X, y = wine_scaled
    rng = np.random.default_rng(0)
    network = MLP(X.shape[1], (), 3)
    theta = rng.normal(scale=0.3, size=network.n_params).astype(np.float32)
    w = rng.uniform(0.5, 2.0, size=len(y)).astype(np.float32)
    H = nll_hessian(
        MAPObjective(network, "categorical"), theta, X, y, w, batch_size=batch_size
    )
    expected = softmax_regression_hessian(theta, X, w, 3)
    assert H.shape == (network.n_params, network.n_params)
    assert relative_error(H, expected) < 1e-4


def test_hessian_matches_logistic_regression_closed_form(wine_scaled):
    X, y = wine_scaled
    y = (y == 1).astype(np.int32)
    network = MLP(X.shape[1], (), 1)
    theta = np.random.default_rng(1).normal(scale=0.3, size=network.n_params).astype(np.float32)
    w = np.ones(len(y), np.float32)
    H = nll_hessian(MAPObjective(network, "bernoulli"), theta, X, y, w, batch_size=16)
    assert relative_error(H, logistic_regression_hessian(theta, X, w)) < 1e-4


def test_hessian_of_hidden_layer_network_matches_finite_differences(wine_scaled):
    X, y = wine_scaled
    network = MLP(X.shape[1], (5,), 3)
    objective = MAPObjective(network, "categorical")
    theta = np.asarray(network.init(jax.random.PRNGKey(0))) + 0.1
    w = np.ones(len(y), np.float32)
    H = np.asarray(nll_hessian(objective, theta, X, y, w, batch_size=32), np.float64)

    # Central differences of the gradient, column by column.
    grad = jax.jit(jax.grad(lambda t: objective.data_term(t, X, y, w)))
    eps = 1e-2
    fd = np.empty_like(H)
    for k in range(network.n_params):
        e = np.zeros(network.n_params, np.float32)
        e[k] = eps
        fd[:, k] = (np.asarray(grad(theta + e)) - np.asarray(grad(theta - e))) / (2 * eps)
    assert relative_error(H, fd) < 1e-2
    np.testing.assert_allclose(H, H.T, atol=1e-6 * np.abs(H).max())


def test_aqc_accumulates_prior_and_task_hessians(iris):
    clf = AQCClassifier(alpha=10.0, learning_rate=0.1, random_state=0)
    expected = np.eye(15)  # the prior's precision·I, the i = 0 term of eq. 3
    for X, y in iris.train:
        clf.partial_fit(X, y, classes=iris.classes)
        expected = expected + softmax_regression_hessian(
            clf.theta_, X, np.ones(len(y)), 3
        )
    assert relative_error(clf.hessian_, expected) < 1e-4
    np.testing.assert_array_equal(clf.consolidation_.center, clf.theta_)


def test_fisher_matches_brute_force(wine_scaled):
    X, y = wine_scaled
    network = MLP(X.shape[1], (), 3)
    theta = np.random.default_rng(2).normal(scale=0.3, size=network.n_params).astype(np.float32)
    w = np.ones(len(y), np.float32)
    F = fisher_diagonal(MAPObjective(network, "categorical"), theta, X, y, w, batch_size=16)

    # ∂ log p_c / ∂[W; b]_{ik} = x̃_i (δ_ck − p_k), squared and averaged
    # over c ~ p(c | x) and over the samples.
    p = _softmax(apply_numpy(network, theta, X))
    X_aug = np.hstack([X, np.ones((len(X), 1))])
    expected = np.zeros((X.shape[1] + 1, 3))
    for x, pn in zip(X_aug, p):
        for c in range(3):
            g = np.outer(x, np.eye(3)[c] - pn)
            expected += pn[c] * g**2
    expected = expected.ravel() / len(X)
    assert relative_error(F, expected) < 1e-4


def test_ewc_importance_is_prior_plus_fisher_sum(iris):
    clf = EWCClassifier(alpha=100.0, learning_rate=0.1, random_state=0)
    X, y = iris.train[0]
    clf.partial_fit(X, y, classes=iris.classes)
    objective = MAPObjective(clf.network_, clf.likelihood_)
    F = fisher_diagonal(objective, clf.theta_, X.astype(np.float32), y, np.ones(len(y), np.float32), batch_size=5)
    np.testing.assert_allclose(clf.importance_, 1.0 + np.asarray(F), rtol=1e-5)


def test_si_path_integral_is_the_loss_decrease(wine_scaled):
    """Full batch, small steps: Σ_k ω_k is the line integral of −∇nll along
    the optimisation path, i.e. the decrease of the NLL."""
    X, y = wine_scaled
    network = MLP(X.shape[1], (), 3)
    objective = MAPObjective(network, "categorical")
    w = np.ones(len(y), np.float32)
    theta_start = network.init(jax.random.PRNGKey(0))
    aux = (DiagonalQuadratic.prior(network.n_params, 1.0), 1.0)
    theta_end, _, path = minimize(
        objective, theta_start, aux, X, y, w, jax.random.PRNGKey(1), 0.01,
        n_epochs=300, batch_size=len(y), track_path=True,
    )
    decrease = float(objective.data_term(theta_start, X, y, w) - objective.data_term(theta_end, X, y, w))
    assert decrease > 10.0
    assert abs(float(np.sum(path)) - decrease) < 0.02 * decrease


def test_si_importances_are_non_negative_on_a_convex_task(wine_scaled):
    X, y = wine_scaled
    clf = SIClassifier(damping=0.1, batch_size=len(y), learning_rate=0.01, random_state=0)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    omega = clf.importance_ - clf.prior_precision  # Ω of the task alone
    assert omega.max() > 1.0
    assert np.all(omega >= -1e-4 * omega.max())
