"""A covariance per domain: the Gaussian's components grouped by the task run that opened them.

With ``components`` keeping a class's runs of tasks apart
(:mod:`.components`), a component is keyed (r, c): the first task r of
its run, and its class c; a class kept whole is (None, c). The shared
covariance pools the rows about their components' means over every task.
When the tasks are unrelated domains (Permuted MNIST: random features of
a permuted image are other random features, the permutation composing
with the projection) that pools ten different feature distributions,
and the one covariance fits none of them: one domain alone scores 94.95 %
where ten score 92.01 % (issue 47, ``benchmarks/accuracy/bench_exact_domains.py``).

Here the components opened by run r share a covariance of their own,

    Σ_r = OAS-shrunk W_r / n_r,

W_r the scatter of the rows of the tasks T_r behind domain r's
components about their components' means (the tasks' own pooled
within-(task, class) scatters S_τ, kept per task, plus the spread of the
(task, class) means about their components'), n_r those rows. The
components kept whole across tasks, (None, c), keep the pooled covariance
of all rows, so with no component kept apart (class-incremental
sequences, a stream of one distribution) this is the shared model
exactly. At test no task id is needed: each component scores x under its
domain's Gaussian with its global prior π_g = n_g / n, and a class sums
its components, log p(c, x) = log Σ_{g∈c} π_g N(x; μ_g, Σ_{r(g)}): the
mixture over domains, whose largest term is the MAP pick of the domain by
likelihood. Everything is a function of sums, so it adds exactly task by
task.

That mixture compares a row's likelihood under different domains'
covariances, whose log-determinants differ by hundreds of nats at
D = 2,000 when the domains' images differ in texture (Rotated MNIST: 0°
and 90° are pixel permutations, the other angles interpolated and
smoother). Related domains then claim each other's rows, and a digit is
scored under the wrong domain's classes. ``gated_log_likelihoods`` weighs
the domains under the shared covariance instead, where no log-determinant
differs, and the classes within a domain under its own, where its
log-determinant cancels:

    p(g, x) = p̄(r, x) · p_r(g | x),   p̄(r, x) = Σ_{h∈r} π_h N(x; μ_h, Σ),
    p_r(g | x) = π_g N(x; μ_g, Σ_r) / Σ_{h∈r} π_h N(x; μ_h, Σ_r),

a joint density (summed over g it is the shared model's p̄(x)).
"""

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from .gaussian import component_log_likelihoods, fit_gaussian, oas_shrinkage
from .moments import GroupMoments, coarsen

__all__ = ["DomainFit", "domain_log_likelihoods", "fit_domains", "gated_log_likelihoods"]


class DomainFit(NamedTuple):
    """One Gaussian fit per domain, over the components it opened.

    Attributes
    ----------
    fits : tuple of GaussianFit
        Each with its domain's components only, their priors global
        (log n_g / n) and the domain's covariance.
    columns : tuple of ndarray of int
        Each fit's components' positions among all components.
    shrinkages : tuple of float
        Each domain's s.
    domains : tuple
        Each fit's domain: a run's first task, or None for the classes kept
        whole.
    n_components : int
    """

    fits: tuple
    columns: tuple
    shrinkages: tuple
    domains: tuple
    n_components: int


def _domain_moments(moments, task_scatters, tasks, component_key, pooled, pooling):
    """The (task, class) groups of ``tasks`` with their tasks' scatter, coarsened to components.

    With ``pooling`` λ > 0 the scatter is (1 − λ)·W_r + λ·(n_r/n)·W, W the
    ``pooled`` scatter of every row, so that Σ_r = W_r'/n_r is the
    domain's covariance moved a share λ towards the pooled one.
    """
    rows = [g for g, key in enumerate(moments.keys) if key[0] in tasks]
    scatter = np.sum([task_scatters[t] for t in sorted(tasks)], axis=0)
    part = coarsen(GroupMoments(tuple(moments.keys[g] for g in rows), moments.counts[rows],
                                moments.means[rows], scatter, None), component_key)
    if pooling > 0:
        mixed = part.scatter * (1 - pooling)
        mixed += pooled.scatter * (pooling * part.total / pooled.total)
        part = part._replace(scatter=mixed)
    return part


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
        (:func:`.gaussian.oas_shrinkage`); a float s: Σ(s) towards ν_r·I.
    backend : Backend, optional
        Where the factorisations run (:func:`~.backend.get_backend`; the
        host's by default).
    pooling : float in [0, 1], default=0.0
        λ: each domain's empirical covariance W_r/n_r is replaced by
        (1 − λ)·W_r/n_r + λ·W/n before its shrinkage (1: the pooled one
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
    owners = {}
    for key in moments.keys:
        owners.setdefault(component_key(key)[0], set()).add(key[0])
    fits, columns, shrinkages, domains = [], [], [], []
    for domain in sorted(owners, key=lambda r: (r is not None, r)):
        if domain is None:  # the classes kept whole: the pooled covariance of every row
            part = components
        else:
            part = _domain_moments(moments, task_scatters, owners[domain], component_key,
                                   components, pooling)
        s, target = shrinkage, None
        if s == "auto":
            s, target = oas_shrinkage(part.scatter, part.total, backend=backend)
        fit = fit_gaussian(part, float(s), True, target, backend)
        own = [i for i, key in enumerate(part.keys) if key[0] == domain]
        fits.append(fit._replace(
            keys=tuple(part.keys[i] for i in own), counts=part.counts[own],
            means=part.means[own], log_priors=np.log(part.counts[own]) - log_total))
        columns.append(np.array([position[part.keys[i]] for i in own], dtype=np.intp))
        shrinkages.append(float(s))
        domains.append(domain)
    return components, DomainFit(tuple(fits), tuple(columns), tuple(shrinkages),
                                 tuple(domains), len(components.keys))


def domain_log_likelihoods(fit, X, component_scores=None):
    """log π_g + log p(x | g) under each component's domain Gaussian.

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
    out = np.empty((len(X), fit.n_components))
    for one, columns, s in zip(fit.fits, fit.columns, fit.shrinkages):
        out[:, columns] = (component_log_likelihoods(one, X) if component_scores is None
                           else component_scores(one, s, X))
    return out


def gated_log_likelihoods(fit, own, shared):
    """log p̄(r, x) + log p_r(g | x): the domain weighed under the shared covariance.

    Parameters
    ----------
    fit : DomainFit
    own : ndarray of shape (n_samples, n_components)
        Each component's log π_g + log p(x | g) under its domain's
        covariance (:func:`domain_log_likelihoods`).
    shared : ndarray of shape (n_samples, n_components)
        The same under the shared covariance Σ (the components in the same
        order).

    Returns
    -------
    ndarray of shape (n_samples, n_components)
        Its logsumexp over a domain's components is the shared model's
        log p̄(r, x); within a domain it ranks the components as ``own``.
    """
    out = np.empty_like(own)
    for columns in fit.columns:
        within = own[:, columns]
        out[:, columns] = (logsumexp(shared[:, columns], axis=1, keepdims=True)
                           + within - logsumexp(within, axis=1, keepdims=True))
    return out
