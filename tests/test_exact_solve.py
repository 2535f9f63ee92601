"""The exact family's solve: a Cholesky factor (Gaussian) and a reduction to
band form (least squares' GCV; tridiagonal, or LAPACK's first stage of two)
give the eigendecomposition's answers, and both rules are invariant to the
unit of X."""

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.datasets import load_digits, load_iris, load_wine

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact import linalg, solve_jax, two_stage
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
    # float64 features: the products are float64 too (float32 rows' are
    # float32 blocks, whose rounding of S's null space is not what this tests).
    return RandomFeatures(n_components, random_state=0,
                          dtype="float64").fit_transform(X[:rows]), y[:rows]


def _moments(clf):
    return coarsen(clf.moments_, lambda key: (None, key[1]))


def _dense(bands):
    """The symmetric matrix whose lower band LAPACK stores as ``bands``."""
    n = bands.shape[1]
    B = np.zeros((n, n))
    for k, band in enumerate(bands):
        B[np.arange(k, n), np.arange(n - k)] = B[np.arange(n - k), np.arange(k, n)] = band[:n - k]
    return B


def _band(S, width):
    """``linalg.band_reduction(S, width)`` and its dense B."""
    reduction = linalg.band_reduction(S, width)
    return reduction, _dense(reduction.bands)


@pytest.mark.parametrize("width", [1, 2, 7, 32])
@pytest.mark.parametrize("n", [1, 2, 3, 9, 60])
def test_band_reduction_is_an_orthogonal_similarity(n, width):
    # S = Q B Qᵀ with B of at most ``width`` sub-diagonals (a band as wide
    # as S is S itself, then reduced to tridiagonal form), against numpy.
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n + 3))
    S, C = A @ A.T, rng.standard_normal((n, 4))
    reduction, B = _band(S, width)
    assert reduction.width == (width if n > width + 1 else 1)
    np.testing.assert_allclose(linalg.rotate(reduction, linalg.rotate(reduction, B).T).T, S,
                               atol=1e-12 * np.abs(S).max())  # Q B Qᵀ
    np.testing.assert_allclose(linalg.rotate(reduction, linalg.rotate(reduction, C, True)), C,
                               atol=1e-12)  # Q Qᵀ = I
    exact = np.linalg.eigvalsh(S)
    np.testing.assert_allclose(linalg.band_eigvalsh(reduction.bands), exact,
                               atol=1e-12 * exact.max())
    values, U = linalg.band_eigh(reduction.bands)
    np.testing.assert_allclose(values, exact, atol=1e-12 * exact.max())
    np.testing.assert_allclose(U @ np.diag(values) @ U.T, B, atol=1e-12 * exact.max())
    inner = linalg.band_solve(reduction.bands, linalg.rotate(reduction, C, True), 0.5)
    np.testing.assert_allclose(linalg.rotate(reduction, inner),
                               np.linalg.solve(S + 0.5 * np.eye(n), C), rtol=1e-9)


def test_band_inverse_traces_are_the_eigenvalues_sums():
    # tr((B + sI)⁻¹) = Σ_j 1/(λ_j + s), on bands wider and narrower than a
    # block, with a length that is not a multiple of it, down to a shift
    # where B + sI has condition 10⁶.
    rng = np.random.default_rng(3)
    for n, width in [(1, 0), (13, 1), (70, 1), (100, 8), (150, 40)]:
        bands = rng.standard_normal((width + 1, n))
        values = np.linalg.eigvalsh(_dense(bands))
        floor = 1e-6 * max(values.max() - values.min(), 1.0)
        bands[0] += floor - values.min()
        values += floor - values.min()
        shifts = np.array([0.0, 1e-3, 1.0, 1e3]) * values.mean()
        np.testing.assert_allclose(linalg.band_inverse_traces(bands, shifts),
                                   (1 / (values[None, :] + shifts[:, None])).sum(1), rtol=1e-8)
        assert linalg.certainly_positive_definite(bands, 2.0)
        bands[0] -= 2 * floor  # one eigenvalue below zero
        assert not linalg.certainly_positive_definite(bands, 2.0)
        with pytest.raises(np.linalg.LinAlgError):
            linalg.band_inverse_traces(bands, [0.0])


@pytest.mark.parametrize("width", [1, 5])
def test_a_band_solve_refuses_a_matrix_that_is_not_positive_definite(width):
    S = -np.eye(12) - 0.1
    bands = linalg.band_reduction(S, width).bands
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        linalg.band_solve(bands, np.ones((12, 2)))
    # A shift that makes it positive definite is solved.
    assert np.isfinite(linalg.band_solve(bands, np.ones((12, 2)), 3.0)).all()


def test_the_two_stage_routines_come_from_the_loaded_lapack(monkeypatch):
    found = two_stage.routines()
    # scipy's and numpy's wheels export them; elsewhere the tridiagonal path serves.
    assert found is not None, "the LAPACK loaded here has no dsytrd_sy2sb"
    S = np.diag(np.arange(1.0, 1201.0))
    # Large S: the first stage, to a narrower band up to NARROW_BAND_MAX_SIZE.
    assert linalg.band_reduction(S).width == linalg.NARROW_BAND_WIDTH
    wide = linalg.NARROW_BAND_MAX_SIZE + 1
    assert linalg.band_reduction(np.diag(np.arange(1.0, wide + 1))).width == linalg.BAND_WIDTH
    assert linalg.band_reduction(S[:50, :50]).width == 1  # small S: dsytrd
    monkeypatch.setattr(two_stage, "routines", lambda: None)  # a LAPACK without them
    assert linalg.band_reduction(S).width == 1
    with pytest.raises(np.linalg.LinAlgError, match="no dsytrd_sy2sb"):
        linalg.band_reduction(S, width=8)
    bands = np.vstack([np.arange(1.0, 7.0), np.full(6, 0.1), np.full(6, 0.01)])
    dense = np.diag(bands[0]) + np.diag(bands[1, :5], -1) + np.diag(bands[1, :5], 1) + \
        np.diag(bands[2, :4], -2) + np.diag(bands[2, :4], 2)
    np.testing.assert_allclose(linalg.band_eigvalsh(bands), np.linalg.eigvalsh(dense),
                               rtol=1e-12)  # scipy's dsbevd instead of the chase


@pytest.mark.parametrize("two_stage_from", [0, 10**9], ids=["band", "tridiagonal"])
@pytest.mark.parametrize("rows, n_components, weight", [(1500, 200, 1), (150, 400, 1),
                                                        (150, 400, 3)])
def test_gcv_from_the_band_reduction_is_the_eigendecomposition_s(rows, n_components, weight,
                                                                 two_stage_from, monkeypatch):
    # Fewer rows than features too: a null space of S, the exact-fit branch
    # (with weights 3, more weight than features: a singular band); both
    # reductions (a band of 16 sub-diagonals, and tridiagonal).
    monkeypatch.setattr(linalg, "TWO_STAGE_MIN_SIZE", two_stage_from)
    monkeypatch.setattr(linalg, "BAND_WIDTH", 16)
    monkeypatch.setattr(linalg, "NARROW_BAND_WIDTH", 16)
    X, y = _digits_features(rows, n_components)
    clf = LeastSquaresClassifier().fit(X, y, sample_weight=np.full(rows, weight))
    moments = _moments(clf)
    targets = class_targets(10)[np.searchsorted(clf.classes_, [k[1] for k in moments.keys])]
    spectrum = ridge_spectrum(moments, targets)
    # No more weight than features: tridiagonal, whose eigenvectors are cheap.
    assert spectrum.reduction.width == (16 if two_stage_from == 0
                                        and rows * weight > n_components else 1)
    # B's eigenvectors only where S is singular (the exact-fit branch needs them).
    assert (spectrum.band_vectors is None) == (rows > n_components)
    x_bar, t_bar, S, C = _centred(moments, targets)
    values, V = np.linalg.eigh(S)  # today's path
    values = np.clip(values, 0, None)
    eigh_spectrum = spectrum._replace(values=values, projected=V.T @ C)
    alphas = np.asarray(RELATIVE_ALPHA_GRID) * spectrum.scale
    ours, theirs = gcv_scores(spectrum, alphas), gcv_scores(eigh_spectrum, alphas)
    np.testing.assert_allclose(ours, theirs, rtol=1e-8)
    assert clf.alpha_ == alphas[np.argmin(theirs)]
    coef = V @ ((V.T @ C) / (values + clf.alpha_)[:, None])
    # Weighted rows fitted exactly choose a smaller α, which amplifies the
    # rounding of S's null space (eigenvalues near 0, either path): the
    # coefficients then agree to 1e-6 of the largest.
    atol = (1e-8 if weight == 1 else 1e-6) * np.abs(coef).max()
    np.testing.assert_allclose(fit_from_spectrum(spectrum, clf.alpha_).coef, coef, rtol=1e-8,
                               atol=atol)
    np.testing.assert_allclose(clf.coef_.T, coef, rtol=1e-8, atol=atol)


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
    if covariance == "per_class":  # one fit: a class's scatter is its one group's
        assert clf.class_scatters_.labels == moments.labels
    pairs = ([(moments.scatter, moments.total)] * len(fit.keys) if covariance == "shared"
             else list(zip(clf.class_scatters_.scatters, moments.counts)))
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


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_wide_cholesky_by_block_columns_is_lapack_s(monkeypatch, order):
    # Above CHOLESKY_MAX_DIRECT (where LAPACK's potrf calls OpenBLAS's
    # crashing threaded syrk) the factor is built by block columns; the
    # limits shrunk here so that 250 features take that path, in uneven blocks.
    X, _ = _digits_features(1000, 250)
    S = np.asarray(X.T @ X + 1e-3 * np.eye(250), order=order)
    expected = scipy.linalg.cholesky(S, lower=True)
    monkeypatch.setattr(linalg, "CHOLESKY_MAX_DIRECT", 100)
    monkeypatch.setattr(linalg, "CHOLESKY_BLOCK", 64)

    def whole(*args, **kwargs):
        raise AssertionError("LAPACK's Cholesky of the whole matrix above the limit")

    monkeypatch.setattr(linalg.scipy.linalg, "cholesky", whole)
    L = linalg.cholesky(S)
    np.testing.assert_allclose(L, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    assert np.all(np.triu(L, 1) == 0)
    copy = S.copy(order="K")
    in_place = linalg.cholesky(copy, overwrite=True)
    assert np.shares_memory(in_place, copy)
    np.testing.assert_array_equal(in_place, L)
    S[130, 130] = -1.0  # LAPACK's error, naming the same leading minor
    with pytest.raises(np.linalg.LinAlgError, match="^131-th leading minor"):
        linalg.cholesky(S)


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
    host, device = linalg.band_reduction(S, width=1), solve_jax.band_reduction(S)
    assert device.width == 1
    np.testing.assert_allclose(linalg.band_eigh(device.bands)[0],
                               linalg.band_eigh(host.bands)[0], rtol=1e-10)
    for module, reduction in ((linalg, host), (solve_jax, device)):
        diagonal, off_diagonal = reduction.bands[0], reduction.bands[1, :-1]
        T = np.diag(diagonal) + np.diag(off_diagonal, 1) + np.diag(off_diagonal, -1)
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



def _minimum_norm_fit(X, y):
    """The least-squares fit of the one-hot targets of smallest norm (numpy's lstsq)."""
    T = np.eye(len(np.unique(y)))[np.searchsorted(np.unique(y), y)]
    x_bar, t_bar = X.mean(0), T.mean(0)
    coef = np.linalg.lstsq(X - x_bar, T - t_bar, rcond=None)[0]
    return coef, t_bar - x_bar @ coef


@pytest.mark.parametrize("case", ["fewer rows than features", "a duplicated column"])
def test_alpha_zero_is_the_minimum_norm_least_squares_fit(case):
    # scikit-learn's Ridge(alpha=0) and lstsq give the fit of smallest norm
    # where S is singular. Before: an arbitrary interpolating fit (scores 4.4
    # away on Wine's 9 rows), or a bare LinAlgError "Singular matrix" (Iris
    # with a column twice), issue 50.
    if case == "fewer rows than features":
        X, y = load_wine(return_X_y=True)
        X = (X - X.mean(0)) / X.std(0)
        X, y, X_test = X[::20], y[::20], X
    else:
        X, y = load_iris(return_X_y=True)
        X = np.c_[X, X[:, 0]]
        X, y, X_test = X[::2], y[::2], X[1::2]
    clf = LeastSquaresClassifier(alpha=0.0).fit(X, y)
    coef, intercept = _minimum_norm_fit(X, y)
    np.testing.assert_allclose(clf.coef_, coef.T, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(clf.decision_function(X_test), X_test @ coef + intercept,
                               rtol=1e-7, atol=1e-9)


_EXACT_VARIANTS = [
    lambda: GaussianDiscriminantClassifier(),
    lambda: GaussianDiscriminantClassifier(covariance="per_class"),
    lambda: GaussianDiscriminantClassifier(predictive="student_t"),
    lambda: LeastSquaresClassifier(probabilities="ranked"),
    lambda: LeastSquaresClassifier(probabilities="discriminant"),
]


@pytest.mark.parametrize("make", _EXACT_VARIANTS)
@pytest.mark.parametrize("method", ["predict_proba", "predict_log_proba", "decision_function",
                                    "predict"])
def test_rows_whose_squared_distances_overflow_are_refused_not_nan(make, method):
    # Before: NaN probabilities from every Gaussian variant and least
    # squares' "ranked", and a NaN decision_function ("discriminant"), for
    # test rows beyond about 1e154 (issue 50).
    X, y = _WINE
    clf = make().fit(X, y)
    answer = getattr(clf, method)(X[:5] * 1e150)  # far out, still squarable
    assert np.isfinite(np.asarray(answer, dtype=float)).all() or method == "predict_log_proba"
    for scale in (1e155, 1e300):
        try:
            answer = getattr(clf, method)(X[:5] * scale)
        except ValueError as error:
            assert "too large for this model" in str(error)
        else:  # the ridge's scores are linear: finite, and so is what reads them
            assert not np.isnan(np.asarray(answer, dtype=float)).any()
    np.testing.assert_array_equal(clf.predict(X), make().fit(X, y).predict(X))


@pytest.mark.parametrize("make", [GaussianDiscriminantClassifier, LeastSquaresClassifier])
def test_features_whose_squares_underflow_are_refused_and_change_nothing(make):
    # Before: Wine scaled to 1e-170 gave 0.40 (the majority class), silently.
    X, y = _WINE
    X = (X - X.mean(0)) / X.std(0)
    assert make().fit(X * 1e-150, y).score(X * 1e-150, y) > 0.95
    with pytest.raises(ValueError, match="too small to square"):
        make().fit(X * 1e-170, y)
    clf = make().partial_fit(X, y, classes=[0, 1, 2])
    proba = clf.predict_proba(X)
    with pytest.raises(ValueError, match="too small to square"):
        clf.partial_fit(X * 1e-170, y)
    np.testing.assert_array_equal(clf.predict_proba(X), proba)


def test_the_ridge_solve_is_cholesky_s_and_refuses_an_indefinite_matrix():
    # S + αI of a ridge fit, by its Cholesky factor: numpy's LU answer on a
    # positive definite matrix; an indefinite one is refused, not solved.
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 60))
    S, C = A @ A.T + 0.1 * np.eye(40), rng.standard_normal((40, 3))
    np.testing.assert_allclose(linalg.solve(S.copy(), C), np.linalg.solve(S, C), rtol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        linalg.solve(S - 2 * np.abs(np.linalg.eigvalsh(S)).max() * np.eye(40), C)


def test_an_alpha_within_the_scatter_s_rounding_gives_the_minimum_norm_fit():
    # Fewer rows than features: S singular, and α = 10⁻³⁰⁰ is under its
    # rounding, S + αI numerically singular. The fit is then α = 0's,
    # the minimum-norm one, not LU's arithmetic on a singular matrix.
    X, y = _digits_features(150, 400)
    tiny = LeastSquaresClassifier(alpha=1e-300).fit(X, y)
    exact = LeastSquaresClassifier(alpha=0.0).fit(X, y)
    assert np.isfinite(tiny.coef_).all()
    np.testing.assert_allclose(tiny.coef_, exact.coef_, atol=1e-8 * np.abs(exact.coef_).max())
    np.testing.assert_array_equal(tiny.predict(X), y)
