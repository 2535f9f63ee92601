"""Every setting is checked where it acts, and allowed settings give finite numbers.

Settings that only a prediction reads (the Laplace predictive's, least
squares' ``probabilities``, the Gaussian's ``predictive``) may change by
``set_params`` after fitting, as the user guide shows: each prediction
checks them with the constraints and the message of ``fit``. The labels'
type is kept under growth, and the messages of bad labels and weights name
what is wrong (issue 38).
"""

import copy

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skcl import (
    AQCClassifier,
    EWCClassifier,
    GaussianDiscriminantClassifier,
    LeastSquaresClassifier,
)

FAST = dict(n_epochs=5, batch_size=32, learning_rate=0.1, random_state=0)


@pytest.fixture(scope="module")
def ewc(iris_xy):
    X, y = iris_xy
    return EWCClassifier(alpha=10.0, **FAST).partial_fit(X, y, classes=[0, 1, 2])


@pytest.fixture(scope="module")
def aqc_mlp(iris_xy):
    """One AQC per structure, GGN curvature, one hidden layer."""
    X, y = iris_xy
    return {structure: AQCClassifier(curvature="ggn", structure=structure,
                                     hidden_layer_sizes=(8,), **FAST).fit(X, y)
            for structure in ("full", "kron", "diag")}


def fit_message(estimator, X, y):
    """The message ``fit`` gives for the estimator's settings."""
    with pytest.raises(InvalidParameterError) as raised:
        clone(estimator).fit(X, y)
    return str(raised.value)


BAD_PREDICTION_SETTINGS = [
    ("predictive_prior_precision", float("nan")),
    ("predictive_prior_precision", -1.0),
    ("predictive_prior_precision", 0.0),
    ("predictive_prior_precision", float("inf")),
    ("predictive_prior_precision", True),
    ("predictive_prior_precision", "Evidence"),
    ("n_predict_samples", 0),
    ("n_predict_samples", -5),
    ("n_predict_samples", 2.5),
    ("n_predict_samples", True),
    ("predictive", "bogus"),
    ("predictive", "MAP"),
    ("alpha", -1.0),
]


@pytest.mark.parametrize("param, value", BAD_PREDICTION_SETTINGS)
@pytest.mark.parametrize("method", ["predict_proba", "predict_log_proba", "predict",
                                   "decision_function"])
def test_laplace_settings_checked_at_prediction(ewc, iris_xy, param, value, method):
    # Before: NaN probabilities (δ NaN, −1), ZeroDivisionError (0 samples),
    # a JAX MLIRError (−5 samples), inf and True accepted, "could not
    # convert string to float" for "Evidence".
    X, y = iris_xy
    predictive = "mc" if param == "n_predict_samples" else "probit"
    est = copy.deepcopy(ewc).set_params(**{"predictive": predictive, param: value})
    expected = fit_message(est, X, y)
    assert repr(param) in expected
    before = dict(vars(est))
    with pytest.raises(InvalidParameterError) as raised:
        getattr(est, method)(X[:3])
    assert str(raised.value) == expected
    assert vars(est).keys() == before.keys()


def test_posterior_covariance_checks_its_settings(ewc):
    # Before: a covariance of NaN.
    est = copy.deepcopy(ewc).set_params(predictive_prior_precision=-1.0)
    with pytest.raises(InvalidParameterError, match="'predictive_prior_precision'"):
        est.posterior_covariance()


def test_bogus_predictive_lists_every_option(ewc, iris_xy):
    # Before: "predictive must be 'probit', 'mean_field' or 'mc' here", without "map".
    est = copy.deepcopy(ewc).set_params(predictive="bogus")
    with pytest.raises(InvalidParameterError) as raised:
        est.predict_proba(iris_xy[0][:2])
    assert "'predictive'" in str(raised.value) and "'map'" in str(raised.value)


@pytest.mark.parametrize("param", ["alpha", "learning_rate", "prior_precision"])
def test_infinite_rates_and_precisions_refused(iris_xy, param):
    X, y = iris_xy
    with pytest.raises(InvalidParameterError, match=f"'{param}'.*range \\(0.0, inf\\)"):
        EWCClassifier(**{**FAST, param: float("inf")}).fit(X, y)


@pytest.mark.parametrize("structure", ["full", "kron", "diag"])
@pytest.mark.parametrize("predictive", ["probit", "mean_field", "mc"])
def test_allowed_prior_precisions_give_finite_probabilities(aqc_mlp, iris_xy, structure,
                                                            predictive):
    # Before: δ = 1e-100 gave [[nan nan nan]] on full (1/√δ overflowed
    # float32 in the posterior's square root).
    X = iris_xy[0][::10]
    est = aqc_mlp[structure]
    est.set_params(predictive=predictive, n_predict_samples=64)
    probas = {}
    for delta in (5e-324, 1e-300, 1e-100, 1e-30, 1.0, 1e30, 1e300):
        est.set_params(predictive_prior_precision=delta)
        p = est.predict_proba(X)
        assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1)), delta
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-6)
        probas[delta] = p
    if predictive == "probit":
        # Below 1e-30 every prior-free direction is as good as infinitely
        # wide: the predictive has reached its limit and stays there. (The
        # pairwise variances of "mean_field" and "mc" are differences of
        # such variances, and the float32 covariance resolves them to 1e-7
        # of the largest only: finite, but no limit to compare with.)
        for delta in (5e-324, 1e-300, 1e-100):
            np.testing.assert_allclose(probas[delta], probas[1e-30], atol=1e-6)
    # A huge δ leaves Σ ≈ 0: the plug-in softmax.
    est.set_params(predictive="map")
    np.testing.assert_allclose(probas[1e300], est.predict_proba(X), atol=1e-5)


# ------------------------------------------------------------------ exact family


@pytest.mark.parametrize("method", ["predict_proba", "predict_log_proba", "predict",
                                    "decision_function"])
@pytest.mark.parametrize("make, param", [
    (LeastSquaresClassifier, "probabilities"),
    (GaussianDiscriminantClassifier, "predictive"),
])
def test_exact_prediction_settings_checked(iris_xy, make, param, method):
    # Before: "bogus" was read as the default reading.
    X, y = iris_xy
    est = make().fit(X, y).set_params(**{param: "bogus"})
    expected = fit_message(est, X, y)
    with pytest.raises(InvalidParameterError) as raised:
        getattr(est, method)(X[:3])
    assert str(raised.value) == expected


def test_lazy_solve_checks_settings_changed_after_partial_fit(iris_xy):
    X, y = iris_xy
    est = LeastSquaresClassifier().partial_fit(X, y, classes=[0, 1, 2])
    est.set_params(alpha=-1.0)
    before = dict(vars(est))
    with pytest.raises(InvalidParameterError, match="'alpha'"):
        est.predict(X[:3])
    assert vars(est).keys() == before.keys()
    est.set_params(alpha="auto")
    assert np.mean(est.predict(X) == y) > 0.8


@pytest.mark.parametrize("probabilities", ["scores", "discriminant", "ranked"])
def test_least_squares_unseen_class_has_probability_zero(iris_xy, probabilities):
    # Before: "scores" gave the declared, never-seen setosa up to 0.0035.
    X, y = iris_xy
    seen = y > 0
    est = LeastSquaresClassifier(probabilities=probabilities).partial_fit(
        X[seen], y[seen], classes=[0, 1, 2])
    proba, log_proba = est.predict_proba(X), est.predict_log_proba(X)
    assert np.all(proba[:, 0] == 0) and np.all(log_proba[:, 0] == -np.inf)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(est.predict(X[seen]) == y[seen]) > 0.9
    if probabilities == "scores":
        # softmax(a·s) over the seen classes' scores alone.
        a = est._temperature()
        expected = softmax(a * est.decision_function(X)[:, 1:], axis=1)
        np.testing.assert_allclose(proba[:, 1:], expected, rtol=1e-10, atol=1e-300)


# ----------------------------------------------------------------------- labels


@pytest.mark.parametrize("make", [LeastSquaresClassifier, GaussianDiscriminantClassifier])
def test_growth_refuses_labels_of_another_type(iris_xy, make):
    # Before: float labels after int ones made classes_ [0. 1.] and predict floats.
    X, y = iris_xy
    est = make(grow_classes=True).partial_fit(X[y == 0], y[y == 0])
    before = {k: v for k, v in vars(est).items()}
    with pytest.raises(ValueError, match="labels must keep one type.*integer.*float"):
        est.partial_fit(X[y == 1], y[y == 1].astype(float))
    assert vars(est).keys() == before.keys() and est.classes_ is before["classes_"]
    assert est.classes_.dtype.kind == "i"
    # A float equal to a class is that class (nothing grows), as without growth.
    est.partial_fit(X[y == 0], y[y == 0].astype(float))
    est.partial_fit(X[y == 1], y[y == 1])
    assert est.classes_.tolist() == [0, 1] and est.classes_.dtype.kind == "i"
    assert est.predict(X[:1]).dtype.kind == "i"


def test_growth_type_error_reads_cleanly(iris_xy):
    X, y = iris_xy
    est = LeastSquaresClassifier(grow_classes=True).partial_fit(X[y == 0], y[y == 0])
    with pytest.raises(ValueError, match="keep one type") as raised:
        est.partial_fit(X[y == 1], y[y == 1].astype(str))
    assert ".." not in str(raised.value)


@pytest.mark.parametrize("call", ["fit", "partial_fit", "grow", "classes"])
def test_mixed_object_labels_named(iris_xy, call):
    # Before: "'<' not supported between instances of 'int' and 'str'"
    # (a TypeError) or "Unknown label type: unknown ... regression target".
    X, y = iris_xy
    mixed = np.array([1 if label else "a" for label in y], dtype=object)
    est = LeastSquaresClassifier(grow_classes=call == "grow")
    with pytest.raises(ValueError, match="mixes strings with labels of another type"):
        if call == "fit":
            est.fit(X, mixed)
        elif call == "classes":
            est.partial_fit(X, y, classes=np.array([0, 1, "a"], dtype=object))
        else:
            est.partial_fit(X, mixed, classes=None if call == "grow" else [1, "a"])


def test_huge_sample_weight_named(iris_xy):
    # Before: "Input X contains NaN or infinity (or values too large to square)".
    X, y = iris_xy
    est = LeastSquaresClassifier()
    with pytest.raises(ValueError, match="sample_weight is too large"):
        est.fit(X, y, sample_weight=np.full(len(y), 1e308))
    assert not hasattr(est, "classes_")


# ---------------------------------------------- settings changed after a solve


def _ridge_on_one_hot(X, y, alpha):
    """scikit-learn's Ridge on the one-hot targets: what LeastSquaresClassifier fits."""
    from sklearn.linear_model import Ridge
    return Ridge(alpha=alpha).fit(X, np.eye(3)[y])


@pytest.mark.parametrize("first_use", ["predict", "coef_", None])
def test_a_setting_changed_after_the_solve_acts(iris_xy, first_use):
    # Before: set_params(alpha=500) after a prediction left alpha_ at GCV's
    # choice, while a model whose solve was pending took 500 (issue 50).
    X, y = iris_xy
    est = LeastSquaresClassifier().partial_fit(X, y, classes=[0, 1, 2])
    if first_use == "predict":
        est.predict(X)
    elif first_use == "coef_":
        est.coef_  # noqa: B018  (the solve, through reading an attribute)
    est.set_params(alpha=500.0)
    assert est.alpha_ == 500.0
    ridge = _ridge_on_one_hot(X, y, 500.0)
    np.testing.assert_allclose(est.coef_, ridge.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.decision_function(X), ridge.predict(X), rtol=1e-10,
                               atol=1e-12)


def test_the_gaussian_s_shrinkage_changed_after_the_solve_acts(iris_xy):
    # Before: probabilities unchanged after set_params(shrinkage=0.9).
    X, y = iris_xy
    est = GaussianDiscriminantClassifier().fit(X, y)
    est.predict_proba(X)
    est.set_params(shrinkage=0.9)
    fresh = GaussianDiscriminantClassifier(shrinkage=0.9).fit(X, y)
    assert est.shrinkage_ == 0.9
    np.testing.assert_allclose(est.predict_proba(X), fresh.predict_proba(X), rtol=1e-12,
                               atol=1e-14)


@pytest.mark.parametrize("make, param, value", [
    (LeastSquaresClassifier, "alpha", -1.0),
    (GaussianDiscriminantClassifier, "shrinkage", 2.0),
    (GaussianDiscriminantClassifier, "components", "bogus"),
])
@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function"])
def test_a_bad_setting_after_the_solve_is_refused_as_before_it(iris_xy, make, param, value,
                                                               method):
    # Before: accepted silently after a solve, refused before it.
    X, y = iris_xy
    est = make().partial_fit(X, y, classes=[0, 1, 2])
    expected = est.predict_proba(X)
    est.set_params(**{param: value})
    with pytest.raises(InvalidParameterError) as raised:
        getattr(est, method)(X[:3])
    assert str(raised.value) == fit_message(est, X, y)
    est.set_params(**{param: make().get_params()[param]})
    np.testing.assert_array_equal(est.predict_proba(X), expected)


def test_the_covariance_structure_changed_after_the_solve_is_refused(iris_xy):
    # Fixed by the first task: the shared model's sums hold no per-class
    # scatter. Before: ignored after a solve.
    X, y = iris_xy
    est = GaussianDiscriminantClassifier().fit(X, y)
    est.predict(X)
    est.set_params(covariance="per_class")
    with pytest.raises(ValueError, match="covariance structure cannot change"):
        est.predict(X)


def test_a_prediction_setting_or_the_same_value_keeps_the_solve(iris_xy):
    X, y = iris_xy
    est = LeastSquaresClassifier().fit(X, y)
    solve = est.coef_
    est.set_params(alpha="auto", probabilities="discriminant", verbose=0)
    assert est.coef_ is solve


def test_a_sample_weight_too_large_for_float32_is_refused_without_an_overflow(iris_xy):
    # The gradient family takes float32 weights: scikit-learn's cast overflowed
    # ("RuntimeWarning: overflow encountered in cast") before refusing them.
    import warnings

    from skcl import FineTuningClassifier

    X, y = iris_xy
    est = FineTuningClassifier(n_epochs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="sample_weight is too large: a weight exceeds "
                                             "float32's largest value"):
            est.fit(X, y, sample_weight=np.full(len(y), 1e39))
    assert not hasattr(est, "classes_")
    est.fit(X, y, sample_weight=np.full(len(y), 2.0))  # a float32 weight is fine
