"""Quadratic consolidation methods: AQC (full Hessian), EWC and SI (diagonal).

All three replace L_{t-1} by ½λ(θ−θ*_{t-1})ᵀ H_{t-1} (θ−θ*_{t-1}) with
H_{t-1} = precision·I + Σ_{i<t} C_i, where C_i is the task's curvature
measured at its solution θ*_i; they differ only in C_i.
"""

from ._base import BaseSequentialClassifier, fill_doc
from ._consolidation import DiagonalQuadratic, FullQuadratic
from ._consolidation.curvature import fisher_diagonal, nll_hessian, path_importance

__all__ = ["AQCClassifier", "EWCClassifier", "SIClassifier"]


class _QuadraticClassifier(BaseSequentialClassifier):
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
    ):
        super().__init__(
            hidden_layer_sizes=hidden_layer_sizes,
            n_epochs=n_epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            prior_precision=prior_precision,
            class_weight=class_weight,
            random_state=random_state,
            verbose=verbose,
        )
        self.alpha = alpha


@fill_doc
class AQCClassifier(_QuadraticClassifier):
    """Autodiff quadratic consolidation (AQC; paper, section II-B).

    After each task t the exact Hessian of the task's NLL at its solution,
    H(nll_t)(θ*_t), is computed by automatic differentiation (the Jacobian
    of the gradient, summed over minibatches; eq. 4) and added to the
    running H_t = precision·I + Σ_i H(nll_i)(θ*_i). The next task minimises

        λ/2 (θ − θ*_t)ᵀ H_t (θ − θ*_t) + nll_{t+1}(θ)        (eq. 3)

    H has n_params² entries: AQC suits small networks, e.g. one dense
    layer on the features of a frozen pre-trained extractor.

    Parameters
    ----------
    alpha : float, default=1.0
        λ, the weight of the quadratic penalty (paper's grid: 1, 10, 100,
        1000, 10000, chosen on a validation sequence).
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
        θ*_t.
    hessian_ : ndarray of shape (n_params, n_params)
        H_t, including the prior's precision·I.
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
    """

    def _initial_consolidation(self, n_params):
        return FullQuadratic.prior(n_params, self.prior_precision)

    def _consolidate(self, consolidation, theta_start, theta_end, X, y, w, path, key):
        hessian = nll_hessian(
            self._objective(), theta_end, X, y, w, batch_size=int(self.batch_size)
        )
        return consolidation.add(theta_end, hessian)

    @property
    def hessian_(self):
        """H_t = precision·I + Σ_i H(nll_i)(θ*_i), shape (n_params, n_params)."""
        return self.consolidation_.curvature


@fill_doc
class EWCClassifier(_QuadraticClassifier):
    """Elastic weight consolidation with Huszár's single penalty.

    The curvature of each task is the diagonal of the Fisher information
    at its solution, under the model's own predictive distribution and
    *averaged* over the task's samples (Kirkpatrick et al., 2017, as in
    the paper's code). Huszár (2018) corrects the original one-penalty-per-
    task objective to a single penalty whose diagonal accumulates:

        λ/2 Σ_k (precision + Σ_{i≤t} F_{i,k}) (θ_k − θ*_{t,k})² + nll_{t+1}(θ)

    Because F is a mean over samples while AQC's Hessian is a sum, the
    same λ weighs EWC's penalty about n_samples times less.

    Parameters
    ----------
    alpha : float, default=1.0
        λ (paper's grid: 1, 10, 100, 1000, 10000).
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

    def _initial_consolidation(self, n_params):
        return DiagonalQuadratic.prior(n_params, self.prior_precision)

    def _consolidate(self, consolidation, theta_start, theta_end, X, y, w, path, key):
        fisher = fisher_diagonal(
            self._objective(), theta_end, X, y, w, batch_size=int(self.batch_size)
        )
        return consolidation.add(theta_end, fisher)

    @property
    def importance_(self):
        """precision + Σ_i F_i, shape (n_params,)."""
        return self.consolidation_.curvature


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

    _track_path = True

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
    ):
        super().__init__(
            alpha=alpha,
            hidden_layer_sizes=hidden_layer_sizes,
            n_epochs=n_epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            prior_precision=prior_precision,
            class_weight=class_weight,
            random_state=random_state,
            verbose=verbose,
        )
        self.damping = damping

    def _initial_consolidation(self, n_params):
        return DiagonalQuadratic.prior(n_params, self.prior_precision)

    def _consolidate(self, consolidation, theta_start, theta_end, X, y, w, path, key):
        omega = path_importance(path, theta_start, theta_end, float(self.damping))
        return consolidation.add(theta_end, omega)

    @property
    def importance_(self):
        """precision + Σ_i Ω_i, shape (n_params,)."""
        return self.consolidation_.curvature
