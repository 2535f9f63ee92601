"""A task's moments from a Dask array: each block's where it lives, merged up a tree.

Each block's moments are :func:`~.task.task_moments` of its rows, computed
where the block lives (on a ``distributed`` cluster when a client is
active), and merged pairwise up a tree: a task larger than memory streams
through to the in-memory result.
"""

from .moments import merge
from .task import task_moments

__all__ = ["dask_task_moments"]

# Blocks' moments merged per tree node: few levels, little data per merge.
_SPLIT_EVERY = 8


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
