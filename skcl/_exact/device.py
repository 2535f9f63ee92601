"""The exact family on JAX's device: the backend object, its memory, and random features.

:class:`DeviceBackend` is the :class:`~.backend.Backend` of ``backend="jax"``:
the same chunk loop as the host's (:func:`~.task.task_moments`) runs with
its row operations (:class:`DeviceRows`), the merges, the components' test,
the solve (:mod:`.solve_jax`) and the predictions with its array operations,
all as compiled programs (:mod:`.device_kernels`). Only explicit
transfers cross: to the device each chunk of rows once (float32 rows as
float32), the references, and the O(G·D) values and scalars the host
computes (means, a merge's shifts); to the host the O(G·D) sums t_g, the
solve's scalars, least squares' band (O(D·width)) and D×K products, and
the predictions' n×K scores. Nothing D×D comes back: the scatter, its
merges, the shrunk covariance and its factor, the reflectors and the
spectra stay on the device (``moments_.scatter`` is a JAX array there).
The held-out hash is judged from the host's float64 rows, as numpy's.

Precision. Where the device multiplies float64 quickly (a CPU; data-centre
GPUs such as the A100, H100, H200) every product is float64. Elsewhere
(consumer GPUs, whose float64 runs at 1/32 to 1/64 of float32, and TPUs)
each block of at most :data:`~.device_kernels.FLOAT32_ROWS` rows is rounded
to float32 *after* its shift, multiplied in float32 at full precision (no
TF32), and the block's D×D product added to a float64 sum: the shift makes
the entries of A of the order of the within-group spread, so the float32
rounding errs relative to the scatter W, not to the raw second moment (the
offset that makes the textbook formula lose everything), and the float64
merge keeps the error of one block whatever the number of blocks. The
means and Σ_g t_g t_gᵀ / n_g stay float64 throughout. Measured on CI Split
MNIST pixels (``benchmarks/timing/bench_exact_device.py``: 2,000 random features
of the first task's 10,132 rows), the float32 scheme's scatter is within
5.3e-7 of the float64 sums relative to their largest entry, and each
diagonal entry within 3.7e-6 of itself: float32's rounding; see the
At-scale page.

JAX's 64-bit mode is switched on only inside the backend's ``scope()``
(``jax.enable_x64`` as a context), never process-wide: the rest of skcl,
and the user's JAX code, keep JAX's float32 default.
"""

import contextlib
import os

import numpy as np

from .backend import Backend, jax_module
from .device_kernels import FLOAT32_ROWS, feature_kernel, moment_kernels, solve_kernels
from .moments import GroupMoments

__all__ = ["DeviceBackend", "DeviceRows", "FLOAT32_ROWS", "PRECISIONS", "bucket",
           "device_memory_available", "device_moments_bytes", "float64_is_fast",
           "random_features_on_device"]

#: The ``precision`` values of the device's update.
PRECISIONS = ("auto", "float64", "float32")

# Device kinds (JAX's ``device_kind``) whose float64 runs at half or more
# of the float32 rate without tensor cores: NVIDIA's data-centre GPUs and
# AMD's Instinct accelerators.
_FAST_FLOAT64_KINDS = ("A100", "A800", "A30", "H100", "H200", "H800", "H20", "GH200", "B100",
                       "B200", "GB200", "V100", "P100", "MI100", "MI200", "MI210", "MI250",
                       "MI300")


def default_device():
    """JAX's default device."""
    return jax_module().devices()[0]


def float64_is_fast(device):
    """Whether ``device`` multiplies float64 matrices at a useful rate.

    Parameters
    ----------
    device : jax.Device

    Returns
    -------
    bool
        True on a CPU and on the GPUs in ``_FAST_FLOAT64_KINDS``; False on
        other GPUs (consumer cards) and TPUs.
    """
    if device.platform == "cpu":
        return True
    if device.platform == "tpu":
        return False
    kind = str(getattr(device, "device_kind", "")).upper()
    return any(tag in kind for tag in _FAST_FLOAT64_KINDS)


def device_memory_available(device=None):
    """Bytes the update may use on ``device``.

    On a GPU or TPU, JAX's limit less what is in use
    (``device.memory_stats()``); on the CPU, where JAX's memory is the
    host's, half of the host's physical memory (the host also holds the
    task's rows and the model).

    Parameters
    ----------
    device : jax.Device, optional
        JAX's default device when None.

    Returns
    -------
    int
    """
    device = default_device() if device is None else device
    stats = None
    if device.platform != "cpu":
        try:
            stats = device.memory_stats()
        except (AttributeError, NotImplementedError, RuntimeError):  # not reported
            stats = None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2


def device_moments_bytes(n_features, n_groups, *, chunk_rows, per_group_scatter=False,
                         heldout=False, precision="float64", itemsize=8):
    """Device memory the statistics update needs, in bytes.

    With D = ``n_features``, G = ``n_groups`` and c = ``chunk_rows``:
    P D×D float64 sums (P = 1, or G with ``per_group_scatter``; twice that
    with rows held out), one more D×D product in flight, and a chunk of c
    rows in its dtype, shifted in float64 and gathered once more for a
    group or side (plus a float32 copy and a float32 product in the
    float32 scheme)::

        8·D²·(P + 1) + c·D·(itemsize + 16) + 32·G·D    (float64)
        + 4·D² + 4·c·D                                 (float32 scheme)

    Pooled classes, nothing held out: at D = 10,000, 1.6 GB of sums and
    0.7 GB of chunk (3,355 float32 rows); at D = 25,000, 10 GB and 0.7 GB
    (13.3 GB in the float32 scheme): an H100 or a 24 GB card holds either.

    Parameters
    ----------
    n_features, n_groups : int
    chunk_rows : int
        Rows per chunk sent to the device.
    per_group_scatter, heldout : bool
    precision : {"float64", "float32"}
    itemsize : int
        Bytes per value of the rows as given (4 for float32 rows).

    Returns
    -------
    int
    """
    d, g, c = int(n_features), max(int(n_groups), 1), max(int(chunk_rows), 1)
    products = (g if per_group_scatter else 1) * (2 if heldout else 1)
    need = 8 * d * d * (products + 1) + c * d * (int(itemsize) + 16) + 32 * g * d
    if precision == "float32":
        need += 4 * d * d + 4 * c * d
    return need


def _resolve_precision(precision, device):
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "auto":
        return "float64" if float64_is_fast(device) else "float32"
    return precision


def check_device_memory(need, device, what):
    """Refuse, before any work, what does not fit in the device's memory."""
    available = device_memory_available(device)
    if need > available:
        raise MemoryError(
            f"{what} needs {need / 2**30:.2f} GiB of device memory and "
            f"{getattr(device, 'device_kind', device)} has {available / 2**30:.2f} GiB "
            f"available; nothing was computed. Use backend='numpy' (the host's memory), "
            f"fewer features, or a device with more memory."
        )


def _padded(k, least=64):
    """The next power of two ≥ k, at least ``least``."""
    return max(least, 1 << (max(int(k), 1) - 1).bit_length())


def bucket(k, step):
    """A padded row count, the next power of two ≥ k (64 to ``step``): few shapes to compile."""
    return int(min(step, _padded(k)))


class DeviceBackend(Backend):
    """The arithmetic of ``backend="jax"``: JAX's default device, float64 (see the module)."""

    name = "jax"

    @property
    def linalg(self):
        from . import solve_jax  # the D×D factorisations on the device

        return solve_jax

    def scope(self):
        """JAX's 64-bit mode for this block only (a context, not a process-wide switch)."""
        return jax_module().enable_x64(True)

    def put(self, array):
        array = np.asarray(array)
        if array.dtype.kind not in "biu":
            array = np.asarray(array, dtype=np.float64)
        with self.scope():  # float64 stays float64, on any thread (Dask's too)
            return jax_module().device_put(array)

    def _scalar(self, value):
        return self.put(np.float64(value))

    def _run(self, program, *arrays):  # a program of solve_kernels, in 64-bit mode
        with self.scope():
            return solve_kernels()[program](*arrays)

    def zeros(self, shape):  # D×D made on the device: nothing sent
        square = len(shape) == 2 and shape[0] == shape[1]
        return self._run("zeros", shape[0]) if square else self.put(np.zeros(shape))

    def add_gram(self, S, U, sign=1.0):
        if not isinstance(U, jax_module().Array):
            # Zero rows up to a power of two: one program for merges of 5 to 8 groups.
            U = np.asarray(U, dtype=np.float64).reshape(-1, S.shape[-1])
            U = self.put(np.concatenate([U, np.zeros((_padded(len(U), 8) - len(U), U.shape[1]))]))
        return self._run("add_gram", S, U, self._scalar(sign))

    def add_diagonal(self, S, values):
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), (S.shape[0],))
        return self._run("add_diagonal", S, self.put(values))

    def scale(self, S, factor):
        return self._run("scale", S, self._scalar(factor))

    def trace(self, S):
        return float(self._run("trace", S))

    def diagonal(self, S):
        return np.array(self._run("diagonal", S))

    def all_finite(self, array):
        return bool(self._run("all_finite", array))

    def stack(self, arrays, shape):
        if not len(arrays):
            return self.put(np.zeros((0, *shape[1:])))
        return self._run("stack", *arrays)

    def sum_first(self, arrays):
        return self._run("sum_first", arrays)

    def projected(self, S, P):
        return np.asarray(self._run("projected", S, self.put(P)))

    def row_products(self, X, coef):
        return np.asarray(self._run("matmul", self.put(X), self.put(coef)))

    def shrunk(self, S, n, shrinkage, target):
        return self._run("shrunk", S, self._scalar((1 - shrinkage) / n),
                                         self.put(shrinkage * np.asarray(target)))

    def correlation_sums(self, scatter, inverse_sigma, rows):
        squares, trace = self._run("correlation_sums", scatter, self.put(inverse_sigma))
        return float(squares), float(trace)

    def log_det_of_factor(self, L):
        return float(self._run("log_det_of_factor", L))

    def triangular_solve(self, L, X):
        return np.asarray(self._run("triangular_solve", L, self.put(np.atleast_2d(X))))

    def whiten_rows(self, X, W):
        return np.asarray(self._run("matmul", self.put(np.atleast_2d(X)), W))

    def scale_columns(self, V, factors):
        return self._run("scale_columns", V, self.put(factors))

    def squared_distances(self, factor, triangular, X, means):
        # Means padded to a power of two: one program as classes grow from 5 to 8.
        g = len(means)
        padded = np.concatenate([means, np.zeros((_padded(g, 8) - g, means.shape[1]))])
        return np.asarray(self._run("distances" if triangular else "whitened_distances",
                                    factor, self.put(X), self.put(padded)))[:, :g]

    def rows(self, references, per_group_scatter, step, rule, itemsize=8, precision="auto"):
        return DeviceRows(self, references, per_group_scatter, step, rule, itemsize, precision)


class DeviceRows:
    """The chunk loop's row operations on the device (those of :class:`~.task.HostRows`).

    Each chunk goes to the device once, padded with zero-weight rows to a
    power of two; the rows a held-out split or a group selects are gathered
    there, padded to a :func:`bucket`, and the held-out ones added at once.

    Raises
    ------
    MemoryError
        Before anything is sent, when :func:`device_moments_bytes` exceeds
        :func:`device_memory_available`.
    """

    parallel = False  # one thread feeds the device

    def __init__(self, backend, references, per_group_scatter, step, rule, itemsize,
                 precision):
        device = default_device()
        self.precision = _resolve_precision(precision, device)
        n_groups, d = references.shape
        check_device_memory(
            device_moments_bytes(d, n_groups, chunk_rows=_padded(step),
                                 per_group_scatter=per_group_scatter, heldout=rule is not None,
                                 precision=self.precision, itemsize=itemsize),
            device, f"The update of {d} features")
        # Chunks padded to a power of two: tasks of 257 to 512 rows share one program.
        self.backend, self.step, self.per_group_scatter = backend, _padded(step), per_group_scatter
        self.n_groups, self.d = n_groups, d
        self.kernels = moment_kernels(self.precision)
        self.references = references
        self._R = None  # r_g on the device, sent with the first chunk

    def for_worker(self):  # one thread feeds the device
        return self

    def sums(self):
        """Empty :class:`DeviceShiftedSums` about the references."""
        return DeviceShiftedSums(self)

    def _pad(self, values, dtype=None):
        values = np.asarray(values, dtype=dtype)
        if len(values) == self.step:
            return values
        pad = np.zeros((self.step - len(values), *values.shape[1:]), dtype=values.dtype)
        return np.concatenate([values, pad])

    def shifted(self, X, groups, root, rule):
        """A = √w (x − r_g) of a chunk (padded to ``step`` rows), Σ_g √w A, projections."""
        jax = jax_module()
        if self._R is None:
            self._R = self.backend.put(self.references)
        m = len(X)
        r = np.ones(m) if root is None else root
        projected = None if rule is None else rule.project(np.asarray(X, dtype=np.float64))
        x, g, r = jax.device_put((self._pad(X), self._pad(groups, np.intp), self._pad(r)))
        A, sums = self.kernels["shift"](x, g, r, self._R, n_slots=self.n_groups)
        return A, sums, projected

    def select(self, A, index, groups, root):
        """The rows ``index`` of a chunk's A (padded to a bucket) and their sums by group."""
        jax = jax_module()
        size = bucket(len(index), self.step)
        valid = np.zeros(size)
        valid[:len(index)] = 1.0
        padded = np.zeros(size, dtype=np.intp)
        padded[:len(index)] = index
        g = np.zeros(size, dtype=np.intp)
        g[:len(index)] = groups[index]
        r = np.zeros(size)
        r[:len(index)] = 1.0 if root is None else root[index]
        return self.kernels["select"](A, *jax.device_put((padded, valid, g, r)),
                                      n_slots=self.n_groups)

    def close_ranks(self, A, groups, weights, out):
        """The learned rows (not ``out``) of A, their groups and weights."""
        index = np.flatnonzero(~out)
        B, _ = self.select(A, index, groups, None)
        return B, groups[index], weights[index]

    def sort(self, A, groups, weights):
        """Nothing to sort: :class:`DeviceShiftedSums` selects each group's rows."""
        return A, groups, weights

    def pending(self, held):
        """The held-out side: each chunk's rows added at once."""
        return _DeviceHeld(self, held)


class _DeviceHeld:
    """Each chunk's held-out rows, gathered on the device and added to ``held``."""

    def __init__(self, rows, held):
        self.rows, self.held = rows, held

    def take(self, A, index, groups, weights, root):
        B, sums = self.rows.select(A, index, groups, root)
        self.held.add(B, groups[index], weights[index], sums)
        return sums

    def flush(self):
        pass


class DeviceShiftedSums:
    """:class:`~.moments.ShiftedSums` whose t_g and S live on the device (n_g on the host).

    Rows come padded (zero rows past ``len(groups)``): the pooled product
    takes them all, each group's product gathers its own.
    """

    def __init__(self, rows):
        self.rows = rows
        self.references = rows.references
        self.counts = np.zeros(rows.n_groups)
        self.sums = None
        self.products = {}

    def add(self, A, groups, weights, sums):
        if len(groups) == 0:
            return
        kernels = self.rows.kernels
        self.counts += np.bincount(groups, weights=weights, minlength=len(self.counts))
        self.sums = sums if self.sums is None else self.sums + sums
        if not self.rows.per_group_scatter:
            S = self.products.get(0)
            self.products[0] = kernels["first"](A) if S is None else kernels["gram"](S, A)
            return
        jax = jax_module()
        for g in np.unique(groups):
            index = np.flatnonzero(groups == g)
            size = bucket(len(index), max(len(A), 1))
            valid = np.zeros(size)
            valid[:len(index)] = 1.0
            padded = np.zeros(size, dtype=np.intp)
            padded[:len(index)] = index
            padded, valid = jax.device_put((padded, valid))
            S = self.products.get(g)
            self.products[g] = (kernels["first_rows"](A, padded, valid) if S is None
                                else kernels["gram_rows"](S, A, padded, valid))

    def moments(self, keys):
        """The moments of the rows added (scatters on the device); the sums are spent."""
        backend = self.rows.backend
        present = np.flatnonzero(self.counts > 0)
        counts = self.counts[present]
        d = self.references.shape[1]
        t = (np.zeros((0, d)) if self.sums is None else np.asarray(self.sums))[present]
        means = self.references[present] + t / counts[:, None]
        u = t / np.sqrt(counts)[:, None]  # Σ_g t_g t_gᵀ / n_g = uᵀu
        group_scatter = None
        if not len(present):
            scatter = backend.zeros((d, d))
            if self.rows.per_group_scatter:
                group_scatter = backend.stack([], (0, d, d))
        elif self.rows.per_group_scatter:
            group_scatter = backend.stack(
                [backend.add_gram(self.products[g], u[k:k + 1], -1.0)
                 for k, g in enumerate(present)], (len(present), d, d))
            scatter = backend.sum_first(group_scatter)
        else:
            scatter = backend.add_gram(self.products.pop(0), u, -1.0)
        self.products = {}
        return GroupMoments(tuple(keys[g] for g in present), counts.copy(), means, scatter,
                            group_scatter)


def random_features_on_device(X, weights, bias, activation, block_values):
    """g(XW + b) computed on JAX's default device, a block of rows at a time.

    W and b go to the device once, blocks of rows (sparse ones made dense on
    the host) padded to one shape (one program); W's dtype at full precision.

    Parameters
    ----------
    X : ndarray or scipy CSR matrix of shape (n_samples, n_features)
    weights : ndarray of shape (n_features, n_components)
    bias : ndarray of shape (n_components,)
    activation : {"relu", "tanh", "cos"}
    block_values : int
        Values per block of pre-activations (and of dense input rows).

    Returns
    -------
    ndarray of shape (n_samples, n_components), of W's dtype
    """
    import scipy.sparse as sp

    jax = jax_module()
    n, (d, k) = X.shape[0], weights.shape
    dtype = weights.dtype
    out = np.empty((n, k), dtype=dtype)
    if n == 0:
        return out
    rows = max(1, min(block_values // k, block_values // max(d, 1)))
    rows = bucket(n, rows) if n < rows else rows
    device = default_device()
    check_device_memory(dtype.itemsize * (d * k + k + rows * (d + 2 * k)), device,
                        f"Random features ({d} inputs, {k} components)")
    kernel = feature_kernel(activation)
    scope = jax.enable_x64(True) if dtype == np.float64 else contextlib.nullcontext()
    with scope:
        W, b = jax.device_put(weights), jax.device_put(bias)
        for start in range(0, n, rows):
            block = X[start:start + rows]
            block = block.toarray() if sp.issparse(block) else np.asarray(block)
            m = len(block)
            if m < rows:
                block = np.concatenate([block, np.zeros((rows - m, d), dtype=block.dtype)])
            block = jax.device_put(block.astype(dtype, copy=False))
            out[start:start + m] = np.asarray(kernel(block, W, b))[:m]
    return out
