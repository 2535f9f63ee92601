"""The exact family's D×D linear algebra on the host: numpy, and LAPACK through scipy.

The solves (:mod:`.gaussian`, :mod:`.least_squares`) take the module that does
their D×D work as an argument, ``linalg``: this one, or :mod:`.solve_jax`,
which has the same functions on JAX's device. Everything else of a solve
(the moments, the hyperparameter's scores, the O(D) and O(D·K) steps) is
one code path for both.

What a solve needs, cheapest first (flops for D×D, Cholesky = D³/3):

* :func:`cholesky`: the Gaussian's prediction needs Σ only through
  Σ⁻¹(x − μ) and log det Σ, which its Cholesky factor gives.
* :func:`tridiagonal` and :func:`rotate`: least squares' GCV needs the
  eigenvalues λ_j of S and the K columns VᵀC, not the D×D eigenvectors V.
  Householder's reduction S = Q T Qᵀ (LAPACK ``sytrd``, 4D³/3: about four
  Cholesky factorisations) leaves T tridiagonal, and QᵀC applies Q's
  reflectors to K columns only (``ormqr``, O(D²K)). T's eigenvalues cost
  O(D²) (:func:`tridiagonal_eigvalsh`), and every sum over them that GCV
  needs, a solve with T + αI, O(D·K) (:func:`tridiagonal_solve`); only a
  singular S needs T's eigenvectors U (:func:`tridiagonal_eigh`, divide
  and conquer, O(D³) at worst but cheap there: its repeated zero
  eigenvalues deflate). ``numpy.linalg.eigh`` does the same reduction and
  then forms V = QU (another 2D³ or more): the step these solves leave out.
* :func:`eigh`: the full spectrum, where an option needs Σ(s) or B(α) for
  a whole grid at once (the held-out rules) or Σ is singular.
"""

from typing import NamedTuple

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

__all__ = ["Tridiagonal", "cholesky", "eigh", "rotate", "solve", "tridiagonal",
           "tridiagonal_eigh", "tridiagonal_eigvalsh", "tridiagonal_solve"]


class Tridiagonal(NamedTuple):
    """S = Q T Qᵀ, T symmetric tridiagonal, Q a product of D − 1 Householder reflectors.

    Attributes
    ----------
    diagonal : ndarray of shape (n,)
        T's diagonal, on the host.
    off_diagonal : ndarray of shape (n - 1,)
        T's sub- (and super-) diagonal, on the host.
    reflectors : array of shape (n - 1, n - 1)
        Q's reflectors as LAPACK's ``ormqr`` reads them (``sytrd``'s lower
        triangle, one row down), on the device that reduced S.
    taus : array of shape (n - 1,)
        Their scalar factors.
    """

    diagonal: np.ndarray
    off_diagonal: np.ndarray
    reflectors: object
    taus: object


def eigh(matrix):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (``numpy.linalg.eigh``).

    Parameters
    ----------
    matrix : ndarray of shape (n, n)

    Returns
    -------
    (ndarray of shape (n,), ndarray of shape (n, n))
    """
    return np.linalg.eigh(matrix)


def cholesky(matrix):
    """L, lower triangular, with ``matrix`` = L Lᵀ.

    Parameters
    ----------
    matrix : ndarray of shape (n, n)
        Symmetric; its lower triangle is read.

    Returns
    -------
    ndarray of shape (n, n)

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``matrix`` is not numerically positive definite.
    """
    return scipy.linalg.cholesky(matrix, lower=True, check_finite=False)


def solve(matrix, rhs):
    """``matrix⁻¹ rhs`` (``numpy.linalg.solve``; LinAlgError when singular).

    Parameters
    ----------
    matrix : ndarray of shape (n, n)
    rhs : ndarray of shape (n, k)

    Returns
    -------
    ndarray of shape (n, k)
    """
    return np.linalg.solve(matrix, rhs)


def tridiagonal(matrix):
    """Householder's reduction of a symmetric matrix to tridiagonal form (LAPACK ``dsytrd``).

    Parameters
    ----------
    matrix : ndarray of shape (n, n)
        Symmetric; its lower triangle is read. Not modified.

    Returns
    -------
    Tridiagonal
    """
    n = len(matrix)
    lwork = int(lapack.dsytrd_lwork(n, lower=1)[0])  # blocked: the default is unblocked
    reduced, diagonal, off, taus, info = lapack.dsytrd(
        np.array(matrix, dtype=np.float64, order="F"), lower=1, lwork=max(lwork, 1),
        overwrite_a=1)
    _check_info(info, "dsytrd")
    # Q = H(1)…H(n−1), H(i)'s vector below row i + 1 of column i: a QR
    # factor's reflectors one row down, as LAPACK's own ormtr reads them.
    return Tridiagonal(diagonal, off, np.asfortranarray(reduced[1:, :-1]), taus)


def rotate(reduction, columns, transpose=False):
    """Q·Z, or Qᵀ·Z with ``transpose``, for the Q of a :func:`tridiagonal` reduction.

    Parameters
    ----------
    reduction : Tridiagonal
    columns : ndarray of shape (n, k)
        Z.
    transpose : bool, default=False

    Returns
    -------
    ndarray of shape (n, k)
    """
    out = np.array(columns, dtype=np.float64, order="F")
    if len(out) < 2 or out.shape[1] == 0:
        return out
    trans = "T" if transpose else "N"
    tail = np.asfortranarray(out[1:])
    work = lapack.dormqr("L", trans, reduction.reflectors, reduction.taus, tail, -1)[1]
    result, _, info = lapack.dormqr("L", trans, reduction.reflectors, reduction.taus, tail,
                                    max(int(work[0]), 1), overwrite_c=1)
    _check_info(info, "dormqr")
    out[1:] = result
    return out


def tridiagonal_eigh(diagonal, off_diagonal):
    """Eigenvalues (ascending) and eigenvectors of a symmetric tridiagonal matrix.

    LAPACK's divide and conquer (``dstevd``), as ``numpy.linalg.eigh`` uses
    after its own reduction: the same eigenvalues to rounding. Its cost is
    far below the reduction's: clusters of equal eigenvalues (the null
    space of a scatter with fewer rows than features) deflate.

    Parameters
    ----------
    diagonal : ndarray of shape (n,)
    off_diagonal : ndarray of shape (n - 1,)

    Returns
    -------
    (ndarray of shape (n,), ndarray of shape (n, n))
    """
    diagonal = np.asarray(diagonal, dtype=np.float64)
    if len(diagonal) == 1:
        return diagonal.copy(), np.ones((1, 1))
    values, vectors, info = lapack.dstevd(diagonal, np.asarray(off_diagonal, dtype=np.float64),
                                          compute_v=1)
    _check_info(info, "dstevd")
    return values, vectors


def tridiagonal_eigvalsh(diagonal, off_diagonal):
    """Eigenvalues (ascending) of a symmetric tridiagonal matrix, without its eigenvectors.

    LAPACK's root-free QR (``dsterf``), O(n²): the eigenvalues of
    :func:`tridiagonal_eigh` to rounding, at a fraction of its cost.

    Parameters
    ----------
    diagonal : ndarray of shape (n,)
    off_diagonal : ndarray of shape (n - 1,)

    Returns
    -------
    ndarray of shape (n,)
    """
    diagonal = np.asarray(diagonal, dtype=np.float64)
    if len(diagonal) == 1:
        return diagonal.copy()
    values, info = lapack.dsterf(diagonal, np.asarray(off_diagonal, dtype=np.float64))
    _check_info(info, "dsterf")
    return values


def tridiagonal_solve(diagonal, off_diagonal, rhs, shift=0.0):
    """(T + shift·I)⁻¹·rhs for a symmetric positive definite tridiagonal T + shift·I.

    LAPACK's ``dptsv`` (an L·D·Lᵀ factorisation, stable without pivoting
    for a positive definite matrix), O(n·k).

    Parameters
    ----------
    diagonal : ndarray of shape (n,)
    off_diagonal : ndarray of shape (n - 1,)
    rhs : ndarray of shape (n, k)
    shift : float, default=0.0

    Returns
    -------
    ndarray of shape (n, k)

    Raises
    ------
    numpy.linalg.LinAlgError
        When T + shift·I is not positive definite.
    """
    diagonal = np.asarray(diagonal, dtype=np.float64) + shift
    if len(diagonal) == 1:  # no off-diagonal: LAPACK's wrapper wants one of length n − 1 ≥ 1
        info = 0 if diagonal[0] > 0 else 1
        solution = np.array(rhs, dtype=np.float64) / diagonal[0] if info == 0 else None
    else:
        # The wrapper copies its inputs (overwrite_* = 0): nothing given is changed.
        _, _, solution, info = lapack.dptsv(diagonal, np.asarray(off_diagonal, dtype=np.float64),
                                            np.asarray(rhs, dtype=np.float64))
    if info > 0:
        raise np.linalg.LinAlgError(
            f"The tridiagonal matrix is not positive definite (dptsv: leading minor {info}).")
    _check_info(info, "dptsv")
    return solution


def _check_info(info, routine):
    if info != 0:
        raise np.linalg.LinAlgError(f"LAPACK {routine} failed (info={info}).")
