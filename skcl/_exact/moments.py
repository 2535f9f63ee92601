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

__all__ = ["GroupMoments", "chunk_moments", "coarsen", "empty_moments", "merge",
           "moments_of_rows", "sorted_moments"]

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
    total = empty_moments(X.shape[1], per_group_scatter)
    for start in range(0, max(len(X), 1), chunk_rows):
        stop = start + chunk_rows
        chunk = chunk_moments(
            np.asarray(X[start:stop], dtype=np.float64), groups[start:stop],
            np.asarray(weights[start:stop], dtype=np.float64), keys, per_group_scatter,
        )
        total = merge(total, chunk)
    return total


def chunk_moments(X, groups, w, keys, per_group_scatter=False):
    """Two-pass moments of one chunk (float64): the means, then the centred scatter.

    Sorts the rows by group (a copy) and hands them to :func:`sorted_moments`.
    """
    order = np.argsort(groups, kind="stable")
    return sorted_moments(np.array(X[order], dtype=np.float64), groups[order], w[order], keys,
                          per_group_scatter)


def sorted_moments(X, groups, w, keys, per_group_scatter=False):
    """Moments of rows sorted by group, centring X in place.

    Each group is a contiguous block, so its sum is one ``reduceat`` pass
    and its centring a broadcast subtraction on the block: no gathered
    copy of the means. The scatter of the centred rows is then one
    symmetric product (BLAS ``syrk``) for all groups.

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
        Writable; overwritten with the centred (and √w-scaled) rows.
    groups : ndarray of int of shape (n_samples,)
        Non-decreasing indices into ``keys``.
    w : ndarray of shape (n_samples,)
    keys, per_group_scatter
        As in :func:`moments_of_rows`.

    Returns
    -------
    GroupMoments
    """
    d = X.shape[1]
    if len(X) == 0:
        return empty_moments(d, per_group_scatter)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    bounds = np.r_[starts, len(X)]
    blocks = list(zip(bounds[:-1], bounds[1:]))
    counts = np.add.reduceat(w, starts)
    present = counts > 0
    # A weighted sum of a block's rows is a matrix-vector product.
    means = np.array([w[a:b] @ X[a:b] for a, b in blocks]) / np.where(present, counts, 1.0)[:, None]
    for (a, b), mean in zip(blocks, means):
        X[a:b] -= mean
    if not np.all(w == 1):
        X *= np.sqrt(w)[:, None]
    scatter = X.T @ X
    group_scatter = None
    if per_group_scatter:
        group_scatter = np.stack([X[a:b].T @ X[a:b] for a, b in blocks])
        group_scatter = group_scatter[present]
    return GroupMoments(
        tuple(keys[g] for g in groups[starts][present]), counts[present], means[present],
        scatter, group_scatter,
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
