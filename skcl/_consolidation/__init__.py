"""Consolidations: what stands in for the previous loss L_{t-1}.

Each consolidation is a JAX pytree of arrays with a ``penalty(theta)``
method; the estimators fold a finished task into it with the functions of
the method's module. See ``DESIGN.md`` for the table of methods.
"""

from .neural import NeuralConsolidation
from .objective import MAPObjective
from .quadratic import DiagonalQuadratic, FullQuadratic

__all__ = ["MAPObjective", "DiagonalQuadratic", "FullQuadratic", "NeuralConsolidation"]
