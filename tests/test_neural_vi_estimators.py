"""NC and the variational baselines as a user sees them: bad input and bad
hyperparameters, determinism, pickling, and whole task sequences."""

import pickle

import numpy as np
import pytest

from skcl import GMVCLClassifier, GSFSVIClassifier, GVCLClassifier, NCClassifier
from skcl.metrics import final_average_accuracy, task_accuracies

from .conftest import IRIS_SETTINGS
from .test_estimators import learned_state

# A small consolidator keeps these contract tests cheap; the defaults are
# exercised by the NC tests and the acceptance test.
SMALL_NC = dict(consolidator_hidden_layer_sizes=(8,), consolidator_n_steps=200)
NEW = [
    (NCClassifier, SMALL_NC),
    (GVCLClassifier, {}),
    (GMVCLClassifier, {}),
    (GSFSVIClassifier, {}),
]
IDS = [cls.__name__ for cls, _ in NEW]


def two_tasks(cls, params, iris, random_state=0):
    clf = cls(**IRIS_SETTINGS, **params, random_state=random_state)
    for X, y in iris.train[:2]:
        clf.partial_fit(X, y, classes=iris.classes)
    return clf


@pytest.fixture(scope="module", params=NEW, ids=IDS)
def fitted(request, iris):
    cls, params = request.param
    return cls, params, two_tasks(cls, params, iris)


def test_rejected_task_leaves_state_unchanged(fitted, iris):
    _, _, clf = fitted
    before = learned_state(clf)
    X, y = iris.train[2]
    bad = {
        "NaN": ((np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), y), "NaN"),
        "features": ((X[:, :3], y), "features"),
        "unknown label": ((X, np.full_like(y, 7)), "not in classes"),
        "empty": ((X[:0], y[:0]), "0 sample"),
    }
    for name, (args, message) in bad.items():
        with pytest.raises(ValueError, match=message):
            clf.partial_fit(*args)
        assert learned_state(clf) == before, name
    assert clf.n_tasks_seen_ == 2


@pytest.mark.parametrize(
    "cls, params, message",
    [
        (NCClassifier, dict(radius=-1.0), "radius"),
        (NCClassifier, dict(alpha=0.0), "alpha"),
        (NCClassifier, dict(consolidator_n_steps=0), "consolidator_n_steps"),
        (NCClassifier, dict(consolidator_sample_size=2.5), "consolidator_sample_size"),
        (NCClassifier, dict(consolidator_l2=np.nan), "consolidator_l2"),
        (NCClassifier, dict(consolidator_learning_rate=-1), "consolidator_learning_rate"),
        (NCClassifier, dict(consolidator_hidden_layer_sizes=(0,)), "consolidator_hidden"),
        (GVCLClassifier, dict(n_train_samples=0), "n_train_samples"),
        (GVCLClassifier, dict(n_predict_samples=1.5), "n_predict_samples"),
        (GMVCLClassifier, dict(n_components=0), "n_components"),
        (GSFSVIClassifier, dict(n_inducing_points=0), "n_inducing_points"),
        (GSFSVIClassifier, dict(inducing_bounds=(1.0,)), "inducing_bounds"),
        (GSFSVIClassifier, dict(inducing_bounds=(2.0, 1.0)), "low <= high"),
        (GSFSVIClassifier, dict(inducing_bounds=([0, 0], [1, 1])), "inducing_bounds"),
    ],
)
def test_bad_hyperparameters_are_rejected_before_anything_is_learned(cls, params, message, iris):
    clf = cls(**params)
    with pytest.raises(ValueError, match=message):
        clf.partial_fit(*iris.train[0], classes=iris.classes)
    assert not hasattr(clf, "classes_")


def test_same_random_state_same_results(fitted, iris):
    cls, params, a = fitted
    b = two_tasks(cls, params, iris)
    assert learned_state(a) == learned_state(b)
    X = np.concatenate([X for X, _ in iris.test])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.predict_proba(X), a.predict_proba(X))
    c = two_tasks(cls, params, iris, random_state=1)
    assert not np.array_equal(a.theta_, c.theta_)


def test_pickling_between_tasks_changes_nothing(fitted, iris):
    cls, params, _ = fitted
    straight = two_tasks(cls, params, iris)
    revived = pickle.loads(pickle.dumps(two_tasks(cls, params, iris)))
    straight.partial_fit(*iris.train[2])
    revived.partial_fit(*iris.train[2])
    assert learned_state(straight) == learned_state(revived)
    X = np.concatenate([X for X, _ in iris.test])
    np.testing.assert_array_equal(straight.predict_proba(X), revived.predict_proba(X))


def test_variational_prediction_averages_the_posterior_samples(iris):
    clf = two_tasks(GMVCLClassifier, {}, iris)
    X = iris.test[0][0]
    by_hand = np.mean(
        [_softmax(X @ t[:12].reshape(4, 3) + t[12:]) for t in clf.posterior_samples_], axis=0
    )
    np.testing.assert_allclose(clf.predict_proba(X), by_hand, rtol=1e-6)
    assert clf.posterior_samples_.shape == (100, 15)
    assert clf.posterior_.shape == (3 * (2 * 15 + 1),)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[by_hand.argmax(1)])


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_sfsvi_box_grows_with_the_tasks_or_is_given(iris):
    clf = GSFSVIClassifier(**IRIS_SETTINGS, random_state=0)
    seen = []
    for X, y in iris.train:
        clf.partial_fit(X, y, classes=iris.classes)
        seen.append(X)
        np.testing.assert_allclose(clf.inducing_low_, np.concatenate(seen).min(0), rtol=1e-6)
        np.testing.assert_allclose(clf.inducing_high_, np.concatenate(seen).max(0), rtol=1e-6)
    given = GSFSVIClassifier(inducing_bounds=(-1, 6), **IRIS_SETTINGS, random_state=0)
    given.partial_fit(*iris.train[0], classes=iris.classes)
    np.testing.assert_array_equal(given.inducing_low_, np.full(4, -1.0))
    np.testing.assert_array_equal(given.inducing_high_, np.full(4, 6.0))


VI = [GVCLClassifier, GMVCLClassifier, GSFSVIClassifier]


@pytest.mark.slow
@pytest.mark.parametrize("cls", VI)
@pytest.mark.parametrize("hidden", [(), (4,)], ids=["SR", "FCNN"])
def test_variational_baselines_run_ci_split_iris(cls, hidden, iris):
    clf = cls(hidden_layer_sizes=hidden, **IRIS_SETTINGS, random_state=0)
    for X, y in iris.train:
        clf.partial_fit(X, y, classes=iris.classes)
    accuracies = task_accuracies(clf, iris.test)
    assert accuracies[-1] >= 0.9  # the last task is learned
    assert 0 <= final_average_accuracy(clf, iris.test) <= 1
    proba = clf.predict_proba(np.concatenate([X for X, _ in iris.test]))
    np.testing.assert_allclose(proba.sum(1), 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("cls", VI)
def test_variational_baselines_run_ci_split_wine(cls, wine):
    # Softmax regression only: Wine's tasks differ in size, so each task
    # compiles anew (the FCNN column is in examples/nc_vi_table.py).
    clf = cls(n_epochs=100, batch_size=16, learning_rate=0.01, random_state=0)
    for X, y in wine.train:
        clf.partial_fit(X, y, classes=wine.classes)
    assert task_accuracies(clf, wine.test)[-1] >= 0.9
    proba = clf.predict_proba(np.concatenate([X for X, _ in wine.test]))
    np.testing.assert_allclose(proba.sum(1), 1.0)
