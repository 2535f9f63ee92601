"""Gaussian class-conditionals learned task by task, exactly (linear discriminant analysis)."""


from numbers import Real

import numpy as np

from ..._utils.docstrings import fill_doc
from ..._utils.validation import Interval, StrOptions, store_parameters
from ..backend import get_backend
from ..base import _STATE_LOCK, ExactClassifier, choose
from ..components import component_keys
from ..domains import domain_joint, fit_domains
from ..forgetting import ForgettingError, scaled
from ..forgetting_methods import ForgettingMixin
from ..gaussian import (
    FALLBACK_SHRINKAGE,
    SHRINKAGE_GRID,
    component_log_likelihoods,
    fit_gaussian,
    heldout_log_likelihood,
    oas_shrinkage,
)
from ..moments import (
    GroupMoments,
    class_group,
    class_of,
    coarsen,
    empty_moments,
    merge,
    on_host,
)
from ..per_class import (
    class_parts,
    combine,
    empty_class_scatters,
    fit_per_class,
    heldout_per_class,
    of_groups,
    select,
    take_out,
)
from ..predictive import PREDICTIVES, class_log_joint, student_t_log_likelihoods

__all__ = ["GaussianDiscriminantClassifier"]


@fill_doc
class GaussianDiscriminantClassifier(ForgettingMixin, ExactClassifier):
    """Gaussian class-conditionals learned task by task, exactly.

    Each class (or each (task, class) pair, see ``components``) is a
    Gaussian N(μ_g, Σ); a new task adds its rows' weights, means and
    scatter to those of the tasks before (merged pairwise in float64), so
    after any sequence of tasks the model is the one a single fit on all
    their data gives: L_{t-1} is kept exactly, with no λ and no
    validation sequence of future tasks. With the shared covariance this
    is linear discriminant analysis, scikit-learn's
    ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage=s)`` fitted on
    everything; its end state is that of the streaming LDA of Hayes and
    Kanan (2020) (Avalanche's ``StreamingLDA``) and of the Gaussian
    classifiers on frozen pre-trained features (SLDA, and RanPAC's
    class-mean classifier with a shrunk covariance); with
    ``covariance="per_class"`` it is regularised quadratic discriminant
    analysis.

    ``predict_proba`` is the plug-in posterior, p(c | x) ∝ Σ_{g∈c} π_g
    N(x; μ_g, Σ_g) at the estimated means and covariance, or with
    ``predictive="student_t"`` the posterior predictive under the
    conjugate prior that the shrinkage implies. ``decision_function`` is
    the log of each class's joint density with x, log Σ_{g∈c} π_g p(x | g):
    the log-posterior up to a constant per row (the log evidence), as
    scikit-learn's ``LinearDiscriminantAnalysis`` and
    ``QuadraticDiscriminantAnalysis`` define theirs (−inf for a declared
    class with no rows yet); with two classes, the log ratio
    ``log p(classes_[1] | x) − log p(classes_[0] | x)``. With the shared
    covariance and one component per class, its column differences are
    those of scikit-learn's LDA fitted on the same data with the same
    shrinkage.

    Parameters
    ----------
    shrinkage : "auto", "heldout" or float in [0, 1], default="auto"
        How far the covariance is shrunk. A float s gives
        Σ(s) = (1 − s)·S/n + s·ν·I, ν = tr(S/n)/D: scikit-learn's
        ``shrunk_covariance`` and its ``LinearDiscriminantAnalysis``
        with a float ``shrinkage`` (the posterior mean of Σ under an
        inverse-Wishart prior centred at ν·I). "auto" (the default)
        shrinks the correlation instead, Σ = (1 − s)·S/n + s·diag(S/n),
        with s the oracle approximating shrinkage (OAS, Chen et al.,
        2010) of the pooled rows, a closed form in the sums
        (``skcl._exact.gaussian.oas_shrinkage``): every row counts, no row
        is held out, nothing is random, and no feature's unit decides it,
        as with scikit-learn's LDA ``shrinkage="auto"``. Its sample size
        is the rows' total weight: a weight is that many copies of its row
        (scikit-learn's sample-weight convention), so weights that rescale
        uniformly change s as copies would (``sample_weight=10`` on every
        row is ten copies of each). "heldout" picks
        s in Σ(s) from ``skcl._exact.gaussian.SHRINKAGE_GRID`` by the
        exact log-likelihood of rows held out (``validation_fraction``,
        ``random_state``). Any s > 0 keeps Σ invertible when there are
        fewer rows than features.
    covariance : {"shared", "per_domain", "per_class"}, default="shared"
        One covariance for all components (linear boundaries, D² numbers
        kept), one per domain, or one per class (quadratic boundaries, D²
        numbers kept per class, however many calls: each class's scatter
        about its (task, class) groups' means, ``class_scatters_``; a call
        adds its own to them). Fixed by the first task. "per_class"
        (``skcl._exact.per_class``): Σ_c is the scatter of the class's
        rows about their own component's mean over their weight, shrunk;
        the components a class keeps apart (``components``) share it. A
        class must then have rows of its own. "per_domain"
        (``skcl._exact.domains``): each task (call) is a domain with the
        covariance of its rows about their components' means, and the
        components ``components`` keeps apart are scored under the domains
        of the tasks that gave them rows (a run over two tasks in both);
        those of a class kept whole under the pooled one (so with none kept
        apart it is "shared"); D² per task kept. At test no task id: a
        class sums its components' π_{τ,g} N(x; μ_g, Σ_τ) over the domains,
        π_{τ,g} = n_{τ,g}/n (rows of g in τ). For unrelated domains (ten
        permutations of 10,000 MNIST rows, random features, M = 2,000:
        88.66 % → 93.21 %, one alone 93.30 %);
        for related ones see ``domain_gate``, the experiments page and
        ``benchmarks/accuracy/bench_exact_domains.py``.
    components : {"auto", "class", "task_class"}, default="auto"
        One Gaussian per class, or one per (task, class) pair, where a
        task is one ``partial_fit`` call. The second is for
        domain-incremental sequences, where a label (even digits) is a
        mixture of the tasks' classes: a label's probability is then the
        sum of its components' posteriors, and no task id is needed at
        test time. "auto" (``skcl._exact.components``) first joins each
        class's consecutive calls whose means the data cannot tell apart
        (a domain cut into calls is one run; a run is kept once it has
        log n rows, so one atypical row cannot open one), then keeps a class's runs
        apart only when their means differ beyond chance: when Rao's score
        statistic T_c (the between-run scatter in the metric of the
        covariance about the class means) exceeds (k_c − 1)·D·log n, the
        Bayesian information criterion's price. On a class-incremental
        sequence each class has one run and "auto" is "class"; on
        domain-incremental Split digits it is "task_class" (96.7 % against
        90.8 %); a stream of one distribution, or of a slowly drifting one,
        cut into many small calls keeps one component per class. There are
        at most C + n / log n components (C classes, n rows), however many
        calls. The test counts rows, not weights (unlike OAS): weights
        that rescale uniformly change no component.
        All three are computed from the same statistics, so this may
        change between tasks.
    domain_pooling : float in [0, 1], default=0.0
        Under ``covariance="per_domain"``, λ: each domain's empirical
        covariance is moved a share λ towards the pooled one,
        (1 − λ)·W_τ/n_τ + λ·W/n, before its shrinkage (0: the domain's
        own; 1: the shared model). Under ``domain_gate="volume"`` it lowers
        ten rotations (a component per (task, class), λ = 0.5: 91.98 %
        against 92.42 %). Ignored otherwise.
    domain_gate : {"own", "shared", "volume"}, default="own"
        Under ``covariance="per_domain"``, how a test row's domain τ is
        weighed; the components within it are ranked under Σ_τ
        (``skcl._exact.domains.domain_joint``). "own": under Σ_τ (the
        mixture above). "shared": under the shared Σ, p̄(τ, x) =
        Σ_{h∈τ} π_{τ,h} N(x; μ_h, Σ). "volume": under a_τ·Σ_τ, rescaled to
        the domains' common volume, log det(a_τ·Σ_τ) = Σ_τ (n_τ/n) log det Σ_τ:
        each domain's correlations, no domain's log-determinant. For related
        domains whose covariances differ in scale (Rotated MNIST: 0° and
        90° exact, the other angles interpolated), where "own" lets one
        domain claim another's rows: ten rotations of 10,000 rows, M =
        2,000: "own" 91.24 %, "shared" 91.80 %, "volume" 92.42 %
        (shared covariance 89.42 %, one domain alone 92.65 %); ten
        permutations 93.21 % under each; DI Split digits, whose domains do
        differ in volume: 96.94, 97.77, 95.82 %. Ignored otherwise; changes
        nothing in the fit, so it may change between tasks.
    predictive : {"plugin", "student_t"}, default="plugin"
        What ``predict_proba`` integrates x against. "plugin": N(μ_g, Σ_g)
        at the estimates. "student_t": the posterior predictive
        t_f(x; μ_g, c_g·Σ_g), f = n₀ + n + 2, c_g = (n₀ + n)/f · (1 + 1/n_g),
        under the inverse-Wishart prior on Σ centred at the shrinkage's
        target (ν·I for a float s, the covariance's diagonal under "auto")
        with n₀ = s/(1 − s)·n pseudo-rows (whose posterior mean is Σ(s))
        and a flat prior on each mean (see ``skcl._exact.predictive``):
        wider by the means' uncertainty, heavier-tailed by the
        covariance's. It matters when a component has few rows for its
        dimension (one covariance per class or per (task, class); on Split
        digits it lowers the log loss, on Split Iris it raises it a
        little, see :ref:`exact-probabilities`). Changes nothing in the
        fit: it may change between tasks; ``predict`` follows it.
{exact}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    means_ : ndarray of shape (n_components, n_features)
        μ_g of each component.
    priors_ : ndarray of shape (n_components,)
        π_g, each component's share of the weight.
    component_classes_ : ndarray of shape (n_components,)
        The class of each component.
    shrinkage_ : float
        The s in use (of the pooled covariance; under "per_domain" each
        domain's are in ``domain_gaussians_.shrinkages``).
    domain_gaussians_ : DomainFit or None
        Under ``covariance="per_domain"``, each domain's fit
        (``skcl._exact.domains.DomainFit``); under "per_class" where a
        class holds several components, each class's (its ``domains`` the
        classes); None otherwise.
    class_scatters_, heldout_class_scatters_ : ClassScatters or None
        Under ``covariance="per_class"`` (without ``store_group_scatter``,
        which keeps each group's own instead), W_c of each class, the
        scatter of its rows learned (held out) about their (task, class)
        group's mean (``skcl._exact.per_class.ClassScatters``): one D×D a
        class. None otherwise.
    task_scatters_ : list of ndarray of shape (n_features, n_features)
        Under ``covariance="per_domain"``, each task's scatter pooled
        within its (task, class) groups; empty otherwise.
    shrinkage_scores_ : ndarray of shape (len(SHRINKAGE_GRID),) or None
        Mean held-out log-likelihood of each s when
        ``shrinkage="heldout"`` (NaN where nothing is held out).
    solve_time_ : float
        Seconds the last solve took.
    backend_ : {"numpy", "jax"}
        Which backend did the work (``backend`` resolved, at the last task).
    moments_, heldout_moments_ : GroupMoments
        The sums that stand for L_t: per (task, class) weight and mean,
        and the pooled scatter, of the rows learned from and held out
        (none unless ``shrinkage="heldout"``). ``partial_fit`` only adds
        to them; the solved attributes above are computed from them at
        their first use after it.
    history_ : list of dict
        Per task: ``task``, ``n_samples``, ``n_heldout`` (weight) and
        ``time`` (seconds).

    Notes
    -----
    What stays invariant: the statistics are exact sums, so at the
    defaults any order of the rows within a task, any split of a task into
    chunks whose class means agree (as i.i.d. chunks do, by the
    ``components`` criterion), and any order of the tasks give the same model up to rounding
    (1e-8). A chunking that separates a class's inputs into very different
    calls (a domain per call) is what "auto" keeps apart: then one
    component per run of consecutive calls and class, so a domain cut into
    consecutive calls gives the model of one call.

    Examples
    --------
    >>> from skcl import GaussianDiscriminantClassifier
    >>> from skcl.datasets import load_ci_split_wine
    >>> from skcl.metrics import final_average_accuracy
    >>> data = load_ci_split_wine()
    >>> clf = GaussianDiscriminantClassifier(random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> final_average_accuracy(clf, data.test) >= 0.9
    True
    """

    _parameter_constraints = {
        **ExactClassifier._parameter_constraints,
        "shrinkage": [StrOptions({"auto", "heldout"}), Interval(Real, 0, 1, closed="both")],
        "covariance": [StrOptions({"shared", "per_domain", "per_class"})],
        "components": [StrOptions({"auto", "class", "task_class"})],
        "predictive": [StrOptions(set(PREDICTIVES))],
        "domain_pooling": [Interval(Real, 0, 1, closed="both")],
        "domain_gate": [StrOptions({"own", "shared", "volume"})],
    }
    _prediction_params = ("predictive", "domain_gate")
    _solved_attributes = ("gaussians_", "domain_gaussians_", "means_", "priors_",
                          "component_classes_", "shrinkage_", "shrinkage_scores_")
    _tuned = "shrinkage"

    def __init__(self, shrinkage="auto", *, covariance="shared", components="auto",
                 predictive="plugin", domain_pooling=0.0, domain_gate="own",
                 validation_fraction=0.1, random_state=None, grow_classes=False, verbose=0,
                 backend="auto", decay=1.0, store_group_scatter=False):
        store_parameters(self, locals())

    @property
    def _per_group_scatter(self):
        # A task's moments hold each group's own scatter under "per_class"
        # too, summed by class there (_task_moments): kept only when stored.
        return self.covariance == "per_class" or bool(self.store_group_scatter)

    def _keeps_class_scatters(self):
        """Whether W_c is kept per class (``skcl._exact.per_class``): "per_class"
        without each group's own scatter, from which W_c is summed at the solve."""
        return self.covariance == "per_class" and not self.store_group_scatter

    def _start_sequence(self):
        super()._start_sequence()
        keeps = self._keeps_class_scatters()
        if keeps:
            self.moments_ = self.heldout_moments_ = empty_moments(self.n_features_in_)
        empty = empty_class_scatters(self.n_features_in_) if keeps else None
        self.class_scatters_ = self.heldout_class_scatters_ = empty

    def _check_same_structure(self):
        kept = (self.moments_.group_scatter is not None,
                getattr(self, "class_scatters_", None) is not None)
        if kept != (bool(self.store_group_scatter), self._keeps_class_scatters()):
            raise ValueError(
                "The covariance structure cannot change between tasks: the statistics "
                "kept so far do not hold what it needs (each group's or, under "
                'covariance="per_class", each class\'s scatter, kept from the first task). '
                "Call fit, or clone the estimator, to start a new sequence.")

    def _task_moments(self, X, y, sample_weight, classes_):
        learned, held = super()._task_moments(X, y, sample_weight, classes_)
        # "per_domain" needs each task's own pooled scatter S_τ, held until
        # the task is committed (_commit): a task rejected after this (every
        # weight zero) leaves it, and the next task's replaces it.
        if self.covariance == "per_domain":
            self._pending_task_scatter = merge(learned, held).scatter
        if self._keeps_class_scatters():
            # "per_class": the task's W_c, held likewise; its groups' own
            # scatters (one D×D per class and call) are not kept.
            sums = of_groups(learned), of_groups(held)
            learned, held = (m._replace(group_scatter=None) for m in (learned, held))
            self._pending_class_scatters = (learned, held, *sums)
        return learned, held

    def _commit(self, moments, heldout, classes_, task_scales, record):
        scatter = vars(self).pop("_pending_task_scatter", None)
        pending = vars(self).pop("_pending_class_scatters", None)
        decay = float(self.decay)
        with _STATE_LOCK:  # one step with the moments: a prediction sees both or neither
            if self.n_tasks_seen_ == 0:
                self.task_scatters_ = []
            if scatter is not None:
                # Under decay each earlier task's scatter weighs λ less, as its sums do.
                self.task_scatters_ = [*(S * decay for S in self.task_scatters_), scatter]
            if pending is not None:
                learned, held, learned_sums, held_sums = pending
                self.class_scatters_ = combine(
                    scaled(self.moments_, decay), self.class_scatters_.scaled(decay),
                    learned, learned_sums)
                self.heldout_class_scatters_ = combine(
                    scaled(self.heldout_moments_, decay),
                    self.heldout_class_scatters_.scaled(decay), held, held_sums)
            super()._commit(moments, heldout, classes_, task_scales, record)

    def _component_key(self, everything, backend):
        """A (task, class) group's component, decided on the moments of every row."""
        if self.components == "class":
            return class_group
        if self.components == "task_class":
            return lambda key: key
        return component_keys(everything, self._rows(), backend).__getitem__

    def _solve_backend(self, moments, heldout):
        """The backend of the solve, and the moments there.

        The device's for the shared covariance at a fixed or OAS shrinkage;
        the held-out shrinkage and the per-class and per-domain covariances
        are solved on the host from the moments sent there (explicitly).
        """
        backend = self._backend()
        if backend.name == "numpy" or (self.covariance == "shared"
                                       and self.shrinkage != "heldout"):
            return backend, moments, heldout
        return get_backend("numpy"), on_host(moments), on_host(heldout)

    def _rows(self):
        """The rows learned and not forgotten: what the components' test counts,
        not weights. Weights that rescale uniformly then change no component."""
        return self._rows_learned()

    def _solve(self, moments, heldout):
        # "per_domain" picks its held-out shrinkage on the pooled
        # covariance (one s, then applied to every domain's Σ_r).
        shared = self.covariance != "per_class"
        per_class = self.covariance == "per_class"
        backend, moments, heldout = self._solve_backend(moments, heldout)
        everything = merge(moments, heldout)
        key = self._component_key(everything, backend)
        components = coarsen(everything, key)
        if per_class:
            learned_sums, held_sums = self._class_sums(moments, heldout)
            parts = class_parts(everything, combine(moments, learned_sums, heldout, held_sums),
                                key)
        shrinkage, scores, target = self.shrinkage, None, None
        if shrinkage == "auto":
            # OAS of the pooled correlation (rows about their own
            # component's mean): every row, a closed form, nothing random.
            # Its sample size is the weight: an integer weight is that many
            # copies of its row (scikit-learn's contract), unlike the
            # components' test, which counts rows.
            shrinkage, target = oas_shrinkage(components.scatter, components.total,
                                              backend=backend)
        elif shrinkage == "heldout":
            learned, held = coarsen(moments, key), coarsen(heldout, key)
            if learned.total > 0 and held.total > 0 and per_class:
                nu = float(np.trace(learned.scatter)) / learned.total / learned.n_features
                scores = heldout_per_class(class_parts(moments, learned_sums, key),
                                           class_parts(heldout, held_sums, key),
                                           SHRINKAGE_GRID, nu or 1.0, backend.linalg)
            elif learned.total > 0 and held.total > 0:
                scores = heldout_log_likelihood(learned, held, SHRINKAGE_GRID, shared,
                                                backend.linalg)
            shrinkage = choose(SHRINKAGE_GRID, scores, FALLBACK_SHRINKAGE, "max")
        domains = None
        if self.covariance == "per_domain":
            if len(self.task_scatters_) != self.n_tasks_seen_:
                raise ValueError(
                    'covariance="per_domain" needs each task\'s scatter, kept only when it '
                    "is set from the first task. Call fit, or clone the estimator, to start "
                    "a new sequence.")
            components, domains = fit_domains(
                everything, [backend.host(S) for S in self.task_scatters_], key,
                "auto" if self.shrinkage == "auto" else float(shrinkage), backend,
                float(self.domain_pooling))
            shared = True
        if per_class:
            fit, domains = fit_per_class(components, parts, float(shrinkage), target, backend)
        else:
            fit = fit_gaussian(components, float(shrinkage), shared, target, backend)
        labels = np.array(components.labels, dtype=self.classes_.dtype)
        return {
            "gaussians_": fit,
            "domain_gaussians_": domains,
            "means_": components.means,
            "priors_": np.exp(np.log(components.counts / components.total)),
            "component_classes_": labels,
            "shrinkage_": float(shrinkage),
            "shrinkage_scores_": scores,
        }

    def _class_sums(self, moments, heldout):
        """W_c of the rows learned and held out: kept, or summed from each group's own."""
        if moments.group_scatter is not None:
            return of_groups(moments), of_groups(heldout)
        return self.class_scatters_, self.heldout_class_scatters_

    # ---------------------------------------- forgetting with one scatter a class

    def _removal_group_scatter(self):
        return (super()._removal_group_scatter()
                or getattr(self, "class_scatters_", None) is not None)

    def _select_without_group_scatter(self, chosen, what):
        if getattr(self, "class_scatters_", None) is None:
            return super()._select_without_group_scatter(chosen, what)
        return (_whole_classes(self.moments_, self.class_scatters_, chosen, what),
                _whole_classes(self.heldout_moments_, self.heldout_class_scatters_, chosen, what))

    def _state_after_removal(self, learned, held):
        if getattr(self, "class_scatters_", None) is None:
            return {}
        out = {}
        for name, kept, sums, removed in (
                ("class_scatters_", self.moments_, self.class_scatters_, learned),
                ("heldout_class_scatters_", self.heldout_moments_,
                 self.heldout_class_scatters_, held)):
            # Rows given: their groups' own scatters; whole classes: theirs.
            removed_sums = (of_groups(removed) if removed.group_scatter is not None
                            else select(sums, set(removed.labels).__contains__))
            out[name] = take_out(kept, sums, removed, removed_sums)
        return out

    def _shared_log_likelihoods(self, X):
        """log π_g + log p(x | g) of each component under the shared covariance."""
        if self.predictive == "student_t":
            fit = self.gaussians_  # the host's arithmetic (factors sent there)
            return student_t_log_likelihoods(fit._replace(factors=np.asarray(fit.factors)),
                                             self.shrinkage_, X)
        return component_log_likelihoods(self.gaussians_, X)

    def _joint_log_likelihood(self, X):
        """log Σ_{g∈c} π_g p(x | g) of each checked row and class, p as ``predictive`` says."""
        if self.domain_gaussians_ is None:
            joint = self._shared_log_likelihoods(X)
        else:
            scores = student_t_log_likelihoods if self.predictive == "student_t" else None
            gate = self.domain_gate if self.covariance == "per_domain" else "own"
            joint = domain_joint(self.domain_gaussians_, X, gate, self._shared_log_likelihoods,
                                 scores)
        return class_log_joint(joint, self.component_classes_, self.classes_)


def _whole_classes(moments, sums, chosen, what):
    """The groups ``chosen(key)`` is true of, where W_c is kept a class.

    Their scatter is known only when they are every group of their
    classes (``forget_classes``; ``forget_task`` of a call that alone
    learned its classes): otherwise refused.
    """
    take = np.array([bool(chosen(key)) for key in moments.keys], dtype=bool)
    labels = {label for label, taken in zip(moments.labels, take) if taken}
    for label in sorted(labels, key=repr):
        calls = [key[0] for key in moments.keys if class_of(key) == label]
        if any(not taken for key, taken in zip(moments.keys, take) if class_of(key) == label):
            raise ForgettingError(
                f"forgetting {what} without their rows needs the scatter of class {label!r} "
                f"in those calls alone, but covariance='per_class' keeps one scatter a "
                f"class, summed over the calls that learned it ({calls}): pass the rows to "
                f"forget(X, y, task=...), or learn with store_group_scatter=True")
    d = moments.n_features
    picked = select(sums, labels.__contains__).scatters
    rows = np.flatnonzero(take)
    return GroupMoments(tuple(moments.keys[g] for g in rows), moments.counts[rows],
                        moments.means[rows].reshape(-1, d), picked.sum(axis=0), None)
