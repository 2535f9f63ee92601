"""Consolidations: what stands in for the previous loss L_{t-1}.

Every method is a :class:`Consolidation` (``base``): how it starts (the
prior), its ``penalty``, how it folds in a finished task, and where needed
a per-step trace. One module per method family:

* ``quadratic`` — the prior alone (fine-tuning) and ½λ(θ−θ*)ᵀH(θ−θ*) with
  H's kind and structure chosen from ``curvature`` and ``structures``
  (AQC, EWC);
* ``online_ewc`` — EWC with decaying importances;
* ``synaptic`` — SI's path integral;
* ``neural`` — NC's consolidator network;
* ``variational`` — the posteriors of sequential VI;
* ``replay`` — joint training, which keeps the data.
"""

from .base import Consolidation, FinishedTask, Growth
from .neural import Neural
from .online_ewc import OnlineEWC
from .quadratic import Prior, Quadratic, prior_state
from .replay import Replay
from .synaptic import PathIntegral
from .variational import FunctionSpace, Variational

__all__ = [
    "Consolidation",
    "FinishedTask",
    "FunctionSpace",
    "Growth",
    "Neural",
    "OnlineEWC",
    "PathIntegral",
    "Prior",
    "Quadratic",
    "Replay",
    "Variational",
    "prior_state",
]
