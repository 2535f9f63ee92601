"""Variational posteriors over θ and the consolidations of sequential VI.

In sequential variational inference the posterior q_t after task t is the
prior of task t+1, so the "consolidation" is simply q_{t-1}: the
objective of task t is the negative ELBO (variational free energy)

    E_{q(θ)}[nll_t(θ)] + KL(q ‖ q_{t-1}),

the expectation estimated by Monte Carlo with reparametrised samples (a
fresh key per minibatch step), and the KL divided over the minibatches by
the shared training loop like any other penalty.

Every variational posterior is stored as ONE flat float vector ``v`` so
that the shared loop (Adam, schedule, divergence checks) treats it like θ.
A *family* (a hashable frozen dataclass, static under ``jit``) knows the
layout of ``v``:

* :class:`Gaussian` — mean-field Gaussian, ``v = [μ, ρ]``, σ = softplus(ρ);
* :class:`GaussianMixture` — K mean-field Gaussian components,
  ``v = [logits (K), μ (K·P), ρ (K·P)]``.
"""

from dataclasses import dataclass, replace

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp

from .base import Consolidation, consolidation

__all__ = [
    "Gaussian",
    "GaussianMixture",
    "gaussian_kl",
    "Variational",
    "FunctionSpace",
    "VariationalState",
]

# Initial ρ of every posterior standard deviation: σ = softplus(-2) ≈ 0.127
# (the paper's code draws ρ ~ N(-2, 0.05²)); small enough that the first
# task starts close to a point estimate, large enough to be learned.
INIT_RHO = -2.0


def _inverse_softplus(x):
    return x + np.log(-np.expm1(-x))


def gaussian_kl(mean_q, var_q, mean_p, var_p):
    """KL(N(mean_q, var_q) ‖ N(mean_p, var_p)) of independent coordinates, summed.

    ``½ Σ [log(var_p/var_q) + (var_q + (mean_q − mean_p)²)/var_p − 1]``.
    """
    return 0.5 * jnp.sum(
        jnp.log(var_p) - jnp.log(var_q) + (var_q + (mean_q - mean_p) ** 2) / var_p - 1.0
    )


def _gaussian_log_density(x, mean, std):
    """log N(x; mean, diag(std²)) summed over the last axis."""
    z = (x - mean) / std
    return -0.5 * jnp.sum(z * z + 2.0 * jnp.log(std) + jnp.log(2.0 * jnp.pi), axis=-1)


@dataclass(frozen=True)
class Gaussian:
    """Mean-field Gaussian N(μ, diag σ²) over the flat θ (G-VCL, G-SFSVI).

    ``v = [μ, ρ]`` of length 2·n_params, σ = softplus(ρ). The KL is the
    closed form :func:`gaussian_kl`.

    Parameters
    ----------
    n_params : int
        Length of θ.
    """

    n_params: int

    @property
    def n_components(self):
        """One Gaussian."""
        return 1

    @property
    def size(self):
        """Length of v."""
        return 2 * self.n_params

    def split(self, v):
        """(μ, σ), each of shape (n_params,)."""
        return v[: self.n_params], jax.nn.softplus(v[self.n_params :])

    def init(self, thetas):
        """Start of the first task: μ = θ_0 (``thetas[0]``), σ = softplus(-2)."""
        theta = np.asarray(thetas[0], np.float32)
        return np.concatenate([theta, np.full(self.n_params, INIT_RHO, np.float32)])

    def prior(self, precision, mean=None):
        """The Gaussian prior with the given precision, zero-mean unless ``mean``."""
        rho = _inverse_softplus(1.0 / np.sqrt(float(precision)))
        mean = np.zeros(self.n_params, np.float32) if mean is None else mean
        return np.concatenate(
            [np.asarray(mean, np.float32), np.full(self.n_params, rho, np.float32)]
        )

    def sample(self, v, key, n):
        """n reparametrised samples μ + σ·ε, shape (n, n_params)."""
        mean, std = self.split(v)
        return mean + std * jax.random.normal(key, (n, self.n_params), mean.dtype)

    def kl(self, q, p, samples=None):
        """Closed-form KL(q ‖ p); ``samples`` is unused."""
        mean_q, std_q = self.split(q)
        mean_p, std_p = self.split(p)
        return gaussian_kl(mean_q, std_q**2, mean_p, std_p**2)

    def mean(self, v):
        """E_q[θ] = μ."""
        return v[: self.n_params]

    def grow(self, v, fill, growth):
        """v for the grown θ: ``fill`` at fresh coordinates (see ``_grow_gaussian``)."""
        P_old, P = self.n_params, growth.n_params
        mean, rho = _grow_gaussian(v[:P_old], v[P_old:], fill[:P], fill[P:], growth)
        return np.concatenate([mean, rho])


@dataclass(frozen=True)
class GaussianMixture:
    """A mixture of K mean-field Gaussians over the flat θ (GM-VCL).

    ``q(θ) = Σ_k π_k N(θ; μ_k, diag σ_k²)`` with π = softmax(logits) and
    σ_k = softplus(ρ_k); ``v = [logits (K), μ (K·P), ρ (K·P)]``.

    Samples are reparametrised with the Gumbel-softmax relaxation of the
    component choice: with Gumbel noise g, the relaxed one-hot
    w = softmax((logits + g)/τ) mixes one Gaussian draw per component,
    θ = Σ_k w_k (μ_k + σ_k ε_k). With the small temperature τ the paper's
    code uses (10⁻³), w is one-hot up to rounding, so θ is an exact draw
    from q.

    KL(q ‖ p) between mixtures has no closed form; :meth:`kl` is the Monte
    Carlo estimate (1/S) Σ_s [log q(θ_s) − log p(θ_s)] on the same
    reparametrised samples as the data term.

    Parameters
    ----------
    n_params : int
    n_components : int
        K.
    temperature : float, default=1e-3
        τ of the Gumbel-softmax relaxation.
    """

    n_params: int
    n_components: int
    temperature: float = 1e-3

    @property
    def size(self):
        return self.n_components * (2 * self.n_params + 1)

    def split(self, v):
        """(logits (K,), μ (K, P), σ (K, P))."""
        K, P = self.n_components, self.n_params
        logits = v[:K]
        mean = v[K : K + K * P].reshape(K, P)
        std = jax.nn.softplus(v[K + K * P :]).reshape(K, P)
        return logits, mean, std

    def init(self, thetas):
        """Uniform weights, μ_k = ``thetas[k]`` (independent initialisations)."""
        thetas = np.asarray(thetas, np.float32)[: self.n_components]
        K, P = self.n_components, self.n_params
        return np.concatenate(
            [np.zeros(K, np.float32), thetas.ravel(), np.full(K * P, INIT_RHO, np.float32)]
        )

    def prior(self, precision, mean=None):
        """The Gaussian prior as a mixture of K identical components."""
        K, P = self.n_components, self.n_params
        rho = _inverse_softplus(1.0 / np.sqrt(float(precision)))
        mean = np.zeros(P, np.float32) if mean is None else np.asarray(mean, np.float32)
        return np.concatenate(
            [np.zeros(K, np.float32), np.tile(mean, K), np.full(K * P, rho, np.float32)]
        )

    def sample(self, v, key, n):
        logits, mean, std = self.split(v)
        gumbel_key, normal_key = jax.random.split(key)
        g = jax.random.gumbel(gumbel_key, (n, self.n_components), mean.dtype)
        w = jax.nn.softmax((logits + g) / self.temperature, axis=-1)  # (n, K)
        eps = jax.random.normal(normal_key, (n, *mean.shape), mean.dtype)
        return jnp.einsum("nk,nkp->np", w, mean + std * eps)

    def log_density(self, v, thetas):
        """log q(θ) for each row of ``thetas`` (n, P), shape (n,)."""
        logits, mean, std = self.split(v)
        per_component = _gaussian_log_density(thetas[:, None, :], mean, std)  # (n, K)
        return logsumexp(per_component + jax.nn.log_softmax(logits), axis=-1)

    def kl(self, q, p, samples):
        """Monte Carlo KL(q ‖ p) on samples drawn from q."""
        return jnp.mean(self.log_density(q, samples) - self.log_density(p, samples))

    def grow(self, v, fill, growth):
        """v for the grown θ, component by component (see ``_grow_gaussian``)."""
        K, P_old, P = self.n_components, self.n_params, growth.n_params
        v, fill = np.asarray(v), np.asarray(fill)
        means, rhos = [], []
        for k in range(K):
            mean, rho = _grow_gaussian(
                v[K + k * P_old : K + (k + 1) * P_old],
                v[K + (K + k) * P_old : K + (K + k + 1) * P_old],
                fill[K + k * P : K + (k + 1) * P],
                fill[K + (K + k) * P : K + (K + k + 1) * P],
                growth,
            )
            means.append(mean)
            rhos.append(rho)
        return np.concatenate([v[:K], *means, *rhos])

    def mean(self, v):
        """E_q[θ] = Σ_k π_k μ_k."""
        logits, mean, _ = self.split(v)
        return jax.nn.softmax(logits) @ mean


def _grow_gaussian(mean, rho, fill_mean, fill_rho, growth):
    """Mean-field Gaussian coordinates carried over to the grown θ.

    Mapped coordinates keep their mean (shifted where columns split one)
    and their scale, widened by √k where k columns split one coordinate,
    so that their mean has the old variance; fresh ones take ``fill``.
    """
    mean = growth.embed(np.asarray(mean, np.float32), fill_mean)
    std = np.asarray(jax.nn.softplus(np.asarray(rho, np.float32)))
    m = growth.mapped
    grown_std = std[np.asarray(growth.source)[m]] / np.sqrt(np.asarray(growth.weight)[m])
    rho = np.array(fill_rho, np.float32)
    rho[m] = _inverse_softplus(grown_std.astype(np.float64)).astype(np.float32)
    return mean, rho


def _expected_nll(model, thetas, X, y, w):
    """Monte Carlo E_q[nll(θ)] over the rows of ``thetas``."""
    return jnp.mean(jax.vmap(model.nll, in_axes=(0, None, None, None))(thetas, X, y, w))


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class VariationalState:
    """q_{t-1}, the prior of the next task, and where its optimisation starts.

    Attributes
    ----------
    prior : array
        The flat variational parameters of q_{t-1} (q_0: the Gaussian prior).
    posterior : array
        The flat variational parameters the next task starts from: q_{t-1}
        itself after a task, the initialisation before the first.
    low, high : arrays of shape (n_features,) or None
        The box of G-SFSVI's inducing points (None for parameter-space VI).
    """

    prior: jax.Array
    posterior: jax.Array
    low: object = None
    high: object = None


@consolidation(static=("family", "n_samples"))
class Variational(Consolidation):
    """Parameter-space sequential VI (G-VCL, GM-VCL): KL(q ‖ q_{t-1}).

    Not MAP: the trained parameters are the variational parameters v of
    q_t, the data term is E_q[nll_t(θ)] and the penalty KL(q ‖ q_{t-1}),
    both Monte Carlo estimates on the same reparametrised samples (a fresh
    key per step); q_t becomes the next task's prior.

    Parameters
    ----------
    family : Gaussian or GaussianMixture
        The posterior's family and the layout of v (static).
    n_samples : int
        Monte Carlo samples of θ per minibatch step (static).
    """

    family: object
    n_samples: int

    def init(self, model, prior_precision, theta0, key):
        n = self.family.n_components
        extra = [np.asarray(model.network.init(k)) for k in jax.random.split(key, n - 1)] \
            if n > 1 else []  # one component: no draw, θ_0 alone
        start = self.family.init(np.stack([np.asarray(theta0), *extra]))
        return VariationalState(self.family.prior(prior_precision), start)

    def _samples(self, params, key):
        return self.family.sample(params, key, self.n_samples)

    def data_term(self, model, params, X, y, w, key):
        return _expected_nll(model, self._samples(params, key), X, y, w)

    def penalty(self, state, params, key):
        return self.family.kl(params, state.prior, self._samples(params, key))

    def start(self, state, theta):
        return state.posterior

    def fold(self, model, state, task, key):
        return VariationalState(task.end, task.end, state.low, state.high)

    def point_estimate(self, state, params):
        return self.family.mean(params)

    def grow(self, state, growth, key):
        """q_{t-1} and the next start grown by the prior for the new rows.

        The mapped coordinates keep their means and scales (see
        ``_grow_gaussian``). In q_{t-1}, the
        prior of the next task, the new coordinates are the prior
        N(anchor, 1/precision) (``Growth.anchor``: zero, or a new
        unseen-classes output's old values); where the next task starts
        they are the grown θ's (a fresh initialisation, or the anchor) with
        σ = softplus(-2), the same for every mixture component.
        """
        family = replace(self.family, n_params=growth.n_params)
        theta = np.asarray(growth.theta, np.float32)
        fill = family.prior(growth.prior_precision, growth.anchor)
        prior = self.family.grow(state.prior, fill, growth)
        start = family.init(np.stack([theta] * family.n_components))
        posterior = self.family.grow(state.posterior, start, growth)
        return VariationalState(prior, posterior, state.low, state.high)

    def task_keys(self, key):
        return jax.random.fold_in(key, 0), key


@consolidation(static=("family", "n_samples", "n_inducing", "network"))
class FunctionSpace(Variational):
    """Sequential function-space VI (G-SFSVI): E_q[nll] and a KL over outputs.

    The KL is between the distributions of the network's outputs (logits,
    before the final activation) at M inducing points X_C, drawn afresh at
    every step uniformly in the box [low, high] per feature. Each
    distribution is the Gaussian of the network linearised at its mean
    parameters (Rudner et al., 2022): f(X_C) ~ N(f(X_C; μ), J diag(σ²) Jᵀ)
    with J = ∂f(X_C; θ)/∂θ at μ; only the diagonal of the covariance (one
    variance per inducing point and output) is kept, so the KL is the
    closed form :func:`gaussian_kl` over M × n_outputs coordinates.

    Parameters
    ----------
    family : Gaussian
    n_samples : int
        Monte Carlo samples of θ per step for the expected NLL.
    n_inducing : int
        M, inducing points per step.
    network : MLP
        The network whose outputs are compared (static).
    low, high : arrays of shape (n_features,) or None
        A fixed box; None widens the box to every task's data seen so far.
    """

    n_inducing: int = 16
    network: object = None
    low: object = None
    high: object = None

    def prepare(self, state, X, y, sample_weight):
        if self.low is not None:
            low, high = self.low, self.high
        else:
            low, high = X.min(axis=0), X.max(axis=0)
            if state.low is not None:
                low, high = np.minimum(low, state.low), np.maximum(high, state.high)
        low, high = np.array(low, np.float32), np.array(high, np.float32)
        return VariationalState(state.prior, state.posterior, low, high), X, y, sample_weight

    def output_moments(self, v, X_inducing):
        """Mean and variance of the linearised outputs, each (M, n_outputs)."""
        mean, std = self.family.split(v)

        def outputs(theta):
            return self.network.apply(theta, X_inducing)

        jacobian = jax.jacrev(outputs)(mean)  # (M, n_outputs, n_params)
        return outputs(mean), (jacobian**2) @ (std**2)

    def data_term(self, model, params, X, y, w, key):
        sample_key, _ = jax.random.split(key)
        return _expected_nll(model, self._samples(params, sample_key), X, y, w)

    def penalty(self, state, params, key):
        _, inducing_key = jax.random.split(key)
        X_inducing = jax.random.uniform(
            inducing_key, (self.n_inducing, state.low.shape[0]), params.dtype,
            state.low, state.high,
        )
        mean_q, var_q = self.output_moments(params, X_inducing)
        mean_p, var_p = self.output_moments(state.prior, X_inducing)
        return gaussian_kl(mean_q, var_q, mean_p, var_p)
