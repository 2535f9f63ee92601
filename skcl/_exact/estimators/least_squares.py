"""Least squares on one-hot targets learned task by task, exactly (ridge regression)."""


from numbers import Real

import numpy as np

from ..._utils.docstrings import fill_doc
from ..._utils.validation import Interval, StrOptions, store_parameters
from ..backend import get_backend
from ..base import ExactClassifier, all_moments, choose
from ..forgetting_methods import ForgettingMixin
from ..least_squares import (
    FALLBACK_RELATIVE_ALPHA,
    RELATIVE_ALPHA_GRID,
    alpha_scale,
    class_targets,
    fit_from_spectrum,
    fit_ridge,
    gcv_scores,
    heldout_squared_error,
    ridge_spectrum,
)
from ..moments import by_class, merge, on_host
from ..predictive import (
    class_log_joint,
    log_normalise,
    only_seen,
    rank_first,
    ridge_score_log_likelihoods,
    score_discriminant,
    score_logits,
    score_temperature,
)

__all__ = ["LeastSquaresClassifier"]


@fill_doc
class LeastSquaresClassifier(ForgettingMixin, ExactClassifier):
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
    ``decision_function`` is the fitted targets (one score, positive for
    ``classes_[1]``, with two classes) and ``predict`` the class whose
    target is fitted best; with ``probabilities="discriminant"`` they are
    the discriminant's log posterior (its log-odds with two classes) and
    its most probable class.

    Parameters
    ----------
    alpha : "auto", "heldout" or float >= 0, default="auto"
        α, the ridge strength (unpenalised intercept). "auto" picks
        α = c · tr(S)/D, c from
        ``skcl._exact.least_squares.RELATIVE_ALPHA_GRID`` (10⁻⁷ to 10,
        relative to the mean eigenvalue of the centred scatter S), by
        generalised cross-validation of every row,
        GCV(α) = n·RSS(α)/(n − tr H(α))², exact from the eigenvalues of S
        (``skcl._exact.least_squares.gcv_scores``), n the rows' total
        weight (a weight is that many copies of its row, scikit-learn's
        sample-weight convention: weights that rescale uniformly change α
        as copies would): no row held out, nothing random; on all data of
        CI Split Iris, Wine and digits it picks the α of scikit-learn's
        ``RidgeClassifierCV`` (leave-one-out)
        on the same grid. "heldout" picks c by the exact squared error of
        rows held out (``validation_fraction``, ``random_state``). 0 gives
        the least-squares fit of smallest norm where the scatter is singular
        (fewer rows than features, a column repeated), as ``Ridge(alpha=0)``.
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
    backend_ : {"numpy", "jax"}
        Which backend did the work (``backend`` resolved, at the last task).
    moments_, heldout_moments_ : GroupMoments
        ``partial_fit`` only adds to them; ``coef_``, ``intercept_``,
        ``alpha_`` and ``alpha_scores_`` are computed from them at their
        first use after it (one solve, however many calls), the
        probabilities' temperature and discriminant at the first
        ``predict_proba`` that reads them.
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
        **ExactClassifier._parameter_constraints,
        "alpha": [StrOptions({"auto", "heldout"}), Interval(Real, 0, None, closed="left")],
        "probabilities": [StrOptions({"scores", "discriminant", "ranked"})],
    }
    _solved_attributes = ("coef_", "intercept_", "alpha_", "alpha_scores_")
    _prediction_params = ("probabilities",)
    _tuned = "alpha"

    def __init__(self, alpha="auto", *, probabilities="scores", validation_fraction=0.1,
                 random_state=None, grow_classes=False, verbose=0, backend="auto",
                 decay=1.0, store_group_scatter=False):
        store_parameters(self, locals())

    def _by_class(self, moments):
        """Class moments and each class's target row."""
        classes = by_class(moments)
        codes = class_targets(len(self.classes_))
        return classes, codes[np.searchsorted(self.classes_, self._labels(classes))]

    def _labels(self, moments):
        """The class of each group of ``moments``, in the dtype of ``classes_``."""
        return np.array(moments.labels, dtype=self.classes_.dtype)

    def _solve(self, moments, heldout):
        backend = self._backend()
        if self.alpha == "heldout" and backend.name != "numpy":
            # The held-out rule's spectrum is the host's (moments sent there).
            backend, moments, heldout = get_backend("numpy"), on_host(moments), on_host(heldout)
        everything, targets = self._by_class(merge(moments, heldout))
        alpha, scores = self.alpha, None
        if alpha == "auto":
            # GCV of every row, from the one reduction to band form that also
            # gives the coefficients.
            spectrum = ridge_spectrum(everything, targets, backend)
            alphas = np.asarray(RELATIVE_ALPHA_GRID) * spectrum.scale
            scores = gcv_scores(spectrum, alphas)
            alpha = choose(alphas, scores, FALLBACK_RELATIVE_ALPHA * spectrum.scale, "min")
            fit = fit_from_spectrum(spectrum, float(alpha))
        else:
            if alpha == "heldout":
                learned, learned_targets = self._by_class(moments)
                held, held_targets = self._by_class(heldout)
                if learned.total > 0 and held.total > 0:
                    alphas = (np.asarray(RELATIVE_ALPHA_GRID)
                              * alpha_scale(learned, learned_targets))
                    scores = heldout_squared_error(learned, learned_targets, held,
                                                   held_targets, alphas, backend.linalg)
                relative = choose(RELATIVE_ALPHA_GRID, scores, FALLBACK_RELATIVE_ALPHA, "min")
                alpha = relative * alpha_scale(everything, targets)
            fit = fit_ridge(everything, targets, float(alpha), backend)
        return {
            "coef_": fit.coef.T,
            "intercept_": fit.intercept,
            "alpha_": float(alpha),
            "alpha_scores_": scores,
        }

    def _scores(self, X):
        """s = Bᵀx + b, of shape (n_samples, n_targets), for checked X."""
        return self._backend().row_products(X, self.coef_.T) + self.intercept_

    def _decision_columns(self, X):
        # The ridge's scores, but for the discriminant's reading, whose
        # decision function is its log posterior.
        if self.probabilities == "discriminant":
            return log_normalise(self._joint_log_likelihood(X))
        return self._scores(X)

    def _joint_log_likelihood(self, X):
        scores = self._scores(X)
        if self.probabilities == "discriminant":
            return self._discriminant_log_joint(scores)
        if len(self.classes_) == 1:
            return np.zeros((len(scores), 1))
        if self.probabilities == "ranked":
            first = np.argmax(score_logits(scores), axis=1)  # the ridge's predict
            return rank_first(log_normalise(self._discriminant_log_joint(scores)), first)
        # A declared class with no rows has a score fitted to 0, not −∞:
        # it gets probability 0, as in the other readings.
        classes = self._derived("class_moments", lambda: by_class(all_moments(self)))
        seen = np.searchsorted(self.classes_, self._labels(classes))
        logits = self._derived("temperature", self._temperature) * score_logits(scores)
        return only_seen(logits, seen)

    def _discriminant_log_joint(self, scores):
        """log π_c + log N(s; m_c, Σ_s) of the scores' discriminant, per class of ``classes_``."""
        classes = self._derived("class_moments", lambda: by_class(all_moments(self)))
        discriminant = self._derived("discriminant", lambda: score_discriminant(
            classes, self.coef_.T, self.intercept_))
        joint = ridge_score_log_likelihoods(discriminant, scores)
        return class_log_joint(joint, self._labels(classes), self.classes_)

    def _temperature(self):
        """a of the "scores" probabilities."""
        classes = self._derived("class_moments", lambda: by_class(all_moments(self)))
        columns = np.searchsorted(self.classes_, self._labels(classes))
        if self.coef_.shape[0] == 1:  # one score: logits (0, s), class 1 in column 1
            columns = (columns == len(self.classes_) - 1).astype(int)
        return score_temperature(classes, self.coef_.T, self.intercept_, columns)
