"""Class growth of a gradient-trained classifier's network and consolidation.

With ``grow_classes=True`` a task may bring labels the network has no
output for. :func:`grow_network` gives the output layer a column for each,
maps the old parameters to their new places and lets the consolidation
(the stand-in for L_{t-1}) grow with them (``Consolidation.grow``).
"""

import jax
import numpy as np

from . import _likelihoods
from ._consolidation import Growth
from ._model import Model
from ._networks import MLP, grown_map, output_column

__all__ = ["grow_network"]


def grow_network(estimator, classes):
    """Give the output layer a column for each new class of ``classes``.

    The old columns move to their classes' sorted places, keeping their
    values. With the "unseen classes" output u (trained on every old
    task to lose), the k new classes split it: each starts at u's
    weights with the bias lowered by log k, so that the log-sum-exp of
    their logits is u's logit, and the consolidation sees their mean
    where it saw u (``Growth``), and a quadratic one also their
    differences through the normaliser (``structures.split_coupling``).
    A new unseen-classes output is appended, for the classes still
    unseen: it starts as a copy of u, and is constrained by the prior's
    precision alone, centred at u's old values by the methods whose
    stand-in is centred at θ*_{t-1} (``Growth.anchor``). Without u (an
    estimator fitted with grow_classes=False), the new columns are
    fresh: what a fresh network's initialisation (the first task's key)
    puts there, constrained by the prior alone (``Consolidation.grow``).

    Sets the estimator's ``network_``, ``classes_``, ``theta_`` and
    ``consolidation_`` (inside its ``partial_fit`` transaction) and returns
    the ``Growth`` that mapped them.
    """
    if estimator.likelihood_ == _likelihoods.BERNOULLI:
        raise ValueError(
            f"{type(estimator).__name__} learned its first task with two classes and "
            "grow_classes=False, i.e. with one sigmoid output, which cannot gain "
            f"classes {np.setdiff1d(classes, estimator.classes_).tolist()}. Set "
            "grow_classes=True before the first task (the output is then a "
            "softmax), or pass every class on the first call."
        )
    unseen = estimator._unseen_output
    k_old = len(estimator.classes_)
    columns = np.searchsorted(classes, estimator.classes_)
    added = np.setdiff1d(np.arange(len(classes)), columns)
    old = estimator.network_
    network = MLP(old.n_features, old.hidden_layer_sizes, len(classes) + unseen)
    out_source = np.full(network.n_outputs, -1)
    out_weight = np.zeros(network.n_outputs)
    out_shift = np.zeros(network.n_outputs)
    out_source[columns], out_weight[columns] = np.arange(k_old), 1.0
    if unseen:
        out_source[added], out_weight[added] = k_old, 1.0 / len(added)
        out_shift[added] = -np.log(len(added))
    source, weight, _ = grown_map(old, network, out_source, out_weight)
    shift = np.zeros(network.n_params)
    shift[-network.n_outputs :] = out_shift  # the output biases close θ
    offset = np.zeros(old.n_params)
    if unseen:  # u's bias = mean of the split biases + log k
        offset[old.n_params - 1] = np.log(len(added))
    root = jax.random.PRNGKey(estimator._seed)
    theta = np.array(network.init(jax.random.fold_in(root, 2**31 - 1)))
    m = source >= 0
    theta[m] = estimator.theta_[source[m]] + shift[m].astype(theta.dtype)
    anchor = np.zeros(network.n_params, np.float32)
    if unseen:
        # The new unseen-classes output stands for the classes still
        # unseen, which every old task pushed down as it did the old
        # output: it starts at the old one's weights and bias, and a
        # stand-in centred at θ*_{t-1} centres it there (Growth.anchor).
        new_u = output_column(network, network.n_outputs - 1)
        anchor[new_u] = estimator.theta_[output_column(old, old.n_outputs - 1)]
        theta[new_u] = anchor[new_u]
    growth = Growth(
        estimator._model(), Model(network, estimator.likelihood_), source, weight, shift, offset,
        out_source, out_weight, columns, theta, float(estimator.prior_precision), anchor,
    )
    key = jax.random.fold_in(estimator._task_key(), 2**31 - 3)
    state = estimator._make_consolidation().grow(estimator.consolidation_, growth, key)
    estimator.consolidation_ = jax.tree.map(np.asarray, state)
    estimator.network_, estimator.classes_, estimator.theta_ = network, classes, theta
    return growth
