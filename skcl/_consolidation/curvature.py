"""How each quadratic method measures the curvature of a finished task.

* AQC: the exact Hessian of the task's NLL by automatic differentiation,
  the Jacobian of the gradient, summed over minibatches (paper, eq. 4).
* EWC: the diagonal of the Fisher information under the model's own
  predictive distribution, averaged over samples (Kirkpatrick et al.,
  2017, as in the paper's code).
* SI: the path integral of the task's optimisation over the squared
  distance travelled plus a damping ξ (Zenke et al., 2017).
"""

from functools import partial

import jax
import jax.numpy as jnp

from .. import _likelihoods

__all__ = ["nll_hessian", "fisher_diagonal", "path_importance"]


def _sequential_batches(n_samples, batch_size):
    """Unshuffled minibatch indices and padding mask (for sums over data)."""
    batch_size = min(batch_size, n_samples)
    n_batches = -(-n_samples // batch_size)
    n_pad = n_batches * batch_size - n_samples
    idx = jnp.concatenate([jnp.arange(n_samples), jnp.zeros(n_pad, dtype=int)])
    mask = jnp.concatenate([jnp.ones(n_samples), jnp.zeros(n_pad)])
    return idx.reshape(n_batches, batch_size), mask.reshape(n_batches, batch_size)


@partial(jax.jit, static_argnames=("objective", "batch_size"))
def nll_hessian(objective, theta, X, y, weights, *, batch_size):
    """H(nll_t)(θ*): exact Hessian of the task's NLL, summed over minibatches.

    Parameters
    ----------
    objective : MAPObjective
        Supplies ``data_term(theta, X, y, w)``, the minibatch NLL.
    theta : array of shape (n_params,)
        θ*_t, where the Hessian is taken.
    X, y, weights : arrays of length n_samples
        The task's data and likelihood weights.
    batch_size : int
        Samples per forward-over-reverse pass; bounds memory.

    Returns
    -------
    array of shape (n_params, n_params)
    """
    idx, mask = _sequential_batches(X.shape[0], batch_size)
    hessian = jax.jacfwd(jax.grad(objective.data_term))

    def add_batch(total, batch):
        i, m = batch
        return total + hessian(theta, X[i], y[i], weights[i] * m), None

    zero = jnp.zeros((theta.size, theta.size), theta.dtype)
    total, _ = jax.lax.scan(add_batch, zero, (idx, mask))
    return 0.5 * (total + total.T)  # exact up to rounding; keep it symmetric


@partial(jax.jit, static_argnames=("objective", "batch_size"))
def fisher_diagonal(objective, theta, X, y, weights, *, batch_size):
    """Diagonal Fisher information at θ*, averaged over the task's samples.

    ``F_k = (1/N) Σ_n w_n Σ_c p(c|x_n,θ) (∂ log p(c|x_n,θ) / ∂θ_k)²``: the
    expectation is over the model's own predictive distribution, not the
    observed labels (so ``y`` is unused but kept for a uniform signature).

    Returns
    -------
    array of shape (n_params,)
    """
    del y
    network, likelihood = objective.network, objective.likelihood

    def sample_log_probs(params, x):
        return _likelihoods.log_probs(likelihood, network.apply(params, x[None]))[0]

    def sample_fisher(x):
        logp = sample_log_probs(theta, x)
        jac = jax.jacrev(sample_log_probs)(theta, x)  # (n_classes, n_params)
        return jnp.exp(logp) @ (jac * jac)

    idx, mask = _sequential_batches(X.shape[0], batch_size)

    def add_batch(total, batch):
        i, m = batch
        per_sample = jax.vmap(sample_fisher)(X[i])
        return total + (weights[i] * m) @ per_sample, None

    total, _ = jax.lax.scan(add_batch, jnp.zeros_like(theta), (idx, mask))
    return total / X.shape[0]


def path_importance(path_integral, theta_start, theta_end, damping):
    """SI's per-parameter importance of one task.

    ``Ω_k = ω_k / ((θ_end,k − θ_start,k)² + ξ)`` with ``ω_k = Σ_steps
    −g_k Δθ_k`` the path integral of the data term's gradient along the
    task's optimisation (Zenke et al., 2017, eq. 5). ω_k is the loss
    decrease credited to parameter k, so it is non-negative when the
    optimiser descends.

    Parameters
    ----------
    path_integral : array of shape (n_params,)
        ω from :func:`skcl._training.minimize` with ``track_path=True``.
    theta_start, theta_end : arrays of shape (n_params,)
        Parameters before and after the task.
    damping : float
        ξ > 0, keeps Ω finite for parameters that barely moved.
    """
    delta = theta_end - theta_start
    return path_integral / (delta * delta + damping)
