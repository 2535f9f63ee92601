"""Promises that hold for every input, checked by hypothesis on drawn examples.

Row-permutation invariance of the exact family; probabilities finite, in
[0, 1] and summing to one for every public classifier and predictive, at
any input; a rejected ``partial_fit`` changes nothing; a setting changed by
``set_params`` is checked at prediction by ``fit``'s constraints, and a
value they allow gives finite probabilities. The gradient classifiers are
fitted once per module (they compile) and every example reuses them; the
examples are derandomised, so CI draws the same ones each run.
"""

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.datasets import load_iris, load_wine
from sklearn.utils._param_validation import InvalidParameterError

from skcl._utils.validation import validate_params

from ._classifiers import cases

FAST = dict(n_epochs=2, batch_size=64, learning_rate=0.1, n_predict_samples=10,
            random_state=0)
FEW = settings(max_examples=6, derandomize=True, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])

# The registry's default and state cases: every public classifier, and the
# configurations whose fitted state holds other types.
CASES = {case.id: case for case in cases("default", "state")}
WITH_PREDICTION_SETTINGS = [name for name, case in CASES.items() if case.prediction_settings]

# The settings a prediction reads, and values each may take (options: every
# one its constraint lists). Two sample counts: each compiles once.
PREDICTION_SETTINGS = {
    "predictive_prior_precision": st.one_of(
        st.sampled_from(["stored", "evidence"]),
        st.floats(min_value=5e-324, max_value=1e300)),
    "n_predict_samples": st.sampled_from([1, 16]),
}
# Anything a user might type.
ANY_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["map", "MAP", "Evidence", "evidence", "stored", "probit", "bogus",
                     "scores", "student_t", "", "1e-3"]),
)


@pytest.fixture(scope="module")
def fitted(iris_xy):
    """Every case fitted on Iris (one task: one compilation each)."""
    X, y = iris_xy
    return {name: case.make(**FAST).fit(X, y) for name, case in CASES.items()}


def inputs(n_features):
    """Rows anywhere float32 can hold them: near the data, far, and mixed."""
    scale = st.sampled_from([1.0, 1e-30, 1e3, 1e10, 1e30, -1e30])
    # Four rows always: a new shape would compile the networks again.
    values = arrays(np.float64, (4, n_features),
                    elements=st.floats(-5, 5, width=32))
    return st.builds(lambda X, s: X * s, values, scale)


def prediction_settings(clf):
    """The prediction settings ``clf`` has, each drawn from its allowed values."""
    def allowed(name):
        if name in PREDICTION_SETTINGS:
            return PREDICTION_SETTINGS[name]
        return st.sampled_from(sorted(clf._parameter_constraints[name][0].options))

    names = [n for n in clf._prediction_params if n != "alpha"]
    return st.fixed_dictionaries({n: allowed(n) for n in names})


def check_probabilities(clf, X):
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), len(clf.classes_))
    assert np.isfinite(proba).all()
    assert ((proba >= 0) & (proba <= 1)).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("name", CASES)
@FEW
@given(data=st.data())
def test_probabilities_valid_for_every_input_and_predictive(fitted, name, data):
    clf = fitted[name]
    params = data.draw(prediction_settings(clf), label="settings")
    X = data.draw(inputs(clf.n_features_in_), label="X")
    saved = clf.get_params()
    try:
        clf.set_params(**params)
        check_probabilities(clf, X)
    finally:
        clf.set_params(**saved)


@pytest.mark.parametrize("name", WITH_PREDICTION_SETTINGS)
@FEW
@given(data=st.data())
def test_set_params_then_predict_is_validated(fitted, iris_xy, name, data):
    """A value is refused at prediction exactly when ``fit`` refuses it,
    with its message; a value allowed gives valid probabilities."""
    clf = copy.deepcopy(fitted[name])
    if "alpha" in clf._prediction_params:
        clf.set_params(predictive="probit")  # so that every setting is read
    param = data.draw(st.sampled_from(clf._prediction_params), label="param")
    value = data.draw(ANY_VALUE, label="value")
    clf.set_params(**{param: value})
    try:
        validate_params(clf)
    except InvalidParameterError as exc:
        expected = str(exc)
    else:
        expected = None
    if expected is None:
        check_probabilities(clf, iris_xy[0][:4])
    else:
        with pytest.raises(InvalidParameterError) as raised:
            clf.predict_proba(iris_xy[0][:2])
        assert str(raised.value) == expected


def _same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key])
        else:
            assert a[key] is b[key] or a[key] == b[key], key


BAD_TASKS = {
    "NaN in X": lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), y, {}),
    "one feature more": lambda X, y: (np.hstack([X, X[:, :1]]), y, {}),
    "unknown label": lambda X, y: (X, np.where(y == y[0], 7, y), {}),
    "negative weight": lambda X, y: (X, y, {"sample_weight": -np.ones(len(y))}),
    "huge weight": lambda X, y: (X, y, {"sample_weight": np.full(len(y), 1e308)}),
    "float labels": lambda X, y: (X, y + 0.5, {}),
    "mixed labels": lambda X, y: (X, np.array([v if v else "a" for v in y], dtype=object), {}),
    "other classes": lambda X, y: (X, y, {"classes": [0, 1]}),
}


@pytest.mark.parametrize("name", CASES)
@FEW
@given(data=st.data())
def test_rejected_partial_fit_changes_nothing(fitted, iris_xy, name, data):
    clf = fitted[name]
    bad = data.draw(st.sampled_from(sorted(BAD_TASKS)), label="bad")
    rows = data.draw(st.lists(st.integers(0, 149), min_size=2, max_size=20, unique=True),
                     label="rows")
    X, y, extra = BAD_TASKS[bad](iris_xy[0][rows], iris_xy[1][rows])
    before = dict(vars(clf))
    with pytest.raises(ValueError):
        clf.partial_fit(X, y, **{"classes": [0, 1, 2], **extra})
    _same_state(vars(clf), before)


@pytest.mark.parametrize("case", cases(family="exact"), ids=str)
@FEW
@given(dataset=st.sampled_from(["iris", "wine"]), seed=st.integers(0, 2**16))
def test_exact_family_ignores_row_order(case, dataset, seed):
    X, y = (load_iris if dataset == "iris" else load_wine)(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(y))
    a, b = case.make().fit(X, y), case.make().fit(X[order], y[order])
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
