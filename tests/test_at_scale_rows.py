"""The tables' random-feature rows: RanDumb's joint bound and least squares on RandomFeatures."""

import numpy as np
from sklearn.covariance import OAS
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import StandardScaler

from skcl import LeastSquaresClassifier
from skcl.datasets import load_ci_split_wine
from skcl.feature_extraction import RandomFeatures
from skcl.reproduce import SEQUENCES, select_methods
from skcl.reproduce._at_scale import RandomFeaturesLeastSquares, RanDumbJoint


def test_randumb_joint_is_sklearns_model_fit_on_everything_seen():
    data = load_ci_split_wine()
    model = RanDumbJoint(300, random_state=0)
    X_test = np.vstack([X for X, _ in data.test])
    seen_X, seen_y = [], []
    for X, y in data.train:
        model.partial_fit(X, y, classes=data.classes)
        seen_X.append(X)
        seen_y.append(y)
        if len(np.unique(np.concatenate(seen_y))) < 2:
            continue
        joint = sk_make_pipeline(
            StandardScaler(), RBFSampler(gamma="scale", n_components=300, random_state=0),
            LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS()),
        ).fit(np.vstack(seen_X), np.concatenate(seen_y))
        np.testing.assert_array_equal(model.predict(X_test), joint.predict(X_test))
        # Probabilities for every declared class, the unseen ones at 0.
        proba = model.predict_proba(X_test)
        seen = np.isin(data.classes, joint.classes_)
        np.testing.assert_allclose(proba[:, seen], joint.predict_proba(X_test))
        assert not proba[:, ~seen].any()
    assert model.score(X_test, np.concatenate([y for _, y in data.test])) > 0.9


def test_random_features_least_squares_is_the_pipeline_with_a_frozen_scaler():
    data = load_ci_split_wine()
    model = RandomFeaturesLeastSquares(300, random_state=0, backend="numpy")
    scaler = StandardScaler().fit(data.train[0][0])
    features = RandomFeatures(300, backend="numpy", random_state=0).fit(
        scaler.transform(data.train[0][0]))  # as the pipeline fits it: on the scaled rows
    head = LeastSquaresClassifier(random_state=0, backend="numpy")
    for X, y in data.train:
        model.partial_fit(X, y, classes=data.classes)
        head.partial_fit(features.transform(scaler.transform(X)), y, classes=data.classes)
    X_test = np.vstack([X for X, _ in data.test])
    np.testing.assert_allclose(model.decision_function(X_test),
                               head.decision_function(features.transform(
                                   scaler.transform(X_test))), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.predict_proba(X_test),
                               head.predict_proba(features.transform(scaler.transform(X_test))),
                               rtol=1e-10, atol=1e-12)


def test_the_rows_are_registered_and_small_on_the_classical_sequences():
    rf, randumb = select_methods(["rf-least-squares", "randumb"])
    assert rf.origin == "skcl" and randumb.origin == "scikit-learn"
    assert rf.resolve() is RandomFeaturesLeastSquares and randumb.resolve() is RanDumbJoint
    assert rf.resolve()().n_components == 2000  # the default size elsewhere
    for key in ("ci-split-iris", "ci-split-wine", "ci-split-2d-iris"):
        assert SEQUENCES[key].method_settings[rf.name] == {"n_components": 500}


def test_every_method_of_the_tables_gives_probabilities():
    # The runner scores every row's log loss and ECE: a row without
    # predict_proba would stop `skcl reproduce` after the rows before it.
    for method in select_methods():
        estimator = method.resolve()(**method.params)
        assert hasattr(estimator, "predict_proba"), method.name
