"""The exact family's solve through JAX, in float64, on JAX's default device.

The solve is the same mathematics as on the host (:mod:`.least_squares`,
:mod:`.gaussian`): one eigendecomposition of a D×D matrix, the
hyperparameter's scores from its eigenvalues, and the coefficients. Here
the D×D work (``eigh``, the products with V) runs through ``jax.numpy``
on JAX's default device, a GPU when there is one, where an
eigendecomposition of 5,000² takes a twentieth of the host's time; only
D-sized and D×n_targets results come back for least squares (the
eigenvectors stay on the device), the eigenvectors too for the Gaussian
classifier, whose scoring needs them.

Everything is float64, switched on for these calls only with JAX's scoped
``jax.enable_x64`` context (a thread-local setting): importing skcl changes
no process-wide JAX state, and the rest of skcl keeps JAX's float32.
Results equal the numpy path's up to the rounding of another
eigensolver (tested on the CPU: 1e-9 relative on the coefficients at
D = 2,000, well conditioned).
"""

import numpy as np

from .least_squares import RidgeFit, _centred, _gcv

__all__ = ["eigh", "ridge_fixed", "ridge_gcv"]


def _jax():
    import jax
    import jax.numpy as jnp

    return jax, jnp


def eigh(matrix):
    """Eigenvalues and eigenvectors of a symmetric matrix, on the device, in float64.

    Parameters
    ----------
    matrix : ndarray of shape (n, n)

    Returns
    -------
    (ndarray of shape (n,), ndarray of shape (n, n))
        On the host, ascending, as ``numpy.linalg.eigh``.
    """
    jax, jnp = _jax()
    with jax.enable_x64(True):
        values, vectors = jnp.linalg.eigh(jnp.asarray(matrix, dtype=jnp.float64))
        return np.asarray(values), np.asarray(vectors)


def ridge_gcv(moments, targets, relative_grid, choose):
    """Ridge at the α that GCV chooses, solved on the device.

    Parameters
    ----------
    moments : GroupMoments
        One group per class.
    targets : ndarray of shape (n_groups, n_targets)
    relative_grid : sequence of float
        c in α = c · tr(S)/D.
    choose : callable
        ``choose(alphas, scores, fallback)``: the α to use (the host's
        rule, so both paths choose alike).

    Returns
    -------
    fit : RidgeFit
    alpha : float
    scores : ndarray of shape (len(relative_grid),)
        GCV(α), as :func:`.least_squares.gcv_scores`.
    """
    jax, jnp = _jax()
    x_bar, t_bar, S, C = _centred(moments, targets)
    total_squares = float(moments.counts @ ((targets - t_bar) ** 2).sum(1))
    with jax.enable_x64(True):
        values, vectors = jnp.linalg.eigh(jnp.asarray(S))
        values = jnp.clip(values, 0, None)
        projected = vectors.T @ jnp.asarray(C)
        scale = float(values.mean()) or 1.0
        alphas = np.asarray(relative_grid) * scale
        scores = np.asarray(_gcv(jnp, values, projected, total_squares, moments.total,
                                 jnp.asarray(alphas)))
        alpha = float(choose(alphas, scores, 1e-3 * scale))
        coef = np.asarray(vectors @ (projected / (values + alpha)[:, None]))
    return RidgeFit(coef, t_bar - x_bar @ coef), alpha, scores


def ridge_fixed(moments, targets, alpha):
    """Ridge at a given α, solved on the device (as :func:`.least_squares.fit_ridge`)."""
    jax, jnp = _jax()
    x_bar, t_bar, S, C = _centred(moments, targets)
    S[np.diag_indices_from(S)] += alpha
    with jax.enable_x64(True):
        coef = np.asarray(jnp.linalg.solve(jnp.asarray(S), jnp.asarray(C)))
    if not np.isfinite(coef).all():  # numpy raises on a singular S; JAX gives NaN
        raise np.linalg.LinAlgError("Singular matrix: alpha=0 needs an invertible scatter.")
    return RidgeFit(coef, t_bar - x_bar @ coef)
