"""progress_bar=True: tqdm bars of long work (issue 13), on real small inputs.

The bars are tqdm's own (the ``progress`` extra, in the ``test`` extra),
recorded by a subclass that keeps every bar made, so that their totals
and counts can be read after the work; they count the work and change
none of its results.
"""

import sys

import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skcl import FineTuningClassifier, SIClassifier
from skcl.feature_extraction import BackboneFeatureExtractor, PretrainedFeatureExtractor
from skcl.model_selection import SequenceGridSearch, SequenceRandomizedSearch


@pytest.fixture
def bars(monkeypatch):
    """Every tqdm.auto bar made during the test, still real tqdm bars."""
    tqdm_auto = pytest.importorskip("tqdm.auto")
    made = []

    class Recorded(tqdm_auto.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(tqdm_auto, "tqdm", Recorded)
    return made


def image_stats(images):
    """A parameter-free JAX backbone: four statistics of each image."""
    flat = images.reshape(len(images), -1)
    return jnp.stack([flat.mean(1), flat.std(1), flat.max(1), flat.min(1)], axis=1)


def fitted_state(estimator):
    return {k: v for k, v in vars(estimator).items() if k.endswith("_") or k == "_n_features_out"}


def assert_one_finished_bar(bars, capsys, *, total, unit):
    (bar,) = bars
    assert (bar.total, bar.n, bar.unit) == (total, total, unit)
    assert bar.disable  # closed, even though leave=False cleared it
    err = capsys.readouterr().err
    assert f"/{total}" in err and f"{unit}/s" in err, err
    bars.clear()


# ----------------------------------------------------------------------------
# PretrainedFeatureExtractor: epochs of pre-training, batches of transform.


def test_pretraining_bar_counts_epochs_and_changes_no_weight(digits, bars, capsys):
    X, y = digits
    settings = dict(image_shape=(8, 8), n_epochs=3, batch_size=32, random_state=0)
    plain = PretrainedFeatureExtractor(**settings).fit(X[:200], y[:200])
    assert not bars and "epoch" not in capsys.readouterr().err
    shown = PretrainedFeatureExtractor(**settings, progress_bar=True).fit(X[:200], y[:200])
    assert_one_finished_bar(bars, capsys, total=3, unit="epoch")
    np.testing.assert_array_equal(shown.theta_, plain.theta_)
    np.testing.assert_array_equal(shown.loss_curve_, plain.loss_curve_)
    np.testing.assert_array_equal(shown.classes_, plain.classes_)


def test_transform_bar_counts_batches_and_changes_no_feature(digits, bars, capsys):
    X, y = digits
    extractor = PretrainedFeatureExtractor(
        image_shape=(8, 8), n_epochs=1, transform_batch_size=64, random_state=0
    ).fit(X[:100], y[:100])
    plain = extractor.transform(X[:300])
    assert not bars
    shown = extractor.set_params(progress_bar=True).transform(X[:300])  # 4 batches of 64, then 44
    assert_one_finished_bar(bars, capsys, total=5, unit="batch")
    np.testing.assert_array_equal(shown, plain)
    # A failing batch still closes the bar.
    bad = X[:300].copy()
    bad[150, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        extractor.transform(bad)
    (bar,) = bars
    assert (bar.n, bar.total) == (2, 5) and bar.disable


# ----------------------------------------------------------------------------
# BackboneFeatureExtractor: batches of transform, none from the cache.


def test_backbone_bar_counts_batches_and_not_cache_hits(digits, bars, capsys, tmp_path):
    X, _ = digits
    extractor = BackboneFeatureExtractor(image_stats, image_shape=(8, 8), batch_size=64).fit(X)
    plain = extractor.transform(X[:300])
    assert not bars
    shown = extractor.set_params(progress_bar=True).transform(X[:300])
    assert_one_finished_bar(bars, capsys, total=5, unit="batch")
    np.testing.assert_array_equal(shown, plain)

    extractor.set_params(memory=str(tmp_path))
    np.testing.assert_array_equal(extractor.transform(X[:300]), plain)  # extracted
    assert_one_finished_bar(bars, capsys, total=5, unit="batch")
    np.testing.assert_array_equal(extractor.transform(X[:300]), plain)  # from the cache
    assert not bars


# ----------------------------------------------------------------------------
# Gradient-trained classifiers: each epoch as it ends (verbose=2, or a DEBUG
# listener such as skcl reproduce's heartbeat for tasks of many minibatches).


def _epoch_lines(caplog):
    return [r for r in caplog.records if r.name == "skcl.estimators" and hasattr(r, "skcl_epoch")]


# CI Split Iris's tasks hold one species each: the advice is not this test's point.
@pytest.mark.filterwarnings("ignore::skcl.exceptions.SingleClassTaskWarning")
@pytest.mark.parametrize("cls", [FineTuningClassifier, SIClassifier], ids=lambda c: c.__name__)
def test_each_epoch_is_reported_as_it_ends_and_changes_no_result(iris, caplog, cls):
    settings = dict(n_epochs=10, batch_size=16, learning_rate=0.1, random_state=0)
    plain, shown = cls(**settings), cls(**settings, verbose=2)
    seen = []
    for (X, y), task in zip(iris.train[:2], (1, 2)):
        plain.partial_fit(X, y, classes=iris.classes)
        caplog.clear()
        with caplog.at_level("INFO", logger="skcl"):
            shown.partial_fit(X, y, classes=iris.classes)
        lines = _epoch_lines(caplog)
        assert [r.skcl_epoch[:2] for r in lines] == [(e, 10) for e in range(1, 11)]
        for record, loss in zip(lines, shown.loss_curve_):
            message = record.getMessage()
            assert message.startswith(f"[{cls.__name__}] task {task}, epoch "), message
            # The loss printed with its meaning: per example, and summed over the task.
            assert f"loss {loss / len(y):.4g} per example ({loss:.6g} summed over {len(y)} " \
                   "examples, the penalty included)" in message, message
            assert " s an epoch, about " in message and message.endswith(" s left")
        assert lines[-1].getMessage().endswith("about 0 s left")
        seen.append(shown.theta_)
        # The epochs ran one at a time, the whole loop's program: the same bits.
        np.testing.assert_array_equal(shown.theta_, plain.theta_)
        np.testing.assert_array_equal(shown.loss_curve_, plain.loss_curve_)
    np.testing.assert_array_equal(shown.predict_proba(iris.test[0][0]),
                                  plain.predict_proba(iris.test[0][0]))


def test_a_debug_listener_gets_the_epochs_of_long_tasks_only(digits, iris, caplog):
    X, y = digits
    with caplog.at_level("DEBUG", logger="skcl"):
        FineTuningClassifier(n_epochs=3, batch_size=16, random_state=0).fit(X[:600], y[:600])
    lines = _epoch_lines(caplog)  # 38 minibatches an epoch: each epoch, at DEBUG
    assert [r.skcl_epoch[:2] for r in lines] == [(1, 3), (2, 3), (3, 3)]
    assert {r.levelname for r in lines} == {"DEBUG"}
    assert "summed over 600 examples" in lines[0].getMessage()
    caplog.clear()
    with caplog.at_level("DEBUG", logger="skcl"):  # 2 minibatches an epoch: the task's end
        FineTuningClassifier(n_epochs=3, batch_size=16, random_state=0).partial_fit(
            *iris.train[0], classes=iris.classes)
    assert not _epoch_lines(caplog)
    caplog.clear()
    FineTuningClassifier(n_epochs=3, batch_size=16, random_state=0).fit(X[:600], y[:600])
    assert not _epoch_lines(caplog)  # nobody listens at DEBUG: no record


# ----------------------------------------------------------------------------
# Searches: one unit is a candidate learning the sequence and being scored.


def _same_search_results(a, b, iris):
    assert a.best_params_ == b.best_params_ and a.best_index_ == b.best_index_
    assert a.cv_results_["params"] == b.cv_results_["params"]
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(a.accuracy_matrices_, b.accuracy_matrices_)
    X = np.concatenate([X for X, _ in iris.test])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize(
    "make",
    [
        lambda clf, **kw: SequenceGridSearch(clf, {"learning_rate": [0.03, 0.1, 0.3]}, **kw),
        lambda clf, **kw: SequenceRandomizedSearch(
            clf, {"learning_rate": [0.01, 0.03, 0.1, 0.3]}, n_iter=3, random_state=0, **kw
        ),
    ],
    ids=["grid", "randomized"],
)
def test_search_bar_counts_candidates_and_changes_no_result(iris, bars, capsys, make):
    clf = FineTuningClassifier(n_epochs=10, batch_size=16, random_state=0)
    plain = make(clf).fit(iris.train, iris.validation, classes=iris.classes)
    assert not bars
    shown = make(clf, progress_bar=True).fit(iris.train, iris.validation, classes=iris.classes)
    assert_one_finished_bar(bars, capsys, total=3, unit="candidate")
    _same_search_results(shown, plain, iris)


# ----------------------------------------------------------------------------
# Without tqdm: a clear ImportError before any work, nothing changed.


@pytest.fixture
def no_tqdm(monkeypatch):
    for name in [m for m in sys.modules if m == "tqdm" or m.startswith("tqdm.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)


MISSING = r"progress_bar=True.*tqdm is not installed: pip install 'skcl\[progress\]'"


def test_without_tqdm_the_extractors_fail_before_any_work(digits, monkeypatch, no_tqdm):
    X, y = digits
    import skcl.feature_extraction._extractor as extractor_module

    pretrained = PretrainedFeatureExtractor(image_shape=(8, 8), n_epochs=1, random_state=0)
    backbone = BackboneFeatureExtractor(image_stats, image_shape=(8, 8))
    pretrained.fit(X[:50], y[:50])
    backbone.fit(X[:50])

    def no_training(*args, **kwargs):
        raise AssertionError("pre-training started")

    monkeypatch.setattr(extractor_module, "minimize_stepwise", no_training)
    for estimator, args in [(pretrained, (X[:60], y[:60])), (backbone, (X[:60],))]:
        before = fitted_state(estimator)
        estimator.set_params(progress_bar=True)
        with pytest.raises(ImportError, match=MISSING):
            estimator.fit(*args)
        with pytest.raises(ImportError, match=MISSING):
            estimator.transform(X[:10])
        after = fitted_state(estimator)
        assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)
        # Off again, the same extractor works without tqdm.
        estimator.set_params(progress_bar=False).transform(X[:10])


def test_without_tqdm_the_search_fails_before_any_candidate(iris, monkeypatch, no_tqdm):
    import skcl.model_selection._dispatch as dispatch_module

    clf = FineTuningClassifier(n_epochs=5, batch_size=16, random_state=0)
    search = SequenceGridSearch(clf, {"learning_rate": [0.1]}).fit(
        iris.train, iris.validation, classes=iris.classes
    )
    before = {k: v for k, v in vars(search).items() if k != "progress_bar"}

    def no_candidate(*args, **kwargs):
        raise AssertionError("a candidate started")

    monkeypatch.setattr(dispatch_module, "_evaluate_candidate", no_candidate)
    search.set_params(progress_bar=True)
    with pytest.raises(ImportError, match=MISSING):
        search.fit(iris.train, iris.validation, classes=iris.classes)
    after = {k: v for k, v in vars(search).items() if k != "progress_bar"}
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)


# ----------------------------------------------------------------------------
# The parameter itself.


@pytest.mark.parametrize(
    "estimator",
    [
        PretrainedFeatureExtractor(image_shape=(8, 8), n_epochs=1),
        BackboneFeatureExtractor(image_stats, image_shape=(8, 8)),
        SequenceGridSearch(FineTuningClassifier(), {"learning_rate": [0.1]}),
        SequenceRandomizedSearch(FineTuningClassifier(), {"learning_rate": [0.1]}, n_iter=1),
    ],
    ids=lambda e: type(e).__name__,
)
def test_progress_bar_is_a_bool_parameter(estimator, digits, iris):
    assert estimator.get_params()["progress_bar"] is False
    assert clone(estimator.set_params(progress_bar=True)).progress_bar is True
    estimator.set_params(progress_bar="yes")
    if isinstance(estimator, (SequenceGridSearch, SequenceRandomizedSearch)):
        args = (iris.train, iris.validation)
    else:
        args = digits
    with pytest.raises(InvalidParameterError, match="'progress_bar' parameter of .* must be"):
        estimator.fit(*args)
