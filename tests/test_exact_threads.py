"""Predictions made while another thread learns: each is that of one model.

A prediction of an exact classifier reads one copy of its state, and
``partial_fit`` changes the state in one step (``skcl._exact.base``): a
prediction made during a call is that of the model before the call or
after it. Before (issue 50): an ``IndexError`` from the components of one
solve read with the classes of another, or scores mixing two models.
"""

import sys
import threading

import numpy as np
import pytest
from sklearn.datasets import load_digits

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier


@pytest.fixture
def frequent_switches():
    """Threads switched every microsecond, so that a race shows in a few calls."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def _calls(grow):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    if grow:  # the classes in order, 60 rows a call: a call may bring new ones
        order = np.argsort(y, kind="stable")
        return [(X[order][a:a + 60], y[order][a:a + 60]) for a in range(0, len(y), 60)]
    return [(X[i::30], y[i::30]) for i in range(30)]  # interleaved, every class


@pytest.mark.parametrize("make, grow, method", [
    # The components change between calls; the classes do.
    (GaussianDiscriminantClassifier, False, "predict_proba"),
    (LeastSquaresClassifier, True, "decision_function"),
])
def test_predictions_while_another_thread_learns_are_each_of_one_model(
        frequent_switches, make, grow, method):
    calls = _calls(grow)
    X_test = load_digits().data[::10] / 16.0
    classes = None if grow else np.arange(10)
    clf = make(grow_classes=grow).partial_fit(*calls[0], classes=classes)
    done, seen, errors = threading.Event(), [], []

    def learn():
        try:
            for X, y in calls[1:]:
                clf.partial_fit(X, y)
        finally:
            done.set()

    learner = threading.Thread(target=learn)
    learner.start()
    while not done.is_set():
        try:
            seen.append(getattr(clf, method)(X_test))
        except Exception as error:  # noqa: BLE001  (any error is the defect)
            errors.append(error)
            break
    learner.join()
    assert not errors
    # Each prediction is that of the model after some prefix of the calls.
    reference = make(grow_classes=grow)
    models = []
    for X, y in calls:
        models.append(getattr(reference.partial_fit(X, y, classes=classes), method)(X_test))
    assert len(seen) >= 3
    for answer in seen:
        assert any(model.shape == answer.shape
                   and np.allclose(model, answer, rtol=1e-9, atol=1e-12) for model in models)
