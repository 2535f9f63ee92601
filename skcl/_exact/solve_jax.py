"""The exact family's D×D linear algebra through JAX, in float64, on JAX's default device.

The same functions as :mod:`.linalg` (the host's), the ``linalg`` of the
device's backend (:class:`~.device.DeviceBackend`): the D×D work runs as
compiled programs (:mod:`.device_kernels`) on JAX's default device, a GPU
when there is one. Matrices come in on the device (the scatter never
leaves it; a host array is sent by an explicit ``jax.device_put``), and
what is D×D stays there: the Cholesky factor, the eigenvectors, Q's
reflectors. Only what the rest of the solve reads on the host comes back:
eigenvalues, the tridiagonal band, the D×K products of a solve or a
rotation.

Everything is float64, switched on for these calls only with JAX's scoped
``jax.enable_x64`` context (a thread-local setting): importing skcl changes
no process-wide JAX state, and the rest of skcl keeps JAX's float32.
Results equal the host's up to the rounding of other kernels (tested on
the CPU: ``tests/test_exact_device.py``).
"""

import numpy as np

from .backend import jax_module
from .device_kernels import solve_kernels
from .linalg import Band, tridiagonal_bands

__all__ = ["band_reduction", "cholesky", "eigh", "rotate", "solve"]


def _on_device(array):
    """``array`` on the device in float64: sent explicitly when it is the host's."""
    jax = jax_module()
    if isinstance(array, jax.Array):
        return array
    return jax.device_put(np.asarray(array, dtype=np.float64))


def _finite(array):
    return bool(solve_kernels()["all_finite"](array))


def eigh(matrix):
    """Eigenvalues (ascending, on the host) and eigenvectors (on the device), float64.

    As :func:`.linalg.eigh`, but the D×D eigenvectors stay on the device.
    """
    with jax_module().enable_x64(True):
        values, vectors = solve_kernels()["eigh"](_on_device(matrix))
        return np.asarray(values), vectors


def cholesky(matrix, overwrite=False):
    """L, lower triangular, with ``matrix`` = L Lᵀ, on the device (as :func:`.linalg.cholesky`).

    ``overwrite`` is accepted for the host's signature: the device works
    on its own copy.

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``matrix`` is not numerically positive definite (JAX gives NaN).
    """
    with jax_module().enable_x64(True):
        factor = solve_kernels()["cholesky"](_on_device(matrix))
        if not _finite(factor):
            raise np.linalg.LinAlgError("Matrix is not positive definite.")
    return factor


def solve(matrix, rhs):
    """``matrix⁻¹ rhs`` on the device (as :func:`.linalg.solve`), on the host (D×K).

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``matrix`` is singular (numpy raises; JAX gives NaN or inf).
    """
    with jax_module().enable_x64(True):
        out = np.asarray(solve_kernels()["solve"](_on_device(matrix), _on_device(rhs)))
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
    kernels = solve_kernels()
    with jax_module().enable_x64(True):
        reduced, diagonal, off, taus = kernels["tridiagonal"](_on_device(matrix))
        return Band(tridiagonal_bands(np.asarray(diagonal), np.asarray(off)),
                    kernels["reflectors"](reduced), taus)


def rotate(reduction, columns, transpose=False):
    """Q·Z, or Qᵀ·Z with ``transpose``, on the device (as :func:`.linalg.rotate`); Z on the host."""
    out = np.array(columns, dtype=np.float64)
    if len(out) < 2 or out.shape[1] == 0:  # a width-1 band: H(j) acts from row j + 1
        return out
    with jax_module().enable_x64(True):
        out[1:] = np.asarray(solve_kernels()["ormqr"](
            reduction.reflectors, reduction.taus, _on_device(out[1:]), transpose=transpose))
    return out
