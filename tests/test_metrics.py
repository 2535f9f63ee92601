"""Continual-learning metrics on accuracy matrices worked out by hand."""

from pathlib import Path

import numpy as np
import pytest

import skcl.metrics
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

    from skcl._gradient.likelihoods import BERNOULLI, proba

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = proba(BERNOULLI, np.array([[-1000.0], [0.0], [1000.0]]))
    np.testing.assert_array_equal(p, [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])


def _ece_by_hand(y_true, y_prob, labels, n_bins):
    """The definition, sample by sample: bins (b/M, (b+1)/M], 0 in the first."""
    n = len(y_true)
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        members = [i for i in range(n)
                   if (lo < max(y_prob[i]) <= hi) or (b == 0 and max(y_prob[i]) == 0)]
        if not members:
            continue
        correct = [labels[list(y_prob[i]).index(max(y_prob[i]))] == y_true[i] for i in members]
        confidence = [max(y_prob[i]) for i in members]
        total += len(members) / n * abs(sum(correct) / len(members)
                                        - sum(confidence) / len(members))
    return total


def test_expected_calibration_error_against_the_definition():
    from skcl.metrics import expected_calibration_error

    # Worked by hand: bins of 0.2; 0.9 right, {0.8, 0.7} right, 0.6 wrong.
    y_prob = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]
    expected = 0.25 * 0.1 + 0.5 * 0.25 + 0.25 * 0.6
    assert expected_calibration_error([0, 0, 1, 1], y_prob, n_bins=5) == pytest.approx(expected)
    rng = np.random.default_rng(0)
    for n_bins in (1, 3, 10, 15):
        proba = rng.dirichlet(np.ones(3) * 0.7, size=200)
        y = rng.choice(["a", "b", "c"], size=200)
        got = expected_calibration_error(y, proba, n_bins=n_bins)
        assert got == pytest.approx(_ece_by_hand(list(y), proba.tolist(), ["a", "b", "c"], n_bins))
    # Perfectly confident and right: 0; confident and wrong: 1.
    assert expected_calibration_error([0, 1], [[1.0, 0.0], [0.0, 1.0]]) == 0.0
    assert expected_calibration_error([1, 0], [[1.0, 0.0], [0.0, 1.0]]) == 1.0
    # A task with one of three classes needs labels to name the columns.
    with pytest.raises(ValueError, match="pass labels="):
        expected_calibration_error([2, 2], [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])
    assert expected_calibration_error([2, 2], [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]],
                                      labels=[0, 1, 2], n_bins=10) == pytest.approx(
        0.5 * 0.3 + 0.5 * 0.6)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="n_bins must be a positive integer"):
            expected_calibration_error([0, 1], [[1.0, 0.0], [0.0, 1.0]], n_bins=bad)


@pytest.fixture(scope="module")
def joint_on_iris(iris):
    clf = JointClassifier(learning_rate=0.1, random_state=0, n_epochs=20)
    for X, y in iris.train:
        clf.partial_fit(X, y, classes=iris.classes)
    return clf


@pytest.mark.filterwarnings("ignore:A single label was found")
def test_task_scores_accepts_names_scorers_and_metric_functions(iris, joint_on_iris):
    from sklearn.metrics import (
        balanced_accuracy_score,
        brier_score_loss,
        get_scorer,
        log_loss,
        make_scorer,
    )

    from skcl.metrics import expected_calibration_error, task_scores

    clf, tasks = joint_on_iris, iris.test
    np.testing.assert_array_equal(task_scores(clf, tasks), task_accuracies(clf, tasks))
    # Each test task holds one class of three: the metrics see all three.
    by_hand = [log_loss(y, clf.predict_proba(X), labels=clf.classes_) for X, y in tasks]
    np.testing.assert_allclose(task_scores(clf, tasks, log_loss), by_hand)
    np.testing.assert_allclose(task_scores(clf, tasks, "neg_log_loss"), -np.array(by_hand))
    np.testing.assert_allclose(task_scores(clf, tasks, get_scorer("neg_log_loss")),
                               -np.array(by_hand))
    brier = [brier_score_loss(y, clf.predict_proba(X), labels=clf.classes_) for X, y in tasks]
    np.testing.assert_allclose(task_scores(clf, tasks, "neg_brier_score"), -np.array(brier))
    np.testing.assert_allclose(task_scores(clf, tasks, brier_score_loss), brier)
    ece = [expected_calibration_error(y, clf.predict_proba(X), labels=clf.classes_)
           for X, y in tasks]
    np.testing.assert_allclose(task_scores(clf, tasks, expected_calibration_error), ece)
    balanced = [balanced_accuracy_score(y, clf.predict(X)) for X, y in tasks]
    np.testing.assert_allclose(task_scores(clf, tasks, balanced_accuracy_score), balanced)
    custom = make_scorer(log_loss, response_method="predict_proba", labels=[0, 1, 2])
    np.testing.assert_allclose(task_scores(clf, tasks, custom), by_hand)
    np.testing.assert_allclose(
        task_scores(clf, tasks, lambda estimator, X, y: float(len(y))),
        [len(y) for _, y in tasks])
    with pytest.raises(ValueError, match="Unknown scoring 'accuracy_score'"):
        task_scores(clf, tasks, "accuracy_score")
    with pytest.raises(TypeError, match="scoring must be"):
        task_scores(clf, tasks, 3)


def test_only_metrics_reads_a_scorers_private_attributes():
    """scikit-learn's scorer internals are read in one adapter,
    skcl.metrics._scorer_parts, so a change in them has one place to mend."""
    package = Path(skcl.metrics.__file__).parent
    private = ("._score_func", "._sign", "._kwargs", "._response_method")
    users = {path.relative_to(package).as_posix() for path in package.rglob("*.py")
             if any(name in path.read_text(encoding="utf-8") for name in private)}
    assert users == {"metrics.py"}
