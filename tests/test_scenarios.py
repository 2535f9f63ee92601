"""Task-incremental scoring: only each task's classes compete, for every classifier.

Checked against the argmax over the task's columns computed by hand, on
CI Split digits (scikit-learn's 8×8 digits cut into Split MNIST's five
pairs), through the metrics, ``learn_task_sequence``,
``SequenceGridSearch`` and ``skcl reproduce``.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss

from skcl import (
    EWCClassifier,
    FineTuningClassifier,
    GaussianDiscriminantClassifier,
    LeastSquaresClassifier,
)
from skcl import reproduce as rp
from skcl.metrics import final_average_accuracy, task_accuracies, task_scores
from skcl.model_selection import SequenceGridSearch, learn_task_sequence

PAIRS = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]


def _learned(estimator, tasks):
    for X, y in tasks:
        estimator.partial_fit(X, y, classes=np.arange(10))
    return estimator


def by_hand(scores, classes, labels, y):
    """Accuracy of the argmax over the task's columns of ``scores``."""
    columns = np.isin(classes, labels)
    predicted = classes[columns][np.argmax(scores[:, columns], axis=1)]
    return np.mean(predicted == y)


@pytest.mark.parametrize("make", [
    GaussianDiscriminantClassifier,
    LeastSquaresClassifier,
    lambda: FineTuningClassifier(learning_rate=0.1, n_epochs=5, random_state=0),
])
def test_task_accuracy_is_the_argmax_over_the_tasks_columns(ci_split_digits, make):
    clf = _learned(make(), ci_split_digits["train"])
    task = task_accuracies(clf, ci_split_digits["test"], scenario="task", task_labels=PAIRS)
    expected = [by_hand(clf.predict_proba(X), clf.classes_, labels, y)
                for (X, y), labels in zip(ci_split_digits["test"], PAIRS)]
    np.testing.assert_allclose(task, expected)
    # Without the task's identity the other classes compete: no higher, and
    # far below for fine-tuning, which predicts the last pair everywhere.
    plain = task_accuracies(clf, ci_split_digits["test"])
    assert np.all(task >= plain - 1e-12)
    np.testing.assert_array_equal(task_accuracies(clf, ci_split_digits["test"], scenario="domain"),
                                  plain)
    assert final_average_accuracy(clf, ci_split_digits["test"], scenario="task",
                                  task_labels=PAIRS) == pytest.approx(np.mean(expected))
    if isinstance(clf, FineTuningClassifier):
        assert np.mean(plain) < 0.25 and np.mean(task) > np.mean(plain) + 0.2


def test_a_classifier_without_probabilities_competes_by_its_decision_function(ci_split_digits):
    X = np.concatenate([X for X, _ in ci_split_digits["train"]])
    y = np.concatenate([y for _, y in ci_split_digits["train"]])
    clf = SGDClassifier(random_state=0).fit(X, y)  # hinge loss: no predict_proba
    task = task_accuracies(clf, ci_split_digits["test"], scenario="task", task_labels=PAIRS)
    expected = [by_hand(clf.decision_function(X), clf.classes_, labels, y)
                for (X, y), labels in zip(ci_split_digits["test"], PAIRS)]
    np.testing.assert_allclose(task, expected)


def test_task_probabilities_are_renormalised_over_the_task(ci_split_digits):
    clf = _learned(GaussianDiscriminantClassifier(), ci_split_digits["train"])
    losses = task_scores(clf, ci_split_digits["test"], log_loss, scenario="task", task_labels=PAIRS)
    for loss, (X, y), labels in zip(losses, ci_split_digits["test"], PAIRS):
        p = clf.predict_proba(X)[:, labels]
        assert loss == pytest.approx(log_loss(y, p / p.sum(axis=1, keepdims=True),
                                              labels=labels))


def test_labels_the_classifier_has_not_met_count_as_errors(ci_split_digits):
    clf = GaussianDiscriminantClassifier(grow_classes=True)
    for X, y in ci_split_digits["train"][:2]:
        clf.partial_fit(X, y)  # meets 0..3 only
    acc = task_accuracies(clf, ci_split_digits["test"][:3], scenario="task", task_labels=PAIRS[:3])
    assert acc[0] > 0.95 and acc[1] > 0.9 and acc[2] == 0.0


def test_bad_scenarios_and_task_labels_are_refused(ci_split_digits):
    clf = _learned(GaussianDiscriminantClassifier(), ci_split_digits["train"][:1])
    with pytest.raises(ValueError, match="pass task_labels"):
        task_accuracies(clf, ci_split_digits["test"], scenario="task")
    with pytest.raises(ValueError, match="labels of each of the 5 tasks"):
        task_accuracies(clf, ci_split_digits["test"], scenario="task", task_labels=PAIRS[:4])
    with pytest.raises(ValueError, match="scenario must be one of"):
        final_average_accuracy(clf, ci_split_digits["test"], scenario="tasks")
    with pytest.raises(ValueError, match="scenario must be one of"):
        learn_task_sequence(GaussianDiscriminantClassifier(), ci_split_digits["train"],
                            scenario="Task")


def test_learn_task_sequence_scores_each_task_among_its_classes(ci_split_digits):
    R = learn_task_sequence(GaussianDiscriminantClassifier(), ci_split_digits["train"],
                            ci_split_digits["test"], scenario="task", task_labels=PAIRS)
    clf = _learned(GaussianDiscriminantClassifier(), ci_split_digits["train"])
    np.testing.assert_allclose(R[:, -1], task_accuracies(clf, ci_split_digits["test"],
                                                         scenario="task", task_labels=PAIRS))
    assert R[:, -1].mean() > learn_task_sequence(
        GaussianDiscriminantClassifier(), ci_split_digits["train"],
        ci_split_digits["test"])[:, -1].mean()


def test_the_search_chooses_on_task_incremental_scores(ci_split_digits):
    clf = FineTuningClassifier(learning_rate=0.1, n_epochs=3, random_state=0)
    search = SequenceGridSearch(clf, {"learning_rate": [0.1, 0.01]}, scenario="task",
                                task_scoring="neg_log_loss")
    search.fit(ci_split_digits["train"], ci_split_digits["validation"], task_labels=PAIRS)
    best = search.best_estimator_
    assert search.best_score_ == pytest.approx(final_average_accuracy(
        best, ci_split_digits["validation"], scenario="task", task_labels=PAIRS))
    assert search.best_score_ > final_average_accuracy(best, ci_split_digits["validation"]) + 0.3
    expected = np.mean(task_scores(best, ci_split_digits["validation"], "neg_log_loss",
                                   scenario="task", task_labels=PAIRS))
    best_row = search.best_index_
    assert search.cv_results_["validation_neg_log_loss"][best_row] == pytest.approx(expected)
    with pytest.raises(ValueError, match="pass task_labels"):
        SequenceGridSearch(clf, {}, scenario="task").fit(ci_split_digits["train"],
                                                         ci_split_digits["validation"])
    with pytest.raises(ValueError, match="scenario must be one of"):
        SequenceGridSearch(clf, {}, scenario="all").fit(ci_split_digits["train"],
                                                        ci_split_digits["validation"])


def test_reproduce_scores_a_task_incremental_column(monkeypatch):
    seq = rp.SEQUENCES["ci-split-iris"]
    labels = ((0, 1), (1, 2), (0, 2))  # each Iris task among two species
    monkeypatch.setitem(rp.SEQUENCES, "ci-split-iris",
                        dataclasses.replace(seq, scenario="task", task_labels=labels))
    methods = rp.select_methods(["exact-gaussian", "fine-tuning"])
    rows, models = rp.run_column("ci-split-iris", "sr", methods)
    test = seq.loader().test
    for row in rows:
        model = models[row["method"]]
        expected = task_accuracies(model, test, scenario="task", task_labels=labels)
        np.testing.assert_allclose(row["test_task_accuracies"], 100 * expected)
    fine_tuning = next(row for row in rows if row["method"] == "Fine-tuning")
    # Fine-tuning predicts the last species everywhere: class-IL keeps 1/3;
    # task-IL the last task and the second (where species 2 competes).
    assert fine_tuning["test"] > 60


# ---------------------------------------------------------------------------
# Task-incremental training of the gradient-trained methods.


def test_the_task_likelihood_is_the_softmax_over_the_tasks_logits():
    import jax
    import jax.numpy as jnp

    from skcl._gradient import likelihoods

    rng = np.random.default_rng(0)
    logits = jnp.asarray(rng.normal(size=(6, 5)) * 3, jnp.float32)
    logits = logits.at[:, 4].set(1e4)  # a huge logit outside the task changes nothing
    y, w = np.array([0, 2, 3, 2, 0, 3]), jnp.asarray(rng.uniform(size=6), jnp.float32)
    task = [0, 2, 3]
    rows = jnp.asarray(likelihoods.task_rows(y, task, 5))
    masked = likelihoods.nll("categorical", logits, rows, w)
    restricted = likelihoods.nll("categorical", logits[:, task],
                                 jnp.asarray(np.searchsorted(task, y)), w)
    assert float(masked) == pytest.approx(float(restricted), rel=1e-6)
    grad = jax.grad(lambda f: likelihoods.nll("categorical", f, rows, w))(logits)
    assert np.all(np.isfinite(grad)) and np.all(np.asarray(grad)[:, [1, 4]] == 0)
    grad_restricted = jax.grad(lambda f: likelihoods.nll(
        "categorical", f, jnp.asarray(np.searchsorted(task, y)), w))(logits[:, task])
    np.testing.assert_allclose(np.asarray(grad)[:, task], grad_restricted, rtol=1e-5, atol=1e-6)


def test_masked_training_is_training_on_the_tasks_logits_alone(ci_split_digits):
    """One task of classes {0, 1, 2} in a 4-class softmax regression trains
    those three columns exactly as a 3-class softmax regression started from
    them (Adam and the prior act coordinate by coordinate)."""
    import jax

    from skcl._gradient import likelihoods
    from skcl._gradient.consolidation import Prior
    from skcl._gradient.model import Model
    from skcl._gradient.networks import MLP
    from skcl._gradient.training import minimize

    X, y = load_digits(return_X_y=True)
    keep = y < 3
    X, y = (X[keep] / 16.0).astype(np.float32), y[keep].astype(np.int32)
    w = np.ones(len(y), np.float32)
    four, three = MLP(64, (), 4), MLP(64, (), 3)
    theta4 = np.asarray(four.init(jax.random.PRNGKey(0)))
    (W, b), = four.unflatten(theta4)
    theta3 = np.concatenate([W[:, :3].ravel(), b[:3]])
    results = []
    for network, theta, labels in ((four, theta4, likelihoods.task_rows(y, [0, 1, 2], 4)),
                                   (three, theta3, y)):
        model = Model(network, "categorical")
        state = Prior().init(model, 1.0, theta, None)
        trained = minimize(model, Prior(), state, theta, X, labels, w, jax.random.PRNGKey(1),
                           0.05, n_epochs=2, batch_size=32)
        results.append(np.asarray(trained.params))
    (W4, b4), = four.unflatten(results[0])
    (W3, b3), = three.unflatten(results[1])
    np.testing.assert_allclose(W4[:, :3], W3, atol=2e-5)
    np.testing.assert_allclose(b4[:3], b3, atol=2e-5)
    assert np.abs(W4[:, 3] - W[:, 3]).max() > 0  # the prior alone moved column 3


def test_task_incremental_training_keeps_the_old_tasks(ci_split_digits):
    def learned(scenario):
        clf = EWCClassifier(alpha=10, learning_rate=0.1, n_epochs=3, random_state=0,
                            scenario=scenario)
        return _learned(clf, ci_split_digits["train"][:3])

    task, plain = learned("task"), learned("class")
    score = dict(scenario="task", task_labels=PAIRS[:3])
    # Trained task by task among its own classes, EWC keeps each pair apart.
    test = ci_split_digits["test"][:3]
    assert final_average_accuracy(task, test, **score) > 0.95
    assert final_average_accuracy(task, test, **score) > final_average_accuracy(
        plain, test, **score) + 0.05
    # Its curvature is the task's softmax's: the stand-in differs.
    assert not np.allclose(task.importance_, plain.importance_)


def test_task_incremental_training_compiles_once_for_every_task(ci_split_digits):
    from skcl._gradient import training

    clf = FineTuningClassifier(learning_rate=0.1, n_epochs=2, random_state=0, scenario="task")
    tasks = [(X[:150], y[:150]) for X, y in ci_split_digits["train"]]  # one padded size
    clf.partial_fit(*tasks[0], classes=np.arange(10))
    compiled = training._minimize._cache_size()
    for X, y in tasks[1:]:
        clf.partial_fit(X, y)
    assert training._minimize._cache_size() == compiled


def test_task_incremental_training_refuses_growing_classes(ci_split_digits):
    clf = FineTuningClassifier(scenario="task", grow_classes=True)
    with pytest.raises(ValueError, match="cannot be combined with grow_classes"):
        clf.partial_fit(*ci_split_digits["train"][0])
    assert not hasattr(clf, "theta_")
    with pytest.raises(ValueError, match="scenario"):
        FineTuningClassifier(scenario="tasks").partial_fit(*ci_split_digits["train"][0],
                                                            classes=np.arange(10))


class _ProbaOnly:
    """A classifier with predict_proba and decision_function but no log
    probabilities, as skcl reproduce's random-feature rows."""

    def __init__(self, model):
        self.model, self.classes_ = model, model.classes_

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def decision_function(self, X):
        return self.model.decision_function(X)

    def predict(self, X):
        return self.model.predict(X)


def test_task_probabilities_that_underflowed_are_ranked_by_the_decision_function(ci_split_digits):
    # 8s and 9s, magnified, scored as the task of 0 and 1: some rows give
    # both a probability of exactly 0 (their logs -inf).
    clf = _learned(GaussianDiscriminantClassifier(), ci_split_digits["train"])
    X, y = ci_split_digits["test"][4]
    task = [(100 * X, np.where(y == 8, 0, 1))]
    assert (clf.predict_proba(task[0][0])[:, :2] == 0).all(axis=1).any()
    view = _ProbaOnly(clf)
    score = dict(scenario="task", task_labels=[[0, 1]])
    # The log joint (the Gaussian's decision function) ranks them as its own
    # log probabilities do; the log loss stays finite.
    np.testing.assert_array_equal(task_accuracies(view, task, **score),
                                  task_accuracies(clf, task, **score))
    assert np.isfinite(task_scores(view, task, log_loss, **score)).all()


def test_the_scenario_columns_of_skcl_reproduce(shared_data_dir, monkeypatch):
    """The seven columns of the field's table are registered with their
    scenario and task labels; one runs end to end on a slice of each task
    (100 rows, 200 random features), its tasks views of the shared images."""
    keys = [key for key, _ in rp.columns_for("scenarios")]
    assert keys == ["split-mnist-task", "split-mnist-domain", "split-mnist-class",
                    "permuted-mnist-task", "permuted-mnist-domain", "permuted-mnist-class",
                    "rotated-mnist-domain"]
    assert [key for key, _ in rp.columns_for("scenarios-small")] == [f"{k}-small" for k in keys]
    task = rp.SEQUENCES["permuted-mnist-task"]
    assert task.scenario == "task" and task.task_labels[9] == tuple(range(90, 100))
    assert rp.SEQUENCES["split-mnist-task"].task_labels == tuple(map(tuple, PAIRS))
    assert rp.SEQUENCES["rotated-mnist-domain"].scoring_scenario == {
        "scenario": "domain", "task_labels": None}
    data = task.loader(shared_data_dir)
    X, y = data.train[3]
    assert X.dtype == np.float32 and X.shape == (48000, 1024) and y.min() == 30
    assert 0 <= X[:50].min() and X[:50].max() <= 1

    def tiny(root=None, *, download=False):
        full = task.loader(root, download=download)
        for split in ("train", "validation", "test"):
            full[split] = [(X[:100], y[:100]) for X, y in full[split]]
        return full

    settings = {"RF Gaussian": {"n_components": 200, "standardize": False}}
    monkeypatch.setitem(rp.SEQUENCES, "permuted-mnist-task",
                        dataclasses.replace(task, loader=tiny, method_settings=settings))
    rows, models = rp.run_column("permuted-mnist-task", "fcnn", rp.select_methods(["rf-gaussian"]),
                                 root=shared_data_dir)
    test = tiny(shared_data_dir).test
    model = models["RF Gaussian"]
    expected = task_accuracies(model, test, scenario="task", task_labels=task.task_labels)
    np.testing.assert_allclose(rows[0]["test_task_accuracies"], 100 * expected)
    assert rows[0]["test"] > 60  # ten digits told apart within each task


def test_a_hundred_classes_learn_without_a_warning(ci_split_digits):
    # Permuted MNIST's class-incremental labels: 10 classes per task, 100 in all.
    X, y = ci_split_digits["train"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GaussianDiscriminantClassifier().partial_fit(X, y, classes=np.arange(100))


def test_the_gradient_rows_of_the_scenario_columns(shared_data_dir):
    """The field's network, budget and strengths are registered for every
    scenario column, with the published numbers printed beside the rows;
    fine-tuning runs on the Split MNIST slices (100 rows a task, 3 epochs)
    and, trained among each task's own digits, keeps them apart where
    class-incremental fine-tuning keeps only the last pair."""
    split, permuted = rp.SEQUENCES["split-mnist-task"], rp.SEQUENCES["permuted-mnist-domain"]
    assert (split.fcnn_hidden, split.learning_rate, split.n_epochs) == ((400, 400), 1e-3, 27)
    assert (permuted.fcnn_hidden, permuted.learning_rate, permuted.n_epochs) == (
        (1000, 1000), 1e-4, 13)
    # The field's λ per sample, α = N λ for skcl's summed NLL (N = 48,000 rows).
    assert permuted.method_grids["EWC"] == {"alpha": [48000 * 500.0]}
    assert permuted.method_grids["Online EWC"] == {"alpha": [48000 * 1000.0], "decay": [0.9]}
    assert permuted.method_grids["SI"] == {"alpha": [2 * 48000 * 5.0 / 128], "damping": [0.1]}
    assert [m.key for m in rp.methods_for("split-mnist-task-small")] == [
        "joint", "fine-tuning", "ewc", "online-ewc", "si", "aqc", "rf-least-squares",
        "rf-gaussian"]
    fine_tuning = rp.select_methods(["fine-tuning"])
    rows = []
    for key in ("split-mnist-task-small", "split-mnist-class-small"):
        column_rows, models = rp.run_column(key, "fcnn", fine_tuning, root=shared_data_dir,
                                            rows_per_task=100, overrides={"n_epochs": 3})
        rows += column_rows
    task, plain = rows
    # The field's network: its ReLU units, at a constant rate, no prior to speak of.
    assert models["Fine-tuning"].hidden_layer_sizes == (400, 400)
    assert models["Fine-tuning"].activation == "relu"
    assert models["Fine-tuning"].network_.activation == "relu"
    assert (task["paper"], plain["paper"]) == (85.15, 19.90)
    assert task["test"] > 80 and plain["test"] < 25  # only the last pair, in class-IL
    table = rp.format_table(rows)
    assert "85.15" in table and "van de Ven and Tolias" in table
