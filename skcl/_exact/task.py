"""A task's moments, in memory or reduced over a Dask array's blocks.

A task's rows split into the rows learned from and the rows held out
(:func:`~.holdout.held_out`); each side's moments are grouped by
(task, class). In memory they are computed chunk by chunk; from a Dask
array each block's moments are computed where the block lives and merged
pairwise up a tree by Dask (on a ``distributed`` cluster when a client is
active), so a task larger than memory streams through, and the result is
the in-memory one.
"""

import sys

import numpy as np

from .holdout import held_out
from .moments import CHUNK_ROWS, Accumulator, merge

__all__ = ["is_dask_array", "task_moments", "dask_task_moments"]

# Blocks' moments merged per tree node: few levels, little data per merge.
_SPLIT_EVERY = 8


def is_dask_array(X):
    """Whether X is a Dask array (without importing Dask when it is not)."""
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(X, dask_array.Array)


def task_moments(X, y, sample_weight, keys, *, fraction, seed, per_group_scatter):
    """Moments of the rows learned from and of the rows held out.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of int of shape (n_samples,)
        Each row's index into ``keys``.
    sample_weight : ndarray of shape (n_samples,)
    keys : sequence of hashable
        The groups, e.g. (task, class) pairs.
    fraction, seed : float, int
        See :func:`~.holdout.held_out`.
    per_group_scatter : bool

    Returns
    -------
    (GroupMoments, GroupMoments)
        The learned rows' and the held-out rows'.

    Raises
    ------
    ValueError
        When X holds NaN or infinite values.
    """
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    y = np.asarray(y)
    weights = np.asarray(sample_weight, dtype=np.float64)
    learned, held = (Accumulator(X.shape[1], keys, per_group_scatter) for _ in range(2))
    step = chunk_rows(X.shape[1])
    # Buffers reused by every chunk: a fresh 100 MB array per chunk costs
    # more in page faults than the copy itself.
    size = (min(step, len(X)), X.shape[1])
    converted = None if X.dtype == np.float64 else np.empty(size)
    gathered = np.empty(size)
    # The held-out rows (a tenth) wait for a full buffer, so that their
    # scatter is one large product rather than one small one per chunk.
    pending = _HeldRows(size, held)
    for start in range(0, len(X), step):
        chunk = X[start:start + step]
        if converted is not None:
            chunk = converted[:len(chunk)]
            np.copyto(chunk, X[start:start + step])
        groups, w = y[start:start + step], weights[start:start + step]
        out = held_out(chunk, fraction, seed)
        # One gather puts the learned rows first and the held-out rows
        # last, each sorted by group: both sides are contiguous blocks.
        order = np.lexsort((groups, out))
        # mode="clip": with "raise" numpy buffers the output, a second copy.
        rows = np.take(chunk, order, axis=0, out=gathered[:len(order)], mode="clip")
        groups, w = groups[order], w[order]
        n_learned = len(order) - int(out.sum())
        learned.add_sorted(rows[:n_learned], groups[:n_learned], w[:n_learned])
        pending.add(rows[n_learned:], groups[n_learned:], w[n_learned:])
    pending.flush()
    learned, held = learned.moments(), held.moments()
    # A NaN or an infinity anywhere in X reaches its group's mean and the
    # scatter: checking those spares a pass over X.
    for moments in (learned, held):
        if not (np.isfinite(moments.means).all() and np.isfinite(moments.scatter).all()):
            raise ValueError("Input X contains NaN or infinity (or values too large to square).")
    return learned, held


def chunk_rows(n_features):
    """Rows per chunk: about 128 MB of float64, and at least 8,192 rows."""
    return max(CHUNK_ROWS, 2**24 // max(int(n_features), 1))


class _HeldRows:
    """Held-out rows collected across chunks, added to ``accumulator`` in batches.

    Each chunk's rows come sorted by group; the accumulator takes runs of
    a group in any order, so a batch of several chunks' runs is added as
    it is.
    """

    def __init__(self, size, accumulator):
        self.size, self.accumulator, self.n = size, accumulator, 0
        self.rows = None  # allocated with the first held-out row

    def add(self, rows, groups, weights):
        if len(rows) == 0:
            return
        if self.rows is None:
            self.rows = np.empty(self.size)
            self.groups = np.empty(self.size[0], dtype=np.intp)
            self.weights = np.empty(self.size[0])
        if self.n + len(rows) > len(self.rows):
            self.flush()
        end = self.n + len(rows)
        self.rows[self.n:end], self.groups[self.n:end], self.weights[self.n:end] = (
            rows, groups, weights)
        self.n = end

    def flush(self):
        n, self.n = self.n, 0
        if n:
            self.accumulator.add_sorted(self.rows[:n], self.groups[:n], self.weights[:n])


def _merge_pairs(*pairs):
    learned, held = pairs[0]
    for a, b in pairs[1:]:
        learned, held = merge(learned, a), merge(held, b)
    return learned, held


def dask_task_moments(X, y, sample_weight, keys, **options):
    """:func:`task_moments` of Dask arrays: per block, then a tree of merges.

    ``y`` and ``sample_weight`` (Dask arrays or None) are re-chunked to X's
    row blocks; X must not be chunked along its features.
    """
    import dask
    import dask.array as da

    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    rows = X.chunks[0]
    y = da.asarray(y).rechunk((rows,))
    weights = (da.ones(X.shape[0], chunks=(rows,)) if sample_weight is None
               else da.asarray(sample_weight).rechunk((rows,)))
    block = dask.delayed(task_moments, pure=True)
    level = [
        block(xb, yb, wb, keys, **options)
        for xb, yb, wb in zip(X.to_delayed().ravel(), y.to_delayed().ravel(),
                              weights.to_delayed().ravel())
    ]
    combine = dask.delayed(_merge_pairs, pure=True)
    while len(level) > 1:
        level = [combine(*level[i:i + _SPLIT_EVERY]) for i in range(0, len(level), _SPLIT_EVERY)]
    return dask.compute(level[0])[0]
