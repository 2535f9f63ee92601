"""Neural consolidation: a network κ(θ; φ) stands in for L_{t-1} (paper, II-C).

After task t the consolidator is fitted to the current approximate total
loss, ``target(θ) = penalty(θ) + nll_t(θ)`` with the penalty that stood in
for L_{t-1} while task t was learned (the Gaussian prior on task 1,
λ·κ(θ; φ*_{t-1}) afterwards, eq. 5), on points θ drawn
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
import numpy as np
import optax

from ..networks import MLP
from .base import Consolidation, consolidation
from .memo import FitMemo, digest
from .quadratic import Prior, prior_state, quadratic_penalty

__all__ = [
    "FITS", "Neural", "NeuralState", "ball_sample", "fit_consolidator", "fit_consolidator_once",
    "target_values",
]


@partial(
    jax.tree_util.register_dataclass,
    data_fields=["prior", "phi", "fit_losses"],
    meta_fields=["consolidator"],
)
@dataclass(frozen=True)
class NeuralState:
    """The prior, then κ(θ; φ*_t), a fitted consolidator network.

    Attributes
    ----------
    prior : QuadraticState
        L_0, the stand-in while the first task is learned.
    phi : array of shape (consolidator.n_params,) or None
        φ*_t, the consolidator's flat parameters; None before the first
        task is folded in.
    fit_losses : array of shape (n_steps,) or None
        The consolidator loss (eq. 6) at each step of the last fit.
    consolidator : MLP or None
        ``MLP(n_params, hidden_layer_sizes, 1)`` on the flat θ (static).
    """

    prior: object
    phi: object = None
    fit_losses: object = None
    consolidator: MLP = None

    def kappa(self, theta):
        """κ(θ; φ*_t), shape ()."""
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


def _target_values(model, previous, state, thetas, X, y, w, chunk_size, rows=None):
    """``previous.penalty(state, θ) + nll(θ)`` for each row of ``thetas``.

    The NLL is summed over the whole task, in chunks of ``chunk_size``
    samples so that memory stays bounded (n_points × chunk × n_outputs);
    with ``rows`` (m indices drawn uniformly), over those rows only,
    scaled by n/m: an unbiased estimate of the whole task's sum.
    """
    if rows is not None:
        w = w[rows] * (X.shape[0] / rows.shape[0])
        X, y = X[rows], y[rows]
    n_samples = X.shape[0]
    chunk_size = min(chunk_size, n_samples)
    n_chunks = -(-n_samples // chunk_size)
    n_pad = n_chunks * chunk_size - n_samples
    idx = jnp.concatenate([jnp.arange(n_samples), jnp.zeros(n_pad, dtype=int)])
    mask = jnp.concatenate([jnp.ones(n_samples), jnp.zeros(n_pad)])
    idx, mask = idx.reshape(n_chunks, chunk_size), mask.reshape(n_chunks, chunk_size)

    def add_chunk(total, chunk):
        i, m = chunk
        nll = jax.vmap(model.nll, in_axes=(0, None, None, None))(thetas, X[i], y[i], w[i] * m)
        return total + nll, None

    nll, _ = jax.lax.scan(add_chunk, jnp.zeros(thetas.shape[0], thetas.dtype), (idx, mask))
    penalty = jax.vmap(lambda theta: previous.penalty(state, theta, None))(thetas)
    return penalty + nll


@partial(
    jax.jit,
    static_argnames=("model", "consolidator", "n_steps", "n_points", "target_size", "chunk_size"),
)
def fit_consolidator(
    model,
    consolidator,
    phi,
    previous,
    state,
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
    target_size=None,
    chunk_size=1024,
):
    """Fit κ(·; φ) to the approximate total loss around θ*_t (eq. 6).

    Parameters
    ----------
    model : skcl._gradient.model.Model
        Supplies ``nll(theta, X, y, w)``, the NLL of a batch.
    consolidator : MLP
        The consolidator network (static).
    phi : array of shape (consolidator.n_params,)
        Starting φ: the previous task's φ*_{t-1} (warm start) or a fresh
        initialisation.
    previous : Consolidation
        The method whose penalty stood in for L_{t-1} while task t was
        learned, with ``state`` its state: the target is
        ``previous.penalty(state, θ) + nll_t(θ)`` (the prior on task 1,
        λ·κ(θ; φ*_{t-1}) afterwards).
    state : pytree
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
    target_size : int, default=None
        None (the paper): the target's NLL sums over every sample of the
        task at every step. An integer m below the task's size: over m
        samples drawn afresh at every step, scaled by n_samples/m, an
        unbiased and n_samples/m times cheaper estimate (the m samples
        are drawn uniformly, with replacement).
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
        rows = None
        if target_size is not None and target_size < X.shape[0]:
            step_key, rows_key = jax.random.split(step_key)
            # Drawn with replacement: as unbiased, and far cheaper to draw
            # than without (8 ms for 1,024 of 10,000 rows, a permutation).
            rows = jax.random.randint(rows_key, (target_size,), 0, X.shape[0])
        thetas = ball_sample(step_key, center, radius, n_points)
        targets = _target_values(model, previous, state, thetas, X, y, weights, chunk_size, rows)
        loss, grad = jax.value_and_grad(consolidator_loss)(phi, thetas, targets)
        updates, opt_state = optimiser.update(grad, opt_state, phi)
        return (optax.apply_updates(phi, updates), opt_state), loss

    (phi, _), losses = jax.lax.scan(
        step, (phi, optimiser.init(phi)), jax.random.split(key, n_steps)
    )
    return phi, losses


# Consolidator fits asked for again with identical inputs (see ``memo``):
# 256 MB holds about 270 fits of κ on 650 parameters, 900 on 15.
FITS = FitMemo(256 * 2**20)


def fit_consolidator_once(model, consolidator, phi, previous, state, center, radius, X, y,
                          weights, key, learning_rate, l2, *, n_steps, n_points, target_size=None):
    """:func:`fit_consolidator`, computed once per process for the same inputs.

    Returns the same ``(phi, losses)`` (as read-only host arrays) as a new
    fit would, from :data:`FITS` when an identical fit was done before.
    """
    args = (model, consolidator, phi, previous, state, center, radius, X, y, weights, key,
            learning_rate, l2)
    static = dict(n_steps=n_steps, n_points=n_points, target_size=target_size)
    memo_key = (model, consolidator, n_steps, n_points, target_size,
                digest(phi, previous, state, center, radius, X, y, weights, key, learning_rate, l2))
    return FITS.get_or_compute(memo_key, lambda: fit_consolidator(*args, **static))


def target_values(model, previous, state, thetas, X, y, weights, chunk_size=1024, rows=None):
    """The consolidator's target at given points (jitted; for checks and tests).

    Parameters
    ----------
    thetas : array of shape (n_points, n_params)
    rows : int array of shape (m,), default=None
        Sum the NLL over these samples only, scaled by n_samples/m (see
        ``target_size`` of :func:`fit_consolidator`).

    Returns
    -------
    array of shape (n_points,)
    """
    return _jit_target_values(model, previous, state, thetas, X, y, weights, chunk_size, rows)


_jit_target_values = jax.jit(_target_values, static_argnames=("model", "chunk_size"))


@consolidation(static=("hidden_layer_sizes", "n_steps", "n_points", "target_size"))
class Neural(Consolidation):
    """λ·κ(θ; φ*_{t-1}): a network fitted to the previous loss (NC).

    Parameters
    ----------
    alpha : float
        λ.
    radius : float
        r, the radius of the ball the consolidator is fitted on.
    learning_rate : float
        Peak learning rate of the consolidator's one-cycle Adam.
    l2 : float
        β, its L2 regularisation.
    hidden_layer_sizes : tuple of int
        κ's hidden layers (static).
    n_steps : int
        Adam steps of each fit (static).
    n_points : int
        Ball samples per step (static).
    target_size : int or None
        Samples of the task in each step's target, None for all of them
        (the paper; static).
    """

    fold_can_wait = True  # the consolidator it fits serves the next task only

    alpha: float
    radius: float
    learning_rate: float
    l2: float
    hidden_layer_sizes: tuple = (256, 256)
    n_steps: int = 1000
    n_points: int = 64
    target_size: int = None

    def init(self, model, prior_precision, theta0, key):
        return NeuralState(prior_state(model.network.n_params, prior_precision))

    def penalty(self, state, params, key):
        if state.phi is None:
            return quadratic_penalty(state.prior, params, 1.0)
        return self.alpha * state.kappa(params)

    def grow(self, state, growth, key):
        """Refit κ on the grown θ to κ_old(θ_old) + ½·precision·‖θ_new‖².

        κ's first layer is embedded first (W₀ ← Eᵀ W₀, b₀ ← b₀ + W₀ᵀ offset,
        zero weights from the fresh coordinates), which reproduces
        κ_old(E θ + offset) exactly on the grown vector;
        the refit, on ball samples around the grown θ* as after a task
        but with no data term, then adds the prior's block for the new
        output rows (centred at ``growth.anchor``). The new φ is fitted
        with the consolidator's own hyperparameters (steps, points,
        learning rate, β).
        """
        if state.phi is None:  # no task folded in yet: the prior alone
            return NeuralState(state.prior.grow(growth))
        n_old, n_new = growth.old_model.network.n_params, growth.n_params
        consolidator = MLP(n_new, self.hidden_layer_sizes, 1)
        phi = np.asarray(state.phi)
        width = state.consolidator.layer_sizes[1]
        W0 = phi[: n_old * width].reshape(n_old, width)
        b0 = phi[n_old * width : (n_old + 1) * width]
        m = growth.mapped
        first = np.zeros((n_new, width), phi.dtype)
        first[m] = W0[np.asarray(growth.source)[m]] * np.asarray(growth.weight)[m, None]
        b0 = b0 + (np.asarray(growth.offset) @ W0).astype(phi.dtype)
        phi = np.concatenate([first.ravel(), b0, phi[(n_old + 1) * width :]])
        new = growth.new_coordinates
        target = _GrownTarget(
            np.asarray(growth.source)[m], np.asarray(growth.weight, np.float32)[m], m,
            np.asarray(growth.offset, np.float32), new, np.asarray(growth.anchor)[new],
            float(growth.prior_precision),
        )
        n_features = growth.new_model.network.n_features
        # No data term: one sample of weight zero keeps fit_consolidator's shapes.
        X = np.zeros((1, n_features), np.float32)
        phi, losses = fit_consolidator_once(
            growth.new_model, consolidator, phi, target, state,
            np.asarray(growth.theta), self.radius, X, np.zeros(1, np.int32),
            np.zeros(1, np.float32), key, self.learning_rate, self.l2,
            n_steps=self.n_steps, n_points=self.n_points,
        )
        return NeuralState(state.prior.grow(growth), phi, losses, consolidator)

    def task_keys(self, key):
        train_key, fit_key, init_key = jax.random.split(key, 3)
        return train_key, (fit_key, init_key)

    def fold(self, model, state, task, key):
        fit_key, init_key = key
        consolidator = MLP(model.network.n_params, self.hidden_layer_sizes, 1)
        if state.phi is not None and state.consolidator == consolidator:
            phi = state.phi  # warm start from φ*_{t-1}
        else:
            phi = consolidator.init(init_key)
        # After task 1 the target is the prior plus nll_1, whatever λ is:
        # said so, the fit is one for every λ of a grid (see FITS).
        previous, target_state = (self, state) if state.phi is not None else (Prior(), state.prior)
        phi, losses = fit_consolidator_once(
            model, consolidator, phi, previous, target_state, task.end, self.radius,
            task.X, task.y, task.weights, fit_key, self.learning_rate, self.l2,
            n_steps=self.n_steps, n_points=self.n_points, target_size=self.target_size,
        )
        return NeuralState(state.prior, phi, losses, consolidator)


@consolidation()
class _GrownTarget(Consolidation):
    """The target of κ's refit after growth: κ_old(E θ + offset) plus the
    prior's precision on the fresh coordinates, centred at their anchors
    (``Growth.anchor``; used only as ``previous.penalty``)."""

    source: jax.Array
    weight: jax.Array
    mapped: jax.Array
    offset: jax.Array
    new_coordinates: jax.Array
    anchor: jax.Array
    precision: float

    def init(self, model, prior_precision, theta0, key):
        raise NotImplementedError

    def penalty(self, state, params, key):
        new = params[self.new_coordinates] - self.anchor
        old = self.offset.at[self.source].add(self.weight * params[self.mapped])
        return state.kappa(old) + 0.5 * self.precision * jnp.sum(new * new)

    def fold(self, model, state, task, key):
        raise NotImplementedError
