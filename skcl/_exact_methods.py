"""Classifiers whose previous loss is kept exactly: Gaussian classes, least squares.

The loss recursion L_t = L_{t-1} + nll_t needs no approximation when the
negative log-likelihood depends on the data only through sums that add up
task by task. For class-conditional Gaussians and for least squares on
fixed features those sums are each class's weight and mean and the pooled
scatter (:mod:`skcl._exact.moments`): the stand-in for L_{t-1} *is*
L_{t-1}, stored in O(D²) whatever the number of tasks, with no λ to tune;
classes grow for free, and the order and chunking of the data change
nothing. These classifiers share the scikit-learn surface of every skcl
classifier (:mod:`skcl._surface`) and none of the gradient-trained core.
"""

import logging
import time
from numbers import Real

import numpy as np
from scipy.special import logsumexp
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._docstrings import fill_doc
from ._exact import solve_jax
from ._exact.backend import BACKENDS, resolve_backend
from ._exact.gaussian import (
    SHRINKAGE_GRID,
    component_log_likelihoods,
    fit_gaussian,
    heldout_log_likelihood,
    oas_shrinkage,
    tasks_apart,
)
from ._exact.least_squares import (
    RELATIVE_ALPHA_GRID,
    alpha_scale,
    class_targets,
    fit_from_spectrum,
    fit_ridge,
    gcv_scores,
    heldout_squared_error,
    ridge_spectrum,
)
from ._exact.moments import coarsen, empty_moments, merge
from ._exact.predictive import (
    PREDICTIVES,
    class_log_joint,
    class_log_proba,
    rank_first,
    ridge_score_log_likelihoods,
    score_logits,
    score_temperature,
    student_t_log_likelihoods,
)
from ._exact.task import dask_task_moments, is_dask_array, task_moments
from ._logging import show_skcl_logs
from ._surface import SequentialClassifier
from ._validation import Interval, StrOptions, store_parameters

__all__ = ["GaussianDiscriminantClassifier", "LeastSquaresClassifier"]

logger = logging.getLogger("skcl.estimators")

class _ExactClassifier(SequentialClassifier):
    """A task adds its moments; the classifier is solved from them in closed form.

    ``partial_fit`` only adds the task's moments: the solve (an
    eigendecomposition, the hyperparameter's choice, the coefficients)
    runs once, at the first use after the updates (a prediction, or
    reading a fitted attribute it sets), so a stream of small chunks pays
    one D³ solve, not one per chunk. ``fit`` solves at once.
    """

    _parameter_constraints = {
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
        "grow_classes": ["boolean"],
        "verbose": ["verbose"],
        "backend": [StrOptions(set(BACKENDS))],
    }

    #: Whether each group's own scatter is kept (per-class covariances).
    _per_group_scatter = False

    #: The fitted attributes the solve sets (absent from ``vars`` while
    #: the moments have changed since the last solve).
    _solved_attributes = ()

    #: The hyperparameter whose value "heldout" chooses it on held-out rows.
    _tuned = None

    def __getattr__(self, name):
        # Only called when normal lookup fails: a solved attribute missing
        # after partial_fit is computed now, from the moments kept.
        state = vars(self)
        if name in type(self)._solved_attributes and "moments_" in state:
            self._solve_now()
            if name in state:
                return state[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _solve_now(self):
        """Run the solve on the moments kept and set the attributes it gives."""
        tic = time.perf_counter()
        fitted = self._solve(self.moments_, self.heldout_moments_)
        for name, value in fitted.items():
            setattr(self, name, value)
        self.solve_time_ = time.perf_counter() - tic

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Only the held-out rule draws anything (its rows' hash).
        tags.non_deterministic = self._holds_out() and self.random_state is None
        return tags

    def _on_device(self):
        """Whether the solve runs through JAX (``backend``)."""
        return resolve_backend(self.backend) == "jax"

    def _holds_out(self):
        """Whether the rule in use needs held-out rows."""
        return getattr(self, self._tuned) == "heldout"

    def fit(self, X, y, sample_weight=None):
        """Forget everything and learn ``(X, y)`` as a single task, solved at once.

        ``classes_`` become the labels present in ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        with self._transaction():
            super().fit(X, y, sample_weight)
            self._solve_now()
        return self

    def _partial_fit(self, X, y, classes, sample_weight, infer_classes=False):
        self._check_params()
        tic = time.perf_counter()
        dask = is_dask_array(X)
        validate = self._validate_dask_task if dask else self._validate_task
        X, y, sample_weight, first, grown = validate(
            X, y, classes, sample_weight, infer_classes=infer_classes
        )
        if first:
            # Drawn only for the held-out rule: at the defaults nothing is random.
            self._holdout_seed = (int(check_random_state(self.random_state).randint(2**31 - 1))
                                  if self._holds_out() else 0)
            self.n_tasks_seen_ = 0
            self.moments_ = self.heldout_moments_ = empty_moments(
                self.n_features_in_, self._per_group_scatter
            )
        elif (self.moments_.group_scatter is not None) != self._per_group_scatter:
            raise ValueError(
                "The covariance structure cannot change between tasks: the statistics "
                "kept so far do not hold what it needs. Call fit, or clone the "
                "estimator, to start a new sequence."
            )
        if grown is not None:
            self.classes_ = grown
        classes_ = self.classes_
        keys = [(self.n_tasks_seen_, label) for label in classes_.tolist()]
        fraction = float(self.validation_fraction) if self._holds_out() else 0.0
        options = dict(fraction=fraction, seed=self._holdout_seed,
                       per_group_scatter=self._per_group_scatter)
        if dask:
            groups = y.map_blocks(lambda block: np.searchsorted(classes_, block), dtype=np.intp)
            learned, held = dask_task_moments(X, groups, sample_weight, keys, **options)
        else:
            learned, held = task_moments(X, np.searchsorted(classes_, y), sample_weight, keys,
                                         backend=self.backend, **options)
        moments, heldout = merge(self.moments_, learned), merge(self.heldout_moments_, held)
        if moments.total + heldout.total <= 0:
            raise ValueError("Every sample weight seen so far is zero: nothing to learn from.")
        record = {
            "task": self.n_tasks_seen_ + 1,
            "n_samples": int(X.shape[0]),
            "n_held_out": float(held.total),
            "time": time.perf_counter() - tic,
        }
        # The solved attributes are stale from here: dropped, and recomputed
        # from the new moments at their first use (__getattr__).
        for name in (*self._solved_attributes, "solve_time_"):
            vars(self).pop(name, None)
        self.moments_, self.heldout_moments_ = moments, heldout
        self.history_ = [*getattr(self, "history_", []), record]
        self.n_tasks_seen_ += 1
        if self.verbose:
            show_skcl_logs()
            logger.info("[%s] task %d: %d samples (%.0f held out), %.3f s",
                        type(self).__name__, record["task"], record["n_samples"],
                        record["n_held_out"], record["time"])

    def _validate_dask_task(self, X, y, classes, sample_weight, *, infer_classes=False):
        """Check a task given as Dask arrays without loading X.

        The labels are reduced to their distinct values (Dask's
        ``unique``) and checked as an in-memory task of one row per label;
        the values of X are checked block by block as the moments are
        computed (a NaN there rejects the task).
        """
        import dask.array as da

        y = da.asarray(y)
        if X.ndim != 2 or y.ndim != 1:
            raise ValueError(f"Expected a 2-D X and a 1-D y, got {X.ndim}-D and {y.ndim}-D.")
        if np.isnan(X.shape[0]) or X.shape[0] != y.shape[0]:
            raise ValueError(
                f"X and y must have the same known number of rows, got {X.shape[0]} and "
                f"{y.shape[0]}."
            )
        if X.shape[0] == 0:
            raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
        labels = da.unique(y).compute()
        probe = np.zeros((len(labels), X.shape[1]))
        checked = self._validate_task(probe, labels, classes, None, infer_classes=infer_classes)
        if sample_weight is not None and not is_dask_array(sample_weight):
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (X.shape[0],) or (sample_weight < 0).any():
                raise ValueError("sample_weight must be non-negative, one per row of X.")
        return checked._replace(X=X, y=y, sample_weight=sample_weight)

    def _solve(self, moments, heldout):
        """The fitted attributes from the moments (learned rows, held-out rows)."""
        raise NotImplementedError

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=[np.float64, np.float32])


def _all_moments(estimator):
    """The moments of every row learned from, held-out ones included (the fit's).

    Free at the defaults: nothing is held out, and ``merge`` returns the
    learned side as it is.
    """
    return merge(estimator.moments_, estimator.heldout_moments_)


def _any_task(key):
    """A (task, class) group's class group: the key (None, class)."""
    return None, key[1]


def _choose(grid, scores, fallback, better):
    """The grid value with the best finite score, or the fallback."""
    scores = None if scores is None else np.asarray(scores)
    if scores is None or not np.isfinite(scores).any():
        return fallback
    finite = np.where(np.isfinite(scores), scores, -np.inf if better == "max" else np.inf)
    return grid[int(np.argmax(finite) if better == "max" else np.argmin(finite))]


@fill_doc
class GaussianDiscriminantClassifier(_ExactClassifier):
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
    conjugate prior that the shrinkage implies.

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
        as with scikit-learn's LDA ``shrinkage="auto"``. "heldout" picks
        s in Σ(s) from ``skcl._exact.gaussian.SHRINKAGE_GRID`` by the
        exact log-likelihood of rows held out (``validation_fraction``,
        ``random_state``). Any s > 0 keeps Σ invertible when there are
        fewer rows than features.
    covariance : {"shared", "per_class"}, default="shared"
        One covariance for all components (linear boundaries, D² numbers
        kept) or one per component (quadratic boundaries, D² per
        component, which must then have rows of its own). Fixed by the
        first task.
    components : {"auto", "class", "task_class"}, default="auto"
        One Gaussian per class, or one per (task, class) pair, where a
        task is one ``partial_fit`` call. The second is for
        domain-incremental sequences, where a label (even digits) is a
        mixture of the tasks' classes: a label's probability is then the
        sum of its components' posteriors, and no task id is needed at
        test time. "auto" keeps a class's tasks apart only when their
        means differ beyond chance: when the between-task scatter T_c in
        the OAS-shrunk covariance's metric exceeds (k_c − 1)·D·log n, the
        Bayesian information criterion (``skcl._exact.gaussian.tasks_apart``).
        On a class-incremental sequence each class has one task and
        "auto" is "class"; on domain-incremental Split digits it is
        "task_class" (97.0 % against 90.7 %); a stream of one
        distribution cut into many calls keeps one component per class,
        so the model is the one fit on all rows whatever the chunking.
        All three are computed from the same statistics, so this may
        change between tasks.
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
        The s in use.
    shrinkage_scores_ : ndarray of shape (len(SHRINKAGE_GRID),) or None
        Mean held-out log-likelihood of each s when
        ``shrinkage="heldout"`` (NaN where nothing is held out).
    solve_time_ : float
        Seconds the last solve took.
    moments_, heldout_moments_ : GroupMoments
        The sums that stand for L_t: per (task, class) weight and mean,
        and the pooled scatter, of the rows learned from and held out
        (none unless ``shrinkage="heldout"``). ``partial_fit`` only adds
        to them; the solved attributes above are computed from them at
        their first use after it.
    history_ : list of dict
        Per task: ``task``, ``n_samples``, ``n_held_out`` (weight) and
        ``time`` (seconds).

    Notes
    -----
    What stays invariant: the statistics are exact sums, so at the
    defaults any order of the rows within a task, any split of a task into
    chunks whose class means agree (as i.i.d. chunks do, by the
    ``components`` criterion), and any order of the tasks give the same model up to rounding
    (1e-8). A chunking that separates a class's inputs into very different
    calls (a domain per call) is what "auto" keeps apart: then one
    component per call and class, each call counting as a task.

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
        **_ExactClassifier._parameter_constraints,
        "shrinkage": [StrOptions({"auto", "heldout"}), Interval(Real, 0, 1, closed="both")],
        "covariance": [StrOptions({"shared", "per_class"})],
        "components": [StrOptions({"auto", "class", "task_class"})],
        "predictive": [StrOptions(set(PREDICTIVES))],
    }
    _solved_attributes = ("gaussians_", "means_", "priors_", "component_classes_",
                          "shrinkage_", "shrinkage_scores_")
    _tuned = "shrinkage"

    def __init__(self, shrinkage="auto", *, covariance="shared", components="auto",
                 predictive="plugin", validation_fraction=0.1, random_state=None,
                 grow_classes=False, verbose=0, backend="auto"):
        store_parameters(self, locals())

    @property
    def _per_group_scatter(self):
        return self.covariance == "per_class"

    def _component_key(self, everything):
        """A (task, class) group's component, decided on the moments of every row."""
        if self.components == "class":
            return _any_task
        if self.components == "task_class":
            return lambda key: key
        apart = tasks_apart(everything)
        return lambda key: key if key[1] in apart else _any_task(key)

    def _solve(self, moments, heldout):
        shared = self.covariance == "shared"
        everything = merge(moments, heldout)
        key = self._component_key(everything)
        components = coarsen(everything, key)
        shrinkage, scores, target = self.shrinkage, None, None
        if shrinkage == "auto":
            # OAS of the pooled correlation (rows about their own
            # component's mean): every row, a closed form, nothing random.
            shrinkage, target = oas_shrinkage(components.scatter, components.total)
        elif shrinkage == "heldout":
            learned, held = coarsen(moments, key), coarsen(heldout, key)
            if learned.total > 0 and held.total > 0:
                scores = heldout_log_likelihood(learned, held, SHRINKAGE_GRID, shared)
            shrinkage = _choose(SHRINKAGE_GRID, scores, 0.01, "max")
        eigh = solve_jax.eigh if self._on_device() else np.linalg.eigh
        fit = fit_gaussian(components, float(shrinkage), shared, target, eigh)
        labels = np.array([key[1] for key in components.keys], dtype=self.classes_.dtype)
        return {
            "gaussians_": fit,
            "means_": fit.means,
            "priors_": np.exp(fit.log_priors),
            "component_classes_": labels,
            "shrinkage_": float(shrinkage),
            "shrinkage_scores_": scores,
        }

    def decision_function(self, X):
        """Log of each class's joint density with ``x``: the log-posterior up to a constant.

        ``log Σ_{g∈c} π_g p(x | g)`` for each class c (p the Gaussian, or
        the Student-t with ``predictive="student_t"``), which differs
        from :meth:`predict_log_proba` by a constant per row (the log
        evidence), as scikit-learn's ``LinearDiscriminantAnalysis`` and
        ``QuadraticDiscriminantAnalysis`` define theirs; with two classes,
        the log ratio ``log p(classes_[1] | x) − log p(classes_[0] | x)``,
        positive for ``classes_[1]``. With the shared covariance and one
        component per class, its column differences are those of
        scikit-learn's LDA fitted on the same data with the same
        shrinkage.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) with two classes, else (n_samples, n_classes)
            −inf for a declared class with no rows yet (±inf for the log
            ratio).
        """
        per_class = class_log_joint(self._joint(X), self.component_classes_, self.classes_)
        if per_class.shape[1] == 2:
            with np.errstate(invalid="ignore"):  # −inf − −inf: neither class has rows
                return per_class[:, 1] - per_class[:, 0]
        return per_class

    def _joint(self, X):
        """log π_g + log p(x | g) of each checked row and component, as ``predictive`` says."""
        X = self._check_X(X)
        if self.predictive == "student_t":
            return student_t_log_likelihoods(self.gaussians_, self.shrinkage_, X)
        return component_log_likelihoods(self.gaussians_, X)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            −inf for a declared class with no rows yet.
        """
        return class_log_proba(self._joint(X), self.component_classes_, self.classes_)

    def predict_proba(self, X):
        """The posterior p(c | x) of each class: plug-in or predictive (``predictive``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; 0 for a declared class
            with no rows yet.
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The most probable class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        log_proba = self.predict_log_proba(X)  # checks fitted before reading classes_
        return self.classes_[np.argmax(log_proba, axis=1)]


@fill_doc
class LeastSquaresClassifier(_ExactClassifier):
    """Ridge regression on class targets, learned task by task, exactly.

    The targets are one-hot (±1 with two classes); a row's target is its
    class's, so the loss depends on the data only through each class's
    weight and mean and the pooled scatter, which add up task by task.
    After any sequence of tasks the model is scikit-learn's
    ``Ridge(alpha)`` fitted on all their data (``RidgeClassifier`` with
    two classes). The loss is quadratic in the parameters, so AQC's
    quadratic stand-in of it would be exact: AQC with a Gaussian
    likelihood on a fixed linear model is this classifier, with λ = 1.
    On random features of the inputs (:class:`~skcl.feature_extraction.RandomFeatures`
    in front, in a :class:`~skcl.pipeline.Pipeline`) it is the idea of
    RanPAC (McDonnell et al., 2023) and of kernel ridge regression with
    random features, learned continually with nothing forgotten.

    The fitted targets (``decision_function``) are no probabilities;
    ``predict_proba`` makes them into some from the stored sums alone:
    the scores are linear in x, so their class means Bᵀμ_c + b and
    within-class covariance BᵀWB/n are exact functions of the class
    moments (``skcl._exact.predictive``), and a Gaussian model of them
    sets the scale the scores lack (``probabilities``).

    Parameters
    ----------
    alpha : "auto", "heldout" or float >= 0, default="auto"
        α, the ridge strength (unpenalised intercept). "auto" picks
        α = c · tr(S)/D, c from
        ``skcl._exact.least_squares.RELATIVE_ALPHA_GRID`` (10⁻⁷ to 10,
        relative to the mean eigenvalue of the centred scatter S), by
        generalised cross-validation of every row,
        GCV(α) = n·RSS(α)/(n − tr H(α))², exact from the eigenvalues of S
        (``skcl._exact.least_squares.gcv_scores``): no row held out,
        nothing random; on all data of CI Split Iris, Wine and digits it
        picks the α of scikit-learn's ``RidgeClassifierCV`` (leave-one-out)
        on the same grid. "heldout" picks c by the exact squared error of
        rows held out (``validation_fraction``, ``random_state``).
    probabilities : {"scores", "discriminant", "ranked"}, default="scores"
        How ``predict_proba`` reads the scores s = Bᵀx + b. "scores":
        softmax(a·s) (sigmoid(a·s) with two classes), its one inverse
        temperature a fitted to the exact Gaussian model of the training
        scores (temperature scaling without held-out rows); its argmax is
        the highest score, so ``predict`` and ``decision_function`` are
        the ridge's. "discriminant": linear discriminant analysis of the
        scores, p(c | s) ∝ π_c N(s; m_c, Σ_s), what scikit-learn's
        ``LinearDiscriminantAnalysis`` fitted on the scores of all the
        training rows gives (penalised discriminant analysis, Hastie, Buja
        and Tibshirani, 1995); ``predict`` is then its argmax and
        ``decision_function`` its log-odds (two classes) or log
        posteriors, which can differ from the ridge's highest score near a
        boundary (where the ridge masks a class between two others, as on
        Iris, they differ most, and the discriminant is the more accurate).
        "ranked": the discriminant's posterior where its most probable
        class is the ridge's (nearly every row), and elsewhere the
        distribution closest to it (in expected log loss under it) that
        ranks the ridge's class first (``skcl._exact.predictive.rank_first``):
        ``predict`` and ``decision_function`` stay the ridge's, as with
        "scores", but a row is made unsure by the discriminant disagreeing
        with the ridge on it, not by one temperature shared by every row.
        Changes nothing in the fit: it may change between tasks.
{exact}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    alpha_ : float
        The α in use.
    alpha_scores_ : ndarray of shape (len(RELATIVE_ALPHA_GRID),) or None
        GCV(α) of each relative α when ``alpha="auto"``; the mean
        held-out squared error when ``alpha="heldout"``.
    solve_time_ : float
        Seconds the last solve took.
    moments_, heldout_moments_ : GroupMoments
        ``partial_fit`` only adds to them; ``coef_``, ``intercept_``,
        ``alpha_`` and ``alpha_scores_`` are computed from them at their
        first use after it (one solve, however many calls).
    history_ : list of dict

    Examples
    --------
    >>> from skcl import LeastSquaresClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.metrics import final_average_accuracy
    >>> data = load_ci_split_iris()
    >>> clf = LeastSquaresClassifier(random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.coef_.shape
    (3, 4)
    """

    _parameter_constraints = {
        **_ExactClassifier._parameter_constraints,
        "alpha": [StrOptions({"auto", "heldout"}), Interval(Real, 0, None, closed="left")],
        "probabilities": [StrOptions({"scores", "discriminant", "ranked"})],
    }
    _solved_attributes = ("coef_", "intercept_", "alpha_", "alpha_scores_")
    _tuned = "alpha"

    def __init__(self, alpha="auto", *, probabilities="scores", validation_fraction=0.1,
                 random_state=None, grow_classes=False, verbose=0, backend="auto"):
        store_parameters(self, locals())

    def _by_class(self, moments):
        """Class moments and each class's target row."""
        by_class = coarsen(moments, _any_task)
        codes = class_targets(len(self.classes_))
        labels = np.array([key[1] for key in by_class.keys], dtype=self.classes_.dtype)
        return by_class, codes[np.searchsorted(self.classes_, labels)]

    def _solve(self, moments, heldout):
        everything, targets = self._by_class(merge(moments, heldout))
        alpha, scores = self.alpha, None
        device = self._on_device()
        if alpha == "auto" and device:
            fit, alpha, scores = solve_jax.ridge_gcv(
                everything, targets, RELATIVE_ALPHA_GRID,
                lambda alphas, scores, fallback: _choose(alphas, scores, fallback, "min"))
        elif alpha == "auto":
            # GCV of every row, from the one eigendecomposition that also
            # gives the coefficients.
            spectrum = ridge_spectrum(everything, targets)
            alphas = np.asarray(RELATIVE_ALPHA_GRID) * spectrum.scale
            scores = gcv_scores(spectrum, alphas)
            alpha = _choose(alphas, scores, 1e-3 * spectrum.scale, "min")
            fit = fit_from_spectrum(spectrum, float(alpha))
        else:
            if alpha == "heldout":
                learned, learned_targets = self._by_class(moments)
                held, held_targets = self._by_class(heldout)
                if learned.total > 0 and held.total > 0:
                    alphas = (np.asarray(RELATIVE_ALPHA_GRID)
                              * alpha_scale(learned, learned_targets))
                    scores = heldout_squared_error(learned, learned_targets, held,
                                                   held_targets, alphas)
                relative = _choose(RELATIVE_ALPHA_GRID, scores, 1e-3, "min")
                alpha = relative * alpha_scale(everything, targets)
            fit = (solve_jax.ridge_fixed if device else fit_ridge)(everything, targets,
                                                                   float(alpha))
        return {
            "coef_": fit.coef.T,
            "intercept_": fit.intercept,
            "alpha_": float(alpha),
            "alpha_scores_": scores,
        }

    def _scores(self, X):
        """s = Bᵀx + b, of shape (n_samples, n_targets), for checked X."""
        return np.asarray(X, dtype=np.float64) @ self.coef_.T + self.intercept_

    def decision_function(self, X):
        """The fitted targets of each row (the discriminant's log-odds with
        ``probabilities="discriminant"``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) with two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes)
        """
        X = self._check_X(X)
        if self.probabilities == "discriminant":
            log_proba = self._discriminant_log_proba(X)
            if len(self.classes_) == 2:
                # −inf − (−inf) where neither class has rows cannot happen:
                # a fitted estimator has rows of at least one.
                with np.errstate(invalid="ignore"):
                    return log_proba[:, 1] - log_proba[:, 0]
            return log_proba
        scores = self._scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def _class_moments(self):
        """Moments of every row by class, and each class's column in ``classes_``."""
        by_class = self._by_class(_all_moments(self))[0]
        labels = np.array([key[1] for key in by_class.keys], dtype=self.classes_.dtype)
        return by_class, labels

    def _discriminant_log_proba(self, X):
        by_class, labels = self._class_moments()
        joint = ridge_score_log_likelihoods(by_class, self.coef_.T, self.intercept_,
                                            self._scores(X))
        return class_log_proba(joint, labels, self.classes_)

    def _temperature(self):
        """a of the "scores" probabilities (recomputed per call: predicting
        must not change the estimator's state)."""
        by_class, labels = self._class_moments()
        columns = np.searchsorted(self.classes_, labels)
        if self.coef_.shape[0] == 1:  # one score: logits (0, s), class 1 in column 1
            columns = (columns == len(self.classes_) - 1).astype(int)
        return score_temperature(by_class, self.coef_.T, self.intercept_, columns)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            −inf for a declared class with no rows yet.
        """
        X = self._check_X(X)
        if self.probabilities == "discriminant":
            return self._discriminant_log_proba(X)
        if len(self.classes_) == 1:
            return np.zeros((len(X), 1))
        if self.probabilities == "ranked":
            first = np.argmax(score_logits(self._scores(X)), axis=1)  # the ridge's predict
            return rank_first(self._discriminant_log_proba(X), first)
        logits = self._temperature() * score_logits(self._scores(X))
        return logits - logsumexp(logits, axis=1, keepdims=True)

    def predict_proba(self, X):
        """p(c | x), from a Gaussian model of the ridge scores.

        The scores s = Bᵀx + b are linear in x, so the class means
        m_c = Bᵀμ_c + b and the pooled within-class covariance BᵀWB/n of
        the training rows' scores follow exactly from the stored class
        weights n_c, means μ_c and scatter W: no row is kept, and the
        model is N(m_c, Σ_s) per class (in K − 1 coordinates: one-hot
        scores always sum to one; one score with two classes), Σ_s shrunk
        by OAS (tiny unless there are few rows). A softmax of the raw
        scores would not do: the fitted targets have no scale of their own
        (they shrink with α and with how much the classes overlap); the
        spread of each class around its mean score sets one.

        ``probabilities="scores"``: softmax(a·s), a the inverse temperature
        that minimises the expected log loss under that model (its argmax
        is ``predict``'s). ``probabilities="discriminant"``:
        p(c | x) ∝ π_c N(s; m_c, Σ_s) itself, as scikit-learn's
        ``LinearDiscriminantAnalysis`` fitted on the training rows' scores.
        ``probabilities="ranked"``: that posterior, or where its most
        probable class is not the ridge's, the closest distribution (in
        expected log loss under it) whose most probable class is
        (its argmax is ``predict``'s).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; 0 for a declared class
            with no rows yet.
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class whose target is fitted best (the most probable with
        ``probabilities="discriminant"``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if self.probabilities == "discriminant":
            log_proba = self.predict_log_proba(X)
            return self.classes_[np.argmax(log_proba, axis=1)]
        scores = self.decision_function(X)
        if scores.ndim == 1:
            if len(self.classes_) == 1:
                return np.repeat(self.classes_, len(scores))
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
