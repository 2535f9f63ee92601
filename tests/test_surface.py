"""What a scikit-learn user expects of every skcl classifier beside
scikit-learn's own: GaussianDiscriminantClassifier.decision_function
against LDA, the ``classes`` a partial_fit accepts, and the dtype of the
labels it gives back."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.preprocessing import StandardScaler

from skcl import AQCClassifier, GaussianDiscriminantClassifier, LeastSquaresClassifier


def _gda_on_all(X, y, shrinkage, **kwargs):
    """A GaussianDiscriminantClassifier that learned (X, y) in one task."""
    return GaussianDiscriminantClassifier(shrinkage, random_state=0, **kwargs).partial_fit(
        X, y, classes=np.unique(y)
    )


@pytest.mark.parametrize("shrinkage", [0.0, 0.1, 0.6])
def test_decision_function_is_ldas_with_three_classes(wine_xy, shrinkage):
    X, y = wine_xy
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
def test_decision_function_with_two_classes_is_ldas_log_ratio(wine_xy, shrinkage):
    X, y = wine_xy
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


def test_decision_function_of_a_class_with_no_rows_yet(wine_xy):
    X, y = wine_xy
    gda = GaussianDiscriminantClassifier(0.1, random_state=0).partial_fit(
        X[y < 2], y[y < 2], classes=[0, 1, 2]
    )
    scores = gda.decision_function(X)
    assert np.all(scores[:, 2] == -np.inf) and np.all(np.isfinite(scores[:, :2]))


def test_decision_function_checks_its_input(wine_xy):
    X, y = wine_xy
    with pytest.raises(NotFittedError):
        GaussianDiscriminantClassifier().decision_function(X)
    with pytest.raises(ValueError, match="features"):
        _gda_on_all(X, y, 0.1).decision_function(X[:, :5])


# ------------------------------------------------------------------ labels


def test_a_set_of_classes_is_refused_as_scikit_learn_refuses_it(wine_xy):
    X, y = wine_xy
    # scikit-learn's partial_fit: "Expected array-like (array or non-string
    # sequence), got {0, 1, 2}". A set has no order, and classes_ has one.
    with pytest.raises(ValueError, match="array-like"):
        SGDClassifier().partial_fit(X, y, classes={0, 1, 2})
    for clf in [LeastSquaresClassifier(random_state=0),
                GaussianDiscriminantClassifier(random_state=0),
                LeastSquaresClassifier(grow_classes=True, random_state=0)]:
        with pytest.raises(ValueError, match="array-like.*got set.*sorted\\(classes\\)"):
            clf.partial_fit(X, y, classes={0, 1, 2})
        assert not hasattr(clf, "classes_")
        clf.partial_fit(X, y, classes=sorted({0, 1, 2}))
        # A later call holds the same rule, and changes nothing either.
        scores = clf.decision_function(X)
        with pytest.raises(ValueError, match="got set"):
            clf.partial_fit(X, y, classes={0, 1, 2})
        np.testing.assert_array_equal(clf.decision_function(X), scores)
        assert clf.n_tasks_seen_ == 1


@pytest.mark.parametrize("classes, match", [
    ("abc", "got str 'abc'"), (3, "got int 3"), ([[0, 1, 2]], "1-D"), ([], "empty"),
    ([0.5, 1.5, 2.5], "continuous"),
])
def test_other_malformed_classes_get_a_clear_error(wine_xy, classes, match):
    X, y = wine_xy
    with pytest.raises(ValueError, match=match):
        LeastSquaresClassifier().partial_fit(X, y, classes=classes)


def _label_kinds(y):
    """The same wine cultivars as every container a user may hold them in."""
    names = np.array(["barbera", "barolo", "grignolino"], dtype=object)[y]
    return {
        "object": names,
        "categorical": pd.Categorical(names),
        "series": pd.Series(names),
        "str": names.astype(str),
        "int": y,
    }


@pytest.mark.parametrize("kind", ["object", "categorical", "series", "str", "int"])
@pytest.mark.parametrize("estimator", [
    LeastSquaresClassifier(random_state=0),
    GaussianDiscriminantClassifier(random_state=0),
    LeastSquaresClassifier(grow_classes=True, random_state=0),
    AQCClassifier(n_epochs=2, random_state=0),
], ids=["least_squares", "gaussian", "grow_classes", "aqc"])
def test_predict_returns_labels_in_their_own_dtype_like_logistic_regression(wine_xy, kind,
                                                                         estimator):
    # scikit-learn is not of one mind: LogisticRegression (LabelEncoder,
    # np.unique) keeps an object dtype, SGDClassifier (unique_labels) turns
    # it into str. skcl keeps it, as LogisticRegression, SVC and the trees do.
    X, y = wine_xy
    X = StandardScaler().fit_transform(X)
    labels = _label_kinds(y)[kind]
    reference = LogisticRegression().fit(X, labels)
    fitted = clone(estimator).fit(X, labels)
    np.testing.assert_array_equal(fitted.classes_, reference.classes_)
    assert fitted.classes_.dtype == reference.classes_.dtype
    assert fitted.predict(X).dtype == reference.predict(X).dtype
    # The same model as on the integer labels, only named.
    on_ints = clone(estimator).fit(X, y)
    names = np.unique(np.asarray(labels))
    np.testing.assert_array_equal(fitted.predict(X), names[on_ints.predict(X)])
    # partial_fit: the dtype of the classes given, in two tasks.
    classes = np.unique(np.asarray(labels))
    first, second = y < 2, y >= 1
    stream = clone(estimator).partial_fit(X[first], np.asarray(labels)[first],
                                          classes=classes)
    stream.partial_fit(X[second], np.asarray(labels)[second], classes=classes)
    assert stream.predict(X).dtype == reference.predict(X).dtype
    assert set(stream.predict(X)) <= set(classes)


def test_sequences_take_the_same_classes_and_keep_the_labels_dtype():
    from skcl.datasets import load_ci_split_wine
    from skcl.model_selection import SequenceGridSearch, learn_task_sequence

    data = load_ci_split_wine()
    with pytest.raises(ValueError, match="got set"):
        learn_task_sequence(LeastSquaresClassifier(), data.train, data.test, classes={0, 1, 2})
    names = np.array(["barbera", "barolo", "grignolino"], dtype=object)
    named = lambda tasks: [(X, names[y]) for X, y in tasks]  # noqa: E731
    search = SequenceGridSearch(LeastSquaresClassifier(random_state=0),
                                {"alpha": [0.1, 10.0]}).fit(named(data.train),
                                                            named(data.validation))
    assert search.classes_.dtype == object
    assert search.predict(data.test[0][0]).dtype == object
    np.testing.assert_array_equal(search.classes_, names)
