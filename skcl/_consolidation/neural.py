"""Neural consolidation: a network κ(θ; φ) stands in for L_{t-1} (paper, II-C).

After task t the consolidator is fitted to the current approximate total
loss, ``target(θ) = scale · previous.penalty(θ) + nll_t(θ)`` (for task 1
the previous penalty is the Gaussian prior and scale = 1; afterwards it is
the previous consolidator and scale = λ, eq. 5), on points θ drawn
uniformly in the ball of radius r around θ*_t, by minimising the
L2-regularised Huber loss (eq. 6)

    ½ β ‖φ‖² + Σ_{i=1..n} huber(κ(θ_i; φ) − target(θ_i)).

The whole fit is one jitted computation: ``lax.scan`` over the optimiser
steps, each drawing fresh ball samples and evaluating the target over the
task's data with ``vmap`` over the samples and ``lax.scan`` over chunks
of the data.
"""

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import optax

from .._networks import MLP

__all__ = ["NeuralConsolidation", "fit_consolidator", "ball_sample", "target_values"]


@partial(
    jax.tree_util.register_dataclass, data_fields=["phi"], meta_fields=["consolidator"]
)
@dataclass(frozen=True)
class NeuralConsolidation:
    """κ(θ; φ), a fitted consolidator network, as a penalty.

    Attributes
    ----------
    phi : array of shape (consolidator.n_params,)
        φ*_t, the consolidator's flat parameters.
    consolidator : MLP
        ``MLP(n_params, hidden_layer_sizes, 1)`` on the flat θ (static).
    """

    phi: jax.Array
    consolidator: MLP

    def penalty(self, theta):
        """κ(θ; φ), shape ()."""
        return self.consolidator.apply(self.phi, theta[None, :])[0, 0]


def ball_sample(key, center, radius, n_points):
    """n points uniform in the Euclidean ball of ``radius`` around ``center``.

    Returns
    -------
    array of shape (n_points, center.size)
    """
    # A uniform direction (a normalised standard normal) times a radius
    # with P(R ≤ s) = (s/r)^d, i.e. r·U^(1/d): exactly uniform in the ball,
    # and much cheaper to compile than jax.random.ball's gamma sampler.
    direction_key, radius_key = jax.random.split(key)
    d = center.size
    z = jax.random.normal(direction_key, (n_points, d), center.dtype)
    direction = z / jnp.linalg.norm(z, axis=1, keepdims=True)
    u = jax.random.uniform(radius_key, (n_points, 1), center.dtype)
    return center + radius * u ** (1.0 / d) * direction


def _target_values(objective, previous, scale, thetas, X, y, w, chunk_size):
    """``scale·previous.penalty(θ) + nll(θ)`` for each row of ``thetas``.

    The NLL is summed over the whole task, in chunks of ``chunk_size``
    samples so that memory stays bounded (n_points × chunk × n_outputs).
    """
    n_samples = X.shape[0]
    chunk_size = min(chunk_size, n_samples)
    n_chunks = -(-n_samples // chunk_size)
    n_pad = n_chunks * chunk_size - n_samples
    idx = jnp.concatenate([jnp.arange(n_samples), jnp.zeros(n_pad, dtype=int)])
    mask = jnp.concatenate([jnp.ones(n_samples), jnp.zeros(n_pad)])
    idx, mask = idx.reshape(n_chunks, chunk_size), mask.reshape(n_chunks, chunk_size)

    def add_chunk(total, chunk):
        i, m = chunk
        nll = jax.vmap(objective.data_term, in_axes=(0, None, None, None))(
            thetas, X[i], y[i], w[i] * m
        )
        return total + nll, None

    nll, _ = jax.lax.scan(add_chunk, jnp.zeros(thetas.shape[0], thetas.dtype), (idx, mask))
    return scale * jax.vmap(previous.penalty)(thetas) + nll


@partial(
    jax.jit,
    static_argnames=("objective", "consolidator", "n_steps", "n_points", "chunk_size"),
)
def fit_consolidator(
    objective,
    consolidator,
    phi,
    previous,
    scale,
    center,
    radius,
    X,
    y,
    weights,
    key,
    learning_rate,
    l2,
    *,
    n_steps,
    n_points,
    chunk_size=1024,
):
    """Fit κ(·; φ) to the approximate total loss around θ*_t (eq. 6).

    Parameters
    ----------
    objective : MAPObjective
        Supplies ``data_term(theta, X, y, w)``, the NLL of a batch.
    consolidator : MLP
        The consolidator network (static).
    phi : array of shape (consolidator.n_params,)
        Starting φ: the previous task's φ*_{t-1} (warm start) or a fresh
        initialisation.
    previous : pytree with ``penalty(theta)``
        The stand-in for L_{t-1} used while learning task t (the prior on
        task 1, the previous :class:`NeuralConsolidation` afterwards).
    scale : float
        Its factor: 1 for the prior, λ afterwards.
    center : array of shape (n_params,)
        θ*_t, the centre of the ball.
    radius : float
        r, the radius of the ball.
    X, y, weights : arrays of length n_samples
        The task's data and likelihood weights.
    key : PRNG key
        Draws the ball samples (a fresh sample of n points per step).
    learning_rate : float
        Peak learning rate of Adam's cosine one-cycle schedule.
    l2 : float
        β, the weight of ½‖φ‖².
    n_steps : int
        Number of Adam steps.
    n_points : int
        n, the ball samples per step.
    chunk_size : int, default=1024
        Samples per chunk of the NLL evaluation.

    Returns
    -------
    phi : array of shape (consolidator.n_params,)
        φ*_t.
    losses : array of shape (n_steps,)
        The consolidator loss (eq. 6) at each step.
    """
    optimiser = optax.adam(optax.cosine_onecycle_schedule(n_steps, learning_rate))

    def consolidator_loss(phi, thetas, targets):
        predictions = consolidator.apply(phi, thetas)[:, 0]
        huber = optax.huber_loss(predictions, targets, delta=1.0)
        return 0.5 * l2 * phi @ phi + jnp.sum(huber)

    def step(carry, step_key):
        phi, opt_state = carry
        thetas = ball_sample(step_key, center, radius, n_points)
        targets = _target_values(objective, previous, scale, thetas, X, y, weights, chunk_size)
        loss, grad = jax.value_and_grad(consolidator_loss)(phi, thetas, targets)
        updates, opt_state = optimiser.update(grad, opt_state, phi)
        return (optax.apply_updates(phi, updates), opt_state), loss

    (phi, _), losses = jax.lax.scan(
        step, (phi, optimiser.init(phi)), jax.random.split(key, n_steps)
    )
    return phi, losses


def target_values(objective, previous, scale, thetas, X, y, weights, chunk_size=1024):
    """The consolidator's target at given points (jitted; for checks and tests).

    Parameters
    ----------
    thetas : array of shape (n_points, n_params)

    Returns
    -------
    array of shape (n_points,)
    """
    return _jit_target_values(objective, previous, scale, thetas, X, y, weights, chunk_size)


_jit_target_values = jax.jit(_target_values, static_argnames=("objective", "chunk_size"))
