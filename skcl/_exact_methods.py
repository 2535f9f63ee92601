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
from ._exact.gaussian import (
    SHRINKAGE_GRID,
    component_log_likelihoods,
    fit_gaussian,
    heldout_log_likelihood,
)
from ._exact.least_squares import (
    RELATIVE_ALPHA_GRID,
    alpha_scale,
    class_targets,
    fit_ridge,
    heldout_squared_error,
)
from ._exact.backend import BACKENDS
from ._exact.moments import coarsen, empty_moments, merge
from ._exact.task import dask_task_moments, is_dask_array, task_moments
from ._logging import show_skcl_logs
from ._surface import SequentialClassifier
from ._validation import Interval, StrOptions, store_parameters

__all__ = ["GaussianDiscriminantClassifier", "LeastSquaresClassifier"]

logger = logging.getLogger("skcl.estimators")

class _ExactClassifier(SequentialClassifier):
    """A task adds its moments; the classifier is solved from them in closed form."""

    _parameter_constraints = {
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
        "grow_classes": ["boolean"],
        "verbose": ["verbose"],
        "backend": [StrOptions(set(BACKENDS))],
    }

    #: Whether each group's own scatter is kept (per-class covariances).
    _per_group_scatter = False

    def _partial_fit(self, X, y, classes, sample_weight, infer_classes=False):
        self._check_params()
        tic = time.perf_counter()
        dask = is_dask_array(X)
        validate = self._validate_dask_task if dask else self._validate_task
        X, y, sample_weight, first, grown = validate(
            X, y, classes, sample_weight, infer_classes=infer_classes
        )
        if first:
            self._holdout_seed = int(check_random_state(self.random_state).randint(2**31 - 1))
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
        options = dict(fraction=float(self.validation_fraction), seed=self._holdout_seed,
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
        fitted = self._solve(moments, heldout)
        record = {
            "task": self.n_tasks_seen_ + 1,
            "n_samples": int(X.shape[0]),
            "n_held_out": float(held.total),
            "time": time.perf_counter() - tic,
        }
        for name, value in fitted.items():
            setattr(self, name, value)
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

    ``predict_proba`` is the plug-in posterior: p(c | x) ∝ Σ_{g∈c} π_g
    N(x; μ_g, Σ_g) at the estimated means and covariance (not the
    Student-t posterior predictive).

    Parameters
    ----------
    shrinkage : "auto" or float in [0, 1], default="auto"
        s in Σ(s) = (1 − s)·S/n + s·ν·I, ν = tr(S/n)/D: scikit-learn's
        shrinkage of the covariance towards a multiple of the identity
        (the posterior mean of Σ under an inverse-Wishart prior centred
        there). "auto" picks s from ``skcl._exact.gaussian.SHRINKAGE_GRID``
        by the exact log-likelihood of the held-out rows of every task so
        far (``validation_fraction``), re-chosen after each task; 0.01 when
        nothing is held out. Any s > 0 keeps Σ invertible when a task has
        fewer rows than features.
    covariance : {"shared", "per_class"}, default="shared"
        One covariance for all components (linear boundaries, D² numbers
        kept) or one per component (quadratic boundaries, D² per
        component, which must then have rows of its own). Fixed by the
        first task.
    components : {"class", "task_class"}, default="class"
        One Gaussian per class, or one per (task, class) pair. The second
        is for domain-incremental sequences, where a label (even digits)
        is a mixture of the tasks' classes: a label's probability is then
        the sum of its components' posteriors, and no task id is needed at
        test time. Both are computed from the same statistics, so this may
        change between tasks.
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
        Mean held-out log-likelihood of each s when ``shrinkage="auto"``
        (NaN where nothing is held out).
    moments_, heldout_moments_ : GroupMoments
        The sums that stand for L_t: per (task, class) weight and mean,
        and the pooled scatter, of the rows learned from and held out.
    history_ : list of dict
        Per task: ``task``, ``n_samples``, ``n_held_out`` (weight) and
        ``time`` (seconds).

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
        "shrinkage": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both")],
        "covariance": [StrOptions({"shared", "per_class"})],
        "components": [StrOptions({"class", "task_class"})],
    }

    def __init__(self, shrinkage="auto", *, covariance="shared", components="class",
                 validation_fraction=0.1, random_state=None, grow_classes=False, verbose=0,
                 backend="auto"):
        store_parameters(self, locals())

    @property
    def _per_group_scatter(self):
        return self.covariance == "per_class"

    def _components(self, moments):
        if self.components == "class":
            return coarsen(moments, _any_task)
        return moments

    def _solve(self, moments, heldout):
        shared = self.covariance == "shared"
        shrinkage, scores = self.shrinkage, None
        if shrinkage == "auto":
            learned, held = self._components(moments), self._components(heldout)
            if learned.total > 0 and held.total > 0:
                scores = heldout_log_likelihood(learned, held, SHRINKAGE_GRID, shared)
            shrinkage = _choose(SHRINKAGE_GRID, scores, 0.01, "max")
        components = self._components(merge(moments, heldout))
        fit = fit_gaussian(components, float(shrinkage), shared)
        labels = np.array([key[1] for key in components.keys], dtype=self.classes_.dtype)
        return {
            "gaussians_": fit,
            "means_": fit.means,
            "priors_": np.exp(fit.log_priors),
            "component_classes_": labels,
            "shrinkage_": float(shrinkage),
            "shrinkage_scores_": scores,
        }

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
        joint = component_log_likelihoods(self.gaussians_, X)
        owner = np.searchsorted(self.classes_, self.component_classes_)
        per_class = np.full((len(X), len(self.classes_)), -np.inf)
        for c in np.unique(owner):
            per_class[:, c] = logsumexp(joint[:, owner == c], axis=1)
        return per_class - logsumexp(per_class, axis=1, keepdims=True)

    def predict_proba(self, X):
        """The plug-in posterior p(c | x) of each class.

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

    A least-squares score is no probability: there is no
    ``predict_proba``; ``decision_function`` gives the fitted targets.

    Parameters
    ----------
    alpha : "auto" or float >= 0, default="auto"
        α, the ridge strength (unpenalised intercept). "auto" picks
        α = c · tr(S)/D, c from
        ``skcl._exact.least_squares.RELATIVE_ALPHA_GRID`` (10⁻⁷ to 10,
        relative to the mean eigenvalue of the centred scatter S), by the
        exact squared error of the held-out rows of every task so far
        (``validation_fraction``), re-chosen after each task; c = 10⁻³
        when nothing is held out.
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
        Mean held-out squared error of each relative α when
        ``alpha="auto"``.
    moments_, heldout_moments_ : GroupMoments
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
        "alpha": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, alpha="auto", *, validation_fraction=0.1, random_state=None,
                 grow_classes=False, verbose=0, backend="auto"):
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
        if alpha == "auto":
            learned, learned_targets = self._by_class(moments)
            held, held_targets = self._by_class(heldout)
            if learned.total > 0 and held.total > 0:
                alphas = np.asarray(RELATIVE_ALPHA_GRID) * alpha_scale(learned, learned_targets)
                scores = heldout_squared_error(learned, learned_targets, held, held_targets,
                                               alphas)
            relative = _choose(RELATIVE_ALPHA_GRID, scores, 1e-3, "min")
            alpha = relative * alpha_scale(everything, targets)
        fit = fit_ridge(everything, targets, float(alpha))
        return {
            "coef_": fit.coef.T,
            "intercept_": fit.intercept,
            "alpha_": float(alpha),
            "alpha_scores_": scores,
        }

    def decision_function(self, X):
        """The fitted targets of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) with two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes)
        """
        X = self._check_X(X)
        scores = np.asarray(X, dtype=np.float64) @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class whose target is fitted best.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            if len(self.classes_) == 1:
                return np.repeat(self.classes_, len(scores))
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
