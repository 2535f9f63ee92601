"""The curvature of a finished task's NLL: one *kind* × one *structure*.

The quadratic methods replace L_{t-1} by ½(θ−θ*)ᵀ H (θ−θ*), H a sum of the
tasks' curvature matrices C_t = Σ_n w_n C_{t,n} at their solutions θ*_t.
Two choices define C, independently (as in Laplace-approximation
libraries):

kind
    ``"hessian"``: the exact Hessian of the NLL, ∂²nll/∂θ² (AQC, paper
    eq. 3–4). ``"ggn"``: the generalised Gauss-Newton matrix Jᵀ Λ J, J the
    Jacobian of the logits and Λ the Hessian of the NLL in the logits; for
    the categorical and Bernoulli likelihoods (canonical links) it equals
    the Fisher information under the model's own predictive distribution
    (EWC's), and the Hessian wherever the network is linear in θ (softmax
    regression). ``"sampled_fisher"``: Σ_n w_n g̃_n g̃_nᵀ with g̃_n the
    gradient of sample n's NLL at a label drawn from the model's own
    predictive p̃_n (one draw per sample, by the Gumbel-max trick): an
    unbiased estimate of that Fisher, E[g̃_n g̃_nᵀ] = Σ_c p̃_nc g_c g_cᵀ, at
    one reverse pass per sample instead of one per class (the field's
    "sampled" Fisher labels). ``"empirical_fisher"``: Σ_n w_n g_n g_nᵀ with
    g_n the gradient of sample n's NLL at its observed label.
structure
    ``"full"``: the dense matrix. ``"kron"``: block-diagonal over the dense
    layers, each block A ⊗ G (K-FAC; Martens and Grosse, 2015) — the
    structure of the online structured Laplace approximation (Ritter et
    al., 2018). ``"diag"``: the diagonal.

Layer-wise computation. Layer l computes z_l = a_l W_l + b_l, so sample
n's loss depends on W̃_l = [W_l; b_l] only through z_l, and the exact
within-layer block of C_n is (ã ãᵀ) ⊗ S_n with ã = [a_l, 1] and S_n the
K_l × K_l curvature of the loss in z_l (its Hessian, J_zᵀ Λ J_z, or g_z
g_zᵀ by kind). Hence, exactly, diag(C) = Σ_n w_n ã² ⊗ diag(S_n) per layer,
and K-FAC's one approximation is Σ_n w_n ã ãᵀ ⊗ S_n ≈ A ⊗ G with
A = Σ_n w_n ã ãᵀ and G = Σ_n w_n S_n / Σ_n w_n (exact for one sample, or
when S_n is the same for every sample). With no hidden layer (softmax or
logistic regression on fixed features, the paper's image setting) the
full C = Σ_n w_n (ã ãᵀ) ⊗ S_n is exact too, and costs a few large matrix
products instead of n_params gradient evaluations per sample. Full C of a
network with hidden layers, whose cross-layer blocks matter, is computed
by automatic differentiation.

Factored S_n. For the GGN and the empirical Fisher S_n has rank at most
the number of outputs C: Λ_n = L_nᵀ L_n (L_n of shape r × C, r ≤ C) gives
S_n = V_nᵀ V_n with V_n = L_n J_z, whose r rows are vector-Jacobian
products of the logits in z_l, all layers at once by one reverse pass per
row of L_n (for the sampled and the empirical Fisher r = 1, the row g_fᵀ; for the GGN of a
task-incremental task r is its number of classes, the rows of the others
being zero). The diagonal
Σ_r V_n² and K-FAC's G = Σ_n w_n V_nᵀ V_n then cost O(n · r · width) per
layer, never a K_l × K_l matrix per sample. The exact Hessian has no such
factor (its S_n includes the second derivative through the activations),
so it keeps the per-sample K_l × K_l path, as does ``method="autodiff"``.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from .. import likelihoods
from ..minibatches import pad_to, padded_size
from .structures import DiagonalCurvature, FullCurvature, KroneckerCurvature

__all__ = ["KINDS", "STRUCTURES", "task_curvature", "closed_form_applies", "competing_classes"]

KINDS = ("hessian", "ggn", "sampled_fisher", "empirical_fisher")
STRUCTURES = ("full", "kron", "diag")

# Floats a chunk of per-sample intermediate results may hold (128 MB).
_CHUNK_FLOATS = 2**25


def _sequential_batches(n_samples, batch_size):
    """Unshuffled minibatch indices and padding mask (for sums over data)."""
    batch_size = min(batch_size, n_samples)
    n_batches = -(-n_samples // batch_size)
    n_pad = n_batches * batch_size - n_samples
    idx = jnp.concatenate([jnp.arange(n_samples), jnp.zeros(n_pad, dtype=int)])
    mask = jnp.concatenate([jnp.ones(n_samples), jnp.zeros(n_pad)])
    return idx.reshape(n_batches, batch_size), mask.reshape(n_batches, batch_size)


def _sum_over_batches(fn, init, X, y, weights, batch_size):
    """Σ over sequential minibatches of ``fn(X_b, y_b, w_b)``, a pytree.

    A minibatch whose weights are all 0 (the padding of
    :func:`task_curvature`) adds exact zeros: it is skipped, not computed.
    ``y`` may be a pytree of row-aligned arrays (the sampled Fisher's).
    """
    idx, mask = _sequential_batches(X.shape[0], batch_size)

    def add_batch(total, batch):
        i, m = batch
        wb = weights[i] * m
        yb = jax.tree.map(lambda a: a[i], y)

        def add(total):
            return jax.tree.map(jnp.add, total, fn(X[i], yb, wb))

        return jax.lax.cond(jnp.any(wb != 0), add, lambda total: total, total), None

    total, _ = jax.lax.scan(add_batch, init, (idx, mask))
    return total


def _output_hessian(likelihood, logits, y):
    """Λ_n = ∂²nll_n/∂f², shape (n, n_outputs, n_outputs).

    For a task-incremental ``y`` (rows of index and mask, see
    :func:`~skcl._gradient.likelihoods.nll`), that of the task's softmax:
    diag(p̃) − p̃p̃ᵀ with p̃ the probabilities renormalised over the task
    (0 outside it); a sigmoid whose task holds one class has none.
    """
    if likelihood == likelihoods.BERNOULLI:
        return _sigmoid_curvature(logits, y)[:, :, None]
    p = _task_probabilities(logits, y)
    return jax.vmap(jnp.diag)(p) - p[:, :, None] * p[:, None, :]


def _output_hessian_root(likelihood, logits, y, competing=None):
    """L_n with L_nᵀ L_n = Λ_n, shape (n, r, n_outputs) (r = n_outputs, or ``competing``).

    Softmax: rows √p_c (e_c − p), since Σ_c p_c (e_c − p)(e_c − p)ᵀ =
    diag(p) − ppᵀ when Σ_c p_c = 1 (p̃ over a task sums to 1 as well).
    Sigmoid: √(σ(1 − σ)). Closed forms, so no factorisation of Λ_n can
    fail where it is singular. For a task-incremental ``y`` whose rows
    let at most ``competing`` classes compete, the rows of the classes
    outside a row's task are zero (p̃_c = 0), so only the task's are kept:
    r = ``competing`` reverse passes instead of n_outputs.
    """
    if likelihood == likelihoods.BERNOULLI:
        return jnp.sqrt(_sigmoid_curvature(logits, y))[:, :, None]
    p = _task_probabilities(logits, y)
    identity = jnp.eye(p.shape[1], dtype=p.dtype)
    if y.ndim == 2 and competing is not None and competing < p.shape[1]:
        # Each row's task columns first (a stable sort of the mask, descending).
        columns = jnp.argsort(-y[:, 1:], axis=1, stable=True)[:, :competing]
        kept = jnp.take_along_axis(p, columns, axis=1)
        return jnp.sqrt(kept)[:, :, None] * (identity[columns] - p[:, None, :])
    return jnp.sqrt(p)[:, :, None] * (identity[None] - p[:, None, :])


def _sigmoid_curvature(logits, y):
    """σ(1 − σ), shape (n, 1); 0 for a task-incremental row whose task has one class."""
    s = jax.nn.sigmoid(logits)
    h = s * (1 - s)
    if y.ndim == 2:
        h = h * jnp.all(y[:, 1:] > 0, axis=1, keepdims=True)
    return h


def _task_probabilities(logits, y):
    """Softmax probabilities, renormalised over each row's task if ``y`` is masked."""
    if y.ndim == 2:
        logp = likelihoods.within_task(logits, y[:, 1:])
        return jnp.where(y[:, 1:] > 0, jnp.exp(logp), 0.0)
    return jax.nn.softmax(logits, axis=1)


def _at_labels(likelihood, logits, y):
    """The labels the empirical Fisher's gradients are taken at.

    ``y`` itself, or, for the sampled Fisher, (the task's labels, Gumbel
    noise of shape (n, n_columns)): then one class per row drawn from the
    model's p̃, the argmax of log p̃ + noise (the Gumbel-max trick), among a
    task-incremental row's classes only. The noise is drawn once for the
    task's rows, so the draws do not depend on how the rows are chunked.
    Returned in the labels' format (a task-incremental row keeps its mask).
    """
    if not isinstance(y, tuple):
        return y
    labels, noise = y
    logp = likelihoods.log_likelihoods(likelihood, logits)
    if labels.ndim == 2:
        mask = labels[:, 1:]
        logp = jnp.where(mask > 0, likelihoods.within_task(logp, mask), -jnp.inf)
        drawn = jnp.argmax(logp + noise, axis=1).astype(labels.dtype)
        return jnp.concatenate([drawn[:, None], labels[:, 1:]], axis=1)
    return jnp.argmax(logp + noise, axis=1).astype(labels.dtype)


def closed_form_applies(model):
    """Whether the network is one dense layer (softmax or logistic regression)."""
    return len(model.network.layer_shapes) == 1


def _layer_statistics(model, kind, theta, X, y):
    """Per layer: augmented inputs ã (n, fan_in + 1) and S_n (n, K_l, K_l)."""
    network = model.network
    zeros = [jnp.zeros(fan_out, theta.dtype) for _, fan_out in network.layer_shapes]
    _, inputs = network.forward(theta, X)
    ones = jnp.ones((X.shape[0], 1), X.dtype)
    augmented = [jnp.concatenate([a, ones], axis=1) for a in inputs]

    def sample_logits(offsets, x):
        return network.forward(theta, x[None], offsets)[0][0]

    def sample_nll(offsets, x, label):
        logits = network.forward(theta, x[None], offsets)[0]
        return likelihoods.nll(model.likelihood, logits, label[None], jnp.ones(1, X.dtype))

    if kind == "hessian":
        blocks = jax.vmap(jax.hessian(sample_nll), in_axes=(None, 0, 0))(zeros, X, y)
        S = [blocks[k][k] for k in range(len(zeros))]
    elif kind == "ggn":
        jacobians = jax.vmap(jax.jacfwd(sample_logits), in_axes=(None, 0))(zeros, X)
        Lam = _output_hessian(model.likelihood, network.apply(theta, X), y)
        S = [jnp.einsum("nok,nop,npl->nkl", J, Lam, J) for J in jacobians]
    else:  # empirical_fisher (the sampled Fisher's labels drawn first)
        y = _at_labels(model.likelihood, network.apply(theta, X), y)
        grads = jax.vmap(jax.grad(sample_nll), in_axes=(None, 0, 0))(zeros, X, y)
        S = [g[:, :, None] * g[:, None, :] for g in grads]
    return list(zip(augmented, S))


def _layer_factors(model, kind, theta, X, y, competing=None):
    """Per layer: ã (n, fan_in + 1) and V (n, r, K_l) with S_n = V_nᵀ V_n.

    For the GGN (r = n_outputs) and the empirical Fisher (r = 1) only.
    Each of the r rows is one reverse pass through the batch: sample n's
    logits depend on its own row of the offsets only, so the cotangent of
    the batch's offsets is every sample's v_n = J_zᵀ l_n at once.
    """
    network = model.network
    zeros = [jnp.zeros((X.shape[0], fan_out), theta.dtype)
             for _, fan_out in network.layer_shapes]
    logits, pull_back, inputs = jax.vjp(
        lambda offsets: network.forward(theta, X, offsets), zeros, has_aux=True)
    if kind == "ggn":
        L = _output_hessian_root(model.likelihood, logits, y, competing)
    else:  # empirical_fisher: g_f = ∂nll_n/∂f, one row per sample
        y = _at_labels(model.likelihood, logits, y)
        ones = jnp.ones(X.shape[0], logits.dtype)
        L = jax.grad(lambda f: likelihoods.nll(model.likelihood, f, y, ones))(logits)[:, None]
    (V,) = jax.vmap(pull_back, in_axes=1, out_axes=1)(L)
    ones = jnp.ones((X.shape[0], 1), X.dtype)
    return [(jnp.concatenate([a, ones], axis=1), v) for a, v in zip(inputs, V)]


def _factored(kind, method):
    """Whether S_n is taken as V_nᵀ V_n (:func:`_layer_factors`)."""
    return kind != "hessian" and method != "autodiff"


def _factor_rows(model, kind, competing=None):
    if kind != "ggn":
        return 1
    n_outputs = model.network.layer_shapes[-1][1]
    return n_outputs if competing is None else min(competing, n_outputs)


def competing_classes(y):
    """The most classes that compete in one row of a task-incremental ``y``; None otherwise.

    Static (a Python int from the host's labels), for :func:`task_curvature`.
    """
    y = np.asarray(y)
    if y.ndim != 2 or len(y) == 0:
        return None
    return max(int(y[:, 1:].sum(axis=1).max()), 1)


def _per_sample_floats(model, kind, structure, method, competing):
    """Floats of per-sample intermediate results of a structure's computation
    (None: the full autodiff path, which takes minibatches of ``batch_size``)."""
    shapes = model.network.layer_shapes
    if structure == "full":
        if not closed_form_applies(model) or method == "autodiff":
            return None
        (fan_in, K), = shapes
        return (fan_in + 1) * K * (K + 1) // 2 + K * K
    factored = _factored(kind, method)
    r = _factor_rows(model, kind, competing) if factored else None
    if structure == "diag":
        return sum(i + 1 + (2 * r * o if factored else o * o) + o for i, o in shapes)
    return sum(i + 1 + (2 * r * o if factored else 2 * o * o) for i, o in shapes)


def _chunk_rows(model, kind, structure, method, competing, batch_size, n_rows=None):
    """Samples per chunk: at least a minibatch, at most _CHUNK_FLOATS floats
    (a task's chunks hold min(n_samples, this) samples).

    Over ``n_rows`` rows that take several such chunks (a task padded by
    :func:`task_curvature`), a power of two rows, at most an eighth of
    them: the chunks of padding alone are skipped, so the rows computed
    beyond the task's are fewer than a chunk's. Chunks as large as memory
    allows had computed up to two thirds more rows than the task held
    (10,000 rows padded to 16,384 ran as two chunks of 8,350).
    """
    floats = _per_sample_floats(model, kind, structure, method, competing)
    if floats is None:
        return batch_size
    chunk = int(max(batch_size, _CHUNK_FLOATS // max(floats, 1)))
    if n_rows is None or n_rows <= chunk:
        return chunk
    return max(batch_size, min(1 << (chunk.bit_length() - 1), n_rows // 8))


def _diagonal(model, kind, theta, X, y, weights, batch_size, method, competing):
    factored = _factored(kind, method)

    def batch_diagonal(Xb, yb, wb):
        if factored:
            pairs = [(a, jnp.sum(V * V, axis=1))
                     for a, V in _layer_factors(model, kind, theta, Xb, yb, competing)]
        else:
            pairs = [(a, jnp.diagonal(S, axis1=1, axis2=2))
                     for a, S in _layer_statistics(model, kind, theta, Xb, yb)]
        return [jnp.einsum("n,ni,nk->ik", wb, a * a, d).ravel() for a, d in pairs]

    init = [jnp.zeros((i + 1) * o, theta.dtype) for i, o in model.network.layer_shapes]
    chunk = _chunk_rows(model, kind, "diag", method, competing, batch_size, X.shape[0])
    parts = _sum_over_batches(batch_diagonal, init, X, y, weights, chunk)
    return DiagonalCurvature(jnp.concatenate(parts))


def _kronecker(model, kind, theta, X, y, weights, batch_size, method, competing):
    factored = _factored(kind, method)

    def batch_factors(Xb, yb, wb):
        if factored:
            return [
                (jnp.einsum("n,ni,nj->ij", wb, a, a), jnp.einsum("n,nrk,nrl->kl", wb, V, V))
                for a, V in _layer_factors(model, kind, theta, Xb, yb, competing)
            ]
        return [
            (jnp.einsum("n,ni,nj->ij", wb, a, a), jnp.einsum("n,nkl->kl", wb, S))
            for a, S in _layer_statistics(model, kind, theta, Xb, yb)
        ]

    shapes = model.network.layer_shapes
    init = [(jnp.zeros((i + 1, i + 1), theta.dtype), jnp.zeros((o, o), theta.dtype))
            for i, o in shapes]
    chunk = _chunk_rows(model, kind, "kron", method, competing, batch_size)
    sums = _sum_over_batches(batch_factors, init, X, y, weights, chunk)
    total_weight = jnp.sum(weights)
    factors = tuple(
        (A[None], (G / jnp.where(total_weight > 0, total_weight, 1.0))[None]) for A, G in sums
    )
    return KroneckerCurvature(factors, shapes)


def _full_closed_form(model, kind, theta, X, y, weights, batch_size):
    """Σ_n w_n (ã ãᵀ) ⊗ S_n for one dense layer, as one matrix product per chunk.

    The K(K+1)/2 distinct blocks B_jl = Ãᵀ diag(w S_jl) Ã (j ≤ l) are
    computed together as Yᵀ Ã with Y = [w S_jl ã]_(j≤l), then placed.
    """
    (fan_in, K), = model.network.layer_shapes
    D1 = fan_in + 1
    rows, cols = np.triu_indices(K)
    n_pairs = len(rows)

    def batch_blocks(Xb, yb, wb):
        ((a, S),) = _layer_statistics(model, kind, theta, Xb, yb)
        c = wb[:, None] * S[:, rows, cols]  # (n, n_pairs)
        Y = (a[:, :, None] * c[:, None, :]).reshape(a.shape[0], D1 * n_pairs)
        return (Y.T @ a).reshape(D1, n_pairs, D1)

    chunk = _chunk_rows(model, kind, "full", "closed_form", None, batch_size, X.shape[0])
    blocks = _sum_over_batches(
        batch_blocks, jnp.zeros((D1, n_pairs, D1), theta.dtype), X, y, weights, chunk
    )
    pair = np.zeros((K, K), dtype=int)
    pair[rows, cols] = np.arange(n_pairs)
    pair[cols, rows] = np.arange(n_pairs)
    # H[(i, j), (k, l)] = B_{jl}[i, k], θ ordered as W̃ (D1, K) row-major.
    H = blocks[:, pair, :].transpose(0, 1, 3, 2).reshape(D1 * K, D1 * K)
    return FullCurvature(0.5 * (H + H.T))


def _full_autodiff(model, kind, theta, X, y, weights, batch_size):
    """Full C of any network by automatic differentiation, summed over minibatches."""
    network = model.network

    def sample_logits(params, x):
        return network.apply(params, x[None])[0]

    def sample_nll(params, x, label):
        return likelihoods.nll(
            model.likelihood, network.apply(params, x[None]), label[None], jnp.ones(1, x.dtype)
        )

    def batch_matrix(Xb, yb, wb):
        if kind == "hessian":  # paper eq. 4: the Jacobian of the gradient
            return jax.jacfwd(jax.grad(model.nll))(theta, Xb, yb, wb)
        if kind == "ggn":
            J = jax.vmap(jax.jacrev(sample_logits), in_axes=(None, 0))(theta, Xb)
            Lam = _output_hessian(model.likelihood, network.apply(theta, Xb), yb)
            return jnp.einsum("nop,n,noq,nqr->pr", J, wb, Lam, J)
        yb = _at_labels(model.likelihood, network.apply(theta, Xb), yb)
        G = jax.vmap(jax.grad(sample_nll), in_axes=(None, 0, 0))(theta, Xb, yb)
        return (G * wb[:, None]).T @ G

    zero = jnp.zeros((theta.size, theta.size), theta.dtype)
    total = _sum_over_batches(batch_matrix, zero, X, y, weights, batch_size)
    return FullCurvature(0.5 * (total + total.T))  # exact up to rounding; keep it symmetric


def task_curvature(model, kind, structure, theta, X, y, weights, *, batch_size, method="auto",
                   competing=None, key=None):
    """C_t = Σ_n w_n C_n of one task at θ*_t, in the given structure.

    Parameters
    ----------
    model : skcl._gradient.model.Model
    kind : {"hessian", "ggn", "sampled_fisher", "empirical_fisher"}
    structure : {"full", "kron", "diag"}
    theta : array of shape (n_params,)
        θ*_t, where the curvature is taken.
    X : array of shape (n_samples, n_features)
    y : int array of shape (n_samples,)
    weights : array of shape (n_samples,)
        Likelihood weights w_n.
    batch_size : int
        Samples per autodiff pass (bounds memory); the layer-wise and
        closed-form computations take larger chunks, at most ~128 MB of
        intermediate results.
    method : {"auto", "autodiff", "closed_form"}, default="auto"
        For the full structure: the closed form where the network is one
        dense layer ("auto"), or automatic differentiation for any network.
        For the kron and diag structures: "auto" factors the GGN's and the
        empirical Fisher's S_n through the outputs (:func:`_layer_factors`);
        "autodiff" builds every sample's K_l × K_l S_n by forward-mode
        Jacobians in the pre-activations (the Hessian always does).
    competing : int, optional
        For a task-incremental ``y``: at least the most classes that compete
        in one row (:func:`competing_classes`). The factored GGN then takes
        that many reverse passes instead of one per output, the same result
        (the other rows of Λ's root are zero). None: one per output.
    key : PRNG key, optional
        The sampled Fisher's draws (required for it, unused otherwise).

    Returns
    -------
    FullCurvature, KroneckerCurvature or DiagonalCurvature
        A sum over samples, not a mean.
    """
    if kind not in KINDS or structure not in STRUCTURES:
        raise ValueError(f"Unknown curvature {kind!r} × {structure!r}.")
    if kind == "sampled_fisher" and key is None:
        raise ValueError("The sampled Fisher draws its labels from a PRNG key: pass key=.")
    # A task of several chunks comes padded to the training loop's row
    # counts, so that the tasks of a sequence share one compiled program as
    # they share the loop (Split MNIST's five sizes compiled five, 0.8-1.0 s
    # each on one thread, about what the computation itself takes). Its
    # chunks are those of the padded row count (:func:`_chunk_rows`), and
    # the chunks of padding alone would add exact zeros and are skipped: the
    # sum is that of the task's own rows in the same chunks, to the bit,
    # for at most a chunk's more work. A task of one chunk is left as
    # it is (padding would change the chunk's shape, and with it the
    # rounding), and so is the Kronecker structure, whose G divides by Σ w_n,
    # a reduction that rounds otherwise over a longer array.
    chunk = _chunk_rows(model, _computed_kind(kind), structure, method, competing, batch_size)
    if structure != "kron" and X.shape[0] > chunk:
        n_rows = padded_size(X.shape[0])
        X, y, weights = (pad_to(a, 0, n_rows) for a in (X, y, weights))
    return _task_curvature(model, kind, structure, theta, X, y, weights, key,
                           batch_size=batch_size, method=method, competing=competing)


def _computed_kind(kind):
    """The sampled Fisher is the empirical Fisher at its drawn labels."""
    return "empirical_fisher" if kind == "sampled_fisher" else kind


@partial(jax.jit, static_argnames=("model", "kind", "structure", "batch_size", "method",
                                   "competing"))
def _task_curvature(model, kind, structure, theta, X, y, weights, key, *, batch_size, method,
                    competing):
    """:func:`task_curvature` on its (padded) rows, compiled."""
    if kind == "sampled_fisher":  # drawn in each chunk from its logits (_at_labels)
        # log_likelihoods' columns: a sigmoid's two classes, else one per output.
        n_columns = (2 if model.likelihood == likelihoods.BERNOULLI
                     else model.network.layer_shapes[-1][1])
        y = (y, jax.random.gumbel(key, (X.shape[0], n_columns), theta.dtype))
    args = (model, _computed_kind(kind), theta, X, y, weights, batch_size)
    if structure == "diag":
        return _diagonal(*args, method, competing)
    if structure == "kron":
        return _kronecker(*args, method, competing)
    closed_form = closed_form_applies(model)
    if method == "closed_form" and not closed_form:
        raise ValueError("The closed form needs a network without hidden layers.")
    if closed_form and method != "autodiff":
        return _full_closed_form(*args)
    return _full_autodiff(*args)
