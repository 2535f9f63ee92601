"""A covariance per domain: each task's own, over the Gaussian's components that it fed.

With ``components`` keeping a class's runs of tasks apart
(:mod:`.components`), a component is keyed (r, c): the first task r of
its run, and its class c; a class kept whole is (None, c). The shared
covariance pools the rows about their components' means over every task.
When the tasks are unrelated domains (Permuted MNIST: random features of
a permuted image are other random features, the permutation composing
with the projection) that pools ten different feature distributions,
and the one covariance fits none of them: one domain alone scores 94.95 %
where ten score 92.01 % (issue 47, ``benchmarks/accuracy/bench_exact_domains.py``).

Here each task τ (a ``partial_fit`` call) that holds a component kept
apart is a domain with a covariance of its own,

    Σ_τ = OAS-shrunk W_τ / n_τ,

W_τ the scatter of the task's rows about their components' means (its
pooled within-(task, class) scatter S_τ, kept per task, plus the spread
of its (task, class) means about their components'), n_τ its rows. A
component whose run spans several tasks is in each of their domains,
weighted by its rows there, π_{τ,g} = n_{τ,g} / n. A domain was once a
run's first task with the covariance of all its runs' tasks: where
``"auto"`` joins neighbouring rotations of a class into one run, that
covariance spans two angles and claimed the rows of both (ten
rotations, 10,000 rows a task, M = 2,000: 87.48 % under the domains'
own covariances, 91.24 % with a covariance per task). The components
kept whole across tasks, (None, c), keep the pooled covariance of all
rows, so with no component kept apart (class-incremental sequences, a
stream of one distribution) this is the shared model exactly. At test no
task id is needed: a class sums its components over the domains,
log p(c, x) = log Σ_τ Σ_{g∈c} π_{τ,g} N(x; μ_g, Σ_τ): the mixture over
domains, whose largest term is the MAP pick of the domain by likelihood.
Everything is a function of sums, so it adds exactly task by task.

That mixture compares a row's likelihood under different domains'
covariances, whose log-determinants differ by hundreds of nats at
D = 2,000 when the domains' images differ in texture (Rotated MNIST: 0°
and 90° are pixel permutations, the other angles interpolated and
smoother). Related domains then claim each other's rows, and a digit is
scored under the wrong domain's classes. ``gated_log_likelihoods`` weighs
the domains under the shared covariance instead, where no log-determinant
differs, and the classes within a domain under its own, where its
log-determinant cancels:

    p(g, x) = Σ_r p̄(r, x) · p_r(g | x),   p̄(r, x) = Σ_{h∈r} π_{r,h} N(x; μ_h, Σ),
    p_r(g | x) = π_{r,g} N(x; μ_g, Σ_r) / Σ_{h∈r} π_{r,h} N(x; μ_h, Σ_r),

a joint density (summed over g it is the shared model's p̄(x)).

The shared covariance ranks the domains as the shared model does, whose
domain is right for 69 % of ten rotations' test rows (2,000 a task,
10,000 training rows, M = 2,000, a component per (task, class)).
``volume_log_likelihoods`` weighs them under their own covariances'
shapes at one common volume instead: Σ_r rescaled to a_r·Σ_r, with
log det(a_r·Σ_r) = L̄ = Σ_r (n_r/n) log det Σ_r for every domain, so no
log-determinant differs between domains and each still has its own
correlations (78 % right there, and 92.42 % accuracy against 91.88 %
under the shared covariance's gate, 93.75 % with the task known).
Where no class is kept apart there is one domain, a = 1: the shared
model.
"""

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from .gaussian import component_log_likelihoods, fit_gaussian, oas_shrinkage
from .moments import GroupMoments, coarsen

__all__ = ["DomainFit", "domain_joint", "domain_log_likelihoods", "fit_domains",
           "gated_log_likelihoods", "volume_log_likelihoods"]

_LOG_2PI = np.log(2 * np.pi)


class DomainFit(NamedTuple):
    """One Gaussian fit per domain, over the components it holds.

    Attributes
    ----------
    fits : tuple of GaussianFit
        Each with its domain's components only, their priors global
        (log n_{r,g} / n: the component's rows in the domain) and the
        domain's covariance.
    columns : tuple of ndarray of int
        Each fit's components' positions among all components. A
        component whose run spans several tasks is in each of their
        domains.
    shrinkages : tuple of float
        Each domain's s.
    domains : tuple
        Each fit's domain: a task, or None for the classes kept whole.
    n_components : int
    """

    fits: tuple
    columns: tuple
    shrinkages: tuple
    domains: tuple
    n_components: int


def _task_moments(moments, scatter, task, component_key, components, pooling):
    """Task ``task``'s groups at their components' means, with the task's scatter.

    Each group is one component (a task holds one group a class); a
    component kept apart is scored at its mean over its run's tasks, so
    the group's spread about that mean joins the task's scatter S_τ. With
    ``pooling`` λ > 0 the scatter is (1 − λ)·W_τ + λ·(n_τ/n)·W, W the
    ``components``' scatter of every row, so that Σ_τ = W_τ'/n_τ is the
    task's covariance moved a share λ towards the pooled one.
    """
    rows = [g for g, key in enumerate(moments.keys) if key[0] == task]
    keys = tuple(component_key(moments.keys[g]) for g in rows)
    counts, means = moments.counts[rows], moments.means[rows]
    position = {key: i for i, key in enumerate(components.keys)}
    centres = np.array([components.means[position[key]] if key[0] is not None else mean
                        for key, mean in zip(keys, means)]).reshape(means.shape)
    shift = means - centres
    scatter = scatter + (shift.T * counts) @ shift
    if pooling > 0:
        scatter = scatter * (1 - pooling)
        scatter += components.scatter * (pooling * counts.sum() / components.total)
    return GroupMoments(keys, counts, centres, scatter, None)


def fit_domains(moments, task_scatters, component_key, shrinkage="auto", backend=None,
                pooling=0.0):
    """Each domain's components with the domain's own covariance.

    Parameters
    ----------
    moments : GroupMoments
        Keyed by (task, class): every row (learned and held out).
    task_scatters : sequence of ndarray of shape (n_features, n_features)
        S_τ: task τ's scatter pooled within its (task, class) groups.
    component_key : callable
        (task, class) key → its component's key, (r, c) or (None, c).
    shrinkage : "auto" or float in [0, 1], default="auto"
        "auto": each domain's OAS towards its diagonal
        (:func:`.gaussian.oas_shrinkage`); a float s: Σ(s) towards ν_τ·I.
    backend : Backend, optional
        Where the factorisations run (:func:`~.backend.get_backend`; the
        host's by default).
    pooling : float in [0, 1], default=0.0
        λ: each domain's empirical covariance W_τ/n_τ is replaced by
        (1 − λ)·W_τ/n_τ + λ·W/n before its shrinkage (1: the pooled one
        for every domain, the shared model).

    Returns
    -------
    components : GroupMoments
        ``moments`` coarsened to the components (their order is the
        columns').
    fit : DomainFit
    """
    components = coarsen(moments, component_key)
    position = {key: i for i, key in enumerate(components.keys)}
    log_total = np.log(components.total)
    apart = {key[0] for key in moments.keys if component_key(key)[0] is not None}
    whole = any(component_key(key)[0] is None for key in moments.keys)
    fits, columns, shrinkages, domains = [], [], [], []
    for domain in [None] * whole + sorted(apart):
        if domain is None:  # the classes kept whole: the pooled covariance of every row
            part = components
        else:
            part = _task_moments(moments, task_scatters[domain], domain, component_key,
                                 components, pooling)
        s, target = shrinkage, None
        if s == "auto":
            s, target = oas_shrinkage(part.scatter, part.total, backend=backend)
        fit = fit_gaussian(part, float(s), True, target, backend)
        own = [i for i, key in enumerate(part.keys) if (key[0] is None) == (domain is None)]
        fits.append(fit._replace(
            keys=tuple(part.keys[i] for i in own), counts=part.counts[own],
            means=part.means[own], log_priors=np.log(part.counts[own]) - log_total))
        columns.append(np.array([position[part.keys[i]] for i in own], dtype=np.intp))
        shrinkages.append(float(s))
        domains.append(domain)
    return components, DomainFit(tuple(fits), tuple(columns), tuple(shrinkages),
                                 tuple(domains), len(components.keys))


def _blocks(fit, X, component_scores=None):
    """Each domain's log π_{r,g} + log p(x | g, r), shape (n_samples, its components)."""
    return [component_log_likelihoods(one, X) if component_scores is None
            else component_scores(one, s, X) for one, s in zip(fit.fits, fit.shrinkages)]


def _summed(fit, blocks):
    """The domains' blocks as columns of all components, a component in several summed."""
    out = np.full((len(blocks[0]), fit.n_components), -np.inf)
    for columns, block in zip(fit.columns, blocks):
        out[:, columns] = np.logaddexp(out[:, columns], block)
    return out


def domain_log_likelihoods(fit, X, component_scores=None):
    """log Σ_r π_{r,g} p(x | g, r): each component under its domains' Gaussians.

    Parameters
    ----------
    fit : DomainFit
    X : ndarray of shape (n_samples, n_features)
    component_scores : callable, optional
        (GaussianFit, shrinkage, X) → per-component log joint (the
        Student-t predictive); by default the plug-in,
        :func:`.gaussian.component_log_likelihoods`.

    Returns
    -------
    ndarray of shape (n_samples, n_components)
    """
    return _summed(fit, _blocks(fit, X, component_scores))


def _gated(fit, own, gate):
    """Σ_r p̃(r, x) · p_r(g | x), from each domain's blocks of within and gate scores."""
    return _summed(fit, [logsumexp(weigh, axis=1, keepdims=True) + within
                         - logsumexp(within, axis=1, keepdims=True)
                         for within, weigh in zip(own, gate)])


def gated_log_likelihoods(fit, own, shared):
    """log p̄(r, x) + log p_r(g | x): the domain weighed under the shared covariance.

    Parameters
    ----------
    fit : DomainFit
    own : list of ndarray of shape (n_samples, n_r)
        Each domain's components' log π_{r,g} + log p(x | g) under its
        covariance (the fit's order).
    shared : ndarray of shape (n_samples, n_components)
        Each component's log π_g + log p(x | g) under the shared
        covariance Σ, π_g = n_g / n.

    Returns
    -------
    ndarray of shape (n_samples, n_components)
        Its logsumexp over the components is the shared model's log p̄(x);
        within a domain it ranks the components as ``own``.
    """
    # Under Σ, domain r holds component g with its rows there: π_{r,g}, not π_g.
    log_priors = _summed(fit, [one.log_priors[None, :] for one in fit.fits])[0]
    gate = [shared[:, columns] - log_priors[columns] + one.log_priors
            for one, columns in zip(fit.fits, fit.columns)]
    return _gated(fit, own, gate)


def volume_log_likelihoods(fit, plugin):
    """log π_{r,g} + log N(x; μ_g, a_r·Σ_r): each domain's covariance at the common volume.

    a_r = exp((L̄ − L_r)/D) rescales Σ_r (log-determinant L_r) to the
    domains' mean log-determinant L̄ = Σ_r (n_r/n)·L_r, n_r the weight of
    domain r's components: a Gaussian mixture whose domains differ in
    their covariances' shapes, not in their volumes. Computed from the
    plug-in scores, whose squared distances m²_g = (x − μ_g)ᵀ Σ_r⁻¹ (x − μ_g)
    they hold: log π_{r,g} + log N(x; μ_g, a_r·Σ_r) =
    log π_{r,g} − ½(L̄ + D·log 2π) − ½·m²_g / a_r.

    Parameters
    ----------
    fit : DomainFit
    plugin : list of ndarray of shape (n_samples, n_r)
        Each domain's components' log π_{r,g} + log N(x; μ_g, Σ_r), the
        fit's order.

    Returns
    -------
    list of ndarray of shape (n_samples, n_r)

    Examples
    --------
    One domain keeps its covariance (a = 1), so its scores are unchanged:

    >>> import numpy as np
    >>> from skcl._exact.domains import DomainFit, volume_log_likelihoods
    >>> from skcl._exact.gaussian import fit_gaussian
    >>> from skcl._exact.moments import GroupMoments
    >>> moments = GroupMoments(((None, 0), (None, 1)), np.array([5.0, 5.0]),
    ...                        np.array([[0.0, 0.0], [1.0, 1.0]]), np.eye(2) * 10, None)
    >>> one = DomainFit((fit_gaussian(moments, 0.0),), (np.arange(2),), (0.0,), (None,), 2)
    >>> scores = np.array([[-3.0, -5.0]])
    >>> bool(np.allclose(volume_log_likelihoods(one, [scores])[0], scores))
    True
    """
    weights = np.array([one.counts.sum() for one in fit.fits])
    log_dets = np.array([float(np.ravel(one.log_dets)[0]) for one in fit.fits])
    mean_log_det = float(weights @ log_dets / weights.sum())
    out = []
    for one, block, log_det in zip(fit.fits, plugin, log_dets):
        d = one.means.shape[1]
        constant = d * _LOG_2PI
        distances = -2 * (block - one.log_priors) - log_det - constant
        out.append(one.log_priors - 0.5 * (mean_log_det + constant)
                   - 0.5 * distances * np.exp((log_det - mean_log_det) / d))
    return out


def domain_joint(fit, X, gate, shared_scores, component_scores=None):
    """Each component's log p(g, x), its domain weighed as ``gate`` says.

    Parameters
    ----------
    fit : DomainFit
    X : ndarray of shape (n_samples, n_features)
    gate : {"own", "shared", "volume"}
        "own": the mixture over domains, each under its own covariance
        (:func:`domain_log_likelihoods`); "shared": the domain under the
        shared covariance (:func:`gated_log_likelihoods`); "volume": under
        its own covariance rescaled to the common volume
        (:func:`volume_log_likelihoods`). Under the last two, the
        components within a domain are ranked under its own covariance.
    shared_scores : callable
        X → each component's log π_g + log p(x | g) under the shared
        covariance (read only when ``gate="shared"``).
    component_scores : callable, optional
        As in :func:`domain_log_likelihoods` (the plug-in by default); the
        volume gate weighs the domains with the plug-in.

    Returns
    -------
    ndarray of shape (n_samples, n_components)

    Examples
    --------
    >>> import numpy as np
    >>> from skcl._exact.domains import DomainFit, domain_joint
    >>> from skcl._exact.gaussian import component_log_likelihoods, fit_gaussian
    >>> from skcl._exact.moments import GroupMoments
    >>> moments = GroupMoments(((None, 0), (None, 1)), np.array([5.0, 5.0]),
    ...                        np.array([[0.0, 0.0], [1.0, 1.0]]), np.eye(2) * 10, None)
    >>> shared = fit_gaussian(moments, 0.0)
    >>> one = DomainFit((shared,), (np.arange(2),), (0.0,), (None,), 2)
    >>> X = np.array([[0.2, 0.1]])
    >>> scores = component_log_likelihoods(shared, X)
    >>> bool(np.allclose(domain_joint(one, X, "volume", None), scores))
    True
    """
    own = _blocks(fit, X, component_scores)
    if gate == "own":
        return _summed(fit, own)
    if gate == "shared":
        return gated_log_likelihoods(fit, own, shared_scores(X))
    plugin = own if component_scores is None else _blocks(fit, X)
    return _gated(fit, own, volume_log_likelihoods(fit, plugin))
