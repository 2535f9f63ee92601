"""Continual-learning metrics on accuracy matrices worked out by hand."""

import numpy as np
import pytest

from skcl import JointClassifier
from skcl.metrics import (
    average_accuracy,
    average_forgetting,
    backward_transfer,
    final_average_accuracy,
    task_accuracies,
)

# R[i, j]: accuracy on task i after learning task j.
R = np.array(
    [
        [0.9, 0.5, 0.2],
        [0.0, 0.8, 0.6],
        [0.0, 0.0, 0.7],
    ]
)


def test_matrix_metrics():
    assert average_accuracy(R) == pytest.approx((0.2 + 0.6 + 0.7) / 3)
    # best-before-last minus final: task 0: 0.9 - 0.2, task 1: 0.8 - 0.6
    assert average_forgetting(R) == pytest.approx((0.7 + 0.2) / 2)
    assert backward_transfer(R) == pytest.approx(((0.2 - 0.9) + (0.6 - 0.8)) / 2)
    assert average_forgetting([[0.5]]) == 0.0
    with pytest.raises(ValueError, match="square"):
        average_forgetting(np.ones((2, 3)))


def test_final_average_accuracy_weighs_tasks_equally(iris):
    clf = JointClassifier(learning_rate=0.1, random_state=0)
    for X, y in iris.train:
        clf.partial_fit(X, y, classes=iris.classes)
    # Unequal task sizes: the mean of per-task accuracies, not pooled accuracy.
    tasks = [(iris.test[0][0][:2], iris.test[0][1][:2]), iris.test[1], iris.test[2]]
    per_task = task_accuracies(clf, tasks)
    assert per_task.shape == (3,)
    manual = [np.mean(clf.predict(X) == y) for X, y in tasks]
    np.testing.assert_allclose(per_task, manual)
    assert final_average_accuracy(clf, tasks) == pytest.approx(np.mean(manual))


def test_bernoulli_probabilities_of_extreme_logits_are_exact_and_silent():
    """A logit of ±1000 gives probabilities 0 and 1 without an overflow warning."""
    import warnings

    from skcl._likelihoods import BERNOULLI, probabilities

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = probabilities(BERNOULLI, np.array([[-1000.0], [0.0], [1000.0]]))
    np.testing.assert_array_equal(p, [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
