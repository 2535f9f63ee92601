"""Probabilities of the exact family, from the stored sums and the fit alone.

Two predictives, each a pure function of the class moments (weights n_g,
means μ_g, pooled scatter W; :mod:`skcl._exact.moments`) and of what was
fitted from them, so that no row is kept and nothing depends on how or when
the fit is computed.

**Least squares: a Gaussian model of the ridge scores.** The scores
s(x) = Bᵀx + b are linear in x, so their class-conditional means and
their pooled within-class scatter follow exactly from the class moments,

    m_c = Bᵀμ_c + b,        W_s = BᵀWB,

the same numbers a pass over the training rows' scores would give (no
approximation, no rows). With one-hot targets every score vector sums to
one (B·1 = 0 and b·1 = 1: the centred targets sum to zero), so the scores
live in a (K − 1)-dimensional affine plane; they are rotated into an
orthonormal basis of it. The small covariance Σ_s = W_s/n is shrunk
towards a multiple of the identity by the oracle approximating shrinkage
(OAS, Chen et al., 2010), computed from the covariance and n alone as in
scikit-learn's ``OAS``: with n ≫ K it is tiny, and it keeps Σ_s invertible
when D < K − 1. Two readings of the model N(m_c, Σ_s):

* ``"scores"``: softmax(a·s) with one inverse temperature a, fitted to
  minimise the expected log loss under the model (temperature scaling,
  Guo et al., 2017, with the Gaussian model of the training scores in place
  of held-out rows). One parameter keeps the argmax of the scores, so the
  classifier's ``predict`` stays the ridge's; a softmax of the raw scores
  (a = 1) would not do, since the fitted targets have no scale of their own
  (they shrink with α and with how much the classes overlap).
* ``"discriminant"``: linear discriminant analysis of the scores,
  p(c | s) ∝ π_c N(s; m_c, Σ_s): the classical way to turn the scores of
  a linear regression on class indicators into posteriors (optimal scoring
  and penalised discriminant analysis, Hastie, Buja and Tibshirani, 1995).
  Its argmax is not the highest score's: where the ridge masks a class
  (Iris's middle class) it is the more accurate.
* ``"ranked"``: the discriminant's posterior q, made to rank the ridge's
  class t (its highest score) first, at the least cost in expected log
  loss under q: the p minimising KL(q ‖ p) subject to p_t ≥ p_k for every
  k. That is the maximum-likelihood estimate of multinomial probabilities
  under the order restriction "t is the most probable", whose solution is
  the isotonic regression of q on that tree order (Robertson, Wright and
  Dykstra, 1988, ch. 1 and 5): p_t = L = max_m (q_t + q_(1) + … + q_(m))/(m + 1),
  the q_(j) the other classes' in decreasing order, and p_k = min(q_k, L).
  Where the ridge and the discriminant pick the same class (nearly every
  row but a masked class's) it *is* the discriminant's posterior; where
  they differ, t is pooled with the classes the discriminant prefers.
  ``predict`` stays the ridge's. Unlike one temperature it can lower the
  confidence of a row without lowering that of every row.

**Gaussian: the Student-t posterior predictive.** The plug-in posterior
scores x under N(μ_g, Σ(s)). The shrunk covariance
Σ(s) = (1 − s)·S/n + s·ν·I is the posterior mean of Σ under the conjugate
inverse-Wishart prior IW(n₀ + D + 1, n₀·ν·I) (mean ν·I, weight n₀ pseudo-rows,
n₀ = s/(1 − s)·n) when S/n counts n rows, as the plug-in does; with a flat
prior on each mean, the posterior is IW(n₀ + n + D + 1, n₀·ν·I + S) for Σ and
N(μ_g, Σ/n_g) for μ_g given Σ. Integrating N(x; μ, Σ) over it gives the
multivariate Student-t (Murphy, 2007, "Conjugate Bayesian analysis of the
Gaussian distribution", eq. 258)

    p(x | g) = t_f(x; μ_g, c_g·Σ(s)),   f = n₀ + n + 2,
    c_g = (n₀ + n)/(n₀ + n + 2) · (1 + 1/n_g),

with n the rows behind the covariance (all rows when it is shared, the
component's own when per component). It is wider than the plug-in by the
uncertainty of the mean (1/n_g) and heavier-tailed by that of the
covariance (f finite): an input far from every class is no longer assigned
with near certainty to whichever is least far. s = 1 (Σ known to be ν·I)
leaves only the first: a Gaussian with covariance (1 + 1/n_g)·ν·I.
"""

from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp, softmax
from scipy.stats import qmc

from .backend import backend_of
from .gaussian import (
    GaussianFit,
    component_log_likelihoods,
    fit_gaussian,
    oas_coefficient,
    squared_distances,
)
from .moments import GroupMoments

__all__ = ["PREDICTIVES", "class_log_joint", "log_normalise", "only_seen", "rank_first",
           "ridge_score_log_likelihoods", "score_discriminant", "score_logits",
           "score_temperature", "student_t_log_likelihoods"]

#: The ``predictive`` options of :class:`~skcl.GaussianDiscriminantClassifier`.
PREDICTIVES = ("plugin", "student_t")

_LOG_PI = np.log(np.pi)


def score_basis(n_targets):
    """Orthonormal coordinates of the plane the scores live in.

    Parameters
    ----------
    n_targets : int
        K′, the number of scores: 1 (one or two classes) or K ≥ 3 (one-hot).

    Returns
    -------
    ndarray of shape (n_targets, n_targets − 1), or (1, 1) for one score
        Q with QᵀQ = I and Qᵀ1 = 0 for one-hot scores, whose sum is always
        one; z = Qᵀs loses nothing.
    """
    if n_targets == 1:
        return np.ones((1, 1))
    # The last K − 1 left singular vectors of the centring matrix I − 11ᵀ/K
    # (the first is 1/√K, eigenvalue 0): a fixed, deterministic basis.
    centring = np.eye(n_targets) - 1.0 / n_targets
    vectors = np.linalg.svd(centring)[0]
    return vectors[:, : n_targets - 1]


def score_moments(moments, coef, intercept, basis):
    """The class moments of the (rotated) ridge scores z = Qᵀ(Bᵀx + b), exactly.

    Parameters
    ----------
    moments : GroupMoments
        One group per class: n_c, μ_c and the pooled within-class scatter W.
    coef : ndarray of shape (n_features, n_targets)
        B.
    intercept : ndarray of shape (n_targets,)
        b.
    basis : ndarray of shape (n_targets, n_scores)
        Q, from :func:`score_basis`.

    Returns
    -------
    GroupMoments
        Of n_scores features: the same keys and weights, means Qᵀ(Bᵀμ_c + b)
        and scatter QᵀBᵀWBQ.
    """
    projection = coef @ basis
    means = (moments.means @ coef + intercept) @ basis
    scatter = backend_of(moments.scatter).projected(moments.scatter, projection)
    scatter = (scatter + scatter.T) / 2  # symmetric to the last bit, for eigh
    return GroupMoments(moments.keys, moments.counts, means, scatter, None)


# A share of the scores' total variance below which their within-class
# spread is taken as rounding noise.
_SPREAD_FLOOR = 1e-10


def _with_floor(projected):
    """The within-class scatter of the scores, kept above a share of their total.

    A ridge that fits its rows exactly (fewer distinct rows than features,
    α near 0) leaves the scores no within-class spread but rounding noise,
    which a discriminant of them would amplify into arbitrary log-odds of
    1e15; raised to ``_SPREAD_FLOOR`` of the total variance, the spread is
    a property of the fit again.
    """
    centre = projected.counts @ projected.means / projected.total
    offsets = (projected.means - centre) * np.sqrt(projected.counts)[:, None]
    total = np.trace(projected.scatter + offsets.T @ offsets)
    floor = _SPREAD_FLOOR * total / len(projected.scatter)
    values, vectors = np.linalg.eigh(projected.scatter)
    return (vectors * np.maximum(values, floor)) @ vectors.T


class ScoreDiscriminant(NamedTuple):
    """The Gaussian model of the ridge scores, in their rotated coordinates.

    Attributes
    ----------
    basis : ndarray of shape (n_targets, n_scores)
        Q, from :func:`score_basis`.
    fit : GaussianFit
        N(m_c, Σ_z) per class, with the shared covariance floored
        and shrunk, of the scores z = Qᵀs.
    """

    basis: np.ndarray
    fit: GaussianFit


def score_discriminant(moments, coef, intercept, shrinkage=None):
    """The discriminant of the ridge scores, fitted from the class moments alone.

    Parameters
    ----------
    moments : GroupMoments
        One group per class, as the ridge was fitted on.
    coef : ndarray of shape (n_features, n_targets)
    intercept : ndarray of shape (n_targets,)
    shrinkage : float in [0, 1] or None, default=None
        Of the score covariance towards a multiple of the identity; None
        is OAS (:func:`~skcl._exact.gaussian.oas_coefficient`).

    Returns
    -------
    ScoreDiscriminant
    """
    basis = score_basis(coef.shape[1])
    projected = score_moments(moments, coef, intercept, basis)
    projected = projected._replace(scatter=_with_floor(projected))
    if shrinkage is None:
        shrinkage = oas_coefficient(projected.scatter / projected.total, projected.total)
    return ScoreDiscriminant(basis, fit_gaussian(projected, float(shrinkage), shared=True))


def ridge_score_log_likelihoods(discriminant, scores):
    """log π_c + log N(z; m_c, Σ_z) for every row and class, in score space.

    Parameters
    ----------
    discriminant : ScoreDiscriminant
        From :func:`score_discriminant`.
    scores : ndarray of shape (n_samples, n_targets)
        Bᵀx + b of the rows to score.

    Returns
    -------
    ndarray of shape (n_samples, n_classes_seen)
        Columns in the order of the moments' keys it was fitted on.
    """
    basis, fit = discriminant
    return component_log_likelihoods(fit, np.asarray(scores, dtype=np.float64) @ basis)


def score_logits(scores):
    """The logits whose softmax the ``"scores"`` probabilities are, up to the temperature.

    One score (two classes, the second's when positive) becomes the
    logits (0, s); K one-hot scores are their own logits. Their argmax is
    the ridge's ``predict``.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_targets)

    Returns
    -------
    ndarray of shape (n_samples, max(n_targets, 2))
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape[1] == 1:
        return np.hstack([np.zeros_like(scores), scores])
    return scores


def only_seen(logits, seen):
    """The logits with −inf in every column but ``seen``: a declared class
    with no rows yet gets probability 0 once they are normalised.

    Its score is fitted to target 0 on every row (about 0, not −∞), so a
    softmax of the scores alone would give it a share.

    Parameters
    ----------
    logits : ndarray of shape (n_samples, n_classes)
    seen : ndarray of int
        The columns of the classes that have rows.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    masked = np.full_like(logits, -np.inf)
    masked[:, seen] = logits[:, seen]
    return masked


def score_temperature(moments, coef, intercept, targets, n_draws=2048, seed=0):
    """The inverse temperature a of softmax(a·s) fitted to the exact Gaussian model of the scores.

    Temperature scaling (Guo et al., 2017) chooses a to minimise the log
    loss of softmax(a·s(x)) over labelled rows. Here the rows are the
    Gaussian model of the training scores, whose class means m_c and
    covariance Σ_z (OAS-shrunk) are exact functions of the stored sums
    (:func:`score_moments`): a minimises

        Σ_c π_c E_{s ~ N(m_c, Σ_s)} [log Σ_k exp(a·s_k) − a·s_c],

    a convex function of a, estimated with ``n_draws`` quasi-random normal
    points (scrambled Sobol, seeded) shared by all classes: the estimate
    is smooth in a, and the same on every call. One parameter, so the
    argmax of the probabilities is the highest score's: ``predict``.

    Parameters
    ----------
    moments : GroupMoments
        One group per class seen.
    coef : ndarray of shape (n_features, n_targets)
    intercept : ndarray of shape (n_targets,)
    targets : ndarray of shape (n_groups,) of int
        Each group's column of the logits (:func:`score_logits`).
    n_draws : int, default=2048
    seed : int, default=0

    Returns
    -------
    float
        a > 0, within [e⁻¹⁰, e²⁰] (the upper end when the classes' scores
        do not overlap at all).
    """
    basis = score_basis(coef.shape[1])
    projected = score_moments(moments, coef, intercept, basis)
    covariance = projected.scatter / projected.total
    rho = oas_coefficient(covariance, projected.total)
    covariance = (1 - rho) * covariance + rho * np.trace(covariance) / len(covariance) * np.eye(
        len(covariance))
    # A square root of Σ that is a continuous function of it: Cholesky's
    # (Σ is positive definite once shrunk). The spectrum's V·diag(λ)^½ is
    # not: where two eigenvalues tie (the empty columns of two declared
    # classes with no rows) its vectors may turn freely within their plane,
    # which moved the quasi-random points, hence a by 1e-5, between sums
    # equal to rounding.
    try:
        root = np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:  # every score constant: Σ = 0
        values, vectors = np.linalg.eigh(covariance)
        root = vectors * np.sqrt(np.clip(values, 0, None))
    # Scrambled Sobol points mapped to N(0, I): quasi-Monte Carlo, an error
    # near 1/n_draws instead of 1/√n_draws for this smooth integrand.
    noise = qmc.MultivariateNormalQMC(np.zeros(len(covariance)), seed=seed).random(n_draws)
    spread = noise @ root.T @ basis.T  # (n_draws, n_targets), shared by every class
    means = moments.means @ coef + intercept
    logits = [score_logits(m + spread) for m in means]
    weights = moments.counts / moments.total
    rows = np.arange(n_draws)

    def slope(log_a):
        # d/da of the loss: Σ_c π_c E[Σ_k softmax(a·s)_k s_k − s_c], increasing
        # in a (the loss is convex). Its root, not the loss's minimum, is
        # what is solved for: a minimum located from loss values is only
        # known to √ε, so sums equal to rounding (a refit, a model with
        # rows forgotten) gave temperatures 1e-6 apart; the root is known
        # to rounding.
        a = np.exp(log_a)
        return sum(w * np.mean(np.sum(softmax(a * L, axis=1) * L, axis=1) - L[rows, t])
                   for w, L, t in zip(weights, logits, targets))

    low, high = -10.0, 20.0
    if slope(low) >= 0:
        return float(np.exp(low))
    if slope(high) <= 0:
        return float(np.exp(high))
    return float(np.exp(brentq(slope, low, high, xtol=1e-13, rtol=4 * np.finfo(float).eps)))


# How much below the pooled level the classes pooled with the first one are
# put, so that the first is strictly the most probable (argmax, predict).
_RANK_MARGIN = 1e-9


def rank_first(log_proba, first):
    """log p of the distribution closest to π that ranks class ``first`` first.

    The p minimising KL(π ‖ p) = Σ_k π_k log(π_k / p_k) (the expected log
    loss of p under π, up to a constant) over the simplex subject to
    p_t ≥ p_k for all k, t = ``first``: the isotonic regression of π on the
    tree order with root t (the maximum-likelihood multinomial under that
    restriction; Robertson, Wright and Dykstra, 1988). With the other
    classes' π in decreasing order π_(1) ≥ π_(2) ≥ …,

        p_t = L = max_{m=0..K−1} (π_t + π_(1) + … + π_(m)) / (m + 1),
        p_k = min(π_k, L)  for k ≠ t,

    which sums to one: t is pooled with the classes above the pooled mean.
    Rows where t is already the most probable keep π exactly. The pooled
    classes are then lowered by a relative 1e-9 and the row renormalised,
    so that t is strictly first (ties would let ``argmax`` pick another).
    Computed in log space: finite for log-probabilities of any size.

    Parameters
    ----------
    log_proba : ndarray of shape (n_samples, n_classes)
        log π, each row normalised; −inf allowed (a class with no rows),
        but not at ``first``'s column.
    first : ndarray of shape (n_samples,) of int
        The column to rank first in each row.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        log p, each row normalised; its argmax is ``first``.
    """
    log_proba = np.asarray(log_proba, dtype=np.float64)
    n, k = log_proba.shape
    rows = np.arange(n)
    top = log_proba[rows, first]
    others = log_proba.copy()
    others[rows, first] = -np.inf
    ordered = -np.sort(-others, axis=1)[:, : k - 1]  # the others, decreasing
    # log of π_t + π_(1) + … + π_(m) for m = 0 … K − 1, then the mean's log.
    cumulative = np.logaddexp.accumulate(np.hstack([top[:, None], ordered]), axis=1)
    level = np.max(cumulative - np.log(np.arange(1, k + 1)), axis=1)
    pooled = others >= level[:, None]  # those equal to L up to rounding
    log_p = np.minimum(log_proba, level[:, None] + np.log1p(-_RANK_MARGIN))
    log_p[rows, first] = level
    # Nothing pooled: π unchanged (and exactly so, without the normaliser's rounding).
    changed = pooled.any(axis=1) | (log_proba[rows, first] < level)
    log_p[changed] -= logsumexp(log_p[changed], axis=1, keepdims=True)
    log_p[~changed] = log_proba[~changed]
    return log_p


def student_t_log_likelihoods(fit, shrinkage, X):
    """log π_g + log t_f(x; μ_g, c_g·Σ_g(s)) for every row and component.

    The posterior predictive of the module docstring.

    Parameters
    ----------
    fit : GaussianFit
        The plug-in fit at ``shrinkage`` (its weights n_g are the
        components' rows).
    shrinkage : float in [0, 1]
        s.
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_components)
    """
    d = fit.means.shape[1]
    counts = np.asarray(fit.counts, dtype=np.float64)
    # The rows behind each component's covariance: all of them when shared.
    rows = np.full(len(counts), counts.sum()) if fit.shared else counts
    log_det = fit.log_dets
    squared = squared_distances(fit, X)
    if shrinkage >= 1:  # Σ known: only the mean's uncertainty is left
        scale = 1 + 1 / counts
        return fit.log_priors - 0.5 * (squared / scale + d * np.log(2 * np.pi * scale)
                                       + log_det)
    pseudo = shrinkage / (1 - shrinkage) * rows  # n₀
    f = pseudo + rows + 2
    scale = (pseudo + rows) / f * (1 + 1 / counts)  # c_g
    log_norm = (gammaln((f + d) / 2) - gammaln(f / 2) - d / 2 * (np.log(f) + _LOG_PI)
                - 0.5 * (log_det + d * np.log(scale)))
    return fit.log_priors + log_norm - (f + d) / 2 * np.log1p(squared / (scale * f))


def class_log_joint(joint, component_classes, classes):
    """log p(c, x): each class's components summed.

    Parameters
    ----------
    joint : ndarray of shape (n_samples, n_components)
        log π_g + log p(x | g).
    component_classes : ndarray of shape (n_components,)
        The class of each component.
    classes : ndarray of shape (n_classes,)
        Sorted; every component's class among them.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        −inf for a class with no component (declared, no rows yet).
    """
    owner = np.searchsorted(classes, component_classes)
    per_class = np.full((len(joint), len(classes)), -np.inf)
    for c in np.unique(owner):
        per_class[:, c] = logsumexp(joint[:, owner == c], axis=1)
    return per_class


def log_normalise(log_weights):
    """Each row of unnormalised log weights minus its log-sum-exp.

    The row's largest weight is taken out first, exactly: far from the
    data every log joint is about −|x|² and their float64 sum with log K
    would lose the K (one class of three got probability 1 each).

    Parameters
    ----------
    log_weights : ndarray of shape (n_samples, n_classes)
        −inf allowed, for a class that has no rows.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    top = np.max(log_weights, axis=1, keepdims=True)
    shifted = log_weights - np.where(np.isfinite(top), top, 0.0)
    return shifted - logsumexp(shifted, axis=1, keepdims=True)
