"""Forgetting: rows, classes or whole calls taken back out of the sums, exactly.

The exact classifiers keep the previous loss as the moments of their rows
by (task, class) group (:mod:`.moments`). Rows that were learned can be
taken out again: :func:`downdate` is the exact inverse of
:func:`.moments.merge`, in centred form. For a group A that loses the rows
R (n_R of its n_A weight, mean μ_R, scatter W_R about μ_R), the rows left
B = A ∖ R have

    n_B = n_A − n_R,   μ_B = μ_A + (n_R / n_B)(μ_A − μ_R),
    W_B = W_A − W_R − (n_A n_R / n_B)(μ_A − μ_R)(μ_A − μ_R)ᵀ,

the pairwise update of Chan, Golub and LeVeque solved for one of its
parts: means are moved, never recovered from raw sums, and no sum of
squares of the raw rows is ever formed. What is left is the model a fit
on the remaining rows gives (machine unlearning with nothing
approximated), up to float64 rounding of the subtraction.

A removal is refused, with nothing changed, when it cannot be a removal
of learned rows: a group (class, or (task, class)) never learned, more
weight than the group holds, or a scatter that the subtraction leaves
with a negative variance (beyond rounding) along a coordinate or along
the removed rows' shift. Rows that were never learned but resemble the
learned ones cannot be told apart from the sums; nothing can.
"""

import numpy as np

from .backend import backend_of
from .moments import GroupMoments

__all__ = ["ForgettingError", "downdate", "scaled", "select_groups"]

# A removal is exact arithmetic's; float64 leaves a residue of about 1e-13
# relative in what cancels. A group, or a variance, that cancels to within
# this fraction of what it was is taken as emptied (exactly zero, as a fit
# on the remaining rows gives it), and a negative value beyond it refuses.
_TOLERANCE = 1e-8


class ForgettingError(ValueError):
    """A removal that cannot be of rows the model learned; nothing was changed."""


def _describe(key):
    task, label = key
    return f"class {label!r}" if task is None else f"class {label!r} of task {task}"


def downdate(learned, removed, tolerance=_TOLERANCE):
    """The moments of the rows of ``learned`` that are not rows of ``removed``.

    Parameters
    ----------
    learned : GroupMoments
        The moments kept (n_A, μ_A, W_A per group).
    removed : GroupMoments
        The moments of the rows to take out, keyed as ``learned`` is; each
        of its groups must be a group of ``learned``. Keeps each group's
        scatter exactly when ``learned`` does.
    tolerance : float, default=1e-8
        Relative: a group whose weight, or a variance that cancels to
        within this fraction of what it was, is emptied (exactly zero);
        below minus this fraction, the removal is refused.

    Returns
    -------
    GroupMoments
        The rows left: groups with weight only, in the order of ``learned``.

    Raises
    ------
    ForgettingError
        A group never learned, more weight than a group holds, or a
        scatter left with a negative variance.
    """
    if not removed.keys:
        return learned
    if learned.n_features != removed.n_features:
        raise ForgettingError(f"rows of {removed.n_features} features, the model learned "
                              f"{learned.n_features}")
    index = {key: i for i, key in enumerate(learned.keys)}
    counts, means = learned.counts.copy(), learned.means.copy()
    scatter = learned.scatter - removed.scatter
    per_group = learned.group_scatter is not None
    group_scatter = learned.group_scatter.copy() if per_group else None
    directions = []
    for j, key in enumerate(removed.keys):
        i = index.get(key)
        if i is None:
            raise ForgettingError(f"{_describe(key)} has no rows learned: nothing of it to forget")
        n_a, n_r = counts[i], removed.counts[j]
        if n_r > n_a * (1 + tolerance):
            raise ForgettingError(
                f"{_describe(key)}: forgetting rows of weight {n_r:.6g}, but it holds "
                f"{n_a:.6g}: more rows than were learned")
        n_b = n_a - n_r
        if per_group:
            group_scatter[i] -= removed.group_scatter[j]
        if n_b <= n_a * tolerance:  # every row of the group: its mean goes with it
            counts[i] = 0.0
            if per_group:
                group_scatter[i] = 0.0
            continue
        delta = means[i] - removed.means[j]
        shift = (n_a * n_r / n_b) * np.outer(delta, delta)
        scatter -= shift
        if per_group:
            group_scatter[i] -= shift
        means[i] = means[i] + delta * (n_r / n_b)
        counts[i] = n_b
        directions.append(delta)
    _check_scatter(scatter, learned.scatter, directions, "the pooled scatter", tolerance)
    keep = counts > 0
    if per_group:
        for g in np.flatnonzero(keep):
            _check_scatter(group_scatter[g], learned.group_scatter[g], directions,
                           f"the scatter of {_describe(learned.keys[g])}", tolerance)
        group_scatter = group_scatter[keep]
    return GroupMoments(tuple(k for k, kept in zip(learned.keys, keep) if kept),
                        counts[keep], means[keep], scatter, group_scatter)


def _check_scatter(scatter, before, directions, what, tolerance):
    """Refuse a scatter left indefinite; zero the variances that cancelled (in place).

    A full test of positive semi-definiteness costs a D³ factorisation,
    as much as the solve; the variances (the diagonal) and the quadratic
    form along each removed group's shift δ (where too many removed rows
    would show first) cost D² and catch rows that were never learned
    unless they resemble learned ones.
    """
    diagonal = np.einsum("ii->i", scatter)  # a view: written in place below
    reference = np.einsum("ii->i", before)
    scale = tolerance * max(float(reference.max(initial=0.0)), np.finfo(float).tiny)
    if (diagonal < -tolerance * reference - scale * 1e-3).any():
        j = int(np.argmin(diagonal + tolerance * reference))
        raise ForgettingError(
            f"forgetting these rows would leave {what} with a negative variance in "
            f"feature {j} ({diagonal[j]:.3g}): they are not rows the model learned")
    # A variance that cancelled to rounding is zero in a fit on the rows
    # left (a feature constant there): so is its row and column here,
    # since |W_jk| ≤ √(W_jj W_kk).
    emptied = diagonal <= tolerance * reference
    if emptied.any():
        scatter[emptied, :] = 0.0
        scatter[:, emptied] = 0.0
    for delta in directions:
        form, was = float(delta @ scatter @ delta), float(delta @ before @ delta)
        if form < -tolerance * max(was, 0.0) - scale * float(delta @ delta) * 1e-3:
            raise ForgettingError(
                f"forgetting these rows would leave {what} not positive semi-definite "
                f"(a negative variance along the removed rows' mean shift): they are not "
                f"rows the model learned")


def scaled(moments, factor):
    """The moments of the same rows with every weight multiplied by ``factor`` (> 0).

    Means are unchanged; weights and scatters scale.
    """
    if factor == 1 or not moments.keys:
        return moments
    backend = backend_of(moments.scatter)
    return moments._replace(
        counts=moments.counts * factor, scatter=backend.scale(moments.scatter, factor),
        group_scatter=(None if moments.group_scatter is None
                       else backend.scale(moments.group_scatter, factor)),
    )


def select_groups(moments, chosen):
    """The moments of the groups whose key satisfies ``chosen(key)``, each with its own scatter.

    Needs ``moments.group_scatter``: the pooled scatter of the chosen groups
    is the sum of theirs.
    """
    take = np.array([bool(chosen(key)) for key in moments.keys], dtype=bool)
    d = moments.n_features
    group_scatter = moments.group_scatter[take]
    return GroupMoments(
        tuple(k for k, t in zip(moments.keys, take) if t), moments.counts[take],
        moments.means[take].reshape(-1, d),
        group_scatter.sum(axis=0) if len(group_scatter) else np.zeros((d, d)), group_scatter,
    )
