"""The compiled programs of the exact family on JAX's device.

Every operation that the device backend (:mod:`.device`) runs is one of
these ``jax.jit`` programs: the arrays come in already on the device (sent
by ``jax.device_put``, the one explicit transfer), and constants (zeros, an
identity, an index) are part of the compiled program, not arrays sent with
each call. JAX compiles a program once per shape and dtype of its inputs
and keeps it for the process, so shapes are kept few: a chunk of rows is
padded (zero weight) to the next power of two, so that tasks of 257 to
512 rows share the update's programs; the rows a held-out split or a group
selects, a merge's shifts and the Gaussian's means are padded the same
way. What compiles anew: a new D, a task of more rows than the last power
of two, a number of classes past a power of two (the Gaussian's
components), and each new number of rows to predict (the scores' programs
take the rows as they come). Measured on CI Split digits with
``backend="jax"`` (JAX's CPU device): the Gaussian's first task compiles
11 programs, the next ones 0 to 2 (its components pass 8); least
squares' first 6, the next ones none; a second model of the same shapes
none.
Everything here is float64 but for the float32 products of the
``"float32"`` scheme (:mod:`.device`), run inside JAX's scoped 64-bit mode.
"""

import functools

from .backend import jax_module

__all__ = ["FLOAT32_ROWS", "feature_kernel", "moment_kernels", "solve_kernels"]

#: Rows per float32 product before it is added to the float64 sum.
FLOAT32_ROWS = 1024


@functools.cache
def moment_kernels(precision):
    """The update's programs of one precision ("float64" or "float32")."""
    jax = jax_module()
    jnp = jax.numpy
    highest = jax.lax.Precision.HIGHEST

    def shift(x, g, r, R, n_slots):
        # A_i = √w_i (x_i − r_{g_i}) in float64, and Σ_{i∈g} √w_i A_i as a
        # product with the weighted indicators (an addition in a fixed
        # order: a scatter-add would add in any order on a GPU).
        A = (x.astype(jnp.float64) - R[g]) * r[:, None]
        ind = (g[:, None] == jnp.arange(n_slots)[None, :]) * r[:, None]
        return A, jnp.matmul(ind.T, A, precision=highest)

    def select(A, index, valid, g, r, n_slots):
        # The rows ``index`` of A (padding rows zero) and their sums by group.
        B = A[index] * valid[:, None]
        ind = (g[:, None] == jnp.arange(n_slots)[None, :]) * (r * valid)[:, None]
        return B, jnp.matmul(ind.T, B, precision=highest)

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

    def gram_rows(S, A, index, valid):
        return S + product(A[index] * valid[:, None])

    return {
        "shift": jax.jit(shift, static_argnames="n_slots"),
        "select": jax.jit(select, static_argnames="n_slots"),
        "first": jax.jit(product),
        "gram": jax.jit(lambda S, A: S + product(A), donate_argnums=0),
        "first_rows": jax.jit(lambda A, index, valid: product(A[index] * valid[:, None])),
        "gram_rows": jax.jit(gram_rows, donate_argnums=0),
    }


@functools.cache
def solve_kernels():
    """The merges', the solve's and the prediction's programs (float64)."""
    jax = jax_module()
    jnp = jax.numpy
    highest = jax.lax.Precision.HIGHEST

    def matmul(a, b):
        return jnp.matmul(a, b, precision=highest)

    def add_gram(S, U, sign):
        return S + sign * matmul(U.T, U)

    def add_diagonal(S, values):
        return S + jnp.diag(values)

    def shrunk(S, scale, diagonal):
        return S * scale + jnp.diag(diagonal)

    def correlation_sums(S, u):
        R = S * u[:, None] * u[None, :]
        return jnp.vdot(R, R), jnp.trace(R)

    def triangular_solve(L, X):
        return jax.scipy.linalg.solve_triangular(L, X.T, lower=True).T

    def distances(Z, M):
        squared = (Z**2).sum(1)[:, None] - 2 * matmul(Z, M.T) + (M**2).sum(1)[None, :]
        return jnp.maximum(squared, 0)

    def log_det_of_factor(L):
        return 2 * jnp.sum(jnp.log(jnp.diagonal(L)))

    return {
        "add_gram": jax.jit(add_gram),
        "add_diagonal": jax.jit(add_diagonal),
        "scale": jax.jit(lambda S, factor: S * factor),
        "trace": jax.jit(jnp.trace),
        "diagonal": jax.jit(jnp.diagonal),
        "all_finite": jax.jit(lambda a: jnp.isfinite(a).all()),
        "sum_first": jax.jit(lambda a: a.sum(axis=0)),
        "projected": jax.jit(lambda S, P: matmul(P.T, matmul(S, P))),
        "matmul": jax.jit(matmul),
        "shrunk": jax.jit(shrunk),
        "correlation_sums": jax.jit(correlation_sums),
        "cholesky": jax.jit(jnp.linalg.cholesky),
        "eigh": jax.jit(jnp.linalg.eigh),
        "solve": jax.jit(jnp.linalg.solve),
        "triangular_solve": jax.jit(triangular_solve),
        "log_det_of_factor": jax.jit(log_det_of_factor),
        "scale_columns": jax.jit(lambda V, factors: V * factors[None, :]),
        "distances": jax.jit(lambda L, X, M: distances(triangular_solve(L, X),
                                                       triangular_solve(L, M))),
        "whitened_distances": jax.jit(lambda W, X, M: distances(matmul(X, W), matmul(M, W))),
        "tridiagonal": jax.jit(lambda S: jax.lax.linalg.tridiagonal(S, lower=True)),
        "reflectors": jax.jit(lambda reduced: reduced[1:, :-1]),
        "ormqr": jax.jit(lambda a, taus, c, transpose: jax.lax.linalg.ormqr(
            a, taus, c, left=True, transpose=transpose), static_argnames="transpose"),
        "zeros": jax.jit(lambda d: jnp.zeros((d, d)), static_argnums=0),
        "stack": jax.jit(lambda *arrays: jnp.stack(arrays)),
    }


@functools.cache
def feature_kernel(activation):
    """g(xW + b) of a block of rows, in W's dtype at full precision."""
    jax = jax_module()
    jnp = jax.numpy
    g = {"relu": lambda z: jnp.maximum(z, 0), "tanh": jnp.tanh, "cos": jnp.cos}[activation]

    def features(x, W, b):
        return g(jnp.matmul(x, W, precision=jax.lax.Precision.HIGHEST) + b)

    return jax.jit(features)
