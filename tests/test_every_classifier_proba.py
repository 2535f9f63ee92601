"""Every skcl classifier gives probabilities: finite, in [0, 1], one per class
summing to one, however far an input lies from the training data: each
case of the registry, ``tests/_classifiers.py``, every kind."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from ._classifiers import cases

FAST = dict(n_epochs=20, batch_size=16, learning_rate=0.1, random_state=0)


@pytest.mark.parametrize("case", cases(), ids=str)
def test_probabilities_are_finite_and_sum_to_one_far_from_the_data(case):
    X, y = load_iris(return_X_y=True)
    clf = case.make(**FAST).fit(X, y)
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
