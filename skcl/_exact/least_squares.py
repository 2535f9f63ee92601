"""Ridge regression on class targets, from the classes' moments.

With one target per class (one-hot; ±1 when there are two classes), a
row's target is constant within its class, so least squares depends on
the data only through each class's weight n_c and mean μ_c and the pooled
within-class scatter W:

    x̄ = Σ n_c μ_c / n,   S = W + Σ n_c (μ_c − x̄)(μ_c − x̄)ᵀ,
    C = Σ n_c (μ_c − x̄)(t_c − t̄)ᵀ,   B = (S + αI)⁻¹ C,   b = t̄ − Bᵀx̄,

scikit-learn's ``Ridge(alpha, fit_intercept=True)`` on those targets (the
intercept is not penalised). The loss is quadratic in (B, b), so the
moments *are* the previous loss, and AQC's quadratic stand-in of it is
exact: AQC with a Gaussian likelihood on a fixed linear model is this.

One eigendecomposition of S gives B(α) for every α, and the exact squared
error of held-out rows for a whole grid of α.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["RidgeFit", "RELATIVE_ALPHA_GRID", "class_targets", "fit_ridge",
           "heldout_squared_error"]

#: ``alpha="auto"`` chooses α = c · tr(S)/D among these c: relative to the
#: mean eigenvalue of S, so the grid fits features of any scale.
RELATIVE_ALPHA_GRID = tuple(10.0 ** np.arange(-7, 1.5, 0.5))


class RidgeFit(NamedTuple):
    """The fitted linear map: decision = X @ coef + intercept.

    Attributes
    ----------
    coef : ndarray of shape (n_features, n_targets)
    intercept : ndarray of shape (n_targets,)
    """

    coef: np.ndarray
    intercept: np.ndarray


def class_targets(n_classes):
    """The target vector of each class: rows of shape (n_classes, n_targets).

    One-hot for three classes or more; one output, −1 and +1, for two (as
    scikit-learn's ``RidgeClassifier``); one output, +1, for one class.
    """
    if n_classes == 2:
        return np.array([[-1.0], [1.0]])
    if n_classes == 1:
        return np.ones((1, 1))
    return np.eye(n_classes)


def _centred(moments, targets):
    """x̄, t̄, S and C of the rows whose class moments are given."""
    n = moments.total
    x_bar = moments.counts @ moments.means / n
    t_bar = moments.counts @ targets / n
    spread = (moments.means - x_bar) * np.sqrt(moments.counts)[:, None]
    S = moments.scatter + spread.T @ spread
    C = ((moments.means - x_bar) * moments.counts[:, None]).T @ (targets - t_bar)
    return x_bar, t_bar, S, C


def fit_ridge(moments, targets, alpha):
    """Ridge regression of ``targets`` (one row per group) at strength α.

    Parameters
    ----------
    moments : GroupMoments
        One group per class.
    targets : ndarray of shape (n_groups, n_targets)
        Each group's target row.
    alpha : float
        α > 0, or 0 when S is invertible.

    Returns
    -------
    RidgeFit
    """
    x_bar, t_bar, S, C = _centred(moments, targets)
    S[np.diag_indices_from(S)] += alpha
    coef = np.linalg.solve(S, C)
    return RidgeFit(coef, t_bar - x_bar @ coef)


def alpha_scale(moments, targets):
    """tr(S)/D, the unit of ``RELATIVE_ALPHA_GRID``."""
    S = _centred(moments, targets)[2]
    return float(np.trace(S)) / len(S) or 1.0


def heldout_squared_error(train, train_targets, heldout, heldout_targets, alphas):
    """The exact mean squared error of held-out rows, for each α.

    Σ_i ‖t_i − Bᵀ(x_i − x̄) − t̄‖² over the held-out rows, from their class
    moments: with u = x − x̄ and r = t − t̄, it is Σ‖r‖² − 2 tr(BᵀΣ u rᵀ) +
    tr(BᵀΣ u uᵀ B), and in S's eigenbasis B(α) = V diag(1/(λ+α)) VᵀC, so
    each α costs O(D²) after one eigendecomposition.

    Returns
    -------
    ndarray of shape (len(alphas),)
        Mean squared error per held-out row (lower is better); NaN when
        there is no held-out row.
    """
    m = heldout.total
    if m <= 0:
        return np.full(len(alphas), np.nan)
    x_bar, t_bar, S, C = _centred(train, train_targets)
    values, V = np.linalg.eigh(S)
    values = np.clip(values, 0, None)
    offsets = heldout.means - x_bar
    residual_targets = heldout_targets - t_bar
    spread = offsets * np.sqrt(heldout.counts)[:, None]
    A = heldout.scatter + spread.T @ spread
    B = (offsets * heldout.counts[:, None]).T @ residual_targets
    Ct, Bt = V.T @ C, V.T @ B
    AG = (V.T @ A @ V) * (Ct @ Ct.T)
    constant = float(heldout.counts @ (residual_targets**2).sum(1))
    errors = []
    for alpha in alphas:
        q = 1 / np.maximum(values + alpha, np.finfo(float).tiny)
        errors.append(constant - 2 * float(q @ (Ct * Bt).sum(1)) + float(q @ AG @ q))
    return np.asarray(errors) / m
