"""Synaptic intelligence (SI; Zenke et al., 2017): a path integral as curvature.

While a task is learned, the training loop carries this consolidation's
trace, ω_k = Σ_steps −g_k Δθ_k with g the gradient of the data term alone;
at the task's end ω becomes the diagonal curvature
Ω_k = ω_k / ((θ*_{t,k} − θ*_{t-1,k})² + ξ), added to the quadratic penalty.
"""

import jax.numpy as jnp

from .base import Consolidation, consolidation
from .quadratic import QuadraticState, prior_state, quadratic_penalty
from .structures import DiagonalCurvature

__all__ = ["PathIntegral", "path_importance"]


def path_importance(path_integral, theta_start, theta_end, damping):
    """SI's per-parameter importance of one task.

    ``Ω_k = ω_k / ((θ_end,k − θ_start,k)² + ξ)`` with ``ω_k = Σ_steps
    −g_k Δθ_k`` the path integral of the data term's gradient along the
    task's optimisation (Zenke et al., 2017, eq. 5). ω_k is the loss
    decrease credited to parameter k, so it is non-negative when the
    optimiser descends.

    Parameters
    ----------
    path_integral : array of shape (n_params,)
        ω, the trace of :class:`PathIntegral` at the task's end.
    theta_start, theta_end : arrays of shape (n_params,)
        Parameters before and after the task.
    damping : float
        ξ > 0, keeps Ω finite for parameters that barely moved.
    """
    delta = theta_end - theta_start
    return path_integral / (delta * delta + damping)


@consolidation()
class PathIntegral(Consolidation):
    """½λ(θ−θ*)ᵀ diag(precision + Σ_i Ω_i)(θ−θ*), Ω from the path integral.

    Parameters
    ----------
    alpha : float
        λ.
    damping : float
        ξ.
    """

    fold_can_wait = True  # the importances it adds serve the next task only

    alpha: float
    damping: float

    def init(self, model, prior_precision, theta0, key):
        return prior_state(model.network.n_params, prior_precision)

    def penalty(self, state, params, key):
        return quadratic_penalty(state, params, self.alpha)

    def init_trace(self, state, params):
        return jnp.zeros_like(params)

    def update_trace(self, trace, params, data_grad, update):
        return trace - data_grad * update

    def fold(self, model, state, task, key):
        omega = DiagonalCurvature(path_importance(task.trace, task.start, task.end, self.damping))
        total = omega if state.curvature is None else state.curvature.add(omega)
        return QuadraticState(task.end, state.prior, total)

    def grow(self, state, growth, key):
        return state.grow(growth)
