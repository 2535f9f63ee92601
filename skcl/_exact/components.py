"""Which classes the Gaussian keeps one component per task for: a score test against the BIC.

A class seen in k_c > 1 tasks (``partial_fit`` calls) is either one
Gaussian, or one per (task, class) pair, when the tasks draw it from
different inputs (a domain-incremental label: "even" is 0 in one task, 2
in the next). The choice is made from the sums alone, so the model after
a sequence stays a function of its moments.

The statistic is Rao's score test of the (task, class) means, evaluated
at the model with one component per class: the between-task scatter of
the class, B_c = Σ_{g∈c} n_g δ_g δ_gᵀ (δ_g the distance of task group g's
mean from its class mean), in the metric of the covariance of the rows
about their class means, S/n = (W + B)/n (W the pooled scatter within the
(task, class) groups, B = Σ_c B_c):

    T_c = n · tr(S⁻¹ B_c)        (n times Pillai's trace of the class).

It is compared with the Bayesian information criterion's price of the
(k_c − 1)·D extra means, ½ log n each:

    keep the class's tasks apart  ⟺  T_c > (k_c − 1) · D · log n.

Chunks of one distribution give T_c ≈ (k_c − 1)·D, far below. The metric
is that of the simpler model, not the within-task scatter W alone
(Hotelling's T_c = n · tr(W⁻¹ B_c), the linearisation of the likelihood
ratio): a class drawn in many small calls from a drifting source has
means that do differ, but each is estimated from a few rows, and W of a
few rows a call is nearly singular (an image's border pixel is constant
within a call, and not across calls), so Hotelling's statistic grows
without bound and kept every call apart, one component of six rows per
call and class. The score statistic cannot: B_c ⪯ B ⪯ S, so each
direction of the whitened B_c counts at most 1, and

    Σ_c T_c = n · tr(S⁻¹ B) ≤ n · D.

Each class kept apart pays (k_c − 1)·D·log n of it, hence the bound on
growth: the components number at most C + n / log n for C classes and n
rows, whatever the number of calls (each extra component is supported by
log n rows, on average), and a stream whose calls bring a class a few
rows each keeps it whole. On a domain-incremental sequence, where a
task's class mean is far from the class mean in the class's own spread,
T_c is still several times the threshold.
"""

import numpy as np

from .backend import get_backend
from .gaussian import oas_shrinkage, shrunk_covariance
from .moments import by_class, class_group, class_of, coarsen

__all__ = ["between_task_scores", "component_keys", "runs"]

# A ridge ε·(tr Σ/D)·I keeps each Cholesky defined where a feature is
# constant over the rows (Σ singular there, and every mean equal): ε·I ⪰ 0
# only lowers each direction's share, so the bound Σ_c T_c ≤ n·D holds.
_RIDGE = 1e-10


def _whiten(make_covariance, backend):
    """x ↦ L⁻¹x for Σ + ε·I = LLᵀ: then δᵀ(Σ + ε·I)⁻¹δ = ‖L⁻¹δ‖².

    ``make_covariance()`` builds Σ afresh, where ``backend`` computes: the
    ridge is added and the factor computed in its memory (no D×D copy on
    the host). Where Σ is rounding alone (rows identical within every
    group: its entries 1e-37, some negative) the ridge cannot make it
    positive definite; then Σ is built again and whitened by its spectrum,
    each eigenvalue raised to the ridge: x ↦ diag(λ)^(−1/2) Vᵀx. The
    whitened rows (G×D) are the host's.
    """
    covariance = make_covariance()
    d = covariance.shape[0]
    scale = backend.trace(covariance) / d
    ridge = _RIDGE * (scale if scale > 0 else 1.0)
    covariance = backend.add_diagonal(covariance, ridge)
    try:
        lower = backend.linalg.cholesky(covariance, overwrite=True)
    except np.linalg.LinAlgError:
        del covariance
        values, vectors = backend.linalg.eigh(make_covariance())
        factor = backend.scale_columns(vectors, 1 / np.sqrt(np.maximum(values + ridge, ridge)))
        return lambda X: backend.whiten_rows(X, factor)
    return lambda X: backend.triangular_solve(lower, X)


def _per_class(keys):
    """class → its groups' indices, in the order of their tasks."""
    per_label = {}
    for g in sorted(range(len(keys)), key=lambda g: keys[g][0]):
        per_label.setdefault(class_of(keys[g]), []).append(g)
    return per_label


def runs(moments, rows=None, backend=None):
    """Each class's tasks cut into runs of consecutive tasks the data cannot tell apart.

    Walking a class's tasks in order, a task joins the run before it
    unless their means differ by more than the BIC's price of one more
    mean, n_r n_g / (n_r + n_g) · δᵀ Σ_w⁻¹ δ > D · log n (δ the task's
    mean less the run's, Σ_w the OAS-shrunk pooled covariance within the
    (task, class) groups, :func:`.gaussian.oas_shrinkage`): the calls that
    cut one domain into pieces join, a new domain starts a run.

    A run is kept once its rows reach log n (the support the bound on
    components gives each extra one); until then it is tentative: a later
    task that agrees with the last kept run rejoins it, and takes the
    tentative run's tasks back with it. One atypical row (a pixel lit in 4
    of 1,797 digits sits 32 standard deviations out in Σ_w) cannot cut an
    i.i.d. stream of small calls in three; a new domain's calls agree with
    each other and reach log n rows.

    Parameters
    ----------
    moments : GroupMoments
        Keyed by (task, class).
    rows : float, optional
        The rows the moments are of (by default their total weight): the
        test counts rows, not weights, so that weights that rescale
        uniformly change nothing.
    backend : Backend, optional
        Where the scatter is (:func:`~.backend.get_backend`; the host's by
        default): the D×D steps run there.

    Returns
    -------
    dict
        (task, class) key → (first task of its run, class).
    """
    n, d = moments.total, moments.n_features
    backend = get_backend("numpy") if backend is None else backend
    counts = _in_rows(moments, rows)
    per_class = _per_class(moments.keys)
    Z = moments.means  # never read where no class has two groups: each starts its run
    if any(len(groups) > 1 for groups in per_class.values()):
        # The whitening (OAS, Σ and its Cholesky factor: D³) only where
        # there are means to compare; a class-incremental stream has none.
        shrinkage, target = oas_shrinkage(moments.scatter, n, rows, backend)
        Z = _whiten(lambda: shrunk_covariance(moments.scatter, n, shrinkage, target, backend),
                    backend)(moments.means)
    log_n = np.log(max(counts.sum(), np.e))
    price = d * log_n
    out = {}
    for label, groups in per_class.items():
        found, kept = [], 0  # runs [first task, rows, whitened mean, groups]; the last kept
        for g in groups:
            n_g = counts[g]
            if found and _agree(found[-1], n_g, Z[g], price):
                _join(found[-1], g, n_g, Z[g])
            elif kept < len(found) - 1 and _agree(found[kept], n_g, Z[g], price):
                for run in found[kept + 1:]:  # the tentative runs go back to the kept one
                    for h in run[3]:
                        _join(found[kept], h, counts[h], Z[h])
                del found[kept + 1:]
                _join(found[kept], g, n_g, Z[g])
            else:
                found.append([moments.keys[g][0], n_g, Z[g], [g]])
            if found[-1][1] >= log_n:
                kept = len(found) - 1
        for run in found[kept + 1:]:  # tentative at the end: back to the kept one
            found[kept][3].extend(run[3])
        for first, _, _, members in found[:kept + 1]:
            out.update({moments.keys[h]: (first, label) for h in members})
    return out


def _in_rows(moments, rows):
    """Each group's weight as rows: rescaled so that they total ``rows`` (when given)."""
    return moments.counts if rows is None else moments.counts * (rows / moments.total)


def _agree(run, n_g, z, price):
    """Whether a task's whitened mean z, of n_g rows, joins the run by the BIC."""
    delta = z - run[2]
    return run[1] * n_g / (run[1] + n_g) * float(delta @ delta) <= price


def _join(run, g, n_g, z):
    """Add group g (n_g rows, whitened mean z) to the run, in place."""
    run[2] = run[2] + (z - run[2]) * (n_g / (run[1] + n_g))
    run[1] += n_g
    run[3].append(g)


def between_task_scores(moments, segment=None, rows=None, backend=None):
    """The score statistic of each class seen in more than one run, and its threshold.

    Parameters
    ----------
    moments : GroupMoments
        Keyed by (task, class).
    segment : dict, optional
        (task, class) key → its run's key; by default :func:`runs`.
    rows : float, optional
        The rows the moments are of (by default their total weight).
    backend : Backend, optional
        Where the scatter is (the host's by default).

    Returns
    -------
    dict
        class → (T_c, (k_c − 1)·D·log n), k_c the class's runs, for the
        classes with k_c > 1.
    """
    n, d = moments.total, moments.n_features
    backend = get_backend("numpy") if backend is None else backend
    scatter = by_class(moments).scatter  # S = W + B, about class means
    segments = coarsen(moments, (runs(moments, rows, backend) if segment is None
                                 else segment).__getitem__)
    in_rows = _in_rows(segments, rows)
    log_n = np.log(max(in_rows.sum(), np.e))
    whiten, out = None, {}
    for label, groups in _per_class(segments.keys).items():
        if len(groups) > 1:
            whiten = whiten or _whiten(lambda: backend.scale(scatter, 1 / n), backend)
            counts, means = in_rows[groups], segments.means[groups]
            delta = whiten(means - counts @ means / counts.sum())
            out[label] = (float(counts @ (delta**2).sum(1)), (len(groups) - 1) * d * log_n)
    return out


def component_keys(moments, rows=None, backend=None):
    """Each (task, class) group's component: its run's, or its class's.

    Parameters
    ----------
    moments : GroupMoments
        Keyed by (task, class).
    rows : float, optional
        The rows the moments are of (by default their total weight).
    backend : Backend, optional
        Where the scatter is (the host's by default).

    Returns
    -------
    dict
        (task, class) key → (first task of its run, class) (:func:`runs`)
        for the classes with T_c > (k_c − 1)·D·log n
        (:func:`between_task_scores`), else (None, class).
    """
    segment = runs(moments, rows, backend)
    apart = {label for label, (statistic, threshold)
             in between_task_scores(moments, segment, rows, backend).items()
             if statistic > threshold}
    return {key: segment[key] if class_of(key) in apart else class_group(key)
            for key in moments.keys}
