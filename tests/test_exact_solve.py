"""The exact family's solve: a Cholesky factor (Gaussian) and a tridiagonal
reduction (least squares' GCV) give today's eigendecomposition answers, and
both rules are invariant to the unit of X."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.datasets import load_digits, load_wine

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact import linalg, solve_jax
from skcl._exact.gaussian import oas_shrinkage
from skcl._exact.least_squares import (
    RELATIVE_ALPHA_GRID,
    _centred,
    class_targets,
    fit_from_spectrum,
    gcv_scores,
    ridge_spectrum,
)
from skcl._exact.moments import coarsen
from skcl.feature_extraction import RandomFeatures

_LOG_2PI = np.log(2 * np.pi)


def _digits_features(rows, n_components):
    X, y = load_digits(return_X_y=True)
    return RandomFeatures(n_components, random_state=0).fit_transform(X[:rows]), y[:rows]


def _moments(clf):
    return coarsen(clf.moments_, lambda key: (None, key[1]))


@pytest.mark.parametrize("rows, n_components", [(1500, 200), (150, 400)])
def test_gcv_from_the_tridiagonal_reduction_is_the_eigendecomposition_s(rows, n_components):
    # Fewer rows than features too: a null space of S, the exact-fit branch.
    X, y = _digits_features(rows, n_components)
    clf = LeastSquaresClassifier().fit(X, y)
    moments = _moments(clf)
    targets = class_targets(10)[np.searchsorted(clf.classes_, [k[1] for k in moments.keys])]
    spectrum = ridge_spectrum(moments, targets)
    # T's eigenvectors only where S is singular (the exact-fit branch needs them).
    assert (spectrum.tridiagonal_vectors is None) == (rows > n_components)
    x_bar, t_bar, S, C = _centred(moments, targets)
    values, V = np.linalg.eigh(S)  # today's path
    values = np.clip(values, 0, None)
    eigh_spectrum = spectrum._replace(values=values, projected=V.T @ C)
    alphas = np.asarray(RELATIVE_ALPHA_GRID) * spectrum.scale
    ours, theirs = gcv_scores(spectrum, alphas), gcv_scores(eigh_spectrum, alphas)
    np.testing.assert_allclose(ours, theirs, rtol=1e-8)
    assert clf.alpha_ == alphas[np.argmin(theirs)]
    coef = V @ ((V.T @ C) / (values + clf.alpha_)[:, None])
    np.testing.assert_allclose(fit_from_spectrum(spectrum, clf.alpha_).coef, coef, rtol=1e-8,
                               atol=1e-8 * np.abs(coef).max())
    np.testing.assert_allclose(clf.coef_.T, coef, rtol=1e-8, atol=1e-8 * np.abs(coef).max())


@pytest.mark.parametrize("covariance", ["shared", "per_class"])
@pytest.mark.parametrize("predictive", ["plugin", "student_t"])
def test_gaussian_from_a_cholesky_factor_is_the_eigendecomposition_s(covariance, predictive):
    X, y = _digits_features(1500, 150)
    clf = GaussianDiscriminantClassifier(covariance=covariance, predictive=predictive).fit(X, y)
    assert np.all(clf.gaussians_.triangular)  # OAS's s > 0: Cholesky, not the spectrum
    # Today's path: Σ's eigendecomposition, log N(x; μ_g, Σ_g) by whitening.
    moments = clf.moments_
    X_test = load_digits().data[1500:]
    features = RandomFeatures(150, random_state=0).fit(load_digits().data[:1500])
    Z = features.transform(X_test)
    s = clf.shrinkage_
    _, target = oas_shrinkage(coarsen(moments, lambda key: (None, key[1])).scatter,
                              moments.total)
    fit = clf.gaussians_
    pairs = ([(moments.scatter, moments.total)] * len(fit.keys) if covariance == "shared"
             else list(zip(moments.group_scatter, moments.counts)))
    joint = np.empty((len(Z), len(fit.keys)))
    for g, (S, n) in enumerate(pairs):
        sigma = (1 - s) * S / n + s * np.diag(target)
        values, V = np.linalg.eigh(sigma)
        squared = ((((Z - fit.means[g]) @ V) / np.sqrt(values)) ** 2).sum(1)
        joint[:, g] = fit.log_priors[g] - 0.5 * (squared + np.log(values).sum()
                                                + Z.shape[1] * _LOG_2PI)
    if predictive == "plugin":
        ours = clf.decision_function(Z)
        np.testing.assert_allclose(ours, joint, rtol=1e-8)
        np.testing.assert_allclose(clf.predict_proba(Z),
                                   np.exp(joint - logsumexp(joint, axis=1, keepdims=True)),
                                   atol=1e-8)
    else:  # the same log determinants and distances, through the Student-t
        np.testing.assert_allclose(
            fit.log_dets, [np.linalg.slogdet((1 - s) * S / n + s * np.diag(target))[1]
                           for S, n in pairs][0 if covariance == "shared" else slice(None)],
            rtol=1e-10)


def test_a_singular_covariance_keeps_the_floored_spectrum():
    X, y = _digits_features(60, 200)  # 60 rows, 200 features: s = 0 is singular
    clf = GaussianDiscriminantClassifier(shrinkage=0.0).fit(X, y)
    assert not clf.gaussians_.triangular
    assert np.isfinite(clf.predict_proba(X)).all()
    assert clf.score(X, y) == 1.0


def test_the_device_s_linear_algebra_is_the_host_s():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 60))
    S, C = A @ A.T, rng.standard_normal((40, 3))
    host, device = linalg.tridiagonal(S), solve_jax.tridiagonal(S)
    np.testing.assert_allclose(linalg.tridiagonal_eigh(device.diagonal, device.off_diagonal)[0],
                               linalg.tridiagonal_eigh(host.diagonal, host.off_diagonal)[0],
                               rtol=1e-10)
    for module, reduction in ((linalg, host), (solve_jax, device)):
        T = (np.diag(reduction.diagonal) + np.diag(reduction.off_diagonal, 1)
             + np.diag(reduction.off_diagonal, -1))
        QT = module.rotate(reduction, T, transpose=False)  # Q T
        np.testing.assert_allclose(module.rotate(reduction, QT.T).T, S, atol=1e-10)  # Q T Qᵀ
        np.testing.assert_allclose(module.rotate(reduction, module.rotate(reduction, C, True)),
                                   C, atol=1e-12)
    np.testing.assert_allclose(solve_jax.cholesky(S), linalg.cholesky(S), rtol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        solve_jax.cholesky(-S)
    with pytest.raises(np.linalg.LinAlgError):
        linalg.cholesky(-S)


def _fitted(X, y, power):
    Xs = X * 10.0**power
    ls = LeastSquaresClassifier().fit(Xs, y)
    gauss = GaussianDiscriminantClassifier().fit(Xs, y)
    return (ls.alpha_ / 10.0 ** (2 * power), ls.predict_proba(Xs), gauss.shrinkage_,
            gauss.predict_proba(Xs))


_WINE = load_wine(return_X_y=True)


@pytest.mark.parametrize("power", [-100, -30, 30, 100])
def test_gcv_alpha_and_oas_do_not_depend_on_x_s_unit(power):
    X, y = _WINE
    base = _fitted(X, y, 0)
    # Before: α/s² moved 100× and the probabilities by up to 0.18 at 10^±100.
    for ours, reference in zip(_fitted(X, y, power), base):
        np.testing.assert_allclose(ours, reference, rtol=1e-8, atol=1e-8)


def test_inputs_whose_squares_overflow_are_refused_and_change_nothing():
    X, y = _WINE
    clf = LeastSquaresClassifier().fit(X, y)
    before = clf.coef_.copy()
    with pytest.raises(ValueError, match="too large to square"):
        clf.partial_fit(X * 1e160, y)
    np.testing.assert_array_equal(clf.coef_, before)


@settings(max_examples=8, deadline=None)
@given(power=st.integers(-100, 100), rows=st.integers(40, 178), seed=st.integers(0, 2**16))
def test_rescaling_x_changes_no_probability(power, rows, seed):
    X, y = _WINE
    index = np.random.default_rng(seed).permutation(len(y))[:rows]
    if len(np.unique(y[index])) < 2:
        return
    X, y = X[index], y[index]
    for ours, reference in zip(_fitted(X, y, power), _fitted(X, y, 0)):
        np.testing.assert_allclose(ours, reference, rtol=1e-8, atol=1e-8)

