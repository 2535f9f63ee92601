"""Sequential variational inference baselines: G-VCL, GM-VCL, G-SFSVI.

These are not MAP methods: each task fits a variational posterior q_t by
minimising E_{q}[nll_t(θ)] + KL(q ‖ q_{t-1}) with the shared training loop
(Adam, one-cycle schedule, minibatches, KL divided by the number of
minibatches), and q_t becomes the prior of the next task. Predictions
average the predicted probabilities over samples of θ from q_t.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._utils.docstrings import fill_doc
from ..._utils.validation import positive_int, store_parameters
from .. import keys, likelihoods
from ..base import GradientClassifier
from ..consolidation.variational import FunctionSpace, Gaussian, GaussianMixture, Variational

__all__ = ["GVCLClassifier", "GMVCLClassifier", "GSFSVIClassifier"]

class _VariationalClassifier(GradientClassifier):
    """Shared machinery: posterior as the consolidation, MC prediction."""

    _parameter_constraints = {
        **GradientClassifier._parameter_constraints,
        "n_train_samples": [positive_int],
        "n_predict_samples": [positive_int],
    }

    def __init__(
        self,
        *,
        n_train_samples=10,
        n_predict_samples=100,
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

    # ------------------------------------------------------- subclass hooks

    def _family(self):
        return Gaussian(self.network_.n_params)

    def _make_consolidation(self):
        return Variational(self._family(), int(self.n_train_samples))

    # ------------------------------------------------------------ internals

    def _task_attributes(self, method, state, key):
        """The samples of θ from q_t that ``predict_proba`` averages."""
        predict_key = keys.prediction_key(key)
        samples = method.family.sample(
            state.posterior, predict_key, int(self.n_predict_samples)
        )
        return {"posterior_samples_": np.asarray(samples)}

    def _logits(self, X):
        """Log of the Monte Carlo predictive probabilities.

        Used as logits by the base class: softmax(log p) = p, and for a
        Bernoulli output the logit of p is log p₁ − log p₀.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=self._input_dtypes)
        # log (1/S) Σ_s p_s, as a log-sum-exp of the samples' log-probabilities:
        # finite even where every p_s underflows.
        log_proba = np.full((X.shape[0], len(self.classes_)), -np.inf)
        for theta in self.posterior_samples_:
            log_proba = np.logaddexp(log_proba, likelihoods.log_proba(
                self.likelihood_, self._class_logits(theta, X)
            ))
        log_proba -= np.log(len(self.posterior_samples_))
        if self.likelihood_ == likelihoods.BERNOULLI:
            return (log_proba[:, 1] - log_proba[:, 0])[:, None]
        return log_proba

    @property
    def posterior_(self):
        """The flat variational parameters of q_t (see the family's layout)."""
        check_is_fitted(self)
        return self.consolidation_.posterior


@fill_doc
class GVCLClassifier(_VariationalClassifier):
    """Gaussian variational continual learning (G-VCL; Nguyen et al., 2018).

    The posterior over the flat θ is a mean-field Gaussian
    q(θ) = N(μ, diag σ²), σ = softplus(ρ). Task t minimises the
    variational free energy

        E_{q}[nll_t(θ)] + KL(q ‖ q_{t-1}),

    q_0 being the zero-mean Gaussian prior of precision ``prior_precision``
    and q_{t-1} the previous posterior (the "prior-focused" VCL without a
    coreset). The expectation is a Monte Carlo average over
    ``n_train_samples`` reparametrised samples per minibatch step; the KL
    is in closed form (as in Nguyen et al.; the paper's code uses a Monte
    Carlo KL on these task sequences) and is divided by the number of
    minibatches like every penalty. μ starts from the network's
    initialisation and σ from softplus(−2) ≈ 0.127 (as in the paper's
    code); later tasks start from the previous posterior.

    Parameters
    ----------
{vi}
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    posterior_ : ndarray of shape (2 * n_params,)
        [μ, ρ] of q_t.
    theta_ : ndarray of shape (n_params,)
        The posterior mean μ.
    posterior_samples_ : ndarray of shape (n_predict_samples, n_params)
        The samples of θ averaged by ``predict_proba``.
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import GVCLClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = GVCLClassifier(learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.posterior_samples_.shape
    (100, 15)
    """


@fill_doc
class GMVCLClassifier(_VariationalClassifier):
    """Gaussian-mixture variational continual learning (GM-VCL; Phan et al., 2022).

    As :class:`GVCLClassifier`, but the posterior over θ is a mixture of K
    mean-field Gaussians, q(θ) = Σ_k π_k N(μ_k, diag σ_k²), which can
    cover several modes. Samples are reparametrised with a Gumbel-softmax
    relaxation of the component choice (temperature 10⁻³, so samples are
    exact draws up to rounding). The KL between two mixtures has no closed
    form: it is estimated by Monte Carlo, (1/S) Σ_s [log q(θ_s) −
    log q_{t-1}(θ_s)], on the same S = ``n_train_samples`` samples as the
    expected NLL. This is the estimator the paper's code selects for the
    classical task sequences; its alternative, the upper bound
    KL(π ‖ π') + Σ_k π_k KL(q_k ‖ q'_k) of matched components, is not
    implemented here. The first task's prior is the Gaussian prior (K
    identical components); the components' means start from K independent
    network initialisations with equal weights.

    Parameters
    ----------
    n_components : int, default=3
        K (the paper's code: 3).
{vi}
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    posterior_ : ndarray of shape (n_components * (2 * n_params + 1),)
        [logits, μ_1..μ_K, ρ_1..ρ_K] of q_t.
    theta_ : ndarray of shape (n_params,)
        The posterior mean Σ_k π_k μ_k.
    posterior_samples_ : ndarray of shape (n_predict_samples, n_params)
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import GMVCLClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = GMVCLClassifier(n_components=3, learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.posterior_.shape  # 3 components of (2 · 15 + 1) numbers
    (93,)
    """

    def __init__(
        self,
        n_components=3,
        *,
        n_train_samples=10,
        n_predict_samples=100,
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

    _parameter_constraints = {
        **_VariationalClassifier._parameter_constraints,
        "n_components": [positive_int],
    }

    def _family(self):
        return GaussianMixture(self.network_.n_params, int(self.n_components))


@fill_doc
class GSFSVIClassifier(_VariationalClassifier):
    """Gaussian sequential function-space VI (G-SFSVI; Rudner et al., 2022).

    The posterior over θ is a mean-field Gaussian as in
    :class:`GVCLClassifier`, but the KL regularises functions instead of
    parameters: at each minibatch step, M inducing points X_C are drawn
    uniformly in a box, and the KL is taken between the distributions of
    the network's outputs (logits) at X_C under q and under q_{t-1},

        E_{q}[nll_t(θ)] + KL(q(f(X_C)) ‖ q_{t-1}(f(X_C))).

    Each output distribution is the Gaussian of the network linearised at
    the posterior mean, N(f(X_C; μ), J diag(σ²) Jᵀ); as in Rudner et al.'s
    implementation (and the paper's code) only its diagonal is kept — one
    variance per inducing point and output — so the KL is in closed form.
    On the first task q_0 is the zero-mean Gaussian prior, linearised at
    θ = 0. The KL is divided by the number of minibatches like every
    penalty (the paper's code does the same on the classical sequences).

    Parameters
    ----------
    n_inducing_points : int, default=16
        M, inducing points per step (the paper's code: 16).
    inducing_bounds : None or (low, high), default=None
        The box of the inducing points: two floats, or two arrays of shape
        (n_features,). None uses the per-feature minimum and maximum of
        all training inputs seen so far (the paper takes them over the
        whole task sequence in advance, which a learner that sees one task
        at a time cannot; for extracted image features it uses [-1, 6]).
{vi}
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    posterior_ : ndarray of shape (2 * n_params,)
        [μ, ρ] of q_t.
    theta_ : ndarray of shape (n_params,)
    posterior_samples_ : ndarray of shape (n_predict_samples, n_params)
    inducing_low_, inducing_high_ : ndarray of shape (n_features,)
        The box used for the last task.
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import GSFSVIClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = GSFSVIClassifier(learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.inducing_low_.shape  # the box of the inducing points, per feature
    (4,)
    >>> clf.predict_proba(data.test[0][0]).shape
    (10, 3)
    """

    def __init__(
        self,
        n_inducing_points=16,
        inducing_bounds=None,
        *,
        n_train_samples=10,
        n_predict_samples=100,
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

    _parameter_constraints = {
        **_VariationalClassifier._parameter_constraints,
        "n_inducing_points": [positive_int],
        "inducing_bounds": ["array-like", None],
    }

    def _make_consolidation(self):
        low = high = None
        if self.inducing_bounds is not None:
            n_features = self.n_features_in_
            try:
                low, high = self.inducing_bounds
                low = np.broadcast_to(np.asarray(low, np.float32), (n_features,))
                high = np.broadcast_to(np.asarray(high, np.float32), (n_features,))
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    "inducing_bounds must be None or a pair (low, high) of floats or "
                    f"arrays of shape (n_features,) = ({n_features},); got "
                    f"{self.inducing_bounds!r}."
                ) from exc
            if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and np.all(low <= high)):
                raise ValueError(
                    f"inducing_bounds must be finite with low <= high, "
                    f"got {self.inducing_bounds!r}."
                )
            low, high = np.array(low), np.array(high)
        return FunctionSpace(
            self._family(), int(self.n_train_samples), int(self.n_inducing_points),
            self.network_, low, high,
        )

    @property
    def inducing_low_(self):
        """Lower corner of the inducing points' box used for the last task."""
        check_is_fitted(self)
        return self.consolidation_.low

    @property
    def inducing_high_(self):
        """Upper corner of the inducing points' box used for the last task."""
        check_is_fitted(self)
        return self.consolidation_.high

