"""The exact family's statistics update, and random features, on JAX's device.

The update is the host's (:func:`~.task.task_moments`) with its one large
cost, the products S = AᵀA of the shifted, weighted rows
A_i = √w_i (x_i − r_{g_i}) (:class:`~.moments.ShiftedSums`), moved to the
device: chunks of rows stream there in their own dtype (float32 rows
travel as float32), are shifted and weighted in float64 on the device, and
their products add into D×D sums that stay on the device until the task
ends. The references r_g, the weights n_g and the held-out rows are the
host's, computed by the host's code (``HeldoutRule`` from
the float64 rows), so both paths hold out the same rows and keep the same
groups; the sums then differ only by the order of the additions.

Precision. Where the device multiplies float64 quickly (a CPU; data-centre
GPUs such as the A100, H100, H200) every product is float64. Elsewhere
(consumer GPUs, whose float64 runs at 1/32 to 1/64 of float32, and TPUs)
each block of at most :data:`FLOAT32_ROWS` rows is rounded to float32
*after* its shift, multiplied in float32 at full precision (no TF32), and
the block's D×D product added to a float64 sum: the shift makes the
entries of A of the order of the within-group spread, so the float32
rounding errs relative to the scatter W, not to the raw second moment
(the offset that makes the textbook formula lose everything), and the
float64 merge keeps the error of one block whatever the number of blocks.
The means and Σ_g t_g t_gᵀ / n_g stay float64 throughout. Measured on
CI Split MNIST pixels (``benchmarks/timing/bench_exact_device.py``: 2,000 random
features of the first task's 10,132 rows), the float32 scheme's scatter
is within 5.3e-7 of the float64 sums relative to their largest entry, and
each diagonal entry within 3.7e-6 of itself: float32's rounding; see the
At-scale page.

JAX's 64-bit mode is switched on only inside these functions
(``jax.enable_x64`` as a context), never process-wide: the rest of skcl,
and the user's JAX code, keep JAX's float32 default.
"""

import contextlib
import functools
import os

import numpy as np

from .moments import ShiftedSums

__all__ = [
    "FLOAT32_ROWS",
    "PRECISIONS",
    "device_memory_available",
    "device_moments_bytes",
    "device_shifted_sums",
    "float64_is_fast",
    "random_features_on_device",
]

#: The ``precision`` values of :func:`device_shifted_sums`.
PRECISIONS = ("auto", "float64", "float32")

#: Rows per float32 product before it is added to the float64 sum.
FLOAT32_ROWS = 1024

# Device kinds (JAX's ``device_kind``) whose float64 runs at half or more
# of the float32 rate without tensor cores: NVIDIA's data-centre GPUs and
# AMD's Instinct accelerators.
_FAST_FLOAT64_KINDS = ("A100", "A800", "A30", "H100", "H200", "H800", "H20", "GH200", "B100",
                       "B200", "GB200", "V100", "P100", "MI100", "MI200", "MI210", "MI250",
                       "MI300")


def _jax():
    import jax

    return jax


def _x64():
    """JAX's 64-bit mode for this block only (a context, not a process-wide switch)."""
    return _jax().enable_x64(True)


def default_device():
    """JAX's default device."""
    return _jax().devices()[0]


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

    At D = 10,000 with classes pooled and nothing held out that is
    1.6 GB of sums plus 0.7 GB of chunk (the default 3,355 rows of
    float32); at D = 25,000, 10 GB plus 0.7 GB (1,342 rows): an H100's
    80 GB holds either, a 24 GB consumer card both (13.3 GB at D = 25,000
    in the float32 scheme).

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


def device_shifted_sums(X, groups, weights, references, rule, *, per_group_scatter, step,
                        precision="auto"):
    """The learned and held-out rows' :class:`ShiftedSums`, the products on JAX's device.

    Parameters
    ----------
    X : ndarray of float32 or float64 of shape (n_samples, n_features)
    groups : ndarray of int of shape (n_samples,)
        Each row's group, 0 ≤ g < G.
    weights : ndarray of shape (n_samples,)
        w_i.
    references : ndarray of shape (G, n_features)
        r_g (the host's :func:`~.task._references`).
    rule : HeldoutRule or None
        Which rows are held out (judged on the host from float64 rows).
    per_group_scatter : bool
    step : int
        Rows per chunk sent to the device.
    precision : {"auto", "float64", "float32"}, default="auto"
        The products' precision (see the module's notes); "auto" is
        float64 where :func:`float64_is_fast`, else float32.

    Returns
    -------
    (ShiftedSums, ShiftedSums)
        The learned rows' and the held-out rows', on the host.

    Raises
    ------
    MemoryError
        Before anything is sent, when :func:`device_moments_bytes`
        exceeds :func:`device_memory_available`.
    """
    jax = _jax()
    device = default_device()
    precision = _resolve_precision(precision, device)
    n, d = X.shape
    n_groups = len(references)
    step = max(1, min(int(step), n))
    check_device_memory(
        device_moments_bytes(d, n_groups, chunk_rows=step, per_group_scatter=per_group_scatter,
                             heldout=rule is not None, precision=precision,
                             itemsize=X.dtype.itemsize),
        device, f"The update of {d} features",
    )
    learned, held = (ShiftedSums(references, per_group_scatter) for _ in range(2))
    if n == 0:
        return learned, held
    root = np.sqrt(weights)
    kernels = _moment_kernels(precision)
    with _x64():
        R = jax.device_put(references)
        T = jax.numpy.zeros((2 * n_groups, d))
        products = {}
        for start in range(0, n, step):
            x, g = X[start:start + step], groups[start:start + step]
            w, r = weights[start:start + step], root[start:start + step]
            m = len(x)
            out = (np.zeros(m, dtype=bool) if rule is None
                   else rule.mask(rule.project(np.asarray(x, dtype=np.float64))))
            learned.counts += np.bincount(g[~out], weights=w[~out], minlength=n_groups)
            held.counts += np.bincount(g[out], weights=w[out], minlength=n_groups)
            slot = g + n_groups * out
            if m < step:
                # The last chunk padded to the others' shape (one compiled
                # kernel): zero weights, so the padding adds nothing.
                x = np.concatenate([x, np.zeros((step - m, d), dtype=x.dtype)])
                pad = np.zeros(step - m, dtype=np.intp)
                g, r, slot = (np.concatenate([g, pad]), np.concatenate([r, np.zeros(step - m)]),
                              np.concatenate([slot, pad]))
            A, T_chunk = kernels["shift"](x, g, r, R, slot, 2 * n_groups)
            T = T + T_chunk
            for key, index in _product_rows(g[:m], out, per_group_scatter, n_groups):
                S = products.get(key)
                if S is None:
                    S = jax.numpy.zeros((d, d))
                if index is None:
                    products[key] = kernels["gram"](S, A)
                else:
                    size = _bucket(len(index), step)
                    valid = np.zeros(size)
                    valid[:len(index)] = 1.0
                    padded = np.zeros(size, dtype=np.intp)
                    padded[:len(index)] = index
                    products[key] = kernels["gram_rows"](S, A, padded, valid)
        T = np.array(T)
        host = {key: np.array(S) for key, S in products.items()}
    learned.sums, held.sums = T[:n_groups].copy(), T[n_groups:].copy()
    for (side, key), S in host.items():
        (held if side else learned).products[key] = S
    return learned, held


def _product_rows(groups, out, per_group_scatter, n_groups):
    """(side, key) of each product and its rows (None: every row of the chunk)."""
    if not per_group_scatter:
        if not out.any():
            yield (0, 0), None
            return
        yield (0, 0), np.flatnonzero(~out)
        yield (1, 0), np.flatnonzero(out)
        return
    for side, mask in ((0, ~out), (1, out)):
        for g in range(n_groups):
            index = np.flatnonzero(mask & (groups == g))
            if len(index):
                yield (side, g), index


def _bucket(k, step):
    """A padded row count: the next power of two ≥ k (at least 64, at most ``step``).

    A few shapes, so a few compiled kernels, whatever the split of rows.
    """
    return int(min(step, max(64, 1 << (int(k) - 1).bit_length())))


@functools.cache
def _moment_kernels(precision):
    """The compiled shift and product kernels of one precision."""
    jax = _jax()
    jnp = jax.numpy
    highest = jax.lax.Precision.HIGHEST

    def shift(x, g, r, R, slot, n_slots):
        # A_i = √w_i (x_i − r_{g_i}) in float64, and Σ_{i∈slot} √w_i A_i
        # as a product with the weighted indicators (an addition in a
        # fixed order: a scatter-add would add in any order on a GPU).
        A = (x.astype(jnp.float64) - R[g]) * r[:, None]
        ind = (slot[:, None] == jnp.arange(n_slots)[None, :]) * r[:, None]
        return A, jnp.matmul(ind.T, A, precision=highest)

    if precision == "float64":
        def product(A):
            return jnp.matmul(A.T, A, precision=highest)
    else:
        def product(A):
            # Blocks of FLOAT32_ROWS rows, each product float32 at full
            # precision (no TF32), added in float64.
            m, d = A.shape
            blocks = -(-m // FLOAT32_ROWS)
            A = jnp.pad(A, ((0, blocks * FLOAT32_ROWS - m), (0, 0))).astype(jnp.float32)
            A = A.reshape(blocks, FLOAT32_ROWS, d)

            def add(k, S):
                B = A[k]
                P = jnp.matmul(B.T, B, precision=highest, preferred_element_type=jnp.float32)
                return S + P.astype(jnp.float64)

            return jax.lax.fori_loop(0, blocks, add, jnp.zeros((d, d)))

    def gram(S, A):
        return S + product(A)

    def gram_rows(S, A, index, valid):
        return S + product(A[index] * valid[:, None])

    return {
        "shift": jax.jit(shift, static_argnames="n_slots"),
        "gram": jax.jit(gram, donate_argnums=0),
        "gram_rows": jax.jit(gram_rows, donate_argnums=0),
    }


@functools.cache
def _feature_kernel(activation):
    jax = _jax()
    jnp = jax.numpy
    g = {"relu": lambda z: jnp.maximum(z, 0), "tanh": jnp.tanh, "cos": jnp.cos}[activation]

    def features(x, W, b):
        return g(jnp.matmul(x, W, precision=jax.lax.Precision.HIGHEST) + b)

    return jax.jit(features)


def random_features_on_device(X, weights, bias, activation, block_values):
    """g(XW + b) computed on JAX's default device, a block of rows at a time.

    W and b go to the device once; blocks of rows (sparse ones made dense
    a block at a time, on the host) go there padded to one shape, so one
    kernel is compiled. The product is in W's dtype at full precision (no
    TF32), float64 inside a scoped 64-bit mode.

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

    jax = _jax()
    n, (d, k) = X.shape[0], weights.shape
    dtype = weights.dtype
    out = np.empty((n, k), dtype=dtype)
    if n == 0:
        return out
    rows = max(1, min(block_values // k, block_values // max(d, 1)))
    rows = _bucket(n, rows) if n < rows else rows
    device = default_device()
    check_device_memory(dtype.itemsize * (d * k + k + rows * (d + 2 * k)), device,
                        f"Random features ({d} inputs, {k} components)")
    kernel = _feature_kernel(activation)
    scope = _x64() if dtype == np.float64 else contextlib.nullcontext()
    with scope:
        W, b = jax.device_put(weights), jax.device_put(bias)
        for start in range(0, n, rows):
            block = X[start:start + rows]
            block = block.toarray() if sp.issparse(block) else np.asarray(block)
            m = len(block)
            if m < rows:
                block = np.concatenate([block, np.zeros((rows - m, d), dtype=block.dtype)])
            out[start:start + m] = np.asarray(kernel(block.astype(dtype, copy=False), W, b))[:m]
    return out
