"""SequenceGridSearch and learn_task_sequence on the real CI Split Iris."""

import contextlib

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skcl import AQCClassifier, EWCClassifier, FineTuningClassifier, JointClassifier
from skcl.datasets import load_ci_split_iris
from skcl.metrics import (
    average_forgetting,
    final_average_accuracy,
)
from skcl.model_selection import SequenceGridSearch, SequenceRandomizedSearch, learn_task_sequence

IRIS = dict(learning_rate=0.1, batch_size=16, n_epochs=100, random_state=0)
LAMBDAS = [1, 10, 100, 1000, 10000]


@pytest.fixture(scope="module")
def data():
    return load_ci_split_iris()


def _by_hand(estimator, data):
    """The protocol written out: partial_fit per task, evaluate after each."""
    R = np.empty((3, 3))
    for j, (X, y) in enumerate(data.train):
        estimator.partial_fit(X, y, classes=data.classes)
        R[:, j] = [np.mean(estimator.predict(Xv) == yv) for Xv, yv in data.validation]
    return R


calls = []


class RecordingClassifier(FineTuningClassifier):
    """Fine-tuning that records every partial_fit call (to prove none ran)."""

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        calls.append(len(y))
        return super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)


class PartialFitPipeline(Pipeline):
    """The smallest pipeline that learns task by task: stateless transforms."""

    def partial_fit(self, X, y, classes=None):
        for _, step in self.steps[:-1]:
            X = step.transform(X)
        self.steps[-1][1].partial_fit(X, y, classes=classes)
        return self


def test_learn_task_sequence_is_the_accuracy_matrix(data):
    R = learn_task_sequence(FineTuningClassifier(**IRIS), data.train, data.validation,
                            classes=data.classes)
    expected = _by_hand(FineTuningClassifier(**IRIS), data)
    np.testing.assert_array_equal(R, expected)
    # Fine-tuning knows only the class just learned: R is the identity.
    np.testing.assert_array_equal(R, np.eye(3))
    final_only = learn_task_sequence(FineTuningClassifier(**IRIS), data.train, data.validation,
                                     history=False)
    assert np.isnan(final_only[:, :2]).all()
    np.testing.assert_array_equal(final_only[:, 2], expected[:, 2])


@pytest.mark.slow
def test_search_picks_the_argmax_of_candidates_run_by_hand(data):
    estimator = AQCClassifier(**IRIS)
    search = SequenceGridSearch(estimator, {"alpha": LAMBDAS}).fit(
        data.train, data.validation, classes=data.classes
    )
    matrices = [_by_hand(clone(estimator).set_params(alpha=a), data) for a in LAMBDAS]
    by_hand = np.array([R[:, -1].mean() for R in matrices])
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], by_hand)
    assert search.best_index_ == int(np.argmax(by_hand))  # first among ties
    assert search.best_params_ == {"alpha": LAMBDAS[search.best_index_]}
    assert search.best_score_ == by_hand.max()
    assert list(search.cv_results_["param_alpha"]) == LAMBDAS
    ranks = search.cv_results_["rank_test_score"]
    assert ranks[search.best_index_] == 1 and ranks.min() == 1
    np.testing.assert_array_equal(
        search.cv_results_["task2_validation_accuracy"], [R[2, -1] for R in matrices]
    )
    # best_estimator_ is the best candidate trained on the training sequence:
    # the same model as training it again by hand.
    best = clone(estimator).set_params(**search.best_params_)
    for X, y in data.train:
        best.partial_fit(X, y, classes=data.classes)
    np.testing.assert_array_equal(search.best_estimator_.theta_, best.theta_)
    np.testing.assert_array_equal(search.predict(data.test[0][0]), best.predict(data.test[0][0]))
    assert search.score(*data.test[1]) == best.score(*data.test[1])

    # Another metric: forgetting, negated so that greater is better.
    forgetting = SequenceGridSearch(estimator, {"alpha": LAMBDAS},
                                    scoring="neg_average_forgetting").fit(
        data.train, data.validation, classes=data.classes
    )
    np.testing.assert_allclose(forgetting.cv_results_["mean_test_score"],
                               [-average_forgetting(R) for R in matrices])
    np.testing.assert_array_equal(forgetting.accuracy_matrices_, np.array(matrices))
    custom = SequenceGridSearch(estimator, {"alpha": [1, 10]}, scoring=lambda R: R[0, -1],
                                refit=False).fit(data.train, data.validation)
    np.testing.assert_array_equal(custom.cv_results_["mean_test_score"],
                                  [matrices[0][0, -1], matrices[1][0, -1]])
    assert not hasattr(custom, "best_estimator_")


@pytest.mark.slow
def test_paper_protocol_on_ci_split_iris_softmax_regression(data):
    """Acceptance: AQC tuned on validation ≥ 0.60 test FAA; FT = 1/3; joint ≥ 0.9."""
    aqc = SequenceGridSearch(AQCClassifier(**IRIS), {"alpha": LAMBDAS}).fit(
        data.train, data.validation, classes=data.classes
    )
    assert final_average_accuracy(aqc, data.test) >= 0.60
    results = {}
    for cls in (FineTuningClassifier, JointClassifier):
        search = SequenceGridSearch(cls(**IRIS), {}).fit(data.train, data.validation)
        assert search.cv_results_["params"] == [{}]
        results[cls] = final_average_accuracy(search, data.test)
    assert results[FineTuningClassifier] == pytest.approx(1 / 3)
    assert results[JointClassifier] >= 0.90


@pytest.mark.slow
def test_pipeline_parameters_reach_the_final_step(data):
    pipe = PartialFitPipeline([("scale", FunctionTransformer(np.log1p)),
                               ("aqcclassifier", AQCClassifier(**IRIS))])
    search = SequenceGridSearch(pipe, {"aqcclassifier__alpha": [1, 100]}).fit(
        data.train, data.validation
    )
    # The same search on features transformed by hand.
    transformed = {
        part: [(np.log1p(X), y) for X, y in getattr(data, part)]
        for part in ("train", "validation")
    }
    plain = SequenceGridSearch(AQCClassifier(**IRIS), {"alpha": [1, 100]}).fit(
        transformed["train"], transformed["validation"]
    )
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  plain.cv_results_["mean_test_score"])
    assert search.best_params_ == {"aqcclassifier__alpha": plain.best_params_["alpha"]}
    np.testing.assert_array_equal(
        search.predict(data.test[2][0]), plain.predict(np.log1p(data.test[2][0]))
    )


@pytest.mark.slow
@pytest.mark.parametrize("backend", [None, "loky"])
def test_results_do_not_depend_on_n_jobs(data, backend):
    # n_jobs=2 runs the candidates in threads, unless a joblib backend
    # (here processes) is chosen around the search.
    grid = {"alpha": [1, 100, 10000]}
    serial = SequenceGridSearch(EWCClassifier(**IRIS), grid, n_jobs=1).fit(
        data.train, data.validation, classes=data.classes
    )
    with joblib.parallel_config(backend=backend) if backend else contextlib.nullcontext():
        parallel = SequenceGridSearch(EWCClassifier(**IRIS), grid, n_jobs=2).fit(
            data.train, data.validation, classes=data.classes
        )
    runs = serial, parallel
    np.testing.assert_array_equal(*(r.cv_results_["mean_test_score"] for r in runs))
    np.testing.assert_array_equal(*(r.accuracy_matrices_ for r in runs))
    np.testing.assert_array_equal(*(r.best_estimator_.theta_ for r in runs))


def test_a_diverging_candidate_gets_error_score(data):
    grid = {"learning_rate": [0.1, 1e30]}
    with pytest.warns(FitFailedWarning, match="diverged"):
        search = SequenceGridSearch(FineTuningClassifier(random_state=0), grid).fit(
            data.train, data.validation
        )
    assert np.isnan(search.cv_results_["mean_test_score"][1])
    assert search.best_params_ == {"learning_rate": 0.1}
    assert search.cv_results_["rank_test_score"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="diverged"):
        SequenceGridSearch(FineTuningClassifier(random_state=0), {"learning_rate": [1e30]},
                           error_score="raise").fit(data.train, data.validation)


@pytest.mark.parametrize(
    "estimator, grid, error, match",
    [
        (None, {"alpha": [1]}, ValueError, "Invalid parameter 'alpha'"),
        (None, [{"learning_rate": [0.1]}, {"nope": [1]}], ValueError, "Invalid parameter 'nope'"),
        (None, [], ValueError, "empty list"),
        (None, {"learning_rate": []}, ValueError, "no value for 'learning_rate'"),
        (None, {"learning_rate": 0.1}, TypeError, "lists or arrays"),
        (None, {"learning_rate": [0.1, -1.0]}, ValueError, "'learning_rate' parameter of"),
        (None, "learning_rate", TypeError, "dict or a list of dicts"),
        (LogisticRegression(), {"C": [1.0]}, TypeError, "has no partial_fit"),
        (SGDClassifier(), {"alpha": [1e-4]}, TypeError, "skcl continual-learning classifier"),
        (make_pipeline(FunctionTransformer(), AQCClassifier()), {"aqcclassifier__alpha": [1]},
         TypeError, "Pipeline has none"),
        (FineTuningClassifier, {}, TypeError, "not the class"),
    ],
)
def test_bad_grids_fail_before_training(data, estimator, grid, error, match):
    calls.clear()
    estimator = RecordingClassifier(**IRIS) if estimator is None else estimator
    with pytest.raises(error, match=match):
        SequenceGridSearch(estimator, grid).fit(data.train, data.validation)
    assert calls == []


@pytest.mark.parametrize(
    "train, validation, kwargs, error, match",
    [
        ([], [], {}, ValueError, "train_tasks is empty"),
        ("train", "validation", {}, TypeError, "list of \\(X, y\\) tasks"),
        (None, "short", {}, ValueError, "validation_tasks has 2 tasks but train_tasks has 3"),
        (None, "ragged", {}, ValueError, "samples in X but"),
        (None, None, {"classes": [0, 1]}, ValueError, "labels not in classes: \\[2\\]"),
        (None, None, {"scoring": "average_forgetting"}, ValueError, "neg_average_forgetting"),
        (None, None, {"scoring": 3}, TypeError, "scoring must be"),
        (None, None, {"refit": "yes"}, ValueError, "refit must be"),
        (None, None, {"error_score": "ignore"}, ValueError, "error_score must be"),
    ],
)
def test_bad_sequences_and_options_fail_before_training(data, train, validation, kwargs, error,
                                                        match):
    calls.clear()
    train = data.train if train is None else train
    if validation == "short":
        validation = data.validation[:2]
    elif validation == "ragged":
        validation = [data.validation[0], (data.validation[1][0], data.validation[1][1][:-1]),
                      data.validation[2]]
    elif validation is None:
        validation = data.validation
    fit_kwargs = {"classes": kwargs.pop("classes")} if "classes" in kwargs else {}
    search = SequenceGridSearch(RecordingClassifier(**IRIS), {"learning_rate": [0.1]}, **kwargs)
    with pytest.raises(error, match=match):
        search.fit(train, validation, **fit_kwargs)
    assert calls == []
    assert not hasattr(search, "cv_results_")


def test_learn_task_sequence_checks_its_inputs(data):
    with pytest.raises(TypeError, match="has no partial_fit"):
        learn_task_sequence(LogisticRegression(), data.train)
    with pytest.raises(ValueError, match="eval_tasks has 1 tasks"):
        learn_task_sequence(FineTuningClassifier(), data.train, data.test[:1])


def test_prediction_needs_a_refit_search(data):
    search = SequenceGridSearch(FineTuningClassifier(**IRIS), {}, refit=False)
    with pytest.raises(AttributeError):
        search.predict(data.test[0][0])
    search.fit(data.train, data.validation)
    assert search.best_score_ == pytest.approx(1 / 3)
    with pytest.raises(AttributeError):
        search.predict(data.test[0][0])


FAST = dict(learning_rate=0.1, batch_size=16, n_epochs=5, random_state=0)
GRIDSEARCH_KEYS = ["params", "split0_test_score", "mean_test_score", "std_test_score",
                   "rank_test_score", "mean_fit_time", "std_fit_time", "mean_score_time",
                   "std_score_time"]


def test_cv_results_have_gridsearchcv_keys_and_load_into_pandas(data):
    pd = pytest.importorskip("pandas")
    from sklearn.metrics import log_loss

    from skcl.metrics import expected_calibration_error, task_scores

    grid = [{"learning_rate": [0.1, 0.05]}, {"n_epochs": [3]}]
    search = SequenceGridSearch(
        FineTuningClassifier(**FAST), grid, task_scoring=[log_loss, expected_calibration_error]
    ).fit(data.train, data.validation, classes=data.classes)
    results = pd.DataFrame(search.cv_results_)
    assert len(results) == 3
    for key in GRIDSEARCH_KEYS + ["param_learning_rate", "param_n_epochs",
                                  "task0_validation_accuracy", "validation_log_loss",
                                  "task2_validation_expected_calibration_error"]:
        assert key in results.columns, key
    assert "validation_score" not in results.columns  # the old names are gone
    # sklearn's masked parameter columns: the third candidate sets no learning_rate.
    assert search.cv_results_["param_learning_rate"].mask.tolist() == [False, False, True]
    assert search.cv_results_["param_n_epochs"].mask.tolist() == [True, True, False]
    # One validation sequence, one split: mean is the score, std 0.
    np.testing.assert_array_equal(results["split0_test_score"], results["mean_test_score"])
    np.testing.assert_array_equal(results["std_test_score"], 0.0)
    assert (results["mean_fit_time"] > 0).all() and (results["std_fit_time"] == 0).all()
    # The extra scores are those of the candidate after the last task.
    best = clone(FineTuningClassifier(**FAST)).set_params(**search.best_params_)
    for X, y in data.train:
        best.partial_fit(X, y, classes=data.classes)
    row = results.iloc[search.best_index_]
    assert row["validation_log_loss"] == pytest.approx(
        np.mean(task_scores(best, data.validation, log_loss)))
    assert row["task1_validation_expected_calibration_error"] == pytest.approx(
        task_scores(best, data.validation, expected_calibration_error)[1])


def test_ranks_are_scipy_rankdata_min_with_nan_last():
    from scipy.stats import rankdata

    from skcl.model_selection._results import _rank

    scores = np.array([0.5, np.nan, 0.9, 0.5, 0.9])
    assert _rank(scores).tolist() == [3, 5, 1, 3, 1]
    assert _rank(scores).tolist() == rankdata(-np.nan_to_num(scores, nan=-1), "min").tolist()
    assert _rank(np.array([np.nan, np.nan])).tolist() == [1, 1]


def test_randomized_search_draws_like_parameter_sampler(data):
    from scipy.stats import loguniform
    from sklearn.model_selection import ParameterSampler

    distributions = {"alpha": loguniform(1, 1e4), "learning_rate": [0.1, 0.05]}
    search = SequenceRandomizedSearch(
        AQCClassifier(**FAST), distributions, n_iter=2, random_state=3, refit=False
    ).fit(data.train, data.validation, classes=data.classes)
    expected = list(ParameterSampler(distributions, 2, random_state=3))
    assert search.cv_results_["params"] == expected
    assert search.cv_results_["rank_test_score"].min() == 1
    # Same draws, same results: deterministic.
    again = SequenceRandomizedSearch(
        AQCClassifier(**FAST), distributions, n_iter=2, random_state=3, refit=False
    ).fit(data.train, data.validation, classes=data.classes)
    np.testing.assert_array_equal(again.cv_results_["mean_test_score"],
                                  search.cv_results_["mean_test_score"])


@pytest.mark.parametrize(
    "distributions, kwargs, error, match",
    [
        ({"nope": [1]}, {}, ValueError, "Invalid parameter 'nope' in param_distributions"),
        ({"learning_rate": []}, {}, ValueError, "no value for 'learning_rate'"),
        ([], {}, ValueError, "empty list"),
        ({"learning_rate": 0.1}, {}, TypeError, "rvs method"),
        ({"learning_rate": [0.1]}, {"n_iter": 0}, ValueError, "n_iter must be a positive"),
        ({"learning_rate": [-1.0]}, {"n_iter": 1}, ValueError, "'learning_rate' parameter of"),
    ],
)
def test_randomized_search_checks_before_training(data, distributions, kwargs, error, match):
    calls.clear()
    search = SequenceRandomizedSearch(RecordingClassifier(**IRIS), distributions, **kwargs)
    with pytest.raises(error, match=match):
        search.fit(data.train, data.validation)
    assert calls == []


@pytest.mark.parametrize("search_class", [SequenceGridSearch, SequenceRandomizedSearch])
def test_a_validation_task_with_other_features_fails_before_any_training(data, search_class):
    import time

    calls.clear()
    validation = [data.validation[0], (data.validation[1][0][:, :3], data.validation[1][1]),
                  data.validation[2]]
    kwargs = {"n_iter": 2} if search_class is SequenceRandomizedSearch else {}
    search = search_class(RecordingClassifier(**IRIS), {"learning_rate": [0.1, 0.05]}, **kwargs)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"validation_tasks\[1\] has 3 features but "
                                         r"train_tasks\[0\] has 4"):
        search.fit(data.train, validation)
    assert time.perf_counter() - start < 0.5
    assert calls == []
    # Inside the training sequence too.
    train = [data.train[0], (data.train[1][0][:, :2], data.train[1][1]), data.train[2]]
    with pytest.raises(ValueError, match=r"train_tasks\[1\] has 2 features"):
        search.fit(train, data.validation)
    assert calls == [] and not hasattr(search, "cv_results_")


def test_search_progress_goes_to_the_skcl_logger(data, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="skcl"):
        SequenceGridSearch(FineTuningClassifier(**FAST), {"learning_rate": [0.1, 0.05]},
                           verbose=1).fit(data.train, data.validation)
    lines = [r.getMessage() for r in caplog.records if r.name == "skcl.model_selection"]
    assert len(lines) == 2
    assert lines[1].startswith("[SequenceGridSearch] candidate 2/2 {'learning_rate': 0.05}: "
                               "final_average_accuracy ")


def test_learn_task_sequence_records_any_score(data):
    from sklearn.metrics import log_loss

    from skcl.metrics import task_scores

    matrices = learn_task_sequence(FineTuningClassifier(**FAST), data.train, data.validation,
                                   classes=data.classes, scoring=["accuracy", log_loss])
    clf = FineTuningClassifier(**FAST)
    for j, (X, y) in enumerate(data.train):
        clf.partial_fit(X, y, classes=data.classes)
        np.testing.assert_allclose(matrices["log_loss"][:, j],
                                   task_scores(clf, data.validation, log_loss))
    np.testing.assert_array_equal(matrices["accuracy"], np.eye(3))  # fine-tuning forgets
    with pytest.raises(ValueError, match="Unknown scoring 'bogus'"):
        learn_task_sequence(FineTuningClassifier(**FAST), data.train, scoring="bogus")
