"""The exact family's hyperparameters from every row, and its solve on demand.

GCV is checked against a brute force (scikit-learn's Ridge at each α and
the hat matrix written out), OAS against scikit-learn's OAS on the same
rows, and the defaults against scikit-learn's RidgeClassifierCV and
LinearDiscriminantAnalysis(shrinkage="auto") on all the data.
"""

import pickle

import numpy as np
import pytest
from sklearn.covariance import OAS
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge, RidgeClassifierCV
from sklearn.utils.validation import check_is_fitted

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact import least_squares
from skcl._exact.gaussian import oas_shrinkage
from skcl._exact.least_squares import (
    MAX_MEAN_LEVERAGE,
    RELATIVE_ALPHA_GRID,
    class_targets,
    gcv_scores,
    ridge_spectrum,
)
from skcl._exact.moments import coarsen
from skcl._exact.task import moments_of_rows
from skcl.datasets import (
    load_ci_split_digits,
    load_ci_split_iris,
    load_ci_split_wine,
    load_di_split_digits,
)


def _sequences():
    out = {}
    for name, load in [("iris", load_ci_split_iris), ("wine", load_ci_split_wine),
                       ("digits", load_ci_split_digits)]:
        data = load()
        out[name] = (list(data.train), list(data.test), np.asarray(data.classes))
    return out


SEQUENCES = _sequences()


def _stack(tasks):
    return np.concatenate([X for X, _ in tasks]), np.concatenate([y for _, y in tasks])


def _learn(clf, tasks, classes):
    for X, y in tasks:
        clf.partial_fit(X, y, classes=classes)
    return clf


def _class_moments(X, y, w):
    keys = list(np.unique(y))
    return moments_of_rows(X, np.searchsorted(keys, y), w, keys)


# --------------------------------------------------------------------- GCV


def _brute_force_gcv(X, T, w, alpha):
    """n·RSS/(n − tr H)² with H written out, the fit by scikit-learn's Ridge."""
    n = w.sum()
    ridge = Ridge(alpha=alpha, solver="cholesky").fit(X, T, sample_weight=w)
    rss = float((w[:, None] * (T - ridge.predict(X).reshape(T.shape)) ** 2).sum())
    # Weighted ridge with an unpenalised intercept: rows √w·[1, x].
    A = np.sqrt(w)[:, None] * np.hstack([np.ones((len(X), 1)), X])
    penalty = alpha * np.eye(A.shape[1])
    penalty[0, 0] = 0.0
    H = A @ np.linalg.solve(A.T @ A + penalty, A.T)
    return n * rss / (n - np.trace(H)) ** 2


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gcv_equals_a_brute_force_hat_matrix_at_every_alpha(n_classes):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6)) @ rng.standard_normal((6, 6)) + 5
    y = rng.integers(0, n_classes, len(X))
    X[:, 0] += y  # some signal
    codes = class_targets(n_classes)
    for w in [np.ones(len(X)), rng.random(len(X)) * 2]:
        moments = _class_moments(X, y, w)
        spectrum = ridge_spectrum(moments, codes[list(moments.keys)])
        alphas = np.array([1e-4, 0.1, 3.0, 100.0])
        ours = gcv_scores(spectrum, alphas)
        brute = [_brute_force_gcv(X, codes[y], w, a) for a in alphas]
        np.testing.assert_allclose(ours, brute, rtol=1e-9)


def test_gcv_with_integer_weights_counts_repeated_rows():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((30, 4)), rng.integers(0, 3, 30)
    w = rng.integers(1, 4, 30).astype(float)
    codes = class_targets(3)
    alphas = np.array([0.01, 1.0, 10.0])
    weighted = _class_moments(X, y, w)
    repeated = _class_moments(np.repeat(X, w.astype(int), 0), np.repeat(y, w.astype(int)),
                              np.ones(int(w.sum())))
    np.testing.assert_allclose(
        gcv_scores(ridge_spectrum(weighted, codes[list(weighted.keys)]), alphas),
        gcv_scores(ridge_spectrum(repeated, codes[list(repeated.keys)]), alphas), rtol=1e-10)


def test_gcv_with_more_features_than_rows_is_exact_and_capped_at_a_mean_leverage(monkeypatch):
    # D ≥ rows: at a small α the rows are fitted almost exactly, and the
    # residual must come from the cancellation-free form to match.
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((15, 40)), np.arange(15) % 3
    codes = class_targets(3)
    moments = _class_moments(X, y, np.ones(15))
    spectrum = ridge_spectrum(moments, codes[list(moments.keys)])
    alphas = np.array([1e-6, 1e-2, 1.0, 30.0, 1e3]) * spectrum.scale
    scores = gcv_scores(spectrum, alphas)
    leverage = np.array([1 + (spectrum.values / (spectrum.values + a)).sum() for a in alphas])
    capped = leverage / 15 > MAX_MEAN_LEVERAGE
    assert capped[0] and not capped[-1]
    assert np.isinf(scores[capped]).all()
    brute = [_brute_force_gcv(X, codes[y], np.ones(15), a) for a in alphas[~capped]]
    np.testing.assert_allclose(scores[~capped], brute, rtol=1e-8)
    # Uncapped, at every α (RSS of order α² at the smallest): still exact.
    monkeypatch.setattr(least_squares, "MAX_MEAN_LEVERAGE", 1.0)
    brute = [_brute_force_gcv(X, codes[y], np.ones(15), a) for a in alphas]
    np.testing.assert_allclose(gcv_scores(spectrum, alphas), brute, rtol=1e-6)
    monkeypatch.undo()
    # Nothing but the intercept fits one row: every α is capped.
    one = _class_moments(X[:1], y[:1], np.ones(1))
    assert np.isinf(gcv_scores(ridge_spectrum(one, np.ones((1, 1))), [1.0])).all()


@pytest.mark.parametrize("name", ["iris", "wine", "digits"])
def test_default_ridge_is_as_accurate_as_ridge_classifier_cv_on_the_same_grid(name):
    train, test, _ = SEQUENCES[name]
    X, y = _stack(train)
    X_test, y_test = _stack(test)
    ours = LeastSquaresClassifier().fit(X, y)
    centred = X - X.mean(0)
    grid = np.asarray(RELATIVE_ALPHA_GRID) * (centred**2).sum() / X.shape[1]
    theirs = RidgeClassifierCV(alphas=grid).fit(X, y)
    assert np.isclose(grid, ours.alpha_, rtol=1e-9).any()
    assert ours.score(X_test, y_test) >= theirs.score(X_test, y_test)
    # Measured: the same α on all three (GCV and RidgeClassifierCV's
    # leave-one-out agree here): 1.13, 0.875, 2.91.
    np.testing.assert_allclose(ours.alpha_, theirs.alpha_, rtol=1e-9)


# --------------------------------------------------------------------- OAS


def test_oas_equals_sklearn_on_the_standardised_rows_about_their_group_means():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 5)) @ rng.standard_normal((5, 5)) * [1, 10, 100, 0.1, 1]
    y = rng.integers(0, 3, 60)
    X[:, 4] = 2.0  # a constant feature: unit scale, as StandardScaler gives it
    moments = _class_moments(X, y, np.ones(len(X)))
    s, target = oas_shrinkage(moments.scatter, moments.total)
    centred = X - moments.means[np.searchsorted(moments.keys, y)]
    sigma = np.sqrt((centred**2).mean(0))
    sigma[sigma == 0] = 1.0
    expected = OAS(assume_centered=True).fit(centred / sigma).shrinkage_
    np.testing.assert_allclose(s, expected, rtol=1e-12)
    variances = (centred**2).mean(0)
    np.testing.assert_allclose(target[:4], variances[:4], rtol=1e-12)
    np.testing.assert_allclose(target[4], variances[:4].mean(), rtol=1e-12)


def test_default_gaussian_covariance_is_the_oas_shrunk_one():
    train, _, classes = SEQUENCES["wine"]
    X, y = _stack(train)
    clf = GaussianDiscriminantClassifier().fit(X, y)
    centred = X - clf.means_[np.searchsorted(classes, y)]
    empirical = centred.T @ centred / len(X)
    sigma = np.sqrt(np.diag(empirical))
    s = OAS(assume_centered=True).fit(centred / sigma).shrinkage_
    expected = (1 - s) * empirical + s * np.diag(np.diag(empirical))
    ours = clf.gaussians_.covariances()
    np.testing.assert_allclose(clf.shrinkage_, s, rtol=1e-12)
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("name", ["iris", "wine", "digits"])
def test_default_gaussian_is_as_accurate_as_sklearn_lda_with_automatic_shrinkage(name):
    train, test, _ = SEQUENCES[name]
    X, y = _stack(train)
    X_test, y_test = _stack(test)
    ours = GaussianDiscriminantClassifier().fit(X, y).score(X_test, y_test)
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(X, y)
    # Measured: 100 vs 96.7 (Iris), 100 vs 100 (Wine), 95.7 vs 95.4 (digits).
    assert ours >= lda.score(X_test, y_test)


# ---------------------------------------------------------- no randomness


def _outputs(clf, X):
    if isinstance(clf, LeastSquaresClassifier):
        return clf.decision_function(X)
    return clf.predict_proba(X)


ESTIMATORS = [GaussianDiscriminantClassifier, LeastSquaresClassifier,
              lambda **kw: GaussianDiscriminantClassifier(covariance="per_class", **kw)]


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("name", ["wine", "digits"])
def test_at_defaults_random_state_changes_nothing_and_a_sequence_is_one_fit(make, name):
    train, test, classes = SEQUENCES[name]
    X, y = _stack(train)
    X_test, _ = _stack(test)
    reference = _outputs(make().fit(X, y), X_test)
    for seed in [None, 0, 1, 12345]:
        np.testing.assert_allclose(_outputs(make(random_state=seed).fit(X, y), X_test),
                                   reference, rtol=1e-8, atol=1e-8)
        sequence = _learn(make(random_state=seed), train, classes)
        np.testing.assert_allclose(_outputs(sequence, X_test), reference, rtol=1e-8, atol=1e-8)
        assert sequence.heldout_moments_.total == 0


@pytest.mark.parametrize("make, name", [(GaussianDiscriminantClassifier, "shrinkage"),
                                        (LeastSquaresClassifier, "alpha")])
def test_the_held_out_rule_stays_an_option_and_depends_on_the_seed(make, name):
    train, _, classes = SEQUENCES["digits"]
    chosen = set()
    for seed in range(3):
        clf = _learn(make(**{name: "heldout"}, random_state=seed), train, classes)
        assert clf.heldout_moments_.total > 0
        assert np.isfinite(getattr(clf, f"{name}_scores_")).all()
        chosen.add(round(getattr(clf, f"{name}_"), 12))
    assert len(chosen) > 1 or name == "shrinkage"  # measured: α moves with the seed


# ------------------------------------------------------------ lazy solve


@pytest.mark.parametrize("make", [GaussianDiscriminantClassifier, LeastSquaresClassifier])
def test_partial_fit_only_adds_moments_and_the_first_use_solves_once(make, monkeypatch):
    train, test, classes = SEQUENCES["wine"]
    X_test, y_test = _stack(test)
    solves = []
    original = make._solve
    monkeypatch.setattr(make, "_solve", lambda self, *a: solves.append(1) or original(self, *a))
    clf = make()
    chunks = [(X[i : i + 7], y[i : i + 7]) for X, y in train for i in range(0, len(X), 7)]
    _learn(clf, chunks, classes)
    assert solves == []
    check_is_fitted(clf)
    first = _outputs(clf, X_test)
    clf.score(X_test, y_test)
    assert solves == [1]
    # A pickle taken before the solve solves on its own, to the same model.
    clf2 = _learn(make(), chunks, classes)
    restored = pickle.loads(pickle.dumps(clf2))
    np.testing.assert_array_equal(_outputs(restored, X_test), first)
    assert solves == [1, 1]
    clf.partial_fit(*chunks[0])  # the solved attributes are stale: dropped, not recomputed
    assert solves == [1, 1] and not set(make._solved_attributes) & set(vars(clf))
    _outputs(clf, X_test)
    assert solves == [1, 1, 1]
    np.testing.assert_allclose(_outputs(make().fit(*_stack(train)), X_test), first,
                               rtol=1e-8, atol=1e-8)


def test_attribute_access_triggers_the_solve_and_unknown_names_still_fail():
    train, _, classes = SEQUENCES["iris"]
    clf = _learn(LeastSquaresClassifier(), train, classes)
    assert "coef_" not in vars(clf)
    assert clf.coef_.shape == (3, 4) and "coef_" in vars(clf)
    with pytest.raises(AttributeError, match="no_such_"):
        _ = clf.no_such_
    with pytest.raises(AttributeError):
        _ = LeastSquaresClassifier().coef_


# ---------------------------------------------------- components per task


def test_task_class_components_are_the_class_ones_on_a_class_incremental_sequence():
    # Each class in one task: (task, class) groups are the class groups.
    train, test, classes = SEQUENCES["digits"]
    X_test, _ = _stack(test)
    a = _learn(GaussianDiscriminantClassifier(components="class"), train, classes)
    b = _learn(GaussianDiscriminantClassifier(components="task_class"), train, classes)
    np.testing.assert_allclose(a.predict_proba(X_test), b.predict_proba(X_test),
                               rtol=1e-8, atol=1e-10)
    assert coarsen(b.moments_, lambda key: key[1]).keys == tuple(classes)


def _di_split_digits():
    """DI Split digits: even (0) vs odd (1), two digits a task."""
    data = load_di_split_digits()
    return list(data.train), list(data.test), np.asarray(data.classes)


def test_auto_components_keep_tasks_apart_on_di_and_together_in_chunks_of_ci():
    train, test, classes = _di_split_digits()
    X_test, _ = _stack(test)
    auto = _learn(GaussianDiscriminantClassifier(), train, classes)
    per_task = _learn(GaussianDiscriminantClassifier(components="task_class"), train, classes)
    np.testing.assert_allclose(auto.predict_proba(X_test), per_task.predict_proba(X_test),
                               rtol=1e-10, atol=1e-12)
    assert len(auto.component_classes_) == 10
    # Measured: 97.5 % against 92.5 % with one component per class.
    assert auto.score(*_stack(test)) >= 0.96
    # A class-incremental stream cut into many calls: each class's chunks are
    # one distribution, so one component per class, the one fit on all rows.
    train, test, classes = SEQUENCES["digits"]
    chunks = [(X[i::6], y[i::6]) for X, y in train for i in range(6)]
    chunked = _learn(GaussianDiscriminantClassifier(), chunks, classes)
    assert len(chunked.component_classes_) == 10
    whole = GaussianDiscriminantClassifier().fit(*_stack(train))
    X_test, _ = _stack(test)
    np.testing.assert_allclose(chunked.predict_proba(X_test), whole.predict_proba(X_test),
                               rtol=1e-8, atol=1e-8)


# ------------------------------------------------------------ the JAX solve


JAX_RTOL = 1e-9  # another eigensolver's rounding, well-conditioned problems


@pytest.mark.parametrize("params", [{}, {"covariance": "per_class"}, {"shrinkage": 0.3},
                                    {"shrinkage": "heldout", "random_state": 0}], ids=str)
def test_the_gaussian_solve_through_jax_equals_numpys(params):
    train, test, classes = SEQUENCES["wine"]
    X_test, _ = _stack(test)
    host = _learn(GaussianDiscriminantClassifier(backend="numpy", **params), train, classes)
    jax = _learn(GaussianDiscriminantClassifier(backend="jax", **params), train, classes)
    assert jax.shrinkage_ == pytest.approx(host.shrinkage_, rel=1e-12)
    np.testing.assert_allclose(jax.predict_log_proba(X_test), host.predict_log_proba(X_test),
                               rtol=JAX_RTOL, atol=JAX_RTOL)


@pytest.mark.parametrize("alpha", ["auto", 0.5, "heldout"])
@pytest.mark.parametrize("name", ["wine", "digits"])
def test_the_ridge_solve_through_jax_equals_numpys(alpha, name):
    train, test, classes = SEQUENCES[name]
    X_test, _ = _stack(test)
    host = _learn(LeastSquaresClassifier(alpha, backend="numpy", random_state=0), train, classes)
    jax = _learn(LeastSquaresClassifier(alpha, backend="jax", random_state=0), train, classes)
    assert jax.alpha_ == pytest.approx(host.alpha_, rel=1e-12)
    if alpha == "auto":
        np.testing.assert_allclose(jax.alpha_scores_, host.alpha_scores_, rtol=1e-8)
    np.testing.assert_allclose(jax.decision_function(X_test), host.decision_function(X_test),
                               rtol=JAX_RTOL, atol=JAX_RTOL)


def test_the_jax_solve_equals_numpys_at_two_thousand_features_and_sets_no_global_x64():
    import jax

    rng = np.random.default_rng(5)
    d, n = 2000, 6000
    X = rng.standard_normal((n, d)) * np.linspace(0.5, 2, d)  # well conditioned
    y = rng.integers(0, 10, n)
    X[np.arange(n), y] += 3.0
    host = LeastSquaresClassifier(backend="numpy").fit(X, y)
    device = LeastSquaresClassifier(backend="jax").fit(X, y)
    assert device.alpha_ == pytest.approx(host.alpha_, rel=1e-12)
    np.testing.assert_allclose(device.coef_, host.coef_, rtol=JAX_RTOL,
                               atol=JAX_RTOL * np.abs(host.coef_).max())
    np.testing.assert_allclose(device.intercept_, host.intercept_, rtol=JAX_RTOL,
                               atol=JAX_RTOL)
    assert not jax.config.jax_enable_x64  # float64 was scoped to the solve
