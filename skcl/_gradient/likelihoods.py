"""Negative log-likelihoods of the classification tasks (paper, eq. 2).

Both are *sums* over samples, not means: the loss recursion adds one task's
NLL to the previous loss, so its scale must grow with the data.

The same log-probabilities serve two worlds, named apart: traced JAX in
the working precision for the loss (:func:`log_likelihoods`, :func:`nll`),
and float64 NumPy on the host for predictions, under scikit-learn's names
for what ``predict_proba`` and ``predict_log_proba`` return
(:func:`proba`, :func:`log_proba`).
"""

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import log_expit, log_softmax
from sklearn.utils.class_weight import compute_sample_weight

__all__ = [
    "CATEGORICAL",
    "BERNOULLI",
    "nll",
    "within_task",
    "task_rows",
    "log_likelihoods",
    "proba",
    "log_proba",
    "check_class_weight",
    "likelihood_weights",
]

CATEGORICAL = "categorical"
"""Softmax output, one logit per class, categorical cross-entropy."""
BERNOULLI = "bernoulli"
"""One logit for the second class, sigmoid (Bernoulli) cross-entropy."""


def log_likelihoods(likelihood, logits):
    """log p(k | x, θ) of every class k, shape (n_samples, n_classes), in JAX.

    Traceable, in the logits' precision: the loss's building block. For
    ``BERNOULLI`` the single logit z gives [log σ(-z), log σ(z)].
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
    y : int array of shape (n_samples,) or (n_samples, 1 + n_classes)
        Class indices into ``classes_``; or, task-incremental, each row
        the class index followed by a 0/1 mask of the classes that compete
        (:func:`within_task`).
    weights : array of shape (n_samples,)
        Per-sample weights (class weights × sample weights; 0 for padding).

    Returns
    -------
    scalar
        ``-Σ_n w_n log p(y_n | x_n, θ)``, with p renormalised over the
        competing classes for a task-incremental ``y``.
    """
    if y.ndim == 2:
        # Renormalised from the logits themselves (log p up to a constant
        # per row), not from a log-softmax that a large logit outside the
        # task would have rounded.
        logp, y = within_task(_unnormalised(likelihood, logits), y[:, 1:]), y[:, 0]
    else:
        logp = log_likelihoods(likelihood, logits)
    picked = jnp.take_along_axis(logp, y[:, None], axis=1)[:, 0]
    return -jnp.sum(weights * picked)


def _unnormalised(likelihood, logits):
    """log p(k | x, θ) up to a constant per row: the logits ([0, z] for a sigmoid)."""
    if likelihood == BERNOULLI:
        return jnp.concatenate([jnp.zeros_like(logits[:, :1]), logits[:, :1]], axis=1)
    return logits


def within_task(logp, mask):
    """log p(k | x, k in the task): ``logp`` renormalised over ``mask``'s classes.

    The task-incremental likelihood (van de Ven, Tuytelaars and Tolias,
    2022): the classes outside the task are out of the softmax, so that
    learning a task does not push the other tasks' outputs down. The mask
    is data, not a static argument: one compiled loop serves every task.
    Entries outside the mask are returned but meaningless; a row with an
    empty mask (padding) is returned as it is. Safe to differentiate: no
    inf or NaN enters the masked entries' gradients.

    Parameters
    ----------
    logp : array of shape (n_samples, n_classes)
        log p(k | x), or anything equal to it up to a constant per row.
    mask : int or bool array of shape (n_samples, n_classes)

    Returns
    -------
    array of shape (n_samples, n_classes)
    """
    allowed = mask > 0
    some = jnp.any(allowed, axis=1, keepdims=True)
    top = jnp.max(jnp.where(allowed, logp, -jnp.inf), axis=1, keepdims=True)
    top = jax.lax.stop_gradient(jnp.where(some, top, 0.0))  # any shift gives the same value
    shifted = jnp.where(allowed, logp - top, 0.0)
    total = jnp.sum(jnp.where(allowed, jnp.exp(shifted), 0.0), axis=1, keepdims=True)
    return logp - top - jnp.log(jnp.where(some, total, 1.0))


def task_rows(y, competing, n_columns):
    """A task-incremental ``y`` for :func:`nll`: each index with its task's mask.

    Parameters
    ----------
    y : int ndarray of shape (n_samples,)
        Class indices.
    competing : int ndarray
        The indices of the classes that compete (the task's).
    n_columns : int
        Columns of :func:`log_likelihoods` (classes, or outputs).

    Returns
    -------
    int32 ndarray of shape (n_samples, 1 + n_columns)
    """
    mask = np.zeros(n_columns, np.int32)
    mask[competing] = 1
    return np.column_stack([y, np.broadcast_to(mask, (len(y), n_columns))]).astype(np.int32)


def proba(likelihood, logits):
    """Class probabilities in float64 NumPy, rows summing to one.

    Computed on the host in double precision so that probabilities and
    logits rank samples identically (scikit-learn checks this).
    """
    return np.exp(log_proba(likelihood, logits))


def log_proba(likelihood, logits):
    """Log class probabilities in float64 NumPy, finite wherever they are.

    Taken from the logits directly (log-softmax, log-sigmoid), not as the
    log of probabilities that may have underflowed to 0.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if likelihood == BERNOULLI:
        z = logits[:, 0]
        return np.stack([log_expit(-z), log_expit(z)], axis=1)
    return log_softmax(logits, axis=1)


def check_class_weight(class_weight):
    """Reject a ``class_weight`` that is not None, "balanced" or a dict of
    finite, non-negative weights (a negative weight would un-learn a class)."""
    cw = class_weight
    if not (cw is None or (isinstance(cw, str) and cw == "balanced") or isinstance(cw, dict)):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {cw!r}.")
    if isinstance(cw, dict):
        for label, weight in cw.items():
            if isinstance(weight, (bool, np.bool_)) \
                    or not isinstance(weight, (int, float, np.number)) \
                    or not np.isfinite(weight) or weight < 0:
                raise ValueError(
                    f"class_weight must map labels to finite, non-negative numbers; "
                    f"got {weight!r} for label {label!r}."
                )


def likelihood_weights(class_weight, classes, y, sample_weight):
    """Per-sample likelihood weights: sample weight × class weight.

    Parameters
    ----------
    class_weight : None, "balanced" or dict
        As in scikit-learn (``compute_sample_weight``): "balanced" weighs
        class i by n / (k · n_i), counted over the samples given (k: the
        number of classes present), which is the paper's m / n_i weighting
        (appendix C) up to a constant factor; a dict maps labels to
        weights (missing labels weigh 1).
    classes : ndarray of shape (n_classes,)
        The labels that ``y`` indexes.
    y : int ndarray of shape (n_samples,)
        Class indices into ``classes``.
    sample_weight : ndarray of shape (n_samples,)

    Returns
    -------
    ndarray of shape (n_samples,), float32
    """
    if isinstance(class_weight, dict):
        unknown = set(class_weight) - set(np.asarray(classes).tolist())
        if unknown:
            raise ValueError(
                f"class_weight has labels not in classes: {sorted(map(str, unknown))}."
            )
    if class_weight is None:
        return np.asarray(sample_weight, np.float32)
    weights = compute_sample_weight(class_weight, np.asarray(classes)[y])
    return (sample_weight * weights).astype(np.float32)
