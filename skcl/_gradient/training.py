"""The shared optimisation loop: Adam, one-cycle (or constant) schedule, minibatches.

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
their own, and small tasks come padded to a few sizes
(:mod:`skcl._gradient.minibatches`), so that tasks of different sizes
share the loop: on small data, compiling it costs far more than running it.

The three drivers (:func:`minimize`, :func:`minimize_epochwise`,
:func:`minimize_stepwise`) take the same arguments, set a task up the same
way (:func:`_set_up`) and return the same :class:`Trained`.

The loop divides the penalty by the number of minibatches, so that one
epoch adds up to one full loss (paper, section II-B, step 2).
"""

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .compilation_cache import setup as _setup_compilation_cache
from .minibatches import epoch_batches, one_epoch_batches, pad_to, task_sizes

__all__ = [
    "EpochState",
    "Trained",
    "learning_rates",
    "minimize",
    "minimize_epochwise",
    "minimize_stepwise",
]


class Trained(NamedTuple):
    """What every training driver returns.

    ``params``: the parameters after the last step (the optimiser state
    is dropped, so the next task starts Adam afresh); ``epoch_losses``:
    the sum over each epoch's minibatches of data term plus scaled
    penalty, one entry per epoch run; ``trace``: the consolidation's
    trace after the last step (or None); ``start_loss``: the whole
    objective at the starting parameters, for recognising a run that
    blew up (None from :func:`minimize_stepwise`).
    """

    params: Any
    epoch_losses: Any
    trace: Any
    start_loss: Any = None


class EpochState(NamedTuple):
    """A run of :func:`minimize_stepwise` after ``epoch`` epochs: what continues it.

    ``leaves``: the carry's arrays (parameters, the optimiser's moments and
    step count, the trace), in ``jax.tree.leaves`` order, as NumPy arrays
    a checkpoint can store; ``epoch_losses``: the loss of each epoch run.
    """

    epoch: int
    leaves: list
    epoch_losses: Any


SCHEDULES = ("one_cycle", "constant")


@partial(jax.jit, static_argnames=("n_steps", "n_slots", "schedule"))
def learning_rates(learning_rate, *, n_steps, n_slots=None, schedule="one_cycle"):
    """The learning rate at each of ``n_steps`` steps.

    ``schedule="one_cycle"`` (the paper's): optax's
    ``cosine_onecycle_schedule(n_steps, learning_rate)``, warm-up to
    ``learning_rate`` then cosine decay; ``"constant"``: ``learning_rate``
    at every step (plain Adam, as most continual-learning libraries
    train). Evaluated once per task in a small program of its own and
    handed to the training loop as data, so that tasks with different step
    counts (and either schedule) share one compiled loop; zeros follow up
    to ``n_slots`` entries (a padded task's skipped steps).

    Returns
    -------
    array of shape (n_slots or n_steps,)
    """
    if schedule == "constant":
        rates = jnp.full(n_steps, learning_rate, dtype=jnp.float32)
    else:
        rates = jax.vmap(optax.cosine_onecycle_schedule(n_steps, learning_rate))(
            jnp.arange(n_steps))
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


def _set_up(X, y, weights, batch_size, learning_rate, n_epochs, *, pad=False,
            schedule="one_cycle"):
    """What every driver does first: the compilation cache, sizes, data, the schedule.

    With ``pad`` (:func:`minimize`), the task is padded to
    :func:`~skcl._gradient.minibatches.padded_size` rows and the schedule
    to its minibatch slots; without, the data are moved to the device
    once, for the Python loops over epochs.

    Returns
    -------
    sizes : skcl._gradient.minibatches.TaskSizes
    data : tuple
        ``(X, y, weights)``, padded or on the device.
    rates : array
        The learning rate of every step (slot), :func:`learning_rates`.
    """
    _setup_compilation_cache()  # once per process, before the first compilation
    sizes = task_sizes(X.shape[0], batch_size, pad=pad)
    n_steps = n_epochs * sizes.n_batches
    if not pad:
        data = jnp.asarray(X), jnp.asarray(y), jnp.asarray(weights)
        return sizes, data, learning_rates(learning_rate, n_steps=n_steps, schedule=schedule)
    data = tuple(pad_to(a, 0, sizes.n_rows) for a in (X, y, weights))
    return sizes, data, learning_rates(learning_rate, n_steps=n_steps,
                                       n_slots=n_epochs * sizes.n_slots, schedule=schedule)


def minimize(model, consolidation, state, params, X, y, weights, key, learning_rate, *,
             n_epochs, batch_size, schedule="one_cycle", on_epoch=None):
    """Learn one task: Adam with a cosine one-cycle schedule over minibatches.

    Minimises Σ_batches [data term + penalty / n_batches] per epoch, the
    minibatch form of L̂_t(θ) = (stand-in for L_{t-1})(θ) + nll_t(θ).

    The minibatches are drawn first (a small program per task size); the
    training itself is one jitted program, ``lax.scan`` over epochs and
    minibatches, into which a small task comes padded (see
    :func:`~skcl._gradient.minibatches.padded_size`): the padded rows
    are never drawn, and the minibatch slots beyond the task's own are
    skipped, so the steps, and the result, are those of the task alone.

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
        Peak of the one-cycle schedule (the paper's base learning rate), or
        the constant rate.
    n_epochs, batch_size : int
        The schedule runs over ``n_epochs × n_batches`` steps.
    schedule : {"one_cycle", "constant"}, default="one_cycle"
        See :func:`learning_rates`.
    on_epoch : callable, default=None
        Called as ``on_epoch(epoch, loss)`` after each epoch (counted from
        1), to show progress: the epochs then run one compiled call each,
        the very program of the whole run scanned over one epoch at a
        time, so the result is the same to the bit (tested); only the
        dispatch of each epoch is added. Its return value is ignored.

    Returns
    -------
    Trained
        The parameters after the last step (like the input), the loss of
        each of the ``n_epochs`` epochs, the consolidation's trace (or
        None), and the whole objective at the starting parameters,
        computed in the same compiled program.
    """
    sizes, (X, y, weights), rates = _set_up(X, y, weights, batch_size, learning_rate,
                                            n_epochs, pad=True, schedule=schedule)
    batches = epoch_batches(key, n_samples=sizes.n_samples, n_rows=sizes.n_rows,
                            batch_size=sizes.batch_size, n_epochs=n_epochs, n_slots=sizes.n_slots)
    n_batches = np.float32(sizes.n_batches)
    if on_epoch is None:
        return Trained(*_minimize(model, consolidation, state, params, X, y, weights, key,
                                  rates, batches, n_batches, padded=sizes.padded))
    start_loss = _jitted_objective_value(consolidation, state, params, X, y, weights, key,
                                         model=model)
    carry = _initial_carry(consolidation, state, params, _optimiser(rates))
    epoch_losses = []
    for epoch in range(n_epochs):
        one = jax.tree.map(lambda a, e=epoch: a[e:e + 1], batches)
        carry, loss = _epochs(model, consolidation, state, X, y, weights, rates, carry, one,
                              n_batches, padded=sizes.padded)
        epoch_losses.append(loss[0])
        on_epoch(epoch + 1, float(loss[0]))
    params, _, trace = carry
    return Trained(params, jnp.stack(epoch_losses), trace, start_loss)


@partial(jax.jit, static_argnames=("model", "padded"))
def _minimize(model, consolidation, state, params, X, y, weights, key, rates, batches, n_batches,
              *, padded):
    """:func:`minimize`'s compiled part, on padded data and minibatches."""
    optimiser = _optimiser(rates)
    start_loss = _objective_value(model, consolidation, state, params, X, y, weights, key)
    carry0 = _initial_carry(consolidation, state, params, optimiser)
    (params, _, trace), epoch_losses = _scan_epochs(model, consolidation, state, X, y, weights,
                                                    optimiser, carry0, batches, n_batches,
                                                    padded=padded)
    return params, epoch_losses, trace, start_loss


def _scan_epochs(model, consolidation, state, X, y, weights, optimiser, carry, batches,
                 n_batches, *, padded):
    """``lax.scan`` of :func:`_epoch` over the epochs of ``batches``: the whole run's
    loop, also run one epoch at a time (:func:`_epochs`) for progress."""
    epoch = partial(_epoch, model, consolidation, state, X, y, weights, optimiser, n_batches,
                    padded=padded)
    return jax.lax.scan(epoch, carry, batches)


@partial(jax.jit, static_argnames=("model", "padded"))
def _epochs(model, consolidation, state, X, y, weights, rates, carry, batches, n_batches, *,
            padded):
    """:func:`minimize`'s loop over the epochs of ``batches`` from ``carry``, compiled."""
    return _scan_epochs(model, consolidation, state, X, y, weights, _optimiser(rates), carry,
                        batches, n_batches, padded=padded)


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


def minimize_epochwise(model, consolidation, state, params, X, y, weights, key, learning_rate,
                       *, n_epochs, batch_size, on_epoch, schedule="one_cycle"):
    """:func:`minimize`, one jitted epoch at a time, with a callback after each.

    The same steps, minibatches, keys and schedule as :func:`minimize` (up
    to floating-point rounding, as XLA compiles an epoch alone), for a
    caller that watches the epochs or stops early.

    Parameters
    ----------
    model, consolidation, state, params, X, y, weights, key, learning_rate, n_epochs, batch_size,
    schedule
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
    sizes, (X, y, weights), rates = _set_up(X, y, weights, batch_size, learning_rate, n_epochs,
                                            schedule=schedule)
    start_loss = _jitted_objective_value(consolidation, state, params, X, y, weights, key,
                                         model=model)
    run_epoch = partial(_jitted_epoch, model, consolidation, state, X, y, weights, rates,
                        n_batches=sizes.n_batches)
    carry = _initial_carry(consolidation, state, params, _optimiser(rates))
    return _epoch_by_epoch(sizes, key, n_epochs, carry, run_epoch, on_epoch, start_loss)


def minimize_stepwise(model, consolidation, state, params, X, y, weights, key, learning_rate,
                      *, n_epochs, batch_size, on_epoch=None, schedule="one_cycle",
                      resume=None, on_state=None):
    """:func:`minimize`, one jitted step per minibatch from a Python loop.

    The same steps, minibatches and keys as :func:`minimize`, so the
    result is the same up to floating-point rounding; for networks whose
    operations XLA:CPU runs slowly inside a compiled loop (convolutions).
    The data are moved to the device once.

    Parameters
    ----------
    model, consolidation, state, params, X, y, weights, key, learning_rate, n_epochs, batch_size,
    schedule
        As for :func:`minimize`.
    on_epoch : callable, default=None
        Called as ``on_epoch(epoch, loss)`` after each epoch (counted from
        1), e.g. to print the progress of a long pre-training; a true
        return value stops the training there, as in
        :func:`minimize_epochwise`.
    resume : EpochState, default=None
        The state of this very run (same arguments) after some epochs:
        the run continues from there, and ends with the parameters an
        uninterrupted run gives (the keys and learning rates of the later
        epochs do not depend on the earlier ones). ``params`` is then
        unused.
    on_state : callable, default=None
        Called as ``on_state(EpochState)`` after each epoch, e.g. to save
        a checkpoint, before ``on_epoch``.

    Returns
    -------
    Trained
        As for :func:`minimize_epochwise`, with ``start_loss`` None: its
        one pass over all the data at once would not fit for large image
        sets.

    Raises
    ------
    ValueError
        When ``resume`` does not hold this run's arrays (their number,
        shapes or dtypes differ).
    """
    sizes, (X, y, weights), rates = _set_up(X, y, weights, batch_size, learning_rate, n_epochs,
                                            schedule=schedule)
    step = partial(_jitted_step, model, consolidation, state, X, y, weights, rates,
                   n_batches=sizes.n_batches)

    def run_epoch(carry, batches):
        losses = []
        for batch in zip(*batches):
            carry, loss = step(carry, batch)
            losses.append(loss)
        return carry, jnp.sum(jnp.stack(losses))

    carry = _initial_carry(consolidation, state, params, _optimiser(rates))
    if resume is not None:
        carry = _resumed_carry(carry, resume.leaves)
    return _epoch_by_epoch(sizes, key, n_epochs, carry, run_epoch, on_epoch,
                           resume=resume, on_state=on_state)


def _resumed_carry(fresh, leaves):
    """``fresh``'s structure with ``leaves``' arrays, checked against its own."""
    expected = jax.tree.leaves(fresh)
    if len(leaves) != len(expected) or any(
            np.shape(a) != np.shape(b) or np.asarray(a).dtype != np.asarray(b).dtype
            for a, b in zip(leaves, expected)):
        raise ValueError(
            "The state to resume from does not hold this run's arrays: "
            f"{[(np.shape(a), str(np.asarray(a).dtype)) for a in leaves]} where the run has "
            f"{[(np.shape(b), str(np.asarray(b).dtype)) for b in expected]}."
        )
    return jax.tree.unflatten(jax.tree.structure(fresh), [jnp.asarray(a) for a in leaves])


def _epoch_by_epoch(sizes, key, n_epochs, carry, run_epoch, on_epoch, start_loss=None, *,
                    resume=None, on_state=None):
    """The Python loop over epochs of :func:`minimize_epochwise` and
    :func:`minimize_stepwise`: each epoch's minibatches, ``run_epoch(carry,
    batches) -> (carry, loss)``, then ``on_state`` and ``on_epoch(epoch,
    loss)``; a true return value of ``on_epoch`` stops the training there.
    From ``resume`` (an :class:`EpochState`), the epochs it ran are skipped
    and its losses kept. Returns :class:`Trained`.
    """
    done = 0 if resume is None else int(resume.epoch)
    epoch_losses = [] if resume is None else [jnp.asarray(v) for v in resume.epoch_losses]
    for epoch, epoch_key in enumerate(jax.random.split(key, n_epochs), start=1):
        if epoch <= done:
            continue
        batches = one_epoch_batches(epoch_key, n_samples=sizes.n_samples,
                                    batch_size=sizes.batch_size)
        carry, loss = run_epoch(carry, batches)
        epoch_losses.append(loss)
        if on_state is not None:
            on_state(EpochState(epoch, [np.asarray(a) for a in jax.tree.leaves(carry)],
                                np.asarray(jnp.stack(epoch_losses))))
        if on_epoch is not None and on_epoch(epoch, float(loss)):
            break
    params, _, trace = carry
    losses = jnp.stack(epoch_losses) if epoch_losses else jnp.zeros(0, jnp.float32)
    return Trained(params, losses, trace, start_loss)


@partial(jax.jit, static_argnames=("model", "n_batches"))
def _jitted_step(model, consolidation, state, X, y, weights, rates, carry, batch,
                 *, n_batches):
    optimiser = _optimiser(rates)
    return _step(model, consolidation, state, X, y, weights, optimiser, n_batches, carry, batch)


@partial(jax.jit, static_argnames=("model", "n_batches"))
def _jitted_epoch(model, consolidation, state, X, y, weights, rates, carry,
                  batches, *, n_batches):
    return _epoch(model, consolidation, state, X, y, weights, _optimiser(rates),
                  n_batches, carry, batches)


_jitted_objective_value = jax.jit(lambda *args, model: _objective_value(model, *args),
                                  static_argnames=("model",))


def _objective_value(model, consolidation, state, params, X, y, weights, key):
    """The task's whole objective at ``params``: data term plus penalty.

    What one epoch of :func:`minimize` adds up to when the parameters do
    not move.
    """
    data = consolidation.data_term(model, params, X, y, weights, key)
    return data + consolidation.penalty(state, params, key)
