"""Quadratic consolidation: L_{t-1} ≈ ½λ(θ−θ*)ᵀ H (θ−θ*) (AQC, EWC; the prior).

H_{t-1} = precision·I + Σ_{i<t} C_i (paper, eq. 3: the sum starts at i = 0,
the prior's Hessian). The prior's part is kept as a diagonal vector, apart
from the tasks' curvature C, whose structure (full, Kronecker, diagonal)
and kind (Hessian, GGN, empirical Fisher) are the method's choice: the
first task never pays for a dense matrix. While task 1 is learned the
penalty is the prior alone, ½·precision·‖θ‖², with weight 1; afterwards
the whole quadratic is weighted by λ.
"""

import os
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from .base import Consolidation, consolidation
from .curvature import KINDS, STRUCTURES, competing_classes, task_curvature
from .structures import structure_nbytes

__all__ = ["QuadraticState", "Prior", "Quadratic", "quadratic_penalty", "prior_state"]


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class QuadraticState:
    """The stand-in ½λ(θ−θ*)ᵀ(diag(prior) + C)(θ−θ*) of the previous loss.

    Attributes
    ----------
    center : array of shape (n_params,)
        θ*_{t-1} (zero for the prior).
    prior : array of shape (n_params,)
        The prior's precision, the diagonal Hessian of L_0.
    curvature : FullCurvature, KroneckerCurvature, DiagonalCurvature or None
        Σ_{i<t} C_i; None before the first task is folded in.
    """

    center: jax.Array
    prior: jax.Array
    curvature: object = None

    def hessian_diagonal(self):
        """diag(H): the prior's precision plus the diagonal of C."""
        if self.curvature is None:
            return np.asarray(self.prior)
        return np.asarray(self.prior) + np.asarray(self.curvature.diag())

    def grow(self, growth):
        """The stand-in grown by the prior's block for the new coordinates.

        Mapped coordinates keep their centre (shifted where columns split
        one) and prior, and see the curvature through the map
        (``Growth``); fresh ones get the prior's precision and no
        curvature: no old task's loss depended on them. A stand-in centred
        at θ*_{t-1} (one with a curvature) centres them at
        ``growth.anchor`` (a new unseen-classes output at the old one's
        values); the prior alone keeps its mean, zero.
        """
        fill = (np.zeros(growth.n_params, np.float32) if self.curvature is None
                else growth.anchor)
        center = growth.embed(self.center, fill)
        prior = growth.embed(
            self.prior, np.full(growth.n_params, growth.prior_precision, np.float32), shift=False
        )
        curvature = None if self.curvature is None else self.curvature.grow(growth)
        return QuadraticState(center, prior, curvature)


def prior_state(n_params, precision):
    """L_0 = ½·precision·‖θ‖² as a quadratic centred at zero."""
    return QuadraticState(
        np.zeros(n_params, np.float32), np.full(n_params, precision, np.float32)
    )


def quadratic_penalty(state, theta, alpha):
    """½(θ−θ*)ᵀ H (θ−θ*), weighted by 1 for the prior alone and λ afterwards."""
    d = theta - state.center
    prior = 0.5 * jnp.sum(state.prior * d * d)
    if state.curvature is None:
        return prior
    return alpha * (prior + 0.5 * state.curvature.quadratic(d))


@consolidation()
class Prior(Consolidation):
    """The prior alone stands in for L_{t-1}: fine-tuning (it forgets)."""

    def init(self, model, prior_precision, theta0, key):
        return prior_state(model.network.n_params, prior_precision)

    def penalty(self, state, params, key):
        return quadratic_penalty(state, params, 1.0)

    def fold(self, model, state, task, key):
        return state

    def grow(self, state, growth, key):
        return state.grow(growth)


def _physical_memory():
    """Bytes of physical memory, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


# Dense matrices alive at once while a full C is computed and folded in:
# the running sum, the task's C and the new sum.
_FULL_COPIES = 3


def check_structure_fits(structure, layer_shapes, memory=None):
    """Refuse a full curvature that cannot fit, before anything is allocated.

    Raises
    ------
    MemoryError
        Naming the memory the full structure would need and the
        structures that fit.
    """
    if structure != "full":
        return
    memory = _physical_memory() if memory is None else memory
    need = _FULL_COPIES * structure_nbytes("full", layer_shapes)
    if memory is None or need <= memory:
        return
    n_params = sum((i + 1) * o for i, o in layer_shapes)
    raise MemoryError(
        f"structure='full' needs the {n_params:,}×{n_params:,} curvature matrix: "
        f"{structure_nbytes('full', layer_shapes) / 1e9:.1f} GB each, about "
        f"{need / 1e9:.1f} GB while a task is folded in, more than this machine's "
        f"{memory / 1e9:.1f} GB. Use structure='kron' "
        f"({structure_nbytes('kron', layer_shapes) / 1e6:.1f} MB per task) or "
        f"structure='diag' ({structure_nbytes('diag', layer_shapes) / 1e6:.2f} MB)."
    )


@consolidation(static=("kind", "structure", "reduction"))
class Quadratic(Consolidation):
    """½λ(θ−θ*_{t-1})ᵀ(precision·I + Σ_{i<t} C_i)(θ−θ*_{t-1}).

    Parameters
    ----------
    alpha : float
        λ.
    kind : {"hessian", "ggn", "sampled_fisher", "empirical_fisher"}
        What C_i measures (see :mod:`.curvature`): the estimators'
        ``curvature`` parameter. Here "curvature" names C itself
        (``QuadraticState.curvature``), hence the other word.
    structure : {"full", "kron", "diag"}
        How C_i is stored.
    reduction : {"sum", "mean"}
        C_i summed over the task's samples (AQC, paper eq. 4) or averaged
        (EWC as in the paper's code).
    """

    fold_can_wait = True  # the curvature it adds serves the next task only

    alpha: float
    kind: str = "hessian"
    structure: str = "full"
    reduction: str = "sum"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}.")
        if self.structure not in STRUCTURES:
            raise ValueError(f"structure must be one of {STRUCTURES}, got {self.structure!r}.")

    def init(self, model, prior_precision, theta0, key):
        check_structure_fits(self.structure, model.network.layer_shapes)
        return prior_state(model.network.n_params, prior_precision)

    def penalty(self, state, params, key):
        return quadratic_penalty(state, params, self.alpha)

    def task_curvature(self, model, task, key):
        """C_t of the finished task, summed or averaged over its samples
        (``key``: the sampled Fisher's draws)."""
        C = task_curvature(
            model, self.kind, self.structure, task.end, task.X, task.y, task.weights,
            batch_size=task.batch_size, competing=competing_classes(task.y), key=key,
        )
        return C.scale(1.0 / task.X.shape[0]) if self.reduction == "mean" else C

    def fold(self, model, state, task, key):
        C = self.task_curvature(model, task, key)
        total = C if state.curvature is None else state.curvature.add(C)
        return QuadraticState(task.end, state.prior, total)

    def grow(self, state, growth, key):
        return state.grow(growth)
