"""The exact family's D×D linear algebra through JAX, in float64, on JAX's default device.

The same functions as :mod:`.linalg` (the host's), for the solves of
:mod:`.gaussian` and :mod:`.least_squares`, which take either module as
their ``linalg``: the D×D work runs through ``jax.lax.linalg`` on JAX's
default device, a GPU when there is one, and only what the rest of the
solve reads comes back (the tridiagonal band and D×K products for least squares,
the Cholesky factor for the Gaussian, whose scoring on the host needs it);
Q's reflectors stay on the device.

Everything is float64, switched on for these calls only with JAX's scoped
``jax.enable_x64`` context (a thread-local setting): importing skcl changes
no process-wide JAX state, and the rest of skcl keeps JAX's float32.
Results equal the host's up to the rounding of other kernels (tested on
the CPU: ``tests/test_exact_device.py``).
"""

import numpy as np

from .linalg import Band, tridiagonal_bands

__all__ = ["band_reduction", "cholesky", "eigh", "rotate", "solve"]


def _jax():
    import jax
    import jax.numpy as jnp

    return jax, jnp


def eigh(matrix):
    """Eigenvalues (ascending) and eigenvectors, on the device in float64 (as :func:`.linalg.eigh`).

    Both come back to the host.
    """
    jax, jnp = _jax()
    with jax.enable_x64(True):
        values, vectors = jnp.linalg.eigh(jnp.asarray(matrix, dtype=jnp.float64))
        return np.asarray(values), np.asarray(vectors)


def cholesky(matrix, overwrite=False):
    """L, lower triangular, with ``matrix`` = L Lᵀ, on the device (as :func:`.linalg.cholesky`).

    ``overwrite`` is accepted for the host's signature: the device works
    on its own copy.

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``matrix`` is not numerically positive definite (JAX gives NaN).
    """
    jax, jnp = _jax()
    with jax.enable_x64(True):
        factor = np.asarray(jnp.linalg.cholesky(jnp.asarray(matrix, dtype=jnp.float64)))
    if not np.isfinite(factor).all():
        raise np.linalg.LinAlgError("Matrix is not positive definite.")
    return factor


def solve(matrix, rhs):
    """``matrix⁻¹ rhs`` on the device (as :func:`.linalg.solve`).

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``matrix`` is singular (numpy raises; JAX gives NaN or inf).
    """
    jax, jnp = _jax()
    with jax.enable_x64(True):
        out = np.asarray(jnp.linalg.solve(jnp.asarray(matrix, dtype=jnp.float64),
                                          jnp.asarray(rhs, dtype=jnp.float64)))
    if not np.isfinite(out).all():
        raise np.linalg.LinAlgError("Singular matrix.")
    return out


def band_reduction(matrix, width=None, overwrite=False):
    """Householder's reduction S = Q T Qᵀ on the device (as :func:`.linalg.band_reduction`).

    T is tridiagonal (a band of width 1) whatever ``width`` asks: JAX has no
    two-stage reduction. ``overwrite`` is accepted for the host's
    signature; the device works on its own copy whatever it says.

    Returns
    -------
    Band
        T's band on the host, Q's reflectors on the device.
    """
    jax, jnp = _jax()
    with jax.enable_x64(True):
        reduced, diagonal, off, taus = jax.lax.linalg.tridiagonal(
            jnp.asarray(matrix, dtype=jnp.float64), lower=True)
        return Band(tridiagonal_bands(np.asarray(diagonal), np.asarray(off)), reduced[1:, :-1],
                    taus)


def rotate(reduction, columns, transpose=False):
    """Q·Z, or Qᵀ·Z with ``transpose``, on the device (as :func:`.linalg.rotate`)."""
    jax, jnp = _jax()
    out = np.array(columns, dtype=np.float64)
    if len(out) < 2 or out.shape[1] == 0:  # a width-1 band: H(j) acts from row j + 1
        return out
    with jax.enable_x64(True):
        out[1:] = np.asarray(jax.lax.linalg.ormqr(reduction.reflectors, reduction.taus,
                                                  jnp.asarray(out[1:]), left=True,
                                                  transpose=transpose))
    return out
