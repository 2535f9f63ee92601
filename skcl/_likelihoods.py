"""Negative log-likelihoods of the classification tasks (paper, eq. 2).

Both are *sums* over samples, not means: the loss recursion adds one task's
NLL to the previous loss, so its scale must grow with the data.
"""

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["CATEGORICAL", "BERNOULLI", "nll", "log_probs", "probabilities"]

CATEGORICAL = "categorical"
"""Softmax output, one logit per class, categorical cross-entropy."""
BERNOULLI = "bernoulli"
"""One logit for the second class, sigmoid (Bernoulli) cross-entropy."""


def log_probs(likelihood, logits):
    """Log-probabilities of every class, shape (n_samples, n_classes).

    For ``BERNOULLI`` the single logit z gives [log σ(-z), log σ(z)].
    """
    if likelihood == BERNOULLI:
        z = logits[:, 0]
        return jnp.stack([jax.nn.log_sigmoid(-z), jax.nn.log_sigmoid(z)], axis=1)
    return jax.nn.log_softmax(logits, axis=1)


def nll(likelihood, logits, y, weights):
    """Weighted negative log-likelihood, summed over samples.

    Parameters
    ----------
    likelihood : {"categorical", "bernoulli"}
    logits : array of shape (n_samples, n_outputs)
    y : int array of shape (n_samples,)
        Class indices into ``classes_``.
    weights : array of shape (n_samples,)
        Per-sample weights (class weights × sample weights; 0 for padding).

    Returns
    -------
    scalar
        ``-Σ_n w_n log p(y_n | x_n, θ)``.
    """
    logp = log_probs(likelihood, logits)
    picked = jnp.take_along_axis(logp, y[:, None], axis=1)[:, 0]
    return -jnp.sum(weights * picked)


def probabilities(likelihood, logits):
    """Class probabilities in float64 NumPy, rows summing to one.

    Computed on the host in double precision so that probabilities and
    logits rank samples identically (scikit-learn checks this).
    """
    logits = np.asarray(logits, dtype=np.float64)
    if likelihood == BERNOULLI:
        p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
        return np.stack([1.0 - p, p], axis=1)
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)
