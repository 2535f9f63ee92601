"""Where the exact family's arithmetic runs: numpy on the host, or JAX on its device.

The sums and the closed-form solve are the same mathematics on either;
``backend="auto"`` sends them to JAX only when the user's process has
already imported JAX and its default device is an accelerator, where the
D×D products and eigendecompositions are tens of times faster, and keeps
numpy (multi-threaded BLAS, float64) otherwise. "auto" never imports JAX
itself: importing it costs seconds, and on a GPU machine JAX reserves most
of the device's memory at its first use, which a numpy model must not do.
A model that should run on the device in a process that has not used JAX
yet asks for it with ``backend="jax"``.

The choice is made here, once per task (:func:`resolve_backend`, whose
answer the estimators keep as ``backend_``), and :func:`get_backend` turns
it into the one object that every step takes: the chunk loop of the update
(:mod:`.task`), the merges, the components' test, the solve and the
predictions. A :class:`Backend` carries the D×D linear algebra (its
``linalg``: :mod:`.linalg` on the host, :mod:`.solve_jax` on the device)
and the few array operations whose host and device forms differ (numpy
works in place; JAX's arrays are immutable, and its operations run as
compiled programs that must not carry host arrays in with them). The
device's is :class:`~.device.DeviceBackend`.
"""

import contextlib
import functools
import sys

import numpy as np

__all__ = ["BACKENDS", "Backend", "backend_of", "get_backend", "jax_module",
           "resolve_backend"]

#: The values of the estimators' ``backend`` parameter.
BACKENDS = ("auto", "numpy", "jax")


def jax_module():
    """JAX, imported at the first use of the device (the one place skcl's exact family does)."""
    import jax

    return jax


def resolve_backend(backend):
    """``"numpy"`` or ``"jax"``: the backend that ``backend`` names.

    Parameters
    ----------
    backend : {"auto", "numpy", "jax"}
        "auto" is "jax" when JAX is already imported (``sys.modules``) and
        its default device is a GPU or TPU, else "numpy"; it never imports
        JAX.

    Returns
    -------
    str
    """
    if backend == "numpy":
        return "numpy"
    if backend == "jax":
        return "jax"
    if backend != "auto":
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    jax = sys.modules.get("jax")
    if jax is None:
        return "numpy"
    return "numpy" if jax.default_backend() == "cpu" else "jax"


def get_backend(name):
    """The :class:`Backend` that ``name`` stands for: one object per resolved name.

    Parameters
    ----------
    name : {"numpy", "jax", "auto"}
        "auto" is resolved now (:func:`resolve_backend`).

    Returns
    -------
    Backend
    """
    return _backend_named(resolve_backend(name))


@functools.cache
def _backend_named(name):
    if name == "jax":
        from .device import DeviceBackend

        return DeviceBackend()
    return Backend()


def backend_of(array):
    """The backend an array lives on: the host's for numpy arrays, else the device's.

    For the functions that receive moments from anywhere (:func:`.moments.merge`
    of two models, say) and must act where they are.
    """
    return get_backend("numpy" if isinstance(array, np.ndarray) else "jax")


class Backend:
    """The host's arithmetic: numpy and LAPACK (:mod:`.linalg`), in float64.

    The device's (:class:`~.device.DeviceBackend`) has the same methods.
    Arrays of at most O(G·D) values (counts, means, the held-out hash's
    projections) stay numpy on both; the D×D sums, the chunks of rows and
    what is computed from them live on the backend's side and come to the
    host only through :meth:`host`.
    """

    name = "numpy"

    @property
    def linalg(self):
        """The module of the D×D factorisations (:mod:`.linalg`)."""
        from . import linalg

        return linalg

    def scope(self):
        """The context the backend's arithmetic runs in (nothing on the host)."""
        return contextlib.nullcontext()

    def put(self, array):
        """``array`` where this backend computes (float64 unless integer or boolean)."""
        array = np.asarray(array)
        return array if array.dtype.kind in "biu" else np.asarray(array, dtype=np.float64)

    def host(self, array):
        """``array`` as a numpy array on the host."""
        return np.asarray(array)

    def zeros(self, shape):
        return np.zeros(shape)

    def add_gram(self, S, U, sign=1.0):
        """S + sign·UᵀU for host rows U of shape (k, D), in one new array (S is not changed)."""
        from .moments import gram

        out = gram(np.asarray(U, dtype=np.float64))
        if sign != 1.0:
            out *= sign
        out += S
        return out

    def add_diagonal(self, S, values):
        """S + diag(values), in S's memory (S is the caller's own)."""
        S[np.diag_indices_from(S)] += values
        return S

    def scale(self, S, factor):
        """factor·S, a new array."""
        return S * float(factor)

    def trace(self, S):
        return float(np.trace(S))

    def diagonal(self, S):
        """S's diagonal on the host."""
        return np.diag(S).copy()

    def all_finite(self, array):
        return bool(np.isfinite(array).all())

    def stack(self, arrays, shape):
        """The arrays stacked along a new first axis, of ``shape`` (when empty too)."""
        return np.asarray(arrays).reshape(shape)

    def sum_first(self, arrays):
        """Σ over the first axis."""
        return arrays.sum(axis=0)

    def projected(self, S, P):
        """PᵀSP on the host, for host columns P of shape (D, k)."""
        return P.T @ S @ P

    def row_products(self, X, coef):
        """X·coef on the host (rows and coefficients on the host)."""
        return np.asarray(X, dtype=np.float64) @ coef

    def shrunk(self, S, n, shrinkage, target):
        """(1 − s)·S/n + s·diag(target), one new D×D array (:func:`.gaussian.shrunk_covariance`)."""
        covariance = S * ((1 - shrinkage) / n)
        covariance[np.diag_indices_from(covariance)] += shrinkage * target
        return covariance

    def correlation_sums(self, scatter, inverse_sigma, rows):
        """‖R‖²_F and tr R for R = S_jk·u_j·u_k, ``rows`` rows at a time (no D×D temporary)."""
        d = len(scatter)
        buffer = np.empty((min(rows, d), d))
        squares = 0.0
        for start in range(0, d, rows):
            block = buffer[:min(rows, d - start)]
            np.multiply(scatter[start:start + len(block)], inverse_sigma[None, :], out=block)
            block *= inverse_sigma[start:start + len(block), None]
            squares += float(np.vdot(block, block))
        return squares, float(np.sum(np.diag(scatter) * inverse_sigma**2))

    def log_det_of_factor(self, L):
        """2 Σ log L_jj."""
        return 2 * float(np.log(np.diag(L)).sum())

    def triangular_solve(self, L, X):
        """(L⁻¹Xᵀ)ᵀ for host rows X, L lower triangular: rows on the host."""
        import scipy.linalg

        return scipy.linalg.solve_triangular(L, np.atleast_2d(X).T, lower=True,
                                             check_finite=False).T

    def whiten_rows(self, X, W):
        """X·W for host rows X: rows on the host."""
        return np.atleast_2d(X) @ W

    def scale_columns(self, V, factors):
        """V·diag(factors), a new array."""
        return V * factors

    def squared_distances(self, factor, triangular, X, means):
        """‖F⁻¹(x − μ_g)‖² (Cholesky factor) or ‖Wᵀ(x − μ_g)‖², for centred host rows and means.

        Returns
        -------
        ndarray of shape (n_samples, n_components), on the host
        """
        whiten = ((lambda rows: self.triangular_solve(factor, rows)) if triangular
                  else (lambda rows: self.whiten_rows(rows, factor)))
        # x and μ_g whitened once each, then one GEMM.
        Z, M = whiten(X), whiten(means)
        squared = (Z**2).sum(1)[:, None] - 2 * Z @ M.T + (M**2).sum(1)[None, :]
        # Cancellation can leave −1e-12 where the distance is 0.
        return np.maximum(squared, 0)

    def rows(self, references, per_group_scatter, step, rule):
        """The chunk loop's row operations (:class:`~.task.HostRows`)."""
        from .task import HostRows

        return HostRows(references, per_group_scatter, step, rule)
