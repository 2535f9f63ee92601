"""The classical task sequences and the helpers that build task sequences."""

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris, load_wine

from skcl.datasets import (
    load_ci_split_2d_iris,
    load_ci_split_digits,
    load_ci_split_iris,
    load_ci_split_wine,
    load_di_split_digits,
    make_task_sequences,
    relabel,
    split_by_class,
    train_validation_test_split,
)


@pytest.mark.parametrize(
    "loader, dataset, n_features",
    [(load_ci_split_iris, load_iris, 4), (load_ci_split_2d_iris, load_iris, 2),
     (load_ci_split_wine, load_wine, 13)],
)
def test_classical_sequences_partition_the_dataset(loader, dataset, n_features):
    data = loader()
    full = dataset()
    rows = []
    for split in ("train", "validation", "test"):
        tasks = data[split]
        assert len(tasks) == 3
        for t, (X, y) in enumerate(tasks):
            assert X.shape[1] == n_features
            assert set(y.tolist()) == {t}  # one class per task, in order
            rows.append(X)
    rows = np.concatenate(rows)
    # Every sample exactly once (Iris has duplicate rows, so compare multisets).
    X_full = full.data[:, [2, 3]] if n_features == 2 else full.data
    assert len(rows) == len(X_full)
    np.testing.assert_array_equal(np.sort(rows, axis=0), np.sort(X_full, axis=0))
    sizes = {s: sum(len(y) for _, y in data[s]) for s in ("train", "validation", "test")}
    n = len(X_full)
    assert sizes["test"] == pytest.approx(0.2 * n, abs=1)
    assert sizes["validation"] == pytest.approx(0.16 * n, abs=1)


def test_iris_splits_are_stratified_and_seeded():
    a, b = load_ci_split_iris(), load_ci_split_iris()
    assert [len(y) for _, y in a.test] == [10, 10, 10]
    assert [len(y) for _, y in a.validation] == [8, 8, 8]
    for (Xa, _), (Xb, _) in zip(a.train, b.train):
        np.testing.assert_array_equal(Xa, Xb)
    c = load_ci_split_iris(random_state=0)
    assert not np.array_equal(np.sort(a.test[0][0], 0), np.sort(c.test[0][0], 0))


def test_split_digits_partitions_the_digits_in_pairs():
    ci, di = load_ci_split_digits(), load_di_split_digits()
    full = load_digits()
    rows, labels = [], []
    for split in ("train", "validation", "test"):
        assert len(ci[split]) == len(di[split]) == 5
        for t, ((X, y), (X_di, y_di)) in enumerate(zip(ci[split], di[split])):
            assert set(y.tolist()) == {2 * t, 2 * t + 1}
            np.testing.assert_array_equal(X_di, X)  # the same rows ...
            np.testing.assert_array_equal(y_di, y % 2)  # ... labelled by parity
            rows.append(X)
            labels.append(y)
    rows, labels = np.concatenate(rows), np.concatenate(labels)
    # Every digit exactly once, scaled to [0, 1].
    order, full_order = np.lexsort(rows.T), np.lexsort(full.data.T)
    np.testing.assert_array_equal(rows[order] * 16, full.data[full_order])
    np.testing.assert_array_equal(labels[order], full.target[full_order])
    sizes = {s: sum(len(y) for _, y in ci[s]) for s in ("train", "validation", "test")}
    assert sizes == {"train": 1149, "validation": 288, "test": 360}
    assert ci.classes.tolist() == list(range(10)) and di.classes.tolist() == [0, 1]
    assert (ci.scenario, di.scenario) == ("class", "domain")
    assert di.task_classes == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    other = load_ci_split_digits(random_state=0)
    assert not np.array_equal(other.test[0][0], ci.test[0][0])


def test_split_by_class_keeps_order_and_checks_groups():
    X = np.arange(12).reshape(6, 2)
    y = np.array([2, 0, 1, 2, 0, 1])
    tasks = split_by_class(X, y, [[0, 1], [2]])
    np.testing.assert_array_equal(tasks[0][1], [0, 1, 0, 1])
    np.testing.assert_array_equal(tasks[1][0], X[[0, 3]])
    with pytest.raises(ValueError, match="more than one group"):
        split_by_class(X, y, [[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="No sample"):
        split_by_class(X, y, [[0], [5]])
    with pytest.raises(ValueError, match="different lengths"):
        split_by_class(X, y[:-1], [[0]])


def test_relabel_to_domain_incremental():
    tasks = [(np.zeros((2, 1)), np.array([0, 1])), (np.zeros((2, 1)), np.array([2, 3]))]
    parity = relabel(tasks, lambda y: y % 2)
    assert [y.tolist() for _, y in parity] == [[0, 1], [0, 1]]
    named = relabel(tasks, {0: "a", 1: "b", 2: "a", 3: "b"})
    assert named[1][1].tolist() == ["a", "b"]
    with pytest.raises(ValueError, match="no entry"):
        relabel(tasks, {0: 0, 1: 1})


def test_train_validation_test_split_proportions():
    X = np.arange(1000).reshape(-1, 1)
    y = np.repeat([0, 1, 2, 3], 250)
    train, val, test = train_validation_test_split(X, y)
    assert (len(train[1]), len(val[1]), len(test[1])) == (640, 160, 200)
    assert np.bincount(test[1]).tolist() == [50] * 4
    _, none, _ = train_validation_test_split(X, y, validation_size=0)
    assert none is None


def test_make_task_sequences_splits_then_groups_like_the_loaders():
    X, y = load_iris(return_X_y=True)
    data = make_task_sequences(X, y, [[0], [1, 2]])
    assert data.train is data["train"]  # attributes, as the loaders' Bunches
    assert [np.unique(task_y).tolist() for _, task_y in data.train] == [[0], [1, 2]]
    # Every sample lands in exactly one task of one sequence.
    sizes = [len(task_y) for part in ("train", "validation", "test") for _, task_y in data[part]]
    assert sum(sizes) == len(y)
    assert [len(task_y) for _, task_y in data.test] == [10, 20]
    assert make_task_sequences(X, y, [[0], [1, 2]], validation_size=0).validation is None
