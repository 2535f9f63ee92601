"""skcl.pipeline: a scikit-learn Pipeline that learns task by task, and its
use in the sequence-aware search, on the real CI Split Iris."""

import doctest
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline as SklearnPipeline
from sklearn.pipeline import make_pipeline as sklearn_make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

import skcl.pipeline
from skcl import AQCClassifier, FineTuningClassifier, LeastSquaresClassifier
from skcl.feature_extraction import RandomFeatures
from skcl.metrics import final_average_accuracy
from skcl.model_selection import SequenceGridSearch, learn_task_sequence
from skcl.pipeline import Pipeline, make_pipeline

AQC = dict(learning_rate=0.1, random_state=0)


def _fitted_scaler(data, cls=StandardScaler):
    """A scaler fitted on every training input: the stand-in for a
    feature extractor pre-trained before the sequence starts."""
    return cls().fit(np.vstack([X for X, _ in data.train]))


class CountingScaler(StandardScaler):
    """A StandardScaler that counts its transform calls (an expensive CNN's)."""

    n_transforms = 0

    def transform(self, X, copy=None):
        CountingScaler.n_transforms += 1
        return super().transform(X, copy=copy)


received = []


class RecordingClassifier(FineTuningClassifier):
    """Fine-tuning that records what its partial_fit receives."""

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        received.append(dict(X=np.asarray(X), classes=classes, sample_weight=sample_weight))
        return super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)


# ------------------------------------------------------------ partial_fit


def test_partial_fit_is_transform_then_the_final_steps_partial_fit(iris):
    scaler = _fitted_scaler(iris)
    mean = scaler.mean_.copy()
    pipe = make_pipeline(scaler, AQCClassifier(**AQC))
    by_hand = AQCClassifier(**AQC)
    for X, y in iris.train:
        assert pipe.partial_fit(X, y, classes=iris.classes) is pipe
        by_hand.partial_fit(scaler.transform(X), y, classes=iris.classes)
        for X_test, _ in iris.test:
            np.testing.assert_array_equal(pipe.predict(X_test),
                                          by_hand.predict(scaler.transform(X_test)))
    np.testing.assert_array_equal(pipe[-1].theta_, by_hand.theta_)
    assert pipe[-1].n_tasks_seen_ == 3
    # The leading step is frozen: partial_fit never refits it.
    assert pipe[0] is scaler and scaler.n_samples_seen_ == 96
    np.testing.assert_array_equal(scaler.mean_, mean)
    # AQC remembers the earlier species (fine-tuning would score 1/3).
    assert final_average_accuracy(pipe, iris.test) >= 0.6


def test_classes_and_other_parameters_reach_the_final_step(iris):
    scaler = _fitted_scaler(iris)
    pipe = make_pipeline(scaler, RecordingClassifier(**AQC))
    X, y = iris.train[0]
    received.clear()
    weights = np.linspace(0.5, 1.5, len(y))
    pipe.partial_fit(X, y, classes=[0, 1, 2, 3], sample_weight=weights)
    (call,) = received
    np.testing.assert_array_equal(call["X"], scaler.transform(X))
    assert list(call["classes"]) == [0, 1, 2, 3]
    assert call["sample_weight"] is weights
    # The output layer is sized by classes, a class absent from every task too.
    np.testing.assert_array_equal(pipe.classes_, [0, 1, 2, 3])
    assert pipe.predict_proba(X).shape == (32, 4)
    # The final step's own demand is not swallowed: classes on the first call.
    with pytest.raises(ValueError, match="classes"):
        make_pipeline(scaler, AQCClassifier(**AQC)).partial_fit(X, y)


def test_an_unfitted_leading_step_after_the_first_task_raises_and_changes_nothing(iris):
    X, y = iris.train[0]
    pipe = Pipeline([("features", _fitted_scaler(iris)), ("clf", AQCClassifier(**AQC))])
    pipe.partial_fit(X, y, classes=iris.classes)
    theta, before = pipe[-1].theta_.copy(), pipe.predict(iris.test[1][0])
    good_scaler = pipe[0]
    pipe.set_params(features=StandardScaler())
    with pytest.raises(NotFittedError) as error:
        pipe.partial_fit(*iris.train[1])
    message = str(error.value)
    assert "Step 'features' (StandardScaler, step 1 of 2)" in message
    assert "already learned a task" in message and "move the inputs" in message
    assert "PretrainedFeatureExtractor" in message and "FrozenEstimator" in message
    # Wrong inputs fail in the leading step, before the final step too.
    pipe.set_params(features=good_scaler)
    with pytest.raises(ValueError, match="features"):
        pipe.partial_fit(X[:, :2], y)
    assert pipe[-1].n_tasks_seen_ == 1
    np.testing.assert_array_equal(pipe[-1].theta_, theta)
    np.testing.assert_array_equal(pipe.predict(iris.test[1][0]), before)


WINE_AQC = dict(alpha=100, n_epochs=20, random_state=0)


def test_an_unfitted_pipeline_fits_its_scaler_on_the_first_task_then_freezes_it(wine):
    pipe = Pipeline([("scale", StandardScaler()), ("clf", AQCClassifier(**WINE_AQC))])
    by_hand = Pipeline([("scale", StandardScaler().fit(wine.train[0][0])),
                        ("clf", AQCClassifier(**WINE_AQC))])
    user_scaler = pipe[0]
    for X, y in wine.train:
        pipe.partial_fit(X, y, classes=wine.classes)
        by_hand.partial_fit(X, y, classes=wine.classes)
    np.testing.assert_array_equal(pipe[0].mean_, by_hand[0].mean_)
    np.testing.assert_array_equal(pipe[0].scale_, by_hand[0].scale_)
    for X, _ in wine.test:
        np.testing.assert_array_equal(pipe.predict_proba(X), by_hand.predict_proba(X))
    assert final_average_accuracy(pipe, wine.test) == final_average_accuracy(by_hand, wine.test)
    # The step in the pipeline is a fitted clone; the user's object is untouched.
    assert pipe[0] is not user_scaler and not hasattr(user_scaler, "mean_")
    assert pipe.n_features_in_ == wine.train[0][0].shape[1]


def test_a_per_feature_scaler_fitted_on_a_first_task_missing_classes_warns(wine):
    # The first task holds one wine of three: StandardScaler's means and
    # spreads are that class's, frozen for every later class. The user
    # learns why and what to do instead, at the line that called partial_fit.
    X, y = wine.train[0]
    assert len(np.unique(y)) < len(wine.classes)
    pipe = make_pipeline(StandardScaler(), LeastSquaresClassifier())
    with pytest.warns(UserWarning, match=r"'standardscaler' \(StandardScaler\) is fitted on "
                      r"the first task alone, which holds 1 of the 3 declared classes.*"
                      r"RandomFeatures\(scale='auto'\)") as record:
        pipe.partial_fit(X, y, classes=wine.classes)
    assert record[0].filename == __file__
    # Once frozen, later tasks do not warn again.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe.partial_fit(*wine.train[1])
        # Nor a scaler fitted beforehand, a scalar scale, or a first task of every class.
        make_pipeline(_fitted_scaler(wine), LeastSquaresClassifier()).partial_fit(
            X, y, classes=wine.classes)
        make_pipeline(RandomFeatures(50, backend="numpy", random_state=0),
                      LeastSquaresClassifier()).partial_fit(X, y, classes=wine.classes)
        X_all = np.vstack([X for X, _ in wine.train])
        y_all = np.concatenate([y for _, y in wine.train])
        make_pipeline(StandardScaler(), LeastSquaresClassifier()).partial_fit(
            X_all, y_all, classes=wine.classes)


def test_a_rejected_task_changes_neither_step(wine):
    X, y = wine.train[0]
    pipe = Pipeline([("scale", StandardScaler()), ("clf", AQCClassifier(**WINE_AQC))])
    bad = X.copy()
    bad[0, 0] = np.nan
    # First call: the scaler passes NaN through, the classifier rejects it.
    with pytest.raises(ValueError, match="NaN"):
        pipe.partial_fit(bad, y, classes=wine.classes)
    with pytest.raises(ValueError, match="classes"):
        pipe.partial_fit(X, y)
    for step in pipe:
        with pytest.raises(NotFittedError):
            check_is_fitted(step)
    pipe.partial_fit(X, y, classes=wine.classes)
    mean, theta = pipe[0].mean_.copy(), pipe[-1].theta_.copy()
    # A later call: labels outside the classes, then the wrong width.
    for args in [(wine.train[1][0], np.full(len(wine.train[1][1]), 9)), (X[:, :5], y)]:
        with pytest.raises(ValueError):
            pipe.partial_fit(*args)
        np.testing.assert_array_equal(pipe[0].mean_, mean)
        np.testing.assert_array_equal(pipe[-1].theta_, theta)
        assert pipe[-1].n_tasks_seen_ == 1


def test_partial_fit_transformers_updates_a_scaler_on_every_task(wine):
    pipe = make_pipeline(StandardScaler(), AQCClassifier(**WINE_AQC),
                         partial_fit_transformers=True)
    frozen = make_pipeline(StandardScaler(), AQCClassifier(**WINE_AQC))
    seen = []
    for X, y in wine.train:
        seen.append(X)
        pipe.partial_fit(X, y, classes=wine.classes)
        frozen.partial_fit(X, y, classes=wine.classes)
        np.testing.assert_allclose(pipe[0].mean_, np.vstack(seen).mean(0))
    np.testing.assert_array_equal(frozen[0].mean_, wine.train[0][0].mean(0))
    # A rejected task leaves the updated scaler as it was too.
    mean = pipe[0].mean_.copy()
    with pytest.raises(ValueError):
        pipe.partial_fit(wine.train[0][0], np.full(len(wine.train[0][1]), 9))
    np.testing.assert_array_equal(pipe[0].mean_, mean)
    assert clone(pipe).partial_fit_transformers is True


def test_partial_fit_exists_only_when_the_final_step_has_one(iris):
    assert hasattr(make_pipeline(StandardScaler(), AQCClassifier()), "partial_fit")
    assert not hasattr(make_pipeline(StandardScaler(), LogisticRegression()), "partial_fit")
    assert not hasattr(Pipeline([("scale", StandardScaler()), ("last", "passthrough")]),
                       "partial_fit")
    # Stateless leading steps need no fitting.
    pipe = make_pipeline(FunctionTransformer(np.log1p), "passthrough", AQCClassifier(**AQC))
    pipe.partial_fit(*iris.train[0], classes=iris.classes)
    assert pipe[-1].n_tasks_seen_ == 1


def test_leading_steps_and_transform_leading_are_what_partial_fit_runs(iris):
    scaler = _fitted_scaler(iris)
    tanh = FunctionTransformer(np.tanh)
    pipe = Pipeline([("scale", scaler), ("skip", "passthrough"), ("none", None), ("tanh", tanh),
                     ("clf", RecordingClassifier(**AQC))])
    assert pipe.leading_steps() == [("scale", scaler), ("tanh", tanh)]
    X, y = iris.train[0]
    expected = tanh.transform(scaler.transform(X))
    np.testing.assert_array_equal(pipe.transform_leading(X), expected)
    received.clear()
    pipe.partial_fit(X, y, classes=iris.classes)
    np.testing.assert_array_equal(received[0]["X"], expected)
    with pytest.raises(NotFittedError):
        make_pipeline(StandardScaler(), AQCClassifier()).transform_leading(X)


def test_only_skcl_pipeline_uses_scikit_learns_private_pipeline_methods():
    """Other modules (the search's fast path) go through the public
    leading_steps and transform_leading, so a change in scikit-learn's
    private Pipeline API has one place to mend."""
    package = Path(skcl.pipeline.__file__).parent
    private = ("._iter(", "._final_estimator", "._log_message(", "._validate_steps(")
    users = {path.relative_to(package).as_posix() for path in package.rglob("*.py")
             if any(name in path.read_text(encoding="utf-8") for name in private)}
    assert users == {"pipeline.py"}


def test_make_pipeline_names_steps_like_sklearn():
    steps = (StandardScaler(), StandardScaler(), AQCClassifier())
    pipe = make_pipeline(*steps, verbose=True)
    reference = sklearn_make_pipeline(*steps)
    assert type(pipe) is Pipeline
    assert [name for name, _ in pipe.steps] == [name for name, _ in reference.steps] == [
        "standardscaler-1", "standardscaler-2", "aqcclassifier"
    ]
    assert all(a is b for (_, a), (_, b) in zip(pipe.steps, reference.steps))
    assert pipe.verbose is True and pipe.memory is None
    # Still scikit-learn's Pipeline: subclass, slicing, clone, parameters.
    assert isinstance(pipe, SklearnPipeline)
    assert type(pipe[:2]) is Pipeline and type(clone(pipe)) is Pipeline
    assert pipe.get_params()["aqcclassifier__alpha"] == 1.0
    assert pipe.set_params(aqcclassifier__alpha=10)[-1].alpha == 10


def test_fit_refits_every_step_unless_frozen(iris):
    """``fit`` is scikit-learn's: a pre-trained step survives only frozen."""
    X, y = iris.train[0]
    scaler = _fitted_scaler(iris)
    mean = scaler.mean_.copy()
    make_pipeline(FrozenEstimator(scaler), AQCClassifier(**AQC)).fit(X, y)
    np.testing.assert_array_equal(scaler.mean_, mean)
    make_pipeline(scaler, AQCClassifier(**AQC)).fit(X, y)
    np.testing.assert_array_equal(scaler.mean_, X.mean(axis=0))


def test_pickling_mid_sequence_changes_nothing(iris):
    pipe = make_pipeline(_fitted_scaler(iris), AQCClassifier(**AQC))
    for X, y in iris.train[:2]:
        pipe.partial_fit(X, y, classes=iris.classes)
    restored = pickle.loads(pickle.dumps(pipe))
    for model in (pipe, restored):
        model.partial_fit(*iris.train[2])
    assert type(restored) is Pipeline
    for X, _ in iris.test:
        np.testing.assert_array_equal(restored.predict(X), pipe.predict(X))
    np.testing.assert_array_equal(restored.predict_proba(iris.test[0][0]),
                                  pipe.predict_proba(iris.test[0][0]))


def test_learn_task_sequence_takes_the_pipeline(iris):
    scaler = _fitted_scaler(iris)
    R = learn_task_sequence(make_pipeline(scaler, AQCClassifier(**AQC)), iris.train, iris.test,
                            classes=iris.classes)
    by_hand = learn_task_sequence(
        AQCClassifier(**AQC),
        [(scaler.transform(X), y) for X, y in iris.train],
        [(scaler.transform(X), y) for X, y in iris.test],
        classes=iris.classes,
    )
    np.testing.assert_array_equal(R, by_hand)
    assert R[:, -1].mean() >= 0.6


def test_docstring_examples_run():
    result = doctest.testmod(skcl.pipeline, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0


# ------------------------------------------------------------------ search


@pytest.mark.slow
def test_search_transforms_once_with_the_fitted_steps(iris):
    scaler = _fitted_scaler(iris, CountingScaler)
    pipe = make_pipeline(scaler, AQCClassifier(**AQC))
    grid = {"aqcclassifier__alpha": [1, 100]}
    CountingScaler.n_transforms = 0
    search = SequenceGridSearch(pipe, grid).fit(iris.train, iris.validation,
                                                classes=iris.classes)
    # Three training and three validation tasks, once, whatever the grid.
    assert CountingScaler.n_transforms == 6

    # The slow path: every candidate a clone of the whole pipeline (forced by
    # a grid that swaps the frozen step for itself), transforming again.
    frozen = FrozenEstimator(scaler)
    CountingScaler.n_transforms = 0
    slow = SequenceGridSearch(
        make_pipeline(frozen, AQCClassifier(**AQC)), {**grid, "frozenestimator": [frozen]}
    ).fit(iris.train, iris.validation, classes=iris.classes)
    assert CountingScaler.n_transforms == 2 * 6
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  slow.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(search.accuracy_matrices_, slow.accuracy_matrices_)
    assert search.best_score_ >= 0.6

    # Names stay as written; the best model is the user's fitted step, the
    # very same object, followed by the best classifier.
    assert search.best_params_ in ({"aqcclassifier__alpha": 1}, {"aqcclassifier__alpha": 100})
    assert list(search.cv_results_["param_aqcclassifier__alpha"]) == [1, 100]
    best = search.best_estimator_
    assert type(best) is Pipeline and [n for n, _ in best.steps] == ["countingscaler",
                                                                     "aqcclassifier"]
    assert best[0] is scaler and best[-1] is not pipe[-1]
    assert best[-1].alpha == search.best_params_["aqcclassifier__alpha"]
    with pytest.raises(NotFittedError):
        check_is_fitted(pipe[-1])  # the user's classifier is left unfitted
    for X, _ in iris.test:
        np.testing.assert_array_equal(search.predict(X), slow.predict(X))
    assert final_average_accuracy(search, iris.test) >= 0.6


@pytest.mark.parametrize(
    "grid, match",
    [
        # A grid on the fitted step makes every candidate a clone, reset.
        ({"standardscaler__with_mean": [True, False]},
         "your fitted step 'standardscaler' .*grid sets "
         "\\['standardscaler__with_mean'\\].*clone resets.*FrozenEstimator"),
        ({"standardscaler__with_mean": [True], "recordingclassifier__learning_rate": [0.1]},
         "would refit your fitted 'standardscaler' on the first task"),
    ],
)
def test_search_rejects_candidates_that_would_reset_a_fitted_step(iris, grid, match):
    search = SequenceGridSearch(
        make_pipeline(_fitted_scaler(iris), RecordingClassifier(**AQC)), grid
    )
    received.clear()
    with pytest.raises(NotFittedError, match=match):
        search.fit(iris.train, iris.validation)
    assert received == [] and not hasattr(search, "cv_results_")


def _maybe_fit(step, X):
    return step if X is None else step.fit(X)


def _first_task_scaler(data):
    """The scaler a partial_fit loop fits: on the first training task."""
    return StandardScaler().fit(data.train[0][0])


WINE_PIPELINES = {
    # (the steps after the scaler, fitted on X when it is given; the final
    # step; a grid on the final step)
    "aqc": (lambda X=None: [], AQCClassifier(learning_rate=0.01, random_state=0),
            {"aqcclassifier__alpha": [1, 10, 1000]}),
    "least squares": (lambda X=None: [_maybe_fit(RandomFeatures(300, random_state=0), X)],
                      LeastSquaresClassifier(),
                      {"leastsquaresclassifier__alpha": [1e-3, 1.0, 1e3]}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(WINE_PIPELINES))
def test_search_fits_unfitted_leading_steps_on_the_first_training_task(wine, name):
    make_leading, final, grid = WINE_PIPELINES[name]
    unfitted = make_pipeline(StandardScaler(), *make_leading(), clone(final))
    scaler = _first_task_scaler(wine)
    by_hand = make_pipeline(scaler, *make_leading(scaler.transform(wine.train[0][0])),
                            clone(final))
    search = SequenceGridSearch(unfitted, grid).fit(wine.train, wine.validation,
                                                    classes=wine.classes)
    reference = SequenceGridSearch(by_hand, grid).fit(wine.train, wine.validation,
                                                      classes=wine.classes)
    assert search.best_params_ == reference.best_params_
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  reference.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(search.accuracy_matrices_, reference.accuracy_matrices_)
    assert search.best_score_ >= 0.9
    # The grid chose: its candidates do not all score the same.
    assert np.ptp(search.cv_results_["mean_test_score"]) > 0

    # Every candidate a clone of the whole pipeline fitting its own steps
    # (a grid on a leading step forces it) gives the same scores, and so
    # does a partial_fit loop of the best candidate.
    slow = SequenceGridSearch(unfitted, {**grid, "standardscaler__with_mean": [True]}).fit(
        wine.train, wine.validation, classes=wine.classes
    )
    np.testing.assert_array_equal(slow.accuracy_matrices_, search.accuracy_matrices_)
    loop = clone(unfitted).set_params(**search.best_params_)
    R = learn_task_sequence(loop, wine.train, wine.validation, classes=wine.classes)
    np.testing.assert_array_equal(R[:, -1], search.accuracy_matrices_[search.best_index_][:, -1])

    # The best model carries the steps fitted on the first task; the
    # user's pipeline is left unfitted.
    best = search.best_estimator_
    np.testing.assert_array_equal(best[0].mean_, wine.train[0][0].mean(0))
    for X, _ in wine.test:
        np.testing.assert_array_equal(search.predict(X), reference.predict(X))
        np.testing.assert_array_equal(search.predict(X), loop.predict(X))
    for step in unfitted:
        with pytest.raises(NotFittedError):
            check_is_fitted(step)


@pytest.mark.slow
def test_search_lets_updating_transformers_drift_as_partial_fit_does(wine):
    # With partial_fit_transformers the scaler moves on every task, so the
    # features are not the same from task to task: each candidate learns
    # through its own pipeline, as a partial_fit loop does.
    pipe = make_pipeline(StandardScaler(), AQCClassifier(learning_rate=0.01, random_state=0),
                         partial_fit_transformers=True)
    grid = {"aqcclassifier__alpha": [1, 1000]}
    search = SequenceGridSearch(pipe, grid).fit(wine.train, wine.validation,
                                                classes=wine.classes)
    for i, params in enumerate(search.cv_results_["params"]):
        loop = clone(pipe).set_params(**params)
        R = learn_task_sequence(loop, wine.train, wine.validation, classes=wine.classes)
        np.testing.assert_array_equal(R[:, -1], search.accuracy_matrices_[i][:, -1])
    np.testing.assert_allclose(search.best_estimator_[0].mean_,
                               np.vstack([X for X, _ in wine.train]).mean(0))


def test_sklearn_pipeline_in_a_search_says_to_use_skcls(wine):
    pipe = sklearn_make_pipeline(StandardScaler(), AQCClassifier())
    with pytest.raises(TypeError, match="scikit-learn's Pipeline has none.*skcl.pipeline"):
        SequenceGridSearch(pipe, {"aqcclassifier__alpha": [1, 10]}).fit(
            wine.train, wine.validation, classes=wine.classes
        )


@pytest.mark.slow
def test_search_over_a_stateless_leading_step_clones_the_whole_pipeline(iris):
    pipe = make_pipeline(FunctionTransformer(np.log1p), FineTuningClassifier(**AQC))
    search = SequenceGridSearch(pipe, {"functiontransformer__func": [np.log1p, None]}).fit(
        iris.train, iris.validation
    )
    assert list(search.cv_results_["param_functiontransformer__func"]) == [np.log1p, None]
    # Fine-tuning forgets all but the last species, whatever the features.
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], [1 / 3, 1 / 3])
    assert search.best_estimator_[0] is not pipe[0]


def test_search_rejects_a_pipeline_whose_final_step_cannot_learn_a_sequence(iris):
    with pytest.raises(TypeError, match="final step, LogisticRegression, has none"):
        SequenceGridSearch(make_pipeline(StandardScaler(), LogisticRegression()), {}).fit(
            iris.train, iris.validation
        )
    with pytest.raises(TypeError, match="skcl.pipeline.make_pipeline"):
        SequenceGridSearch(sklearn_make_pipeline(StandardScaler(), AQCClassifier()), {}).fit(
            iris.train, iris.validation
        )


# ------------------------------------------------- scikit-learn's checks

EXPECTED_FAILURES = {
    # scikit-learn expects the same two failures of its own Pipeline.
    "check_estimators_overwrite_params": "Pipeline fits its steps in place, so `steps` changes",
    "check_dont_overwrite_parameters": "Pipeline fits its steps in place, so `steps` changes",
}


@parametrize_with_checks(
    [make_pipeline(StandardScaler(), AQCClassifier(random_state=0))],
    expected_failed_checks=lambda estimator: EXPECTED_FAILURES,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
