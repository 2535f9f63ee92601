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
the two means. Everything is float64.
"""

from typing import NamedTuple

import numpy as np

from .backend import backend_of
from .openblas import DIRECT_MAX_COLUMNS

__all__ = ["GroupMoments", "ShiftedSums", "by_class", "class_group", "class_of", "coarsen",
           "empty_moments", "gram", "merge", "on_host"]


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
    """Moments of no rows (the start of every sum)."""
    d = int(n_features)
    return GroupMoments(
        (), np.zeros(0), np.zeros((0, d)), np.zeros((d, d)),
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
    Everything is float64.

    Parameters
    ----------
    references : ndarray of shape (n_groups, n_features)
        r_g.
    per_group_scatter : bool
        Keep each group's own S too (rows must then come in runs of one
        group).
    """

    def __init__(self, references, per_group_scatter=False):
        self.references = references
        n_groups, d = references.shape
        self.counts = np.zeros(n_groups)
        self.sums = np.zeros((n_groups, d))
        self.per_group_scatter = per_group_scatter
        # S (or each group's S), made by the first product into it: fresh
        # D×D matrices cost page faults, so there are as few as can be.
        self.products = {}
        self._product = None  # one later AᵀA, reused

    def add(self, A, groups, weights, sums):
        """Add rows.

        Parameters
        ----------
        A : ndarray of float64 of shape (n_rows, n_features)
            √w_i (x_i − r_{g_i}).
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
        if key not in self.products:
            self.products[key] = gram(A)
            return
        if self._product is None:
            self._product = np.empty_like(self.products[key])
        self.products[key] += gram(A, out=self._product)

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
        counts = self.counts[present]
        t = self.sums[present]
        means = self.references[present] + t / counts[:, None]
        u = t / np.sqrt(counts)[:, None]  # Σ_g t_g t_gᵀ / n_g = uᵀu
        d = self.references.shape[1]
        group_scatter = np.zeros((0, d, d)) if self.per_group_scatter else None
        if not len(present):
            scatter = np.zeros((d, d))
        elif self.per_group_scatter:
            group_scatter = np.array([self.products[g] for g in present]).reshape(-1, d, d)
            group_scatter -= u[:, :, None] * u[:, None, :]
            scatter = group_scatter.sum(axis=0)
        else:
            # In place, and uᵀu as a GEMM of two operands: numpy's syrk is
            # slow for a few rows.
            scatter = self.products.pop(0)
            scatter -= np.matmul(u.T, u.copy(), out=self._product)
        self.products = {}
        return GroupMoments(tuple(keys[g] for g in present), counts.copy(), means,
                            scatter, group_scatter)


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


def merge(a, b):
    """The moments of the union of two disjoint sets of rows.

    Exact in exact arithmetic; in float64 the pairwise update keeps the
    error at the level of one chunk's, whatever the number of merges.
    """
    if a.n_features != b.n_features:
        raise ValueError(f"moments of {a.n_features} and {b.n_features} features")
    # Moments of no rows (no group) have a zero scatter: the other side is
    # the union as it is, with no D×D sum to pay (a stream's empty
    # held-out side, chunk after chunk). Moments are never written in place.
    if not b.keys and (a.group_scatter is None) == (b.group_scatter is None):
        return a
    if not a.keys and (a.group_scatter is None) == (b.group_scatter is None):
        return b
    backend = backend_of(a.scatter)
    index = {key: i for i, key in enumerate(a.keys)}
    keys = list(a.keys)
    counts = list(a.counts)
    means = list(a.means)
    group_scatter = None if a.group_scatter is None else list(a.group_scatter)
    shifts = []  # rows √(n_a n_b / n)·δ: the scatter gains their product, where it is
    for j, key in enumerate(b.keys):
        i = index.get(key)
        if i is None:
            index[key] = len(keys)
            keys.append(key)
            counts.append(b.counts[j])
            means.append(b.means[j])
            if group_scatter is not None:
                group_scatter.append(b.group_scatter[j])
            continue
        n_a, n_b = counts[i], b.counts[j]
        n = n_a + n_b
        delta = b.means[j] - means[i]
        shifts.append(np.sqrt(n_a * n_b / n) * delta)
        means[i] = means[i] + delta * (n_b / n)
        counts[i] = n
        if group_scatter is not None:
            group_scatter[i] = backend.add_gram(group_scatter[i] + b.group_scatter[j],
                                                shifts[-1][None, :])
    d = a.n_features
    scatter = backend.add_gram(a.scatter, np.reshape(shifts, (-1, d)))
    scatter += b.scatter
    return GroupMoments(
        tuple(keys), np.asarray(counts, dtype=np.float64).reshape(-1),
        np.asarray(means, dtype=np.float64).reshape(-1, d), scatter,
        None if group_scatter is None else backend.stack(group_scatter, (-1, d, d)),
    )


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
