"""What a user of the estimators sees: the partial_fit contract, bad input,
determinism, pickling (every public classifier, from the registry
``tests/_classifiers.py``), labels and class weights."""

import pickle

import jax
import numpy as np
import pytest
from sklearn.base import clone

from skcl import (
    AQCClassifier,
    EWCClassifier,
    FineTuningClassifier,
    GVCLClassifier,
    JointClassifier,
    SIClassifier,
)
from skcl._gradient.deferred_folds import _PendingFold, deferred_folds
from skcl.metrics import final_average_accuracy

from ._classifiers import cases
from .conftest import IRIS_SETTINGS

# Every public classifier, from the registry.
DEFAULTS = cases("default")


def learned_state(clf):
    """Everything the estimator has learned, as comparable values.

    Arrays become (dtype, shape, bytes), so equality is bit-for-bit; other
    leaves compare by repr; wall times (the history's ``time`` and ``*_time``,
    the exact family's ``solve_time_``) are left out. (Comparing whole
    pickles would also compare how pickle happens to share equal dtype
    objects.)
    """

    def exact(leaf):
        if isinstance(leaf, (np.ndarray, np.generic)):
            return leaf.dtype.str, leaf.shape, leaf.tobytes()
        return repr(leaf)

    state = {k: v for k, v in vars(clf).items()
             if (k.endswith("_") or k.startswith("_")) and not k.endswith("_time_")}
    # Wall times are the one thing a rerun may not repeat.
    state["history_"] = [
        {k: v for k, v in record.items() if not (k == "time" or k.endswith("_time"))}
        for record in state.get("history_", [])
    ]
    leaves, treedef = jax.tree_util.tree_flatten(state)
    return str(treedef), [exact(leaf) for leaf in leaves]


def two_tasks(cls, iris, **params):
    clf = cls(**IRIS_SETTINGS, random_state=0, **params)
    for X, y in iris.train[:2]:
        clf.partial_fit(X, y, classes=iris.classes)
    return clf


def two_tasks_of(case, iris, random_state=0):
    """The registry's case after the first two tasks of CI Split Iris."""
    clf = case.make(**IRIS_SETTINGS, random_state=random_state)
    for X, y in iris.train[:2]:
        clf.partial_fit(X, y, classes=iris.classes)
    return clf


def test_partial_fit_needs_classes_first(iris):
    X, y = iris.train[0]
    clf = AQCClassifier()
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    assert not hasattr(clf, "classes_")


@pytest.mark.parametrize("case", DEFAULTS, ids=str)
def test_rejected_task_leaves_state_unchanged(case, iris):
    clf = two_tasks_of(case, iris)
    before = learned_state(clf)
    X, y = iris.train[2]
    bad_calls = {
        "NaN": (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), y, None),
        "inf": (np.where(np.arange(X.size).reshape(X.shape) == 5, np.inf, X), y, None),
        "float32 overflow": (X * 1e300, y, None),
        "features": (X[:, :3], y, None),
        "unknown label": (X, np.full_like(y, 7), None),
        "other classes": (X, y, [0, 1, 2, 3]),
        "empty": (X[:0], y[:0], None),
        "continuous y": (X, y + 0.5, None),
    }
    messages = {
        "NaN": "NaN",
        "inf": "infinity",
        "float32 overflow": "too large",
        "features": "features",
        "unknown label": "not in classes",
        "other classes": "classes",
        "empty": "0 sample",
        "continuous y": "Unknown label type",
    }
    if case.family == "exact":  # float64 sums: 1e300 is a value like any other
        del bad_calls["float32 overflow"]
    for name, (Xb, yb, classes) in bad_calls.items():
        with pytest.raises(ValueError, match=messages[name]):
            clf.partial_fit(Xb, yb, classes=classes)
        assert learned_state(clf) == before, name
    assert clf.n_tasks_seen_ == 2


def test_diverging_training_is_rejected_and_changes_nothing(iris):
    clf = two_tasks(AQCClassifier, iris, alpha=10.0)
    before = learned_state(clf)
    clf.set_params(learning_rate=1e38)
    with pytest.raises(ValueError, match="diverged"):
        clf.partial_fit(*iris.train[2])
    assert learned_state(clf) == before
    clf.set_params(learning_rate=0.1).partial_fit(*iris.train[2])
    assert clf.n_tasks_seen_ == 3


@pytest.mark.parametrize("case", DEFAULTS, ids=str)
def test_same_random_state_same_results(case, iris):
    a, b = two_tasks_of(case, iris), two_tasks_of(case, iris)
    X = np.concatenate([X for X, _ in iris.test])
    assert learned_state(a) == learned_state(b)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    if case.family == "gradient":  # the seed draws the initial weights and minibatches
        c = two_tasks_of(case, iris, random_state=1)
        assert not np.array_equal(a.theta_, c.theta_)


@pytest.mark.parametrize("case", DEFAULTS, ids=str)
def test_pickling_between_tasks_changes_nothing(case, iris):
    straight = two_tasks_of(case, iris)
    revived = pickle.loads(pickle.dumps(two_tasks_of(case, iris)))
    straight.partial_fit(*iris.train[2])
    revived.partial_fit(*iris.train[2])
    X = np.concatenate([X for X, _ in iris.test])
    np.testing.assert_array_equal(straight.predict_proba(X), revived.predict_proba(X))
    assert learned_state(straight) == learned_state(revived)


def test_string_labels_and_single_class_tasks(iris):
    names = np.array(["setosa", "versicolor", "virginica"])
    clf = JointClassifier(**IRIS_SETTINGS, random_state=0)
    for X, y in iris.train:
        clf.partial_fit(X, names[y], classes=names)
    assert clf.classes_.tolist() == names.tolist()
    assert clf.n_tasks_seen_ == 3
    X, y = iris.test[1]
    assert np.mean(clf.predict(X) == names[y]) >= 0.8
    assert clf.predict_proba(X).shape == (len(X), 3)


def test_fit_starts_over_with_the_labels_present(iris):
    clf = two_tasks(AQCClassifier, iris)
    X = np.concatenate([X for X, _ in iris.train])
    y = np.concatenate([y for _, y in iris.train])
    clf.fit(X[y > 0], y[y > 0])
    assert clf.n_tasks_seen_ == 1
    assert clf.classes_.tolist() == [1, 2]
    assert clf.likelihood_ == "bernoulli"
    assert clf.decision_function(X).shape == (len(X),)
    assert clf.score(X[y > 0], y[y > 0]) > 0.9


def test_balanced_class_weight_is_inverse_frequency(iris):
    X = np.concatenate([X for X, _ in iris.train])[:70]  # 32, 32, 6 samples
    y = np.concatenate([y for _, y in iris.train])[:70]
    counts = np.bincount(y)
    by_hand = {c: len(y) / (3 * counts[c]) for c in range(3)}  # ∝ m / n_i
    a = FineTuningClassifier(class_weight="balanced", random_state=0).fit(X, y)
    b = FineTuningClassifier(class_weight=by_hand, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.theta_, b.theta_, rtol=1e-5, atol=1e-6)
    plain = FineTuningClassifier(random_state=0).fit(X, y)
    rare = X[y == 2]
    assert a.predict_proba(rare)[:, 2].mean() > plain.predict_proba(rare)[:, 2].mean()


def test_clone_gives_an_unfitted_copy(iris):
    clf = two_tasks(EWCClassifier, iris, alpha=100.0)
    fresh = clone(clf)
    assert not hasattr(fresh, "classes_")
    assert fresh.get_params() == clf.get_params()


@pytest.mark.slow
def test_ci_split_iris_acceptance(iris):
    """Issue 2: fine-tuning 1/3, joint ≥ 0.9, AQC with λ from the paper's grid
    chosen on the validation sequence ≥ 0.6 (the paper: 66.7 %)."""

    def run(clf):
        for X, y in iris.train:
            clf.partial_fit(X, y, classes=iris.classes)
        return clf

    finetuned = run(FineTuningClassifier(**IRIS_SETTINGS, random_state=0))
    assert final_average_accuracy(finetuned, iris.test) == pytest.approx(1 / 3)
    joint = run(JointClassifier(**IRIS_SETTINGS, random_state=0))
    assert final_average_accuracy(joint, iris.test) >= 0.9

    candidates = [run(AQCClassifier(alpha=a, **IRIS_SETTINGS, random_state=0))
                  for a in (1, 10, 100, 1000, 10000)]
    scores = [final_average_accuracy(c, iris.validation) for c in candidates]
    best = candidates[int(np.argmax(scores))]
    assert final_average_accuracy(best, iris.test) >= 0.6


# ------------------------------------------- issue 13: promises kept everywhere


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(class_weight={0: -1.0}), "non-negative"),
        (dict(class_weight={0: np.nan}), "non-negative"),
        (dict(batch_size=True), "not a bool"),
        (dict(n_epochs=False), "not a bool"),
        (dict(learning_rate="fast"), "'learning_rate' parameter of AQCClassifier must be"),
        (dict(alpha=[1.0]), "'alpha' parameter of AQCClassifier must be"),
        (dict(prior_precision=None), "'prior_precision' parameter"),
        (dict(hidden_layer_sizes=(4, "x")), "hidden_layer_sizes must be positive integers"),
        (dict(curvature="fisher"), "'curvature' parameter"),
    ],
)
def test_badly_typed_or_harmful_hyperparameters_get_a_clear_error(iris, params, message):
    clf = AQCClassifier(**params)
    with pytest.raises(ValueError, match=message):
        clf.partial_fit(*iris.train[0], classes=iris.classes)
    assert not hasattr(clf, "classes_")


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(learning_rate=1e10), "far above its loss at the start"),
        ("scale inputs", "per sample, far out of any workable scale"),
    ],
)
def test_a_blow_up_with_a_finite_loss_is_rejected_and_changes_nothing(iris, change, message):
    """lr = 1e10 (the loss ends 1e8 times above its start), or inputs scaled
    by 1e30 (a loss of 1e30 per sample that never moves) used to be
    accepted: nothing learned, no error."""
    clf = two_tasks(AQCClassifier, iris, alpha=10.0)
    before = learned_state(clf)
    X, y = iris.train[2]
    if change == "scale inputs":
        X = X * 1e30
    else:
        clf.set_params(**change)
    with pytest.raises(ValueError, match=message):
        clf.partial_fit(X, y)
    assert learned_state(clf) == before


def test_hidden_layer_sizes_cannot_change_between_tasks(iris):
    clf = two_tasks(FineTuningClassifier, iris, hidden_layer_sizes=(4,))
    before = learned_state(clf)
    clf.set_params(hidden_layer_sizes=(8,))
    with pytest.raises(ValueError, match="cannot change between tasks"):
        clf.partial_fit(*iris.train[2])
    assert learned_state(clf) == before


def test_predict_log_proba_is_finite_where_the_log_probability_is(iris):
    """Far from the data the smaller probabilities underflow to 0 in float64,
    but their logarithms are finite (about −1000 here)."""
    X_far = np.concatenate([X for X, _ in iris.test]) * 200
    for cls in (AQCClassifier, GVCLClassifier):
        clf = two_tasks(cls, iris)
        log_proba = clf.predict_log_proba(X_far)
        assert np.all(np.isfinite(log_proba)) and log_proba.min() < -745  # exp underflows
        np.testing.assert_allclose(np.exp(log_proba), clf.predict_proba(X_far), atol=1e-12)


def test_history_records_every_task(iris):
    clf = FineTuningClassifier(**IRIS_SETTINGS, random_state=0)
    for X, y in iris.train:
        clf.partial_fit(X, y, classes=iris.classes)
    assert [record["task"] for record in clf.history_] == [1, 2, 3]
    assert [record["n_samples"] for record in clf.history_] == [len(y) for _, y in iris.train]
    for record in clf.history_:
        assert record["loss_curve"].shape == (IRIS_SETTINGS["n_epochs"],)
        assert record["train_time"] > 0 and record["consolidation_time"] >= 0
        assert record["loss_curve"][-1] < record["loss_curve"][0]  # each task was learned
    np.testing.assert_array_equal(clf.history_[-1]["loss_curve"], clf.loss_curve_)
    assert clf.n_iter_ == IRIS_SETTINGS["n_epochs"]
    clf.fit(*iris.train[0])  # fit forgets the sequence
    assert len(clf.history_) == 1


def test_verbose_logs_through_the_skcl_logger(iris, caplog):
    clf = AQCClassifier(**IRIS_SETTINGS, random_state=0, verbose=2)
    with caplog.at_level("INFO", logger="skcl"):
        clf.partial_fit(*iris.train[0], classes=iris.classes)
    records = [r for r in caplog.records if r.name == "skcl.estimators"]
    # One line per epoch as it ends at verbose=2, then the task's line.
    assert "[AQCClassifier] task 1: 32 samples" in records[-1].getMessage()
    assert len(records) == 1 + IRIS_SETTINGS["n_epochs"]
    caplog.clear()
    AQCClassifier(**IRIS_SETTINGS).partial_fit(*iris.train[0], classes=iris.classes)
    assert not [r for r in caplog.records if r.name == "skcl.estimators"]


def test_a_callback_sees_every_epoch_and_task_and_can_stop_early(iris):
    events = []

    def watch(info):
        events.append((info["event"], info["task"], info.get("epoch"), info.get("loss")))
        return info["event"] == "epoch" and info["task"] == 2 and info["epoch"] == 7

    settings = dict(IRIS_SETTINGS, n_epochs=10)
    watched = AQCClassifier(alpha=10.0, **settings, random_state=0, callback=watch)
    plain = AQCClassifier(alpha=10.0, **settings, random_state=0)
    for clf in (watched, plain):
        clf.partial_fit(*iris.train[0], classes=iris.classes)
    # Epoch by epoch, the same steps as the whole compiled task.
    np.testing.assert_allclose(watched.theta_, plain.theta_, rtol=1e-5, atol=1e-6)
    assert [e[:3] for e in events] == [("epoch", 1, k) for k in range(1, 11)] + [("task", 1, None)]
    np.testing.assert_allclose([e[3] for e in events[:10]], plain.loss_curve_, rtol=1e-5)
    watched.partial_fit(*iris.train[1])
    assert watched.n_iter_ == 7 and watched.history_[-1]["loss_curve"].shape == (7,)
    assert events[-1][:2] == ("task", 2) and watched.n_tasks_seen_ == 2

    def fail(info):
        raise RuntimeError("tracker offline")

    before = learned_state(watched)
    watched.set_params(callback=fail)
    with pytest.raises(RuntimeError, match="tracker offline"):
        watched.partial_fit(*iris.train[2])
    assert learned_state(watched) == before


@pytest.mark.parametrize("cls, params", [
    (AQCClassifier, dict(alpha=10.0)),
    (AQCClassifier, dict(alpha=10.0, curvature="ggn", structure="kron", hidden_layer_sizes=(4,))),
    (SIClassifier, dict(alpha=1.0)),
])
def test_deferred_folds_give_the_same_state_as_immediate_ones(cls, params, iris):
    settings = dict(IRIS_SETTINGS, n_epochs=10, random_state=0, **params)
    reference, lazy = cls(**settings), cls(**settings)
    for X, y in iris.train:
        reference.partial_fit(X, y, classes=iris.classes)
    with deferred_folds():
        for X, y in iris.train[:2]:
            lazy.partial_fit(X, y, classes=iris.classes)
    # The pending fold waits apart: consolidation_ never holds another type.
    assert isinstance(lazy._pending_fold_, _PendingFold)
    assert "consolidation_" not in vars(lazy)
    # A rejected call leaves the pending fold as it was.
    with pytest.raises(ValueError):
        lazy.partial_fit(iris.train[2][0][:, :2], iris.train[2][1])
    assert isinstance(lazy._pending_fold_, _PendingFold)
    assert "consolidation_" not in vars(lazy)
    lazy.partial_fit(*iris.train[2])  # outside the context: folds the pending task, then this one
    np.testing.assert_array_equal(lazy.theta_, reference.theta_)
    for a, b in zip(jax.tree.leaves(lazy.consolidation_),
                    jax.tree.leaves(reference.consolidation_)):
        np.testing.assert_array_equal(a, b)
    # The first use of a fitted attribute read from the state finishes the fold.
    lazy = cls(**settings)
    with deferred_folds():
        for X, y in iris.train:
            lazy.partial_fit(X, y, classes=iris.classes)
    assert "_pending_fold_" in vars(lazy)
    name = "importance_" if cls is SIClassifier else "hessian_"
    if params.get("structure", "full") != "full":
        name = "consolidation_"  # no hessian_ kept
    np.testing.assert_array_equal(jax.tree.leaves(getattr(lazy, name))[0],
                                  jax.tree.leaves(getattr(reference, name))[0])
    assert "_pending_fold_" not in vars(lazy)
    for a, b in zip(jax.tree.leaves(lazy.consolidation_),
                    jax.tree.leaves(reference.consolidation_)):
        np.testing.assert_array_equal(a, b)
    # Methods whose fold feeds predictions (variational) never defer.
    with deferred_folds():
        vi = GVCLClassifier(n_epochs=2, random_state=0).partial_fit(*iris.train[0],
                                                                    classes=iris.classes)
    assert "_pending_fold_" not in vars(vi)
    assert not isinstance(vi.consolidation_, _PendingFold)



def test_threads_reading_a_pending_fold_at_once_fold_it_once(iris):
    # Eight threads read hessian_ of an estimator whose fold was deferred:
    # each gets the state an immediate fold gives (before: AttributeError
    # in 26 of 40 reads, two threads finishing the same fold).
    import copy
    import threading

    settings = dict(IRIS_SETTINGS, n_epochs=10, alpha=10.0, random_state=0)
    reference, lazy = AQCClassifier(**settings), AQCClassifier(**settings)
    for X, y in iris.train:
        reference.partial_fit(X, y, classes=iris.classes)
    with deferred_folds():
        for X, y in iris.train:
            lazy.partial_fit(X, y, classes=iris.classes)
    for _ in range(5):
        clf, results = copy.deepcopy(lazy), []
        barrier = threading.Barrier(8)

        def read(clf=clf, results=results, barrier=barrier):
            barrier.wait()
            try:
                results.append(np.asarray(jax.tree.leaves(clf.hessian_)[0]))
            except Exception as error:  # any error is the failure
                results.append(error)

        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert "_pending_fold_" not in vars(clf)
        expected = np.asarray(jax.tree.leaves(reference.hessian_)[0])
        for result in results:
            assert not isinstance(result, Exception), repr(result)
            np.testing.assert_array_equal(result, expected)

def test_a_single_class_task_warning_points_at_the_users_line_through_a_pipeline():
    import inspect
    import warnings

    from sklearn.preprocessing import StandardScaler

    from skcl.datasets import load_ci_split_iris
    from skcl.exceptions import SingleClassTaskWarning
    from skcl.pipeline import make_pipeline

    data = load_ci_split_iris()
    X, y = data.train[0]
    pipe = make_pipeline(StandardScaler(), AQCClassifier(n_epochs=1, random_state=0))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe.partial_fit(X, y, classes=data.classes)
        line = inspect.currentframe().f_lineno - 1
    shown = [w for w in record if issubclass(w.category, SingleClassTaskWarning)]
    assert [(w.filename, w.lineno) for w in shown] == [(__file__, line)]


def test_a_single_class_task_warning_is_given_once_per_estimator(iris):
    # Under Python's default filters, three one-class tasks gave three
    # warnings (scikit-learn's check_array resets the registries that
    # would deduplicate them): now one per estimator, at the user's line.
    import warnings

    from sklearn.base import clone

    from skcl.exceptions import SingleClassTaskWarning

    clf = AQCClassifier(n_epochs=1, random_state=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        for X, y in iris.train:
            clf.partial_fit(X, y, classes=iris.classes)
    shown = [w for w in record if issubclass(w.category, SingleClassTaskWarning)]
    assert len(iris.train) == 3 and len(shown) == 1
    assert shown[0].filename == __file__
    # The record is no parameter; a clone is a new estimator and warns again,
    # and so does an estimator of the same class.
    assert not any("warned" in name for name in clf.get_params())
    # Many estimators built on one line (a grid) say it once there, as Python's
    # "default" filter would: once per message and line.
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        for alpha in [1.0, 10.0]:
            AQCClassifier(alpha, n_epochs=1).partial_fit(*iris.train[0], classes=iris.classes)
    assert len([w for w in record if issubclass(w.category, SingleClassTaskWarning)]) == 1
    fresh = clone(clf)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        fresh.partial_fit(*iris.train[0], classes=iris.classes)
        clf.partial_fit(*iris.train[0], classes=iris.classes)
        AQCClassifier(n_epochs=1).partial_fit(*iris.train[0], classes=iris.classes)
    shown = [w for w in record if issubclass(w.category, SingleClassTaskWarning)]
    assert len(shown) == 2


def test_a_search_gives_its_candidates_single_class_warning_once_at_the_users_line(iris):
    # Each candidate is a clone: they warned once per task and candidate, and
    # pointed at joblib's dispatch (joblib/parallel.py), not at the caller.
    import warnings

    from skcl.exceptions import SingleClassTaskWarning
    from skcl.model_selection import SequenceGridSearch

    for n_jobs in [None, 2]:  # joblib's sequential backend and its threads
        search = SequenceGridSearch(AQCClassifier(n_epochs=1, random_state=0),
                                    {"alpha": [1.0, 10.0]}, n_jobs=n_jobs)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")  # even so, the search says it once
            search.fit(iris.train, iris.validation, classes=iris.classes)
        shown = [w for w in record if issubclass(w.category, SingleClassTaskWarning)]
        assert [w.filename for w in shown] == [__file__], n_jobs


def test_the_single_class_warning_is_repeated_when_the_filters_say_always(iris):
    import warnings

    from skcl.exceptions import SingleClassTaskWarning

    clf = AQCClassifier(n_epochs=1, random_state=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for X, y in iris.train:
            clf.partial_fit(X, y, classes=iris.classes)
    assert len([w for w in record if issubclass(w.category, SingleClassTaskWarning)]) == 3
    # "error" raises on every call, each rejected task leaving the estimator as it was.
    clf = AQCClassifier(n_epochs=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SingleClassTaskWarning)
        for _ in range(2):
            with pytest.raises(SingleClassTaskWarning):
                clf.partial_fit(*iris.train[0], classes=iris.classes)
            assert not hasattr(clf, "theta_")


def test_a_single_class_task_warns_for_the_methods_it_concerns():
    import warnings

    from skcl.datasets import load_ci_split_iris
    from skcl.exceptions import SingleClassTaskWarning

    data = load_ci_split_iris()  # one species per task
    with warnings.catch_warnings(record=True) as record:
        # Each single-class task warns; the user's filters decide what shows.
        warnings.simplefilter("always")
        for cls in [AQCClassifier, AQCClassifier, FineTuningClassifier]:
            clf = cls(n_epochs=1, random_state=0)
            for X, y in data.train:
                clf.partial_fit(X, y, classes=data.classes)
        X = np.concatenate([data.train[0][0], data.train[1][0]])
        y = np.concatenate([data.train[0][1], data.train[1][1]])
        EWCClassifier(n_epochs=1, random_state=0).partial_fit(X, y, classes=data.classes)
    shown = [w for w in record if issubclass(w.category, SingleClassTaskWarning)]
    # AQC's 2 × 3 one-class tasks; not for fine-tuning, not for two classes.
    assert len(shown) == 2 * len(data.train)
    assert len({str(w.message) for w in shown}) == 1
    # Each points at the line that called partial_fit, here.
    assert {w.filename for w in shown} == {__file__}
    message = str(shown[0].message)
    assert message.startswith("AQCClassifier: a task with a single class")
    assert "GaussianDiscriminantClassifier" in message and "SequenceGridSearch" in message
    assert shown[0].filename == __file__  # points at the user's partial_fit call


def test_the_single_class_warning_obeys_the_warning_filters(iris):
    import warnings

    from skcl.exceptions import SingleClassTaskWarning

    X, y = iris.train[0]  # one species
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", SingleClassTaskWarning)
        AQCClassifier(n_epochs=1, random_state=0).partial_fit(X, y, classes=iris.classes)
    assert not [w for w in record if issubclass(w.category, SingleClassTaskWarning)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SingleClassTaskWarning)
        clf = AQCClassifier(n_epochs=1, random_state=0)
        with pytest.raises(SingleClassTaskWarning):
            clf.partial_fit(X, y, classes=iris.classes)
    assert not hasattr(clf, "theta_")  # the transaction left it unfitted


def test_each_gradient_estimator_says_what_its_defaults_give():
    from skcl import NCClassifier

    for cls in [AQCClassifier, EWCClassifier, SIClassifier, NCClassifier, JointClassifier]:
        doc = " ".join(cls.__doc__.split())
        assert "The defaults are the paper's settings for Iris and Wine" in doc
        assert "% on CI Split Iris" in doc and "GaussianDiscriminantClassifier" in doc
        assert doc.index("The defaults are") < doc.index("Parameters ----------")
