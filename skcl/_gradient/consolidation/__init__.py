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

Two things, two words. A *consolidation* is the method: a
:class:`Consolidation` object, built from an estimator's hyperparameters
(``_make_consolidation``), holding no task's data, so that it is rebuilt
at will and passed to compiled code as a pytree of its numbers. Its
*state* is what it accumulates: the pytree of arrays that ``init`` starts,
``fold`` extends and ``penalty`` reads, the stand-in for L_{t-1} itself.
The estimators keep the state in their public fitted attribute
``consolidation_`` (a name older than this distinction, kept for users);
inside skcl, code says ``method`` or ``consolidation`` for the object and
``state`` for the arrays.
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
