"""The hidden units' activation (``activation``) against independent computations.

Every family's predictions equal a float64 NumPy forward pass written out
here (its own activations and its own cutting of θ into layers); the
Kronecker-factored and diagonal curvatures of a ReLU network equal a brute
force whose gradients are central finite differences of that forward pass;
the setting is validated where it acts, also after ``set_params``, and
cannot change between tasks; networks saved before it existed load as swish.
"""

import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import expit, softmax
from sklearn.preprocessing import StandardScaler

import skcl
from skcl._gradient.consolidation.curvature import task_curvature
from skcl._gradient.consolidation.laplace import logit_moments
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP

# Iris' tasks of one class each: the warning is said, and is not what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::skcl.exceptions.SingleClassTaskWarning")

ACTIVATIONS = {
    "swish": lambda z: z / (1.0 + np.exp(-z)),
    "relu": lambda z: np.where(z > 0, z, 0.0),
    "tanh": np.tanh,
    "logistic": lambda z: 1.0 / (1.0 + np.exp(-z)),
    "identity": lambda z: z,
}

FAST = dict(n_epochs=10, batch_size=16, learning_rate=0.05, random_state=0)
SMALL_NC = dict(consolidator_hidden_layer_sizes=(8,), consolidator_n_steps=10)


def layers(theta, sizes):
    """θ cut into [(W, b), ...]: each W row-major (fan_in, fan_out), then b."""
    theta, out, start = np.asarray(theta, np.float64), [], 0
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        W = theta[start : start + fan_in * fan_out].reshape(fan_in, fan_out)
        start += fan_in * fan_out
        out.append((W, theta[start : start + fan_out]))
        start += fan_out
    assert start == len(theta)
    return out


def forward(theta, sizes, activation, X):
    """Logits of shape (n_samples, sizes[-1]), float64."""
    h, parts = np.asarray(X, np.float64), layers(theta, sizes)
    for i, (W, b) in enumerate(parts):
        z = h @ W + b
        h = ACTIVATIONS[activation](z) if i < len(parts) - 1 else z
    return h


def probabilities(logits, n_classes):
    """predict_proba from the network's logits: a sigmoid for one output,
    else a softmax over the known classes (the unseen output dropped)."""
    if logits.shape[1] == 1:
        p = expit(logits[:, 0])
        return np.stack([1 - p, p], axis=1)
    return softmax(logits[:, :n_classes], axis=1)


def learn(clf, data):
    for X, y in data.train:
        clf.partial_fit(X, y, classes=data.classes)
    return clf


def test_test_forward_pass_is_the_swish_network_by_default(iris):
    # The reference itself: on the default (swish) network it is skcl's.
    clf = learn(skcl.FineTuningClassifier(hidden_layer_sizes=(5,), **FAST), iris)
    X = iris.test[0][0]
    sizes = clf.network_.layer_sizes
    np.testing.assert_allclose(probabilities(forward(clf.theta_, sizes, "swish", X), 3),
                               clf.predict_proba(X), rtol=0, atol=1e-10)


MAP_METHODS = {
    "fine-tuning": lambda **kw: skcl.FineTuningClassifier(**kw),
    "joint": lambda **kw: skcl.JointClassifier(**kw),
    "AQC": lambda **kw: skcl.AQCClassifier(alpha=10.0, curvature="ggn", **kw),
    "AQC, kron": lambda **kw: skcl.AQCClassifier(alpha=10.0, curvature="ggn",
                                                 structure="kron", **kw),
    "EWC": lambda **kw: skcl.EWCClassifier(alpha=100.0, **kw),
    "online EWC": lambda **kw: skcl.OnlineEWCClassifier(alpha=100.0, **kw),
    "SI": lambda **kw: skcl.SIClassifier(alpha=1.0, **kw),
    "NC": lambda **kw: skcl.NCClassifier(**SMALL_NC, **kw),
}


@pytest.mark.parametrize("name", MAP_METHODS)
def test_map_methods_predict_with_the_relu_network(iris, name):
    clf = learn(MAP_METHODS[name](hidden_layer_sizes=(6,), activation="relu", **FAST), iris)
    assert clf.network_.activation == "relu"
    X = np.concatenate([X for X, _ in iris.test])
    sizes = clf.network_.layer_sizes
    expected = probabilities(forward(clf.theta_, sizes, "relu", X), 3)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-10)
    # The swish network of the same θ predicts otherwise: the setting acts.
    swish = probabilities(forward(clf.theta_, sizes, "swish", X), 3)
    assert np.abs(swish - expected).max() > 1e-3


@pytest.mark.parametrize("name", ["G-VCL", "GM-VCL", "G-SFSVI"])
def test_variational_methods_average_the_relu_networks_of_their_samples(iris, name):
    make = {"G-VCL": skcl.GVCLClassifier, "GM-VCL": skcl.GMVCLClassifier,
            "G-SFSVI": skcl.GSFSVIClassifier}[name]
    clf = learn(make(hidden_layer_sizes=(6,), activation="relu", n_predict_samples=7,
                     n_train_samples=2, **FAST), iris)
    X = np.concatenate([X for X, _ in iris.test])
    sizes = clf.network_.layer_sizes
    expected = np.mean([probabilities(forward(t, sizes, "relu", X), 3)
                        for t in clf.posterior_samples_], axis=0)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("activation", ["tanh", "logistic", "identity"])
def test_every_activation_is_the_one_named(iris, activation):
    clf = learn(skcl.EWCClassifier(alpha=10.0, hidden_layer_sizes=(5, 4),
                                   activation=activation, **FAST), iris)
    X = np.concatenate([X for X, _ in iris.test])
    expected = probabilities(forward(clf.theta_, clf.network_.layer_sizes, activation, X), 3)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-10)
    assert clf.score(X, np.concatenate([y for _, y in iris.test])) > 0.3


def test_grown_classes_keep_the_activation(iris):
    clf = skcl.EWCClassifier(alpha=10.0, hidden_layer_sizes=(6,), activation="relu",
                             grow_classes=True, **FAST)
    for X, y in iris.train:
        clf.partial_fit(X, y)
    assert clf.network_.activation == "relu" and len(clf.classes_) == 3
    X = np.concatenate([X for X, _ in iris.test])
    expected = probabilities(forward(clf.theta_, clf.network_.layer_sizes, "relu", X), 3)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-10)


def test_laplace_predictive_logit_covariance_of_a_relu_network(wine):
    # J Σ Jᵀ, J = ∂f/∂θ by central differences of the NumPy ReLU network.
    clf = learn(skcl.AQCClassifier(alpha=1.0, curvature="ggn", hidden_layer_sizes=(4,),
                                   activation="relu", n_epochs=20, batch_size=16,
                                   learning_rate=0.01, random_state=0), wine)
    X = np.concatenate([X for X, _ in wine.test])[:5]
    theta, sizes = clf.theta_.astype(np.float64), clf.network_.layer_sizes
    eps = 1e-4
    J = np.zeros((len(X), sizes[-1], len(theta)))
    for i in range(len(theta)):
        e = np.zeros_like(theta)
        e[i] = eps
        J[:, :, i] = (forward(theta + e, sizes, "relu", X)
                      - forward(theta - e, sizes, "relu", X)) / (2 * eps)
    expected = np.einsum("nkp,pq,nlq->nkl", J, clf.posterior_covariance(), J)
    net = clf.network_
    mean, got = logit_moments(net, net.n_outputs, clf.theta_, clf._posterior_root(), X)
    np.testing.assert_allclose(mean, forward(theta, sizes, "relu", X), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3 * np.abs(expected).max())
    probit = clf.set_params(predictive="probit").predict_proba(X)
    assert np.all(np.isfinite(probit)) and np.allclose(probit.sum(1), 1)


# ------------------------------------------------------------------ curvature


@pytest.fixture(scope="module")
def relu_problem(wine):
    """Wine (a third of it), a 13-5-3 ReLU network at a generic θ, and
    non-uniform likelihood weights."""
    X = np.concatenate([X for X, _ in wine.train])
    y = np.concatenate([y for _, y in wine.train])
    X = StandardScaler().fit_transform(X).astype(np.float32)[::3]
    y = y[::3].astype(np.int32)
    network = MLP(X.shape[1], (5,), 3, "relu")
    theta = np.asarray(network.init(jax.random.PRNGKey(0))) + 0.1
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y)).astype(np.float32)
    return Model(network, "categorical"), theta, X, y, w


def log_proba_gradients(theta, sizes, activation, X, eps=1e-6):
    """∂ log p(c | x_n) / ∂θ for every row and class, shape (n, C, n_params),
    by central differences of the NumPy network in float64."""
    theta = np.asarray(theta, np.float64)

    def log_p(t):
        z = forward(t, sizes, activation, X)
        return z - np.logaddexp.reduce(z, axis=1, keepdims=True)

    G = np.empty((len(X), sizes[-1], len(theta)))
    for k in range(len(theta)):
        e = np.zeros_like(theta)
        e[k] = eps
        G[:, :, k] = (log_p(theta + e) - log_p(theta - e)) / (2 * eps)
    return G


def curvature(model, kind, structure, theta, X, y, w):
    C = task_curvature(model, kind, structure, jnp.asarray(theta), X, y, w, batch_size=7)
    return np.asarray(C.to_dense(), np.float64)


def relative_error(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("kind", ["ggn", "empirical_fisher"])
def test_diagonal_curvature_of_a_relu_network_is_the_brute_force_fisher(relu_problem, kind):
    """diag F = Σ_n w_n Σ_c p(c|x_n) g_nc² (GGN, EWC's Fisher) and
    Σ_n w_n g_ny² (empirical Fisher), g by finite differences."""
    model, theta, X, y, w = relu_problem
    sizes = model.network.layer_sizes
    G = log_proba_gradients(theta, sizes, "relu", X)
    if kind == "ggn":
        p = softmax(forward(theta, sizes, "relu", X), axis=1)
        expected = np.einsum("n,nc,ncp->p", w, p, G**2)
    else:
        expected = np.einsum("n,np->p", w, G[np.arange(len(y)), y] ** 2)
    got = np.diag(curvature(model, kind, "diag", theta, X, y, w))
    assert relative_error(got, expected) < 1e-4
    # On swish units the same θ has another Fisher: the code follows the network.
    swish = Model(MLP(X.shape[1], (5,), 3), "categorical")
    assert relative_error(np.diag(curvature(swish, kind, "diag", theta, X, y, w)),
                          expected) > 0.05
    # A ReLU off for a row passes it no gradient: its weights' importance is 0.
    (W0, b0), _ = layers(theta, sizes)
    off = X[0] @ W0 + b0 < 0
    assert 0 < off.sum() < len(off)
    one = np.diag(curvature(model, kind, "diag", theta, X[:1], y[:1], w[:1]))
    fan_in = X.shape[1]
    first = one[: (fan_in + 1) * 5]
    W_part, b_part = first[: fan_in * 5].reshape(fan_in, 5), first[fan_in * 5 :]
    assert np.all(W_part[:, off] == 0) and np.all(b_part[off] == 0)
    assert np.all(b_part[~off] > 0)


@pytest.mark.parametrize("kind", ["ggn", "empirical_fisher"])
def test_kronecker_curvature_of_a_relu_network_is_exact_for_one_row(relu_problem, kind):
    """One row: each layer's block of the brute-force curvature (finite
    differences) is exactly (ã ãᵀ) ⊗ S, which K-FAC stores."""
    model, theta, X, y, w = relu_problem
    sizes = model.network.layer_sizes
    for n in (0, 5, 11):
        x, label, weight = X[n : n + 1], y[n : n + 1], w[n : n + 1]
        g = log_proba_gradients(theta, sizes, "relu", x)[0]
        if kind == "ggn":
            p = softmax(forward(theta, sizes, "relu", x), axis=1)[0]
            full = weight[0] * (g.T * p) @ g
        else:
            full = weight[0] * np.outer(g[label[0]], g[label[0]])
        kron = curvature(model, kind, "kron", theta, x, label, weight)
        start = 0
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            block = slice(start, start + (fan_in + 1) * fan_out)
            assert relative_error(kron[block, block], full[block, block]) < 1e-4
            start = block.stop


# ----------------------------------------------------------------- validation


def test_an_unknown_activation_is_refused_naming_the_setting(iris):
    X, y = iris.train[0]
    clf = skcl.EWCClassifier(hidden_layer_sizes=(4,), activation="softplus", **FAST)
    with pytest.raises(ValueError, match="'activation' parameter .* must be a str among"):
        clf.partial_fit(X, y, classes=iris.classes)
    assert not hasattr(clf, "theta_")


def test_an_unknown_activation_after_set_params_changes_nothing(iris):
    clf = skcl.EWCClassifier(hidden_layer_sizes=(4,), activation="relu", **FAST)
    clf.partial_fit(*iris.train[0], classes=iris.classes)
    theta, importance = clf.theta_.copy(), clf.importance_.copy()
    clf.set_params(activation="ReLU")
    with pytest.raises(ValueError, match="'activation' parameter"):
        clf.partial_fit(*iris.train[1])
    assert clf.n_tasks_seen_ == 1
    np.testing.assert_array_equal(clf.theta_, theta)
    np.testing.assert_array_equal(clf.importance_, importance)


def test_the_activation_cannot_change_between_tasks(iris):
    clf = skcl.SIClassifier(hidden_layer_sizes=(4,), activation="relu", **FAST)
    clf.partial_fit(*iris.train[0], classes=iris.classes)
    theta, state = clf.theta_.copy(), pickle.dumps(clf.consolidation_)
    X = iris.test[0][0]
    proba = clf.predict_proba(X)
    clf.set_params(activation="tanh")
    with pytest.raises(ValueError, match="activation is 'tanh' but the network learned so far "
                                         "has 'relu'; it cannot change between tasks"):
        clf.partial_fit(*iris.train[1])
    assert clf.n_tasks_seen_ == 1
    np.testing.assert_array_equal(clf.theta_, theta)
    assert pickle.dumps(clf.consolidation_) == state
    # Prediction is the learned network's, whatever the setting says now.
    np.testing.assert_array_equal(clf.predict_proba(X), proba)
    clf.fit(*iris.train[1])  # fit starts a new sequence, on tanh units
    assert clf.network_.activation == "tanh"


def test_a_network_pickled_before_the_setting_existed_is_swish(iris):
    clf = learn(skcl.EWCClassifier(alpha=10.0, hidden_layer_sizes=(4,), **FAST), iris)
    X = iris.test[0][0]
    proba = clf.predict_proba(X)
    del vars(clf.network_)["activation"]  # as pickled by the older MLP
    old = pickle.loads(pickle.dumps(clf))
    assert "activation" not in vars(old.network_) and old.network_.activation == "swish"
    np.testing.assert_array_equal(old.predict_proba(X), proba)
    assert old.network_ == MLP(4, (4,), 3) and hash(old.network_) == hash(MLP(4, (4,), 3))
    old.partial_fit(*iris.train[0])  # the learned swish network goes on learning
    assert old.n_tasks_seen_ == 4
