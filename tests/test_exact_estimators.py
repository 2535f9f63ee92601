"""The exact family's classifiers as a user sees them: the one fit whatever
the split into tasks and chunks, scikit-learn's LDA and Ridge fitted on all
the data, grown classes, rejected tasks, pickling and Dask arrays.

Their cases (each default and state configuration) come from the registry,
``tests/_classifiers.py``; scikit-learn's estimator checks run on them in
``tests/test_estimator_checks.py``. The moments and held-out scores they
are built on are tested in ``tests/test_exact_moments.py``.
"""

import pickle

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl.datasets import load_ci_split_iris, load_ci_split_wine
from skcl.metrics import final_average_accuracy

from ._classifiers import cases

EXACT = cases("default", "state", family="exact")
# One Gaussian per (task, class) depends on the split into tasks by definition.
SPLIT_INVARIANT = [case for case in EXACT if case.params.get("components") != "task_class"]


def _learn(estimator, tasks, classes):
    for X, y in tasks:
        estimator.partial_fit(X, y, classes=classes)
    return estimator


def _outputs(estimator, X):
    if hasattr(estimator, "predict_proba"):
        return estimator.predict_proba(X)
    return estimator.decision_function(X)


@pytest.mark.parametrize("case", SPLIT_INVARIANT, ids=str)
def test_any_split_into_tasks_and_chunks_in_any_order_gives_the_one_fit(case, wine):
    X = np.concatenate([X for X, _ in wine.train])
    y = np.concatenate([y for _, y in wine.train])
    X_test = np.concatenate([X for X, _ in wine.test])
    whole = case.make().fit(X, y)
    rng = np.random.default_rng(7)
    for _ in range(3):
        order = rng.permutation(len(X))
        pieces = np.array_split(order, rng.integers(2, 9))
        split = _learn(case.make(),
                       [(X[p], y[p]) for p in pieces], np.unique(y))
        np.testing.assert_allclose(_outputs(split, X_test), _outputs(whole, X_test),
                                   rtol=1e-8, atol=1e-8)


def test_gaussian_equals_sklearn_lda_at_the_same_shrinkage(wine):
    X = np.concatenate([X for X, _ in wine.train])
    y = np.concatenate([y for _, y in wine.train])
    X_test = np.concatenate([X for X, _ in wine.test])
    for s in [0.001, 0.3, 1.0]:
        ours = _learn(GaussianDiscriminantClassifier(s, validation_fraction=0),
                      wine.train, wine.classes)
        lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=s).fit(X, y)
        np.testing.assert_allclose(ours.predict_proba(X_test), lda.predict_proba(X_test),
                                   rtol=1e-8, atol=1e-10)


def test_least_squares_equals_sklearn_ridge_on_class_targets(wine):
    X = np.concatenate([X for X, _ in wine.train])
    y = np.concatenate([y for _, y in wine.train])
    X_test = np.concatenate([X for X, _ in wine.test])
    w = np.random.default_rng(8).random(len(y))
    for alpha in [1e-3, 10.0]:
        ours = LeastSquaresClassifier(alpha, validation_fraction=0).fit(X, y, sample_weight=w)
        ridge = Ridge(alpha=alpha).fit(X, np.eye(3)[y], sample_weight=w)
        np.testing.assert_allclose(ours.decision_function(X_test), ridge.predict(X_test),
                                   rtol=1e-8, atol=1e-8)
    binary = y < 2
    ours = LeastSquaresClassifier(1.0, validation_fraction=0).fit(X[binary], y[binary])
    ridge = Ridge(alpha=1.0).fit(X[binary], 2.0 * y[binary] - 1)
    np.testing.assert_allclose(ours.decision_function(X_test), ridge.predict(X_test), rtol=1e-8)


@pytest.mark.parametrize("case", EXACT, ids=str)
def test_declared_and_grown_classes_predict_identically(case, wine):
    declared = _learn(case.make(), wine.train, wine.classes)
    grown = case.make().set_params(grow_classes=True)
    for X, y in wine.train:
        grown.partial_fit(X, y)
    X_test = np.concatenate([X for X, _ in wine.test])
    np.testing.assert_array_equal(declared.predict(X_test), grown.predict(X_test))


@pytest.mark.parametrize("load", [load_ci_split_iris, load_ci_split_wine], ids=["iris", "wine"])
def test_gaussian_classes_at_their_defaults_keep_every_task(load):
    data = load()
    clf = _learn(GaussianDiscriminantClassifier(random_state=0), data.train, data.classes)
    assert final_average_accuracy(clf, data.test) >= 0.9
    assert clf.n_tasks_seen_ == len(data.train)
    assert [r["task"] for r in clf.history_] == [1, 2, 3]


def test_one_gaussian_per_task_and_label_on_a_domain_incremental_sequence(di_split_digits):
    # DI Split digits: even vs odd, two digits per task.
    data = di_split_digits
    scores = {}
    for components in ["class", "task_class"]:
        clf = GaussianDiscriminantClassifier(components=components, random_state=0)
        for X, y in data.train:
            clf.partial_fit(X, y, classes=data.classes)
        scores[components] = np.mean([clf.score(X, y) for X, y in data.test])
        X_test = np.concatenate([X for X, _ in data.test])
        assert clf.predict_proba(X_test).shape == (len(X_test), 2)
    assert scores["task_class"] >= 0.95
    assert scores["task_class"] > scores["class"] + 0.03  # measured: 0.975 against 0.925


@pytest.mark.parametrize("case", EXACT, ids=str)
def test_a_rejected_task_changes_no_statistic(case, wine):
    clf = _learn(case.make(), wine.train[:2], wine.classes)
    before = pickle.dumps(clf)
    X, y = wine.train[2]
    bad = X.copy()
    bad[3, 2] = np.nan
    for args in [(bad, y), (X[:, :5], y), (X, np.full(len(y), 7))]:
        with pytest.raises(ValueError):
            clf.partial_fit(*args)
        assert pickle.dumps(clf) == before
    clf.partial_fit(X, y)
    assert pickle.loads(before).n_tasks_seen_ == 2 and clf.n_tasks_seen_ == 3


@pytest.mark.parametrize("case", EXACT, ids=str)
def test_pickled_mid_sequence_it_goes_on_as_if_never_stopped(case, wine):
    straight = _learn(case.make(), wine.train, wine.classes)
    half = _learn(case.make(), wine.train[:1], wine.classes)
    resumed = _learn(pickle.loads(pickle.dumps(half)), wine.train[1:], wine.classes)
    X_test = np.concatenate([X for X, _ in wine.test])
    np.testing.assert_array_equal(_outputs(resumed, X_test), _outputs(straight, X_test))


def test_a_covariance_that_changes_between_tasks_is_refused(wine):
    clf = _learn(GaussianDiscriminantClassifier(), wine.train[:1], wine.classes)
    clf.set_params(covariance="per_class")
    with pytest.raises(ValueError, match="cannot change between tasks"):
        clf.partial_fit(*wine.train[1])


@pytest.mark.parametrize("case", cases("default", family="exact"), ids=str)
def test_a_dask_array_fit_equals_the_in_memory_fit(case, wine):
    da = pytest.importorskip("dask.array")
    X = np.concatenate([X for X, _ in wine.train])
    y = np.concatenate([y for _, y in wine.train])
    memory = case.make().fit(X, y)
    lazy = case.make().fit(
        da.from_array(X, chunks=(17, 7)), da.from_array(y, chunks=23)
    )
    X_test = np.concatenate([X for X, _ in wine.test])
    np.testing.assert_allclose(_outputs(lazy, X_test), _outputs(memory, X_test),
                               rtol=1e-9, atol=1e-9)
    assert lazy.n_features_in_ == X.shape[1]
    bad = X.copy()
    bad[40, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        lazy.partial_fit(da.from_array(bad, chunks=(17, 13)), da.from_array(y, chunks=17))
    np.testing.assert_allclose(_outputs(lazy, X_test), _outputs(memory, X_test),
                               rtol=1e-9, atol=1e-9)


