"""The prior precision of the Laplace predictive by the evidence (marginal likelihood).

The quadratic methods store a curvature C (full, Kronecker or diagonal)
beside θ*. With an isotropic prior N(0, δ⁻¹ I) in place of the stored one,
the Laplace approximation of the evidence is a function of δ alone, from
the eigenvalues of λC; its maximum is the δ that laplace-torch's
``optimize_prior_precision`` looks for by gradient steps, found here from
the exact eigenvalues. The predictive then uses Σ = (λC + δI)⁻¹
(:func:`~.laplace.posterior_root` with ``prior_precision=δ``). Training
never reads it.
"""

import numpy as np

from .structures import curvature_spectrum

__all__ = ["evidence_prior_precision", "laplace_log_evidence"]


def _curvature_eigenvalues(state, alpha, layer_shapes, spectrum=None):
    """All the eigenvalues of λC⁺ (from ``spectrum`` when it is given)."""
    if spectrum is None:
        spectrum = curvature_spectrum(state, alpha, layer_shapes)
    return np.concatenate([values for _, values, _ in spectrum])


def laplace_log_evidence(state, alpha, theta, layer_shapes, prior_precision, nll=0.0):
    """The Laplace approximation of log p(D | δ) with the prior N(0, δ⁻¹ I).

    With the stored curvature λC⁺ (:func:`curvature_spectrum`) as the
    Hessian of the negative log-likelihood at θ* (the Gauss–Newton or
    Fisher sum the method keeps, tempered by λ) and an isotropic Gaussian
    prior of precision δ,

        log Z(δ) ≈ −nll(θ*) − ½ δ ‖θ*‖² + ½ P log δ − ½ log det(λC⁺ + δ I)

    (the 2π terms of the prior's normaliser and of the Gaussian integral
    cancel; MacKay, 1992; Immer et al., 2021, laplace-torch's
    ``log_marginal_likelihood``). θ* is held at the trained point, as
    laplace-torch does when it tunes δ after training.

    Parameters
    ----------
    state : QuadraticState
        Its curvature C (full, Kronecker or diagonal); its prior is not used.
    alpha : float
        λ.
    theta : array of shape (n_params,)
        θ*.
    layer_shapes : tuple of (fan_in, fan_out)
    prior_precision : float > 0
        δ.
    nll : float, default=0.0
        The negative log-likelihood at θ*, a constant in δ.

    Returns
    -------
    float
    """
    values = _curvature_eigenvalues(state, alpha, layer_shapes)
    theta = np.asarray(theta, np.float64)
    delta = float(prior_precision)
    return float(-nll - 0.5 * delta * theta @ theta + 0.5 * len(values) * np.log(delta)
                 - 0.5 * np.sum(np.log(values + delta)))


def evidence_prior_precision(state, alpha, theta, layer_shapes, spectrum=None):
    """The δ that maximises :func:`laplace_log_evidence`.

    Setting its derivative to zero gives MacKay's (1992) fixed point
    δ = γ(δ) / ‖θ*‖², γ(δ) = Σ_i e_i / (e_i + δ) the effective number of
    parameters over the eigenvalues e_i of λC. γ falls from the number of
    positive e_i to 0 as δ grows while δ‖θ*‖² rises from 0, so the root is
    unique; it is found by Brent's method on log δ, from the exact
    eigenvalues (no iteration of the fixed point, which can be slow).

    Parameters
    ----------
    state : QuadraticState
    alpha : float
        λ.
    theta : array of shape (n_params,)
        θ*.
    layer_shapes : tuple of (fan_in, fan_out)
    spectrum : list or None, default=None
        ``curvature_spectrum(state, alpha, layer_shapes)``, when the caller
        has it already (the predictive reuses it for Σ).

    Returns
    -------
    float
        δ > 0.
    """
    from scipy.optimize import brentq

    values = _curvature_eigenvalues(state, alpha, layer_shapes, spectrum)
    norm = float(np.sum(np.asarray(theta, np.float64) ** 2))
    positive = int(np.sum(values > 0))
    if norm == 0 or positive == 0:
        raise ValueError("The evidence has no maximum in δ when θ* = 0 or the curvature is "
                         "zero.")

    def slope(log_delta):  # 2δ · d log Z / dδ, decreasing in δ
        delta = np.exp(log_delta)
        return float(np.sum(values / (values + delta)) - delta * norm)

    high = np.log(positive / norm)  # γ ≤ positive, so the root is at most here
    low = high - np.log(10.0)
    while slope(low) <= 0:  # ends: as δ → 0 the slope tends to ``positive`` > 0
        low -= np.log(10.0)
    if slope(high) >= 0:
        return float(np.exp(high))
    return float(np.exp(brentq(slope, low, high, xtol=1e-12, rtol=1e-12)))
