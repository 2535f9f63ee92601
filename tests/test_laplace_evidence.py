"""The prior precision by the Laplace evidence, against independent computations.

Bayesian linear regression with unit noise, whose Laplace approximation is
exact: at the MAP for δ, the evidence is SciPy's Gaussian density of y
under N(0, I + X Xᵀ/δ). The structures: numpy's slogdet of the dense
λC + δI. The maximiser: a fine grid of the brute-force evidence.
"""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from skcl._gradient.consolidation.evidence import evidence_prior_precision, laplace_log_evidence
from skcl._gradient.consolidation.laplace import posterior_root
from skcl._gradient.consolidation.quadratic import QuadraticState
from skcl._gradient.consolidation.structures import (
    DiagonalCurvature,
    FullCurvature,
    KroneckerCurvature,
)


def _regression(rng, n=30, p=4):
    X = rng.standard_normal((n, p)) * [1.0, 2.0, 0.5, 0.1]
    y = X @ np.array([1.0, -0.5, 0.0, 2.0]) + rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("delta", [0.05, 1.0, 20.0])
def test_the_evidence_of_linear_regression_is_exact(delta):
    rng = np.random.default_rng(0)
    X, y = _regression(rng)
    C = X.T @ X  # the Hessian of ½‖y − Xθ‖², exact for a Gaussian likelihood
    theta = np.linalg.solve(C + delta * np.eye(len(C)), X.T @ y)
    nll = 0.5 * np.sum((y - X @ theta) ** 2) + 0.5 * len(y) * np.log(2 * np.pi)
    state = QuadraticState(np.zeros(4), np.ones(4), FullCurvature(C))
    ours = laplace_log_evidence(state, 1.0, theta, ((3, 1),), delta, nll=nll)
    exact = multivariate_normal(np.zeros(len(y)), np.eye(len(y)) + X @ X.T / delta).logpdf(y)
    assert ours == pytest.approx(exact, rel=1e-10)


def _brute(C, alpha, theta, delta):
    """log Z without nll, by numpy's slogdet of the dense precision."""
    sign, logdet = np.linalg.slogdet(alpha * C + delta * np.eye(len(C)))
    assert sign > 0
    return -0.5 * delta * theta @ theta + 0.5 * len(C) * np.log(delta) - 0.5 * logdet


def _states(rng):
    """One curvature in each structure, with its dense matrix."""
    p = 6  # one layer (fan_in 2 → 2 outputs): (2 + 1) · 2 parameters
    A = rng.standard_normal((2, 3, 3))
    G = rng.standard_normal((2, 2, 2))
    A = np.einsum("tij,tkj->tik", A, A)
    G = np.einsum("tij,tkj->tik", G, G)
    kron = KroneckerCurvature(((A, G),), ((2, 2),))
    dense_kron = sum(np.kron(a, g) for a, g in zip(A, G))
    M = rng.standard_normal((p, p))
    full = M @ M.T
    diag = rng.uniform(0.1, 5.0, p)
    prior = np.ones(p)
    return [(QuadraticState(np.zeros(p), prior, DiagonalCurvature(diag)), np.diag(diag)),
            (QuadraticState(np.zeros(p), prior, FullCurvature(full)), full),
            (QuadraticState(np.zeros(p), prior, kron), dense_kron)]


@pytest.mark.parametrize("which", [0, 1, 2], ids=["diag", "full", "kron"])
def test_evidence_and_its_maximiser_in_every_structure(which):
    rng = np.random.default_rng(1)
    state, dense = _states(rng)[which]
    theta = rng.standard_normal(len(dense))
    alpha = 3.0
    for delta in (0.01, 0.7, 40.0):
        assert laplace_log_evidence(state, alpha, theta, ((2, 2),), delta) == pytest.approx(
            _brute(dense, alpha, theta, delta), rel=1e-10)
    best = evidence_prior_precision(state, alpha, theta, ((2, 2),))
    grid = np.exp(np.linspace(np.log(best) - 3, np.log(best) + 3, 6001))
    values = [_brute(dense, alpha, theta, d) for d in grid]
    assert best == pytest.approx(grid[int(np.argmax(values))], rel=2e-3)
    # MacKay's fixed point: δ = γ / ‖θ‖², γ the effective number of parameters.
    e = np.linalg.eigvalsh(alpha * dense)
    assert best == pytest.approx(np.sum(e / (e + best)) / (theta @ theta), rel=1e-8)
    # The posterior it gives: (λC + δI)⁻¹, in the structure.
    root = posterior_root(state, alpha, ((2, 2),), prior_precision=best)
    np.testing.assert_allclose(root.covariance(len(dense)),
                               np.linalg.inv(alpha * dense + best * np.eye(len(dense))),
                               rtol=1e-8, atol=1e-12)


def test_no_curvature_or_no_positive_one_is_refused():
    p = 3
    with pytest.raises(ValueError, match="No curvature"):
        evidence_prior_precision(QuadraticState(np.zeros(p), np.ones(p), None), 1.0,
                                 np.ones(p), ((1, 1),))
    with pytest.raises(ValueError, match="no maximum"):
        evidence_prior_precision(
            QuadraticState(np.zeros(p), np.ones(p), FullCurvature(-np.eye(p))), 1.0,
            np.ones(p), ((1, 1),))


def test_negative_eigenvalues_are_set_to_zero():
    # float32 sums of positive semi-definite terms can leave C slightly
    # indefinite: the evidence and the posterior use its positive part.
    rng = np.random.default_rng(2)
    vectors = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    values = np.array([-0.05, 0.0, 1.0, 3.0])
    C = (vectors * values) @ vectors.T
    positive = (vectors * np.clip(values, 0, None)) @ vectors.T
    state = QuadraticState(np.zeros(4), np.ones(4), FullCurvature(C))
    theta = rng.standard_normal(4)
    assert laplace_log_evidence(state, 2.0, theta, ((1, 2),), 0.01) == pytest.approx(
        _brute(positive, 2.0, theta, 0.01), rel=1e-10)
    root = posterior_root(state, 2.0, ((1, 2),), prior_precision=0.01)
    np.testing.assert_allclose(root.covariance(4),
                               np.linalg.inv(2.0 * positive + 0.01 * np.eye(4)), rtol=1e-8)


def test_the_exact_hessian_of_a_network_with_hidden_layers_is_refused(iris):
    from skcl import AQCClassifier

    X, y = iris.train[0]
    clf = AQCClassifier(hidden_layer_sizes=(3,), n_epochs=2, random_state=0,
                        predictive="mean_field", predictive_prior_precision="evidence")
    clf.partial_fit(X, y, classes=iris.classes)
    with pytest.raises(ValueError, match="curvature='ggn'"):
        clf.predict_proba(X)


def test_the_estimators_option_changes_only_the_predictives_prior(iris):
    from skcl import AQCClassifier, EWCClassifier

    X = np.concatenate([X for X, _ in iris.test])
    for cls, kwargs in ((AQCClassifier, {"structure": "full"}), (EWCClassifier, {})):
        clf = cls(alpha=10.0, n_epochs=20, learning_rate=0.1, random_state=0,
                  predictive="mean_field", **kwargs)
        for X_task, y_task in iris.train:
            clf.partial_fit(X_task, y_task, classes=iris.classes)
        stored = clf.predict_proba(X)
        theta = np.asarray(clf.theta_, np.float64).copy()
        state = clf.consolidation_
        curvature = (np.asarray(state.curvature.matrix, np.float64)
                     if kwargs else np.diag(np.asarray(state.curvature.diagonal, np.float64)))
        values, vectors = np.linalg.eigh((curvature + curvature.T) / 2)
        curvature = (vectors * np.clip(values, 0, None)) @ vectors.T  # its positive part
        delta = evidence_prior_precision(state, 10.0, theta, clf.network_.layer_shapes)
        # The brute force: the grid maximum of the dense evidence.
        grid = np.exp(np.linspace(np.log(delta) - 2, np.log(delta) + 2, 2001))
        values = [_brute(curvature, 10.0, theta, d) for d in grid]
        assert delta == pytest.approx(grid[int(np.argmax(values))], rel=3e-3)
        clf.set_params(predictive_prior_precision="evidence")
        expected = np.linalg.inv(10.0 * curvature + delta * np.eye(len(theta)))
        np.testing.assert_allclose(clf.posterior_covariance(), expected, rtol=1e-6,
                                   atol=1e-10 * np.abs(expected).max())
        evidence = clf.predict_proba(X)
        assert np.isfinite(evidence).all() and not np.allclose(evidence, stored)
        np.testing.assert_allclose(evidence.sum(1), 1, atol=1e-6)
        clf.set_params(predictive_prior_precision=delta)
        np.testing.assert_allclose(clf.predict_proba(X), evidence, rtol=1e-6, atol=1e-9)
        np.testing.assert_array_equal(np.asarray(clf.theta_), theta)  # training untouched
        clf.set_params(predictive_prior_precision="stored")
        np.testing.assert_allclose(clf.predict_proba(X), stored)
