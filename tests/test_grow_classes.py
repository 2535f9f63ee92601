"""Classes that are not known in advance (``grow_classes=True``)."""

import copy
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import skcl
from skcl import AQCClassifier, EWCClassifier, SIClassifier
from skcl._gradient.consolidation.variational import _inverse_softplus
from skcl._gradient.growth import grow_network
from skcl._gradient.keys import init_key
from skcl._gradient.networks import output_column
from skcl.model_selection import SequenceGridSearch, learn_task_sequence
from skcl.pipeline import make_pipeline

from ._classifiers import cases
from .conftest import IRIS_SETTINGS
from .test_estimators import learned_state

FAST = dict(IRIS_SETTINGS, n_epochs=20)
# Every gradient-trained public classifier, from the registry.
ALL_NAMES = [case.name for case in cases("default", family="gradient")]
CHEAP = {
    "NCClassifier": dict(consolidator_n_steps=20, consolidator_hidden_layer_sizes=(8,),
                         consolidator_sample_size=8),
    "GVCLClassifier": dict(n_epochs=5, n_train_samples=2, n_predict_samples=5),
    "GMVCLClassifier": dict(n_epochs=5, n_train_samples=2, n_predict_samples=5),
    "GSFSVIClassifier": dict(n_epochs=5, n_train_samples=2, n_predict_samples=5),
}


def make(name, **params):
    return getattr(skcl, name)(**{**FAST, **CHEAP.get(name, {}), "random_state": 0,
                                  "grow_classes": True, **params})


def grown_copy(clf, classes):
    """A deep copy of ``clf`` whose classes grew to ``classes`` (no task learned),
    and the ``Growth`` that the estimator applied (recomputed from its inputs)."""
    other = copy.deepcopy(clf)
    classes = np.asarray(classes)
    other._grow(classes)
    growth = grow_network(clf.network_, clf.likelihood_, clf.theta_, clf.classes_, classes,
                          unseen=clf._unseen_output, prior_precision=float(clf.prior_precision),
                          init_key=init_key(clf._seed))[2]
    return other, growth


@pytest.mark.parametrize("classes", [[0, 1], [0, 1, 2]])
@pytest.mark.parametrize(
    "cls, params",
    [
        (AQCClassifier, dict(alpha=3.0)),
        (AQCClassifier, dict(alpha=3.0, curvature="ggn", structure="kron",
                             hidden_layer_sizes=(4,))),
        (AQCClassifier, dict(alpha=3.0, structure="diag", hidden_layer_sizes=(4,))),
        (EWCClassifier, dict(alpha=30.0)),
        (SIClassifier, dict(alpha=2.0)),
        (skcl.OnlineEWCClassifier, dict(alpha=5.0)),
    ],
)
def test_penalty_old_coordinates_unchanged_new_ones_carry_the_prior(cls, params, classes, iris):
    X, y = iris.train[0]
    y = np.where(y == 0, 1, y)  # the first task's class is 1: class 0 lands before it
    clf = cls(**FAST, random_state=0, grow_classes=True, prior_precision=2.0, **params)
    clf.partial_fit(X, y)
    grown, growth = grown_copy(clf, classes)
    old_method, new_method = clf._make_consolidation(), grown._make_consolidation()
    old_state, state = clf.consolidation_, grown.consolidation_
    new, mapped = growth.new_coordinates, growth.mapped
    # One fresh output column: the new unseen-classes output, centred at the
    # old one's values (its anchor) with the prior's precision.
    assert len(new) == grown.network_.layer_shapes[-1][0] + 1
    old_unseen = clf.network_.unflatten(np.asarray(old_state.center))[-1]
    anchor = np.append(old_unseen[0][:, -1], old_unseen[1][-1])  # u's weights, then bias
    np.testing.assert_array_equal(state.center[new], anchor)
    np.testing.assert_array_equal(growth.anchor[mapped], 0.0)
    np.testing.assert_array_equal(state.prior[new], 2.0)
    np.testing.assert_array_equal(state.prior[mapped], old_state.prior[growth.source[mapped]])
    alpha = params["alpha"]
    rng = np.random.default_rng(0)
    for _ in range(3):
        theta = rng.normal(size=grown.network_.n_params).astype(np.float32)
        for _, columns, _ in growth.splits:  # split columns moving together (see below)
            for column in columns[1:]:
                theta[output_column(grown.network_, column)] = theta[
                    output_column(grown.network_, columns[0])]
        d_new = theta - state.center
        d_old = np.asarray(growth.pull(theta)) - old_state.center
        if len(classes) == 2:  # one new class: a permutation, the penalty is the old one
            prior_block = 0.5 * 2.0 * np.sum((theta[new] - anchor) ** 2, dtype=np.float64)
            np.testing.assert_allclose(
                float(new_method.penalty(state, theta, None)),
                float(old_method.penalty(old_state, growth.pull(theta), None))
                + alpha * prior_block, rtol=1e-5)
        # The curvature seen through the map, dᵀ(Eᵀ C E)d = (E d)ᵀ C (E d):
        # the whole grown curvature where split columns move together (the
        # normaliser's term, tested below, sees only their differences).
        np.testing.assert_allclose(
            float(state.curvature.quadratic(d_new)),
            float(old_state.curvature.quadratic(d_old)), rtol=1e-4, atol=1e-6)
    dense = np.asarray(state.curvature.to_dense())
    np.testing.assert_array_equal(dense[new], 0.0)
    np.testing.assert_array_equal(dense[:, new], 0.0)


@pytest.mark.parametrize("structure", ["full", "kron", "diag"])
def test_split_columns_see_the_old_loss_through_the_normaliser(structure, iris):
    # After task 1 (class 0 only) the outputs are [0, u]; classes 1 and 2
    # split u. The old task's loss as a function of the grown θ is the
    # softmax NLL over [0, 1, 2] (u = log-sum-exp of the split logits): its
    # autodiff Hessian at the grown θ* is what the grown curvature must
    # hold on the split columns, up to f' ≈ f'' (p_u ≪ 1): each split
    # column u's block times 1/2, and no coupling between them (Eᵀ C E
    # alone held a quarter, coupled).
    X, y = iris.train[0]
    clf = make("AQCClassifier", structure=structure).partial_fit(X, y)
    grown, growth = grown_copy(clf, [0, 1, 2])
    network = grown.network_
    ((u, split, shares),) = growth.splits
    assert u == 1 and split.tolist() == [1, 2] and shares.tolist() == [0.5, 0.5]
    first, second = output_column(network, 1), output_column(network, 2)
    rows = np.concatenate([first, second])
    # (Class 0's own block, p₀(1 − p₀) at p₀ ≈ 1, is float32 cancellation
    # in both computations, and growth does not touch it.)
    cols = np.concatenate([output_column(network, 0), rows])

    def old_nll(theta):
        W, b = network.unflatten(theta)[-1]
        z = (X @ W + b)[:, :3]
        return jnp.sum(jax.nn.logsumexp(z, axis=1) - z[:, 0])

    exact = np.asarray(jax.hessian(old_nll)(jnp.asarray(grown.consolidation_.center)))
    held = np.asarray(grown.consolidation_.curvature.to_dense())
    scale = np.abs(exact[np.ix_(rows, rows)]).max()
    if structure == "full":  # the exact Hessian: the split columns' rows
        np.testing.assert_allclose(held[np.ix_(rows, cols)], exact[np.ix_(rows, cols)],
                                   rtol=1e-3, atol=1e-4 * scale)
    elif structure == "diag":
        np.testing.assert_allclose(np.diag(held)[rows], np.diag(exact)[rows],
                                   rtol=1e-3, atol=1e-4 * scale)
    else:  # K-FAC's own u block, halved, and no coupling, as in the exact one
        old_u = output_column(clf.network_, 1)
        old_held = np.asarray(clf.consolidation_.curvature.to_dense())
        np.testing.assert_allclose(held[np.ix_(first, first)],
                                   0.5 * old_held[np.ix_(old_u, old_u)], rtol=1e-5)
        np.testing.assert_allclose(held[np.ix_(second, second)],
                                   0.5 * old_held[np.ix_(old_u, old_u)], rtol=1e-5)
    np.testing.assert_array_equal(held[np.ix_(first, second)], 0.0)
    assert np.abs(exact[np.ix_(first, second)]).max() < 1e-4 * scale


def structure_of(state):
    return {"FullCurvature": "full", "KroneckerCurvature": "kron",
            "DiagonalCurvature": "diag"}[type(state.curvature).__name__]


def test_theta_keeps_old_values_and_the_new_unseen_output_copies_the_old(iris):
    X, y = iris.train[1]
    clf = make("AQCClassifier", hidden_layer_sizes=(4,)).partial_fit(X, y)
    grown, growth = grown_copy(clf, [0, 1])
    m = growth.mapped
    np.testing.assert_array_equal(grown.theta_[m], clf.theta_[growth.source[m]])
    # The new class 0 takes over the unseen-classes output (old column 1);
    # the new unseen output starts as a copy of the old one, its anchor.
    W, b = grown.network_.unflatten(grown.theta_)[-1]
    W_old, b_old = clf.network_.unflatten(clf.theta_)[-1]
    np.testing.assert_array_equal(W[:, 0], W_old[:, 1])
    np.testing.assert_array_equal(W[:, 1], W_old[:, 0])
    np.testing.assert_array_equal(W[:, 2], W_old[:, 1])
    assert b[2] == b_old[1]
    np.testing.assert_array_equal(grown.theta_[growth.new_coordinates],
                                  growth.anchor[growth.new_coordinates])


def test_fresh_columns_without_an_unseen_output_are_a_fresh_init(iris):
    # A softmax learned with grow_classes=False has no unseen output: a
    # column it gains later is what a fresh network puts there, anchored at 0.
    X, y = iris.train[0]
    clf = AQCClassifier(**FAST, random_state=0, hidden_layer_sizes=(4,))
    clf.partial_fit(X, y, classes=[0, 1, 2])
    grown, growth = grown_copy(clf, [0, 1, 2, 3])
    fresh = np.asarray(grown.network_.init(init_key(clf._seed)))
    new = growth.new_coordinates
    np.testing.assert_array_equal(grown.theta_[new], fresh[new])
    np.testing.assert_array_equal(growth.anchor, 0.0)
    np.testing.assert_array_equal(grown.consolidation_.center[new], 0.0)


def test_the_key_streams_are_those_of_the_root_key():
    # Named once in skcl._gradient.keys; the values are those the estimators always used.
    from skcl._gradient import keys as _keys

    root = jax.random.PRNGKey(12345)
    for got, want in [
        (_keys.init_key(12345), jax.random.fold_in(root, 2**31 - 1)),
        (_keys.consolidation_init_key(12345), jax.random.fold_in(root, 2**31 - 2)),
        (_keys.laplace_predictive_key(12345), jax.random.fold_in(root, 2**31 - 3)),
        (_keys.task_key(12345, 3), jax.random.fold_in(root, 3)),
        (_keys.growth_key(12345, 3),
         jax.random.fold_in(jax.random.fold_in(root, 3), 2**31 - 3)),
        (_keys.prediction_key(_keys.task_key(12345, 3)),
         jax.random.fold_in(jax.random.fold_in(root, 3), 7)),
    ]:
        np.testing.assert_array_equal(got, want)


def test_two_new_classes_split_the_unseen_output(iris):
    clf = make("AQCClassifier").partial_fit(*iris.train[0])
    grown, growth = grown_copy(clf, [0, 1, 2])
    W, b = grown.network_.unflatten(grown.theta_)[-1]
    W_old, b_old = clf.network_.unflatten(clf.theta_)[-1]
    np.testing.assert_array_equal(W[:, 1], W_old[:, 1])
    np.testing.assert_array_equal(W[:, 2], W_old[:, 1])
    # log-sum-exp of the two split logits is the old unseen logit, everywhere.
    X = iris.test[0][0]
    z_old = X @ W_old + b_old
    z = X @ W + b
    np.testing.assert_allclose(np.logaddexp(z[:, 1], z[:, 2]), z_old[:, 1], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(growth.pull(grown.theta_)), clf.theta_, rtol=1e-5)


@pytest.mark.parametrize("family", ["GVCLClassifier", "GMVCLClassifier", "GSFSVIClassifier"])
def test_variational_prior_of_new_rows_is_the_prior(family, iris):
    clf = make(family, prior_precision=4.0).partial_fit(*iris.train[0])
    grown, growth = grown_copy(clf, [0, 1])
    fam = grown._make_consolidation().family
    prior, old_prior = grown.consolidation_.prior, clf.consolidation_.prior
    # N(anchor, 1/precision): the new unseen output centred at the old one's means.
    expected = np.asarray(fam.prior(4.0, growth.anchor))
    assert np.any(growth.anchor[growth.new_coordinates] != 0)
    P, K = fam.n_params, fam.n_components
    offset = K if K > 1 else 0
    for k in range(K):
        for part in (0, 1):  # μ then ρ
            start = offset + (part * K + k) * P
            block = prior[start : start + P]
            np.testing.assert_allclose(block[growth.new_coordinates],
                                       expected[start : start + P][growth.new_coordinates])
            old_start = offset + (part * K + k) * clf.network_.n_params
            old_block = old_prior[old_start : old_start + clf.network_.n_params]
            m = growth.mapped
            np.testing.assert_allclose(block[m], old_block[growth.source[m]], rtol=1e-5)
    assert np.isclose(expected[-1], _inverse_softplus(0.5))


def test_nc_refit_keeps_kappa_on_old_coordinates(iris):
    clf = make("NCClassifier", consolidator_n_steps=200).partial_fit(*iris.train[0])
    grown, growth = grown_copy(clf, [0, 1])
    center = grown.theta_
    old = float(clf.consolidation_.kappa(growth.pull(center)))
    new = float(grown.consolidation_.kappa(center))
    new_rows = growth.new_coordinates
    prior = 0.5 * np.sum((center[new_rows] - growth.anchor[new_rows]) ** 2)  # 0: starts there
    assert grown.consolidation_.phi.shape[0] > clf.consolidation_.phi.shape[0]
    assert abs(new - (old + prior)) < 0.25 * (abs(old) + prior + 1.0)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_method_grows_and_pickles_mid_sequence(name, iris):
    """Classes announced one task at a time; pickling between tasks changes nothing."""
    straight, revived = make(name), make(name)
    for i, (X, y) in enumerate(iris.train):
        straight.partial_fit(X, y)
        revived.partial_fit(X, y)
        if i < 2:
            revived = pickle.loads(pickle.dumps(revived))
        assert straight.classes_.tolist() == list(range(i + 1))
    X = np.concatenate([X for X, _ in iris.test])
    assert straight.predict_proba(X).shape == (len(X), 3)
    np.testing.assert_array_equal(straight.predict_proba(X), revived.predict_proba(X))
    np.testing.assert_array_equal(straight.predict(X), revived.predict(X))


def test_longer_classes_and_labels_in_the_middle(iris):
    X0, y0 = iris.train[0]
    X2, y2 = iris.train[2]
    clf = make("AQCClassifier").partial_fit(X2, y2)  # class 2 first
    assert clf.classes_.tolist() == [2]
    assert clf.predict_proba(X0).shape == (len(X0), 1)
    clf.partial_fit(X0, y0, classes=[0, 2, 5])
    assert clf.classes_.tolist() == [0, 2, 5]
    assert clf.predict_proba(X0).shape == (len(X0), 3)
    assert clf.decision_function(X0).shape == (len(X0), 3)
    assert np.mean(clf.predict(X0) == 0) > 0.5


def test_binary_grown_classes_are_a_softmax(iris):
    X = np.concatenate([iris.train[0][0], iris.train[1][0]])
    y = np.concatenate([iris.train[0][1], iris.train[1][1]])
    clf = make("AQCClassifier").partial_fit(X, y)
    assert clf.likelihood_ == "categorical"
    assert clf.decision_function(X).shape == (len(X),)
    assert np.array_equal(clf.decision_function(X) > 0, clf.predict(X) == 1)
    clf.partial_fit(*iris.train[2])
    assert clf.classes_.tolist() == [0, 1, 2]


def test_sigmoid_output_cannot_grow_clear_error(iris):
    X = np.concatenate([iris.train[0][0], iris.train[1][0]])
    y = np.concatenate([iris.train[0][1], iris.train[1][1]])
    clf = AQCClassifier(**FAST, random_state=0).partial_fit(X, y, classes=[0, 1])
    clf.set_params(grow_classes=True)
    before = learned_state(clf)
    with pytest.raises(ValueError, match="sigmoid output, which cannot gain"):
        clf.partial_fit(*iris.train[2])
    assert learned_state(clf) == before


def test_bad_input_rejected_and_changes_nothing(iris):
    clf = make("AQCClassifier")
    for X, y in iris.train[:2]:
        clf.partial_fit(X, y)
    before = learned_state(clf)
    X, y = iris.train[2]
    bad = {
        "classes lack classes seen before": (y, [1, 2]),
        "keep one type": (np.array(["a"] * len(y)), None),
        "not in classes": (y, [0, 1]),
        "'grow_classes' parameter of AQCClassifier must be an instance of 'bool'": (y, None),
    }
    for message, (labels, classes) in bad.items():
        if "'grow_classes' parameter" in message:
            clf.set_params(grow_classes="yes")
        with pytest.raises(ValueError, match=message):
            clf.partial_fit(X, labels, classes=classes)
        clf.set_params(grow_classes=True)
        assert learned_state(clf) == before, message


def test_default_still_requires_classes_and_rejects_new_labels(iris):
    clf = AQCClassifier(**FAST, random_state=0)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(*iris.train[0])
    clf.partial_fit(*iris.train[0], classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(*iris.train[2])


def test_pipeline_sequence_and_search(iris):
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(np.concatenate([X for X, _ in iris.train]))
    pipe = make_pipeline(scaler, make("AQCClassifier"))
    for i, (X, y) in enumerate(iris.train):
        pipe.partial_fit(X, y)
        assert pipe.classes_.tolist() == list(range(i + 1))
    R = learn_task_sequence(make("JointClassifier"), iris.train, iris.test)
    # Before a class is met, its task scores zero; joint training learns each.
    assert R[1, 0] == 0 and R[2, 0] == 0 and R[2, 1] == 0
    assert np.all(np.diag(R) > 0.5)
    search = SequenceGridSearch(
        make("AQCClassifier"), {"alpha": [1.0, 10.0]}, n_jobs=1
    ).fit(iris.train, iris.validation)
    assert search.best_estimator_.classes_.tolist() == [0, 1, 2]
    assert search.accuracy_matrices_.shape == (2, 3, 3)


def test_accuracy_and_log_loss_matrices_with_classes_met_later(iris):
    from sklearn.metrics import log_loss

    R = learn_task_sequence(make("FineTuningClassifier"), iris.train, iris.test,
                            scoring=["accuracy", log_loss])
    acc, loss = R["accuracy"], R["log_loss"]
    # After task 1 only one class is known: no probability score; later,
    # tasks of classes not met yet score NaN, the others a finite loss.
    assert np.all(np.isnan(loss[:, 0])) and np.isnan(loss[2, 1])
    assert np.isfinite(loss[0, 1]) and np.all(np.isfinite(loss[:, 2]))
    assert acc[2, 0] == 0 and acc[0, 0] == 1
