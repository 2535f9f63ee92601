"""Every curvature kind × structure against an independent computation:
closed forms in float64 NumPy, finite differences, per-sample brute force,
and the fundamental theorem of calculus for SI's line integral."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from skcl import AQCClassifier, EWCClassifier, OnlineEWCClassifier, SIClassifier
from skcl._gradient.consolidation import PathIntegral, prior_state
from skcl._gradient.consolidation.curvature import competing_classes, task_curvature
from skcl._gradient.consolidation.quadratic import check_structure_fits
from skcl._gradient.consolidation.structures import (
    DiagonalCurvature,
    FullCurvature,
    KroneckerCurvature,
)
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP, apply_numpy
from skcl._gradient.training import minimize


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_regression_hessian(theta, X, w, n_classes):
    """Closed form: Σ_n w_n (x̃ x̃ᵀ) ⊗ (diag p − p pᵀ), x̃ = [x, 1].

    θ is [vec(W) row-major, b], i.e. the row-major flattening of the
    augmented (n_features + 1, n_classes) matrix [W; b], hence the order of
    the Kronecker product.
    """
    network = MLP(X.shape[1], (), n_classes)
    p = _softmax(apply_numpy(network, theta, X))
    X_aug = np.hstack([X, np.ones((len(X), 1))]).astype(np.float64)
    H = np.zeros((network.n_params,) * 2)
    for x, pn, wn in zip(X_aug, p, w):
        H += wn * np.kron(np.outer(x, x), np.diag(pn) - np.outer(pn, pn))
    return H


def logistic_regression_hessian(theta, X, w):
    """Closed form for one sigmoid output: Σ_n w_n σ(1−σ) x̃ x̃ᵀ."""
    network = MLP(X.shape[1], (), 1)
    s = 1 / (1 + np.exp(-apply_numpy(network, theta, X)[:, 0]))
    X_aug = np.hstack([X, np.ones((len(X), 1))]).astype(np.float64)
    return (X_aug * (w * s * (1 - s))[:, None]).T @ X_aug


def relative_error(A, B):
    return np.linalg.norm(np.asarray(A, np.float64) - B) / np.linalg.norm(B)


def dense(model, kind, structure, theta, X, y, w, batch_size=16, method="auto", competing=None):
    C = task_curvature(model, kind, structure, jnp.asarray(theta), X, y, w,
                       batch_size=batch_size, method=method, competing=competing)
    return C.to_dense()


@pytest.fixture(scope="module")
def wine_scaled(wine):
    X = np.concatenate([X for X, _ in wine.train])
    y = np.concatenate([y for _, y in wine.train])
    return StandardScaler().fit_transform(X).astype(np.float32), y.astype(np.int32)


@pytest.fixture(scope="module")
def hidden_problem(wine_scaled):
    """Wine (a third of it), a network with a hidden layer, a generic θ and
    non-uniform likelihood weights."""
    X, y = wine_scaled
    X, y = X[::3], y[::3]
    model = Model(MLP(X.shape[1], (5,), 3), "categorical")
    theta = np.asarray(model.network.init(jax.random.PRNGKey(0))) + 0.1
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y)).astype(np.float32)
    return model, theta, X, y, w


def per_sample_gradients(model, theta, X, y):
    """g_n = ∇ nll_n(θ) one sample at a time, shape (n, n_params)."""
    grad = jax.jit(jax.grad(lambda t, x, c: model.nll(t, x[None], c[None], jnp.ones(1))))
    return np.stack([np.asarray(grad(theta, x, c), np.float64) for x, c in zip(X, y)])


@pytest.mark.parametrize("batch_size", [7, 16, 1000])
def test_hessian_matches_softmax_regression_closed_form(wine_scaled, batch_size):
    X, y = wine_scaled
    rng = np.random.default_rng(0)
    network = MLP(X.shape[1], (), 3)
    theta = rng.normal(scale=0.3, size=network.n_params).astype(np.float32)
    w = rng.uniform(0.5, 2.0, size=len(y)).astype(np.float32)
    model = Model(network, "categorical")
    expected = softmax_regression_hessian(theta, X, w, 3)
    for method in ("closed_form", "autodiff"):
        H = dense(model, "hessian", "full", theta, X, y, w, batch_size, method)
        assert H.shape == (network.n_params, network.n_params)
        assert relative_error(H, expected) < 1e-4


def test_hessian_matches_logistic_regression_closed_form(wine_scaled):
    X, y = wine_scaled
    y = (y == 1).astype(np.int32)
    network = MLP(X.shape[1], (), 1)
    theta = np.random.default_rng(1).normal(scale=0.3, size=network.n_params).astype(np.float32)
    w = np.ones(len(y), np.float32)
    expected = logistic_regression_hessian(theta, X, w)
    for method in ("closed_form", "autodiff"):
        H = dense(Model(network, "bernoulli"), "hessian", "full", theta, X, y, w, 16, method)
        assert relative_error(H, expected) < 1e-4


def test_hessian_of_hidden_layer_network_matches_finite_differences(wine_scaled):
    X, y = wine_scaled
    network = MLP(X.shape[1], (5,), 3)
    model = Model(network, "categorical")
    theta = np.asarray(network.init(jax.random.PRNGKey(0))) + 0.1
    w = np.ones(len(y), np.float32)
    H = dense(model, "hessian", "full", theta, X, y, w, batch_size=32)

    # Central differences of the gradient, column by column.
    grad = jax.jit(jax.grad(lambda t: model.nll(t, X, y, w)))
    eps = 1e-2
    fd = np.empty_like(H)
    for k in range(network.n_params):
        e = np.zeros(network.n_params, np.float32)
        e[k] = eps
        fd[:, k] = (np.asarray(grad(theta + e)) - np.asarray(grad(theta - e))) / (2 * eps)
    assert relative_error(H, fd) < 1e-2
    np.testing.assert_allclose(H, H.T, atol=1e-6 * np.abs(H).max())


def test_aqc_accumulates_prior_and_task_hessians(iris):
    clf = AQCClassifier(alpha=10.0, learning_rate=0.1, random_state=0)
    expected = np.eye(15)  # the prior's precision·I, the i = 0 term of eq. 3
    for X, y in iris.train:
        clf.partial_fit(X, y, classes=iris.classes)
        expected = expected + softmax_regression_hessian(
            clf.theta_, X, np.ones(len(y)), 3
        )
    assert relative_error(clf.hessian_, expected) < 1e-4
    np.testing.assert_array_equal(clf.consolidation_.center, clf.theta_)
    np.testing.assert_array_equal(clf.consolidation_.prior, np.ones(15))  # kept diagonal


def test_fisher_matches_brute_force(wine_scaled):
    X, y = wine_scaled
    network = MLP(X.shape[1], (), 3)
    theta = np.random.default_rng(2).normal(scale=0.3, size=network.n_params).astype(np.float32)
    w = np.ones(len(y), np.float32)
    F = np.diag(dense(Model(network, "categorical"), "ggn", "diag", theta, X, y, w)) / len(X)

    # ∂ log p_c / ∂[W; b]_{ik} = x̃_i (δ_ck − p_k), squared and averaged
    # over c ~ p(c | x) and over the samples.
    p = _softmax(apply_numpy(network, theta, X))
    X_aug = np.hstack([X, np.ones((len(X), 1))])
    expected = np.zeros((X.shape[1] + 1, 3))
    for x, pn in zip(X_aug, p):
        for c in range(3):
            g = np.outer(x, np.eye(3)[c] - pn)
            expected += pn[c] * g**2
    expected = expected.ravel() / len(X)
    assert relative_error(F, expected) < 1e-4


def test_ewc_importance_is_prior_plus_fisher_sum(iris):
    clf = EWCClassifier(alpha=100.0, learning_rate=0.1, random_state=0)
    X, y = iris.train[0]
    clf.partial_fit(X, y, classes=iris.classes)
    model = Model(clf.network_, clf.likelihood_)
    F = np.diag(dense(model, "ggn", "diag", clf.theta_, X.astype(np.float32), y,
                      np.ones(len(y), np.float32), batch_size=5)) / len(X)
    np.testing.assert_allclose(clf.importance_, 1.0 + F, rtol=1e-5)


def test_si_path_integral_is_the_loss_decrease(wine_scaled):
    """Full batch, small steps: Σ_k ω_k is the line integral of −∇nll along
    the optimisation path, i.e. the decrease of the NLL."""
    X, y = wine_scaled
    network = MLP(X.shape[1], (), 3)
    model = Model(network, "categorical")
    w = np.ones(len(y), np.float32)
    theta_start = network.init(jax.random.PRNGKey(0))
    theta_end, _, path, _ = minimize(
        model, PathIntegral(1.0, 1.0), prior_state(network.n_params, 1.0), theta_start,
        X, y, w, jax.random.PRNGKey(1), 0.01, n_epochs=300, batch_size=len(y),
    )
    decrease = float(model.nll(theta_start, X, y, w) - model.nll(theta_end, X, y, w))
    assert decrease > 10.0
    assert abs(float(np.sum(path)) - decrease) < 0.02 * decrease


def test_si_importances_are_non_negative_on_a_convex_task(wine_scaled):
    X, y = wine_scaled
    clf = SIClassifier(damping=0.1, batch_size=len(y), learning_rate=0.01, random_state=0)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    omega = clf.importance_ - clf.prior_precision  # Ω of the task alone
    assert omega.max() > 1.0
    assert np.all(omega >= -1e-4 * omega.max())


# ---------------------------------------------------------------- kind × structure


def test_hessian_equals_ggn_for_softmax_regression(wine_scaled):
    """Canonical link, network linear in θ: the exact Hessian is the GGN."""
    X, y = wine_scaled
    model = Model(MLP(X.shape[1], (), 3), "categorical")
    theta = np.random.default_rng(4).normal(scale=0.3, size=model.network.n_params)
    H = dense(model, "hessian", "full", theta, X, y, np.ones(len(y), np.float32), method="autodiff")
    G = dense(model, "ggn", "full", theta, X, y, np.ones(len(y), np.float32), method="autodiff")
    assert relative_error(G, H) < 1e-5


def test_ggn_equals_the_expected_fisher(hidden_problem):
    """Jᵀ Λ J = Σ_n w_n Σ_c p(c|x_n) ∇log p(c|x_n) ∇log p(c|x_n)ᵀ, the
    Fisher under the model's own predictive distribution, by brute force
    over samples and classes (with a hidden layer, where GGN ≠ Hessian)."""
    model, theta, X, y, w = hidden_problem
    p = _softmax(apply_numpy(model.network, theta, X))
    expected = np.zeros((model.network.n_params,) * 2)
    for c in range(3):
        g = per_sample_gradients(model, theta, X, np.full(len(y), c, np.int32))
        expected += (g * (w * p[:, c])[:, None]).T @ g
    G = dense(model, "ggn", "full", theta, X, y, w)
    assert relative_error(G, expected) < 1e-4
    H = dense(model, "hessian", "full", theta, X, y, w)
    assert relative_error(H, expected) > 1e-3  # the hidden layer makes them differ


def test_empirical_fisher_is_the_sum_of_gradient_outer_products(hidden_problem):
    model, theta, X, y, w = hidden_problem
    g = per_sample_gradients(model, theta, X, y)
    expected = (g * w[:, None]).T @ g
    assert relative_error(dense(model, "empirical_fisher", "full", theta, X, y, w), expected) < 1e-4


@pytest.mark.parametrize("kind", ["hessian", "ggn", "empirical_fisher"])
@pytest.mark.parametrize("likelihood", ["categorical", "bernoulli"])
def test_closed_form_equals_autodiff_for_one_dense_layer(wine_scaled, kind, likelihood):
    X, y = wine_scaled
    n_outputs = 3 if likelihood == "categorical" else 1
    y = y if likelihood == "categorical" else (y == 1).astype(np.int32)
    model = Model(MLP(X.shape[1], (), n_outputs), likelihood)
    theta = np.random.default_rng(5).normal(scale=0.3, size=model.network.n_params)
    w = np.random.default_rng(6).uniform(0.5, 2.0, len(y)).astype(np.float32)
    closed = dense(model, kind, "full", theta, X, y, w, method="closed_form")
    autodiff = dense(model, kind, "full", theta, X, y, w, method="autodiff")
    assert relative_error(closed, autodiff) < 1e-4


@pytest.mark.parametrize("kind", ["hessian", "ggn", "empirical_fisher"])
def test_diagonal_is_the_diagonal_of_full(hidden_problem, kind):
    model, theta, X, y, w = hidden_problem
    full = dense(model, kind, "full", theta, X, y, w)
    diag = dense(model, kind, "diag", theta, X, y, w)
    np.testing.assert_allclose(np.diag(diag), np.diag(full), rtol=1e-4,
                               atol=1e-5 * np.abs(full).max())


def _layer_blocks(matrix, network):
    blocks, start = [], 0
    for fan_in, fan_out in network.layer_shapes:
        size = (fan_in + 1) * fan_out
        blocks.append(matrix[start : start + size, start : start + size])
        start += size
    return blocks


@pytest.mark.parametrize("kind", ["hessian", "ggn", "empirical_fisher"])
def test_kronecker_is_exact_for_one_sample(hidden_problem, kind):
    """One sample: each layer's block of the full curvature is exactly
    (ã ãᵀ) ⊗ S, which K-FAC stores; K-FAC drops the cross-layer blocks."""
    model, theta, X, y, w = hidden_problem
    one = (X[:1], y[:1], w[:1])
    full = dense(model, kind, "full", theta, *one)
    kron = dense(model, kind, "kron", theta, *one)
    for got, expected in zip(_layer_blocks(kron, model.network),
                             _layer_blocks(full, model.network)):
        assert relative_error(got, expected) < 1e-4
    cross = full.copy()
    for block in _layer_blocks(cross, model.network):
        block[...] = 0
    assert np.abs(cross).max() > 1e-3  # what the block-diagonal structure leaves out


def test_kronecker_is_exact_when_every_sample_has_the_same_output_curvature(wine_scaled):
    """Softmax regression at W = 0: p is uniform for every sample, so
    Σ_n w_n ã ãᵀ ⊗ Λ = (Σ_n w_n ã ãᵀ) ⊗ Λ — K-FAC is the full GGN."""
    X, y = wine_scaled
    model = Model(MLP(X.shape[1], (), 3), "categorical")
    theta = np.zeros(model.network.n_params, np.float32)
    theta[-3:] = [0.3, -0.2, 0.5]  # biases only: the same p for every sample
    w = np.random.default_rng(7).uniform(0.5, 2.0, len(y)).astype(np.float32)
    full = dense(model, "ggn", "full", theta, X, y, w)
    kron = dense(model, "ggn", "kron", theta, X, y, w)
    assert relative_error(kron, full) < 1e-5
    # ... and not otherwise.
    theta = np.random.default_rng(8).normal(scale=0.5, size=model.network.n_params)
    full = dense(model, "ggn", "full", theta, X, y, w)
    assert relative_error(dense(model, "ggn", "kron", theta, X, y, w), full) > 1e-2


@pytest.mark.parametrize("make", ["full", "kron", "diag"])
def test_structures_quadratic_form_sum_and_decay_match_their_dense_matrix(make):
    rng = np.random.default_rng(9)
    shapes = ((3, 4), (4, 2))
    n_params = sum((i + 1) * o for i, o in shapes)

    def random_curvature():
        if make == "full":
            M = rng.normal(size=(n_params, n_params))
            return FullCurvature(jnp.asarray(M @ M.T, jnp.float32))
        if make == "diag":
            return DiagonalCurvature(jnp.asarray(rng.uniform(size=n_params), jnp.float32))
        factors = []
        for i, o in shapes:
            A, G = rng.normal(size=(i + 1, i + 1)), rng.normal(size=(o, o))
            factors.append((jnp.asarray((A @ A.T)[None], jnp.float32),
                            jnp.asarray((G @ G.T)[None], jnp.float32)))
        return KroneckerCurvature(tuple(factors), shapes)

    first, second = random_curvature(), random_curvature()
    total = first.scale(0.5).add(second)
    expected = 0.5 * first.to_dense() + second.to_dense()
    np.testing.assert_allclose(total.to_dense(), expected, rtol=1e-5)
    d = rng.normal(size=n_params).astype(np.float32)
    assert float(total.quadratic(jnp.asarray(d))) == pytest.approx(d @ expected @ d, rel=1e-4)
    np.testing.assert_allclose(total.diag(), np.diag(expected), rtol=1e-5)


def test_full_structure_is_refused_where_it_cannot_fit_before_any_work():
    """P = 51,300 (512 features × 100 classes): H alone is 10.5 GB."""
    shapes = ((512, 100),)
    with pytest.raises(MemoryError, match=r"51,300×51,300.*10\.5 GB.*structure='kron'"):
        check_structure_fits("full", shapes, memory=24e9)
    check_structure_fits("kron", shapes, memory=24e9)
    check_structure_fits("full", ((64, 10),), memory=24e9)


def test_aqc_refuses_the_full_structure_at_p_51300_and_changes_nothing(monkeypatch):
    from skcl._gradient.consolidation import quadratic

    monkeypatch.setattr(quadratic, "_physical_memory", lambda: 24e9)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 512)).astype(np.float32), np.arange(400) % 100
    clf = AQCClassifier(n_epochs=1, batch_size=64)
    with pytest.raises(MemoryError, match="GB"):
        clf.partial_fit(X, y, classes=np.arange(100))
    assert not hasattr(clf, "classes_") and not hasattr(clf, "theta_")


@pytest.mark.parametrize("structure", ["kron", "diag"])
def test_aqc_structures_learn_ci_split_iris(iris, structure):
    """A cheaper structure still consolidates: with λ chosen on the
    validation sequence (the paper's grid), far above fine-tuning's 1/3."""
    from skcl.metrics import final_average_accuracy

    def run(alpha):
        clf = AQCClassifier(alpha=alpha, curvature="ggn", structure=structure,
                            learning_rate=0.1, random_state=0)
        for X, y in iris.train:
            clf.partial_fit(X, y, classes=iris.classes)
        return clf

    candidates = [run(alpha) for alpha in (1.0, 10.0, 100.0, 1000.0, 10000.0)]
    chosen = max(candidates, key=lambda clf: final_average_accuracy(clf, iris.validation))
    assert final_average_accuracy(chosen, iris.test) >= 0.6
    if structure == "kron":
        assert chosen.consolidation_.curvature.n_terms == 3  # the tasks' terms, kept exactly


def test_aqc_mean_reduction_diag_ggn_is_ewc(iris):
    common = dict(alpha=100.0, learning_rate=0.1, hidden_layer_sizes=(4,), random_state=0)
    aqc = AQCClassifier(curvature="ggn", structure="diag", curvature_reduction="mean", **common)
    ewc = EWCClassifier(**common)
    for X, y in iris.train:
        aqc.partial_fit(X, y, classes=iris.classes)
        ewc.partial_fit(X, y, classes=iris.classes)
    np.testing.assert_array_equal(aqc.theta_, ewc.theta_)
    np.testing.assert_array_equal(aqc.consolidation_.hessian_diagonal(), ewc.importance_)


@pytest.mark.parametrize("structure", ["full", "kron", "diag"])
def test_aqc_mean_reduction_divides_each_task_curvature_by_its_size(iris, structure):
    X, y = iris.train[0]
    common = dict(alpha=10.0, curvature="ggn", structure=structure, learning_rate=0.1,
                  hidden_layer_sizes=(4,), random_state=0)
    summed = AQCClassifier(**common).partial_fit(X, y, classes=iris.classes)
    mean = AQCClassifier(curvature_reduction="mean", **common).partial_fit(
        X, y, classes=iris.classes)
    np.testing.assert_array_equal(summed.theta_, mean.theta_)  # task 1: the prior alone
    np.testing.assert_allclose(mean.consolidation_.curvature.to_dense() * len(y),
                               summed.consolidation_.curvature.to_dense(), rtol=1e-5, atol=1e-7)


def test_aqc_curvature_and_structure_are_validated(iris):
    X, y = iris.train[0]
    for params, message in [(dict(curvature="fisher"), "'curvature' parameter of AQCClassifier"),
                            (dict(structure="block"), "'structure' parameter of AQCClassifier"),
                            (dict(curvature_reduction="median"),
                             "'curvature_reduction' parameter of AQCClassifier")]:
        clf = AQCClassifier(**params)
        with pytest.raises(ValueError, match=message):
            clf.partial_fit(X, y, classes=iris.classes)
        assert not hasattr(clf, "classes_")


def test_online_ewc_decays_the_old_importances(iris):
    """importance after two tasks = prior + γ·F_1 + F_2; γ = 1 is EWC."""
    common = dict(alpha=100.0, learning_rate=0.1, random_state=0)
    online = OnlineEWCClassifier(decay=0.25, **common)
    ewc = EWCClassifier(**common)
    for clf in (online, ewc):
        clf.partial_fit(*iris.train[0], classes=iris.classes)
    F1 = online.importance_ - 1.0
    np.testing.assert_allclose(F1, ewc.importance_ - 1.0, rtol=1e-6)  # same first task
    online.partial_fit(*iris.train[1])
    X, y = iris.train[1]
    F2 = np.diag(dense(Model(online.network_, online.likelihood_), "ggn", "diag", online.theta_,
                       X.astype(np.float32), y, np.ones(len(y), np.float32))) / len(X)
    np.testing.assert_allclose(online.importance_, 1.0 + 0.25 * F1 + F2, rtol=1e-4, atol=1e-6)
    same = OnlineEWCClassifier(decay=1.0, **common)
    for X, y in iris.train[:2]:
        same.partial_fit(X, y, classes=iris.classes)
    ewc.partial_fit(*iris.train[1])
    np.testing.assert_allclose(same.theta_, ewc.theta_, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="decay"):
        OnlineEWCClassifier(decay=1.5).partial_fit(*iris.train[0], classes=iris.classes)


def _task_rows(y, n_classes):
    """Task-incremental labels: each row's class and a mask of its task's
    classes (the class and the next one, cyclically)."""
    mask = np.zeros((len(y), n_classes), np.int32)
    mask[np.arange(len(y)), y] = 1
    mask[np.arange(len(y)), (y + 1) % n_classes] = 1
    return np.concatenate([y[:, None], mask], axis=1).astype(np.int32)


@pytest.mark.parametrize("kind", ["ggn", "empirical_fisher"])
@pytest.mark.parametrize("structure", ["diag", "kron"])
@pytest.mark.parametrize("labels", ["categorical", "bernoulli", "task"])
def test_factored_curvature_equals_the_pre_activation_jacobians(hidden_problem, kind,
                                                                structure, labels):
    """S_n = V_nᵀ V_n through the C outputs (one reverse pass per row of
    Λ's root) against every sample's K_l × K_l S_n by forward-mode
    Jacobians (``method="autodiff"``), on a network with two hidden layers."""
    _, theta, X, y, w = hidden_problem
    n_outputs = 1 if labels == "bernoulli" else 3
    likelihood = "bernoulli" if labels == "bernoulli" else "categorical"
    model = Model(MLP(X.shape[1], (6, 5), n_outputs), likelihood)
    theta = np.asarray(model.network.init(jax.random.PRNGKey(1))) + 0.05
    y = {"categorical": y, "bernoulli": (y == 1).astype(np.int32),
         "task": _task_rows(y, 3)}[labels]
    # Task-IL: two reverse passes of Λ's root, the task's rows (competing_classes).
    fast = dense(model, kind, structure, theta, X, y, w, batch_size=7,
                 competing=competing_classes(y))
    slow = dense(model, kind, structure, theta, X, y, w, batch_size=7, method="autodiff")
    assert relative_error(fast, slow) < 1e-6
    assert np.abs(slow).max() > 1e-3


@pytest.mark.parametrize("competing", [None, 2])
@pytest.mark.parametrize("kind", ["ggn", "empirical_fisher"])
def test_task_incremental_diagonal_equals_the_brute_force_fisher(hidden_problem, kind,
                                                                competing):
    """Task-IL (each row's own two classes compete): diag F = Σ_n w_n Σ_c
    p̃(c|x_n) (∂log p̃(c|x_n)/∂θ)² (GGN) and Σ_n w_n (∂log p̃(y_n|x_n)/∂θ)²
    (empirical Fisher), p̃ the softmax over the row's task's logits alone,
    one sample and class at a time: the log-softmax of the task's two
    columns differentiated here, not skcl's likelihood. EWC's importance
    under ``scenario="task"``; with ``competing=2``, Λ's root keeps only the
    rows of each row's two classes (2 reverse passes instead of 3)."""
    model, theta, X, y, w = hidden_problem
    columns = np.stack([y, (y + 1) % 3], axis=1)  # _task_rows's task, label first

    @jax.jit
    def gradients(t, x, cols, c):
        def log_p(t):
            return jax.nn.log_softmax(model.network.apply(t, x[None])[0][cols])[c]

        return jax.grad(log_p)(t), jnp.exp(log_p(t))

    expected = np.zeros(model.network.n_params)
    for x, cols, weight in zip(X, columns, w):
        for c in range(2):
            g, p = gradients(jnp.asarray(theta), x, cols, c)
            factor = p if kind == "ggn" else float(c == 0)
            expected += weight * float(factor) * np.asarray(g, np.float64) ** 2
    tasks = _task_rows(y, 3)
    assert competing_classes(tasks) == 2
    got = np.diag(dense(model, kind, "diag", theta, X, tasks, w, competing=competing))
    assert relative_error(got, expected) < 1e-5
    # The other class's outputs carry no importance: rows of other tasks differ.
    assert relative_error(got, np.diag(dense(model, kind, "diag", theta, X, y, w))) > 0.05


@pytest.mark.parametrize("kind", ["ggn", "empirical_fisher"])
def test_factored_diagonal_equals_the_brute_force_fisher(hidden_problem, kind):
    """diag F = Σ_n w_n Σ_c p(c|x_n) (∂log p(c|x_n)/∂θ)² (GGN) and
    Σ_n w_n g_n² (empirical Fisher), one sample and class at a time."""
    model, theta, X, y, w = hidden_problem
    if kind == "ggn":
        p = _softmax(apply_numpy(model.network, theta, X))
        expected = sum(
            (w * p[:, c]) @ per_sample_gradients(model, theta, X, np.full(len(y), c, np.int32)) ** 2
            for c in range(3))
    else:
        expected = w @ per_sample_gradients(model, theta, X, y) ** 2
    got = np.diag(dense(model, kind, "diag", theta, X, y, w))
    assert relative_error(got, expected) < 1e-5
