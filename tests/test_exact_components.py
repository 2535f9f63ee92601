"""The Gaussian's (task, class) components: the score test, its bound, and both regimes.

The statistic is checked against the rows (the between-task scatter and
the scatter about the class means written out, a pseudo-inverse instead
of the Cholesky), its bound against random groups, and the default
``components="auto"`` on scikit-learn's digits in the two regimes it must
tell apart: a stream of many small calls from a drifting source (one
component per class is right there) and domain-incremental Split digits
(one per (task, class) is right).
"""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_digits

from benchmarks._data import drifting_stream
from skcl import GaussianDiscriminantClassifier
from skcl._exact.components import between_task_scores, component_keys, runs
from skcl._exact.moments import GroupMoments
from skcl.datasets import load_di_split_digits


def _digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def _di_split_digits(calls_per_task=1):
    """DI Split digits (parity), each task optionally cut into several calls."""
    data = load_di_split_digits()
    train = [(X[i::calls_per_task], y[i::calls_per_task])
             for X, y in data.train for i in range(calls_per_task)]
    return train, data.test


def _drifting_stream(n_calls):
    """The drifting stream's calls and test rows (benchmarks/_data.py), every digit left out."""
    return (call[:4] for call in drifting_stream(n_calls))


def _learn(params, calls):
    clf = GaussianDiscriminantClassifier(**params)
    classes = np.unique(np.concatenate([y for _, y in calls]))
    for X, y in calls:
        clf.partial_fit(X, y, classes=classes)
    return clf


def _score_from_rows(tasks):
    """n·tr(S⁺ B_c) per class, from the rows: S about the class means, B_c between tasks."""
    X = np.concatenate([X for X, _ in tasks])
    y = np.concatenate([y for _, y in tasks])
    task = np.repeat(np.arange(len(tasks)), [len(y) for _, y in tasks])
    centred = X.copy()
    for label in np.unique(y):
        centred[y == label] -= X[y == label].mean(0)
    S_inv = np.linalg.pinv(centred.T @ centred, rcond=1e-12, hermitian=True)
    out = {}
    for label in np.unique(y):
        B = np.zeros((X.shape[1], X.shape[1]))
        for t in np.unique(task[y == label]):
            rows = (y == label) & (task == t)
            delta = X[rows].mean(0) - X[y == label].mean(0)
            B += rows.sum() * np.outer(delta, delta)
        out[label] = len(X) * np.trace(S_inv @ B)
    return out


# ------------------------------------------------------------ the statistic


def test_score_statistic_is_pillais_trace_of_the_rows_and_keeps_di_tasks_apart():
    train, _ = _di_split_digits()
    clf = _learn({"components": "task_class"}, train)
    scores = between_task_scores(clf.moments_)
    expected = _score_from_rows(train)
    n, d = clf.moments_.total, clf.moments_.n_features
    for label, (statistic, threshold) in scores.items():
        assert statistic == pytest.approx(expected[label], rel=1e-7)
        assert threshold == pytest.approx((len(train) - 1) * d * np.log(n), rel=1e-12)
        # Measured: 1.8× and 1.6× the threshold (even, odd digits).
        assert statistic > 1.4 * threshold
    assert set(component_keys(clf.moments_).values()) == set(clf.moments_.keys)


def test_the_scores_of_all_classes_sum_to_at_most_n_times_d():
    # B_c ⪯ B ⪯ S: each whitened direction counts at most once, whatever the
    # means (here far apart: 50 standard deviations), so Σ_c T_c ≤ n·D.
    rng = np.random.default_rng(0)
    d, keys = 6, [(t, c) for t in range(40) for c in range(3)]
    counts = rng.integers(1, 5, len(keys)).astype(float)
    means = 50 * rng.standard_normal((len(keys), d))
    noise = rng.standard_normal((200, d))
    moments = GroupMoments(tuple(keys), counts, means, noise.T @ noise, None)
    # Every task its own run: the bound holds for any segmentation.
    scores = between_task_scores(moments, {key: key for key in keys})
    total = sum(statistic for statistic, _ in scores.values())
    assert total <= moments.total * d * (1 + 1e-9)
    assert total > 0.9 * moments.total * d  # the means dominate: near the bound
    # Every class is in 40 tasks of 2.5 rows: the price, 39·D·log n each, is
    # more than all the rows can pay.
    assert set(component_keys(moments).values()) == {(None, 0), (None, 1), (None, 2)}


def test_a_class_seen_in_one_task_is_not_tested():
    train, _ = _di_split_digits()
    clf = _learn({"components": "task_class"}, train[:1])
    assert between_task_scores(clf.moments_) == {}
    assert set(component_keys(clf.moments_).values()) == {(None, 0), (None, 1)}


# ------------------------------------------------------------ the two regimes


def test_a_drifting_stream_of_small_calls_keeps_one_component_per_class():
    # 50 calls of 60 digits, the inputs drifting by a random walk: each
    # call's class means differ, but from six rows each. Measured after 10
    # and 50 calls: "class" 95.2 % and 95.4 %, "task_class" 85.6 % and
    # 91.9 % (about 100 and 500 components); the default is "class" exactly.
    calls = list(_drifting_stream(50))
    classes = np.arange(10)
    models = {name: GaussianDiscriminantClassifier(components=name)
              for name in ["auto", "class", "task_class"]}
    for t, (X, y, X_test, y_test) in enumerate(calls, 1):
        for clf in models.values():
            clf.partial_fit(X, y, classes=classes)
        if t not in (10, 50):
            continue
        auto, one, per_call = models.values()
        assert len(auto.component_classes_) == 10
        assert len(per_call.component_classes_) > 9 * t  # a call may lack a class
        np.testing.assert_allclose(auto.predict_proba(X_test), one.predict_proba(X_test),
                                   rtol=1e-10, atol=1e-12)
        score = {name: clf.score(X_test, y_test) for name, clf in models.items()}
        assert score["auto"] >= max(score["class"], score["task_class"]) - 0.005
        assert score["auto"] >= score["task_class"] + 0.03


def test_domain_incremental_digits_keep_one_component_per_task_and_label():
    # Measured: 97.5 %, against 92.5 % with one component per label.
    train, test = _di_split_digits()
    auto = _learn({}, train)
    per_task = _learn({"components": "task_class"}, train)
    X_test = np.concatenate([X for X, _ in test])
    np.testing.assert_allclose(auto.predict_proba(X_test), per_task.predict_proba(X_test),
                               rtol=1e-10, atol=1e-12)
    accuracy = np.mean([auto.score(X, y) for X, y in test])
    assert accuracy >= 0.96
    one = _learn({"components": "class"}, train)
    assert accuracy > np.mean([one.score(X, y) for X, y in test]) + 0.04


@pytest.mark.parametrize("calls_per_task", [2, 8])
def test_a_domain_cut_into_calls_is_one_run_and_the_model_of_one_call_a_domain(calls_per_task):
    # The calls of one domain join (their means agree within the rows'
    # spread); each new pair of digits starts a run. "task_class" keeps
    # every call apart instead: 20 or 80 components of 45 or 11 rows.
    train, test = _di_split_digits(calls_per_task)
    whole, _ = _di_split_digits()
    auto = _learn({}, train)
    one_call = _learn({}, whole)
    assert len(auto.component_classes_) == 10
    segment = runs(auto.moments_)
    assert sorted({start for start, _ in segment.values()}) == list(
        range(0, len(train), calls_per_task))
    X_test = np.concatenate([X for X, _ in test])
    np.testing.assert_allclose(auto.predict_proba(X_test), one_call.predict_proba(X_test),
                               rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------ exactness, bad input


def test_auto_is_the_one_fit_on_all_rows_when_the_calls_are_one():
    calls = [(X, y) for X, y, _, _ in _drifting_stream(20)]
    X = np.concatenate([X for X, _ in calls])
    y = np.concatenate([y for _, y in calls])
    streamed = _learn({}, calls)
    whole = GaussianDiscriminantClassifier().fit(X, y)
    np.testing.assert_allclose(streamed.predict_proba(X), whole.predict_proba(X),
                               rtol=1e-8, atol=1e-8)
    one_call = _learn({}, [(X, y)])
    np.testing.assert_allclose(one_call.predict_proba(X), whole.predict_proba(X),
                               rtol=1e-12, atol=1e-14)


def test_a_rejected_call_leaves_the_components_as_they_were():
    train, test = _di_split_digits()
    clf = _learn({}, train[:3])
    X_test = test[0][0]
    proba = clf.predict_proba(X_test)  # solved: the pickle holds the components
    before = pickle.dumps(clf)
    X, y = train[3]
    bad = X.copy()
    bad[0, 0] = np.inf
    for args in [(bad, y), (X[:, :10], y), (X, y + 5)]:
        with pytest.raises(ValueError):
            clf.partial_fit(*args)
    assert pickle.dumps(clf) == before
    np.testing.assert_array_equal(clf.predict_proba(X_test), proba)


def test_zero_within_class_variance_answers():
    # Every (call, class) holds copies of one row, near 1e6, weighted: the
    # scatter within the groups is rounding alone, with negative entries.
    # Before: LinAlgError from the whitening's Cholesky in 2 of these 10
    # streams (issue 50), where "class" and "task_class" answered.
    for seed in range(130, 140):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(2, 12))
        models = [GaussianDiscriminantClassifier(components=components)
                  for components in ("auto", "class", "task_class")]
        for _ in range(3):
            rows = 1e6 + 1e-6 * rng.normal(size=(3, d))
            y = rng.integers(0, 3, int(rng.integers(1, 6)))
            weights = rng.random(len(y))
            for clf in models:
                clf.partial_fit(rows[y], y, classes=[0, 1, 2], sample_weight=weights)
        auto, one, per_call = models
        proba = auto.predict_proba(rows)
        assert np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(1), 1)
        np.testing.assert_array_equal(auto.predict(rows), auto.classes_[proba.argmax(1)])
        n_components = len(auto.component_classes_)
        assert len(one.component_classes_) <= n_components <= len(per_call.component_classes_)


def test_an_iid_stream_of_small_calls_is_the_one_fit_on_all_rows():
    # Digits in 40 interleaved calls, 4-5 rows a class each. Before: a row
    # with a pixel lit in 4 of 1,797 digits cut three classes into runs, 12
    # components and probabilities 0.105 from the one fit (issue 50).
    X, y = _digits()
    calls = [(X[i::40], y[i::40]) for i in range(40)]
    streamed = _learn({}, calls)
    whole = GaussianDiscriminantClassifier().fit(X, y)
    assert len(streamed.component_classes_) == 10
    np.testing.assert_allclose(streamed.predict_proba(X), whole.predict_proba(X),
                               rtol=1e-8, atol=1e-10)


def test_weights_that_rescale_uniformly_change_no_component():
    # Before: sample_weight=10 on every row of 50 i.i.d. calls of Iris gave
    # 76 components where unit weights gave 3 (issue 50).
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    calls = [rng.integers(0, len(y), 30) for _ in range(50)]
    models = []
    for weight in (1.0, 10.0, 0.01):
        # A float shrinkage: OAS's sample size is the weight, as scikit-learn's
        # sample-weight contract (an integer weight is that many copies) asks.
        clf = GaussianDiscriminantClassifier(0.1)
        for rows in calls:
            clf.partial_fit(X[rows], y[rows], classes=[0, 1, 2],
                            sample_weight=np.full(len(rows), weight))
        models.append(clf)
    assert len(models[0].component_classes_) == 3
    for clf in models[1:]:
        np.testing.assert_array_equal(clf.component_classes_, models[0].component_classes_)
        np.testing.assert_allclose(clf.predict_proba(X), models[0].predict_proba(X),
                                   rtol=1e-9, atol=1e-12)
