"""Every skcl classifier gives probabilities: finite, in [0, 1], one per class
summing to one, however far an input lies from the training data."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

import skcl

FAST = dict(n_epochs=20, batch_size=16, learning_rate=0.1, random_state=0)

CLASSIFIERS = {
    "AQC": lambda: skcl.AQCClassifier(**FAST),
    "AQC, mean_field": lambda: skcl.AQCClassifier(predictive="mean_field", **FAST),
    "AQC, kron, mc": lambda: skcl.AQCClassifier(curvature="ggn", structure="kron",
                                                hidden_layer_sizes=(4,), predictive="mc",
                                                **FAST),
    "EWC, probit": lambda: skcl.EWCClassifier(predictive="probit", **FAST),
    "EWC, mean_field, evidence": lambda: skcl.EWCClassifier(
        predictive="mean_field", predictive_prior_precision="evidence", **FAST),
    "online EWC": lambda: skcl.OnlineEWCClassifier(**FAST),
    "SI": lambda: skcl.SIClassifier(**FAST),
    "NC": lambda: skcl.NCClassifier(consolidator_hidden_layer_sizes=(8,),
                                    consolidator_n_steps=10, **FAST),
    "G-VCL": lambda: skcl.GVCLClassifier(**FAST),
    "GM-VCL": lambda: skcl.GMVCLClassifier(**FAST),
    "G-SFSVI": lambda: skcl.GSFSVIClassifier(**FAST),
    "joint": lambda: skcl.JointClassifier(**FAST),
    "fine-tuning": lambda: skcl.FineTuningClassifier(**FAST),
    "Gaussian": lambda: skcl.GaussianDiscriminantClassifier(),
    "Gaussian, student_t": lambda: skcl.GaussianDiscriminantClassifier(predictive="student_t"),
    "least squares": lambda: skcl.LeastSquaresClassifier(),
    "least squares, discriminant": lambda: skcl.LeastSquaresClassifier(
        probabilities="discriminant"),
    "least squares, ranked": lambda: skcl.LeastSquaresClassifier(probabilities="ranked"),
}


def test_every_public_classifier_is_covered():
    covered = {type(make()).__name__ for make in CLASSIFIERS.values()}
    public = {name for name in skcl.__all__ if name.endswith("Classifier")}
    assert covered == public


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_probabilities_are_finite_and_sum_to_one_far_from_the_data(name):
    X, y = load_iris(return_X_y=True)
    clf = CLASSIFIERS[name]().fit(X, y)
    far = np.concatenate([X[::10] * scale for scale in (1.0, 1e3, 1e6, -1e6, 1e20, -1e30)])
    proba = clf.predict_proba(far)
    assert proba.shape == (len(far), 3)
    assert np.isfinite(proba).all()
    assert (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    # The log is the more precise: finite where a probability underflows to 0.
    log_proba = clf.predict_log_proba(far)
    assert not np.isnan(log_proba).any() and (log_proba <= 0).all()
    np.testing.assert_allclose(np.exp(log_proba), proba, atol=1e-6)
    # On the data itself they say something: the true class gets clearly more
    # than the class frequencies' 1/3, on average over the rows learned from.
    # (EWC's Laplace predictives are the least sure, at 0.49-0.50: its Fisher
    # is a mean over samples, a precision n times smaller than the sum's.)
    mean_true = clf.predict_proba(X)[np.arange(len(y)), np.searchsorted(clf.classes_, y)].mean()
    assert mean_true > 0.45
