"""The exact family's D×D linear algebra on the host: numpy, and LAPACK through scipy.

The solves (:mod:`.gaussian`, :mod:`.least_squares`) take the module that does
their D×D work as an argument, ``linalg``: this one, or :mod:`.solve_jax`,
which has the same functions on JAX's device. Everything else of a solve
(the moments, the hyperparameter's scores, the O(D) and O(D·K) steps) is
one code path for both.

What a solve needs, cheapest first (flops for D×D, Cholesky = D³/3):

* :func:`cholesky`: the Gaussian's prediction needs Σ only through
  Σ⁻¹(x − μ) and log det Σ, which its Cholesky factor gives.
* :func:`band_reduction` and :func:`rotate`: least squares' GCV needs sums
  over the eigenvalues λ_j of S weighted by the K columns VᵀC, not the D×D
  eigenvectors V, nor even λ. Householder's reduction S = Q B Qᵀ (4D³/3:
  about four Cholesky factorisations) leaves B banded, and QᵀC applies Q's
  reflectors to K columns only (``ormqr``, O(D²K)). At large D the
  reduction stops at a band of ``BAND_WIDTH`` sub-diagonals (LAPACK's
  first stage, ``dsytrd_sy2sb``, all matrix-matrix products:
  :mod:`.two_stage`); otherwise, or where the loaded LAPACK lacks it, B is
  tridiagonal (``dsytrd``). Each weighted sum is a solve with B + αI,
  O(D·width²) (:func:`band_solve`), and the leverages Σ_j λ_j/(λ_j + α)
  of a whole α grid one selected inversion (:func:`band_inverse_traces`);
  λ itself (:func:`band_eigvalsh`, O(D²·width)) only where a Cholesky
  factor does not show S positive definite
  (:func:`certainly_positive_definite`), and B's eigenvectors U only where
  S is singular (:func:`band_eigh`). ``numpy.linalg.eigh`` reduces to
  tridiagonal form, memory-bound, and then forms V = QU (another 2D³ or
  more): the steps these solves leave out.
* :func:`eigh`: the full spectrum, where an option needs Σ(s) or B(α) for
  a whole grid at once (the held-out rules) or Σ is singular.
"""

from typing import NamedTuple

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from . import two_stage
from .openblas import DIRECT_MAX_COLUMNS

__all__ = ["BAND_WIDTH", "Band", "CHOLESKY_BLOCK", "CHOLESKY_MAX_DIRECT", "INVERSE_BLOCK",
           "NARROW_BAND_MAX_SIZE", "NARROW_BAND_WIDTH", "TWO_STAGE_MIN_SIZE", "band_eigh",
           "band_eigvalsh", "band_inverse_traces", "band_reduction", "band_solve",
           "certainly_positive_definite", "cholesky", "eigh", "rotate", "solve",
           "tridiagonal_bands"]

# b of the two-stage reduction: wider bands make the first stage faster
# (more work per memory pass) and the band's solves and selected inversion
# slower (O(D·b²)). At D = 10,000 on two cores the first stage took 5.7× a
# Cholesky at b = 32, 4.5–4.7× at 64 and 4.3× at 96 (one run each). Below
# NARROW_BAND_MAX_SIZE the band's work weighs more than the first stage
# gains: GCV's reduction, solves and traces took 0.36 s of CPU at b = 32
# against 0.42 s at 64 for D = 2,000, 0.85 against 0.81 s at 2,500 (one
# BLAS thread, best of three; 5,000: 5.4 against 5.0 s).
BAND_WIDTH = 64
NARROW_BAND_WIDTH = 32
NARROW_BAND_MAX_SIZE = 2_300
# Below this D the tridiagonal reduction is as fast (and D³ is small).
TWO_STAGE_MIN_SIZE = 1000
# LAPACK's Cholesky (potrf) updates the whole trailing matrix by OpenBLAS's
# threaded syrk, which segfaults for wide products in 0.3.30 and 0.3.31
# (numpy's and scipy's potrf alike from 16,384: .openblas): above this
# order the factor is built by block columns (_left_looking_cholesky).
CHOLESKY_MAX_DIRECT = DIRECT_MAX_COLUMNS
CHOLESKY_BLOCK = 2_048
# The blocks of band_inverse_traces: numpy's batched 32×32 products are
# fast, and n/32 Python steps few.
INVERSE_BLOCK = 32


class Band(NamedTuple):
    """S = Q B Qᵀ: B symmetric banded, Q a product of Householder reflectors.

    A tridiagonal B is the band of width 1.

    Attributes
    ----------
    bands : ndarray of shape (width + 1, n)
        B's lower band on the host, as LAPACK stores it:
        ``bands[i - j, j]`` = B[i, j] (the diagonal first, then each
        sub-diagonal, padded at its end).
    reflectors : array of shape (n - width, n - width)
        Q's reflectors as LAPACK's ``ormqr`` reads them (H(j)'s vector has
        its unit at row j + width of S), on the device that reduced S.
    taus : array of shape (n - width,)
        Their scalar factors.
    """

    #: A working value of a solve, never kept on an estimator: not trusted in
    #: files (skcl._persistence).
    working_value = True

    bands: np.ndarray
    reflectors: object
    taus: object

    @property
    def width(self):
        """The number of sub-diagonals of B."""
        return len(self.bands) - 1


def tridiagonal_bands(diagonal, off_diagonal):
    """The (2, n) lower band of a symmetric tridiagonal matrix (off-diagonal padded with 0)."""
    diagonal = np.asarray(diagonal, dtype=np.float64)
    off = np.zeros_like(diagonal)
    off[:len(diagonal) - 1] = off_diagonal
    return np.vstack([diagonal, off])


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


def cholesky(matrix, overwrite=False):
    """L, lower triangular, with ``matrix`` = L Lᵀ.

    Parameters
    ----------
    matrix : ndarray of shape (n, n)
        Symmetric; its lower triangle is read.
    overwrite : bool, default=False
        Whether ``matrix`` may be overwritten: a float64 one, in either
        order, then holds L (no D×D copy), also when this raises.

    Returns
    -------
    ndarray of shape (n, n)

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``matrix`` is not numerically positive definite.
    """
    matrix = _fortran(matrix, overwrite)
    if len(matrix) > CHOLESKY_MAX_DIRECT:
        return _left_looking_cholesky(matrix)
    return scipy.linalg.cholesky(matrix, lower=True, check_finite=False, overwrite_a=True)


def _left_looking_cholesky(a):
    """L in ``a``'s memory (Fortran-ordered float64), block column by block column.

    Each block column of ``CHOLESKY_BLOCK`` columns first loses the
    product of its rows with the columns already factored (one GEMM,
    L[k:, :k] L[k:k+b, :k]ᵀ), then its diagonal block is factored (LAPACK
    ``potrf``, b×b) and the rows below it solved against that factor
    (``trsm``). The flops of LAPACK's Cholesky, D³/3, with no syrk wider
    than a block, where LAPACK's own right-looking updates call OpenBLAS's
    threaded syrk across the whole trailing matrix (``CHOLESKY_MAX_DIRECT``).
    """
    n = len(a)
    for k in range(0, n, CHOLESKY_BLOCK):
        end = min(k + CHOLESKY_BLOCK, n)
        panel = a[k:, k:end]  # a view: written in place
        if k:
            panel -= a[k:, :k] @ a[k:end, :k].T
            a[:k, k:end] = 0.0  # the upper triangle, as scipy's factor has it
        diagonal, info = lapack.dpotrf(panel[:end - k], lower=1, clean=1)
        if info > 0:
            raise np.linalg.LinAlgError(
                f"{k + info}-th leading minor of the array is not positive definite")
        _check_info(info, "dpotrf")
        panel[:end - k] = diagonal
        if end < n:  # L21 = A21 L11⁻ᵀ
            panel[end - k:] = blas.dtrsm(1.0, diagonal, panel[end - k:], side=1, lower=1,
                                         trans_a=1)
    return a


def solve(matrix, rhs):
    """``matrix⁻¹ rhs`` for a symmetric positive definite ``matrix`` (S + αI of a ridge fit).

    By its Cholesky factor (D³/3 flops, half of LU's), in ``matrix``'s own
    memory, which is overwritten.

    Parameters
    ----------
    matrix : ndarray of float64 of shape (n, n)
        Symmetric; the caller's own.
    rhs : ndarray of shape (n, k)

    Returns
    -------
    ndarray of shape (n, k)

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``matrix`` is not numerically positive definite (it is
        overwritten then too).
    """
    factor = cholesky(matrix, overwrite=True)
    return scipy.linalg.cho_solve((factor, True), np.asarray(rhs, dtype=np.float64),
                                  check_finite=False)


def band_reduction(matrix, width=None, overwrite=False):
    """Householder's reduction of a symmetric matrix to band form, S = Q B Qᵀ.

    Parameters
    ----------
    matrix : ndarray of shape (n, n)
        Symmetric; its lower triangle is read.
    width : int, optional
        B's sub-diagonals: 1 (tridiagonal, LAPACK ``dsytrd``) or more
        (``dsytrd_sy2sb``, where the loaded LAPACK has it). By default
        ``NARROW_BAND_WIDTH`` from ``TWO_STAGE_MIN_SIZE`` rows on and
        ``BAND_WIDTH`` above ``NARROW_BAND_MAX_SIZE``, where it is there,
        else 1.
    overwrite : bool, default=False
        Whether ``matrix`` may be overwritten (a float64 one, in either
        order, then is: the reduction works in its memory, with no D×D copy).

    Returns
    -------
    Band
    """
    n = len(matrix)
    found = two_stage.routines()
    if width is None:
        width = 1 if n < TWO_STAGE_MIN_SIZE or found is None else (
            NARROW_BAND_WIDTH if n <= NARROW_BAND_MAX_SIZE else BAND_WIDTH)
    if width > 1 and n > width + 1 and found is None:
        raise np.linalg.LinAlgError("The loaded LAPACK has no dsytrd_sy2sb.")
    work = _fortran(matrix, overwrite)
    if width > 1 and n > width + 1:
        return Band(*two_stage.reduce_to_band(work, width, found))
    lwork = int(lapack.dsytrd_lwork(n, lower=1)[0])  # blocked: the default is unblocked
    reduced, diagonal, off, taus, info = lapack.dsytrd(work, lower=1, lwork=max(lwork, 1),
                                                       overwrite_a=1)
    _check_info(info, "dsytrd")
    # Q = H(1)…H(n−1), H(i)'s vector below row i + 1 of column i: a QR
    # factor's reflectors one row down, as LAPACK's own ormtr reads them.
    return Band(tridiagonal_bands(diagonal, off), np.asfortranarray(reduced[1:, :-1]), taus)


def rotate(reduction, columns, transpose=False):
    """Q·Z, or Qᵀ·Z with ``transpose``, for the Q of a :func:`band_reduction`.

    Parameters
    ----------
    reduction : Band
    columns : ndarray of shape (n, k)
        Z.
    transpose : bool, default=False

    Returns
    -------
    ndarray of shape (n, k)
    """
    out = np.array(columns, dtype=np.float64, order="F")
    start = reduction.width  # H(j) acts on rows j + width and below
    if len(out) <= start or out.shape[1] == 0:
        return out
    trans = "T" if transpose else "N"
    tail = np.asfortranarray(out[start:])
    work = lapack.dormqr("L", trans, reduction.reflectors, reduction.taus, tail, -1)[1]
    result, _, info = lapack.dormqr("L", trans, reduction.reflectors, reduction.taus, tail,
                                    max(int(work[0]), 1), overwrite_c=1)
    _check_info(info, "dormqr")
    out[start:] = result
    return out


def band_eigvalsh(bands):
    """Eigenvalues (ascending) of a symmetric band matrix, without its eigenvectors.

    A band wider than tridiagonal is first chased to tridiagonal form
    (LAPACK ``dsytrd_sb2st``, O(n²·width)); a tridiagonal one's eigenvalues
    come from root-free QR (``dsterf``, O(n²)): the eigenvalues of
    :func:`band_eigh` to rounding, at a fraction of its cost.

    Parameters
    ----------
    bands : ndarray of shape (width + 1, n)
        The lower band, as :class:`Band` holds it.

    Returns
    -------
    ndarray of shape (n,)
    """
    bands = np.asarray(bands, dtype=np.float64)
    n = bands.shape[1]
    if n == 1 or len(bands) == 1:
        return np.sort(bands[0])
    if len(bands) == 2:
        diagonal, off_diagonal = bands[0], bands[1, :n - 1]
    else:
        found = two_stage.routines()
        if found is None:
            return scipy.linalg.eig_banded(bands, lower=True, eigvals_only=True,
                                           check_finite=False)
        diagonal, off_diagonal = two_stage.band_eigenvalues(bands, found)
    values, info = lapack.dsterf(diagonal, off_diagonal)
    _check_info(info, "dsterf")
    return values


def band_eigh(bands):
    """Eigenvalues (ascending) and eigenvectors of a symmetric band matrix.

    LAPACK's divide and conquer, ``dstevd``, for a tridiagonal matrix (as
    ``numpy.linalg.eigh`` uses after its own reduction): its cost is far
    below the reduction's where it is used, as clusters of equal
    eigenvalues (the null space of a scatter with fewer rows than features)
    deflate. A wider band is reduced again, as a dense matrix
    (``numpy.linalg.eigh``): LAPACK's band routine (``dsbevd``) forms its
    eigenvectors by plane rotations, 4–5× slower at n = 2,000–4,000.
    The eigenvalues are :func:`band_eigvalsh`'s to rounding.

    Parameters
    ----------
    bands : ndarray of shape (width + 1, n)

    Returns
    -------
    (ndarray of shape (n,), ndarray of shape (n, n))
    """
    bands = np.asarray(bands, dtype=np.float64)
    n = bands.shape[1]
    if n == 1:
        return bands[0].copy(), np.ones((1, 1))
    if len(bands) == 2:
        values, vectors, info = lapack.dstevd(bands[0], bands[1, :n - 1], compute_v=1)
        _check_info(info, "dstevd")
        return values, vectors
    dense = np.zeros((n, n))
    for lag, band in enumerate(bands):
        dense[np.arange(lag, n), np.arange(n - lag)] = band[:n - lag]
    return np.linalg.eigh(dense, UPLO="L")


def band_inverse_traces(bands, shifts):
    """tr((B + s·I)⁻¹) for each shift s, for a symmetric band B + s·I positive definite.

    Block selected inversion (Takahashi, Fagan and Chin, 1973): B is block
    tridiagonal in blocks of ``INVERSE_BLOCK`` rows (at least its width);
    with the block Cholesky factor, L_k on the diagonal and M_k below it,
    the inverse's diagonal blocks are, from the last one back,

        Z_kk = L_k⁻ᵀL_k⁻¹ + G_k Z_{k+1,k+1} G_kᵀ,   G_k = L_k⁻ᵀM_kᵀ,

    O(n·b²) per shift, all shifts at once: the eigenvalues' sum
    Σ_j 1/(λ_j + s) without the eigenvalues.

    Parameters
    ----------
    bands : ndarray of shape (width + 1, n)
        B's lower band, as :class:`Band` holds it.
    shifts : array-like of shape (n_shifts,)

    Returns
    -------
    ndarray of shape (n_shifts,)

    Raises
    ------
    numpy.linalg.LinAlgError
        When some B + s·I is not positive definite.
    """
    bands = np.asarray(bands, dtype=np.float64)
    shifts = np.asarray(shifts, dtype=np.float64)
    width, n = len(bands) - 1, bands.shape[1]
    size = max(width, INVERSE_BLOCK)
    n_blocks = -(-n // size)
    pad = n_blocks * size - n
    # Padding rows of B: 1 on the diagonal, uncoupled; their 1/(1 + s) is taken off at the end.
    padded = np.zeros((width + 1, n + pad))
    padded[:, :n] = bands
    for lag in range(1, width + 1):
        padded[lag, n - lag:] = 0.0  # past B's last row: unused by LAPACK, maybe not zero
    padded[0, n:] = 1.0
    rows, columns = np.indices((size, size))
    starts = size * np.arange(n_blocks)[:, None]

    def blocks(offset, count):  # B's blocks (k + offset/size, k), k < count, from the band
        lag = offset + rows - columns
        inside = (lag >= 0) & (lag <= width)
        out = np.zeros((count, size, size))
        out[:, rows[inside], columns[inside]] = padded[lag[inside], starts[:count]
                                                       + columns[inside]]
        return out

    diagonal = blocks(0, n_blocks)
    diagonal += np.tril(diagonal, -1).transpose(0, 2, 1)  # the upper triangle, by symmetry
    below = blocks(size, n_blocks - 1)
    eye = np.eye(size)
    inverses, couplings = [], []
    current = diagonal[0] + shifts[:, None, None] * eye
    for k in range(n_blocks):
        inverse = np.linalg.inv(np.linalg.cholesky(current))  # L_k⁻¹, one per shift
        inverses.append(inverse)
        if k + 1 < n_blocks:
            coupling = below[k] @ inverse.transpose(0, 2, 1)  # M_k = E_k L_k⁻ᵀ
            couplings.append(inverse.transpose(0, 2, 1) @ coupling.transpose(0, 2, 1))  # G_k
            current = (diagonal[k + 1] + shifts[:, None, None] * eye
                       - coupling @ coupling.transpose(0, 2, 1))
    Z = inverses[-1].transpose(0, 2, 1) @ inverses[-1]
    traces = np.trace(Z, axis1=1, axis2=2)
    for k in range(n_blocks - 2, -1, -1):
        Z = (inverses[k].transpose(0, 2, 1) @ inverses[k]
             + couplings[k] @ Z @ couplings[k].transpose(0, 2, 1))
        traces = traces + np.trace(Z, axis1=1, axis2=2)
    return traces - pad / (1.0 + shifts)


def certainly_positive_definite(bands, margin):
    """Whether B − τI has a Cholesky factor, τ = ``margin`` · D · ε · ‖B‖∞ (LAPACK ``dpbtrf``).

    ‖B‖∞ bounds B's largest eigenvalue, and a Cholesky factor's backward
    error is rounding: a factor means every eigenvalue of B is above about
    τ, with no eigenvalue computed. False says nothing either way.

    Parameters
    ----------
    bands : ndarray of shape (width + 1, n)
    margin : float

    Returns
    -------
    bool
    """
    bands = np.asarray(bands, dtype=np.float64)
    width, n = len(bands) - 1, bands.shape[1]
    magnitudes = np.abs(bands)
    row_sums = magnitudes[0].copy()
    for lag in range(1, width + 1):
        row_sums[lag:] += magnitudes[lag, :n - lag]  # B[i, i − lag], below the diagonal
        row_sums[:n - lag] += magnitudes[lag, :n - lag]  # B[i, i + lag], above it
    shifted = np.array(bands, order="F")
    shifted[0] -= margin * n * np.finfo(np.float64).eps * row_sums.max()
    _, info = lapack.dpbtrf(shifted, lower=1, overwrite_ab=1)
    return info == 0


def band_solve(bands, rhs, shift=0.0):
    """(B + shift·I)⁻¹·rhs for a symmetric positive definite band matrix B + shift·I.

    LAPACK's banded Cholesky (``dpbsv``), O(n·width·(width + k)).

    Parameters
    ----------
    bands : ndarray of shape (width + 1, n)
        B's lower band, as :class:`Band` holds it.
    rhs : ndarray of shape (n, k)
    shift : float, default=0.0

    Returns
    -------
    ndarray of shape (n, k)

    Raises
    ------
    numpy.linalg.LinAlgError
        When B + shift·I is not positive definite.
    """
    shifted = np.array(bands, dtype=np.float64, order="F")
    shifted[0] += shift
    # The wrapper copies rhs (overwrite_b = 0): nothing given is changed.
    _, solution, info = lapack.dpbsv(shifted, np.asarray(rhs, dtype=np.float64), lower=1,
                                     overwrite_ab=1)
    if info > 0:
        raise np.linalg.LinAlgError(
            f"The band matrix is not positive definite (dpbsv: leading minor {info}).")
    _check_info(info, "dpbsv")
    return solution


def _fortran(matrix, overwrite):
    """A symmetric matrix as a Fortran-ordered float64 array for LAPACK to overwrite.

    ``matrix``'s own memory where ``overwrite`` allows and it is float64 (a
    C-ordered S is the Fortran-ordered Sᵀ = S), else a copy.
    """
    if not overwrite:
        return np.array(matrix, dtype=np.float64, order="F")
    return np.asfortranarray(matrix.T if matrix.flags.c_contiguous else matrix, dtype=np.float64)


def _check_info(info, routine):
    if info != 0:
        raise np.linalg.LinAlgError(f"LAPACK {routine} failed (info={info}).")
