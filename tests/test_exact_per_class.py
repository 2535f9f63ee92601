"""One covariance per class (``covariance="per_class"``): one scatter a class, however many calls.

Issue 50, defect 6: the model kept one D×D scatter per (call, class), so
300 one-row calls held 300 of them. The independent computations: a fit
on all the rows at once, each class's covariance computed from its raw
rows, and a refit on the rows a removal leaves.
"""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.datasets import load_digits

from skcl import GaussianDiscriminantClassifier
from skcl._exact.forgetting import ForgettingError

from ._same_model import assert_same_model

CLASSES = np.arange(10)
_X, _Y = load_digits(return_X_y=True)
_X = _X / 16.0
PAIRS = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]


def _square_matrices(estimator, d):
    """How many D×D float matrices the estimator's attributes hold (in records too)."""
    found = 0

    def walk(value):
        nonlocal found
        if isinstance(value, np.ndarray):
            if value.ndim >= 2 and value.shape[-2:] == (d, d):
                found += int(np.prod(value.shape[:-2]))
        elif isinstance(value, (tuple, list)):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    for value in vars(estimator).values():
        walk(value)
    return found


def _calls(n_calls, rows):
    return [(_X[i * rows:(i + 1) * rows], _Y[i * rows:(i + 1) * rows]) for i in range(n_calls)]


def _learn(estimator, calls):
    for X, y in calls:
        estimator.partial_fit(X, y, classes=CLASSES)
    return estimator


def test_three_hundred_one_row_calls_keep_one_scatter_a_class():
    # Before: 300 calls kept 300 D×D group scatters (+ the pooled ones).
    clf = _learn(GaussianDiscriminantClassifier(covariance="per_class"), _calls(300, 1))
    # Each class's scatter, and the pooled scatter of the rows learned and held out.
    assert _square_matrices(clf, _X.shape[1]) <= len(CLASSES) + 2
    whole = GaussianDiscriminantClassifier(covariance="per_class").fit(_X[:300], _Y[:300])
    assert_same_model(clf, whole, _X[300::4], hyperparameters=False)


@pytest.mark.parametrize("components", ["auto", "task_class"])
def test_store_group_scatter_keeps_one_a_call_and_class_and_the_same_model(components):
    calls = _calls(40, 1)
    make = lambda **kw: GaussianDiscriminantClassifier(  # noqa: E731
        covariance="per_class", components=components, **kw)
    clf, kept = _learn(make(), calls), _learn(make(store_group_scatter=True), calls)
    assert _square_matrices(clf, _X.shape[1]) <= len(CLASSES) + 2
    assert _square_matrices(kept, _X.shape[1]) >= 40
    assert_same_model(clf, kept, _X[::9], hyperparameters=False)


@pytest.mark.parametrize("params", [{}, {"components": "class"}, {"shrinkage": 0.2},
                                    {"predictive": "student_t"}])
def test_many_small_calls_are_the_one_fit_on_all_rows(params):
    calls = _calls(60, 10)
    streamed = _learn(GaussianDiscriminantClassifier(covariance="per_class", **params), calls)
    whole = GaussianDiscriminantClassifier(covariance="per_class", **params).fit(
        _X[:600], _Y[:600])
    assert len(streamed.component_classes_) == len(CLASSES)
    assert_same_model(streamed, whole, _X[600::3], hyperparameters=False)
    assert streamed.shrinkage_ == pytest.approx(whole.shrinkage_, rel=1e-10)


def test_components_kept_apart_share_their_class_covariance():
    # Domain-incremental: "even"/"odd" from five calls of two digits each, a
    # component per (call, class). Independent: each class's covariance from
    # its raw rows about their own call's mean, scored by SciPy.
    calls = [(_X[np.isin(_Y, pair)], _Y[np.isin(_Y, pair)] % 2) for pair in PAIRS]
    s = 0.3
    clf = GaussianDiscriminantClassifier(s, covariance="per_class", components="task_class")
    for X, y in calls:
        clf.partial_fit(X, y, classes=[0, 1])
    centred = {0: [], 1: []}
    means, labels, counts = [], [], []
    for X, y in calls:
        for label in (0, 1):
            rows = X[y == label]
            means.append(rows.mean(0))
            labels.append(label)
            counts.append(len(rows))
            centred[label].append(rows - rows.mean(0))
    n, d = len(_X), _X.shape[1]
    pooled = sum(float((np.concatenate(c) ** 2).sum()) for c in centred.values())
    nu = pooled / n / d
    covariance = {}
    for label, parts in centred.items():
        R = np.concatenate(parts)
        covariance[label] = (1 - s) * R.T @ R / len(R) + s * nu * np.eye(d)
    X_test = _X[::9]
    joint = np.column_stack([
        np.log(count / n) + multivariate_normal(mean, covariance[label]).logpdf(X_test)
        for mean, label, count in zip(means, labels, counts)])
    labels = np.array(labels)
    expected = np.column_stack([logsumexp(joint[:, labels == c], axis=1) for c in (0, 1)])
    expected = np.exp(expected - logsumexp(expected, axis=1, keepdims=True))
    assert len(clf.component_classes_) == 10
    np.testing.assert_allclose(clf.predict_proba(X_test), expected, rtol=0, atol=1e-8)


def _ci_tasks():
    return [(_X[np.isin(_Y, pair)][::2], _Y[np.isin(_Y, pair)][::2]) for pair in PAIRS]


@pytest.mark.parametrize("shrinkage", ["auto", "heldout"])
def test_forgetting_classes_and_a_call_that_alone_learned_them_is_a_refit(shrinkage):
    tasks = _ci_tasks()
    make = lambda: GaussianDiscriminantClassifier(shrinkage, covariance="per_class",  # noqa: E731
                                                  random_state=0)
    model = _learn(make(), tasks)
    model.forget_classes([7])
    model.forget_task(0)
    left = [(X[y != 7], y[y != 7]) for X, y in tasks]
    refit = _learn(make(), left[1:])
    assert_same_model(model, refit, _X[::7], hyperparameters=False)
    assert model.shrinkage_ == pytest.approx(refit.shrinkage_, rel=1e-8)


def test_forgetting_a_call_whose_classes_other_calls_learned_is_refused_clearly():
    calls = _calls(6, 50)
    model = _learn(GaussianDiscriminantClassifier(covariance="per_class"), calls)
    before = model.predict_proba(_X[::7])
    with pytest.raises(ForgettingError, match="store_group_scatter=True") as error:
        model.forget_task(2)
    assert "forget(X, y, task=...)" in str(error.value)
    np.testing.assert_array_equal(model.predict_proba(_X[::7]), before)
    # The rows forget it, as a refit on the other calls.
    model.forget(*calls[2], task=2)
    assert_same_model(model, _learn(GaussianDiscriminantClassifier(covariance="per_class"),
                                    calls[:2] + calls[3:]), _X[::7], hyperparameters=False)
    # With each call's own scatter kept, the call alone goes.
    kept = _learn(GaussianDiscriminantClassifier(covariance="per_class",
                                                 store_group_scatter=True), calls)
    kept.forget_task(2)
    assert_same_model(kept, model, _X[::7], hyperparameters=False)


def test_the_covariance_structure_cannot_change_between_calls():
    calls = _calls(2, 100)
    for first, then in [("shared", "per_class"), ("per_class", "shared")]:
        clf = GaussianDiscriminantClassifier(covariance=first)
        clf.partial_fit(*calls[0], classes=CLASSES)
        clf.set_params(covariance=then)
        with pytest.raises(ValueError, match="cannot change between tasks"):
            clf.partial_fit(*calls[1], classes=CLASSES)


def test_decay_scales_each_class_scatter_as_the_weights_it_stands_for():
    calls = _calls(6, 60)
    decayed = _learn(GaussianDiscriminantClassifier(covariance="per_class", decay=0.7), calls)
    weighted = GaussianDiscriminantClassifier(covariance="per_class")
    for t, (X, y) in enumerate(calls):
        weighted.partial_fit(X, y, classes=CLASSES,
                             sample_weight=np.full(len(y), 0.7 ** (len(calls) - 1 - t)))
    assert_same_model(decayed, weighted, _X[::7], hyperparameters=False)
