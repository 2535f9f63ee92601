"""Quadratic consolidations: ½(θ−θ*)ᵀH(θ−θ*), full or diagonal.

AQC keeps the full matrix H (paper, eq. 3); EWC and SI keep a diagonal.
The Gaussian prior of the first task, ½·precision·‖θ‖², is the special
case θ* = 0, H = precision·I, which is also where H starts: eq. 3 sums the
Hessians from i = 0, the prior's.
"""

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["FullQuadratic", "DiagonalQuadratic"]


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class FullQuadratic:
    """½(θ−θ*)ᵀ H (θ−θ*) with a full symmetric H (AQC).

    Attributes
    ----------
    center : array of shape (n_params,)
        θ*_{t-1}, the previous MAP estimate.
    curvature : array of shape (n_params, n_params)
        H_{t-1} = precision·I + Σ_i H(nll_i)(θ*_i).
    """

    center: jax.Array
    curvature: jax.Array

    @classmethod
    def prior(cls, n_params, precision):
        """The standard Gaussian prior with the given precision, as a quadratic."""
        return cls(
            np.zeros(n_params, np.float32),
            np.eye(n_params, dtype=np.float32) * np.float32(precision),
        )

    def penalty(self, theta):
        d = theta - self.center
        return 0.5 * d @ (self.curvature @ d)

    def add(self, center, curvature):
        """Re-centre at θ*_t and add a task's curvature (Huszár, 2017)."""
        return FullQuadratic(center, self.curvature + curvature)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class DiagonalQuadratic:
    """½ Σ_k h_k (θ_k − θ*_k)² with a diagonal H (EWC, SI, the prior).

    Attributes
    ----------
    center : array of shape (n_params,)
        θ*_{t-1}.
    curvature : array of shape (n_params,)
        The diagonal of H_{t-1}, starting at the prior's precision.
    """

    center: jax.Array
    curvature: jax.Array

    @classmethod
    def prior(cls, n_params, precision):
        """The standard Gaussian prior with the given precision."""
        return cls(
            np.zeros(n_params, np.float32),
            np.full(n_params, precision, dtype=np.float32),
        )

    def penalty(self, theta):
        d = theta - self.center
        return 0.5 * jnp.sum(self.curvature * d * d)

    def add(self, center, curvature):
        """Re-centre at θ*_t and add a task's diagonal importances."""
        return DiagonalQuadratic(center, self.curvature + curvature)
