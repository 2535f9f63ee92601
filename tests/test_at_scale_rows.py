"""The tables' random-feature rows: RanDumb's joint bound and least squares on RandomFeatures."""

import dataclasses

import numpy as np
import pytest
from sklearn.covariance import OAS
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import StandardScaler

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact import openblas
from skcl.datasets import load_ci_split_wine
from skcl.exceptions import CrashingBLASError
from skcl.feature_extraction import RandomFeatures
from skcl.reproduce import SEQUENCES, columns_for, methods_for, run_column, select_methods
from skcl.reproduce._at_scale import (
    RandomFeaturesGaussian,
    RandomFeaturesLeastSquares,
    RanDumbJoint,
)


def test_randumb_joint_is_sklearns_model_fit_on_everything_seen():
    data = load_ci_split_wine()
    model = RanDumbJoint(300, random_state=0)
    X_test = np.vstack([X for X, _ in data.test])
    seen_X, seen_y = [], []
    for X, y in data.train:
        model.partial_fit(X, y, classes=data.classes)
        seen_X.append(X)
        seen_y.append(y)
        if len(np.unique(np.concatenate(seen_y))) < 2:
            continue
        joint = sk_make_pipeline(
            StandardScaler(), RBFSampler(gamma="scale", n_components=300, random_state=0),
            LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS()),
        ).fit(np.vstack(seen_X), np.concatenate(seen_y))
        np.testing.assert_array_equal(model.predict(X_test), joint.predict(X_test))
        # Probabilities for every declared class, the unseen ones at 0.
        proba = model.predict_proba(X_test)
        seen = np.isin(data.classes, joint.classes_)
        np.testing.assert_allclose(proba[:, seen], joint.predict_proba(X_test))
        assert not proba[:, ~seen].any()
    assert model.score(X_test, np.concatenate([y for _, y in data.test])) > 0.9


def test_random_features_least_squares_is_the_pipeline_with_a_frozen_scaler():
    data = load_ci_split_wine()
    model = RandomFeaturesLeastSquares(300, random_state=0, backend="numpy")
    scaler = StandardScaler().fit(data.train[0][0])
    features = RandomFeatures(300, backend="numpy", random_state=0).fit(
        scaler.transform(data.train[0][0]))  # as the pipeline fits it: on the scaled rows
    head = LeastSquaresClassifier(random_state=0, backend="numpy")
    for X, y in data.train:
        model.partial_fit(X, y, classes=data.classes)
        head.partial_fit(features.transform(scaler.transform(X)), y, classes=data.classes)
    X_test = np.vstack([X for X, _ in data.test])
    np.testing.assert_allclose(model.decision_function(X_test),
                               head.decision_function(features.transform(
                                   scaler.transform(X_test))), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.predict_proba(X_test),
                               head.predict_proba(features.transform(scaler.transform(X_test))),
                               rtol=1e-10, atol=1e-12)


def test_the_rows_are_registered_and_small_on_the_classical_sequences():
    rf, randumb = select_methods(["rf-least-squares", "randumb"])
    assert rf.origin == "skcl" and randumb.origin == "scikit-learn"
    assert rf.resolve() is RandomFeaturesLeastSquares and randumb.resolve() is RanDumbJoint
    assert rf.resolve()().n_components == 2000  # the default size elsewhere
    for key in ("ci-split-iris", "ci-split-wine", "ci-split-2d-iris"):
        assert SEQUENCES[key].method_settings[rf.name] == {"n_components": 500}


def test_every_method_of_the_tables_gives_probabilities():
    # The runner scores every row's log loss and ECE: a row without
    # predict_proba would stop `skcl reproduce` after the rows before it.
    for method in select_methods():
        estimator = method.resolve()(**method.params)
        assert hasattr(estimator, "predict_proba"), method.name


def test_random_features_gaussian_without_a_scaler_is_the_plain_pipeline():
    data = load_ci_split_wine()
    model = RandomFeaturesGaussian(300, standardize=False, random_state=0, backend="numpy")
    features = RandomFeatures(300, backend="numpy", random_state=0).fit(data.train[0][0])
    head = GaussianDiscriminantClassifier(random_state=0, backend="numpy")
    for X, y in data.train:
        model.partial_fit(X, y, classes=data.classes)
        head.partial_fit(features.transform(X), y, classes=data.classes)
    X_test = np.vstack([X for X, _ in data.test])
    np.testing.assert_allclose(model.predict_proba(X_test),
                               head.predict_proba(features.transform(X_test)),
                               rtol=1e-10, atol=1e-12)
    assert len(model.pipeline_.steps) == 2  # no StandardScaler


def test_randumb_without_a_scaler_is_randumbs_code_path():
    data = load_ci_split_wine()
    model = RanDumbJoint(300, standardize=False, random_state=0)
    for X, y in data.train:
        model.partial_fit(X, y, classes=data.classes)
    joint = sk_make_pipeline(
        RBFSampler(gamma="scale", n_components=300, random_state=0),
        LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS()),
    ).fit(np.vstack([X for X, _ in data.train]), np.concatenate([y for _, y in data.train]))
    X_test = np.vstack([X for X, _ in data.test])
    np.testing.assert_allclose(model.predict_proba(X_test), joint.predict_proba(X_test))


def test_pixel_columns_run_the_exact_family_beside_randumb_by_default():
    rows = {m.name for m in methods_for("ci-split-mnist-pixels")}
    assert rows == {"Exact Gaussian", "Exact least squares", "RF least squares", "RF Gaussian",
                    "RanDumb", "GaussianNB", "SGD log loss"}
    # Elsewhere the default rows are as before: RF Gaussian only where named.
    assert "RF Gaussian" not in {m.name for m in methods_for("ci-split-iris")}
    assert [m.name for m in methods_for("ci-split-iris", select_methods(["aqc"]))] == ["AQC"]
    assert columns_for("mnist-pixels") == [("ci-split-mnist-pixels", "sr"),
                                           ("di-split-mnist-pixels", "sr")]
    for key in ("ci-split-mnist-pixels", "di-split-mnist-pixels"):
        settings = SEQUENCES[key].method_settings
        assert all(settings[name] == {"standardize": False}
                   for name in ("RF least squares", "RF Gaussian", "RanDumb"))


@pytest.mark.slow
def test_pixel_column_on_real_mnist(shared_data_dir, monkeypatch):
    """The CI pixel column end to end on 300 real images per task, M = 300:
    every row learns the pixels / 255, the exact family at its defaults
    beside RanDumb's code path at the same M."""
    seq = SEQUENCES["ci-split-mnist-pixels"]
    data = seq.loader(shared_data_dir)
    X, y = data.train[0]
    assert X.shape[1] == 784 and X.dtype == np.float32 and 0 <= X.min() < X.max() <= 1

    def small(root=None, *, download=False):
        full = seq.loader(root, download=download)
        for split in ("train", "validation", "test"):
            full[split] = [(X[:300], y[:300]) for X, y in full[split]]
        return full

    sized = {name: {**value, "n_components": 300} for name, value in seq.method_settings.items()}
    monkeypatch.setitem(SEQUENCES, "ci-split-mnist-pixels",
                        dataclasses.replace(seq, loader=small, method_settings=sized))
    # The default rows are checked above; four of them here keep the test short.
    methods = select_methods(["exact-gaussian", "rf-gaussian", "randumb", "sgd-log-loss"])
    rows, models = run_column("ci-split-mnist-pixels", "sr", methods, root=shared_data_dir)
    test = {row["method"]: row["test"] for row in rows}
    assert set(test) == {m.name for m in methods}
    assert models["RanDumb"].n_components == models["RF Gaussian"].n_components == 300
    # Class-incremental over ten digits from 1,500 images: SGD forgets
    # (about 20 %), these keep every task (78–82 % on this machine).
    for name in ("Exact Gaussian", "RF Gaussian", "RanDumb"):
        assert test[name] > 70, (name, test[name])
    assert test["SGD log loss"] < 40


def _crashing_openblas(monkeypatch):
    """The column limit shrunk to 200 and the loaded BLAS reported as a
    crashing OpenBLAS on two threads; threadpoolctl's description of it."""
    monkeypatch.setattr(openblas, "DIRECT_MAX_COLUMNS", 200)
    library = {"internal_api": "openblas", "version": "0.3.31.188.0", "num_threads": 2,
               "filepath": "/site-packages/numpy.libs/libscipy_openblas64_-32a4b2a6.so",
               "user_api": "blas"}
    monkeypatch.setattr("threadpoolctl.threadpool_info", lambda: [library])
    return library


def test_randumb_refuses_up_front_where_the_loaded_openblas_crashes(monkeypatch):
    # RanDumb's model runs scikit-learn's M-column products and Choleskys,
    # which OpenBLAS's threaded syrk (0.3.29 to 0.3.34) segfaults on above
    # DIRECT_MAX_COLUMNS (benchmarks/timing/bench_openblas_crash.py). The limit is
    # shrunk here, the library reported as the crashing one and then as sound.
    data = load_ci_split_wine()
    (X0, y0), (X1, y1) = data.train[:2]
    model = RanDumbJoint(300, random_state=0).partial_fit(X0, y0, classes=data.classes)
    before = model.predict(X1)
    library = _crashing_openblas(monkeypatch)
    with pytest.raises(RuntimeError, match=r"OpenBLAS 0\.3\.31\.188\.0 .*"
                       r"OPENBLAS_NUM_THREADS=1") as refused:
        model.partial_fit(X1, y1)
    assert "RanDumbJoint(n_components=300)" in str(refused.value)
    assert "above 200 columns" in str(refused.value)
    np.testing.assert_array_equal(model.predict(X1), before)  # nothing learned
    assert len(model._y) == len(y0)
    for sound in ({**library, "num_threads": 1}, {**library, "internal_api": "mkl"}):
        monkeypatch.setattr("threadpoolctl.threadpool_info", lambda sound=sound: [sound])
        RanDumbJoint(300, random_state=0).fit(X0, y0)  # one thread, or another BLAS: runs


def test_randumb_refits_once_per_prediction_after_new_rows(monkeypatch):
    # The refit on everything seen waits for a prediction: a sequence scored
    # only at its end (a search's validation) fits once, not once a task.
    # Before, every partial_fit refitted (3 fits here where 1 is used).
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA

    fits = []
    original = LDA.fit
    monkeypatch.setattr(LDA, "fit", lambda self, X, y: fits.append(len(y)) or original(self, X, y))
    data = load_ci_split_wine()
    model = RanDumbJoint(100, random_state=0)
    for X, y in data.train:
        model.partial_fit(X, y, classes=data.classes)
    X_test = np.vstack([X for X, _ in data.test])
    first = model.predict_proba(X_test)
    np.testing.assert_array_equal(model.predict_proba(X_test), first)
    model.predict(X_test)
    assert fits == [sum(len(y) for _, y in data.train)]


def test_reproduce_refuses_a_crashing_width_before_loading_any_data(monkeypatch, tmp_path,
                                                                     capsys):
    # `skcl reproduce mnist-pixels --n-components 25000` loaded MNIST and ran
    # the exact family for half an hour before RanDumb's first partial_fit
    # refused, and then as a traceback. Now both the function and the command
    # refuse before any data loads (the limit shrunk to 200 here, the library
    # reported as a crashing OpenBLAS).
    import skcl.__main__ as cli
    from skcl import reproduce as rp
    from skcl.reproduce import _runner

    def no_loading(*args, **kwargs):
        raise AssertionError("data loaded before the refusal")

    monkeypatch.setattr(_runner, "_load_column", no_loading)
    _crashing_openblas(monkeypatch)
    with pytest.raises(CrashingBLASError, match=r"RanDumb \(RanDumbJoint\("
                       r"n_components=300\)\).*OpenBLAS 0\.3\.31\.188\.0"):
        rp.reproduce("mnist-pixels", overrides={"n_components": 300}, root=tmp_path)
    with pytest.raises(RuntimeError, match="OPENBLAS_NUM_THREADS=1"):
        run_column("ci-split-mnist-pixels", "sr", overrides={"n_components": 300})
    status = cli.main(["reproduce", "mnist-pixels", "--n-components", "300", "--quiet",
                       "--data-dir", str(tmp_path), "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "OpenBLAS 0.3.31.188.0" in err and "OPENBLAS_NUM_THREADS=1" in err
    # The hint leaves RanDumb out of the column's methods, in the command's words.
    others = [m for m in methods_for("ci-split-mnist-pixels") if m.name != "RanDumb"]
    assert err.rstrip().endswith(
        "Or leave RanDumb out: --methods " + " ".join(m.key for m in others)), err
    # At the width skcl keeps below the limit, or without RanDumb, nothing is refused.
    with pytest.raises(AssertionError, match="data loaded"):
        run_column("ci-split-mnist-pixels", "sr", others, overrides={"n_components": 300})
    with pytest.raises(AssertionError, match="data loaded"):
        run_column("ci-split-mnist-pixels", "sr", overrides={"n_components": 200})
