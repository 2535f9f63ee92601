"""The interface every method implements: what stands in for L_{t-1}.

Sequential MAP inference is the recursion L_t(θ) = L_{t-1}(θ) + nll_t(θ)
(paper, eq. 2). Once task t−1's data are gone, a method is one way of
approximating L_{t-1}. A :class:`Consolidation` says, in the style of
optax's ``GradientTransformation``:

* ``init``: how it starts — L_0, the Gaussian prior, always diagonal;
* ``penalty(state, θ)``: the stand-in for L_{t-1} while task t is learned,
  with its weight (1 for the prior, λ afterwards);
* ``fold``: how a finished task is folded in, giving the stand-in for L_t;
* ``grow``: how it follows an output layer that gains classes (optional;
  the parameters that did not exist when the old tasks were learned are
  constrained by the prior alone);
* optionally a per-step *trace* that the training loop carries without
  knowing what it is (SI's path integral), and hooks where a method truly
  differs from MAP: the data term (variational methods minimise an
  expected NLL), where a task starts and what it trains on (joint training
  replays the stored data).

A consolidation is a frozen dataclass registered as a JAX pytree: the
hyperparameters that compiled code takes as numbers (λ, ξ, r, ...) are
its leaves, so one compiled loop serves every value of them (and they can
be ``vmap``ped); what changes shapes or code paths (a structure, a
network's sizes, a number of steps) is static metadata. Its *state* is a
separate pytree of arrays, kept by the estimator between tasks.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Consolidation", "FinishedTask", "Growth", "consolidation"]


class FinishedTask(NamedTuple):
    """Everything a consolidation may use to fold in the task just learned.

    Attributes
    ----------
    start, end : arrays like the parameters
        The parameters when the task started and at its end (θ*_t).
    X : array of shape (n_samples, n_features)
    y : int array of shape (n_samples,)
        Class indices.
    weights : array of shape (n_samples,)
        Per-sample likelihood weights (class weight × sample weight).
    sample_weight : array of shape (n_samples,)
        The sample weights alone, before class weights.
    trace : pytree or None
        The per-step trace at the end of the task (see
        :meth:`Consolidation.init_trace`).
    batch_size : int
        The minibatch size of training, which also bounds the memory of
        sums over the task's data.
    """

    start: Any
    end: Any
    X: Any
    y: Any
    weights: Any
    sample_weight: Any
    trace: Any
    batch_size: int


class Growth(NamedTuple):
    """An output layer that gains columns, for :meth:`Consolidation.grow`.

    Every coordinate j of the grown θ either is fresh (``source[j] = -1``)
    or stands for old coordinate ``source[j]`` with share ``weight[j]``:
    the old parameters are recovered as θ_old = E θ_new + ``offset`` with
    E[source[j], j] = weight[j] (:meth:`pull`). A moved column has share 1;
    k new classes that split the old unseen-classes output u have 1/k each
    and start at u's weights with the bias lowered by log k, so that the
    log-sum-exp of their logits equals u's logit: to first order the old
    tasks' losses see their mean, and to second order also their
    differences, through the normaliser (:attr:`splits`,
    ``structures.split_coupling``; see the user guide).

    Attributes
    ----------
    old_model, new_model : skcl._gradient.model.Model
        The model before and after; only the output layer differs.
    source, weight : arrays of shape (new n_params,)
    shift : array of shape (new n_params,)
        Added to a mapped coordinate's old value (−log k on split biases).
    offset : array of shape (old n_params,)
    out_source, out_weight : arrays of shape (new n_outputs,)
        The same map on output columns (for K-FAC's output factor).
    columns : int array of shape (n_old_classes,)
        The new column of every old class (class indices move when a new
        label sorts before them).
    theta : array of shape (new n_params,)
        The grown θ*: mapped coordinates from the old θ*, fresh ones at
        their ``anchor`` where it is set, else as a fresh network
        initialises them.
    prior_precision : float
        The precision of L_0, the prior the fresh coordinates carry.
    anchor : float32 array of shape (new n_params,)
        Where a stand-in centred at θ*_{t-1} centres each fresh coordinate.
        Zero, the prior's mean, except for a new unseen-classes output:
        the old one's weights and bias. It stands for the classes still
        unseen, which every old task pushed down as it did the old
        output; left at zero, its logit would rise on the old tasks'
        inputs and the next new classes, which split it, would take their
        samples. The prior's precision stays its only curvature (the
        data's, p(1 − p) at a pushed-down logit, is about zero).
    """

    old_model: Any
    new_model: Any
    source: Any
    weight: Any
    shift: Any
    offset: Any
    out_source: Any
    out_weight: Any
    columns: Any
    theta: Any
    prior_precision: float
    anchor: Any

    @property
    def n_params(self):
        """Length of the grown θ."""
        return self.new_model.network.n_params

    @property
    def mapped(self):
        """Indices of the grown θ's coordinates that stand for old ones."""
        return np.flatnonzero(np.asarray(self.source) >= 0)

    @property
    def new_coordinates(self):
        """Indices of the fresh coordinates, constrained by the prior alone."""
        return np.flatnonzero(np.asarray(self.source) < 0)

    @property
    def splits(self):
        """The old output columns that k ≥ 2 new columns split.

        Returns
        -------
        list of (int, int ndarray of shape (k,), ndarray of shape (k,))
            The old column, the new columns and their shares π (summing
            to 1).
        """
        source, share = np.asarray(self.out_source), np.asarray(self.out_weight)
        groups = []
        for old in np.unique(source[source >= 0]):
            columns = np.flatnonzero(source == old)
            if len(columns) > 1:
                groups.append((int(old), columns, share[columns]))
        return groups

    def embed(self, old, fill, shift=True):
        """A per-coordinate vector of the old θ carried over to the grown one.

        ``fill`` (shape (new n_params,)) gives the fresh coordinates; with
        ``shift`` the mapped ones get :attr:`shift` added (values of θ,
        not precisions).
        """
        out = np.array(fill, dtype=np.asarray(old).dtype)
        m = self.mapped
        out[m] = np.asarray(old)[np.asarray(self.source)[m]]
        if shift:
            out[m] += np.asarray(self.shift)[m].astype(out.dtype)
        return out

    def pull(self, theta):
        """θ_old = E θ + offset, the old parameters a grown θ stands for (jnp)."""
        m = self.mapped
        n_old = self.old_model.network.n_params
        weighted = jnp.asarray(self.weight[m], theta.dtype) * theta[m]
        return jnp.zeros(n_old, theta.dtype).at[self.source[m]].add(weighted) + jnp.asarray(
            self.offset, theta.dtype)


class Consolidation(ABC):
    """One method of the loss recursion (the stand-in for L_{t-1}).

    Subclasses are frozen dataclasses decorated with :func:`consolidation`.
    The three abstract methods are the whole contract of a MAP method; the
    others have defaults that fit MAP methods.
    """

    #: Whether ``fold`` only prepares the next task, predictions using
    #: θ*_t alone: it may then wait until a next task comes, and a
    #: hyperparameter search, which scores a candidate after its last task
    #: and trains it no further, need not pay for it.
    fold_can_wait = False

    @abstractmethod
    def init(self, model, prior_precision, theta0, key):
        """The state before the first task: L_0 = ½·precision·‖θ‖².

        Parameters
        ----------
        model : skcl._gradient.model.Model
        prior_precision : float
        theta0 : array of shape (n_params,)
            The network's initialisation θ_0.
        key : PRNG key
            For methods that need more than θ_0 to start (a mixture's
            components).
        """

    @abstractmethod
    def penalty(self, state, params, key):
        """The stand-in for L_{t-1} at ``params``, shape ().

        The training loop divides it by the number of minibatches (paper,
        section II-B, step 2). ``key`` is a fresh key per step, for methods
        whose penalty is a Monte Carlo estimate.
        """

    @abstractmethod
    def fold(self, model, state, task, key):
        """Fold the finished ``task`` (a :class:`FinishedTask`) into the state."""

    # ----------------------------------------------------------- defaults

    def prepare(self, state, X, y, sample_weight):
        """Before a task: the state and the data it trains on."""
        return state, X, y, sample_weight

    def start(self, state, theta):
        """The parameters the optimiser starts from: the previous θ*."""
        return theta

    def data_term(self, model, params, X, y, w, key):
        """The minibatch's data term: nll(θ)."""
        return model.nll(params, X, y, w)

    def init_trace(self, state, params):
        """The per-step trace at a task's start (``None``: no trace)."""
        return None

    def update_trace(self, trace, params, data_grad, update):
        """The trace after one optimiser step.

        Parameters
        ----------
        trace : pytree
        params : array
            The parameters before the step.
        data_grad : array like params
            The gradient of the minibatch's data term at ``params``.
        update : array like params
            The step the optimiser takes (new params − params).
        """
        return trace

    def point_estimate(self, state, params):
        """θ*_t, the network parameters that predict, from the trained params."""
        return params

    def grow(self, state, growth, key):
        """The state for an output layer that gained classes.

        Called on the consolidation of the network before growth. The old
        tasks' losses did not depend on the new parameters when they were
        learned, so the stand-in for L_{t-1} grows by the prior's block for
        them (see the user guide for what this neglects: the new logits in
        the old tasks' softmax normaliser).

        Parameters
        ----------
        state : pytree
            The state before growth.
        growth : Growth
        key : PRNG key
            For methods that refit something (NC's consolidator).
        """
        raise NotImplementedError(
            f"{type(self).__name__} cannot follow an output layer that gains classes; "
            "pass every class on the first call to partial_fit."
        )

    def task_keys(self, key):
        """Split a task's key into the training key and the fold key."""
        train_key, fold_key = jax.random.split(key)
        return train_key, fold_key


def consolidation(*, static=()):
    """Make a frozen dataclass a :class:`Consolidation` pytree.

    Fields named in ``static`` are compile-time metadata (hashable); every
    other field is a leaf, traced by ``jit`` (give it a float, not an int,
    so that its dtype stays the same across values).
    """

    def wrap(cls):
        cls = dataclass(frozen=True)(cls)
        names = [f.name for f in fields(cls)]
        data = [name for name in names if name not in static]
        return jax.tree_util.register_dataclass(
            cls, data_fields=data, meta_fields=[name for name in names if name in static]
        )

    return wrap
