"""What RandomFeatures reads of its input before it multiplies: units, range, memory.

Three checks that keep the random features meaningful whatever the input's
units and finite whatever its size:

- :func:`centre_and_spread`: the mean μ and standard deviation σ of every
  entry of the fitted rows, one scalar each (as scikit-learn's
  ``RBFSampler(gamma="scale")`` reads one variance), so that
  (x − μ)/σ is the same for raw uint8 pixels, pixels / 255 and
  standardised pixels;
- :func:`check_preactivations`: a bound on |(x − μ)/σ · W + b| that refuses,
  before any product, inputs whose pre-activations would overflow the
  features' dtype;
- :func:`check_machine_memory`: refuses an allocation beyond the machine's
  physical memory, or beyond what the process's address-space limit
  leaves it, before it is tried;

and :func:`nonzero_fraction`, which tells sparse rows (hashed text) from
pixels and tabular rows for ``scale="auto"``'s rule, and
:func:`standardised`, (x − μ)/σ without overflow.
"""

import os

import numpy as np
import scipy.sparse as sp

__all__ = ["address_space_left", "centre_and_spread", "check_machine_memory",
           "check_preactivations", "dense_row_blocks", "machine_memory", "nonzero_fraction",
           "standardised"]


def dense_row_blocks(X, rows):
    """X's rows, ``rows`` at a time, as dense float64 arrays (sparse ones densified per block).

    Parameters
    ----------
    X : ndarray or scipy CSR matrix of shape (n_samples, n_features)
    rows : int

    Yields
    ------
    ndarray of shape (≤ rows, n_features), float64
    """
    for start in range(0, X.shape[0], max(1, int(rows))):
        block = X[start:start + rows]
        yield block.toarray().astype(np.float64, copy=False) if sp.issparse(block) else \
            np.asarray(block, dtype=np.float64)


def standardised(block, centre, spread):
    """(x − μ)/σ of dense rows in float64, without overflow where the result is finite.

    x − μ alone may overflow where (x − μ)/σ does not (rows spanning
    ±1.7e308 have σ near 1e308 and standardised values near 1): then the
    halves x/2 − μ/2 and σ/2 give the same quotient, exact for every
    normal x. A value beyond float64 even after scaling comes back inf,
    for :func:`check_preactivations` to refuse.

    Parameters
    ----------
    block : ndarray of shape (n_samples, n_features)
        Finite rows.
    centre, spread : float
        μ and σ (> 0).

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64
        A new array, except for μ = 0 and σ = 1 where a float64 ``block``
        comes back as it is.
    """
    X = np.asarray(block, dtype=np.float64)
    if (centre, spread) == (0.0, 1.0):
        return X
    with np.errstate(over="ignore"):
        Z = X - centre
        if np.isfinite(Z).all():
            Z /= spread
        else:
            Z = X / 2 - centre / 2
            Z /= spread / 2
    return Z


def centre_and_spread(X, rows):
    """μ and σ of every entry of X: one scalar centre, one scalar spread.

    Computed in three passes over blocks of rows (the largest |x|, then
    the mean and the variance of x / max|x|), so that neither float64
    overflow (inputs near 1e300) nor a copy of X is needed. A constant X
    (σ = 0) gets σ = 1, as ``RBFSampler(gamma="scale")`` takes γ = 1 there.

    Parameters
    ----------
    X : ndarray, scipy CSR matrix or dask array of shape (n_samples, n_features)
        A Dask array is reduced on its workers.
    rows : int
        Rows per block of an in-memory X.

    Returns
    -------
    centre, spread : float
        μ and σ (> 0).

    Raises
    ------
    ValueError
        When X holds NaN or infinity (a Dask X is not checked before).
    """
    n, d = X.shape
    if hasattr(X, "dask"):
        top = float(abs(X).max().compute())
        _check_finite(top)
        if top == 0:
            return 0.0, 1.0
        mean = float((X / top).mean().compute())
        variance = float((((X / top) - mean) ** 2).mean().compute())
    else:
        top = max((float(np.abs(b).max()) for b in dense_row_blocks(X, rows) if b.size),
                  default=0.0)
        _check_finite(top)
        if top == 0:
            return 0.0, 1.0
        mean = sum(float((b / top).sum()) for b in dense_row_blocks(X, rows)) / (n * d)
        variance = sum(float(np.square(b / top - mean).sum())
                       for b in dense_row_blocks(X, rows)) / (n * d)
    spread = top * np.sqrt(variance)
    return top * mean, (float(spread) if spread > 0 else 1.0)


def nonzero_fraction(X, rows):
    """The fraction of X's entries that are not zero (explicit zeros of a sparse X are zeros).

    Parameters
    ----------
    X : ndarray, scipy CSR matrix or dask array of shape (n_samples, n_features)
    rows : int
        Rows per block of a dense in-memory X.

    Returns
    -------
    float
        In [0, 1]; hashed or bag-of-words text is near 0.01, pixels near 0.2.
    """
    n, d = X.shape
    if n * d == 0:
        return 0.0
    if hasattr(X, "dask"):
        return float((X != 0).mean().compute())
    if sp.issparse(X):
        return np.count_nonzero(X.data) / (n * d)
    return sum(np.count_nonzero(X[a:a + rows]) for a in range(0, n, max(1, int(rows)))) / (n * d)


def _check_finite(top):
    if not np.isfinite(top):
        raise ValueError("Input X contains NaN or infinity.")


def check_preactivations(X, weights, bias, centre, spread, rows):
    """Refuse X when |(x − μ)/σ · W + b| could exceed the largest value of W's dtype.

    The bound is max over rows of ‖(x − μ)/σ‖₁ · max|W| + max|b| (Hölder),
    computed in float64 a block of rows at a time, before any product; a
    pre-activation beyond the dtype's largest value would become inf in
    the features (and NaN after ``cos``).

    Parameters
    ----------
    X : ndarray or scipy CSR matrix of shape (n_samples, n_features)
    weights : ndarray of shape (n_features, n_components)
        W.
    bias : ndarray of shape (n_components,)
        b.
    centre, spread : float
        μ and σ.
    rows : int
        Rows per block.

    Raises
    ------
    ValueError
        Naming the bound, the dtype's largest value and the remedies.
    """
    if X.shape[0] == 0 or weights.size == 0:
        return
    largest = float(np.finfo(weights.dtype).max)
    with np.errstate(over="ignore", invalid="ignore"):
        # On the standardised rows, which stay finite where x − μ would not.
        norm = max(float(np.abs(standardised(b, centre, spread)).sum(axis=1).max())
                   for b in dense_row_blocks(X, rows))
        bound = norm * float(np.abs(weights).max()) + float(np.abs(bias).max())
    if not bound <= largest:
        raise ValueError(
            f"RandomFeatures: the pre-activations (x - {centre:.6g}) / {spread:.6g} · W + b "
            f"could reach {bound:.3g} (rows of L1 norm up to {norm:.3g} after centring and "
            f"scaling, weights up to {float(np.abs(weights).max()):.3g}), beyond "
            f"{weights.dtype}'s largest value {largest:.3g}: the features would overflow "
            f"to inf. Scale the inputs down, use a smaller `scale` (or scale='auto'), or "
            f"dtype='float64'."
        )


def machine_memory():
    """Bytes of physical memory of this machine, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        try:
            import psutil
        except ImportError:
            return None
        return int(psutil.virtual_memory().total)


def address_space_left():
    """Bytes this process may still map under its address-space limit, or None if unlimited.

    A container or ``ulimit -v`` sets ``RLIMIT_AS``, which caps the
    process's virtual memory whatever the machine holds: an allocation
    beyond what is left fails in numpy with a bare MemoryError. What the
    process has mapped already (``/proc/self/statm``, where there is one)
    is taken off.
    """
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, AttributeError, ValueError, OSError):  # not a POSIX system
        return None
    if limit == resource.RLIM_INFINITY or limit < 0:
        return None
    try:
        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        mapped = 0
    return max(int(limit) - mapped, 0)


def check_machine_memory(needed, what, available=None):
    """Refuse, before allocating, ``needed`` bytes beyond the memory this process may use.

    That is the machine's physical memory, or less where the process's
    address-space limit (``RLIMIT_AS``) leaves less.

    Parameters
    ----------
    needed : int
        Bytes the allocation needs.
    what : str
        What needs them (the start of the message).
    available : int, optional
        The machine's memory; :func:`machine_memory` when None.

    Raises
    ------
    MemoryError
        Naming both figures.
    """
    available = machine_memory() if available is None else available
    left = address_space_left()
    if left is not None and (available is None or left < available):
        where = ("beyond what this process's address-space limit (RLIMIT_AS, a container's "
                 "or ulimit -v) leaves it,")
        available = left
    else:
        where = "beyond this machine's memory of"
    if available is not None and needed > available:
        raise MemoryError(
            f"{what} needs {needed / 2**30:.3g} GiB ({needed} bytes), {where} "
            f"{available / 2**30:.3g} GiB ({available} bytes). Use fewer "
            f"n_components, dtype='float32', or fewer rows per call (a Dask array is "
            f"transformed a block at a time)."
        )
