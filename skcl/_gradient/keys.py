"""The random key streams of a gradient-trained estimator, each named once.

Every key an estimator uses derives from one seed, drawn from its
``random_state`` on the first task, by ``jax.random.fold_in`` of the
root key ``PRNGKey(seed)``: the task keys at the task's index (0, 1, ...),
the other streams at indices from ``2**31 - 1`` down, which no task
reaches. Within a task, the consolidation splits the task key further
(``Consolidation.task_keys``: training and fold), and the streams of
:func:`growth_key` and :func:`prediction_key` are folded into it.
"""

import jax

__all__ = [
    "consolidation_init_key",
    "growth_key",
    "init_key",
    "laplace_predictive_key",
    "prediction_key",
    "task_key",
]

# The streams' indices below 2**31 (fold_in takes 32-bit data); tasks count from 0.
_INIT = 2**31 - 1
_CONSOLIDATION_INIT = 2**31 - 2
_LAPLACE_PREDICTIVE = 2**31 - 3
# Folded into a task's key, not the root:
_GROWTH = 2**31 - 3
_PREDICTION = 7


def _root(seed):
    return jax.random.PRNGKey(seed)


def init_key(seed):
    """The network's initialisation, also of the columns class growth adds."""
    return jax.random.fold_in(_root(seed), _INIT)


def consolidation_init_key(seed):
    """The consolidation's ``init`` (the stand-in for L_0)."""
    return jax.random.fold_in(_root(seed), _CONSOLIDATION_INIT)


def laplace_predictive_key(seed):
    """The Monte Carlo samples of the Laplace predictive (``predictive="mc"``),
    the same for every call: predictions are deterministic."""
    return jax.random.fold_in(_root(seed), _LAPLACE_PREDICTIVE)


def task_key(seed, task):
    """Task ``task``'s key (counted from 0): its training and its fold."""
    return jax.random.fold_in(_root(seed), task)


def growth_key(seed, task):
    """The consolidation's ``grow`` when task ``task`` brings new classes."""
    return jax.random.fold_in(task_key(seed, task), _GROWTH)


def prediction_key(task_key):
    """A variational posterior's prediction samples after the task of ``task_key``."""
    return jax.random.fold_in(task_key, _PREDICTION)
