"""The Laplace predictive of AQC, EWC and online EWC, against independent computations.

The references here share nothing with ``skcl._gradient.consolidation.laplace`` but
the fitted θ* and the stored curvature: Σ by numpy's inverse of λ·H_t,
θ sampled by numpy and pushed through the float64 network, Jacobians by
central finite differences, Gaussian integrals by Gauss–Hermite
quadrature.
"""

import math

import jax
import numpy as np
import pytest
from scipy.special import expit, log_softmax, softmax
from scipy.stats import norm

from skcl import AQCClassifier, EWCClassifier, OnlineEWCClassifier
from skcl._gradient.consolidation.laplace import (
    laplace_log_proba,
    logit_moments,
    mc_log_proba,
    mean_field_log_proba,
    posterior_root,
    probit_log_proba,
)
from skcl._gradient.consolidation.quadratic import QuadraticState
from skcl._gradient.consolidation.structures import (
    DiagonalCurvature,
    FullCurvature,
    KroneckerCurvature,
)
from skcl._gradient.networks import MLP, apply_numpy

IRIS = dict(n_epochs=100, batch_size=16, learning_rate=0.1, random_state=0)


def fit(estimator, data):
    for X, y in data.train:
        estimator.partial_fit(X, y, classes=data.classes)
    return estimator


def stacked_test_inputs(data):
    return np.concatenate([X for X, _ in data.test])


@pytest.fixture(scope="module")
def aqc_full(iris):
    # λ = 10: logit standard deviations up to ~1.7 on the test inputs.
    return fit(AQCClassifier(alpha=10.0, **IRIS), iris)


@pytest.fixture(scope="module")
def aqc_wide(iris):
    # λ = 1: a wide posterior (logit sds up to ~6.5); the plug-in is up to
    # 0.24 away from the posterior predictive.
    return fit(AQCClassifier(alpha=1.0, **IRIS), iris)


def gaussian_integral(fn, mean, var, n=20_001):
    """∫ fn(f) N(f; mean, var) df by the trapezoid rule over mean ± 12 sd.

    fn is bounded by 1 here, so the tails cut off contribute < 1e-30; the
    rule on 20,001 points is accurate to ~1e-8 for these smooth steps.
    """
    z = np.linspace(-12, 12, n)
    density = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    f = mean[..., None] + np.sqrt(var)[..., None] * z
    return np.trapezoid(fn(f) * density, z, axis=-1)


# ---------------------------------------------------------------- the posterior


def test_covariance_is_the_inverse_of_lambda_h(aqc_full):
    # Σ = (λ H_t)⁻¹, H_t = diag(prior) + C: the precision of the next penalty.
    expected = np.linalg.inv(aqc_full.alpha * aqc_full.hessian_.astype(np.float64))
    np.testing.assert_allclose(aqc_full.posterior_covariance(), expected, rtol=1e-6,
                               atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("cls", [EWCClassifier, OnlineEWCClassifier])
def test_ewc_covariance_is_the_inverse_of_lambda_importance(iris, cls):
    # importance_ = precision + Σ_i F_i (online: decayed), the diagonal of H_t.
    clf = fit(cls(alpha=100.0, **IRIS), iris)
    np.testing.assert_allclose(np.diag(clf.posterior_covariance()),
                               1.0 / (100.0 * clf.importance_.astype(np.float64)), rtol=1e-6)


# ------------------------------------------- against Monte Carlo of the network


def network_mc(clf, X, n_samples, seed):
    """(1/S) Σ_s softmax f(x; θ_s), θ_s ~ N(θ*, (λ H)⁻¹), all numpy float64."""
    cov = np.linalg.inv(clf.alpha * clf.hessian_.astype(np.float64))
    rng = np.random.default_rng(seed)
    thetas = rng.multivariate_normal(clf.theta_.astype(np.float64), cov, size=n_samples,
                                     method="cholesky")
    total = np.zeros((len(X), len(clf.classes_)))
    for chunk in np.array_split(thetas, 20):
        logits = np.stack([apply_numpy(clf.network_, t, X) for t in chunk])
        total += softmax(logits, axis=-1).sum(0)
    return total / n_samples


@pytest.mark.parametrize("fixture", ["aqc_wide", "aqc_full"])
def test_mc_predictive_matches_100k_samples_of_the_network(fixture, iris, request):
    # Softmax regression: the logits are linear in θ, so the linearised
    # predictive is the exact posterior predictive. Two independent
    # 100,000-sample estimates: each probability's standard error is at most
    # 0.5/√1e5 = 0.0016, their difference's 0.0023; 0.01 is > 4 of those.
    clf = request.getfixturevalue(fixture)
    X = stacked_test_inputs(iris)[::3]
    ours = clf.set_params(predictive="mc", n_predict_samples=100_000).predict_proba(X)
    reference = network_mc(clf, X, 100_000, seed=1)
    plug_in = clf.set_params(predictive="map").predict_proba(X)
    assert np.abs(plug_in - reference).max() > 0.03  # the integral matters here
    np.testing.assert_allclose(ours, reference, atol=0.01)


def test_approximations_against_the_100k_sample_network(aqc_full, aqc_wide, iris):
    # Measured, not exact. The plain probit flattens every logit by its own
    # variance, including the shift common to all logits that the softmax
    # ignores, so it is under-confident: on λ = 10 (logit sds ≤ 1.7) it is
    # 0.09 from the truth, further than the plug-in (0.034). The pairwise
    # (mean-field) one sees the logits' covariance: 0.004 there, 0.05 on
    # the wide λ = 1 posterior (the plug-in: 0.24, the probit: 0.085).
    X = stacked_test_inputs(iris)[::3]
    for clf, mean_field_tol, probit_tol in [(aqc_full, 0.01, 0.1), (aqc_wide, 0.06, 0.1)]:
        reference = network_mc(clf, X, 100_000, seed=2)
        error = {p: np.abs(clf.set_params(predictive=p).predict_proba(X) - reference).max()
                 for p in ("map", "probit", "mean_field")}
        assert error["mean_field"] < mean_field_tol
        assert error["probit"] < probit_tol
        assert error["mean_field"] < error["map"]
    assert error["probit"] < 0.5 * error["map"]  # the wide posterior


def test_mean_field_of_two_softmax_classes_is_the_binary_probit():
    # For K = 2 the pairwise formula is σ((m1 − m0)/√(1 + π/8 Var(f1 − f0))).
    rng = np.random.default_rng(0)
    mean = rng.normal(scale=3, size=(20, 2))
    L = rng.normal(size=(20, 2, 2))
    cov = L @ np.swapaxes(L, 1, 2) * 4
    var = cov[:, 0, 0] + cov[:, 1, 1] - 2 * cov[:, 0, 1]
    expected = expit((mean[:, 1] - mean[:, 0]) / np.sqrt(1 + math.pi / 8 * var))
    got = np.exp(mean_field_log_proba(mean, cov, False))
    np.testing.assert_allclose(got[:, 1], expected, rtol=1e-12)
    np.testing.assert_allclose(got.sum(1), 1.0, rtol=1e-12)


def test_logit_covariance_of_a_hidden_layer_network_by_finite_differences(wine):
    # J Σ Jᵀ with J(x) = ∂f/∂θ by central differences in float64.
    clf = fit(AQCClassifier(alpha=1.0, curvature="ggn", hidden_layer_sizes=(4,),
                            n_epochs=20, batch_size=16, learning_rate=0.01, random_state=0),
              wine)
    X = stacked_test_inputs(wine)[:5]
    theta, net = clf.theta_.astype(np.float64), clf.network_
    cov = clf.posterior_covariance()
    eps = 1e-4
    J = np.zeros((len(X), net.n_outputs, len(theta)))
    for i in range(len(theta)):
        e = np.zeros_like(theta)
        e[i] = eps
        J[:, :, i] = (apply_numpy(net, theta + e, X) - apply_numpy(net, theta - e, X)) / (2 * eps)
    expected = np.einsum("nkp,pq,nlq->nkl", J, cov, J)
    mean, got = logit_moments(net, net.n_outputs, clf.theta_, clf._posterior_root(), X)
    np.testing.assert_allclose(mean, apply_numpy(net, theta, X), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3 * np.abs(expected).max())


# ---------------------------------------------------------------- closed forms


def test_probit_link_closed_form_by_quadrature():
    # ∫Φ(f) N(f; m, v) df = Φ(m/√(1+v)): the identity behind the probit
    # approximation, checked independently.
    m = np.linspace(-6, 6, 25)[:, None] * np.ones((1, 6))
    v = np.array([0.0, 0.1, 1.0, 4.0, 25.0, 100.0])[None, :] * np.ones_like(m)
    v = np.where(v == 0, 1e-300, v)  # the integral's limit: the step itself
    np.testing.assert_allclose(gaussian_integral(norm.cdf, m, v), norm.cdf(m / np.sqrt(1 + v)),
                               atol=1e-6)


def test_logistic_probit_approximation_within_its_error_bound():
    # σ(x) ≈ Φ(√(π/8) x), with ε = sup|σ − Φ(√(π/8)·)| (about 0.018). Then
    # ∫σ N = Φ(√(π/8) m/√(1+π v/8)) ± ε exactly, and that differs from the
    # approximation σ(m/√(1+π v/8)) by at most ε again: the error is ≤ 2ε.
    x = np.linspace(-20, 20, 400_001)
    eps = np.abs(expit(x) - norm.cdf(math.sqrt(math.pi / 8) * x)).max()
    assert 0.015 < eps < 0.02
    m = np.linspace(-8, 8, 33)[:, None] * np.ones((1, 7))
    v = np.array([0.0, 0.01, 0.5, 2.0, 10.0, 50.0, 400.0])[None, :] * np.ones_like(m)
    exact = gaussian_integral(expit, m, v)
    approx = np.exp(probit_log_proba(m.reshape(-1, 1), v.reshape(-1, 1), True))[:, 1]
    error = np.abs(approx - exact.ravel())
    assert error.max() <= 2 * eps
    assert error[v.ravel() == 0].max() < 1e-12  # no variance: the plug-in sigmoid


def test_bernoulli_mc_matches_quadrature():
    # One logit: the Monte Carlo predictive against Gauss–Hermite quadrature.
    mean = np.array([[-3.0], [0.0], [0.5], [2.0], [6.0]])
    var = np.array([0.5, 4.0, 1.0, 9.0, 25.0])
    got = np.exp(mc_log_proba(mean, var[:, None, None], 100_000, jax.random.PRNGKey(0), True))
    np.testing.assert_allclose(got[:, 1], gaussian_integral(expit, mean[:, 0], var), atol=0.005)


# ---------------------------------------------------- the structures agree


def _states(c_in, c_out, prior):
    """One layer's C = diag(a ⊗ g) as a diagonal, a full and a Kronecker curvature."""
    a, g = c_in, c_out
    c = np.kron(a, g).astype(np.float32)
    center = np.zeros(len(c), np.float32)
    kron = KroneckerCurvature(((np.diag(a)[None].astype(np.float32),
                                np.diag(g)[None].astype(np.float32)),), ((len(a) - 1, len(g)),))
    return [QuadraticState(center, prior, DiagonalCurvature(c)),
            QuadraticState(center, prior, FullCurvature(np.diag(c))),
            QuadraticState(center, prior, kron)]


@pytest.mark.parametrize("predictive", ["probit", "mean_field", "mc"])
def test_diagonal_full_and_kronecker_agree_where_they_coincide(predictive):
    rng = np.random.default_rng(0)
    net = MLP(4, (), 3)
    a, g = rng.uniform(0.5, 3, 5), rng.uniform(0.1, 2, 3)
    prior = np.full(net.n_params, 0.7, np.float32)
    theta = rng.normal(size=net.n_params).astype(np.float32)
    X = rng.normal(size=(7, 4)).astype(np.float32)
    out, covs = [], []
    for state in _states(a, g, prior):
        root = posterior_root(state, 2.0, net.layer_shapes)
        covs.append(root.covariance(net.n_params))
        out.append(laplace_log_proba(net, 3, False, theta, root, X, predictive, 5000,
                                     jax.random.PRNGKey(3)))
    expected = np.diag(1.0 / (2.0 * (0.7 + np.kron(a, g))))
    for cov in covs:
        np.testing.assert_allclose(cov, expected, rtol=1e-6)
    np.testing.assert_allclose(out[1], out[0], atol=1e-5)
    np.testing.assert_allclose(out[2], out[0], atol=1e-5)


def test_kronecker_equals_its_dense_matrix(iris):
    # A fitted K-FAC curvature (a sum of one Kronecker term per task) and the
    # same matrix stored in full give the same predictive.
    clf = fit(AQCClassifier(alpha=10.0, curvature="ggn", structure="kron", **IRIS), iris)
    state = clf.consolidation_
    dense = QuadraticState(state.center, state.prior,
                           FullCurvature(state.curvature.to_dense().astype(np.float32)))
    X = stacked_test_inputs(iris)
    net = clf.network_
    got = laplace_log_proba(net, 3, False, clf.theta_,
                            posterior_root(state, 10.0, net.layer_shapes), X, "probit")
    ref = laplace_log_proba(net, 3, False, clf.theta_,
                            posterior_root(dense, 10.0, net.layer_shapes), X, "probit")
    np.testing.assert_allclose(got, ref, atol=1e-5)


# ------------------------------------------------------- the estimators' contract


@pytest.mark.parametrize("make", [
    lambda: AQCClassifier(alpha=10.0, **IRIS),
    lambda: AQCClassifier(alpha=10.0, curvature="ggn", structure="kron",
                          hidden_layer_sizes=(4,), **IRIS),
    lambda: EWCClassifier(alpha=100.0, **IRIS),
    lambda: OnlineEWCClassifier(alpha=100.0, **IRIS),
], ids=["aqc-full", "aqc-kron-hidden", "ewc", "online-ewc"])
@pytest.mark.parametrize("predictive", ["probit", "mean_field", "mc"])
def test_probabilities_sum_to_one_and_are_finite_for_extreme_inputs(iris, make, predictive):
    clf = fit(make().set_params(predictive=predictive, n_predict_samples=200), iris)
    X = stacked_test_inputs(iris)
    for scale in (1.0, 1e3, 1e6, -1e6, 1e20, -1e30):  # J S Jᵀ overflows float32 past ~1e19
        P = clf.predict_proba(scale * X)
        logP = clf.predict_log_proba(scale * X)
        assert P.shape == (len(X), 3)
        assert np.isfinite(P).all() and np.isfinite(logP).all()
        np.testing.assert_allclose(P.sum(1), 1.0, atol=1e-6)
        np.testing.assert_allclose(np.exp(logP), P, rtol=1e-6)
        assert (clf.predict(scale * X) == clf.classes_[P.argmax(1)]).all()


def test_binary_output_uses_the_sigmoid_probit(iris):
    # Two classes: one Bernoulli logit; probit is σ(κ m) with κ from J Σ Jᵀ.
    X0, y0 = iris.train[0]
    X1, y1 = iris.train[1]
    clf = AQCClassifier(alpha=1.0, predictive="probit", **IRIS)
    clf.partial_fit(X0, y0, classes=[0, 1]).partial_fit(X1, y1)
    X = np.concatenate([X0, X1])
    mean, cov = logit_moments(clf.network_, 1, clf.theta_, clf._posterior_root(), X)
    m, v = clf.set_params(predictive="map").decision_function(X), cov[:, 0, 0]
    np.testing.assert_allclose(mean[:, 0], m, rtol=1e-4, atol=1e-4)
    expected = expit(m / np.sqrt(1 + math.pi / 8 * v))
    P = clf.set_params(predictive="probit").predict_proba(X)
    np.testing.assert_allclose(P[:, 1], expected, rtol=1e-4, atol=1e-6)


def test_map_is_the_plug_in_and_mc_is_deterministic(iris):
    a = fit(AQCClassifier(alpha=10.0, **IRIS), iris)
    X = stacked_test_inputs(iris)
    np.testing.assert_allclose(
        a.predict_proba(X), softmax(apply_numpy(a.network_, a.theta_, X), axis=1), rtol=1e-12)
    b = fit(AQCClassifier(alpha=10.0, predictive="mc", n_predict_samples=300, **IRIS), iris)
    c = fit(AQCClassifier(alpha=10.0, predictive="mc", n_predict_samples=300, **IRIS), iris)
    np.testing.assert_array_equal(b.predict_proba(X), c.predict_proba(X))
    np.testing.assert_array_equal(b.predict_proba(X), b.predict_proba(X))


def test_grown_classes_drop_the_unseen_output(iris):
    # With grow_classes the network has an extra unseen-classes output; the
    # predictive integrates the known classes' logits only.
    clf = AQCClassifier(alpha=10.0, grow_classes=True, predictive="probit", **IRIS)
    for X, y in iris.train[:2]:
        clf.partial_fit(X, y)
    X = stacked_test_inputs(iris)
    P = clf.predict_proba(X)
    assert P.shape == (len(X), 2)
    mean, cov = logit_moments(clf.network_, 2, clf.theta_, clf._posterior_root(), X)
    kappa = 1 / np.sqrt(1 + math.pi / 8 * np.diagonal(cov, axis1=1, axis2=2))
    np.testing.assert_allclose(np.log(P), log_softmax(mean * kappa, axis=1), atol=1e-5)


def test_bad_predictive_is_refused_before_any_work(iris):
    X, y = iris.train[0]
    clf = AQCClassifier(predictive="laplace")
    with pytest.raises(ValueError, match="predictive"):
        clf.partial_fit(X, y, classes=iris.classes)
    assert not hasattr(clf, "theta_")
    with pytest.raises(ValueError, match="n_predict_samples"):
        EWCClassifier(n_predict_samples=0).partial_fit(X, y, classes=iris.classes)


def test_wrong_width_is_refused_and_changes_nothing(aqc_full, iris):
    clf = aqc_full.set_params(predictive="probit")
    before = clf.theta_.copy()
    with pytest.raises(ValueError, match="features"):
        clf.predict_proba(stacked_test_inputs(iris)[:, :3])
    np.testing.assert_array_equal(clf.theta_, before)


def test_indefinite_precision_is_refused_with_advice():
    net = MLP(2, (), 2)
    state = QuadraticState(np.zeros(net.n_params, np.float32),
                           np.full(net.n_params, 1.0, np.float32),
                           FullCurvature(-3.0 * np.eye(net.n_params, dtype=np.float32)))
    with pytest.raises(ValueError, match="curvature='ggn'"):
        posterior_root(state, 1.0, net.layer_shapes)


@pytest.mark.parametrize("predictive", ["probit", "mean_field", "mc"])
def test_predict_proba_and_decision_function_agree(aqc_wide, iris, predictive):
    # The plain probit's per-class κ can reorder the classes against the
    # MAP logits; predict and decision_function follow the predictive.
    clf = aqc_wide.set_params(predictive=predictive, n_predict_samples=500)
    X = stacked_test_inputs(iris)
    P, D = clf.predict_proba(X), clf.decision_function(X)
    np.testing.assert_allclose(D, np.log(P), rtol=1e-6, atol=1e-9)
    assert (clf.predict(X) == clf.classes_[D.argmax(1)]).all()
    X0, y0 = iris.train[0]
    X1, y1 = iris.train[1]
    binary = AQCClassifier(alpha=1.0, predictive=predictive, n_predict_samples=500, **IRIS)
    binary.partial_fit(X0, y0, classes=[0, 1]).partial_fit(X1, y1)
    d, p = binary.decision_function(X), binary.predict_proba(X)
    np.testing.assert_allclose(d, np.log(p[:, 1]) - np.log(p[:, 0]), rtol=1e-6, atol=1e-9)
    assert (binary.predict(X) == binary.classes_[(d > 0).astype(int)]).all()


def test_the_hessian_check_reads_the_learned_network_not_the_setting(iris):
    # The exact Hessian of a network with hidden layers can be indefinite: a
    # prior precision other than the stored one is refused up front. A later
    # set_params(hidden_layer_sizes=()) changes the setting, not the network
    # already learned: still refused up front, theta unchanged.
    clf = fit(AQCClassifier(alpha=1.0, curvature="hessian", hidden_layer_sizes=(4,),
                            predictive="probit", predictive_prior_precision="evidence",
                            n_epochs=5, batch_size=16, learning_rate=0.1, random_state=0), iris)
    theta = clf.theta_.copy()
    for hidden in [(4,), ()]:
        clf.set_params(hidden_layer_sizes=hidden)
        with pytest.raises(ValueError, match="other than 'stored' needs a positive semi"):
            clf.predict_proba(stacked_test_inputs(iris))
    np.testing.assert_array_equal(clf.theta_, theta)
