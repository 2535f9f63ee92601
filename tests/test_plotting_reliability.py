"""The reliability diagram: the right bins, drawn (Agg backend, no display)."""

import matplotlib
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skcl.metrics import expected_calibration_error
from skcl.plotting import (
    plot_reliability_diagram,
    plot_reliability_diagram_from_estimator,
    reliability_bins,
)

matplotlib.use("Agg")


def test_bins_by_hand():
    # Confidences 0.95 (right), 0.85 (right), 0.85 (wrong), 0.55 (wrong),
    # 0.5 (right; the edge 0.5 belongs to the bin (0.4, 0.5]).
    y_prob = np.array([[0.95, 0.05], [0.15, 0.85], [0.85, 0.15], [0.45, 0.55], [0.5, 0.5]])
    y = np.array([0, 1, 1, 0, 0])
    edges, counts, accuracy, confidence, ece = reliability_bins(y, y_prob, n_bins=10)
    np.testing.assert_allclose(edges, np.linspace(0, 1, 11))
    assert counts.tolist() == [0, 0, 0, 0, 1, 1, 0, 0, 2, 1]
    np.testing.assert_allclose(accuracy[[4, 5, 8, 9]], [1.0, 0.0, 0.5, 1.0])
    np.testing.assert_allclose(confidence[[4, 5, 8, 9]], [0.5, 0.55, 0.85, 0.95])
    assert np.isnan(accuracy[0]) and np.isnan(confidence[0])
    expected = (1 * 0.5 + 1 * 0.55 + 2 * 0.35 + 1 * 0.05) / 5
    assert ece == pytest.approx(expected)


def test_bins_agree_with_the_metric_on_real_data(iris):
    X = np.concatenate([X for X, _ in iris.train])
    y = np.concatenate([y for _, y in iris.train])
    P = LogisticRegression(C=0.05, max_iter=1000).fit(X, y).predict_proba(X)
    for n_bins in (5, 10, 15):
        _, counts, accuracy, confidence, ece = reliability_bins(y, P, n_bins=n_bins)
        assert counts.sum() == len(y)
        filled = counts > 0
        weighted = np.sum(counts[filled] / len(y) * np.abs(accuracy - confidence)[filled])
        assert weighted == pytest.approx(ece)
        assert ece == pytest.approx(expected_calibration_error(y, P, n_bins=n_bins))


def test_diagram_draws_the_bins(iris):
    X = np.concatenate([X for X, _ in iris.train])
    y = np.concatenate([y for _, y in iris.train])
    clf = LogisticRegression(C=0.05, max_iter=1000).fit(X, y)
    P = clf.predict_proba(X)
    _, counts, accuracy, _, ece = reliability_bins(y, P, n_bins=10)
    ax = plot_reliability_diagram_from_estimator(clf, X, y, n_bins=10)
    bars = ax.patches
    filled = counts > 0
    assert len(bars) == filled.sum()
    np.testing.assert_allclose([b.get_height() for b in bars], accuracy[filled])
    np.testing.assert_allclose([b.get_x() for b in bars], np.linspace(0, 1, 11)[:-1][filled])
    assert [t.get_text() for t in ax.texts] == [str(n) for n in counts[filled]]
    assert ax.get_title() == f"LogisticRegression — ECE {100 * ece:.1f} %"
    ax.figure.canvas.draw()  # renders with Agg


def test_binary_one_column_and_bad_input():
    y = np.array([0, 1, 1, 0])
    p1 = np.array([0.2, 0.7, 0.4, 0.1])
    ax = plot_reliability_diagram(y, p1, n_bins=4)
    assert [t.get_text() for t in ax.texts] == ["2", "2"]  # 0.6, 0.7 | 0.8, 0.9
    with pytest.raises(ValueError, match="probabilities"):
        plot_reliability_diagram(y, p1 + 1.0)
    with pytest.raises(ValueError, match="n_bins"):
        plot_reliability_diagram(y, p1, n_bins=0)
    with pytest.raises(TypeError, match="predict_proba"):
        plot_reliability_diagram_from_estimator(object(), [[0.0]], [0])
