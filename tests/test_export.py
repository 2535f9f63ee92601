"""to_sklearn: the scikit-learn estimator computes what the skcl model
computes (labels equal, scores to 1e-10), against scikit-learn's own fit
where one exists, in a process without skcl, JAX or torch, and through
ONNX Runtime; what cannot be exported says why."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import skops.io as sio
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_digits, load_iris
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import FeatureUnion
from sklearn.pipeline import Pipeline as SklearnPipeline
from sklearn.preprocessing import StandardScaler

import skcl
from skcl.export import NotExportableError, to_sklearn
from skcl.feature_extraction import RandomFeatures
from skcl.pipeline import make_pipeline

from ._classifiers import cases

SR = dict(n_epochs=3, batch_size=32, learning_rate=0.01, random_state=0)


@pytest.fixture(scope="module")
def digit_tasks(ci_split_digits):
    """CI Split digits' five training tasks; the test rows of all ten digits, their labels."""
    data = ci_split_digits
    X_test = np.concatenate([X for X, _ in data.test])
    return data.train, X_test, np.concatenate([y for _, y in data.test])


def learn(estimator, tasks, classes=tuple(range(10))):
    for X, y in tasks:
        estimator.partial_fit(X, y, classes=list(classes))
    return estimator


def close(a, b, atol=1e-10):
    np.testing.assert_allclose(a, b, rtol=0, atol=atol)


def assert_exports(clf, exported, X, proba=True):
    """Labels equal; decision_function and predict_proba to 1e-10."""
    np.testing.assert_array_equal(exported.predict(X), clf.predict(X))
    close(exported.decision_function(X), clf.decision_function(X))
    if proba:
        close(exported.predict_proba(X), clf.predict_proba(X))


# ------------------------------------------------------ every registry case

@pytest.mark.parametrize("case", cases(), ids=str)
def test_every_classifier_exports_or_says_why_not(case):
    """The registry says which cases export: those predict as the export
    does (labels equal, probabilities to 1e-10, scores up to a constant per
    row); the others are refused, with the reason."""
    X, y = load_iris(return_X_y=True)
    clf = case.make(n_epochs=5, batch_size=32, learning_rate=0.1, n_predict_samples=5,
                    random_state=0)
    learn(clf, [(X[t::3], y[t::3]) for t in range(3)], (0, 1, 2))
    if not case.exportable:
        with pytest.raises(NotExportableError, match="export"):
            to_sklearn(clf)
        return
    exported = to_sklearn(clf)
    np.testing.assert_array_equal(exported.predict(X), clf.predict(X))
    if hasattr(exported, "predict_proba"):
        close(exported.predict_proba(X), clf.predict_proba(X))
    if not hasattr(exported, "decision_function"):  # MLPClassifier has none
        return
    ours, theirs = clf.decision_function(X), exported.decision_function(X)
    close(theirs - theirs[:, :1], ours - ours[:, :1], atol=1e-8 * np.abs(ours).max())


# ------------------------------------------------------------------ Gaussian

def test_gaussian_is_linear_discriminant_analysis(digit_tasks):
    tasks, X_test, y_test = digit_tasks
    clf = learn(skcl.GaussianDiscriminantClassifier(), tasks)
    lda = to_sklearn(clf)
    assert type(lda) is LinearDiscriminantAnalysis
    np.testing.assert_array_equal(lda.predict(X_test), clf.predict(X_test))
    close(lda.predict_proba(X_test), clf.predict_proba(X_test))
    # skcl's decision_function is the log joint, LDA's its linear part: the
    # same up to the −½xᵀΣ⁻¹x every class shares, so the same differences.
    ours, theirs = clf.decision_function(X_test), lda.decision_function(X_test)
    close(theirs - theirs[:, :1], ours - ours[:, :1])
    assert (lda.predict(X_test) == y_test).mean() > 0.9


def test_gaussian_with_a_float_shrinkage_is_scikit_learns_lda_on_all_the_data(digit_tasks):
    # The independent computation: scikit-learn fits every row at once.
    tasks, X_test, _ = digit_tasks
    lda = to_sklearn(learn(skcl.GaussianDiscriminantClassifier(0.2, components="class"), tasks))
    X, y = np.concatenate([X for X, _ in tasks]), np.concatenate([y for _, y in tasks])
    reference = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.2).fit(X, y)
    close(lda.predict_proba(X_test), reference.predict_proba(X_test), atol=1e-8)
    close(lda.priors_, reference.priors_, atol=1e-12)


def test_one_covariance_per_class_is_quadratic_discriminant_analysis(digit_tasks):
    tasks, X_test, y_test = digit_tasks
    clf = learn(skcl.GaussianDiscriminantClassifier(covariance="per_class"), tasks)
    qda = to_sklearn(clf)
    assert type(qda) is QuadraticDiscriminantAnalysis
    np.testing.assert_array_equal(qda.predict(X_test), clf.predict(X_test))
    close(qda.predict_proba(X_test), clf.predict_proba(X_test))
    # skcl's log joint holds −D/2·log 2π, which scikit-learn's QDA leaves
    # out. The scores reach 4e4 far from a class (measured: 2e-10 apart there).
    ours, theirs = clf.decision_function(X_test), qda.decision_function(X_test)
    np.testing.assert_allclose(theirs - theirs[:, :1], ours - ours[:, :1], rtol=1e-10,
                               atol=1e-10)
    assert (qda.predict(X_test) == y_test).mean() > 0.9


def test_two_classes_give_the_log_ratio_itself(digit_tasks):
    tasks, X_test, _ = digit_tasks
    parity = [(X, y % 2) for X, y in tasks]
    clf = learn(skcl.GaussianDiscriminantClassifier(components="class"), parity, (0, 1))
    lda = to_sklearn(clf)
    assert lda.coef_.shape == (1, 64)
    assert_exports(clf, lda, X_test)
    clf = learn(skcl.GaussianDiscriminantClassifier(covariance="per_class", components="class"),
                parity, (0, 1))
    assert_exports(clf, to_sklearn(clf), X_test)


# ------------------------------------------------------------- least squares

@pytest.mark.parametrize("probabilities", ["scores", "ranked"])
def test_least_squares_is_a_ridge_classifier(digit_tasks, probabilities):
    tasks, X_test, y_test = digit_tasks
    clf = learn(skcl.LeastSquaresClassifier(probabilities=probabilities), tasks)
    ridge = to_sklearn(clf)
    assert type(ridge) is RidgeClassifier and not hasattr(ridge, "predict_proba")
    assert_exports(clf, ridge, X_test, proba=False)
    # Against scikit-learn's Ridge on the one-hot targets of every row.
    X, y = np.concatenate([X for X, _ in tasks]), np.concatenate([y for _, y in tasks])
    reference = Ridge(alpha=clf.alpha_).fit(X, np.eye(10)[y])
    close(ridge.decision_function(X_test), reference.predict(X_test), atol=1e-8)
    assert (ridge.predict(X_test) == y_test).mean() > 0.85


# ---------------------------------------------------------- softmax regression

@pytest.mark.parametrize("make", [
    lambda: skcl.AQCClassifier(**SR),
    lambda: skcl.EWCClassifier(**SR),
    lambda: skcl.SIClassifier(grow_classes=True, **SR),
], ids=["AQC", "EWC", "SI, grown classes"])
def test_softmax_regression_is_logistic_regression(digit_tasks, make):
    tasks, X_test, _ = digit_tasks
    clf = learn(make(), tasks)
    logistic = to_sklearn(clf)
    assert type(logistic) is LogisticRegression
    assert logistic.coef_.shape == (10, 64)
    assert_exports(clf, logistic, X_test)
    # The probabilities are a softmax of the logits, by hand.
    logits = X_test @ np.asarray(clf.coefs_[0], np.float64)[:, :10] + clf.intercepts_[0][:10]
    softmax = np.exp(logits - logits.max(1, keepdims=True))
    close(logistic.predict_proba(X_test), softmax / softmax.sum(1, keepdims=True))


def test_logistic_regression_of_two_classes(digit_tasks):
    tasks, X_test, _ = digit_tasks
    clf = learn(skcl.EWCClassifier(**SR), [(X, y % 2) for X, y in tasks], (0, 1))
    logistic = to_sklearn(clf)
    assert logistic.coef_.shape == (1, 64)
    assert_exports(clf, logistic, X_test)


# ------------------------------------------------------ networks with hidden layers

MLP_UNITS = dict(hidden_layer_sizes=(16, 8), **SR)


def assert_same_network(clf, exported, X):
    """An MLPClassifier of skcl's units: labels equal, probabilities to 1e-10
    (scikit-learn's own forward pass)."""
    assert type(exported) is MLPClassifier
    assert exported.activation == clf.activation
    assert exported.hidden_layer_sizes == clf.hidden_layer_sizes
    np.testing.assert_array_equal(exported.predict(X), clf.predict(X))
    close(exported.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize("activation", ["relu", "tanh", "logistic", "identity"])
def test_a_network_of_mlpclassifiers_units_is_an_mlpclassifier(digit_tasks, activation):
    tasks, X_test, y_test = digit_tasks
    clf = learn(skcl.EWCClassifier(activation=activation, **MLP_UNITS), tasks)
    exported = to_sklearn(clf)
    assert_same_network(clf, exported, X_test)
    assert exported.score(X_test, y_test) == clf.score(X_test, y_test)
    # Saved with skops, it loads trusting nothing beyond scikit-learn.
    loaded = sio.loads(sio.dumps(exported), trusted=[])
    close(loaded.predict_proba(X_test), clf.predict_proba(X_test))


@pytest.mark.parametrize("make, classes", [
    (lambda: skcl.FineTuningClassifier(activation="relu", **MLP_UNITS), (0, 1)),
    (lambda: skcl.EWCClassifier(activation="relu", grow_classes=True, **MLP_UNITS), (0, 1)),
    (lambda: skcl.SIClassifier(activation="relu", grow_classes=True, **MLP_UNITS), range(10)),
], ids=["two classes, one sigmoid", "two grown classes", "ten grown classes"])
def test_relu_networks_of_every_output_export(digit_tasks, make, classes):
    tasks, X_test, _ = digit_tasks
    classes = tuple(classes)
    tasks = [(X, y % len(classes)) for X, y in tasks]
    clf = make()
    for X, y in tasks:
        clf.partial_fit(X, y, **({} if clf.grow_classes else {"classes": list(classes)}))
    assert_same_network(clf, to_sklearn(clf), X_test)


# ------------------------------------------------------------ random features

def rff_pipeline(classifier, dtype="float64"):
    return make_pipeline(StandardScaler(),
                         RandomFeatures(300, activation="cos", scale=0.5, bias="uniform",
                                        dtype=dtype, random_state=0),
                         classifier)


@pytest.mark.parametrize("classifier", [
    skcl.LeastSquaresClassifier(),
    skcl.GaussianDiscriminantClassifier(components="class"),
], ids=["least squares", "Gaussian"])
def test_random_fourier_features_are_an_rbf_sampler(digit_tasks, classifier):
    tasks, X_test, y_test = digit_tasks
    pipeline = learn(rff_pipeline(classifier), tasks)
    exported = to_sklearn(pipeline)
    assert type(exported) is SklearnPipeline
    assert [type(step).__name__ for step in exported.named_steps.values()] == [
        "StandardScaler", "RBFSampler",
        "RidgeClassifier" if "Least" in type(classifier).__name__
        else "LinearDiscriminantAnalysis"]
    sampler, features = exported[1], pipeline[1]
    np.testing.assert_array_equal(sampler.random_weights_, features.weights_)
    np.testing.assert_array_equal(sampler.random_offset_, features.bias_)
    Z = pipeline[0].transform(X_test)
    close(sampler.transform(Z), np.sqrt(2 / 300) * features.transform(Z), atol=1e-14)
    np.testing.assert_array_equal(exported.predict(X_test), pipeline.predict(X_test))
    ours, theirs = pipeline.decision_function(X_test), exported.decision_function(X_test)
    if hasattr(exported, "predict_proba"):
        close(exported.predict_proba(X_test), pipeline.predict_proba(X_test))
        ours, theirs = ours - ours[:, :1], theirs - theirs[:, :1]
    close(theirs, ours)
    assert (exported.predict(X_test) == y_test).mean() > 0.95  # measured: 0.969 (both)


def test_float32_random_features_export_with_float32_rounding_only(digit_tasks):
    # RandomFeatures rounds its features to float32; the RBFSampler keeps
    # the float64 values it rounds: the same labels, scores to that rounding.
    tasks, X_test, _ = digit_tasks
    pipeline = learn(rff_pipeline(skcl.LeastSquaresClassifier(), dtype="float32"), tasks)
    exported = to_sklearn(pipeline)
    np.testing.assert_array_equal(exported.predict(X_test), pipeline.predict(X_test))
    close(exported.decision_function(X_test), pipeline.decision_function(X_test), atol=1e-5)


def skcl_objects(obj, seen=None):
    """Every skcl object reachable from ``obj``: attributes, containers, object arrays."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type(None))):
        return []
    seen.add(id(obj))
    found = [obj] if type(obj).__module__.startswith("skcl") else []
    if isinstance(obj, np.ndarray):
        children = obj.ravel().tolist() if obj.dtype == object else []
    elif isinstance(obj, dict):
        children = [*obj.keys(), *obj.values()]
    elif isinstance(obj, (list, tuple, set)):
        children = list(obj)
    else:
        children = list(getattr(obj, "__dict__", {}).values())
    return found + [o for child in children for o in skcl_objects(child, seen)]


def frozen_features_pipeline():
    features = RandomFeatures(300, activation="cos", dtype="float64", random_state=0)
    X, _ = load_digits(return_X_y=True)
    return make_pipeline(FrozenEstimator(features.fit(X)), skcl.LeastSquaresClassifier())


def column_features_pipeline():
    columns = ColumnTransformer([
        ("pixels", RandomFeatures(300, activation="cos", dtype="float64", random_state=0),
         list(range(0, 40))),
        ("rest", StandardScaler(), list(range(40, 64))),
    ])
    return make_pipeline(columns, skcl.GaussianDiscriminantClassifier(components="class"))


@pytest.mark.parametrize("make", [
    frozen_features_pipeline,
    column_features_pipeline,
    lambda: FrozenEstimator(skcl.LeastSquaresClassifier()),
], ids=["FrozenEstimator(RandomFeatures)", "ColumnTransformer", "FrozenEstimator(classifier)"])
def test_containers_of_skcl_steps_export_to_scikit_learn_only(digit_tasks, make):
    tasks, X_test, y_test = digit_tasks
    model = make()
    if isinstance(model, FrozenEstimator):
        learn(model.estimator, tasks)
    else:
        learn(model, tasks)
    exported = to_sklearn(model)
    assert skcl_objects(exported) == []
    np.testing.assert_array_equal(exported.predict(X_test), model.predict(X_test))
    if hasattr(model, "predict_proba") and hasattr(exported, "predict_proba"):
        close(exported.predict_proba(X_test), model.predict_proba(X_test))
    else:
        close(exported.decision_function(X_test), model.decision_function(X_test))
    assert (exported.predict(X_test) == y_test).mean() > 0.9


def test_other_containers_of_skcl_objects_are_refused(digit_tasks):
    tasks, _, _ = digit_tasks
    union = FeatureUnion([("features", RandomFeatures(50, activation="cos", random_state=0))])
    model = learn(make_pipeline(union, skcl.LeastSquaresClassifier()), tasks)
    with pytest.raises(NotExportableError, match="FeatureUnion holds an skcl estimator"):
        to_sklearn(model)


def test_random_features_on_offset_inputs_export_while_folding_keeps_the_digits(digit_tasks):
    # RandomFeatures centres (x - mu)/sigma; RBFSampler folds mu into its
    # offsets, which rounds differently in proportion to |mu|/sigma.
    # Offsets of 10⁴ and 10⁸ pixel levels (the pixels are levels / 16).
    tasks, X_test, _ = digit_tasks
    for offset, exports in [(1e4 / 16, True), (1e8 / 16, False)]:
        shifted = [(X + offset, y) for X, y in tasks]
        pipeline = learn(make_pipeline(
            RandomFeatures(300, activation="cos", dtype="float64", random_state=0),
            skcl.LeastSquaresClassifier()), shifted)
        if not exports:  # the features would differ by about 1e-4
            with pytest.raises(NotExportableError, match="Put a StandardScaler before"):
                to_sklearn(pipeline)
            continue
        exported = to_sklearn(pipeline)
        Z = X_test + offset
        # measured: features within 7e-12, scores within 1e-12
        close(exported[0].transform(Z) / np.sqrt(2 / 300), pipeline[0].transform(Z), atol=1e-10)
        np.testing.assert_array_equal(exported.predict(Z), pipeline.predict(Z))
        close(exported.decision_function(Z), pipeline.decision_function(Z), atol=1e-10)


# ---------------------------------------------------------- what cannot export

NOT_EXPORTABLE = {
    "Gaussian, per (task, class)": (
        lambda: skcl.GaussianDiscriminantClassifier(components="task_class"), "mixture"),
    "Gaussian, Student-t": (
        lambda: skcl.GaussianDiscriminantClassifier(predictive="student_t"), "Student-t"),
    "least squares, discriminant": (
        lambda: skcl.LeastSquaresClassifier(probabilities="discriminant"), "discriminant"),
    "fine-tuning, hidden layer": (
        lambda: skcl.FineTuningClassifier(hidden_layer_sizes=(4,), **SR), "swish"),
    "EWC, Laplace predictive": (
        lambda: skcl.EWCClassifier(predictive="probit", **SR), "Laplace"),
    "G-VCL": (lambda: skcl.GVCLClassifier(n_predict_samples=3, **SR), "average"),
    "Gaussian, a class without rows": (
        lambda: skcl.GaussianDiscriminantClassifier(components="class"), "no rows"),
    "random ReLU features": (
        lambda: make_pipeline(RandomFeatures(50, activation="relu", random_state=0),
                              skcl.LeastSquaresClassifier()), "relu"),
    "random features, then a foreign step": (
        lambda: make_pipeline(RandomFeatures(50, activation="cos", random_state=0),
                              RidgeClassifier()), "absorb"),
}


@pytest.mark.parametrize("name", NOT_EXPORTABLE)
def test_what_computes_something_else_is_refused_with_the_reason(digit_tasks, name):
    # Domain-incremental Split digits (even or odd): each label has a
    # component per task under components="task_class".
    tasks, _, _ = digit_tasks
    parity = [(X, y % 2) for X, y in tasks]
    make, reason = NOT_EXPORTABLE[name]
    estimator = make()
    if isinstance(estimator, SklearnPipeline) and isinstance(estimator[-1], RidgeClassifier):
        estimator.fit(np.concatenate([X for X, _ in parity]),
                      np.concatenate([y for _, y in parity]))
    elif "without rows" in name:
        learn(estimator, parity[:1], (0, 1, 2))
    elif hasattr(estimator, "n_epochs"):  # gradient-trained: one task shows it
        learn(estimator, parity[:1], (0, 1))
    else:
        learn(estimator, parity, (0, 1))
    with pytest.raises(NotExportableError, match=reason) as error:
        to_sklearn(estimator)
    assert "export" in str(error.value).lower()  # it says what would


def test_a_gaussian_read_otherwise_than_skcl_scores_it_is_refused(digit_tasks):
    # The export reads the fitted Gaussian's record (gaussians_), and checks
    # its scores at the class means against skcl's own decision_function:
    # were the two to part (a changed record), it refuses.
    tasks, _, _ = digit_tasks
    clf = learn(skcl.GaussianDiscriminantClassifier(), tasks)
    scores = clf.decision_function
    clf.decision_function = lambda X: scores(X) + 1e-6 * X.sum(1, keepdims=True) * np.arange(10)
    with pytest.raises(NotExportableError, match="does not score the class means"):
        to_sklearn(clf)


def test_random_features_alone_and_unfitted_estimators_are_refused(digit_tasks):
    tasks, _, _ = digit_tasks
    features = RandomFeatures(50, activation="cos", random_state=0).fit(tasks[0][0])
    with pytest.raises(NotExportableError, match="Pipeline"):
        to_sklearn(features)
    with pytest.raises(NotFittedError):
        to_sklearn(skcl.LeastSquaresClassifier())


# ------------------------------------------- in a process without skcl, JAX, torch

BLOCKED_CHILD = textwrap.dedent("""
    import sys

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("skcl", "jax", "jaxlib", "optax", "torch"):
                raise ImportError(f"{name} is blocked in this process")

    sys.meta_path.insert(0, Blocker())
    for name in ("skcl", "jax", "torch"):
        try:
            __import__(name)
        except ImportError:
            pass
        else:
            raise SystemExit(f"{name} imported")

    import pickle
    import numpy as np
    import skops.io

    X = np.load("X.npy")
    with open("models.pkl", "rb") as file:
        pickled = pickle.load(file)
    saved = [skops.io.load(f"model{i}.skops", trusted=[]) for i in range(len(pickled))]
    out = {}
    for i, (a, b) in enumerate(zip(pickled, saved)):
        out[f"labels{i}"] = a.predict(X)
        out[f"labels_skops{i}"] = b.predict(X)
        out[f"scores{i}"] = a.decision_function(X)
    np.savez("out.npz", **out)
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("skcl", "jax", "torch")))
""")


def test_the_exported_models_predict_where_skcl_jax_and_torch_cannot_be_imported(
        digit_tasks, tmp_path):
    tasks, X_test, _ = digit_tasks
    models = [learn(skcl.GaussianDiscriminantClassifier(), tasks),
              learn(skcl.LeastSquaresClassifier(), tasks),
              learn(skcl.AQCClassifier(**SR), tasks),
              learn(rff_pipeline(skcl.LeastSquaresClassifier()), tasks)]
    exported = [to_sklearn(model) for model in models]
    np.save(tmp_path / "X.npy", X_test)
    with open(tmp_path / "models.pkl", "wb") as file:
        pickle.dump(exported, file)
    for i, model in enumerate(exported):
        sio.dump(model, tmp_path / f"model{i}.skops")
        assert sio.get_untrusted_types(file=tmp_path / f"model{i}.skops") == []
    result = subprocess.run([sys.executable, "-c", BLOCKED_CHILD], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    out = np.load(tmp_path / "out.npz")
    for i, (model, sklearn_model) in enumerate(zip(models, exported)):
        np.testing.assert_array_equal(out[f"labels{i}"], model.predict(X_test))
        np.testing.assert_array_equal(out[f"labels_skops{i}"], model.predict(X_test))
        np.testing.assert_array_equal(out[f"scores{i}"], sklearn_model.decision_function(X_test))


# ---------------------------------------------------------------------- ONNX

@pytest.mark.parametrize("make", [
    skcl.GaussianDiscriminantClassifier,
    lambda: skcl.GaussianDiscriminantClassifier(covariance="per_class"),
    skcl.LeastSquaresClassifier,
    lambda: skcl.AQCClassifier(**SR),
    lambda: skcl.EWCClassifier(**SR),
    lambda: skcl.FineTuningClassifier(hidden_layer_sizes=(16,), activation="relu", **SR),
], ids=["Gaussian", "Gaussian, per class", "least squares", "AQC", "EWC", "fine-tuning, relu"])
def test_onnx_runtime_predicts_as_skcl_does(digit_tasks, make):
    reason = "the onnx extra (pip install 'skcl[onnx]': skl2onnx, onnxruntime) is not installed"
    skl2onnx = pytest.importorskip("skl2onnx", reason=reason)
    onnxruntime = pytest.importorskip("onnxruntime", reason=reason)
    tasks, X_test, _ = digit_tasks
    clf = learn(make(), tasks)
    exported = to_sklearn(clf)
    X32 = X_test.astype(np.float32)
    model = skl2onnx.to_onnx(exported, X32[:1], options={"zipmap": False})
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    labels, scores = session.run(None, {session.get_inputs()[0].name: X32})
    # (skl2onnx's QDA gives its labels as one row)
    np.testing.assert_array_equal(labels.ravel(), clf.predict(X_test))
    # float32 inference: RidgeClassifier's output is its scores, the others'
    # their probabilities (measured: within 8e-7).
    expected = (clf.decision_function(X_test) if isinstance(exported, RidgeClassifier)
                else clf.predict_proba(X_test))
    close(scores, expected, atol=1e-5)


@pytest.mark.parametrize("make", [
    skcl.GaussianDiscriminantClassifier,
    lambda: skcl.GaussianDiscriminantClassifier(covariance="per_class"),
    lambda: skcl.AQCClassifier(**SR),
], ids=["Gaussian", "Gaussian, per class", "AQC"])
def test_onnx_runtime_gives_skcls_probabilities_with_two_classes(make):
    # skl2onnx converts a binary LinearDiscriminantAnalysis to the sigmoid
    # of twice its log ratio (probabilities off by 0.14 here): the shared
    # Gaussian of two classes exports as the LogisticRegression of the
    # same coefficients, which it converts as scikit-learn computes it.
    skl2onnx = pytest.importorskip("skl2onnx")
    onnxruntime = pytest.importorskip("onnxruntime")
    X, y = load_digits(return_X_y=True)
    rows = np.flatnonzero(np.isin(y, [3, 8]))
    train, test = rows[::2], rows[1::2]
    clf = make().partial_fit(X[train], y[train], classes=[3, 8])
    exported = to_sklearn(clf)
    assert_exports(clf, exported, X[test])
    X32 = X[test].astype(np.float32)
    model = skl2onnx.to_onnx(exported, X32[:1], options={"zipmap": False})
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    labels, proba = session.run(None, {session.get_inputs()[0].name: X32})
    np.testing.assert_array_equal(labels.ravel(), clf.predict(X[test]))
    close(proba, clf.predict_proba(X[test]), atol=1e-5)  # measured: within 3e-7
