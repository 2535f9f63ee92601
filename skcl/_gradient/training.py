"""The shared optimisation loop: Adam, one-cycle schedule, minibatches.

One task is learned by :func:`minimize`, a single jitted computation:
``lax.scan`` over epochs, and inside each epoch over shuffled minibatches.
:func:`minimize_stepwise` runs the very same steps, each jitted, from a
Python loop: XLA:CPU runs convolutions several times slower inside a
compiled loop body than outside one (jax-ml/jax#12868; measured here: 294
vs 44 ms per minibatch step of ``cnn4``), so convolutional networks train
stepwise, while the small dense networks of the classifiers, whose steps
cost microseconds, keep the single compiled loop.
The method-specific part is a *consolidation* (``skcl._gradient.consolidation``):
the loop asks it for the minibatch's data term and for the penalty (the
stand-in for L_{t-1}), and carries its per-step trace without looking
inside. The model (network and likelihood) is a hashable static argument
and the consolidation a pytree whose numbers (λ, ξ, ...) are traced, so
every estimator with the same network and method reuses one compiled loop
across tasks, λ values and estimator instances. The minibatch order and
the learning rate of every step are data too, drawn by small programs of
their own (the minibatches by one per padded size, the task's own size
being data to it), and small tasks come padded to a few sizes
(:func:`padded_size`), so that tasks of different sizes share the loop:
on small data, compiling it costs far more than running it.

The loop divides the penalty by the number of minibatches, so that one
epoch adds up to one full loss (paper, section II-B, step 2).
"""

from functools import partial
from math import ceil
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .compilation_cache import setup as _setup_compilation_cache

__all__ = [
    "Trained",
    "minimize",
    "minimize_epochwise",
    "minimize_stepwise",
    "n_minibatches",
    "minibatch_indices",
]


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


@partial(jax.jit, static_argnames=("n_steps", "n_slots"))
def learning_rates(learning_rate, *, n_steps, n_slots=None):
    """The cosine one-cycle schedule's learning rate at each of ``n_steps`` steps.

    optax's ``cosine_onecycle_schedule(n_steps, learning_rate)``, evaluated
    once per task in a small program of its own and handed to the training
    loop as data, so that tasks with different step counts share one
    compiled loop; zeros follow up to ``n_slots`` entries (a padded task's
    skipped steps).

    Returns
    -------
    array of shape (n_slots or n_steps,)
    """
    schedule = optax.cosine_onecycle_schedule(n_steps, learning_rate)
    rates = jax.vmap(schedule)(jnp.arange(n_steps))
    return rates if n_slots is None else jnp.pad(rates, (0, n_slots - n_steps))


def _optimiser(rates):
    """Adam whose step ``count`` uses ``rates[count]`` (see :func:`learning_rates`)."""
    return optax.chain(optax.scale_by_adam(), optax.scale_by_schedule(lambda count: -rates[count]))


def _initial_carry(consolidation, state, params, optimiser):
    """The carry of every driver at a task's start: (params, opt_state, trace)."""
    return params, optimiser.init(params), consolidation.init_trace(state, params)


def _step(model, consolidation, state, X, y, weights, optimiser, n_batches, carry, batch):
    """One Adam step on one minibatch: the step every driver shares.

    ``carry = (params, opt_state, trace)`` and ``batch = (idx, mask,
    step_key)``; returns the new carry and the minibatch's loss, data term
    plus the penalty divided by the number of minibatches. The two terms
    are differentiated apart (for the price of one gradient of their sum)
    because a consolidation's trace may need the data term's gradient
    alone (SI).
    """
    params, opt_state, trace = carry
    idx, mask, step_key = batch
    Xb, yb, wb = X[idx], y[idx], weights[idx] * mask

    def data_term(p):
        return consolidation.data_term(model, p, Xb, yb, wb, step_key)

    def penalty(p):
        return consolidation.penalty(state, p, step_key) / n_batches

    data, data_grad = jax.value_and_grad(data_term)(params)
    pen, penalty_grad = jax.value_and_grad(penalty)(params)
    grads = jax.tree.map(jnp.add, data_grad, penalty_grad)
    updates, opt_state = optimiser.update(grads, opt_state, params)
    trace = consolidation.update_trace(trace, params, data_grad, updates)
    return (optax.apply_updates(params, updates), opt_state, trace), data + pen


def _epoch_batches(epoch_key, n_samples, batch_size):
    """An epoch's shuffled minibatches: (idx, mask, one key per step)."""
    shuffle_key, steps_key = jax.random.split(epoch_key)
    idx, mask = minibatch_indices(shuffle_key, n_samples, batch_size)
    return idx, mask, jax.random.split(steps_key, idx.shape[0])


@partial(jax.jit, static_argnames=("n_samples", "batch_size", "n_epochs", "n_slots"))
def _all_epoch_batches(key, *, n_samples, batch_size, n_epochs, n_slots):
    """Every epoch's minibatches, stacked: (idx, mask, step_keys) with leading
    axes (n_epochs, n_slots); slots past the epoch's minibatches hold zeros.

    One program per task size; :func:`_padded_epoch_batches` gives the same
    arrays from one program per padded size."""
    # lax.map compiles faster than vmap here (0.55 against 0.9 s), with the same integers.
    idx, mask, keys = jax.lax.map(lambda k: _epoch_batches(k, n_samples, batch_size),
                                  jax.random.split(key, n_epochs))
    return tuple(_pad(a, 1, n_slots) for a in (idx, mask, keys))


def _shuffle_rounds(n_samples):
    """The sorting rounds of ``jax.random.permutation(key, n_samples)``.

    JAX's shuffle sorts by fresh 32-bit keys ``ceil(3 ln n / ln(2^32 - 1))``
    times (1 up to 1,625 elements, 2 up to 2.6 million).
    """
    return int(np.ceil(3 * np.log(max(1, n_samples)) / np.log(np.iinfo(np.uint32).max)))


@partial(jax.jit, static_argnames=("n_rows", "batch_size", "n_epochs", "n_slots", "n_rounds"))
def _padded_epoch_batches(key, n_samples, *, n_rows, batch_size, n_epochs, n_slots, n_rounds):
    """:func:`_all_epoch_batches`'s very arrays with ``n_samples`` as data.

    Compiling the minibatch draws costs as much as compiling a small task's
    training loop (0.5 s each on 2 cores), and a static ``n_samples`` gave
    one program per task size: joint training's growing union, CI Split
    Wine's 38, 45 and 30 rows. Here one program serves every task padded to
    ``n_rows`` rows. It redoes ``jax.random.permutation`` on ``n_rows``
    positions: with JAX's partitionable threefry (its default) the random
    bits of position i do not depend on the array's length, and the padded
    positions get the largest sort key, so the stable sort leaves them
    last and orders the real ones exactly as a permutation of
    ``n_samples`` would; the minibatch keys are a prefix of the same
    split. ``tests/test_training.py`` checks the arrays are identical.
    """
    positions = jnp.arange(n_rows)
    real = positions < n_samples
    largest = jnp.uint32(np.iinfo(np.uint32).max)
    n_batches = (n_samples + batch_size - 1) // batch_size
    flat = n_slots * batch_size

    def epoch(epoch_key):
        shuffle_key, steps_key = jax.random.split(epoch_key)
        order = positions
        for _ in range(n_rounds):
            shuffle_key, sort_key = jax.random.split(shuffle_key)
            bits = jax.random.bits(sort_key, (n_rows,), jnp.uint32)
            _, order = jax.lax.sort_key_val(jnp.where(real, bits, largest), order)
        order = jnp.pad(order, (0, flat - n_rows))
        in_task = jnp.arange(flat) < n_samples
        idx = jnp.where(in_task, order, 0).reshape(n_slots, batch_size)
        mask = in_task.astype(jnp.float32).reshape(n_slots, batch_size)
        keys = jax.random.split(steps_key, n_slots)
        keys = jnp.where((jnp.arange(n_slots) < n_batches)[:, None], keys, 0)
        return idx, mask, keys

    return jax.lax.map(epoch, jax.random.split(key, n_epochs))


def epoch_batches(key, *, n_samples, n_rows, batch_size, n_epochs, n_slots):
    """Every epoch's minibatches of a task of ``n_samples`` padded to ``n_rows``.

    One compiled program per padded size when JAX's threefry is
    partitionable (its default), else one per task size (the arrays are
    the same either way).
    """
    if n_samples <= PAD_MAX and jax.config.jax_threefry_partitionable:
        return _padded_epoch_batches(
            key, np.int32(n_samples), n_rows=n_rows, batch_size=batch_size,
            n_epochs=n_epochs, n_slots=n_slots, n_rounds=_shuffle_rounds(n_samples))
    return _all_epoch_batches(key, n_samples=n_samples, batch_size=batch_size,
                              n_epochs=n_epochs, n_slots=n_slots)


def _pad(a, axis, size):
    """``a`` with zeros appended along ``axis`` up to ``size`` (NumPy or JAX)."""
    missing = size - a.shape[axis]
    if missing == 0:
        return a
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, missing)
    return (jnp if isinstance(a, jax.Array) else np).pad(a, widths)


# Tasks of up to PAD_MAX samples are padded to a few row counts, so that the
# tasks of a sequence (CI Split Wine's 38, 45 and 30 rows; joint training's
# growing union) share one compiled loop: on small tasks compiling the loop
# costs far more than running it. Larger tasks are not padded: their
# compilation is a small part of their training.
PAD_MIN, PAD_MAX = 128, 4096


def padded_size(n_samples):
    """The row count a task of ``n_samples`` is padded to for training.

    The next power of two, at least ``PAD_MIN``, for tasks of at most
    ``PAD_MAX`` samples; larger tasks keep their size.
    """
    if n_samples > PAD_MAX:
        return n_samples
    return max(PAD_MIN, 1 << (n_samples - 1).bit_length())


class Trained(NamedTuple):
    """What :func:`minimize` and :func:`minimize_epochwise` return.

    ``params``: the parameters after the last step (the optimiser state
    is dropped, so the next task starts Adam afresh); ``epoch_losses``:
    the sum over each epoch's minibatches of data term plus scaled
    penalty, one entry per epoch run; ``trace``: the consolidation's
    trace after the last step (or None); ``start_loss``: the whole
    objective at the starting parameters, for recognising a run that
    blew up. :func:`minimize_stepwise` returns the first three.
    """

    params: Any
    epoch_losses: Any
    trace: Any
    start_loss: Any


class _Setup(NamedTuple):
    """A task's sizes and learning rates, as every driver sets them up."""

    n_samples: int
    batch_size: int  # at most n_samples
    n_batches: int  # minibatches per epoch
    n_rows: int  # the rows the task is padded to (n_samples when not padded)
    n_slots: int  # minibatch slots per epoch of the padded task
    rates: Any  # the learning rate of every step (slot)


def _set_up(n_samples, batch_size, learning_rate, n_epochs, *, pad=False):
    """What every driver does first: the compilation cache, sizes, the schedule.

    With ``pad`` (:func:`minimize`), the task is padded to
    :func:`padded_size` rows and the schedule to its minibatch slots.
    """
    _setup_compilation_cache()  # once per process, before the first compilation
    batch_size = min(batch_size, n_samples)
    n_batches = n_minibatches(n_samples, batch_size)
    if not pad:
        rates = learning_rates(learning_rate, n_steps=n_epochs * n_batches)
        return _Setup(n_samples, batch_size, n_batches, n_samples, n_batches, rates)
    n_rows = padded_size(n_samples)
    n_slots = n_minibatches(n_rows, batch_size)
    rates = learning_rates(learning_rate, n_steps=n_epochs * n_batches,
                           n_slots=n_epochs * n_slots)
    return _Setup(n_samples, batch_size, n_batches, n_rows, n_slots, rates)


def _epoch_by_epoch(setup, key, n_epochs, carry, run_epoch, on_epoch):
    """The Python loop over epochs of :func:`minimize_epochwise` and
    :func:`minimize_stepwise`: each epoch's minibatches, ``run_epoch(carry,
    batches) -> (carry, loss)``, then ``on_epoch(epoch, loss)``; a true
    return value stops the training there.

    Returns
    -------
    params, epoch_losses, trace
    """
    epoch_losses = []
    for epoch, epoch_key in enumerate(jax.random.split(key, n_epochs), start=1):
        batches = _jitted_epoch_batches(epoch_key, n_samples=setup.n_samples,
                                        batch_size=setup.batch_size)
        carry, loss = run_epoch(carry, batches)
        epoch_losses.append(loss)
        if on_epoch is not None and on_epoch(epoch, float(loss)):
            break
    params, _, trace = carry
    return params, jnp.stack(epoch_losses), trace


def minimize(
    model,
    consolidation,
    state,
    params,
    X,
    y,
    weights,
    key,
    learning_rate,
    *,
    n_epochs,
    batch_size,
):
    """Learn one task: Adam with a cosine one-cycle schedule over minibatches.

    Minimises Σ_batches [data term + penalty / n_batches] per epoch, the
    minibatch form of L̂_t(θ) = (stand-in for L_{t-1})(θ) + nll_t(θ).

    The minibatches are drawn first (a small program per task size); the
    training itself is one jitted program, ``lax.scan`` over epochs and
    minibatches, into which a small task comes padded (see
    :func:`padded_size`): the padded rows are never drawn, and the
    minibatch slots beyond the task's own are skipped, so the steps, and
    the result, are those of the task alone.

    Parameters
    ----------
    model : skcl._gradient.model.Model
        Network and likelihood (static).
    consolidation : Consolidation
        The method: supplies ``data_term``, ``penalty`` and the trace.
    state : pytree
        The consolidation's state (the stand-in for L_{t-1}).
    params : array of shape (n_params,)
        Starting point (the previous task's solution, or the
        initialisation); for variational methods the flat variational
        parameters.
    X : array of shape (n_samples, ...)
    y : int array of shape (n_samples,)
    weights : array of shape (n_samples,)
        Per-sample likelihood weights.
    key : PRNG key
        Shuffles the minibatches; also handed to the data term and the
        penalty (one fresh key per step) for Monte Carlo estimates.
    learning_rate : float
        Peak of the one-cycle schedule (the paper's base learning rate).
    n_epochs, batch_size : int
        The schedule runs over ``n_epochs × n_batches`` steps.

    Returns
    -------
    Trained
        ``(params, epoch_losses, trace, start_loss)``: the parameters
        after the last step (like the input), the loss of each of the
        ``n_epochs`` epochs, the consolidation's trace (or None), and the
        whole objective at the starting parameters, computed in the same
        compiled program.
    """
    setup = _set_up(X.shape[0], batch_size, learning_rate, n_epochs, pad=True)
    batches = epoch_batches(key, n_samples=setup.n_samples, n_rows=setup.n_rows,
                            batch_size=setup.batch_size, n_epochs=n_epochs, n_slots=setup.n_slots)
    X, y, weights = (_pad(a, 0, setup.n_rows) for a in (X, y, weights))
    return Trained(*_minimize(model, consolidation, state, params, X, y, weights, key,
                              setup.rates, batches, np.float32(setup.n_batches),
                              padded=setup.n_samples <= PAD_MAX))


@partial(jax.jit, static_argnames=("model", "padded"))
def _minimize(model, consolidation, state, params, X, y, weights, key, rates, batches, n_batches,
              *, padded):
    """:func:`minimize`'s compiled part, on padded data and minibatches."""
    optimiser = _optimiser(rates)
    epoch = partial(_epoch, model, consolidation, state, X, y, weights, optimiser, n_batches,
                    padded=padded)
    start_loss = _objective_value(model, consolidation, state, params, X, y, weights, key)
    carry0 = _initial_carry(consolidation, state, params, optimiser)
    (params, _, trace), epoch_losses = jax.lax.scan(epoch, carry0, batches)
    return params, epoch_losses, trace, start_loss


def _epoch(model, consolidation, state, X, y, weights, optimiser, n_batches, carry, batches, *,
           padded=False):
    """One epoch: a scan of :func:`_step` over the epoch's minibatches.

    ``batches = (idx, mask, step_keys)``, one row per minibatch slot; when
    ``padded``, the slots from ``n_batches`` on leave the carry as it is.
    Returns the carry and the sum of the minibatch losses; shared by
    :func:`minimize` (inside its scan over epochs) and
    :func:`minimize_epochwise` (jitted alone).
    """
    step = partial(_step, model, consolidation, state, X, y, weights, optimiser, n_batches)
    if not padded:
        carry, losses = jax.lax.scan(step, carry, batches)
        return carry, losses.sum()

    def skip(carry, batch):
        return carry, jnp.zeros((), X.dtype)

    def slot(carry, numbered):
        i, batch = numbered
        return jax.lax.cond(i < n_batches, step, skip, carry, batch)

    carry, losses = jax.lax.scan(slot, carry, (jnp.arange(batches[0].shape[0]), batches))
    return carry, losses.sum()


@partial(jax.jit, static_argnames=("model", "n_batches"))
def _jitted_step(model, consolidation, state, X, y, weights, rates, carry, batch,
                 *, n_batches):
    optimiser = _optimiser(rates)
    return _step(model, consolidation, state, X, y, weights, optimiser, n_batches, carry, batch)


_jitted_epoch_batches = jax.jit(_epoch_batches, static_argnames=("n_samples", "batch_size"))


@partial(jax.jit, static_argnames=("model", "n_batches"))
def _jitted_epoch(model, consolidation, state, X, y, weights, rates, carry,
                  batches, *, n_batches):
    return _epoch(model, consolidation, state, X, y, weights, _optimiser(rates),
                  n_batches, carry, batches)


_jitted_objective_value = jax.jit(lambda *args, model: _objective_value(model, *args),
                                  static_argnames=("model",))


def minimize_epochwise(
    model,
    consolidation,
    state,
    params,
    X,
    y,
    weights,
    key,
    learning_rate,
    *,
    n_epochs,
    batch_size,
    on_epoch,
):
    """:func:`minimize`, one jitted epoch at a time, with a callback after each.

    The same steps, minibatches, keys and schedule as :func:`minimize` (up
    to floating-point rounding, as XLA compiles an epoch alone), for a
    caller that watches the epochs or stops early.

    Parameters
    ----------
    model, consolidation, state, params, X, y, weights, key, learning_rate, n_epochs, batch_size
        As for :func:`minimize`.
    on_epoch : callable
        Called as ``on_epoch(epoch, loss)`` after each epoch (counted from
        1); a true return value stops the training there.

    Returns
    -------
    Trained
        As for :func:`minimize`; ``epoch_losses`` has one entry per epoch
        run.
    """
    setup = _set_up(X.shape[0], batch_size, learning_rate, n_epochs)
    X, y, weights = jnp.asarray(X), jnp.asarray(y), jnp.asarray(weights)
    start_loss = _jitted_objective_value(consolidation, state, params, X, y, weights, key,
                                         model=model)
    carry = _initial_carry(consolidation, state, params, _optimiser(setup.rates))
    run_epoch = partial(_jitted_epoch, model, consolidation, state, X, y, weights, setup.rates,
                        n_batches=setup.n_batches)
    return Trained(*_epoch_by_epoch(setup, key, n_epochs, carry, run_epoch, on_epoch),
                   start_loss)


def minimize_stepwise(
    model,
    consolidation,
    state,
    params,
    X,
    y,
    weights,
    key,
    learning_rate,
    *,
    n_epochs,
    batch_size,
    on_epoch=None,
):
    """:func:`minimize`, one jitted step per minibatch from a Python loop.

    The same steps, minibatches and keys as :func:`minimize`, so the
    result is the same up to floating-point rounding; for networks whose
    operations XLA:CPU runs slowly inside a compiled loop (convolutions).
    The data are moved to the device once.

    Parameters
    ----------
    model, consolidation, state, params, X, y, weights, key, learning_rate, n_epochs, batch_size
        As for :func:`minimize`.
    on_epoch : callable, default=None
        Called as ``on_epoch(epoch, loss)`` after each epoch (counted from
        1), e.g. to print the progress of a long pre-training; a true
        return value stops the training there, as in
        :func:`minimize_epochwise`.

    Returns
    -------
    params, epoch_losses, trace
        The first three fields of :class:`Trained`; there is no
        ``start_loss``, whose one pass over all the data at once would not
        fit for large image sets.
    """
    setup = _set_up(X.shape[0], batch_size, learning_rate, n_epochs)
    X, y, weights = jnp.asarray(X), jnp.asarray(y), jnp.asarray(weights)
    step = partial(_jitted_step, model, consolidation, state, X, y, weights, setup.rates,
                   n_batches=setup.n_batches)
    carry = _initial_carry(consolidation, state, params, _optimiser(setup.rates))

    def run_epoch(carry, batches):
        losses = []
        for batch in zip(*batches):
            carry, loss = step(carry, batch)
            losses.append(loss)
        return carry, jnp.sum(jnp.stack(losses))

    return _epoch_by_epoch(setup, key, n_epochs, carry, run_epoch, on_epoch)



def _objective_value(model, consolidation, state, params, X, y, weights, key):
    """The task's whole objective at ``params``: data term plus penalty.

    What one epoch of :func:`minimize` adds up to when the parameters do
    not move.
    """
    data = consolidation.data_term(model, params, X, y, weights, key)
    return data + consolidation.penalty(state, params, key)
