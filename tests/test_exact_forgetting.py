"""Forgetting rows, classes and calls from the exact classifiers, against a refit.

The independent computation is always a fit on the remaining rows, task
by task as the forgotten model learned them: forgetting must give its
decision function and probabilities to 1e-8 (relative), its
hyperparameters (OAS shrinkage, GCV's α, the held-out choices) and its
components included.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact.forgetting import ForgettingError
from skcl.datasets import load_ci_split_digits, load_ci_split_mnist, load_di_split_digits
from skcl.feature_extraction import RandomFeatures
from skcl.pipeline import Pipeline

from ._same_model import assert_same_model

RTOL = 1e-8
CLASSES = np.arange(10)
PAIRS = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]


_CI_SPLIT_DIGITS = load_ci_split_digits()
TASKS, X_TEST = _CI_SPLIT_DIGITS.train, np.vstack([X for X, _ in _CI_SPLIT_DIGITS.test])

MODELS = {
    "gaussian": GaussianDiscriminantClassifier(),
    "least_squares": LeastSquaresClassifier(),
    "gaussian_heldout": GaussianDiscriminantClassifier(shrinkage="heldout", random_state=0),
    "least_squares_heldout": LeastSquaresClassifier(alpha="heldout", random_state=0),
}


def _learn(model, tasks, classes=CLASSES):
    model = clone(model)
    for X, y in tasks:
        model.partial_fit(X, y, classes=classes)
    return model


def _assert_same_hyperparameters(model, refit, rtol=RTOL):
    for name in ("shrinkage_", "alpha_"):
        if hasattr(refit, name):
            np.testing.assert_allclose(getattr(model, name), getattr(refit, name), rtol=rtol)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("forgotten", [0, 2, 4])
def test_forgetting_a_task_of_ci_split_digits_is_a_refit_without_it(name, forgotten):
    model = _learn(MODELS[name], TASKS)
    model.forget(*TASKS[forgotten])
    refit = _learn(MODELS[name], [t for i, t in enumerate(TASKS) if i != forgotten])
    assert_same_model(model, refit, X_TEST, RTOL)
    # classes_ is kept: the forgotten classes are declared, with no rows.
    np.testing.assert_array_equal(model.classes_, CLASSES)
    gone = np.isin(CLASSES, PAIRS[forgotten])
    assert not model.predict_proba(X_TEST)[:, gone].any()
    assert not np.isin(model.predict(X_TEST), PAIRS[forgotten]).any()


@pytest.mark.parametrize("name", ["gaussian", "least_squares"])
def test_forgetting_one_class_or_some_rows_is_a_refit_without_them(name):
    model = _learn(MODELS[name], TASKS)
    X, y = TASKS[1]
    model.forget(X[y == 3], y[y == 3])       # one class, by its rows
    model.forget(TASKS[3][0][::3], TASKS[3][1][::3])  # a third of another task
    remaining = [t for t in TASKS]
    remaining[1] = (X[y != 3], y[y != 3])
    remaining[3] = tuple(np.delete(a, np.s_[::3], axis=0) for a in TASKS[3])
    refit = _learn(MODELS[name], remaining)
    assert_same_model(model, refit, X_TEST, RTOL)
    assert model.predict_proba(X_TEST)[:, 3].max() == 0


@pytest.mark.parametrize("cls", [GaussianDiscriminantClassifier, LeastSquaresClassifier])
def test_forget_classes_and_tasks_without_rows_from_the_groups_scatters(cls):
    model = _learn(cls(store_group_scatter=True), TASKS)
    model.forget_classes([5])
    model.forget_task(3)
    remaining = [t for i, t in enumerate(TASKS) if i != 3]
    X, y = remaining[2]
    remaining[2] = (X[y != 5], y[y != 5])
    assert_same_model(model, _learn(cls(store_group_scatter=True), remaining), X_TEST,
                      hyperparameters=False)
    # Without the groups' scatters the rows are needed: said, nothing changed.
    plain = _learn(cls(), TASKS)
    before = plain.predict_proba(X_TEST)
    with pytest.raises(ForgettingError, match="store_group_scatter=True"):
        plain.forget_classes([5])
    np.testing.assert_array_equal(plain.predict_proba(X_TEST), before)


def _di_split_digits():
    """DI Split digits (parity), where components="auto" keeps each task's classes apart."""
    data = load_di_split_digits()
    return data.train, np.vstack([X for X, _ in data.test])


@pytest.mark.parametrize("store", [False, True])
def test_forgetting_a_task_when_components_split_classes(store):
    tasks, X_test = _di_split_digits()
    base = GaussianDiscriminantClassifier(components="auto", store_group_scatter=store)
    model = _learn(base, tasks, classes=[0, 1])
    assert len(model.component_classes_) > 2  # "auto" split the classes by task
    if store:
        model.forget_task(1)
    else:
        with pytest.raises(ForgettingError, match="pass task="):
            model.forget(*tasks[1])
        model.forget(*tasks[1], task=1)
    refit = _learn(base, [t for i, t in enumerate(tasks) if i != 1], classes=[0, 1])
    assert len(model.component_classes_) == len(refit.component_classes_) > 2
    assert_same_model(model, refit, X_test, RTOL)


def _state(model):
    return (model.moments_.counts.copy(), model.moments_.scatter.copy(),
            model.predict_proba(X_TEST))


@pytest.mark.parametrize("cls", [GaussianDiscriminantClassifier, LeastSquaresClassifier])
def test_impossible_removals_are_refused_and_change_nothing(cls):
    model = _learn(cls(), TASKS[:3])
    before = _state(model)
    X, y = TASKS[0]
    far = X[:1] + 50.0  # a row of a learned class, far from every learned row
    cases = [
        ((TASKS[3][0][:2], TASKS[3][1][:2]), "never saw|no rows learned"),   # class unseen
        ((np.vstack([X, X[:5]]), np.r_[y, y[:5]]), "more rows than were learned"),
        ((far, y[:1]), "negative variance"),
        ((X[:3], y[:3], None, 7), "task must be"),
        ((X[:3], y[:3], None, 1), "no rows learned in task 1"),
    ]
    for args, message in cases:
        X_f, y_f, *rest = args
        task = rest[1] if len(rest) > 1 else None
        with pytest.raises(ForgettingError, match=message):
            model.forget(X_f, y_f, task=task)
        for a, b in zip(_state(model), before):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="non-negative weight"):
        model.forget(X[:2], y[:2], sample_weight=[1.0, -1.0])
    # Everything forgotten: refused, the model keeps its rows.
    model.forget(*TASKS[1])
    model.forget(*TASKS[2])
    with pytest.raises(ForgettingError, match="no rows at all"):
        model.forget(*TASKS[0])
    assert model.moments_.total == len(TASKS[0][1])
    with pytest.raises(NotFittedError):
        cls().forget(X, y)


def test_forgotten_class_can_be_learned_again():
    model = _learn(LeastSquaresClassifier(), TASKS)
    model.forget(*TASKS[0])
    model.partial_fit(*TASKS[0])
    tasks = [*TASKS[1:], TASKS[0]]
    assert_same_model(model, _learn(LeastSquaresClassifier(), tasks), X_TEST,
                      hyperparameters=False)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [GaussianDiscriminantClassifier, LeastSquaresClassifier])
def test_forgetting_through_random_features_on_ci_split_mnist(cls, shared_data_dir):
    """CI Split MNIST pixels (200 rows a task) through RandomFeatures(2000)."""
    data = load_ci_split_mnist(shared_data_dir)
    tasks = [(X[:200].reshape(200, -1) / 255.0, y[:200]) for X, y in data.train]
    X_test = data.test[0][0][:200].reshape(200, -1) / 255.0
    # Fitted once, on a sample of the first task, and shared: the refit
    # must see the same feature map.
    features = RandomFeatures(2000, random_state=0).fit(tasks[0][0])

    def learn(tasks):
        pipe = Pipeline([("features", features), ("clf", cls())])
        for X, y in tasks:
            pipe.partial_fit(X, y, classes=CLASSES)
        return pipe

    model = learn(tasks)
    model.forget(*tasks[2])
    X, y = tasks[4]
    model.forget(X[y == 9], y[y == 9])
    remaining = [tasks[0], tasks[1], tasks[3], (X[y != 9], y[y != 9])]
    refit = learn(remaining)
    # RandomFeatures' rows are float32, multiplied in float32 blocks into
    # float64 sums (moments.float32_products): the downdate and the refit
    # round differently, within float32's 6e-8 of the scatter (1e-8 with
    # float64 rows, the tests above).
    assert_same_model(model, refit, X_test, rtol=1e-6, hyperparameters=False)
    _assert_same_hyperparameters(model[-1], refit[-1], rtol=1e-6)


@pytest.mark.parametrize("params", [dict(covariance="per_class", shrinkage=0.1),
                                    dict(store_group_scatter=True)])
def test_forgetting_rows_downdates_each_groups_own_scatter(params):
    model = _learn(GaussianDiscriminantClassifier(**params), TASKS)
    X, y = TASKS[1]
    model.forget(X[::2], y[::2])
    left = (np.delete(X, np.s_[::2], axis=0), np.delete(y, np.s_[::2]))
    refit = _learn(GaussianDiscriminantClassifier(**params), [TASKS[0], left, *TASKS[2:]])
    assert_same_model(model, refit, X_TEST, hyperparameters=False)


def test_forgetting_small_calls_counts_the_rows_left_as_a_refit_does():
    """components="auto" counts rows (its log n): forgotten rows no longer count.

    Digits / 16 in 40 interleaved calls of about 45 rows; the last 30
    calls forgotten leave 10 calls, whose refit counts about 450 rows.
    """
    X, y = load_digits(return_X_y=True)
    X = X / 16
    calls = [(X[i::40], y[i::40]) for i in range(40)]
    model = GaussianDiscriminantClassifier()
    for Xc, yc in calls:
        model.partial_fit(Xc, yc, classes=CLASSES)
    for t in range(10, 40):
        Xc, yc = calls[t]
        model.forget(Xc, yc, task=t)
    refit = GaussianDiscriminantClassifier()
    for Xc, yc in calls[:10]:
        refit.partial_fit(Xc, yc, classes=CLASSES)
    np.testing.assert_array_equal(model.component_classes_, refit.component_classes_)
    assert_same_model(model, refit, X, hyperparameters=False)
