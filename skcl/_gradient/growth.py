"""Class growth of a gradient-trained classifier's network.

With ``grow_classes=True`` a task may bring labels the network has no
output for. :func:`grow_network`, a pure function, gives the output layer
a column for each and maps the old parameters to their new places; it
returns the grown network and parameters and the map (``Growth``), with
which the estimator lets its consolidation (the stand-in for L_{t-1})
grow too (``Consolidation.grow``).
"""

from dataclasses import replace

import numpy as np

from .consolidation import Growth
from .model import Model
from .networks import grown_map, output_column

__all__ = ["grow_network"]


def grow_network(network, likelihood, theta, old_classes, classes, *, unseen,
                 prior_precision, init_key):
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
    fresh: what a fresh network's initialisation (``init_key``) puts
    there, constrained by the prior alone (``Consolidation.grow``).

    Parameters
    ----------
    network : skcl._gradient.networks.MLP
        The network so far, with a softmax output per class of
        ``old_classes`` (plus u when ``unseen``).
    likelihood : str
        The likelihood of the network's outputs (categorical).
    theta : ndarray of shape (network.n_params,)
        θ*_{t-1}.
    old_classes, classes : ndarray
        The classes so far and all of them now (sorted, a superset).
    unseen : int
        1 when the network's last output is u, else 0.
    prior_precision : float
        The precision of L_0, the prior the fresh coordinates carry.
    init_key : PRNG key
        The network's initialisation key (``skcl._gradient.keys.init_key``).

    Returns
    -------
    network : skcl._gradient.networks.MLP
        The grown network.
    theta : ndarray of shape (network.n_params,)
        θ*_{t-1} in the grown network.
    growth : skcl._gradient.consolidation.Growth
        The map from the old parameters to the new, for the consolidation.
    """
    old, old_theta = network, theta
    k_old = len(old_classes)
    columns = np.searchsorted(classes, old_classes)
    added = np.setdiff1d(np.arange(len(classes)), columns)
    network = replace(old, n_outputs=len(classes) + unseen)  # keeps the activation
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
    theta = np.array(network.init(init_key))
    m = source >= 0
    theta[m] = old_theta[source[m]] + shift[m].astype(theta.dtype)
    anchor = np.zeros(network.n_params, np.float32)
    if unseen:
        # The new unseen-classes output stands for the classes still
        # unseen, which every old task pushed down as it did the old
        # output: it starts at the old one's weights and bias, and a
        # stand-in centred at θ*_{t-1} centres it there (Growth.anchor).
        new_u = output_column(network, network.n_outputs - 1)
        anchor[new_u] = old_theta[output_column(old, old.n_outputs - 1)]
        theta[new_u] = anchor[new_u]
    growth = Growth(
        Model(old, likelihood), Model(network, likelihood), source, weight, shift, offset,
        out_source, out_weight, columns, theta, prior_precision, anchor,
    )
    return network, theta, growth
