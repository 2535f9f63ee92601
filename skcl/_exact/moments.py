"""Weighted moments of rows in groups, merged exactly and stably.

The exact classifiers keep the previous loss L_{t-1} as sums over the data
seen so far: per group g (a class, or a (task, class) pair) its weight
n_g = Σ w_i, its mean μ_g, and the pooled within-group scatter
W = Σ_g Σ_{i∈g} w_i (x_i − μ_g)(x_i − μ_g)ᵀ (and, when asked, each group's
own scatter). Two sets of moments merge with the pairwise update of Chan,
Golub and LeVeque (1979), as scikit-learn's ``GaussianNB`` and
``IncrementalPCA`` do: means are combined, never recovered from raw sums,
and the scatter gains n_a n_b / (n_a + n_b) δδᵀ for the shift δ between
the two means. Within a chunk the mean is computed first and the scatter
from the centred rows (two passes), so features with a large mean and a
small spread lose nothing to cancellation. Everything is float64.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["Accumulator", "GroupMoments", "coarsen", "empty_moments", "merge",
           "moments_of_rows"]

#: Rows per chunk when a task's moments are computed: bounds the float64
#: copy (chunk × n_features × 8 bytes) and keeps the scatter a large GEMM.
CHUNK_ROWS = 8192


class GroupMoments(NamedTuple):
    """Weights, means and scatter of rows in groups.

    Attributes
    ----------
    keys : tuple of hashable, length n_groups
        The groups, in the order of the arrays' first axis.
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
    def n_features(self):
        return self.means.shape[1]

    @property
    def total(self):
        """Σ_g n_g."""
        return float(self.counts.sum())


def empty_moments(n_features, per_group_scatter=False):
    """Moments of no rows (the start of every sum)."""
    d = int(n_features)
    return GroupMoments(
        (), np.zeros(0), np.zeros((0, d)), np.zeros((d, d)),
        np.zeros((0, d, d)) if per_group_scatter else None,
    )


def moments_of_rows(X, groups, weights, keys, per_group_scatter=False, chunk_rows=CHUNK_ROWS):
    """Moments of the rows of X, in groups.

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
    chunk_rows : int, default=CHUNK_ROWS
        Rows converted to float64 at a time.

    Returns
    -------
    GroupMoments
    """
    X = np.asarray(X)
    total = Accumulator(X.shape[1], keys, per_group_scatter)
    for start in range(0, len(X), chunk_rows):
        rows = slice(start, start + chunk_rows)
        order = np.argsort(groups[rows], kind="stable")
        total.add_sorted(np.array(X[rows][order], dtype=np.float64), groups[rows][order],
                         np.asarray(weights[rows], dtype=np.float64)[order])
    return total.moments()


class Accumulator:
    """Moments of rows added block by block, the scatter summed in place.

    Each block's rows, sorted by group, are centred on their group's mean
    (two passes) and their scatter added into one float64 D×D buffer.
    The pairwise update's n_a n_b / (n_a + n_b) δδᵀ for a group seen
    before is kept as the row √(n_a n_b / (n_a + n_b)) δ and all of them
    are added by one rank-k product when the moments are read: one pass
    over the D×D buffer instead of one per group and block. (numpy's
    ``X.T @ X`` is BLAS ``syrk``; SciPy's own BLAS, called in place, fights
    numpy's for the cores.)

    Parameters
    ----------
    n_features : int
    keys : sequence of hashable
        The groups a row's index may refer to.
    per_group_scatter : bool
    """

    def __init__(self, n_features, keys, per_group_scatter=False):
        d = int(n_features)
        self.keys = list(keys)
        self.counts = np.zeros(len(self.keys))
        self.means = np.zeros((len(self.keys), d))
        self.scatter = np.zeros((d, d))
        self.group_scatter = (
            [np.zeros((d, d)) for _ in self.keys] if per_group_scatter else None
        )
        self._shifts, self._shift_groups = [], []  # rows √shift·δ, not yet in the scatter
        self._product = None  # a block's XᵀX, reused: a fresh D×D per block costs page faults

    def add_sorted(self, X, groups, w):
        """Add rows in runs of one group; X (float64, writable) is centred in place.

        Each run of equal ``groups`` is one block: its mean, its centring
        and the pairwise update into the group's moments. A group may come
        back in a later run (blocks of several chunks), though sorted rows
        make the fewest runs.

        Parameters
        ----------
        X : ndarray of float64 of shape (n_rows, n_features)
        groups : ndarray of int of shape (n_rows,)
            Indices into ``keys``, in runs.
        w : ndarray of shape (n_rows,)
        """
        if len(X) == 0:
            return
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        blocks = list(zip(starts, np.r_[starts[1:], len(X)]))
        counts = np.add.reduceat(w, starts)
        unit = bool(np.all(w == 1))
        for (a, b), g, n_b in zip(blocks, groups[starts], counts):
            if n_b <= 0:
                X[a:b] = 0.0  # weightless rows count for nothing
                continue
            # A weighted sum of a block's rows is a matrix-vector product.
            mean = (w[a:b] @ X[a:b]) / n_b
            X[a:b] -= mean
            if not unit:
                X[a:b] *= np.sqrt(w[a:b])[:, None]
            n_a = self.counts[g]
            if n_a > 0:
                delta = mean - self.means[g]
                self._shifts.append(np.sqrt(n_a * n_b / (n_a + n_b)) * delta)
                self._shift_groups.append(g)
                self.means[g] += delta * (n_b / (n_a + n_b))
            else:
                self.means[g] = mean
            self.counts[g] = n_a + n_b
            if self.group_scatter is not None:
                self.group_scatter[g] += self._gram(X[a:b])
        self.scatter += self._gram(X)

    def _gram(self, X):
        if self._product is None:
            self._product = np.empty_like(self.scatter)
        return np.matmul(X.T, X, out=self._product)  # still syrk: numpy sees XᵀX

    def _add_shifts(self):
        if not self._shifts:
            return
        rows, groups = np.array(self._shifts), np.array(self._shift_groups)
        self._shifts, self._shift_groups = [], []
        self.scatter += self._gram(rows)
        if self.group_scatter is not None:
            for g in np.unique(groups):
                mine = rows[groups == g]
                self.group_scatter[g] += mine.T @ mine

    def moments(self):
        """The moments so far (groups with weight, in the order of ``keys``)."""
        self._add_shifts()
        present = np.flatnonzero(self.counts > 0)
        group_scatter = None
        if self.group_scatter is not None:
            d = self.scatter.shape[0]
            group_scatter = np.array([self.group_scatter[g] for g in present])
            group_scatter = group_scatter.reshape(len(present), d, d)
        return GroupMoments(
            tuple(self.keys[g] for g in present), self.counts[present].copy(),
            self.means[present].copy(), self.scatter.copy(), group_scatter,
        )


def merge(a, b):
    """The moments of the union of two disjoint sets of rows.

    Exact in exact arithmetic; in float64 the pairwise update keeps the
    error at the level of one chunk's, whatever the number of merges.
    """
    if a.n_features != b.n_features:
        raise ValueError(f"moments of {a.n_features} and {b.n_features} features")
    index = {key: i for i, key in enumerate(a.keys)}
    keys = list(a.keys)
    counts = list(a.counts)
    means = list(a.means)
    group_scatter = None if a.group_scatter is None else list(a.group_scatter)
    scatter = a.scatter + b.scatter
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
        shift = (n_a * n_b / n) * np.outer(delta, delta)
        means[i] = means[i] + delta * (n_b / n)
        counts[i] = n
        scatter += shift
        if group_scatter is not None:
            group_scatter[i] = group_scatter[i] + b.group_scatter[j] + shift
    d = a.n_features
    return GroupMoments(
        tuple(keys), np.asarray(counts, dtype=np.float64).reshape(-1),
        np.asarray(means, dtype=np.float64).reshape(-1, d), scatter,
        None if group_scatter is None else np.asarray(group_scatter).reshape(-1, d, d),
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
    scatter = moments.scatter + spread.T @ spread
    group_scatter = None
    if moments.group_scatter is not None:
        group_scatter = np.zeros((len(keys), d, d))
        for g in range(len(keys)):
            fine = index == g
            within = moments.group_scatter[fine].sum(axis=0)
            group_scatter[g] = within + spread[fine].T @ spread[fine]
    return GroupMoments(tuple(keys), counts, means, scatter, group_scatter)
