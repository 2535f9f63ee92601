"""Quadratic consolidation methods: AQC, EWC, online EWC and SI.

All replace L_{t-1} by ½λ(θ−θ*_{t-1})ᵀ H_{t-1} (θ−θ*_{t-1}) with
H_{t-1} = precision·I + Σ_{i<t} C_i, where C_i is the task's curvature
measured at its solution θ*_i; they differ only in C_i.
"""

from numbers import Real

import jax
import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._utils.docstrings import fill_doc
from ..._utils.validation import (
    Interval,
    StrOptions,
    positive_int,
    positive_real,
    store_parameters,
)
from .. import likelihoods
from ..base import GradientClassifier
from ..consolidation import OnlineEWC, PathIntegral, Quadratic
from ..consolidation.curvature import KINDS, STRUCTURES
from ..consolidation.laplace import (
    PREDICTIVES,
    evidence_prior_precision,
    laplace_log_proba,
    posterior_root,
)

__all__ = ["AQCClassifier", "EWCClassifier", "OnlineEWCClassifier", "SIClassifier"]


_PREDICTIVE_PARAMS = """
    predictive : {"map", "probit", "mean_field", "mc"}, default="map"
        How :meth:`predict_proba` (and so :meth:`predict`) turns θ into
        probabilities. "map": the plug-in softmax of f(x; θ*_t). The
        others: the linearised Laplace predictive, which integrates the
        softmax over the Gaussian posterior N(θ*_t, (λ H_t)⁻¹) that the
        penalty already stores (H_t = diag(prior) + Σ_i C_i, in the
        chosen structure): the logits are f ~ N(f(x; θ*_t), J Σ Jᵀ) and
        their softmax is integrated by the probit approximation
        softmax(f* ⊙ κ), κ = 1/√(1 + π/8 · var) (laplace-torch's);
        by that approximation applied to each pairwise difference
        f_k − f_j with its own variance ("mean_field", which sees the
        logits' covariance and is the more accurate); or by Monte Carlo.
        ``decision_function`` then gives the predictive's log-odds or
        log-probabilities. See the user guide, "How sure is it?".
    n_predict_samples : int, default=1000
        Samples of the logits averaged by ``predictive="mc"``, drawn from
        ``random_state``: predictions are deterministic.
    predictive_prior_precision : "stored", "evidence" or float > 0, default="stored"
        The prior inside the predictive's posterior (never the training's).
        "stored": λ·diag(prior), as the penalty holds it. "evidence": an
        isotropic prior N(0, δ⁻¹ I) with δ maximising the Laplace evidence
        given the stored curvature, −½δ‖θ*‖² + ½P log δ − ½ log det(λC + δI)
        (laplace-torch's prior precision by marginal likelihood; MacKay's
        δ = γ/‖θ*‖²), so Σ = (λC + δI)⁻¹ (C's negative eigenvalues, float32
        rounding of a positive semi-definite sum, set to zero); a float:
        that δ. Only the Laplace predictives read it.
"""


def _fill_predictive(cls):
    """Put the predictive's parameter docs where a docstring says ``{predictive}``."""
    cls.__doc__ = cls.__doc__.replace("{predictive}", _PREDICTIVE_PARAMS.strip("\n"))
    return cls


class _LaplacePredictive:
    """predict_proba from the quadratic stand-in's Gaussian posterior.

    Mixed into the methods whose stand-in is a posterior precision (AQC,
    EWC, online EWC).
    """

    _predictive_constraints = {
        "predictive": [StrOptions(set(PREDICTIVES))],
        "n_predict_samples": [positive_int],
        "predictive_prior_precision": [StrOptions({"stored", "evidence"}),
                                       Interval(Real, 0, None, closed="neither")],
    }

    def posterior_covariance(self):
        """Σ = (λ H_t)⁻¹, the covariance of the Gaussian posterior the predictive uses.

        H_t = diag(prior) + Σ_i C_i is the stand-in's matrix (``hessian_``
        for the full structure, ``importance_`` on the diagonal for EWC);
        Σ is block-diagonal for ``structure="kron"`` (one block per
        layer) and diagonal for ``"diag"``; (λC + δI)⁻¹ with
        ``predictive_prior_precision`` "evidence" or δ. Built dense, for
        checks and small networks.

        Returns
        -------
        ndarray of shape (n_params, n_params), float64
        """
        check_is_fitted(self)
        self._complete_fold()
        return self._posterior_root().covariance(self.network_.n_params)

    def _posterior_root(self):
        delta = self.predictive_prior_precision
        if delta == "stored":
            delta = None
        elif getattr(self, "curvature", "ggn") == "hessian" and self.hidden_layer_sizes:
            raise ValueError(
                "predictive_prior_precision other than 'stored' needs a positive "
                "semi-definite curvature, and the exact Hessian of a network with hidden "
                "layers can be indefinite: use curvature='ggn'.")
        elif delta == "evidence":
            delta = evidence_prior_precision(self.consolidation_, float(self.alpha),
                                             np.asarray(self.theta_),
                                             self.network_.layer_shapes)
        return posterior_root(self.consolidation_, float(self.alpha),
                              self.network_.layer_shapes, prior_precision=delta)

    def _predictive_log_proba(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        self._complete_fold()  # the same state an immediate fold gives
        bernoulli = self.likelihood_ == likelihoods.BERNOULLI
        n_outputs = self.network_.n_outputs - self._unseen_output
        # Its own stream of the estimator's seed: the training keys fold in
        # task counts, this constant is none of them.
        key = jax.random.fold_in(jax.random.PRNGKey(self._seed), 2**31 - 3)
        return laplace_log_proba(
            self.network_, n_outputs, bernoulli, self.theta_, self._posterior_root(), X,
            self.predictive, int(self.n_predict_samples), key,
        )

    def decision_function(self, X):
        """Scores that rank the classes as :meth:`predict_proba` does.

        With ``predictive="map"`` the network's logits f(x; θ*_t);
        otherwise the predictive's log-odds of ``classes_[1]`` (two
        classes) or log-probabilities, so that ``predict``,
        ``predict_proba`` and this agree on every sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        if self.predictive == "map":
            return super().decision_function(X)
        logp = self._predictive_log_proba(X)
        return logp[:, 1] - logp[:, 0] if logp.shape[1] == 2 else logp

    def predict_proba(self, X):
        """Class probabilities: plug-in or Laplace predictive (``predictive``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to one.
        """
        if self.predictive == "map":
            return super().predict_proba(X)
        return np.exp(self._predictive_log_proba(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, finite wherever it is.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        if self.predictive == "map":
            return super().predict_log_proba(X)
        return self._predictive_log_proba(X)


class _QuadraticClassifier(GradientClassifier):
    _parameter_constraints = {
        **GradientClassifier._parameter_constraints,
        "alpha": [positive_real],
    }
    _warns_on_single_class_task = True

    def __init__(
        self,
        alpha=1.0,
        *,
        hidden_layer_sizes=(),
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
    ):
        store_parameters(self, locals())


@fill_doc
@_fill_predictive
class AQCClassifier(_LaplacePredictive, _QuadraticClassifier):
    """Autodiff quadratic consolidation (AQC; paper, section II-B).

    After each task t the curvature of the task's NLL at its solution θ*_t
    is added to the running H_t = precision·I + Σ_i C_i(θ*_i). The next
    task minimises

        λ/2 (θ − θ*_t)ᵀ H_t (θ − θ*_t) + nll_{t+1}(θ)        (eq. 3)

    By default C is the paper's: the exact Hessian of the NLL, full,
    summed over minibatches (eq. 4) — computed in closed form for a single
    dense layer (softmax or logistic regression, e.g. on the features of a
    frozen extractor) and by automatic differentiation (the Jacobian of the
    gradient) for deeper networks. A full H has n_params² entries; past a
    few thousand parameters choose a cheaper ``structure``.

    Parameters
    ----------
    alpha : float, default=1.0
        λ, the weight of the quadratic penalty (paper's grid: 1, 10, 100,
        1000, 10000, chosen on a validation sequence). It is the paper's λ
        for every curvature and structure: C is always a sum over the
        task's samples, as the paper's Hessian is.
    curvature : {"hessian", "ggn", "empirical_fisher"}, default="hessian"
        What C measures: the exact Hessian (the paper's AQC); the
        generalised Gauss-Newton matrix, equal to the Fisher information
        for these likelihoods and to the Hessian without hidden layers,
        positive semi-definite everywhere; or the empirical Fisher, the sum
        of the per-sample gradients' outer products at the observed labels.
    structure : {"full", "kron", "diag"}, default="full"
        How C is stored and penalised: dense (O(n_params²) memory and per
        training step; refused, before any work, where it cannot fit in
        memory); Kronecker-factored per dense layer (K-FAC; the online
        structured Laplace approximation of Ritter et al., 2018, keeping
        each task's factors, O(D² + K²) memory per layer and task and
        O(D²K + DK²) per step for D inputs and K outputs); or diagonal.
    curvature_reduction : {"sum", "mean"}, default="sum"
        C summed over the task's samples (the paper's eq. 4: λ weighs the
        prior's precision and the summed curvature alike), or averaged
        over them, as EWC does: λ then weighs the prior n_samples times
        more than the curvature, so a large λ pulls every coordinate
        towards θ*_t and the curvature adds about λ/n_samples times the
        summed C. The mean is EWC's convention: with ``"ggn"`` and
        ``"diag"`` it is :class:`EWCClassifier`. Measured on Split MNIST's
        pixels (user guide, "Choosing the curvature"), where a confident
        network's summed curvature is small beside its prior.
{predictive}
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
        θ*_t.
    consolidation_ : QuadraticState
        The stand-in for L_t: centre θ*_t, the prior's precision and
        Σ_i C_i in the chosen structure (``consolidation_.curvature``).
    hessian_ : ndarray of shape (n_params, n_params)
        H_t, including the prior's precision·I (``structure="full"``
        only).
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import AQCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = AQCClassifier(alpha=1.0, learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.hessian_.shape
    (15, 15)
    >>> kfac = AQCClassifier(alpha=1.0, curvature="ggn", structure="kron", learning_rate=0.1)
    >>> for X, y in data.train:
    ...     kfac = kfac.partial_fit(X, y, classes=data.classes)
    >>> kfac.consolidation_.curvature.n_terms  # one Kronecker term per task
    3
    """

    _parameter_constraints = {
        **_QuadraticClassifier._parameter_constraints,
        "curvature": [StrOptions(set(KINDS))],
        "structure": [StrOptions(set(STRUCTURES))],
        "curvature_reduction": [StrOptions({"sum", "mean"})],
        **_LaplacePredictive._predictive_constraints,
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        curvature="hessian",
        structure="full",
        curvature_reduction="sum",
        predictive="map",
        n_predict_samples=1000,
        predictive_prior_precision="stored",
        hidden_layer_sizes=(),
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return Quadratic(float(self.alpha), self.curvature, self.structure,
                         self.curvature_reduction)

    @property
    def hessian_(self):
        """H_t = precision·I + Σ_i C_i, shape (n_params, n_params), for the full structure."""
        state = self.consolidation_
        if self.structure != "full":
            raise AttributeError(
                f"hessian_ is kept only with structure='full' (this one is "
                f"{self.structure!r}); consolidation_.curvature holds Σ_i C_i."
            )
        H = np.diag(state.prior)
        return H if state.curvature is None else H + state.curvature.matrix


@fill_doc
@_fill_predictive
class EWCClassifier(_LaplacePredictive, _QuadraticClassifier):
    """Elastic weight consolidation with Huszár's single penalty.

    The curvature of each task is the diagonal of the Fisher information
    at its solution, under the model's own predictive distribution and
    *averaged* over the task's samples (Kirkpatrick et al., 2017, as in
    the paper's code). Huszár (2018) corrects the original one-penalty-per-
    task objective to a single penalty whose diagonal accumulates:

        λ/2 Σ_k (precision + Σ_{i≤t} F_{i,k}) (θ_k − θ*_{t,k})² + nll_{t+1}(θ)

    Because F is a mean over samples while AQC's Hessian is a sum, the
    same λ weighs EWC's penalty about n_samples times less. F is
    ``AQCClassifier(curvature="ggn", structure="diag")``'s curvature
    divided by the task's number of samples.

    Parameters
    ----------
    alpha : float, default=1.0
        λ (paper's grid: 1, 10, 100, 1000, 10000); the paper's code's λ,
        which multiplies the mean Fisher.
{predictive}
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
    importance_ : ndarray of shape (n_params,)
        precision + Σ_i F_i, the diagonal of the penalty.
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import EWCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = EWCClassifier(alpha=100, learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.importance_.shape  # one number per parameter, not n_params²
    (15,)
    """

    _parameter_constraints = {
        **_QuadraticClassifier._parameter_constraints,
        **_LaplacePredictive._predictive_constraints,
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        predictive="map",
        n_predict_samples=1000,
        predictive_prior_precision="stored",
        hidden_layer_sizes=(),
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return Quadratic(float(self.alpha), "ggn", "diag", "mean")

    @property
    def importance_(self):
        """precision + Σ_i F_i, shape (n_params,)."""
        return self.consolidation_.hessian_diagonal()


@fill_doc
class SIClassifier(_QuadraticClassifier):
    """Synaptic intelligence (Zenke et al., 2017).

    While a task is learned, each parameter's share of the decrease of the
    task's NLL is integrated along the optimisation path,
    ω_k = Σ_steps −g_k Δθ_k (g: gradient of the NLL term alone, without
    the penalty, as in Zenke et al.). At the end of the task it becomes
    Ω_k = ω_k / ((θ*_{t,k} − θ*_{t-1,k})² + ξ) and accumulates into the
    diagonal of the penalty

        λ/2 Σ_k (precision + Σ_{i≤t} Ω_{i,k}) (θ_k − θ*_{t,k})² + nll_{t+1}(θ)

    Zenke et al. write the penalty as c Σ Ω (θ−θ*)² with no ½ and no prior
    term; λ = 2c up to the prior.

    Parameters
    ----------
    alpha : float, default=1.0
        λ (paper's grid: 1, 10, 100, 1000, 10000).
    damping : float, default=1.0
        ξ > 0 (paper's grid: 0.1, 1, 10).
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
    importance_ : ndarray of shape (n_params,)
        precision + Σ_i Ω_i, the diagonal of the penalty.
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import SIClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = SIClassifier(alpha=100, damping=0.1, learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.importance_.shape
    (15,)
    >>> bool((clf.importance_ >= clf.prior_precision).all())  # Ω ≥ 0 adds to the prior
    True
    """

    _parameter_constraints = {
        **_QuadraticClassifier._parameter_constraints,
        "damping": [positive_real],
    }

    def __init__(
        self,
        alpha=1.0,
        damping=1.0,
        *,
        hidden_layer_sizes=(),
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return PathIntegral(float(self.alpha), float(self.damping))

    @property
    def importance_(self):
        """precision + Σ_i Ω_i, shape (n_params,)."""
        return self.consolidation_.hessian_diagonal()


@fill_doc
@_fill_predictive
class OnlineEWCClassifier(_LaplacePredictive, _QuadraticClassifier):
    """Online EWC: EWC whose old importances decay (Schwarz et al., 2018).

    As :class:`EWCClassifier` — the diagonal Fisher information at each
    task's solution, averaged over its samples — but before a new task's
    Fisher F_t is added, the accumulated one is multiplied by a decay γ:

        F*_t = γ F*_{t-1} + F_t
        λ/2 Σ_k (precision + F*_{t,k}) (θ_k − θ*_{t,k})² + nll_{t+1}(θ)

    γ = 1 is :class:`EWCClassifier`; γ < 1 lets old tasks' constraints
    fade, trading stability for plasticity over long sequences.

    Parameters
    ----------
    alpha : float, default=1.0
        λ, as for :class:`EWCClassifier` (it multiplies mean Fishers).
    decay : float, default=0.9
        γ ∈ (0, 1].
{predictive}
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
    importance_ : ndarray of shape (n_params,)
        precision + F*_t, the diagonal of the penalty.
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import OnlineEWCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = OnlineEWCClassifier(alpha=100, decay=0.5, learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.importance_.shape
    (15,)
    """

    _parameter_constraints = {
        **_QuadraticClassifier._parameter_constraints,
        "decay": [Interval(Real, 0, 1, closed="right")],
        **_LaplacePredictive._predictive_constraints,
    }

    def __init__(
        self,
        alpha=1.0,
        decay=0.9,
        *,
        predictive="map",
        n_predict_samples=1000,
        predictive_prior_precision="stored",
        hidden_layer_sizes=(),
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return OnlineEWC(float(self.alpha), decay=float(self.decay))

    @property
    def importance_(self):
        """precision + F*_t, shape (n_params,)."""
        return self.consolidation_.hessian_diagonal()
