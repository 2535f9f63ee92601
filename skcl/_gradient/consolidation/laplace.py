"""The Laplace predictive of the quadratic methods: integrate over their Gaussian.

A quadratic method stands in for the loss L_t by ½λ(θ−θ*_t)ᵀ H_t (θ−θ*_t),
H_t = diag(prior) + Σ_{i≤t} C_i (paper, eq. 3; ``QuadraticState``). As a
negative log density that is the Gaussian posterior N(θ*_t, Σ) with

    Σ = (λ H_t)⁻¹ = (λ (diag(prior) + C))⁻¹,

the precision the next task's penalty uses (the prior sits inside H_t and
is weighted by λ with the curvature; before any curvature is folded in, the
prior alone, with weight 1). With λ = 1 it is the Laplace approximation of
the recursion's posterior; another λ tempers it.

The linearised (GLM) predictive replaces the network by its first-order
expansion in θ around θ*: f(x; θ) ≈ f(x; θ*) + J(x)(θ − θ*), J(x) = ∂f/∂θ
of shape (n_outputs, n_params), so the logits are Gaussian,
f ~ N(f(x; θ*), J(x) Σ J(x)ᵀ) (Immer et al., 2021; Daxberger et al.,
"Laplace Redux", 2021). Their softmax (or sigmoid) is then integrated
by the probit approximation, softmax(f* ⊙ κ) with κ_k = 1/√(1 + π/8 · var_k)
(laplace-torch's ``link_approx="probit"``; exact up to the sigmoid's probit
approximation for one logit); by the same approximation applied to every
pairwise difference f_k − f_j with its own variance (the mean-field
approximation of Lu, Ie and Sha, 2020: it sees the covariance of the
logits, so a shift common to all of them, which the softmax ignores, does
not flatten it); or by Monte Carlo over the logits. For a network without
hidden layers (softmax or logistic regression) the linearisation is exact.

Σ is kept as square roots S with Σ = S Sᵀ, block by block: one dense block
for the full structure, one per layer for the Kronecker one (the exact
inverse of that layer's Σ_t A_t ⊗ G_t plus the prior, which is no single
Kronecker product once tasks are summed), a vector for the diagonal one.
J Σ Jᵀ = Σ_b (J_b S_b)(J_b S_b)ᵀ is then positive semi-definite by
construction.
"""

import math
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from scipy.linalg import solve_triangular

from .structures import (
    DiagonalCurvature,
    FullCurvature,
    KroneckerCurvature,
    curvature_spectrum,
    dense_blocks,
)

__all__ = [
    "PREDICTIVES",
    "PosteriorRoot",
    "laplace_log_proba",
    "logit_moments",
    "mc_log_proba",
    "mean_field_log_proba",
    "posterior_root",
    "probit_log_proba",
]

PREDICTIVES = ("map", "probit", "mean_field", "mc")

# Inputs whose Jacobians are built at once: bounds the memory of J
# (chunk × n_outputs × n_params floats). Chunks are padded to this length,
# so one compilation serves every number of inputs.
_CHUNK = 256
# Floats of Monte Carlo logits alive at once (chunk × samples × outputs).
_MC_FLOATS = 2**22
# The widest standard deviation of the Monte Carlo logits (float32 samples
# of up to millions of outputs stay finite).
_MC_MAX_SD = 1e30


@dataclass(frozen=True)
class PosteriorRoot:
    """Σ = S Sᵀ of the Gaussian posterior, block-diagonal over θ.

    Attributes
    ----------
    blocks : tuple of ((start, stop), S)
        Dense blocks: S of shape (stop − start, stop − start) with
        S Sᵀ = Σ[start:stop, start:stop]. Empty for a diagonal Σ.
    diagonal : ndarray of shape (n_params,) or None
        √diag(Σ) when Σ is diagonal, else None.
    """

    blocks: tuple
    diagonal: np.ndarray = None

    def covariance(self, n_params):
        """Σ as a dense array of shape (n_params, n_params), for checks."""
        if self.diagonal is not None:
            return np.diag(np.asarray(self.diagonal, np.float64) ** 2)
        cov = np.zeros((n_params, n_params))
        for (start, stop), S in self.blocks:
            S = np.asarray(S, np.float64)
            cov[start:stop, start:stop] = S @ S.T
        return cov


def _inverse_root(precision):
    """S with S Sᵀ = P⁻¹, from the Cholesky factor of P (float64)."""
    try:
        L = np.linalg.cholesky(precision)
    except np.linalg.LinAlgError:
        raise ValueError(
            "The posterior precision λ(diag(prior) + C) is not positive definite, so it "
            "is no Gaussian's: the exact Hessian of a network with hidden layers can be "
            "indefinite away from a minimum. Use curvature='ggn' (positive semi-definite "
            "everywhere) for the Laplace predictive."
        ) from None
    # P = L Lᵀ, so P⁻¹ = L⁻ᵀ L⁻¹ = S Sᵀ with S = L⁻ᵀ.
    return solve_triangular(L, np.eye(len(L)), lower=True).T


def posterior_root(state, alpha, layer_shapes, prior_precision=None, spectrum=None):
    """Square roots of Σ = (λ (diag(prior) + C))⁻¹ in C's structure.

    With ``prior_precision`` δ, Σ = (λ C⁺ + δ I)⁻¹ instead: the stored
    curvature with an isotropic prior of precision δ in place of λ·prior
    (:func:`evidence_prior_precision`), C⁺ its positive part
    (:func:`curvature_spectrum`), from the eigenvectors of each block.

    Parameters
    ----------
    state : QuadraticState
        Centre θ*_t, the prior's precision (shape (n_params,)) and
        C = Σ_i C_i, full, Kronecker or diagonal (None: the prior alone,
        weighted 1, as the recursion weighs it before the first task).
    alpha : float
        λ.
    layer_shapes : tuple of (fan_in, fan_out)
        The network's dense layers.
    prior_precision : float > 0 or None, default=None
        δ; None keeps the stored prior.
    spectrum : list or None, default=None
        ``curvature_spectrum(state, alpha, layer_shapes)`` when the caller
        has it already (it chose δ from it); only read with δ.

    Returns
    -------
    PosteriorRoot
    """
    prior = np.asarray(state.prior, np.float64)
    curvature = state.curvature
    alpha = float(alpha)
    if prior_precision is not None:
        delta = float(prior_precision)
        if curvature is None:
            return PosteriorRoot((), np.full(len(prior), 1.0 / np.sqrt(delta)))
        if spectrum is None:
            spectrum = curvature_spectrum(state, alpha, layer_shapes)
        if isinstance(curvature, DiagonalCurvature):
            return PosteriorRoot((), 1.0 / np.sqrt(spectrum[0][1] + delta))
        # S = V diag(1/√(e + δ)): S Sᵀ = (V diag(e) Vᵀ + δ I)⁻¹.
        return PosteriorRoot(tuple((span, vectors / np.sqrt(values + delta))
                                   for span, values, vectors in spectrum))
    if curvature is None:
        return PosteriorRoot((), np.sqrt(1.0 / prior))
    if isinstance(curvature, DiagonalCurvature):
        precision = alpha * (prior + np.asarray(curvature.diagonal, np.float64))
        if not np.all(precision > 0):
            raise ValueError(
                "The posterior precision λ(prior + c) has a non-positive diagonal entry; "
                "use curvature='ggn' for the Laplace predictive."
            )
        return PosteriorRoot((), np.sqrt(1.0 / precision))
    if not isinstance(curvature, (FullCurvature, KroneckerCurvature)):
        raise TypeError(
            f"No Laplace predictive for a curvature of type {type(curvature).__name__}.")
    return PosteriorRoot(tuple(
        ((start, stop),
         _inverse_root(alpha * (np.diag(prior[start:stop]) + 0.5 * (block + block.T))))
        for (start, stop), block in dense_blocks(curvature, layer_shapes)
    ))


@partial(jax.jit, static_argnames=("network", "n_outputs", "spans"))
def _moments_chunk(network, n_outputs, spans, theta, roots, diagonal, X):
    def logits(th, x):
        # Only the known classes' outputs (an unseen-classes output is dropped).
        return network.apply(th, x[None])[0, :n_outputs]

    def one(x):
        J = jax.jacrev(logits)(theta, x)  # (n_outputs, n_params)
        if diagonal is not None:
            parts = [J * diagonal]
        else:
            parts = [J[:, start:stop] @ S for (start, stop), S in zip(spans, roots)]
        # J S can be as large as float32 allows (inputs near 1e19 and up)
        # while its square overflows: square it divided by its largest
        # entry, and let the caller multiply back in float64.
        scale = jnp.max(jnp.stack([jnp.max(jnp.abs(JS)) for JS in parts]))
        scale = jnp.where(scale > 0, scale, 1.0)
        cov = sum((JS / scale) @ (JS / scale).T for JS in parts)
        return logits(theta, x), 0.5 * (cov + cov.T), scale

    return jax.vmap(one)(X)


# The largest factor the normalised covariance (entries at most n_params)
# is multiplied by, so that it and the predictives' sums of it stay finite
# in float64. The cap rescales the whole covariance, and a variance it
# lowers stays above 1e190 (the normalised float32 entries are 0 or above
# 1e-90): there κ = 1/√(1 + π/8·var) is below 1e-95, κ·f* below 1e-56 for
# any float32 logit, so no probability changes.
_MAX_VARIANCE_FACTOR = 1e280


def _variance_factor(scale):
    """scale², capped at ``_MAX_VARIANCE_FACTOR`` (a uniform rescaling of the
    logits' covariance, where it would overflow float64)."""
    with np.errstate(over="ignore"):
        return np.minimum(scale**2, _MAX_VARIANCE_FACTOR)


def logit_moments(network, n_outputs, theta, root, X):
    """Mean and covariance of the linearised logits, f ~ N(f(x; θ*), J Σ Jᵀ).

    Parameters
    ----------
    network : MLP
    n_outputs : int
        How many of the network's first outputs are logits of known
        classes.
    theta : array of shape (n_params,)
        θ*.
    root : PosteriorRoot
        Σ.
    X : array of shape (n_samples, n_features)

    Returns
    -------
    mean : ndarray of shape (n_samples, n_outputs)
    cov : ndarray of shape (n_samples, n_outputs, n_outputs)
        float64: finite even where its float32 square would overflow.
    """
    X = np.asarray(X, np.float32)
    theta = jnp.asarray(theta, jnp.float32)
    spans = tuple(span for span, _ in root.blocks)
    # S can exceed float32 (a tiny prior precision δ leaves directions
    # without curvature a variance of 1/δ): divide it by its largest entry
    # before the cast, and multiply the covariance back in float64.
    parts = [np.asarray(S, np.float64) for _, S in root.blocks]
    if root.diagonal is not None:
        parts.append(np.asarray(root.diagonal, np.float64))
    root_scale = max((float(np.max(np.abs(S), initial=0.0)) for S in parts), default=0.0)
    root_scale = root_scale if root_scale > 0 else 1.0
    roots = tuple(jnp.asarray(S / root_scale, jnp.float32) for _, S in root.blocks)
    diagonal = (None if root.diagonal is None
                else jnp.asarray(np.asarray(root.diagonal, np.float64) / root_scale, jnp.float32))
    means, covs = [], []
    for start in range(0, len(X), _CHUNK):
        chunk = X[start : start + _CHUNK]
        padded = np.zeros((_CHUNK, X.shape[1]), np.float32)
        padded[: len(chunk)] = chunk
        mean, cov, scale = _moments_chunk(network, n_outputs, spans, theta, roots, diagonal,
                                          padded)
        factor = _variance_factor(np.asarray(scale, np.float64)[: len(chunk)] * root_scale)
        means.append(np.asarray(mean, np.float64)[: len(chunk)])
        covs.append(np.asarray(cov, np.float64)[: len(chunk)] * factor[:, None, None])
    if not means:
        return np.zeros((0, n_outputs)), np.zeros((0, n_outputs, n_outputs))
    return np.concatenate(means), np.concatenate(covs)


def _log_sigmoid_pair(z):
    from scipy.special import log_expit

    return np.stack([log_expit(-z), log_expit(z)], axis=1)


def probit_log_proba(mean, var, bernoulli):
    """Log-probabilities by the probit approximation, float64.

    Parameters
    ----------
    mean : array of shape (n_samples, n_outputs)
        f(x; θ*).
    var : array of shape (n_samples, n_outputs)
        diag(J Σ Jᵀ).
    bernoulli : bool
        One logit for the second class (sigmoid) instead of a softmax.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        log softmax(f* ⊙ κ), κ = 1/√(1 + π/8 · var); for one logit
        [log σ(−κ f*), log σ(κ f*)], the approximation of
        ∫σ(f) N(f; f*, var) df that replaces σ by Φ(√(π/8)·).
    """
    from scipy.special import log_softmax

    mean = np.asarray(mean, np.float64)
    kappa = 1.0 / np.sqrt(1.0 + (math.pi / 8.0) * np.asarray(var, np.float64))
    scaled = mean * kappa
    if bernoulli:
        return _log_sigmoid_pair(scaled[:, 0])
    return log_softmax(scaled, axis=1)


def mean_field_log_proba(mean, cov, bernoulli):
    """Log-probabilities by the pairwise (mean-field) probit approximation, float64.

    p_k ∝ 1 / Σ_j exp(−(f*_k − f*_j) / √(1 + π/8 · V_kj)),
    V_kj = Σ_kk + Σ_jj − 2 Σ_kj the variance of f_k − f_j (the j = k term
    is 1); rows are then normalised. For two softmax classes it is the
    sigmoid probit of the logit difference, the one-logit case's formula.

    Parameters
    ----------
    mean : array of shape (n_samples, n_outputs)
    cov : array of shape (n_samples, n_outputs, n_outputs)
        J Σ Jᵀ.
    bernoulli : bool

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    from scipy.special import logsumexp

    mean = np.asarray(mean, np.float64)
    cov = np.asarray(cov, np.float64)
    if bernoulli:
        return probit_log_proba(mean, cov[:, :, 0], True)
    var = np.diagonal(cov, axis1=1, axis2=2)
    V = np.clip(var[:, :, None] + var[:, None, :] - 2 * cov, 0.0, None)
    a = -(mean[:, :, None] - mean[:, None, :]) / np.sqrt(1.0 + (math.pi / 8.0) * V)
    logp = -logsumexp(a, axis=2)
    return logp - logsumexp(logp, axis=1, keepdims=True)


@partial(jax.jit, static_argnames=("bernoulli",))
def _mc_chunk(mean, cov, scale, z, bernoulli):
    # Σ_f = scale² U diag(w) Uᵀ; R = scale U √w (rounding can leave tiny
    # negative w). The scale keeps the float32 eigenproblem from overflowing.
    w, U = jnp.linalg.eigh(cov)
    R = U * (scale[:, None, None] * jnp.sqrt(jnp.clip(w, 0.0))[:, None, :])
    f = mean[:, None, :] + jnp.einsum("sk,nlk->nsl", z, R)  # (n, samples, outputs)
    if bernoulli:
        logp = jnp.stack([jax.nn.log_sigmoid(-f[..., 0]), jax.nn.log_sigmoid(f[..., 0])], -1)
    else:
        logp = jax.nn.log_softmax(f, axis=-1)
    # log of the mean probability, without underflow to log 0.
    return jax.scipy.special.logsumexp(logp, axis=1) - jnp.log(z.shape[0])


def mc_log_proba(mean, cov, n_samples, key, bernoulli):
    """Log-probabilities by Monte Carlo over the linearised logits.

    log (1/S) Σ_s softmax(f_s), f_s = f* + R z_s, R Rᵀ = J Σ Jᵀ and
    z_s ~ N(0, I) drawn once from ``key`` for every input (common random
    numbers: deterministic, and smooth in the input).

    Parameters
    ----------
    mean : array of shape (n_samples_x, n_outputs)
    cov : array of shape (n_samples_x, n_outputs, n_outputs)
    n_samples : int
        S.
    key : jax.random.PRNGKey
    bernoulli : bool

    Returns
    -------
    ndarray of shape (n_samples_x, n_classes), float64
    """
    n, k = np.shape(mean)
    z = jax.random.normal(key, (n_samples, k), jnp.float32)
    chunk = max(1, min(_CHUNK, _MC_FLOATS // (n_samples * max(k, 2))))
    out = []
    for start in range(0, n, chunk):
        m = np.zeros((chunk, k), np.float32)
        c = np.zeros((chunk, k, k), np.float32)
        r = np.ones(chunk, np.float32)
        size = min(chunk, n - start)
        part = np.asarray(cov[start : start + size], np.float64)
        sd = np.sqrt(np.max(np.abs(part), axis=(1, 2)))
        sd = np.where(sd > 0, sd, 1.0)
        m[:size] = mean[start : start + size]
        c[:size] = part / sd[:, None, None] ** 2
        # The float32 samples hold logits' spreads up to _MC_MAX_SD; a wider
        # one (a tiny prior precision δ) is drawn at that width, where the
        # softmax of a sample already sees its direction alone.
        r[:size] = np.minimum(sd, _MC_MAX_SD)
        out.append(np.asarray(_mc_chunk(m, c, r, z, bernoulli), np.float64)[:size])
    if not out:
        return np.zeros((0, 2 if bernoulli else k))
    logp = np.concatenate(out)
    # Renormalise in float64: the float32 mean sums to one only to rounding.
    from scipy.special import logsumexp

    return logp - logsumexp(logp, axis=1, keepdims=True)


def laplace_log_proba(network, n_outputs, bernoulli, theta, root, X, predictive,
                      n_samples=1000, key=None):
    """Log-probabilities of the linearised Laplace predictive.

    Parameters
    ----------
    network : MLP
    n_outputs : int
        Known classes' outputs (1 for a Bernoulli output).
    bernoulli : bool
    theta : array of shape (n_params,)
        θ*.
    root : PosteriorRoot
        Σ.
    X : array of shape (n_samples_x, n_features)
    predictive : {"probit", "mean_field", "mc"}
    n_samples : int, default=1000
        Monte Carlo samples of the logits ("mc").
    key : jax.random.PRNGKey, default=None
        For "mc".

    Returns
    -------
    ndarray of shape (n_samples_x, n_classes), float64
    """
    mean, cov = logit_moments(network, n_outputs, theta, root, X)
    if predictive == "probit":
        return probit_log_proba(mean, np.diagonal(cov, axis1=1, axis2=2), bernoulli)
    if predictive == "mean_field":
        return mean_field_log_proba(mean, cov, bernoulli)
    if predictive == "mc":
        return mc_log_proba(mean, cov, n_samples, key, bernoulli)
    raise ValueError(
        f"predictive must be 'probit', 'mean_field' or 'mc' here, got {predictive!r}.")
