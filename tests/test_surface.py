"""What a scikit-learn user expects of every skcl classifier beside
scikit-learn's own: GaussianDiscriminantClassifier.decision_function
against LDA, the ``classes`` a partial_fit accepts, and the dtype of the
labels it gives back."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import NotFittedError

from skcl import GaussianDiscriminantClassifier


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


def _gda_on_all(X, y, shrinkage, **kwargs):
    """A GaussianDiscriminantClassifier that learned (X, y) in one task."""
    return GaussianDiscriminantClassifier(shrinkage, random_state=0, **kwargs).partial_fit(
        X, y, classes=np.unique(y)
    )


@pytest.mark.parametrize("shrinkage", [0.0, 0.1, 0.6])
def test_decision_function_is_ldas_with_three_classes(wine, shrinkage):
    X, y = wine
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(X, y)
    gda = _gda_on_all(X, y, shrinkage)
    ours, theirs = gda.decision_function(X), lda.decision_function(X)
    assert ours.shape == theirs.shape == (len(X), 3)
    # Both are the log-posterior up to a constant per row (LDA drops the
    # quadratic term x'Σ⁻¹x shared by the classes), so the differences
    # between classes agree, and so does the posterior they give.
    np.testing.assert_allclose(ours - ours[:, :1], theirs - theirs[:, :1], rtol=1e-7,
                               atol=1e-7 * np.abs(theirs).max())
    # Ours is the log joint: the log-posterior plus the row's log evidence.
    evidence = ours - gda.predict_log_proba(X)
    np.testing.assert_allclose(evidence, np.repeat(evidence[:, :1], 3, axis=1), rtol=1e-10)
    np.testing.assert_array_equal(gda.classes_[ours.argmax(1)], gda.predict(X))
    np.testing.assert_array_equal(gda.predict(X), lda.predict(X))


@pytest.mark.parametrize("shrinkage", [0.0, 0.3])
def test_decision_function_with_two_classes_is_ldas_log_ratio(wine, shrinkage):
    X, y = wine
    X, y = X[y > 0], np.where(y[y > 0] == 1, "barbera", "grignolino")
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(X, y)
    gda = _gda_on_all(X, y, shrinkage)
    ours, theirs = gda.decision_function(X), lda.decision_function(X)
    assert ours.shape == theirs.shape == (len(X),)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-7 * np.abs(theirs).max())
    log_proba = gda.predict_log_proba(X)
    np.testing.assert_allclose(ours, log_proba[:, 1] - log_proba[:, 0], rtol=1e-9, atol=1e-9)
    # Positive means classes_[1], as in scikit-learn.
    np.testing.assert_array_equal(gda.classes_[(ours > 0).astype(int)], gda.predict(X))


def test_decision_function_of_a_class_with_no_rows_yet(wine):
    X, y = wine
    gda = GaussianDiscriminantClassifier(0.1, random_state=0).partial_fit(
        X[y < 2], y[y < 2], classes=[0, 1, 2]
    )
    scores = gda.decision_function(X)
    assert np.all(scores[:, 2] == -np.inf) and np.all(np.isfinite(scores[:, :2]))


def test_decision_function_checks_its_input(wine):
    X, y = wine
    with pytest.raises(NotFittedError):
        GaussianDiscriminantClassifier().decision_function(X)
    with pytest.raises(ValueError, match="features"):
        _gda_on_all(X, y, 0.1).decision_function(X[:, :5])
