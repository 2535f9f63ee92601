"""Sequential variational inference: KLs against numerical integration,
samplers, the linearised output moments, and a VCL posterior against the
exact posterior of a one-feature Bayesian logistic regression on Iris."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit, log_expit, logsumexp
from sklearn.datasets import load_iris

from skcl import GVCLClassifier
from skcl._gradient.consolidation.variational import (
    FunctionSpace,
    Gaussian,
    GaussianMixture,
    gaussian_kl,
)
from skcl._gradient.networks import MLP


def _kl_by_quadrature(q_logpdf, p_logpdf, lo=-30, hi=30):
    def integrand(x):
        log_q = q_logpdf(x)
        return np.exp(log_q) * (log_q - p_logpdf(x))

    return integrate.quad(integrand, lo, hi, limit=400, points=[-5, 0, 5])[0]


def test_gaussian_kl_matches_numerical_integration():
    mq, sq = np.array([0.3, -1.0, 2.0]), np.array([0.5, 1.3, 0.2])
    mp, sp = np.array([0.0, 0.5, 1.0]), np.array([1.0, 0.7, 2.0])
    by_quadrature = sum(
        _kl_by_quadrature(stats.norm(a, b).logpdf, stats.norm(c, d).logpdf)
        for a, b, c, d in zip(mq, sq, mp, sp)
    )
    got = float(gaussian_kl(jnp.array(mq), jnp.array(sq**2), jnp.array(mp), jnp.array(sp**2)))
    assert got == pytest.approx(by_quadrature, rel=1e-5)
    assert float(
        gaussian_kl(jnp.array(mq), jnp.array(sq**2), jnp.array(mq), jnp.array(sq**2))
    ) == pytest.approx(0.0, abs=1e-6)


def test_gaussian_family_layout_prior_and_kl():
    family = Gaussian(3)
    prior = family.prior(4.0)  # σ = 1/√4
    mean, std = family.split(jnp.asarray(prior))
    np.testing.assert_allclose(mean, 0.0)
    np.testing.assert_allclose(std, 0.5, rtol=1e-6)
    q = np.concatenate([[0.3, -1.0, 2.0], np.log(np.expm1([0.5, 1.3, 0.2]))]).astype(np.float32)
    # KL(N(a, b²) ‖ N(0, s²)) = log(s/b) + (b² + a²)/(2s²) − ½, s = 0.5
    expected = sum(
        np.log(0.5 / b) + (b**2 + a**2) / (2 * 0.25) - 0.5
        for a, b in zip([0.3, -1.0, 2.0], [0.5, 1.3, 0.2])
    )
    assert float(family.kl(jnp.asarray(q), jnp.asarray(prior))) == pytest.approx(expected, rel=1e-5)
    samples = np.asarray(family.sample(jnp.asarray(q), jax.random.PRNGKey(0), 200000))
    np.testing.assert_allclose(samples.mean(0), [0.3, -1.0, 2.0], atol=0.01)
    np.testing.assert_allclose(samples.std(0), [0.5, 1.3, 0.2], rtol=0.01)


def _mixture(weights, means, stds):
    family = GaussianMixture(1, len(weights))
    v = np.concatenate(
        [np.log(weights), means, np.log(np.expm1(np.asarray(stds)))]
    ).astype(np.float32)

    def logpdf(x):
        return logsumexp(
            [np.log(w) + stats.norm(m, s).logpdf(x) for w, m, s in zip(weights, means, stds)],
            axis=0,
        )

    def cdf(x):
        return sum(w * stats.norm(m, s).cdf(x) for w, m, s in zip(weights, means, stds))

    return family, jnp.asarray(v), logpdf, cdf


def test_mixture_density_samples_and_monte_carlo_kl():
    family, q, q_logpdf, q_cdf = _mixture([0.2, 0.5, 0.3], [-3.0, 0.0, 4.0], [0.5, 1.0, 0.8])
    _, p, p_logpdf, _ = _mixture([0.4, 0.4, 0.2], [-1.0, 1.0, 2.0], [1.5, 1.0, 2.0])
    x = np.linspace(-6, 6, 13)
    np.testing.assert_allclose(
        np.asarray(family.log_density(q, jnp.asarray(x[:, None]))), q_logpdf(x), rtol=1e-4
    )
    samples = family.sample(q, jax.random.PRNGKey(1), 200000)
    s = np.asarray(samples)[:, 0]
    # Component frequencies and moments of the exact mixture.
    for cut in (-1.5, 0.0, 2.0):
        assert np.mean(s < cut) == pytest.approx(q_cdf(cut), abs=0.004)
    assert s.mean() == pytest.approx(0.2 * -3 + 0.3 * 4, abs=0.02)
    assert float(family.mean(q)[0]) == pytest.approx(0.2 * -3 + 0.3 * 4, rel=1e-5)
    by_quadrature = _kl_by_quadrature(q_logpdf, p_logpdf)
    assert float(family.kl(q, p, samples)) == pytest.approx(by_quadrature, rel=0.02)


def test_mixture_prior_is_the_gaussian_prior():
    family = GaussianMixture(4, 3)
    prior = jnp.asarray(family.prior(2.0))
    theta = jnp.asarray(np.random.default_rng(0).normal(size=(5, 4)), jnp.float32)
    expected = stats.norm(0, 1 / np.sqrt(2.0)).logpdf(np.asarray(theta)).sum(1)
    np.testing.assert_allclose(family.log_density(prior, theta), expected, rtol=1e-5)


def test_linearised_output_moments_are_exact_for_softmax_regression():
    """Softmax regression is linear in θ, so the linearised Gaussian over the
    logits is exactly their distribution under q: compare with samples."""
    network = MLP(4, (), 3)
    family = Gaussian(network.n_params)
    objective = FunctionSpace(family, 1, 5, network)
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.normal(size=15), rng.normal(-1.0, 0.5, size=15)]).astype(np.float32)
    X_inducing = jnp.asarray(rng.uniform(-2, 2, size=(5, 4)), jnp.float32)
    mean, var = objective.output_moments(jnp.asarray(v), X_inducing)
    thetas = np.asarray(family.sample(jnp.asarray(v), jax.random.PRNGKey(0), 100000), np.float64)
    W, b = thetas[:, :12].reshape(-1, 4, 3), thetas[:, 12:]
    logits = np.einsum("mf,sfk->smk", np.asarray(X_inducing, np.float64), W) + b[:, None, :]
    np.testing.assert_allclose(mean, logits.mean(0), atol=0.02)
    np.testing.assert_allclose(var, logits.var(0), rtol=0.02)


def _iris_one_feature():
    """Versicolor vs virginica from standardised sepal length: a real,
    overlapping one-feature logistic regression (40 samples, 20 per class)."""
    iris = load_iris()
    keep = np.flatnonzero(iris.target > 0)
    rng = np.random.default_rng(0)
    chosen = np.concatenate(
        [rng.choice(keep[iris.target[keep] == c], 20, replace=False) for c in (1, 2)]
    )
    rng.shuffle(chosen)
    x = iris.data[chosen, 0]
    x = (x - x.mean()) / x.std()
    return x[:, None], iris.target[chosen]


def _exact_posterior_moments(x, y):
    """Mean and sd of (w, b) under N(0, I) prior × Bernoulli(σ(wx + b)) likelihood,
    by summation on a fine grid."""
    grid = np.linspace(-6, 6, 801)
    w, b = np.meshgrid(grid, grid, indexing="ij")
    z = w[..., None] * x[:, 0] + b[..., None]
    t = (y == 2).astype(float)
    log_post = -0.5 * (w**2 + b**2) + np.sum(t * log_expit(z) + (1 - t) * log_expit(-z), axis=-1)
    p = np.exp(log_post - log_post.max())
    p /= p.sum()
    mean = np.array([np.sum(p * w), np.sum(p * b)])
    sd = np.sqrt(np.array([np.sum(p * w**2), np.sum(p * b**2)]) - mean**2)
    return mean, sd


@pytest.mark.parametrize("n_tasks", [1, 2])
def test_vcl_posterior_is_close_to_the_exact_posterior(n_tasks):
    """One task, or the same data in two tasks (the first posterior becoming
    the second prior): the mean-field posterior sits on the exact posterior
    mean with about its spread."""
    x, y = _iris_one_feature()
    mean, sd = _exact_posterior_moments(x, y)
    clf = GVCLClassifier(
        n_epochs=600, batch_size=40, learning_rate=0.05, n_train_samples=32, random_state=0
    )
    for X_task, y_task in zip(np.array_split(x, n_tasks), np.array_split(y, n_tasks)):
        clf.partial_fit(X_task, y_task, classes=[1, 2])
    vi_mean, vi_std = Gaussian(2).split(jnp.asarray(clf.posterior_))
    np.testing.assert_allclose(vi_mean, mean, atol=0.15 * sd.min())
    np.testing.assert_allclose(vi_std, sd, rtol=0.15)
    # Prediction averages σ(wx + b) over posterior samples.
    p = clf.predict_proba(x)[:, 1]
    w_s, b_s = clf.posterior_samples_[:, 0], clf.posterior_samples_[:, 1]
    np.testing.assert_allclose(p, expit(np.outer(x[:, 0], w_s) + b_s).mean(1), rtol=1e-6)
