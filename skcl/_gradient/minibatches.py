"""Which samples each training step sees: minibatches, and the padding that shares programs.

A task of ``n_samples`` trains in epochs of shuffled minibatches of
``batch_size`` (the last one may be short, its missing rows masked). The
draws of every epoch (indices, masks and one key per step) are computed
before training, by small programs of their own, and handed to the
training loop of :mod:`skcl._gradient.training` as data.

Small tasks come padded to a few row counts (:func:`padded_size`), so that
tasks of different sizes share one compiled loop: on small data, compiling
it costs far more than running it. The padded rows are never drawn and the
minibatch slots beyond the task's own are skipped, so the steps are those
of the task alone; :func:`task_sizes` gives the sizes every training driver
works with.
"""

from functools import partial
from math import ceil
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "PAD_MAX",
    "PAD_MIN",
    "TaskSizes",
    "epoch_batches",
    "minibatch_indices",
    "n_minibatches",
    "one_epoch_batches",
    "pad_to",
    "padded_size",
    "task_sizes",
]


# Tasks of up to PAD_MAX samples are padded to a few row counts, so that the
# tasks of a sequence (CI Split Wine's 38, 45 and 30 rows; joint training's
# growing union; Split MNIST's 11,263 to 12,665) share one compiled loop.
# On small tasks compiling the loop costs far more than running it, and on
# MNIST-sized ones trained for an epoch or two as much: 784-400-400, one
# thread, 2.0-4.0 s to compile each task's loop against 1.0 s to run it.
# Padding costs memory (at most twice the task's rows), not steps: the
# padded rows are never drawn. Larger tasks keep their size: their
# compilation is a small part of their training, and a copy twice their
# size would not be.
PAD_MIN, PAD_MAX = 128, 1 << 17


def padded_size(n_samples):
    """The row count a task of ``n_samples`` is padded to for training.

    The next power of two, at least ``PAD_MIN``, for tasks of at most
    ``PAD_MAX`` (131,072) samples; larger tasks keep their size.
    """
    if n_samples > PAD_MAX:
        return n_samples
    return max(PAD_MIN, 1 << (n_samples - 1).bit_length())


class TaskSizes(NamedTuple):
    """A task's sizes, as every training driver sets them up."""

    n_samples: int
    batch_size: int  # at most n_samples
    n_batches: int  # minibatches per epoch
    n_rows: int  # the rows the task is padded to (n_samples when not padded)
    n_slots: int  # minibatch slots per epoch of the padded task
    padded: bool  # whether the task trains padded (skipping the slots past n_batches)


def task_sizes(n_samples, batch_size, *, pad=False):
    """The sizes of a task of ``n_samples`` trained in minibatches of ``batch_size``.

    With ``pad``, the task is padded to :func:`padded_size` rows, and its
    epochs to the minibatch slots of that many rows.
    """
    batch_size = min(batch_size, n_samples)
    n_batches = n_minibatches(n_samples, batch_size)
    if not pad:
        return TaskSizes(n_samples, batch_size, n_batches, n_samples, n_batches, False)
    n_rows = padded_size(n_samples)
    return TaskSizes(n_samples, batch_size, n_batches, n_rows,
                     n_minibatches(n_rows, batch_size), n_samples <= PAD_MAX)


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


def _epoch_batches(epoch_key, n_samples, batch_size):
    """An epoch's shuffled minibatches: (idx, mask, one key per step)."""
    shuffle_key, steps_key = jax.random.split(epoch_key)
    idx, mask = minibatch_indices(shuffle_key, n_samples, batch_size)
    return idx, mask, jax.random.split(steps_key, idx.shape[0])


#: One epoch's minibatches (:func:`_epoch_batches`), jitted: the drivers
#: that loop over epochs in Python draw them one epoch at a time.
one_epoch_batches = jax.jit(_epoch_batches, static_argnames=("n_samples", "batch_size"))


@partial(jax.jit, static_argnames=("n_samples", "batch_size", "n_epochs", "n_slots"))
def _all_epoch_batches(key, *, n_samples, batch_size, n_epochs, n_slots):
    """Every epoch's minibatches, stacked: (idx, mask, step_keys) with leading
    axes (n_epochs, n_slots); slots past the epoch's minibatches hold zeros.

    One program per task size; :func:`_padded_epoch_batches` gives the same
    arrays from one program per padded size."""
    # lax.map compiles faster than vmap here (0.55 against 0.9 s), with the same integers.
    idx, mask, keys = jax.lax.map(lambda k: _epoch_batches(k, n_samples, batch_size),
                                  jax.random.split(key, n_epochs))
    return tuple(pad_to(a, 1, n_slots) for a in (idx, mask, keys))


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


def pad_to(a, axis, size):
    """``a`` with zeros appended along ``axis`` up to ``size`` (NumPy or JAX)."""
    missing = size - a.shape[axis]
    if missing == 0:
        return a
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, missing)
    return (jnp if isinstance(a, jax.Array) else np).pad(a, widths)
