"""The shared optimisation loop: Adam, one-cycle schedule, minibatches.

One task is learned by :func:`minimize`, a single jitted computation:
``lax.scan`` over epochs, and inside each epoch over shuffled minibatches.
:func:`minimize_stepwise` runs the very same steps, each jitted, from a
Python loop: XLA:CPU runs convolutions several times slower inside a
compiled loop body than outside one (jax-ml/jax#12868; measured here: 294
vs 44 ms per minibatch step of ``cnn4``), so convolutional networks train
stepwise, while the small dense networks of the classifiers, whose steps
cost microseconds, keep the single compiled loop.
The method-specific part is the *objective*, a hashable callable (a frozen
dataclass) passed as a static argument, so that every estimator with the
same network and method reuses one compiled loop across tasks, λ values
and estimator instances; only shapes trigger a new compilation.

The objective returns two terms for a minibatch: the data term (the NLL of
the minibatch, or for variational methods its expectation) and the
penalty (the stand-in for L_{t-1}). The loop divides the penalty by the
number of minibatches, so that one epoch adds up to one full loss
(paper, section II-B, step 2).
"""

from functools import partial
from math import ceil

import jax
import jax.numpy as jnp
import optax

__all__ = ["minimize", "minimize_stepwise", "n_minibatches", "minibatch_indices"]


def n_minibatches(n_samples, batch_size):
    """Number of minibatches in one epoch; the last one may be short."""
    return ceil(n_samples / min(batch_size, n_samples))


def minibatch_indices(key, n_samples, batch_size):
    """Shuffled minibatch indices and a mask for the short last batch.

    Returns
    -------
    idx : int array of shape (n_batches, batch_size)
    mask : float array of shape (n_batches, batch_size)
        1 for real samples, 0 for the padding of the last minibatch.
    """
    batch_size = min(batch_size, n_samples)
    n_batches = n_minibatches(n_samples, batch_size)
    n_pad = n_batches * batch_size - n_samples
    order = jax.random.permutation(key, n_samples)
    idx = jnp.concatenate([order, jnp.zeros(n_pad, dtype=order.dtype)])
    mask = jnp.concatenate([jnp.ones(n_samples), jnp.zeros(n_pad)])
    return idx.reshape(n_batches, batch_size), mask.reshape(n_batches, batch_size)


def _optimiser(n_steps, learning_rate):
    """Adam with the cosine one-cycle schedule over ``n_steps`` steps."""
    return optax.adam(optax.cosine_onecycle_schedule(n_steps, learning_rate))


def _step(objective, aux, X, y, weights, optimiser, n_batches, track_path, carry, batch):
    """One Adam step on one minibatch: the step both drivers share.

    ``carry = (params, opt_state, path)`` and ``batch = (idx, mask,
    step_key)``; returns the new carry and the minibatch's loss, data term
    plus the penalty divided by the number of minibatches.
    """

    def split_loss(params, Xb, yb, wb, step_key):
        data, penalty = objective(params, aux, Xb, yb, wb, step_key)
        return data, penalty / n_batches

    def total_loss(params, *batch_args):
        data, penalty = split_loss(params, *batch_args)
        return data + penalty

    params, opt_state, path = carry
    idx, mask, step_key = batch
    args = (X[idx], y[idx], weights[idx] * mask, step_key)
    if track_path:
        data_grad = jax.grad(lambda p: split_loss(p, *args)[0])(params)
        penalty_grad = jax.grad(lambda p: split_loss(p, *args)[1])(params)
        grads = jax.tree.map(jnp.add, data_grad, penalty_grad)
        loss = total_loss(params, *args)
    else:
        loss, grads = jax.value_and_grad(total_loss)(params, *args)
    updates, opt_state = optimiser.update(grads, opt_state, params)
    new_params = optax.apply_updates(params, updates)
    if track_path:
        path = jax.tree.map(lambda w, g, d: w - g * d, path, data_grad, updates)
    return (new_params, opt_state, path), loss


def _epoch_batches(epoch_key, n_samples, batch_size):
    """An epoch's shuffled minibatches: (idx, mask, one key per step)."""
    shuffle_key, steps_key = jax.random.split(epoch_key)
    idx, mask = minibatch_indices(shuffle_key, n_samples, batch_size)
    return idx, mask, jax.random.split(steps_key, idx.shape[0])


@partial(jax.jit, static_argnames=("objective", "n_epochs", "batch_size", "track_path"))
def minimize(
    objective,
    theta,
    aux,
    X,
    y,
    weights,
    key,
    learning_rate,
    *,
    n_epochs,
    batch_size,
    track_path=False,
):
    """Learn one task: Adam with a cosine one-cycle schedule over minibatches.

    Parameters
    ----------
    objective : hashable callable
        ``objective(theta, aux, X_batch, y_batch, w_batch, key) ->
        (data_term, penalty_term)``, both scalars.
    theta : array of shape (n_params,)
        Starting point (the previous task's solution, or the
        initialisation). Any pytree works; SI's path needs an array.
    aux : pytree
        Everything else the objective needs (the consolidation, λ, ...);
        dynamic, so changing it does not recompile.
    X : array of shape (n_samples, ...)
    y : int array of shape (n_samples,)
    weights : array of shape (n_samples,)
        Per-sample likelihood weights.
    key : PRNG key
        Shuffles the minibatches; also handed to the objective (one fresh
        key per step) for Monte Carlo estimates.
    learning_rate : float
        Peak of the one-cycle schedule (the paper's base learning rate).
    n_epochs, batch_size : int
        The schedule runs over ``n_epochs × n_batches`` steps.
    track_path : bool, default=False
        Also return SI's path integral ``Σ_steps -g·Δθ`` per parameter,
        with g the gradient of the data term alone (Zenke et al., 2017).

    Returns
    -------
    theta : array like the input
        Parameters after the last step; the optimiser state is dropped,
        so the next task starts Adam afresh.
    epoch_losses : array of shape (n_epochs,)
        Sum over each epoch's minibatches of data term + scaled penalty.
    path : array like theta, or None
        The path integral when ``track_path`` is set.
    """
    n_samples = X.shape[0]
    n_batches = n_minibatches(n_samples, batch_size)
    optimiser = _optimiser(n_epochs * n_batches, learning_rate)
    step = partial(_step, objective, aux, X, y, weights, optimiser, n_batches, track_path)

    def epoch(carry, epoch_key):
        batches = _epoch_batches(epoch_key, n_samples, batch_size)
        carry, losses = jax.lax.scan(step, carry, batches)
        return carry, losses.sum()

    path0 = jax.tree.map(jnp.zeros_like, theta) if track_path else None
    carry0 = (theta, optimiser.init(theta), path0)
    (theta, _, path), epoch_losses = jax.lax.scan(
        epoch, carry0, jax.random.split(key, n_epochs)
    )
    return theta, epoch_losses, path


@partial(jax.jit, static_argnames=("objective", "n_steps", "n_batches", "track_path"))
def _jitted_step(objective, aux, X, y, weights, learning_rate, carry, batch, *,
                 n_steps, n_batches, track_path):
    optimiser = _optimiser(n_steps, learning_rate)
    return _step(objective, aux, X, y, weights, optimiser, n_batches, track_path, carry, batch)


_jitted_epoch_batches = jax.jit(_epoch_batches, static_argnames=("n_samples", "batch_size"))


def minimize_stepwise(
    objective,
    theta,
    aux,
    X,
    y,
    weights,
    key,
    learning_rate,
    *,
    n_epochs,
    batch_size,
    track_path=False,
    on_epoch=None,
):
    """:func:`minimize`, one jitted step per minibatch from a Python loop.

    The same steps, minibatches and keys as :func:`minimize`, so the
    result is the same up to floating-point rounding; for networks whose
    operations XLA:CPU runs slowly inside a compiled loop (convolutions).
    The data are moved to the device once.

    Parameters
    ----------
    objective, theta, aux, X, y, weights, key, learning_rate, n_epochs, batch_size, track_path
        As for :func:`minimize`.
    on_epoch : callable, default=None
        Called as ``on_epoch(epoch, loss)`` after each epoch (counted from
        1), e.g. to print the progress of a long pre-training.

    Returns
    -------
    theta, epoch_losses, path
        As for :func:`minimize`.
    """
    X, y, weights = jnp.asarray(X), jnp.asarray(y), jnp.asarray(weights)
    n_samples = X.shape[0]
    n_batches = n_minibatches(n_samples, batch_size)
    step = partial(
        _jitted_step, objective, aux, X, y, weights, learning_rate,
        n_steps=n_epochs * n_batches, n_batches=n_batches, track_path=track_path,
    )
    path0 = jax.tree.map(jnp.zeros_like, theta) if track_path else None
    carry = (theta, _optimiser(n_epochs * n_batches, learning_rate).init(theta), path0)
    epoch_losses = []
    for epoch, epoch_key in enumerate(jax.random.split(key, n_epochs), start=1):
        idx, mask, step_keys = _jitted_epoch_batches(
            epoch_key, n_samples=n_samples, batch_size=batch_size
        )
        losses = []
        for batch in zip(idx, mask, step_keys):
            carry, loss = step(carry, batch)
            losses.append(loss)
        epoch_losses.append(jnp.sum(jnp.stack(losses)))
        if on_epoch is not None:
            on_epoch(epoch, float(epoch_losses[-1]))
    theta, _, path = carry
    return theta, jnp.stack(epoch_losses), path
