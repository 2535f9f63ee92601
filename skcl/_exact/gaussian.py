"""Gaussian class-conditionals from their moments: shrinkage, fit, scores.

Each component g (a class, or a (task, class) pair) is N(μ_g, Σ), with a
covariance shared by all components (linear discriminant analysis) or one
per component (quadratic). The covariance is the empirical one shrunk
towards a multiple of the identity,

    Σ(s) = (1 − s)·S/n + s·ν·I,        ν = tr(S/n)/D,

scikit-learn's ``shrunk_covariance`` and its ``LinearDiscriminantAnalysis``
with a float ``shrinkage``; it is also the posterior mean of Σ under an
inverse-Wishart prior centred at ν·I that weighs s/(1 − s)·n pseudo-rows.
For D larger than a task's rows (512-d features, two classes a task) any
s > 0 keeps Σ invertible.

The default is the oracle approximating shrinkage (OAS) of Chen, Wiesel,
Eldar and Hero (2010) of the correlation matrix, towards the diagonal of
S/n, Σ = (1 − s)·S/n + s·diag(S/n), s a closed form in the traces of the
correlation and of its square (:func:`oas_shrinkage`): it uses every row,
holds none out, and depends on the sums only, so it adds exactly task by
task. Scoring needs Σ only through Σ⁻¹(x − μ) and log det Σ, so the fit
is one Cholesky factorisation of Σ (D³/3 flops), on the host or a JAX
device (``linalg``); the spectrum serves where it is needed: as an
option, one eigendecomposition of S/n gives Σ(s) for every s at once, so
the exact held-out log-likelihood of a whole grid of s costs one D³
factorisation (:func:`heldout_log_likelihood`), and a Σ that may be
singular (s = 0 with fewer rows than features) has its eigenvalues raised
to a floor.
"""

from typing import NamedTuple

import numpy as np
import scipy.linalg

from . import linalg as host_linalg
from .backend import backend_of, get_backend
from .moments import gram

__all__ = ["FALLBACK_SHRINKAGE", "GaussianFit", "SHRINKAGE_GRID", "fit_gaussian",
           "heldout_log_likelihood", "component_log_likelihoods", "oas_coefficient",
           "oas_shrinkage", "shrunk_covariance", "squared_distances"]

#: The values of s that ``shrinkage="heldout"`` chooses among.
SHRINKAGE_GRID = (1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)

#: The s of ``shrinkage="heldout"`` when nothing could be scored (no row held out).
FALLBACK_SHRINKAGE = 0.01

# Eigenvalues of Σ(s) below this fraction of ν are raised to it: s = 0 with
# fewer rows than features is singular, and its inverse would be noise.
_EIGENVALUE_FLOOR = 1e-10
_LOG_2PI = np.log(2 * np.pi)


class GaussianFit(NamedTuple):
    """Plug-in Gaussian components, ready to score inputs.

    Attributes
    ----------
    keys : tuple, length n_components
    counts : ndarray of shape (n_components,)
        n_g, each component's weight of rows.
    log_priors : ndarray of shape (n_components,)
        log π_g, π_g = n_g / n.
    means : ndarray of shape (n_components, n_features)
    center : ndarray of shape (n_features,)
        The mean of all rows; inputs are centred on it before scoring, so
        that features with a large mean lose no precision.
    factors : ndarray of shape (n_features, n_features) or \
            (n_components, n_features, n_features)
        Of Σ (shared) or of each Σ_g: its lower Cholesky factor L
        (Σ = LLᵀ) where ``triangular``, else the whitening
        V diag(λ)^(−1/2) of its floored spectrum (Σ⁻¹ = WWᵀ).
    triangular : ndarray of bool of shape () or (n_components,)
        Which factors are Cholesky factors.
    log_dets : float or ndarray of shape (n_components,)
        log det Σ_g.
    """

    keys: tuple
    counts: np.ndarray
    log_priors: np.ndarray
    means: np.ndarray
    center: np.ndarray
    factors: np.ndarray
    triangular: np.ndarray
    log_dets: object

    @property
    def shared(self):
        return self.factors.ndim == 2

    def whiten(self, X, component=None):
        """z with ‖z‖² = xᵀΣ⁻¹x for each row x: L⁻¹x, or Wᵀx.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        component : int, optional
            Which Σ_g, when not shared.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        factor, triangular = ((self.factors, self.triangular) if component is None
                              else (self.factors[component], self.triangular[component]))
        if not isinstance(factor, np.ndarray):  # on the device: the rows go there
            backend = backend_of(factor)
            return (backend.triangular_solve(factor, X) if triangular
                    else backend.whiten_rows(X, factor))
        if triangular:
            return scipy.linalg.solve_triangular(factor, X.T, lower=True,
                                                 check_finite=False).T
        return X @ factor

    def covariances(self):
        """Σ, or each Σ_g: ndarray of shape (n_features, n_features) or (n_components, …)."""
        def one(factor, triangular):
            product = gram(factor.T)  # F Fᵀ
            return product if triangular else np.linalg.inv(product)
        if self.shared:
            return one(self.factors, self.triangular)
        return np.array([one(F, t) for F, t in zip(self.factors, self.triangular)])


def oas_coefficient(covariance, n):
    """The oracle approximating shrinkage of a covariance estimated from n rows.

    With a = ‖Σ‖²_F/p² and m = tr(Σ)/p,
    ρ = min(1, (a + m²) / ((n + 1)(a − m²/p))): scikit-learn's ``OAS``
    (its formula since 1.3), from the covariance alone; the shrunk
    covariance is (1 − ρ)Σ + ρ·m·I. One dimension (p = 1) gives ρ = 1,
    which changes nothing there.

    Parameters
    ----------
    covariance : ndarray of shape (p, p)
    n : float
        The rows (total weight) it was estimated from.

    Returns
    -------
    float in [0, 1]
    """
    p = len(covariance)
    return _oas(float(np.mean(covariance**2)), float(np.trace(covariance)) / p, p, n)


def _oas(a, m, p, n):
    """:func:`oas_coefficient` from the mean squared entry a and the mean diagonal m."""
    denominator = (n + 1) * (a - m**2 / p)
    if denominator <= 0:  # a multiple of the identity already (or nothing)
        return 1.0
    return float(min((a + m**2) / denominator, 1.0))


# Rows of R at a time in oas_shrinkage: one (256, D) buffer, reused, instead
# of D×D temporaries (at D = 10,000, each new one cost about a second on
# the two-core machine, most of it the kernel's first touch of its pages).
_OAS_ROWS = 256


def oas_shrinkage(scatter, n, rows=None, backend=None):
    """The oracle approximating shrinkage of the correlation of S/n, and its target.

    The covariance Ŝ = S/n is standardised, R = Ŝ_jk / (σ_j σ_k) with
    σ_j² = Ŝ_jj (σ_j = 1 where Ŝ_jj = 0, as scikit-learn's
    ``StandardScaler``), so that no feature's unit decides the shrinkage;
    with μ = tr(R)/D and a = ‖R‖²_F/D² (the mean squared entry),

        s = min(1, (a + μ²) / ((n + 1)(a − μ²/D))),

    scikit-learn's ``OAS`` of the standardised rows, from the scatter
    alone: Chen et al. (2010), eq. 23, as scikit-learn writes it. R is
    shrunk towards I, hence Ŝ towards its diagonal, as scikit-learn's
    ``LinearDiscriminantAnalysis(shrinkage="auto")`` does (with
    Ledoit–Wolf, which needs fourth moments of the rows that the sums do
    not keep). For the pooled within-group scatter W it is the OAS of the
    rows each centred on its group's mean, n their total weight.

    Parameters
    ----------
    scatter : ndarray of shape (n_features, n_features)
        S, a (weighted) scatter about the means.
    n : float
        The rows' total weight.
    rows : float, optional
        The number of rows, OAS's sample size (by default n): weights
        that rescale uniformly then change nothing.
    backend : Backend, optional
        Where S is (:func:`~.backend.get_backend`; the host's by default).

    Returns
    -------
    shrinkage : float in [0, 1]
        s; 1 when every entry of S is zero.
    target : ndarray of shape (n_features,)
        The diagonal of the covariance shrunk towards: Ŝ_jj, or where it is
        0 the mean of the positive ones (1 if none), so that a feature
        constant in training keeps a finite, data-scaled variance.
    """
    sample_size = n if rows is None else rows
    backend = get_backend("numpy") if backend is None else backend
    variances = np.clip(backend.diagonal(scatter) / n, 0, None)
    # R = Ŝ_jk/(σ_j σ_k) = S_jk·u_j·u_k, u_j = 1/(√n σ_j): its mean diagonal
    # and mean squared entry (on the host a few rows at a time).
    inverse_sigma = 1 / np.sqrt(n * np.where(variances > 0, variances, 1.0))
    d = len(variances)
    squares, trace = backend.correlation_sums(scatter, inverse_sigma, _OAS_ROWS)
    shrinkage = _oas(squares / d**2, trace / d, d, sample_size)
    positive = variances[variances > 0]
    fill = float(positive.mean()) if len(positive) else 1.0
    return shrinkage, np.where(variances > 0, variances, fill)


def _spectrum(scatter, n, eigh=host_linalg.eigh):
    """Eigenvalues and eigenvectors of S/n, and ν = tr(S/n)/D."""
    covariance = scatter / n
    values, vectors = eigh(covariance)
    nu = float(np.trace(covariance)) / len(covariance)
    return np.clip(values, 0, None), vectors, (nu if nu > 0 else 1.0)


def _shrunk(values, nu, s):
    return np.maximum((1 - s) * values + s * nu, _EIGENVALUE_FLOOR * nu)


def shrunk_covariance(S, n, shrinkage, target, backend=None):
    """Σ(s) = (1 − s)·S/n + s·diag(target), in one new D×D array.

    Parameters
    ----------
    S : ndarray of shape (n_features, n_features)
        A scatter.
    n : float
        Its rows' total weight.
    shrinkage : float in [0, 1]
    target : ndarray of shape (n_features,)
    backend : Backend, optional
        Where S is (the host's by default); Σ(s) is made there.

    Returns
    -------
    ndarray of shape (n_features, n_features)
    """
    return (get_backend("numpy") if backend is None else backend).shrunk(S, n, shrinkage, target)


def _factor(S, n, shrinkage, target, floor, backend):
    """Σ(s)'s factor, whether it is triangular, and log det Σ (see :class:`GaussianFit`).

    Cholesky when every eigenvalue is provably at least ``floor`` (the
    shrinkage's part alone, s·min(target), is): the floor would change
    nothing. Otherwise, or where Σ is not numerically positive definite,
    the spectrum with its eigenvalues raised to ``floor``.
    """
    linalg = backend.linalg
    if shrinkage * float(target.min()) >= floor:
        try:
            # Σ is this function's own: factored in its memory, no copy.
            L = linalg.cholesky(shrunk_covariance(S, n, shrinkage, target, backend),
                                overwrite=True)
            return L, True, backend.log_det_of_factor(L)
        except np.linalg.LinAlgError:
            pass
    values, vectors = linalg.eigh(shrunk_covariance(S, n, shrinkage, target, backend))
    values = np.maximum(values, floor)
    return backend.scale_columns(vectors, 1 / np.sqrt(values)), False, float(np.log(values).sum())


def fit_gaussian(moments, shrinkage, shared=True, target=None, backend=None):
    """The components of ``moments`` with covariance Σ(shrinkage).

    One Cholesky factorisation of Σ (or of each Σ_g); the spectrum, with
    its eigenvalues raised to ``_EIGENVALUE_FLOOR`` of the target's mean,
    where that floor could matter (s·min(target) below it: s = 0, or a
    target spanning ten decades).

    Parameters
    ----------
    moments : GroupMoments
        One group per component; ``group_scatter`` is needed when not
        ``shared``.
    shrinkage : float in [0, 1]
    shared : bool, default=True
    target : ndarray of shape (n_features,), optional
        The diagonal covariance shrunk towards, Σ(s) = (1 − s)·S/n +
        s·diag(target) (per component, S and n its own, when not
        ``shared``); by default ν·I, ν = tr(S/n)/D of the pooled scatter.
    backend : Backend, optional
        Where the D×D factorisations run (:func:`~.backend.get_backend`;
        the host's by default); the factors stay there.

    Returns
    -------
    GaussianFit
    """
    backend = get_backend("numpy") if backend is None else backend
    if target is None:
        nu = backend.trace(moments.scatter) / moments.total / moments.n_features
        target = np.full(moments.n_features, nu if nu > 0 else 1.0)
    target = np.asarray(target, dtype=np.float64)
    floor = _EIGENVALUE_FLOOR * float(target.mean())
    pairs = ([(moments.scatter, moments.total)] if shared
             else list(zip(moments.group_scatter, moments.counts)))
    factors, triangular, log_dets = [], [], []
    for S, n in pairs:
        factor, is_triangular, log_det = _factor(S, n, shrinkage, target, floor, backend)
        factors.append(factor)
        triangular.append(is_triangular)
        log_dets.append(log_det)
    d = moments.n_features
    factors = factors[0] if shared else backend.stack(factors, (-1, d, d))
    triangular, log_dets = np.array(triangular), np.array(log_dets)
    if shared:
        triangular, log_dets = triangular[0], float(log_dets[0])
    center = moments.counts @ moments.means / moments.total
    return GaussianFit(moments.keys, moments.counts, np.log(moments.counts / moments.total),
                       moments.means, center, factors, triangular, log_dets)


def component_log_likelihoods(fit, X):
    """log π_g + log N(x; μ_g, Σ_g) for every row and component.

    Parameters
    ----------
    fit : GaussianFit
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_components)
    """
    d = fit.means.shape[1]
    return fit.log_priors - 0.5 * (squared_distances(fit, X) + fit.log_dets + d * _LOG_2PI)


def squared_distances(fit, X):
    """(x − μ_g)ᵀ Σ_g⁻¹ (x − μ_g) for every row and component.

    Parameters
    ----------
    fit : GaussianFit
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_components)
    """
    X = np.asarray(X, dtype=np.float64) - fit.center
    means = fit.means - fit.center
    if fit.shared:
        # x and μ_g whitened once each (a triangular solve), then one GEMM,
        # where the factor is.
        return backend_of(fit.factors).squared_distances(fit.factors, fit.triangular, X, means)
    out = np.empty((len(X), len(means)))
    for g in range(len(means)):
        out[:, g] = (fit.whiten(X - means[g], g) ** 2).sum(1)
    return out


def _heldout_terms(train, heldout, grid, nu=None, eigh=host_linalg.eigh):
    """Held-out rows' summed log-likelihood under one covariance, and their count.

    Each held-out group is scored about its training group's mean, or
    about its own mean (one degree of freedom less) where it has none;
    Σ(s) = (1 − s)·S/n + s·ν·I of ``train``'s pooled scatter, ν its own
    unless given.
    """
    grid = np.asarray(grid, dtype=np.float64)
    d = train.n_features
    index = {key: i for i, key in enumerate(train.keys)}
    matched = [(j, index[key]) for j, key in enumerate(heldout.keys) if key in index]
    values, vectors, own_nu = _spectrum(train.scatter, train.total, eigh)
    nu = own_nu if nu is None else nu
    A = heldout.scatter.copy()
    for j, i in matched:
        delta = heldout.means[j] - train.means[i]
        A += heldout.counts[j] * np.outer(delta, delta)
    rows = heldout.total - (len(heldout.keys) - len(matched))
    a = np.einsum("ij,ij->j", vectors, A @ vectors)  # diag(VᵀAV)
    e = np.array([_shrunk(values, nu, s) for s in grid])
    return -0.5 * (rows * (d * _LOG_2PI + np.log(e).sum(1)) + (a / e).sum(1)), rows


def heldout_log_likelihood(train, heldout, grid, shared=True, linalg=host_linalg):
    """The exact mean log-likelihood of held-out rows, for each shrinkage.

    Each held-out row is scored by its own component's Gaussian fitted on
    the training rows. Held-out rows of a component with no training rows
    are scored around their own mean (their spread still measures Σ;
    their count loses one degree of freedom) when the covariance is shared,
    and left out when each component has its own.

    Parameters
    ----------
    train, heldout : GroupMoments
        With the same kind of keys; ``group_scatter`` in both when not
        ``shared``.
    grid : sequence of float
        Shrinkage values s.
    shared : bool, default=True
    linalg : module, default=:mod:`.linalg`
        Where the eigendecompositions run (:mod:`.solve_jax` for JAX's device).

    Returns
    -------
    ndarray of shape (len(grid),)
        Mean held-out log-likelihood per row (higher is better); NaN
        when no held-out row can be scored.
    """
    grid = np.asarray(grid, dtype=np.float64)
    d = train.n_features
    index = {key: i for i, key in enumerate(train.keys)}
    matched = [(j, index[key]) for j, key in enumerate(heldout.keys) if key in index]
    if shared:
        total, rows = _heldout_terms(train, heldout, grid, eigh=linalg.eigh)
        return total / rows if rows > 0 else np.full(len(grid), np.nan)
    nu = float(np.trace(train.scatter)) / train.total / d or 1.0
    total, rows = np.zeros(len(grid)), 0.0
    for j, i in matched:
        values, vectors = _spectrum(train.group_scatter[i], train.counts[i], linalg.eigh)[:2]
        delta = heldout.means[j] - train.means[i]
        A = heldout.group_scatter[j] + heldout.counts[j] * np.outer(delta, delta)
        a = np.einsum("ij,ij->j", vectors, A @ vectors)
        e = np.array([_shrunk(values, nu, s) for s in grid])
        m = heldout.counts[j]
        total += -0.5 * (m * (d * _LOG_2PI + np.log(e).sum(1)) + (a / e).sum(1))
        rows += m
    return total / rows if rows > 0 else np.full(len(grid), np.nan)
