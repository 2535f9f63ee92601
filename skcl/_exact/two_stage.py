"""LAPACK's two-stage reduction to band form, which scipy does not wrap, through ctypes.

Householder's reduction of a symmetric D×D matrix to tridiagonal form
(``dsytrd``) does half its 4D³/3 flops as matrix-vector products, bound
by memory: at D = 10,000 it took 9–13× a Cholesky on two cores. LAPACK
(since 3.7) also reduces in two stages: ``dsytrd_sy2sb`` to a band of
width b with matrix-matrix products only (4.5× a Cholesky there, at
b = 64), then ``dsytrd_sb2st`` chases the band to tridiagonal form in
O(D²b), cache-resident. The solves need nothing past the band but
solves with it (``dpbsv``) and Q's reflectors, which ``ormqr`` applies
like ``dsytrd``'s; its eigenvalues (``sb2st``, then ``dsterf``) only
where S may be singular.

The two routines are taken from the LAPACK that is already loaded (the
OpenBLAS of scipy's and numpy's wheels export them, as ``scipy_…``); where
none exports them, :func:`routines` is None and the solves use ``dsytrd``.
Integers go by reference as 8-byte buffers holding values below 2³¹, which
a LAPACK with 4-byte integers (little-endian) reads alike: the same call
serves both integer widths.
"""

import ctypes
import functools
import sys
from typing import NamedTuple

import numpy as np

__all__ = ["Routines", "band_eigenvalues", "reduce_to_band", "routines"]

_NAMES = ("dsytrd_sy2sb", "dsytrd_sb2st")
# How the wheels' OpenBLAS (``scipy_`` prefix, ``64_`` for 8-byte integers)
# and other builds name a Fortran routine.
_PREFIXES = ("scipy_", "")
_SUFFIXES = ("_", "64_", "_64_", "")
_ONE_CHARACTER = ctypes.c_size_t(1)  # gfortran's hidden length of each CHARACTER*1


class Routines(NamedTuple):
    """LAPACK's ``dsytrd_sy2sb`` and ``dsytrd_sb2st``, from one shared library."""

    #: A working value of a solve, never kept on an estimator: not trusted in
    #: files (skcl._persistence).
    working_value = True

    sy2sb: object
    sb2st: object
    library: str


@functools.cache
def routines():
    """The two-stage routines of a loaded LAPACK, or None where none exports them.

    Returns
    -------
    Routines or None
    """
    if sys.byteorder != "little":  # the integer buffers below rely on it
        return None
    import scipy.linalg  # noqa: F401  (loads scipy's LAPACK before the search)
    from threadpoolctl import threadpool_info

    libraries = [info["filepath"] for info in threadpool_info() if info["user_api"] == "blas"]
    # scipy's own first: the library whose LAPACK the rest of the solve runs.
    for path in sorted(libraries, key=lambda path: "scipy.libs" not in path):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                found = [getattr(library, prefix + name + suffix, None) for name in _NAMES]
                if all(found):
                    return Routines(*found, path)
    return None


def _integer(value=0):
    return np.array([value], dtype=np.int64)


def _pointer(array):
    return array.ctypes.data_as(ctypes.c_void_p)


def _call(routine, arguments, n_workspaces, n_characters, name):
    """``routine(*arguments, work, lwork, … (n_workspaces pairs), info, lengths)``.

    LAPACK's workspace query (each lwork −1) first writes each workspace's
    size into its first element; the call then gets workspaces of those sizes.
    """
    def pairs(works, lengths):
        return [pointer for work, length in zip(works, lengths)
                for pointer in (_pointer(work), _pointer(_integer(length)))]

    info = _integer()
    characters = [_ONE_CHARACTER] * n_characters
    queries = [np.zeros(1) for _ in range(n_workspaces)]
    routine(*arguments, *pairs(queries, [-1] * n_workspaces), _pointer(info), *characters)
    _check(info, name)
    works = [np.zeros(max(int(query[0]), 1)) for query in queries]
    routine(*arguments, *pairs(works, [len(work) for work in works]), _pointer(info),
            *characters)
    _check(info, name)


def reduce_to_band(matrix, width, found):
    """S = Q B Qᵀ with B of ``width`` sub-diagonals (LAPACK ``dsytrd_sy2sb``).

    Parameters
    ----------
    matrix : ndarray of shape (n, n), float64, Fortran-contiguous
        Symmetric; its lower triangle is read, then overwritten.
    width : int
        b, with 1 ≤ b < n.
    found : Routines

    Returns
    -------
    bands : ndarray of shape (width + 1, n)
        B's lower band as LAPACK stores it: ``bands[i - j, j]`` = B[i, j].
    reflectors : ndarray of shape (n - width, n - width)
        Q's reflectors as ``ormqr`` reads them: H(j)'s vector has its unit
        at row j + b of S, ``reflectors[j:, j]`` from there down.
    taus : ndarray of shape (n - width,)
    """
    n = len(matrix)
    if matrix.dtype != np.float64 or not matrix.flags.f_contiguous:
        raise ValueError("reduce_to_band needs a Fortran-contiguous float64 matrix.")
    bands = np.zeros((width + 1, n), order="F")
    taus = np.zeros(n - width)
    before = (b"L", _pointer(_integer(n)), _pointer(_integer(width)), _pointer(matrix),
              _pointer(_integer(n)), _pointer(bands), _pointer(_integer(width + 1)),
              _pointer(taus))
    _call(found.sy2sb, before, 1, 1, "dsytrd_sy2sb")
    return bands, np.asfortranarray(matrix[width:, :n - width]), taus


def band_eigenvalues(bands, found):
    """T = Q₂ᵀ B Q₂ tridiagonal for a symmetric band B (``dsytrd_sb2st``, Q₂ not kept).

    Parameters
    ----------
    bands : ndarray of shape (width + 1, n)
        B's lower band, as :func:`reduce_to_band` gives it. Not modified.
    found : Routines

    Returns
    -------
    diagonal : ndarray of shape (n,)
    off_diagonal : ndarray of shape (n - 1,)
        T's, with B's eigenvalues.
    """
    width, n = bands.shape[0] - 1, bands.shape[1]
    chased = np.array(bands, dtype=np.float64, order="F")
    diagonal, off_diagonal = np.zeros(n), np.zeros(max(n - 1, 1))
    before = (b"N", b"N", b"L", _pointer(_integer(n)), _pointer(_integer(width)),
              _pointer(chased), _pointer(_integer(width + 1)), _pointer(diagonal),
              _pointer(off_diagonal))
    _call(found.sb2st, before, 2, 3, "dsytrd_sb2st")
    return diagonal, off_diagonal[:n - 1]


def _check(info, routine):
    # A LAPACK with 4-byte integers writes a negative INFO's low half only:
    # any nonzero reading is a failure either way.
    if info[0] != 0:
        raise np.linalg.LinAlgError(f"LAPACK {routine} failed (info={int(info[0])}).")
