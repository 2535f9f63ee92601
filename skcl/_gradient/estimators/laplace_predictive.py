"""The Laplace predictive of the quadratic methods, as an estimator mixin.

AQC, EWC and online EWC stand in for L_t by a Gaussian posterior's
negative log density; with ``predictive`` other than "map" their
``predict_proba`` integrates the softmax over that Gaussian
(:mod:`skcl._gradient.consolidation.laplace` holds the mathematics).
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._utils.validation import StrOptions, positive_int, positive_real
from .. import keys, likelihoods
from ..consolidation.evidence import evidence_prior_precision
from ..consolidation.laplace import PREDICTIVES, laplace_log_proba, posterior_root
from ..consolidation.structures import curvature_spectrum

__all__ = ["LaplacePredictive", "fill_predictive"]


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
    predictive_prior_precision : "stored", "evidence" or finite float > 0, default="stored"
        The prior inside the predictive's posterior (never the training's).
        "stored": λ·diag(prior), as the penalty holds it. "evidence": an
        isotropic prior N(0, δ⁻¹ I) with δ maximising the Laplace evidence
        given the stored curvature, −½δ‖θ*‖² + ½P log δ − ½ log det(λC + δI)
        (laplace-torch's prior precision by marginal likelihood; MacKay's
        δ = γ/‖θ*‖²), so Σ = (λC + δI)⁻¹ (C's negative eigenvalues, float32
        rounding of a positive semi-definite sum, set to zero); a float:
        that δ. Only the Laplace predictives read it.
"""


def fill_predictive(cls):
    """Put the predictive's parameter docs where a docstring says ``{predictive}``."""
    cls.__doc__ = cls.__doc__.replace("{predictive}", _PREDICTIVE_PARAMS.strip("\n"))
    return cls


class LaplacePredictive:
    """predict_proba from the quadratic stand-in's Gaussian posterior.

    Mixed into the methods whose stand-in is a posterior precision (AQC,
    EWC, online EWC), before :class:`~skcl._gradient.base.GradientClassifier`,
    whose plug-in predictions it keeps for ``predictive="map"``. Besides
    the hyperparameter ``alpha`` (λ) it uses the base's protected members
    that every subclass may: ``_seed``, ``_unseen_output``,
    ``_complete_fold``, ``_input_dtypes`` and ``_check_prediction_params``
    (each prediction checks the settings it reads, which ``set_params``
    may have changed since fitting).
    """

    _predictive_constraints = {
        "predictive": [StrOptions(set(PREDICTIVES))],
        "n_predict_samples": [positive_int],
        "predictive_prior_precision": [StrOptions({"stored", "evidence"}), positive_real],
    }

    # λ too: the posterior's covariance is (λ H_t)⁻¹.
    _prediction_params = (*_predictive_constraints, "alpha")

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
        self._check_prediction_params()
        self._complete_fold()
        return self._posterior_root().covariance(self.network_.n_params)

    def _posterior_root(self):
        state, alpha, shapes = self.consolidation_, float(self.alpha), self.network_.layer_shapes
        delta = self.predictive_prior_precision
        if delta == "stored":
            return posterior_root(state, alpha, shapes)
        if getattr(self, "curvature", "ggn") == "hessian" and self.network_.hidden_layer_sizes:
            raise ValueError(
                "predictive_prior_precision other than 'stored' needs a positive "
                "semi-definite curvature, and the exact Hessian of a network with hidden "
                "layers can be indefinite: use curvature='ggn'.")
        # One eigendecomposition of λC serves both the evidence's δ and Σ.
        spectrum = (None if state.curvature is None
                    else curvature_spectrum(state, alpha, shapes))
        if delta == "evidence":
            delta = evidence_prior_precision(state, alpha, np.asarray(self.theta_), shapes,
                                             spectrum)
        return posterior_root(state, alpha, shapes, prior_precision=float(delta),
                              spectrum=spectrum)

    def _predictive_log_proba(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=self._input_dtypes)
        self._complete_fold()  # the same state an immediate fold gives
        bernoulli = self.likelihood_ == likelihoods.BERNOULLI
        n_outputs = self.network_.n_outputs - self._unseen_output
        key = keys.laplace_predictive_key(self._seed)
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
        self._check_prediction_params()
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
        self._check_prediction_params()
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
        self._check_prediction_params()
        if self.predictive == "map":
            return super().predict_log_proba(X)
        return self._predictive_log_proba(X)
