"""Weighted moments of rows in groups, summed exactly and merged stably.

The exact classifiers keep the previous loss L_{t-1} as sums over the data
seen so far: per group g (a class, or a (task, class) pair) its weight
n_g = Σ w_i, its mean μ_g, and the pooled within-group scatter
W = Σ_g Σ_{i∈g} w_i (x_i − μ_g)(x_i − μ_g)ᵀ (and, when asked, each group's
own scatter). Within a task the rows are summed about a fixed reference
near each group's mean (:class:`ShiftedSums`), so features with a large
mean and a small spread lose nothing to cancellation and the update is
one matrix product. Two sets of moments merge with the pairwise update
of Chan, Golub and LeVeque (1979), as scikit-learn's ``GaussianNB`` and
``IncrementalPCA`` do: means are combined, never recovered from raw sums,
and the scatter gains n_a n_b / (n_a + n_b) δδᵀ for the shift δ between
the two means. The moments are float64; the products of a task's rows
are float64 too, but for float32 rows, whose products are float32 blocks
added into float64 sums (:func:`float32_products` states the rule).
"""

from typing import NamedTuple

import numpy as np
from scipy.linalg import blas

from .backend import backend_of
from .openblas import DIRECT_MAX_COLUMNS

__all__ = ["FLOAT32_BLOCK_ROWS", "GroupMoments", "ShiftedSums", "by_class", "class_group",
           "class_of", "coarsen", "empty_moments", "finite_moments", "float32_products", "gram",
           "merge", "on_host", "subtract_gram"]

#: Rows per float32 product before it is added to its float64 sum. Each
#: block's D×D addition costs about as much as 60 rows' product at D = 2,000;
#: on random features of MNIST pixels (five tasks, 2,000 features) the scatter
#: erred by 6.5e-8 of its largest entry with blocks of 1,024 rows, 9.1e-8 with
#: 4,096 and 8.1e-8 with a worker's whole chunk, for 10 % less CPU at 4,096.
FLOAT32_BLOCK_ROWS = 4096

# Bounds on the float32 products' operands: below _FLOAT32_SMALLEST their
# squares near float32's underflow (1.2e-38) even at float32's resolution
# of the value (6e-8 of it); above _FLOAT32_LARGEST a block of
# FLOAT32_BLOCK_ROWS rows' product nears its overflow (3.4e38).
_FLOAT32_SMALLEST = 1e-8
_FLOAT32_LARGEST = 1e15


class GroupMoments(NamedTuple):
    """Weights, means and scatter of rows in groups.

    Attributes
    ----------
    keys : tuple of hashable, length n_groups
        The groups, in the order of the arrays' first axis: (task, class)
        pairs, or (None, class) once merged over tasks; ``labels`` reads
        their classes.
    counts : ndarray of shape (n_groups,)
        n_g, the sum of the weights of the group's rows.
    means : ndarray of shape (n_groups, n_features)
        μ_g, the weighted mean of the group's rows.
    scatter : ndarray of shape (n_features, n_features)
        W, the pooled within-group scatter Σ_g Σ_{i∈g} w_i (x_i − μ_g)(x_i − μ_g)ᵀ.
    group_scatter : ndarray of shape (n_groups, n_features, n_features) or None
        Each group's own scatter (its sum over groups is ``scatter``);
        None when not kept.
    """

    keys: tuple
    counts: np.ndarray
    means: np.ndarray
    scatter: np.ndarray
    group_scatter: np.ndarray | None

    @property
    def labels(self):
        """The class of each group, in the order of ``keys`` (:func:`class_of`)."""
        return tuple(class_of(key) for key in self.keys)

    @property
    def n_features(self):
        return self.means.shape[1]

    @property
    def total(self):
        """Σ_g n_g."""
        return float(self.counts.sum())


def class_of(key):
    """The class of a group: the second item of its (task, class) key.

    The exact classifiers key their groups (task, class) as a task adds
    them, and (None, class) once merged over tasks (:func:`class_group`).
    """
    return key[1]


def class_group(key):
    """The (None, class) group that a (task, class) group merges into."""
    return None, class_of(key)


def by_class(moments):
    """The moments of each class, its tasks merged (:func:`coarsen` by :func:`class_group`)."""
    return coarsen(moments, class_group)


def empty_moments(n_features, per_group_scatter=False):
    """Moments of no rows (the start of every sum).

    Their scatter is a read-only view of one zero (a held-out side with
    no rows, call after call, writes no D×D array); nothing merges into
    it (:func:`merge` returns the other side).
    """
    d = int(n_features)
    return GroupMoments(
        (), np.zeros(0), np.zeros((0, d)), np.broadcast_to(np.float64(0), (d, d)),
        np.zeros((0, d, d)) if per_group_scatter else None,
    )


def on_host(moments):
    """The same moments with their scatters as numpy arrays (read back from a device)."""
    return moments._replace(
        scatter=np.asarray(moments.scatter),
        group_scatter=None if moments.group_scatter is None else np.asarray(moments.group_scatter))


class ShiftedSums:
    """Rows summed about fixed reference points, one per group; the moments follow exactly.

    For groups g with references r_g (any points near their means: a
    sample of each group's rows, say) the sums over rows i of group g_i

        n_g = Σ w_i,   t_g = Σ w_i (x_i − r_g),   S = Σ w_i (x_i − r_{g_i})(x_i − r_{g_i})ᵀ

    give the means μ_g = r_g + t_g / n_g and the pooled within-group
    scatter W = S − Σ_g t_g t_gᵀ / n_g. The subtracted term is
    n_g e_g e_gᵀ for the reference's distance e_g = μ_g − r_g, so with
    r_g near μ_g it is small beside W and nothing is lost to cancellation,
    whatever the data's offset: the "shifted data" algorithm of Chan,
    Golub and LeVeque (1983), per group. The rows arrive shifted and
    weighted, A_i = √w_i (x_i − r_{g_i}), so S = AᵀA is one matrix product
    (BLAS ``syrk``: numpy sees AᵀA) and nothing else costs as much.

    Precision: the sums are float64. With ``float32=True`` (float32 rows,
    :func:`float32_products`) each block of at most
    :data:`FLOAT32_BLOCK_ROWS` rows of A, shifted and weighted in float64,
    is rounded to float32 and multiplied in float32, and the block's
    product added to the float64 S: the shift makes A's entries of the
    order of the within-group spread, so float32's rounding errs relative
    to W, not to the raw second moment, and the float64 sum keeps one
    block's error whatever the number of blocks (5e-7 of W's largest
    entry on random features of MNIST pixels). Otherwise every product is
    float64.

    Parameters
    ----------
    references : ndarray of shape (n_groups, n_features)
        r_g.
    per_group_scatter : bool
        Keep each group's own S too (rows must then come in runs of one
        group).
    float32 : bool, default=False
        Multiply in float32 blocks (above).
    """

    def __init__(self, references, per_group_scatter=False, float32=False):
        self.references = references
        n_groups, d = references.shape
        self.counts = np.zeros(n_groups)
        self.sums = np.zeros((n_groups, d))
        self.per_group_scatter = per_group_scatter
        self.float32 = float32
        # S (or each group's S), made by the first product into it: fresh
        # D×D matrices cost page faults, so there are as few as can be.
        self.products = {}
        self._product = None  # one later AᵀA (float32 blocks: each block's), reused
        self._rows32 = None  # a block of A rounded to float32, reused

    def add(self, A, groups, weights, sums):
        """Add rows.

        Parameters
        ----------
        A : ndarray of float64 of shape (n_rows, n_features)
            √w_i (x_i − r_{g_i}); with ``float32``, float32 too (already rounded).
        groups : ndarray of int of shape (n_rows,)
            Each row's group, in runs of one group when ``per_group_scatter``.
        weights : ndarray of shape (n_rows,)
            w_i.
        sums : ndarray of shape (n_groups, n_features)
            Σ_{i∈g} √w_i A_i (the caller computes them in its pass over the rows).
        """
        if len(A) == 0:
            return
        self.counts += np.bincount(groups, weights=weights, minlength=len(self.counts))
        self.sums += sums
        if not self.per_group_scatter:
            self._add_gram(0, A)
            return
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        for a, b, g in zip(starts, np.r_[starts[1:], len(A)], groups[starts]):
            self._add_gram(g, A[a:b])

    def absorb(self, other):
        """Add the sums of ``other``, a :class:`ShiftedSums` of other rows about
        the same references."""
        self.counts += other.counts
        self.sums += other.sums
        for key, product in other.products.items():
            if key in self.products:
                self.products[key] += product
            else:
                self.products[key] = product

    def _add_gram(self, key, A):
        if self.float32:
            # Blocks of one size (at most FLOAT32_BLOCK_ROWS rows): no short last one.
            size = -(-len(A) // -(-len(A) // FLOAT32_BLOCK_ROWS))
            for start in range(0, len(A), size):
                self._add_float32_gram(key, A[start:start + size])
            return
        if key not in self.products:
            self.products[key] = gram(A)
            return
        if self._product is None:
            self._product = np.empty_like(self.products[key])
        self.products[key] += gram(A, out=self._product)

    def _add_float32_gram(self, key, A):
        """Add one block's AᵀA, rounded to float32 (unless it is) and multiplied in float32."""
        m, d = A.shape
        if self._product is None:
            self._product = np.empty((d, d), dtype=np.float32)
        rows = A
        if A.dtype != np.float32:
            if self._rows32 is None or len(self._rows32) < m:
                self._rows32 = np.empty((m if self._rows32 is None else FLOAT32_BLOCK_ROWS, d),
                                        dtype=np.float32)
            rows = self._rows32[:m]
            np.copyto(rows, A, casting="same_kind")
        product = gram(rows, out=self._product)
        if key in self.products:
            self.products[key] += product
        else:
            self.products[key] = product.astype(np.float64)

    def moments(self, keys):
        """The moments of the rows added; the sums are spent (call once).

        Parameters
        ----------
        keys : sequence of hashable
            The groups' keys, in the order of ``references``.

        Returns
        -------
        GroupMoments
            Groups with weight only.
        """
        present = np.flatnonzero(self.counts > 0)
        if not len(present):
            self.products = {}
            return empty_moments(self.references.shape[1], self.per_group_scatter)
        counts = self.counts[present]
        t = self.sums[present]
        means = self.references[present] + t / counts[:, None]
        u = t / np.sqrt(counts)[:, None]  # Σ_g t_g t_gᵀ / n_g = uᵀu
        d = self.references.shape[1]
        group_scatter = None
        if self.per_group_scatter:
            group_scatter = np.array([self.products[g] for g in present]).reshape(-1, d, d)
            group_scatter -= u[:, :, None] * u[:, None, :]
            scatter = group_scatter.sum(axis=0)
        else:
            scatter = subtract_gram(self.products.pop(0), u)
        self.products = {}
        self._product = self._rows32 = None
        return GroupMoments(tuple(keys[g] for g in present), counts.copy(), means,
                            scatter, group_scatter)


def subtract_gram(S, u):
    """S − uᵀu for a few rows u, written into S where BLAS can (one pass, no new D×D array).

    Parameters
    ----------
    S : ndarray of float64 of shape (n_features, n_features)
        Symmetric.
    u : ndarray of shape (n_rows, n_features)

    Returns
    -------
    ndarray of shape (n_features, n_features)
        S itself, changed, when it is a writable C-ordered float64 array
        (its transpose is BLAS's column-major operand; both are symmetric);
        else a copy.
    """
    if not len(u):
        return S
    if not (S.flags.writeable and S.flags.c_contiguous and S.dtype == np.float64):
        S = np.array(S, dtype=np.float64)  # f2py would write even a read-only array
    # BLAS's GEMM with β = 1 adds to its output: numpy's matmul would need
    # a D×D temporary for uᵀu, and its syrk is slow for a few rows.
    return blas.dgemm(-1.0, u, u, beta=1.0, c=S.T, trans_a=1, overwrite_c=1).T


def float32_products(X, weights):
    """Whether a task's products are float32 blocks added into float64 sums.

    The rule: float32 rows are multiplied in float32 (:class:`ShiftedSums`)
    when every feature that is not all zero has values whose squares
    float32 holds, shifted, weighted and summed over a block, with room
    to spare: each such feature's largest magnitude times √w is at least
    1e-8 (the smallest positive weight), and at most 1e15 (the largest).
    Anything else, and float64 rows always, is multiplied in float64.
    float32 rows carry 7 significant digits: the float32 products' error
    (5e-7 of the scatter's largest entry) is of that order, where float64
    products would cost twice the time for digits the rows do not hold.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    weights : ndarray of shape (n_samples,)

    Returns
    -------
    bool
    """
    if X.dtype != np.float32 or not X.size:
        return False
    peak = np.maximum(np.max(X, axis=0), -np.min(X, axis=0)).astype(np.float64)
    peak = peak[peak > 0]
    positive = weights[weights > 0]
    if not len(peak) or not len(positive):
        return False
    return bool(peak.min() * np.sqrt(positive.min()) >= _FLOAT32_SMALLEST
                and peak.max() * np.sqrt(positive.max()) <= _FLOAT32_LARGEST)


def finite_moments(moments):
    """Whether the moments hold no NaN or infinity, read from the means and the diagonal.

    A scatter is positive semi-definite, so no entry exceeds its largest
    diagonal one (|W_jk| ≤ √(W_jj W_kk)), and a NaN or an infinity in a
    row reaches its feature's diagonal: D values tell what D² would.
    """
    diagonal = backend_of(moments.scatter).diagonal(moments.scatter)  # on the host
    with np.errstate(invalid="ignore"):
        return bool(np.isfinite(moments.means).all() and np.isfinite(diagonal).all()
                    and (diagonal <= np.finfo(np.float64).max / 4).all())


# OpenBLAS's threaded syrk (0.3.30 in SciPy's wheel, 0.3.31 in numpy's)
# segfaults for AᵀA from 16,384 columns at 1,342-2,048 rows (and at 20,000
# with 256 rows, 30,000 with 64): .openblas and
# benchmarks/timing/bench_openblas_crash.py. Wider products than every probe ran
# are built from blocks, whatever the BLAS.
_SYRK_MAX_COLUMNS = DIRECT_MAX_COLUMNS
_GRAM_BLOCK = 8_192


def gram(A, out=None):
    """AᵀA, through BLAS syrk (numpy sees AᵀA), in ``out`` when given.

    Beyond ``_SYRK_MAX_COLUMNS`` columns, from blocks of columns: each
    diagonal block by syrk, the blocks left of it by one GEMM, the upper
    triangle copied from the lower (the flops of one syrk).

    Parameters
    ----------
    A : ndarray of shape (n_rows, n_features)
    out : ndarray of shape (n_features, n_features), optional

    Returns
    -------
    ndarray of shape (n_features, n_features)
    """
    d = A.shape[1]
    if d <= _SYRK_MAX_COLUMNS:
        return np.matmul(A.T, A, out=out)
    out = np.empty((d, d)) if out is None else out
    for i in range(0, d, _GRAM_BLOCK):
        block = slice(i, i + _GRAM_BLOCK)
        columns = A[:, block]
        np.matmul(columns.T, columns, out=out[block, block])
        if i:
            np.matmul(columns.T, A[:, :i], out=out[block, :i])
            out[:i, block] = out[block, :i].T
    return out


def merge(a, b, *, in_place=False):
    """The moments of the union of two disjoint sets of rows.

    Exact in exact arithmetic; in float64 the pairwise update keeps the
    error at the level of one chunk's, whatever the number of merges.

    Parameters
    ----------
    a, b : GroupMoments
    in_place : bool, default=False
        Add b's scatter into a's (whose array must then be the caller's
        alone: no other reader sees it change) when the two share no
        group: one D×D addition in one call, and no new D×D array. Else,
        and by default, neither is written.

    Returns
    -------
    GroupMoments
        a's groups, then b's new ones. ``a`` or ``b`` itself where the
        other has no group.
    """
    if a.n_features != b.n_features:
        raise ValueError(f"moments of {a.n_features} and {b.n_features} features")
    # Moments of no rows (no group) have a zero scatter: the other side is
    # the union as it is, with no D×D sum to pay (a stream's empty
    # held-out side, chunk after chunk).
    if not b.keys and (a.group_scatter is None) == (b.group_scatter is None):
        return a
    if not a.keys and (a.group_scatter is None) == (b.group_scatter is None):
        return b
    # Where the sums are: numpy's arrays, or the device's (whose scatters
    # are JAX arrays; counts and means are numpy on both).
    backend = backend_of(a.scatter)
    d = a.n_features
    # A task's groups are new ones (its index is in their keys): no look-up then.
    index = ({key: i for i, key in enumerate(a.keys)} if not set(b.keys).isdisjoint(a.keys)
             else {})
    shared = [j for j, key in enumerate(b.keys) if key in index]
    new = [j for j, key in enumerate(b.keys) if key not in index]
    keys = (*a.keys, *(b.keys[j] for j in new))
    counts = np.concatenate([a.counts, b.counts[new]])
    means = np.concatenate([a.means, b.means[new]])
    group_scatter = None
    if a.group_scatter is not None:
        group_scatter = [*a.group_scatter, *(b.group_scatter[j] for j in new)]
    if in_place and not shared and backend.name == "numpy":
        scatter = np.add(a.scatter, b.scatter, out=a.scatter)
    else:
        scatter = a.scatter + b.scatter
    if shared:
        mine = [index[b.keys[j]] for j in shared]
        n_a, n_b = counts[mine], b.counts[shared]
        n = n_a + n_b
        delta = b.means[shared] - means[mine]
        # Rows √(n_a n_b / n)·δ_g: the scatter gains Σ_g n_a n_b / n δ_g δ_gᵀ,
        # one product for every shared group.
        shifts = delta * np.sqrt(n_a * n_b / n)[:, None]
        scatter = backend.add_gram(scatter, shifts)
        means[mine] += delta * (n_b / n)[:, None]
        counts[mine] = n
        if group_scatter is not None:
            for i, j, shift in zip(mine, shared, shifts):
                group_scatter[i] = backend.add_gram(group_scatter[i] + b.group_scatter[j],
                                                    shift[None, :])
    if group_scatter is not None:
        group_scatter = backend.stack(group_scatter, (-1, d, d))
    return GroupMoments(keys, counts, means.reshape(-1, d), scatter, group_scatter)


def coarsen(moments, coarse_key):
    """Merge groups that share ``coarse_key(key)`` into one.

    E.g. (task, class) groups into class groups. The pooled scatter gains
    each fine group's spread around its coarse group's mean,
    Σ_g n_g (μ_g − μ_c)(μ_g − μ_c)ᵀ.

    Returns
    -------
    GroupMoments
        Groups in the order of their first fine group.
    """
    coarse = [coarse_key(key) for key in moments.keys]
    keys = list(dict.fromkeys(coarse))
    position = {key: i for i, key in enumerate(keys)}
    index = np.array([position[key] for key in coarse], dtype=np.intp)
    d = moments.n_features
    counts = np.bincount(index, weights=moments.counts, minlength=len(keys))
    means = np.zeros((len(keys), d))
    np.add.at(means, index, moments.means * moments.counts[:, None])
    means /= counts[:, None]
    spread = (moments.means - means[index]) * np.sqrt(moments.counts)[:, None]
    backend = backend_of(moments.scatter)
    scatter = backend.add_gram(moments.scatter, spread)  # one new D×D array
    group_scatter = None
    if moments.group_scatter is not None:
        group_scatter = backend.stack([
            backend.add_gram(backend.sum_first(moments.group_scatter[np.flatnonzero(index == g)]),
                             spread[index == g])
            for g in range(len(keys))], (len(keys), d, d))
    return GroupMoments(tuple(keys), counts, means, scatter, group_scatter)
