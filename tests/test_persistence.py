"""Every public estimator saved with skops mid-sequence loads with
``trusted=skcl.trusted_types()`` alone, predicts bit for bit as before, and
goes on learning to the very state the uninterrupted one reaches."""

import numpy as np
import pytest
import skops.io as sio
from sklearn.datasets import load_digits, load_iris
from sklearn.preprocessing import StandardScaler

import skcl
from skcl.feature_extraction import PretrainedFeatureExtractor, RandomFeatures
from skcl.pipeline import make_pipeline

from ._classifiers import cases

FAST = dict(n_epochs=5, batch_size=16, learning_rate=0.1, n_predict_samples=5,
            random_state=0)

# The registry's default and state cases (each public classifier, and the
# configurations whose fitted state holds other types: Kronecker curvature,
# grown classes, one covariance per class), and a pipeline.
ESTIMATORS = {case.id: (lambda case=case: case.make(**FAST)) for case in cases("default", "state")}
ESTIMATORS["pipeline, random features"] = lambda: make_pipeline(
    StandardScaler(), RandomFeatures(64, random_state=0), skcl.LeastSquaresClassifier())


def learn(estimator, tasks, classes):
    for X, y in tasks:
        estimator.partial_fit(X, y, classes=classes)
    return estimator


def assert_same_predictions(a, b, X):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def round_trip(estimator):
    data = sio.dumps(estimator)
    assert set(sio.get_untrusted_types(data=data)) <= set(skcl.trusted_types())
    return sio.loads(data, trusted=skcl.trusted_types())


def iris_tasks():
    """Three tasks of Iris rows (every class in each, so no task warns), and test rows."""
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(X))
    tasks = [(X[rows], y[rows]) for rows in np.array_split(order[:120], 3)]
    return tasks, X[order[120:]]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_saved_mid_sequence_predicts_and_goes_on_learning_as_before(name):
    tasks, X_test = iris_tasks()
    saved = learn(ESTIMATORS[name](), tasks[:2], [0, 1, 2])
    loaded = round_trip(saved)
    assert loaded is not saved
    assert_same_predictions(saved, loaded, X_test)
    before = saved.predict_proba(X_test)
    # The last task, learned by both: the loaded copy ends where the
    # uninterrupted estimator does, bit for bit (and the task moved it).
    learn(saved, tasks[2:], [0, 1, 2])
    learn(loaded, tasks[2:], [0, 1, 2])
    assert_same_predictions(saved, loaded, X_test)
    assert not np.array_equal(saved.predict_proba(X_test), before)


def test_feature_extractors_round_trip():
    X, y = load_digits(return_X_y=True)
    X = X / 16
    extractor = PretrainedFeatureExtractor("cnn4", image_shape=(8, 8), n_epochs=1,
                                           random_state=0).fit(X[:200], y[:200])
    features = RandomFeatures(32, activation="cos", random_state=0).fit(X)
    for transformer in (extractor, features):
        loaded = round_trip(transformer)
        np.testing.assert_array_equal(loaded.transform(X[200:260]),
                                      transformer.transform(X[200:260]))


def test_a_file_holding_any_other_type_is_refused():
    tasks, _ = iris_tasks()
    clf = learn(skcl.LeastSquaresClassifier(), tasks[:1], [0, 1, 2])
    clf.note_ = Foreign()  # any type skops does not trust, and skcl does not list
    payload = sio.dumps(clf)
    assert f"{__name__}.Foreign" in sio.get_untrusted_types(data=payload)
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException, match="Foreign"):
        sio.loads(payload, trusted=skcl.trusted_types())


class Foreign:
    pass


def test_the_trusted_types_are_skcl_estimators_and_plain_records():
    names = skcl.trusted_types()
    assert names == sorted(set(names))
    assert all(name.startswith("skcl.") for name in names)
    # What a user would otherwise type by hand, found from the classes.
    for cls in (skcl.AQCClassifier, skcl.GaussianDiscriminantClassifier, RandomFeatures):
        assert f"{cls.__module__}.{cls.__qualname__}" in names


def test_every_exact_record_trusted_is_one_a_fitted_exact_estimator_holds():
    # Before: the working values of a solve (LAPACK's ctypes routines, the
    # ridge's spectrum and fit, a band reduction) were trusted too, though
    # no estimator keeps them (issue 50).
    X, y = load_iris(return_X_y=True)
    held = set()
    for est in [skcl.GaussianDiscriminantClassifier(),
                skcl.GaussianDiscriminantClassifier("heldout", covariance="per_class",
                                                    predictive="student_t", random_state=0),
                skcl.LeastSquaresClassifier(),
                skcl.LeastSquaresClassifier(1.0, probabilities="discriminant"),
                skcl.LeastSquaresClassifier("heldout", probabilities="ranked", random_state=0),
                skcl.GaussianDiscriminantClassifier(covariance="per_domain",
                                                    components="task_class")]:
        for t in range(3):
            est.partial_fit(X[t::3], y[t::3], classes=[0, 1, 2])
        est.predict_proba(X)  # the solve and what predictions derive from it
        held.update(sio.get_untrusted_types(data=sio.dumps(est)))
    trusted = {name for name in skcl.trusted_types() if name.startswith("skcl._exact.")}
    assert trusted == held
