"""Probabilities of the exact family, each against an independent computation.

Least squares: scikit-learn's LinearDiscriminantAnalysis fitted on the
scores of every training row (rows the classifier never keeps), and
temperature scaling fitted by SciPy on the scores of fresh rows. The
Gaussian's Student-t predictive: SciPy's multivariate t at the closed
form's parameters, and a Monte Carlo average of the Gaussian density over
SciPy's inverse-Wishart posterior.
"""

import numpy as np
import pytest
from scipy.linalg import null_space
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_expit, logsumexp
from scipy.stats import invwishart, multivariate_normal, multivariate_t
from sklearn.covariance import OAS
from sklearn.datasets import load_digits
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact.gaussian import fit_gaussian, oas_coefficient, oas_shrinkage
from skcl._exact.moments import GroupMoments
from skcl._exact.predictive import rank_first, student_t_log_likelihoods
from skcl.datasets import load_ci_split_iris, load_ci_split_wine


# A fixed α: on the weight check's 15 rows of 30 features, repeated, GCV
# fits the rows exactly (α → 0), and the discriminant of scores with no
# spread amplifies the solve's rounding past the check's 1e-7; GCV itself
# is checked at the defaults in test_estimator_checks.py.
@parametrize_with_checks([
    LeastSquaresClassifier(alpha=1.0, probabilities="discriminant", random_state=0),
    LeastSquaresClassifier(alpha=1.0, probabilities="ranked", random_state=0),
    GaussianDiscriminantClassifier(predictive="student_t", random_state=0),
    GaussianDiscriminantClassifier(predictive="student_t", covariance="per_class",
                                   random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _learn(estimator, data):
    for X, y in data.train:
        estimator.partial_fit(X, y, classes=data.classes)
    return estimator


def _stack(pairs):
    return np.concatenate([X for X, _ in pairs]), np.concatenate([y for _, y in pairs])


# ------------------------------------------------------------ least squares


@pytest.mark.parametrize("load", [load_ci_split_iris, load_ci_split_wine])
def test_discriminant_probabilities_are_lda_fitted_on_every_training_rows_scores(load):
    data = load()
    clf = _learn(LeastSquaresClassifier(probabilities="discriminant", random_state=0), data)
    X, y = _stack(data.train)
    X_test, _ = _stack(data.test)
    # The brute force: the raw scores of every training row, which the
    # classifier never saw together, in any orthonormal basis of the plane
    # one-hot scores live in (their sum is one).
    raw = LeastSquaresClassifier(**{**clf.get_params(), "probabilities": "scores"})
    raw.coef_, raw.intercept_ = clf.coef_, clf.intercept_
    basis = null_space(np.ones((1, len(data.classes))))
    Z = (X @ clf.coef_.T + clf.intercept_) @ basis
    Z_test = (X_test @ clf.coef_.T + clf.intercept_) @ basis
    np.testing.assert_allclose(((X @ clf.coef_.T + clf.intercept_).sum(1)), 1, atol=1e-9)
    centred = Z - np.array([Z[y == c].mean(0) for c in data.classes])[np.searchsorted(
        data.classes, y)]
    shrinkage = OAS(assume_centered=True).fit(centred).shrinkage_
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(Z, y)
    np.testing.assert_allclose(clf.predict_proba(X_test), lda.predict_proba(Z_test),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(clf.predict(X_test), lda.predict(Z_test))


def test_oas_shrinkage_is_scikit_learns():
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((40, 3)) @ np.array([[2.0, 0, 0], [0.5, 1, 0], [0, 0, 0.1]])
    rows -= rows.mean(0)
    expected = OAS(assume_centered=True).fit(rows).shrinkage_
    assert oas_coefficient(rows.T @ rows / len(rows), len(rows)) == pytest.approx(expected)


def test_oas_shrinkage_of_the_scatter_is_scikit_learns_of_the_standardised_rows():
    # More features than one block of rows of R (256), and a constant one
    # (σ = 1 there, as StandardScaler): R is summed a few rows at a time.
    rng = np.random.default_rng(4)
    rows = rng.standard_normal((900, 600)) * rng.uniform(0.1, 10, 600)
    rows[:, 5] = 3.0
    rows -= rows.mean(0)
    std = rows.std(0)
    standardised = rows / np.where(std > 0, std, 1.0)
    expected = OAS(assume_centered=True).fit(standardised).shrinkage_
    shrinkage, target = oas_shrinkage(rows.T @ rows, len(rows))
    assert shrinkage == pytest.approx(expected, rel=1e-10)
    np.testing.assert_allclose(target[std > 0], std[std > 0] ** 2, rtol=1e-10)
    assert target[5] == pytest.approx(np.mean(std[std > 0] ** 2))


def test_two_class_discriminant_is_lda_on_the_one_score():
    X, y = load_digits(n_class=2, return_X_y=True)
    clf = LeastSquaresClassifier(probabilities="discriminant", random_state=0).fit(X, y)
    s = (X @ clf.coef_.T + clf.intercept_)
    lda = LinearDiscriminantAnalysis(solver="lsqr").fit(s, y)
    np.testing.assert_allclose(clf.predict_proba(X), lda.predict_proba(s), rtol=1e-6,
                               atol=1e-9)
    # The log-odds are increasing in the ridge score (its sign need not agree).
    order = np.argsort(s[:, 0])
    assert (np.diff(clf.decision_function(X)[order]) >= -1e-9).all()


def _gaussian_classes(n, rng):
    """Four Gaussian classes in 3-d with a shared covariance: their ridge scores are Gaussian."""
    means = np.array([[0, 0, 0], [2, 0, 0], [0, 1.5, 0], [1, 1, 1.5]], dtype=float)
    mixing = np.array([[1.0, 0.3, 0], [0, 1.0, 0.2], [0, 0, 0.8]])
    y = rng.integers(0, 4, n)
    return means[y] + rng.standard_normal((n, 3)) @ mixing, y


def test_score_temperature_matches_temperature_scaling_fitted_on_fresh_rows():
    rng = np.random.default_rng(0)
    X, y = _gaussian_classes(20000, rng)
    clf = LeastSquaresClassifier(validation_fraction=0, random_state=0).fit(X, y)
    X_new, y_new = _gaussian_classes(200000, rng)
    s = clf.decision_function(X_new)

    def log_loss(log_a):
        z = np.exp(log_a) * s
        return np.mean(logsumexp(z, axis=1) - z[np.arange(len(z)), y_new])

    a = np.exp(minimize_scalar(log_loss, bounds=(-5, 10), method="bounded").x)
    ours = clf.predict_proba(X_new)
    # Its temperature, read back from the probabilities: log p_k − log p_j = a (s_k − s_j).
    a_ours = np.log(ours[0, 1] / ours[0, 0]) / (s[0, 1] - s[0, 0])
    assert a_ours == pytest.approx(a, rel=0.01)
    np.testing.assert_array_equal(ours.argmax(1), clf.predict(X_new).astype(int))


def test_two_class_temperature_matches_platt_without_intercept_on_fresh_rows():
    rng = np.random.default_rng(1)
    X, y = _gaussian_classes(20000, rng)
    X, y = X[y < 2], y[y < 2]
    clf = LeastSquaresClassifier(validation_fraction=0, random_state=0).fit(X, y)
    X_new, y_new = _gaussian_classes(200000, rng)
    X_new, y_new = X_new[y_new < 2], y_new[y_new < 2]
    s = clf.decision_function(X_new)
    sign = np.where(y_new == 1, 1, -1)
    a = np.exp(minimize_scalar(lambda la: -np.mean(log_expit(np.exp(la) * sign * s)),
                               bounds=(-5, 10), method="bounded").x)
    p = clf.predict_proba(X_new)[:, 1]
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-a * s)), atol=0.02)


@pytest.mark.parametrize("probabilities", ["scores", "discriminant", "ranked"])
def test_probabilities_are_finite_sum_to_one_and_agree_with_predict(probabilities):
    data = load_ci_split_iris()
    clf = _learn(LeastSquaresClassifier(probabilities=probabilities, random_state=0), data)
    X, _ = _stack(data.test)
    for rows in (X, 1e6 * X, -1e6 * X, X.astype(np.float32)):
        P = clf.predict_proba(rows)
        assert np.isfinite(P).all() and (P >= 0).all()
        np.testing.assert_allclose(P.sum(1), 1, atol=1e-12)
        np.testing.assert_array_equal(clf.classes_[P.argmax(1)], clf.predict(rows))
        np.testing.assert_allclose(np.exp(clf.predict_log_proba(rows)), P)


def _closest_ranking_first(pi, t):
    """Brute force: minimise KL(π ‖ p) over the simplex with p_t ≥ p_k, by SLSQP."""
    k = len(pi)
    support = pi > 0

    def kl(p):
        return float(np.sum(pi[support] * (np.log(pi[support]) - np.log(p[support]))))

    constraints = [{"type": "eq", "fun": lambda p: p.sum() - 1}] + [
        {"type": "ineq", "fun": lambda p, j=j: p[t] - p[j]} for j in range(k) if j != t]
    start = np.full(k, 1.0 / k)
    result = minimize(kl, start, method="SLSQP", bounds=[(1e-12, 1)] * k,
                      constraints=constraints, options={"ftol": 1e-14, "maxiter": 500})
    return result.x


# Every factorisation the exact family's solves and probabilities run.
_FACTORISATIONS = [(np.linalg, name) for name in ("eigh", "cholesky", "svd", "solve", "inv")]


@pytest.mark.parametrize("estimator", [
    LeastSquaresClassifier(),
    LeastSquaresClassifier(probabilities="ranked"),
    LeastSquaresClassifier(probabilities="discriminant"),
    GaussianDiscriminantClassifier(),
    GaussianDiscriminantClassifier(predictive="student_t", covariance="per_class"),
])
def test_predict_proba_twice_solves_once(estimator, monkeypatch):
    # What a prediction needs is solved at its first use and then read: the
    # second call runs no solve, no factorisation, no temperature's search.
    data = load_ci_split_iris()
    for X, y in data.train:
        estimator.partial_fit(X, y, classes=data.classes)
    calls = []

    def counted(name, function):
        def wrapper(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)
        return wrapper

    solve = type(estimator)._solve
    monkeypatch.setattr(type(estimator), "_solve",
                        lambda self, *args: counted("_solve", solve)(self, *args))
    for module, name in _FACTORISATIONS:
        monkeypatch.setattr(module, name, counted(name, getattr(module, name)))
    X = np.concatenate([X for X, _ in data.test])
    first = estimator.predict_proba(X)
    assert calls.count("_solve") == 1
    calls.clear()
    second = estimator.predict_proba(X)
    assert calls == []
    np.testing.assert_array_equal(second, first)
    # A new task makes the next prediction solve again, once.
    estimator.partial_fit(*data.train[0])
    estimator.predict_proba(X)
    assert calls.count("_solve") == 1


def test_rank_first_is_the_constrained_kl_minimiser():
    rng = np.random.default_rng(11)
    for k in (2, 3, 5):
        pi = rng.dirichlet(np.full(k, 0.5), size=40)
        first = rng.integers(0, k, 40)
        ours = np.exp(rank_first(np.log(pi), first))
        np.testing.assert_allclose(ours.sum(1), 1, atol=1e-12)
        np.testing.assert_array_equal(ours.argmax(1), first)
        for row in range(len(pi)):
            expected = _closest_ranking_first(pi[row], first[row])
            np.testing.assert_allclose(ours[row], expected, atol=2e-5)
        # Where the first column already ranks first, π itself.
        kept = pi.argmax(1) == first
        np.testing.assert_array_equal(ours[kept], np.exp(np.log(pi[kept])))


def test_rank_first_by_hand_and_at_extremes():
    # π = (0.2, 0.7, 0.1), class 0 first: pool 0 with 1 at (0.2 + 0.7)/2.
    p = np.exp(rank_first(np.log([[0.2, 0.7, 0.1]]), np.array([0])))[0]
    np.testing.assert_allclose(p, [0.45, 0.45, 0.1], atol=1e-8)
    assert p[0] > p[1]
    # A tie is broken towards the first column; a class with no rows stays at 0.
    with np.errstate(divide="ignore"):
        log_pi = np.log([[0.25, 0.5, 0.25, 0.0]])
    p = np.exp(rank_first(log_pi, np.array([2])))[0]
    np.testing.assert_allclose(p, [0.25, 0.375, 0.375, 0.0], atol=1e-8)
    assert p.argmax() == 2 and p[3] == 0
    # Log-probabilities far beyond float64's exp: still finite and normalised.
    log_pi = np.array([[-1e6, 0.0, -2e6], [-5.0, -1e300, -0.01]])
    log_pi -= logsumexp(log_pi, axis=1, keepdims=True)
    out = rank_first(log_pi, np.array([0, 1]))
    assert np.isfinite(out[:, :2]).all()
    np.testing.assert_allclose(logsumexp(out, axis=1), 0, atol=1e-12)
    np.testing.assert_array_equal(out.argmax(1), [0, 1])


@pytest.mark.parametrize("load", [load_ci_split_iris, load_ci_split_wine])
def test_ranked_probabilities_are_lda_on_the_training_scores_ranked_by_the_ridge(load):
    data = load()
    clf = _learn(LeastSquaresClassifier(probabilities="ranked", random_state=0), data)
    X, y = _stack(data.train)
    X_test, _ = _stack(data.test)
    basis = null_space(np.ones((1, len(data.classes))))
    Z = (X @ clf.coef_.T + clf.intercept_) @ basis
    scores_test = X_test @ clf.coef_.T + clf.intercept_
    centred = Z - np.array([Z[y == c].mean(0) for c in data.classes])[np.searchsorted(
        data.classes, y)]
    shrinkage = OAS(assume_centered=True).fit(centred).shrinkage_
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(Z, y)
    lda_proba = lda.predict_proba(scores_test @ basis)
    ridge = scores_test.argmax(1)
    expected = np.array([pi if pi.argmax() == t else _closest_ranking_first(pi, t)
                         for pi, t in zip(lda_proba, ridge)])
    ours = clf.predict_proba(X_test)
    np.testing.assert_allclose(ours, expected, atol=2e-5)
    # predict and decision_function are the ridge's, as with "scores".
    np.testing.assert_array_equal(clf.predict(X_test), data.classes[ridge])
    np.testing.assert_allclose(clf.decision_function(X_test), scores_test)


def test_a_declared_class_with_no_rows():
    data = load_ci_split_wine()
    X, y = data.train[0]
    scores = LeastSquaresClassifier(random_state=0).partial_fit(X, y, classes=data.classes)
    disc = LeastSquaresClassifier(probabilities="discriminant", random_state=0).partial_fit(
        X, y, classes=data.classes)
    unseen = np.setdiff1d(data.classes, y)
    column = np.searchsorted(data.classes, unseen)
    assert (disc.predict_proba(X)[:, column] == 0).all()
    # Softmax of the scores keeps the ridge's (score 0) column, so that its
    # argmax stays predict's, and puts little on it.
    P = scores.predict_proba(X)
    assert P[:, column].max() < 0.05
    np.testing.assert_array_equal(data.classes[P.argmax(1)], scores.predict(X))
    ranked = LeastSquaresClassifier(probabilities="ranked", random_state=0).partial_fit(
        X, y, classes=data.classes)
    P = ranked.predict_proba(X)
    assert (P[:, column] == 0).all()
    np.testing.assert_array_equal(data.classes[P.argmax(1)], scores.predict(X))


def test_the_discriminant_beats_the_ridges_argmax_where_it_masks_a_class():
    # Iris: the middle class's ridge score is never the highest for many of
    # its rows (masking, Hastie et al. 2009, 4.2); LDA on the scores is not fooled.
    data = load_ci_split_iris()
    X, y = _stack(data.test)
    ridge = _learn(LeastSquaresClassifier(random_state=0), data)
    disc = _learn(LeastSquaresClassifier(probabilities="discriminant", random_state=0), data)
    assert (disc.predict(X) == y).mean() >= (ridge.predict(X) == y).mean() + 0.1


def test_a_bad_probabilities_value_is_rejected_and_changes_nothing():
    data = load_ci_split_wine()
    clf = _learn(LeastSquaresClassifier(random_state=0), data)
    coef, moments = clf.coef_.copy(), clf.moments_
    clf.set_params(probabilities="softmax")
    X, y = data.train[0]
    with pytest.raises(InvalidParameterError, match="probabilities"):
        clf.partial_fit(X, y)
    assert clf.moments_ is moments
    np.testing.assert_array_equal(clf.coef_, coef)


# ------------------------------------------------------------ Student-t


def _tiny(rng, per_class=(6, 9)):
    """Two classes in 2-d, few rows: the t differs from the plug-in."""
    X = np.concatenate([rng.standard_normal((n, 2)) * [1.0, 0.5] + 2 * c
                        for c, n in enumerate(per_class)])
    y = np.repeat(np.arange(len(per_class)), per_class)
    return X, y


def _two_pass_fit(X, y, s, shared):
    """μ_g, Σ_g(s), n_g and the rows behind Σ, from the rows."""
    classes = np.unique(y)
    means = np.array([X[y == c].mean(0) for c in classes])
    scatters = [(X[y == c] - means[i]).T @ (X[y == c] - means[i]) for i, c in enumerate(classes)]
    counts = np.array([(y == c).sum() for c in classes], dtype=float)
    W = sum(scatters)
    nu = np.trace(W / len(X)) / X.shape[1]
    eye = np.eye(X.shape[1])
    if shared:
        sigma = [(1 - s) * W / len(X) + s * nu * eye] * len(classes)
        rows = np.full(len(classes), float(len(X)))
    else:
        sigma = [(1 - s) * S / n + s * nu * eye for S, n in zip(scatters, counts)]
        rows = counts
    return means, sigma, counts, rows, W, scatters, nu


def _ours(X, y, s, shared, X_eval):
    means, _, counts, _, W, scatters, _ = _two_pass_fit(X, y, s, shared)
    moments = GroupMoments((0, 1), counts, means, W, np.array(scatters))
    fit = fit_gaussian(moments, s, shared)
    return student_t_log_likelihoods(fit, s, X_eval)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("s", [0.0, 0.3, 1.0])
def test_student_t_is_scipys_multivariate_t_at_the_closed_forms_parameters(shared, s):
    rng = np.random.default_rng(5)
    X, y = _tiny(rng)
    X_eval = rng.standard_normal((7, 2)) * 3
    means, sigma, counts, rows, *_ = _two_pass_fit(X, y, s, shared)
    priors = counts / counts.sum()
    expected = np.empty((len(X_eval), 2))
    for g in range(2):
        if s == 1:  # Σ known: a Gaussian widened by the mean's uncertainty
            expected[:, g] = multivariate_normal(means[g], sigma[g] * (1 + 1 / counts[g])).logpdf(
                X_eval)
        else:
            pseudo = s / (1 - s) * rows[g]
            f = pseudo + rows[g] + 2
            shape = sigma[g] * (pseudo + rows[g]) / f * (1 + 1 / counts[g])
            expected[:, g] = multivariate_t(means[g], shape, df=f).logpdf(X_eval)
    np.testing.assert_allclose(_ours(X, y, s, shared, X_eval), expected + np.log(priors),
                               rtol=1e-10)


@pytest.mark.parametrize("shared", [True, False])
def test_student_t_is_the_gaussian_averaged_over_the_inverse_wishart_posterior(shared):
    # The derivation, not just the formula: draw (Σ, μ_g) from the posterior
    # that the shrinkage implies, IW(n₀ + n + D + 1, n₀ν I + S) and
    # N(μ̂_g, Σ/n_g), and average N(x; μ_g, Σ).
    rng = np.random.default_rng(6)
    X, y = _tiny(rng)
    s, d = 0.3, 2
    means, sigma, counts, rows, W, scatters, nu = _two_pass_fit(X, y, s, shared)
    X_eval = np.array([[0.5, 0.2], [3.0, -1.0], [1.0, 1.5]])  # not deep in a tail: MC noise
    ours = _ours(X, y, s, shared, X_eval) - np.log(counts / counts.sum())
    draws = 100000
    for g in range(2):
        scatter = W if shared else scatters[g]
        pseudo = s / (1 - s) * rows[g]
        posterior = invwishart(df=pseudo + rows[g] + d + 1, scale=pseudo * nu * np.eye(d) + scatter)
        # Its mean is the shrunk covariance the plug-in uses.
        np.testing.assert_allclose(posterior.mean(), sigma[g], rtol=1e-12)
        Sigmas = posterior.rvs(draws, random_state=np.random.default_rng(10 + g))
        L = np.linalg.cholesky(Sigmas / counts[g])
        mus = means[g] + np.einsum("nij,nj->ni", L, rng.standard_normal((draws, d)))
        diff = X_eval[None] - mus[:, None]  # (draws, points, d)
        maha = np.einsum("npi,nij,npj->np", diff, np.linalg.inv(Sigmas), diff)
        log_dens = -0.5 * (maha + np.log(np.linalg.det(Sigmas))[:, None] + d * np.log(2 * np.pi))
        monte_carlo = logsumexp(log_dens, axis=0) - np.log(draws)
        np.testing.assert_allclose(monte_carlo, ours[:, g], atol=0.02)


def test_student_t_predictive_on_a_classifier():
    data = load_ci_split_wine()
    plugin = _learn(GaussianDiscriminantClassifier(random_state=0), data)
    t = _learn(GaussianDiscriminantClassifier(predictive="student_t", random_state=0), data)
    X, _ = _stack(data.test)
    for rows in (X, 1e6 * X):
        P = t.predict_proba(rows)
        assert np.isfinite(P).all()
        np.testing.assert_allclose(P.sum(1), 1, atol=1e-12)
        np.testing.assert_array_equal(t.classes_[P.argmax(1)], t.predict(rows))
    # Far from every class the plug-in is certain; the t is less so.
    far = 30 * X[:5]
    assert t.predict_proba(far).max(1).mean() < plugin.predict_proba(far).max(1).mean()
    # The fit is the same: the option only changes how x is integrated.
    np.testing.assert_array_equal(t.means_, plugin.means_)
    assert t.shrinkage_ == plugin.shrinkage_
