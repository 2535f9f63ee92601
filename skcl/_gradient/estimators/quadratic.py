"""Quadratic consolidation methods: AQC, EWC, online EWC and SI.

All replace L_{t-1} by ½λ(θ−θ*_{t-1})ᵀ H_{t-1} (θ−θ*_{t-1}) with
H_{t-1} = precision·I + Σ_{i<t} C_i, where C_i is the task's curvature
measured at its solution θ*_i; they differ only in C_i.
"""

from numbers import Real

import numpy as np

from ..._utils.docstrings import fill_doc
from ..._utils.validation import Interval, StrOptions, positive_real, store_parameters
from ..base import GradientClassifier
from ..consolidation import OnlineEWC, PathIntegral, Quadratic
from ..consolidation.curvature import KINDS, STRUCTURES
from .laplace_predictive import LaplacePredictive, fill_predictive

__all__ = ["AQCClassifier", "EWCClassifier", "OnlineEWCClassifier", "SIClassifier"]

# EWC's ``fisher``: the labels its gradients are taken at, as a curvature kind.
FISHER_LABELS = {"exact": "ggn", "sampled": "sampled_fisher", "empirical": "empirical_fisher"}


class _QuadraticClassifier(GradientClassifier):
    """The quadratic methods' shared hyperparameter λ (``alpha``)."""

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
        activation="swish",
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        learning_rate_schedule="one_cycle",
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
        scenario="class",
    ):
        store_parameters(self, locals())


class _DiagonalQuadraticClassifier(_QuadraticClassifier):
    """A quadratic method whose H is diagonal (EWC, online EWC, SI): its
    diagonal is the fitted ``importance_``."""

    @property
    def importance_(self):
        """precision + the tasks' accumulated importances, the diagonal of the
        penalty's H, shape (n_params,); the class's docstring says which."""
        return self.consolidation_.hessian_diagonal()


@fill_doc
@fill_predictive
class AQCClassifier(LaplacePredictive, _QuadraticClassifier):
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
    curvature : {"hessian", "ggn", "sampled_fisher", "empirical_fisher"}, default="hessian"
        What C measures: the exact Hessian (the paper's AQC); the
        generalised Gauss-Newton matrix, equal to the Fisher information
        for these likelihoods and to the Hessian without hidden layers,
        positive semi-definite everywhere; the sampled Fisher, its unbiased
        estimate from one label per sample drawn from the model's own
        predictive (one reverse pass per sample instead of one per class;
        the draws follow ``random_state``); or the empirical Fisher, the
        sum of the per-sample gradients' outer products at the observed
        labels.
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
        **LaplacePredictive._predictive_constraints,
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
        activation="swish",
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        learning_rate_schedule="one_cycle",
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
        scenario="class",
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return Quadratic(float(self.alpha), kind=self.curvature, structure=self.structure,
                         reduction=self.curvature_reduction)

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
@fill_predictive
class EWCClassifier(LaplacePredictive, _DiagonalQuadraticClassifier):
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
{fisher}
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
        "fisher": [StrOptions(set(FISHER_LABELS))],
        **LaplacePredictive._predictive_constraints,
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        fisher="exact",
        predictive="map",
        n_predict_samples=1000,
        predictive_prior_precision="stored",
        hidden_layer_sizes=(),
        activation="swish",
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        learning_rate_schedule="one_cycle",
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
        scenario="class",
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return Quadratic(float(self.alpha), kind=FISHER_LABELS[self.fisher], structure="diag",
                         reduction="mean")


@fill_doc
class SIClassifier(_DiagonalQuadraticClassifier):
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
        activation="swish",
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        learning_rate_schedule="one_cycle",
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
        scenario="class",
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return PathIntegral(float(self.alpha), float(self.damping))


@fill_doc
@fill_predictive
class OnlineEWCClassifier(LaplacePredictive, _DiagonalQuadraticClassifier):
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
{fisher}
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
        "fisher": [StrOptions(set(FISHER_LABELS))],
        **LaplacePredictive._predictive_constraints,
    }

    def __init__(
        self,
        alpha=1.0,
        decay=0.9,
        *,
        fisher="exact",
        predictive="map",
        n_predict_samples=1000,
        predictive_prior_precision="stored",
        hidden_layer_sizes=(),
        activation="swish",
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        learning_rate_schedule="one_cycle",
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
        scenario="class",
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return OnlineEWC(float(self.alpha), decay=float(self.decay),
                         kind=FISHER_LABELS[self.fisher])
