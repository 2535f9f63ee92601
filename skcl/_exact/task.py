"""A task's moments, computed in memory (a Dask array's: :mod:`.dask_task`).

A task's rows split into the rows learned from and the rows held out
(:func:`~.holdout.heldout_rows`); each side's moments are grouped by
(task, class) and summed about a reference point per group
(:class:`~.moments.ShiftedSums`): one pass over the rows, one matrix
product. In memory, chunk by chunk, the chunks shared among as many
threads as BLAS may use (each converts, shifts and multiplies its own on
one core).
"""

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .backend import get_backend
from .holdout import HeldoutRule
from .moments import ShiftedSums, finite_moments, float32_products

__all__ = ["moments_of_rows", "task_moments"]


def task_moments(X, y, sample_weight, keys, *, fraction, seed, per_group_scatter,
                 chunk_rows=None, backend="numpy", precision="auto"):
    """Moments of the rows learned from and of the rows held out.

    One pass over X per chunk does everything but the product: each block
    of rows that fits in the cache is converted to float64, projected for
    the held-out hash, shifted by its group's reference and weighted; then
    the held-out rows move to their own buffer and the learned rows close
    ranks, and one product per buffer gives the sums (:class:`ShiftedSums`).

    Called from the main thread with several BLAS threads allowed, the
    chunks are shared among that many threads (:func:`_workers`), each
    with its own buffers and sums and BLAS limited to one thread meanwhile
    (process-wide, as scikit-learn's ``KMeans`` does): the pass, which
    numpy runs on one core, is then no longer done by one core while the
    others wait. The workers' sums add in a fixed order, so the result is
    the same from run to run; with another number of threads it moves by
    the rounding of another order of sums (about 1e-13 relative).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of int of shape (n_samples,)
        Each row's index into ``keys``.
    sample_weight : ndarray of shape (n_samples,)
    keys : sequence of hashable
        The groups, e.g. (task, class) pairs.
    fraction, seed : float, int
        See :func:`~.holdout.heldout_rows`.
    per_group_scatter : bool
    chunk_rows : int, optional
        Rows per chunk; by default 16 MB of float64, or 8·D rows when
        D×D is larger (with several threads, at most this, evened out so
        that each thread has as many chunks).
    backend : {"numpy", "jax", "auto"} or Backend, default="numpy"
        Where the rows are shifted and multiplied
        (:func:`~.backend.get_backend`): the same loop over the chunks
        runs with the host's row operations (:class:`HostRows`: numpy's
        threads) or the device's (:class:`~.device.DeviceRows`: the chunk
        sent once, the sums kept on the device), with the same references,
        held-out rows and formulas; the sums equal the host's up to the
        order of the additions.
    precision : {"auto", "float64", "float32"}, default="auto"
        The device's products (see :mod:`~.device`); ignored by numpy,
        whose rule is :func:`~.moments.float32_products` (float32 rows in
        float32 blocks added into float64 sums, float64 rows in float64).

    Returns
    -------
    (GroupMoments, GroupMoments)
        The learned rows' and the held-out rows'.

    Raises
    ------
    ValueError
        When X holds NaN or infinite values.
    MemoryError
        With ``backend="jax"``, before any work, when the update does not
        fit in the device's memory (:func:`~.device.device_moments_bytes`).
    """
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    n, d = X.shape
    backend = get_backend(backend) if isinstance(backend, str) else backend
    present, groups = _compact(np.asarray(y, dtype=np.intp), len(keys))
    weights = np.asarray(sample_weight, dtype=np.float64)
    rule = HeldoutRule(d, fraction, seed) if fraction > 0 and n else None
    references = _references(X, groups, len(present))
    step = max(1, min(int(chunk_rows or _chunk_rows(d)), max(n, 1)))
    options = {} if backend.name == "numpy" else dict(itemsize=X.dtype.itemsize,
                                                      precision=precision)
    rows = backend.rows(references, per_group_scatter, step, rule, **options)
    keys = [keys[i] for i in present]
    with backend.scope():
        learned, held = _shifted_sums(X, groups, weights, rows, rule, per_group_scatter, step)
        learned, held = learned.moments(keys), held.moments(keys)
        # A NaN or an infinity anywhere in X reaches its group's mean and the
        # scatter: checking those spares a pass over X.
        for moments in (learned, held):
            if not finite_moments(moments):
                raise ValueError(
                    "Input X contains NaN or infinity (or values too large to square).")
    return learned, held


def _shifted_sums(X, groups, weights, rows, rule, per_group_scatter, step):
    """The learned and held-out rows' :class:`ShiftedSums`, the chunks shared among threads.

    ``rows`` are the backend's row operations (:class:`HostRows`, or the
    device's): the loop over the chunks (:func:`_chunk_sums`) is the same.
    """
    n, d = X.shape
    root = None if np.all(weights == 1) else np.sqrt(weights)
    n_workers = 1
    if rows.parallel:  # the host's rows: float32 ones multiply in float32 blocks
        rows.float32 = float32_products(X, weights)
        n_workers, step = _workers(n, d, step, rows.n_groups if per_group_scatter else 0,
                                   rows.float32, held_out=rule is not None)
        rows.step = step
    starts = range(0, n, step)

    def sums_of(chunk_starts):
        return _chunk_sums(X, groups, weights, root, rows, rule, chunk_starts, step)

    if n_workers == 1:
        if n < _FEW_ROWS and threading.current_thread() is threading.main_thread():
            # Over before a second BLAS thread pays for waking (200 calls of
            # 100 rows at D = 1,000: 9.0 s of CPU with two threads, 1.6 s with one).
            with _one_blas_thread():
                return sums_of(starts)
        return sums_of(starts)
    # Each worker converts, shifts and multiplies its own chunks on one
    # core, its product single-threaded; their sums add in a fixed order,
    # so the result does not depend on which finishes first.
    with _one_blas_thread(), ThreadPoolExecutor(n_workers) as pool:
        parts = list(pool.map(sums_of, [starts[k::n_workers] for k in range(n_workers)]))
    learned, held = parts[0]
    for more_learned, more_held in parts[1:]:
        learned.absorb(more_learned)
        held.absorb(more_held)
    return learned, held


def _chunk_sums(X, groups, weights, root, rows, rule, starts, step):
    """The :class:`ShiftedSums` of the learned and the held-out rows of the chunks ``starts``."""
    learned, held = rows.sums(), rows.sums()
    if not len(starts):
        return learned, held
    rows = rows.for_worker()
    # The held-out rows (a tenth) wait in a buffer: one large product, not one a chunk.
    pending = rows.pending(held)
    # NaN or infinity in X is reported by the caller, in words (numpy's state is per thread).
    with np.errstate(invalid="ignore", over="ignore"):
        for start in starts:
            chunk = slice(start, start + step)
            g, w, r = groups[chunk], weights[chunk], None if root is None else root[chunk]
            A, sums, projected = rows.shifted(X[chunk], g, r, rule)
            if rule is not None:
                out = rule.mask(projected)
                if out.any():
                    sums -= pending.take(A, np.flatnonzero(out), g, w, r)
                    A, g, w = rows.close_ranks(A, g, w, out)
            if rows.per_group_scatter:
                A, g, w = rows.sort(A, g, w)
            learned.add(A, g, w, sums)
        pending.flush()
    return learned, held


class HostRows:
    """The chunk loop's row operations on the host, in buffers reused by every chunk.

    The device's are :class:`~.device.DeviceRows`, with the same methods.
    Each thread of the loop works on its own copy (:meth:`for_worker`).
    """

    #: Whether the chunks may be shared among threads (:func:`_workers`).
    parallel = True

    def __init__(self, references, per_group_scatter, step, rule, float32=False):
        self.references, self.per_group_scatter = references, per_group_scatter
        self.n_groups, self.d = references.shape
        self.step, self.rule, self.float32 = step, rule, float32  # moments.float32_products

    def for_worker(self):
        """A copy with its own buffers (the chunk's, and one to sort groups into runs)."""
        worker = HostRows(self.references, self.per_group_scatter, self.step, self.rule,
                          self.float32)
        # Buffers reused by every chunk: a fresh array per chunk costs more in
        # page faults than the copy itself. Rows multiplied in float32 with
        # none held out are written in float32 by the pass (each block made
        # in float64 in a cached scratch, then rounded): the products read
        # them as they are, and no float64 chunk is written and read again.
        direct = self.float32 and self.rule is None
        worker.buffer = np.empty((self.step, self.d), dtype=np.float32 if direct else np.float64)
        worker.scratch = (np.empty((min(self.step, _cached_rows(self.d)), self.d)) if direct
                          else None)
        worker.runs = (_GroupRuns(worker.buffer.shape, worker.buffer.dtype)
                       if self.per_group_scatter else None)
        return worker

    def sums(self):
        return ShiftedSums(self.references, self.per_group_scatter, self.float32)

    def shifted(self, X, groups, root, rule):
        return _shifted(X, groups, root, self.references, self.buffer, rule, self.scratch)

    def close_ranks(self, A, groups, weights, out):
        return _close_ranks(A, groups, weights, out)

    def sort(self, A, groups, weights):
        return self.runs.sort(A, groups, weights)

    def pending(self, held):
        """The held-out rows' buffer: 16 MB (or a chunk), reused by the allocator."""
        return _HeldRows((_held_rows(self.d, self.buffer.shape[0]), self.d), held, self.runs)


def _workers(n_rows, n_features, step, n_group_products, float32=False, held_out=False):
    """How many threads share the chunks, and the rows of each one's chunks.

    As many as BLAS may use (``threadpoolctl``, ``OMP_NUM_THREADS``), at
    most one per chunk or per D rows (a task of one chunk is split among
    them: its pass, which numpy runs on one core, is then shared), few
    enough that their buffers and D×D sums (:func:`_worker_values`) stay
    within 512 MB, or within ``_SCRATCH_SCATTERS`` D×D float64 arrays where
    those are more (chunks shrink to share it, down to D rows). One off the
    main thread (Dask's workers, say): the cores are spoken for there.
    """
    if threading.current_thread() is not threading.main_thread():
        return 1, step
    d = max(int(n_features), 1)
    # A worker per chunk, or per D rows (and at least _FEW_ROWS) of fewer
    # chunks: one chunk's pass would otherwise run on one core.
    most = max(-(-n_rows // step), n_rows // max(d, _FEW_ROWS))
    budget = max(_SCRATCH_VALUES, _SCRATCH_SCATTERS * d * d)
    per_row, fixed = _worker_values(d, n_group_products, float32, held_out)
    for workers in range(min(_blas_threads(), most), 1, -1):
        rows = min(step, int((budget // workers - fixed) // per_row))
        if rows >= d:
            # Chunks of one size, as many for each worker: none waits for another.
            rounds = -(-n_rows // (workers * rows))
            return workers, -(-n_rows // (workers * rounds))
    return 1, step


def _worker_values(d, n_group_products, float32, held_out):
    """What one worker holds, in float64 values: (per row of its chunk, fixed).

    Per row: the chunk's buffer (float32 when written directly:
    :meth:`HostRows.for_worker`), the held-out rows' and the one sorting
    groups into runs. Fixed: each side's float64 D×D sums and a block's
    product (float32: half the bytes), for the pooled scatter and each group's.
    """
    direct = float32 and not held_out
    per_row = (0.5 if direct else 1.0) * d + (d if held_out else 0) + (
        d if n_group_products else 0)
    per_side = (1.0 + (0.5 if float32 else 1.0)) * d * d * (1 + n_group_products)
    return per_row, per_side * (2 if held_out else 1)


def _blas_threads():
    """The most threads a loaded BLAS (numpy's among them) may use now."""
    return max([lib.num_threads for lib in _threadpools().lib_controllers
                if lib.user_api == "blas"] or [1])


def _one_blas_thread():
    """BLAS limited to one thread while the workers run (each has a core)."""
    return _threadpools().limit(limits=1, user_api="blas")


@functools.cache
def _threadpools():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def moments_of_rows(X, groups, weights, keys, per_group_scatter=False, chunk_rows=None):
    """Moments of all the rows of X, in groups (none held out).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    groups : ndarray of int of shape (n_samples,)
        Index of each row's group into ``keys``.
    weights : ndarray of shape (n_samples,)
        Non-negative weights; rows of weight zero count for nothing.
    keys : sequence of hashable
        The groups' keys. Groups whose rows weigh nothing are left out.
    per_group_scatter : bool, default=False
        Keep each group's own scatter too.
    chunk_rows : int, optional

    Returns
    -------
    GroupMoments
    """
    return task_moments(X, groups, weights, keys, fraction=0.0, seed=0,
                        per_group_scatter=per_group_scatter, chunk_rows=chunk_rows)[0]


def _chunk_rows(n_features):
    """Rows per chunk: 16 MB of float64, or 8·D rows (up to 256 MB) when D×D is larger.

    Buffers of up to 16 MB are reused by the allocator from one task to
    the next, where larger ones are fresh pages each time (their faults
    cost up to a third of the product at 512 features); a chunk of 8·D
    rows keeps the D×D addition of its product small beside it.
    """
    d = max(int(n_features), 1)
    return max(1, _WARM_VALUES // d, min(8 * d, _LARGEST_VALUES // d))


def _held_rows(n_features, chunk_rows):
    """Rows the held-out buffer holds: 16 MB, or D rows when that is more, at most a chunk."""
    d = max(int(n_features), 1)
    return max(1, min(chunk_rows, max(_WARM_VALUES // d, d)))


# float64 values in a buffer the allocator reuses (16 MB), in the largest chunk (256 MB).
_WARM_VALUES = 2**21
_LARGEST_VALUES = 2**25
_FEW_ROWS = 512  # rows below which a task's products run on one BLAS thread
# float64 values in all the workers' buffers and sums: 512 MB, or six D×D
# arrays past D = 2,896 (the model holds some already). At D = 5,000 two
# workers then share a task, 0.3 GB more at the peak than one.
_SCRATCH_VALUES = 2**26
_SCRATCH_SCATTERS = 6


def _compact(y, n_keys):
    """The indices into ``keys`` that occur, and each row's index among them.

    A count and a lookup table: no sort of the rows.
    """
    present = np.flatnonzero(np.bincount(y, minlength=n_keys))
    position = np.zeros(n_keys, dtype=np.intp)
    position[present] = np.arange(len(present))
    return present, position[y]


def _references(X, groups, n_groups):
    """r_g: each group's mean over up to 256 of its rows, spread over the task.

    Any point near the group's mean serves (:class:`ShiftedSums`); a
    sample's mean is within a sixteenth of a spread of it.
    """
    references = np.empty((n_groups, X.shape[1]))
    for g in range(n_groups):
        rows = np.flatnonzero(groups == g)
        sample = rows[np.linspace(0, len(rows) - 1, min(len(rows), 256)).astype(np.intp)]
        references[g] = X[sample].mean(axis=0, dtype=np.float64)
    return references


def _shifted(X, groups, root, references, buffer, rule, scratch=None):
    """Fill ``buffer`` with the rows A_i = √w_i (x_i − r_{g_i}) (see :class:`ShiftedSums`).

    One pass over X: each block of rows that fits in a core's cache is
    converted to float64 in the buffer, projected for the held-out hash,
    shifted, weighted and summed by group while it is there. A float32
    ``buffer`` receives each block rounded to float32, made in float64 in
    ``scratch`` (the same values as a float64 buffer's, rounded): the sums
    are float64's.

    Returns
    -------
    A : ndarray of shape (n_rows, n_features)
        A view of ``buffer``.
    sums : ndarray of shape (n_groups, n_features)
        Σ_{i∈g} √w_i A_i, the rows' t_g.
    projected : ndarray of shape (n_rows, 3) or None
        :meth:`~.holdout.HeldoutRule.project` of the rows (None without a rule).
    """
    m, d = X.shape
    A = buffer[:m]
    indicators = _indicators(groups, root, len(references))
    projected = None if rule is None else np.empty((m, 3))
    step = _cached_rows(d) if scratch is None else len(scratch)
    sums = np.zeros((len(references), d))
    for a in range(0, m, step):
        part = A[a:a + step] if scratch is None else scratch[:min(step, m - a)]
        np.copyto(part, X[a:a + step])
        if rule is not None:
            rule.project(part, out=projected[a:a + step])
        part -= references[0] if len(references) == 1 else references[groups[a:a + step]]
        if root is not None:
            part *= root[a:a + step, None]
        sums += indicators[a:a + step].T @ part
        if scratch is not None:
            np.copyto(A[a:a + step], part, casting="same_kind")
    return A, sums, projected


def _cached_rows(n_features):
    """Rows per block of :func:`_shifted`: 512 KB of float64, at least 16 rows."""
    return max(16, _CACHED_VALUES // max(int(n_features), 1))


def _indicators(groups, root, n_groups):
    """O with O_ig = √w_i if row i is in group g, else 0: Oᵀ A sums A by group."""
    indicators = np.zeros((len(groups), n_groups))
    indicators[np.arange(len(groups)), groups] = 1.0 if root is None else root
    return indicators


# float64 values per block of _shifted: 512 KB, well within a core's L2 cache.
_CACHED_VALUES = 2**16


def _close_ranks(A, groups, weights, out):
    """The rows not ``out``, first in A: the last learned rows fill the holes.

    Moves about a ``fraction`` of the rows instead of copying all of them.
    """
    n_learned = len(out) - int(out.sum())
    holes = np.flatnonzero(out[:n_learned])
    movers = n_learned + np.flatnonzero(~out[n_learned:])
    A[holes] = A[movers]
    moved_groups, moved_weights = groups[movers], weights[movers]
    groups, weights = groups[:n_learned].copy(), weights[:n_learned].copy()
    groups[holes], weights[holes] = moved_groups, moved_weights
    return A[:n_learned], groups, weights


class _GroupRuns:
    """Rows reordered into runs of one group, in a buffer reused by every chunk."""

    def __init__(self, size, dtype=np.float64):
        self.buffer = np.empty(size, dtype=dtype)

    def sort(self, A, groups, weights):
        order = np.argsort(groups, kind="stable")
        # mode="clip": with "raise" numpy buffers the output, a second copy.
        rows = np.take(A, order, axis=0, out=self.buffer[:len(order)], mode="clip")
        return rows, groups[order], weights[order]


class _HeldRows:
    """Held-out rows collected across chunks, added to ``sums`` in batches.

    Parameters
    ----------
    size : (int, int)
        The buffer's shape.
    sums : ShiftedSums
    runs : _GroupRuns or None
        Sorts a batch into runs of one group before it is added, when
        ``sums`` keeps each group's scatter.
    """

    def __init__(self, size, sums, runs):
        self.size, self.sums, self.runs, self.n = size, sums, runs, 0
        self.rows = None  # allocated with the first held-out row

    def take(self, A, index, groups, weights, root):
        """Copy the rows ``index`` of A (and their groups and weights).

        Returns
        -------
        ndarray of shape (n_groups, n_features)
            Their sums by group, Σ_{i∈g} √w_i A_i.
        """
        if self.rows is None:
            self.rows = np.empty(self.size)
            self.groups = np.empty(self.size[0], dtype=np.intp)
            self.weights = np.empty(self.size[0])
            self.group_sums = np.zeros_like(self.sums.references)
        taken = np.zeros_like(self.group_sums)
        for start in range(0, len(index), len(self.rows)):
            some = index[start:start + len(self.rows)]
            if self.n + len(some) > len(self.rows):
                self.flush()
            end = self.n + len(some)
            rows = np.take(A, some, axis=0, out=self.rows[self.n:end], mode="clip")
            self.groups[self.n:end], self.weights[self.n:end] = groups[some], weights[some]
            self.n = end
            indicators = _indicators(groups[some], None if root is None else root[some],
                                     len(taken))
            piece = indicators.T @ rows
            self.group_sums += piece  # the sums of the rows now in the buffer
            taken += piece
        return taken

    def flush(self):
        n, self.n = self.n, 0
        if not n:
            return
        rows, groups, weights = self.rows[:n], self.groups[:n], self.weights[:n]
        if self.runs is not None:
            rows, groups, weights = self.runs.sort(rows, groups, weights)
        self.sums.add(rows, groups, weights, self.group_sums)
        self.group_sums = np.zeros_like(self.group_sums)
