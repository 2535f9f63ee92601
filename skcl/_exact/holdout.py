"""Which rows are held out: a hash of each row's values, not of its position.

The exact classifiers choose their shrinkage or ridge strength by the
score of rows held out *as statistics only*. Drawing those rows at random
by position would make the choice depend on how the data were split into
tasks and chunks, and on their order; hashing each row's values (with a
seed) makes the held-out set a property of the data alone, so any split of
the same rows holds out the same ones and the exact classifiers keep their
promise: the same statistics, whatever the order and the chunking.
"""

import numpy as np

__all__ = ["HeldoutRule", "heldout_rows"]


def _mix(h):
    """SplitMix64's finaliser: every input bit moves every output bit."""
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


class HeldoutRule:
    """Which rows are held out, for rows of ``n_features`` values.

    The seeded directions and salt are drawn once, so a task's rows can be
    judged a block at a time: :meth:`project` each block of float64 rows
    (while it is in cache), then :meth:`mask` all the projections.

    Parameters
    ----------
    n_features : int
    fraction : float in [0, 1)
        The expected share of rows held out.
    seed : int
        Chooses the hash, hence which rows.
    """

    def __init__(self, n_features, fraction, seed):
        rng = np.random.default_rng(seed)
        self.fraction = float(fraction)
        self.directions = rng.standard_normal((int(n_features), 3))
        self.salt = rng.integers(0, 2**63, dtype=np.uint64)

    def project(self, X, out=None):
        """The rows' three projections, shape (n_rows, 3), from float64 rows (into ``out``)."""
        return np.matmul(X, self.directions, out=out)

    def mask(self, projected):
        """True for the rows to hold out, from their :meth:`project` values."""
        words = projected.astype(np.float32).view(np.uint32).astype(np.uint64)
        with np.errstate(over="ignore"):
            h = _mix(words[:, 0] ^ self.salt)
            h = _mix(h ^ (words[:, 1] << np.uint64(32) | words[:, 2]))
        uniform = (h >> np.uint64(11)).astype(np.float64) * 2.0**-53
        return uniform < self.fraction


def heldout_rows(X, fraction, seed):
    """A boolean mask: True for the rows to hold out.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The rows.
    fraction : float in [0, 1)
        The expected share of rows held out.
    seed : int
        Chooses the hash, hence which rows.

    Returns
    -------
    ndarray of bool of shape (n_samples,)

    Notes
    -----
    Each row is projected on three seeded Gaussian directions (a product
    with n_features × 3 multiply-adds per row, a thousandth of the scatter
    update's cost at 2,048 features), the projections rounded to float32
    and hashed. The rounding absorbs the last-bit differences that a
    matrix product may show between chunkings of the same rows; a row
    then changes side only if a projection lies within float64 rounding of
    a float32 boundary, about once in 10⁹ rows.
    """
    X = np.asarray(X)
    n, d = X.shape
    if fraction <= 0 or n == 0:
        return np.zeros(n, dtype=bool)
    rule = HeldoutRule(d, fraction, seed)
    return rule.mask(rule.project(np.asarray(X, dtype=np.float64)))
