"""Negative log-likelihoods of the classification tasks (paper, eq. 2).

Both are *sums* over samples, not means: the loss recursion adds one task's
NLL to the previous loss, so its scale must grow with the data.
"""

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import expit

__all__ = [
    "CATEGORICAL",
    "BERNOULLI",
    "nll",
    "log_probs",
    "probabilities",
    "check_class_weight",
    "likelihood_weights",
]

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
        p = expit(logits[:, 0])  # no overflow warning for very negative logits
        return np.stack([1.0 - p, p], axis=1)
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def check_class_weight(class_weight):
    """Reject a ``class_weight`` that is not None, "balanced" or a dict."""
    cw = class_weight
    if not (cw is None or (isinstance(cw, str) and cw == "balanced") or isinstance(cw, dict)):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {cw!r}.")


def likelihood_weights(class_weight, classes, y, sample_weight):
    """Per-sample likelihood weights: sample weight × class weight.

    Parameters
    ----------
    class_weight : None, "balanced" or dict
        "balanced" weighs class i by n / (k · n_i), counted over the
        samples given (k: the number of classes present), which is the
        paper's m / n_i weighting (appendix C) up to a constant factor; a
        dict maps labels to weights (missing labels weigh 1).
    classes : ndarray of shape (n_classes,)
        The labels that ``y`` indexes.
    y : int ndarray of shape (n_samples,)
        Class indices into ``classes``.
    sample_weight : ndarray of shape (n_samples,)

    Returns
    -------
    ndarray of shape (n_samples,), float32
    """
    n_classes = len(classes)
    if class_weight is None:
        table = np.ones(n_classes)
    elif isinstance(class_weight, str):
        counts = np.bincount(y, minlength=n_classes)
        present = counts > 0
        table = np.ones(n_classes)
        table[present] = len(y) / (present.sum() * counts[present])
    else:
        unknown = set(class_weight) - set(np.asarray(classes).tolist())
        if unknown:
            raise ValueError(
                f"class_weight has labels not in classes: {sorted(map(str, unknown))}."
            )
        table = np.array([float(class_weight.get(c, 1.0)) for c in np.asarray(classes).tolist()])
    return (sample_weight * table[y]).astype(np.float32)
