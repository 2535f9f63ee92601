"""Promises of the exact family for every drawn example (issue 50).

A setting changed by ``set_params`` at any moment of a model's life acts
as if the model had been built with it (the model is a function of its
sums and its settings), or is refused as ``fit`` refuses it; weights that
rescale uniformly change no component; inputs anywhere in float64's range are
either answered with finite probabilities or refused with a message; an
integer weight is that many copies of its row for OAS and GCV.
The examples are derandomised, so CI draws the same ones each run.
"""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris, load_wine
from sklearn.utils._param_validation import InvalidParameterError

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier

FEW = settings(max_examples=8, derandomize=True, deadline=None)

_IRIS = load_iris(return_X_y=True)
_WINE = load_wine(return_X_y=True)

# Each setting's values: allowed ones, then one its constraints refuse.
SETTINGS = {
    LeastSquaresClassifier: {
        "alpha": ["auto", 0.1, 10.0, 0.0, -1.0],
        "probabilities": ["scores", "ranked", "discriminant", "bogus"],
    },
    GaussianDiscriminantClassifier: {
        "shrinkage": ["auto", 0.0, 0.5, 1.0, 2.0],
        "components": ["auto", "class", "task_class", "bogus"],
        "predictive": ["plugin", "student_t", "bogus"],
    },
}
# One scatter a class (issue 50, defect 6): the same promises.
PER_CLASS = functools.partial(GaussianDiscriminantClassifier, covariance="per_class")
SETTINGS[PER_CLASS] = {**SETTINGS[GaussianDiscriminantClassifier], "shrinkage": [
    "auto", 0.1, 1.0, 2.0]}


def _tasks(chunks):
    """Iris cut into ``chunks`` calls of interleaved rows."""
    X, y = _IRIS
    return [(X[i::chunks], y[i::chunks]) for i in range(chunks)]


@pytest.mark.parametrize("make", list(SETTINGS))
@FEW
@given(data=st.data())
def test_set_params_at_any_moment_acts_as_if_built_with_it(make, data):
    tasks = _tasks(data.draw(st.integers(1, 4), label="calls"))
    X_test = _IRIS[0][::5]
    clf, learned = make(), []
    for step in range(data.draw(st.integers(1, 6), label="steps")):
        action = data.draw(st.sampled_from(["learn", "predict", "set"]), label=f"action {step}")
        if action == "learn" and len(learned) < len(tasks):
            learned.append(tasks[len(learned)])
            clf.partial_fit(*learned[-1], classes=[0, 1, 2])
        elif action == "set":
            name = data.draw(st.sampled_from(sorted(SETTINGS[make])), label="setting")
            clf.set_params(**{name: data.draw(st.sampled_from(SETTINGS[make][name]))})
        if not learned:
            continue
        fresh = make(**clf.get_params())
        try:
            for task in learned:
                fresh.partial_fit(*task, classes=[0, 1, 2])
            expected = fresh.predict_proba(X_test)
        except InvalidParameterError as error:
            with pytest.raises(InvalidParameterError) as raised:
                clf.predict_proba(X_test)
            assert str(raised.value) == str(error)
            continue
        np.testing.assert_allclose(clf.predict_proba(X_test), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("shrinkage", ["auto", 0.1])
@FEW
@given(power=st.integers(-4, 4), chunks=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_weights_that_rescale_uniformly_change_no_component(shrinkage, power, chunks, seed):
    # The components' test counts rows. OAS ("auto") and least squares' GCV
    # count weights as copies of rows, scikit-learn's sample-weight
    # contract (check_sample_weight_equivalence; the next test): there only
    # the components are compared; with a float shrinkage the whole model.
    X, y = _WINE
    order = np.random.default_rng(seed).permutation(len(y))
    calls = [(X[order[i::chunks]], y[order[i::chunks]]) for i in range(chunks)]
    models = [GaussianDiscriminantClassifier(shrinkage), GaussianDiscriminantClassifier(shrinkage)]
    for X_call, y_call in calls:
        models[0].partial_fit(X_call, y_call, classes=[0, 1, 2])
        models[1].partial_fit(X_call, y_call, classes=[0, 1, 2],
                              sample_weight=np.full(len(y_call), 10.0**power))
    np.testing.assert_array_equal(models[1].component_classes_, models[0].component_classes_)
    if shrinkage != "auto":
        np.testing.assert_allclose(models[1].predict_proba(X), models[0].predict_proba(X),
                                   rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("make, fitted", [
    (lambda: GaussianDiscriminantClassifier(components="class"), "shrinkage_"),
    (lambda: GaussianDiscriminantClassifier(covariance="per_class", components="class"),
     "shrinkage_"),
    (LeastSquaresClassifier, "alpha_"),
])
@FEW
@given(copies=st.integers(2, 6), chunks=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_an_integer_weight_is_that_many_copies_of_its_row(make, fitted, copies, chunks, seed):
    # The rule of OAS's and GCV's sample size (issue 50): the rows' total
    # weight, scikit-learn's convention. Independent: the rows repeated.
    # Uniform weights k then give what k copies of every row give, so they
    # do change shrinkage_ and alpha_; the components' test alone counts
    # rows (test above), hence components="class" here.
    X, y = _WINE
    order = np.random.default_rng(seed).permutation(len(y))
    calls = [(X[order[i::chunks]], y[order[i::chunks]]) for i in range(chunks)]
    weighted, repeated = make(), make()
    for X_call, y_call in calls:
        weighted.partial_fit(X_call, y_call, classes=[0, 1, 2],
                             sample_weight=np.full(len(y_call), float(copies)))
        repeated.partial_fit(np.repeat(X_call, copies, axis=0), np.repeat(y_call, copies),
                             classes=[0, 1, 2])
    assert getattr(weighted, fitted) == pytest.approx(getattr(repeated, fitted), rel=1e-9)
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X),
                               rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(weighted.predict(X), repeated.predict(X))


@pytest.mark.parametrize("make", [GaussianDiscriminantClassifier, PER_CLASS,
                                  LeastSquaresClassifier])
@FEW
@given(power=st.integers(-200, 200), test_power=st.integers(-200, 200))
def test_inputs_across_float64_s_range_are_answered_or_refused(make, power, test_power):
    X, y = _WINE
    X = (X - X.mean(0)) / X.std(0)
    try:
        clf = make().fit(X * 10.0**power, y)
    except ValueError as error:
        assert "too small to square" in str(error) or "too large to square" in str(error)
        return
    X_test = X[::4] * 10.0**test_power
    try:
        proba = clf.predict_proba(X_test)
    except ValueError as error:
        assert "too large for this model" in str(error)
        return
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(1), 1)
    if test_power == power:  # the training rows' scale: the model of unit scale
        reference = make().fit(X, y).predict(X[::4])
        assert np.mean(clf.predict(X_test) == reference) >= 0.95
