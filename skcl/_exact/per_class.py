"""One covariance per class (``covariance="per_class"``), from one scatter a class.

The quadratic model gives class c its own covariance Σ_c: the scatter of
its rows about their own component's mean, over their weight n_c, shrunk.
Its sums are kept per class, not per (task, class) group:

    W_c = Σ_{g∈c} W_g,

the scatter of the class's rows about their (task, class) group's mean:
one D×D a class however many calls, where one per group was one per call
and class (100 calls of 10 classes at D = 784: 4.9 GB, issue 50). A
component (``components``) is a union of a class's groups, so the scatter
about the components' means follows from W_c and the groups' weights and
means (:func:`class_parts`, :func:`.moments.coarsen` adds the spread of
the groups about their component): the components a class keeps apart
share its covariance, as a domain's components share the domain's under
``covariance="per_domain"``.

W_c changes as the pooled scatter does, restricted to the class's
groups: a task's W_c is added (:func:`combine`, which also adds the shift
between the means of a group two merged models share), rows forgotten are
taken out with :func:`.forgetting.downdate`'s checks (:func:`take_out`),
and decay scales it.
"""

from typing import NamedTuple

import numpy as np

from .domains import DomainFit
from .forgetting import downdate
from .gaussian import _heldout_terms, fit_gaussian
from .moments import GroupMoments, coarsen, merge

__all__ = ["ClassScatters", "class_parts", "combine", "empty_class_scatters",
           "fit_per_class", "heldout_per_class", "of_groups", "select", "take_out"]


class ClassScatters(NamedTuple):
    """W_c of each class with rows.

    Attributes
    ----------
    labels : tuple
        The classes, in the order of ``scatters``.
    scatters : ndarray of shape (n_labels, n_features, n_features)
        W_c = Σ_{g∈c} W_g, the scatter of the class's rows about their
        (task, class) group's mean.
    """

    labels: tuple
    scatters: np.ndarray

    def scaled(self, factor):
        """The same rows with every weight multiplied by ``factor``."""
        return self if factor == 1 else self._replace(scatters=self.scatters * factor)


def empty_class_scatters(n_features):
    """W_c of no rows."""
    d = int(n_features)
    return ClassScatters((), np.zeros((0, d, d)))


def of_groups(moments):
    """W_c from moments that keep each group's own scatter (a task's).

    Parameters
    ----------
    moments : GroupMoments
        With ``group_scatter``.

    Returns
    -------
    ClassScatters
    """
    labels = tuple(dict.fromkeys(moments.labels))
    position = {label: i for i, label in enumerate(labels)}
    d = moments.n_features
    scatters = np.zeros((len(labels), d, d))
    for g, label in enumerate(moments.labels):
        scatters[position[label]] += moments.group_scatter[g]
    return ClassScatters(labels, scatters)


def _restricted(moments, scatters, label):
    """The groups of class ``label``, W_c their pooled scatter (none kept per group)."""
    take = [g for g, own in enumerate(moments.labels) if own == label]
    d = moments.n_features
    W = (scatters.scatters[scatters.labels.index(label)] if label in scatters.labels
         else np.zeros((d, d)))
    return GroupMoments(tuple(moments.keys[g] for g in take), moments.counts[take],
                        moments.means[take].reshape(-1, d), W, None)


def _stack(labels, parts, d):
    return ClassScatters(tuple(labels), np.array([p.scatter for p in parts]).reshape(-1, d, d))


def combine(a, a_scatters, b, b_scatters):
    """W_c of the union of two disjoint sets of rows.

    Parameters
    ----------
    a, b : GroupMoments
        The two sets' moments, keyed by (task, class).
    a_scatters, b_scatters : ClassScatters
        Their W_c.

    Returns
    -------
    ClassScatters
        Each class's groups merged (:func:`.moments.merge`): a group both
        hold adds n_a n_b / (n_a + n_b) δδᵀ, the shift between its means.
    """
    labels = list(dict.fromkeys((*a_scatters.labels, *b_scatters.labels)))
    if set(a.keys).isdisjoint(b.keys):  # a new call's groups: the scatters add
        d = a.n_features
        scatters = np.zeros((len(labels), d, d))
        for sums in (a_scatters, b_scatters):
            scatters[[labels.index(label) for label in sums.labels]] += sums.scatters
        return ClassScatters(tuple(labels), scatters)
    parts = [merge(_restricted(a, a_scatters, label), _restricted(b, b_scatters, label))
             for label in labels]
    return _stack(labels, parts, a.n_features)


def take_out(learned, scatters, removed, removed_scatters):
    """W_c of the rows of ``learned`` that are not rows of ``removed``.

    Parameters
    ----------
    learned, removed : GroupMoments
        Keyed by (task, class); every group of ``removed`` one of ``learned``.
    scatters, removed_scatters : ClassScatters
        Their W_c.

    Returns
    -------
    ClassScatters
        The classes with rows left.

    Raises
    ------
    ForgettingError
        As :func:`.forgetting.downdate`: a class's scatter left with a
        negative variance, among others.
    """
    labels, parts = [], []
    for label in scatters.labels:
        part = downdate(_restricted(learned, scatters, label),
                        _restricted(removed, removed_scatters, label))
        if part.keys:
            labels.append(label)
            parts.append(part)
    return _stack(labels, parts, learned.n_features)


def select(scatters, chosen):
    """W_c of the classes ``chosen(label)`` is true of."""
    take = [i for i, label in enumerate(scatters.labels) if chosen(label)]
    return ClassScatters(tuple(scatters.labels[i] for i in take), scatters.scatters[take])


def class_parts(moments, scatters, component_key):
    """Each class's components, their pooled scatter the class's about their own means.

    Parameters
    ----------
    moments : GroupMoments
        Keyed by (task, class).
    scatters : ClassScatters
        Their W_c.
    component_key : callable
        (task, class) key → its component's key.

    Returns
    -------
    list of GroupMoments
        One per class with rows: its components, with ``scatter`` the
        scatter of its rows about their component's mean.
    """
    return [coarsen(_restricted(moments, scatters, label), component_key)
            for label in dict.fromkeys(moments.labels)]


def fit_per_class(components, parts, shrinkage, target=None, backend=None):
    """The components, each with its class's covariance Σ_c(s).

    Parameters
    ----------
    components : GroupMoments
        Every component (their order is the columns'), with the pooled
        scatter (which sets ν = tr(W/n)/D, the target when ``target`` is None).
    parts : list of GroupMoments
        :func:`class_parts`.
    shrinkage : float in [0, 1]
    target : ndarray of shape (n_features,), optional
        The diagonal shrunk towards, for every class.
    backend : Backend, optional
        Where the factorisations run (:func:`~.backend.get_backend`; the
        host's by default).

    Returns
    -------
    fit : GaussianFit or None
        One factor per component where every class is one component
        (scikit-learn's QDA); else None.
    domains : DomainFit or None
        Where a class holds several components: one fit per class, its
        components sharing its covariance (``domains`` are the classes).
    """
    options = {"backend": backend}
    if target is None:
        nu = float(np.trace(components.scatter)) / components.total / components.n_features
        target = np.full(components.n_features, nu if nu > 0 else 1.0)
    if all(len(part.keys) == 1 for part in parts):
        own = {part.keys[0]: part.scatter for part in parts}
        per_component = np.array([own[key] for key in components.keys])
        fit = fit_gaussian(components._replace(group_scatter=per_component), shrinkage, False,
                           target, **options)
        return fit, None
    position = {key: i for i, key in enumerate(components.keys)}
    log_total = np.log(components.total)
    fits, columns, labels = [], [], []
    for part in parts:
        one = fit_gaussian(part, shrinkage, True, target, **options)
        fits.append(one._replace(log_priors=np.log(part.counts) - log_total))
        columns.append(np.array([position[key] for key in part.keys], dtype=np.intp))
        labels.append(part.labels[0])
    return None, DomainFit(tuple(fits), tuple(columns), (float(shrinkage),) * len(fits),
                           tuple(labels), len(components.keys))


def heldout_per_class(train_parts, held_parts, grid, nu, linalg=None):
    """The exact mean log-likelihood of held-out rows under each class's Σ_c(s).

    Each held-out row is scored by its component's mean fitted on the
    training rows and its class's covariance; held-out rows of a
    component with no training rows, around their own mean (as
    :func:`.gaussian.heldout_log_likelihood` with a shared covariance,
    within each class).

    Parameters
    ----------
    train_parts, held_parts : list of GroupMoments
        :func:`class_parts` of the rows learned from and held out.
    grid : sequence of float
    nu : float
        ν = tr(W/n)/D of the training rows' pooled scatter: the target
        ν·I of every class.
    linalg : module, optional

    Returns
    -------
    ndarray of shape (len(grid),)
        NaN where no held-out row can be scored.
    """
    options = {} if linalg is None else {"eigh": linalg.eigh}
    train = {part.labels[0]: part for part in train_parts}
    total, rows = np.zeros(len(grid)), 0.0
    for held in held_parts:
        label = held.labels[0]
        if label in train:
            terms, count = _heldout_terms(train[label], held, grid, nu, **options)
            total, rows = total + terms, rows + count
    return total / rows if rows > 0 else np.full(len(grid), np.nan)
