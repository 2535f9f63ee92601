"""Joint training: nothing is approximated, the old data are kept.

L_{t-1} = L_0 + Σ_{i<t} nll_i exactly, by training task t on all the data
seen so far with the prior as the only penalty — the upper reference.
"""

from dataclasses import dataclass

import jax
import numpy as np

from .base import Consolidation, consolidation
from .quadratic import prior_state, quadratic_penalty

__all__ = ["Replay", "ReplayState"]


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class ReplayState:
    """The prior and every sample seen so far (None before the first task)."""

    prior: object
    X: object = None
    y: object = None
    sample_weight: object = None


@consolidation()
class Replay(Consolidation):
    """Train each task on the union of all tasks' data (joint MAP training)."""

    def init(self, model, prior_precision, theta0, key):
        return ReplayState(prior_state(model.network.n_params, prior_precision))

    def prepare(self, state, X, y, sample_weight):
        # The kept data join the task's; the state that trains holds the prior
        # alone (all its penalty needs), so that tasks, whatever data are
        # kept, share one compiled training loop.
        if state.X is not None:
            X = np.concatenate([state.X, X])
            y = np.concatenate([state.y, y])
            sample_weight = np.concatenate([state.sample_weight, sample_weight])
        return ReplayState(state.prior), X, y, sample_weight

    def penalty(self, state, params, key):
        return quadratic_penalty(state.prior, params, 1.0)

    def fold(self, model, state, task, key):
        return ReplayState(state.prior, task.X, task.y, task.sample_weight)

    def grow(self, state, growth, key):
        # The stored labels are class indices, which move with their columns.
        y = None if state.y is None else np.asarray(growth.columns)[state.y].astype(state.y.dtype)
        return ReplayState(state.prior.grow(growth), state.X, y, state.sample_weight)

    def task_keys(self, key):
        return key, None
