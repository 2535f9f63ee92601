"""Online EWC (Schwarz et al., 2018): EWC whose old importances decay.

H_t = precision·I + γ·Σ_{i<t} F_i + F_t, i.e. the tasks' diagonal Fisher
information is accumulated with a decay γ ∈ (0, 1] before each new task
is added, so that the penalty can follow a drifting solution instead of
hardening for ever. γ = 1 is EWC with Huszár's single penalty.
"""

from .base import consolidation
from .quadratic import Quadratic, QuadraticState

__all__ = ["OnlineEWC"]


@consolidation(static=("kind", "structure", "reduction"))
class OnlineEWC(Quadratic):
    """½λ(θ−θ*)ᵀ(precision·I + F*)(θ−θ*) with F* ← γ F* + F_t.

    Parameters
    ----------
    alpha : float
        λ.
    decay : float
        γ, the factor of the old importances at each new task.
    """

    decay: float = 1.0
    kind: str = "ggn"
    structure: str = "diag"
    reduction: str = "mean"

    def fold(self, model, state, task, key):
        F = self.task_curvature(model, task, key)
        total = F if state.curvature is None else state.curvature.scale(self.decay).add(F)
        return QuadraticState(task.end, state.prior, total)
