"""The MAP objective of one task: nll_t(θ) + scale · penalty(θ)."""

from dataclasses import dataclass

from .. import _likelihoods
from .._networks import MLP

__all__ = ["MAPObjective"]


@dataclass(frozen=True)
class MAPObjective:
    """Data term and penalty of the loss recursion for one minibatch.

    Hashable, so it is a static argument of the jitted training loop.
    ``aux = (consolidation, scale)``: any pytree with a ``penalty(theta)``
    method, and the factor in front of it (1 for the prior of the first
    task, λ afterwards).

    Parameters
    ----------
    network : MLP
    likelihood : {"categorical", "bernoulli"}
    """

    network: MLP
    likelihood: str

    def data_term(self, theta, X, y, w):
        """nll(θ) of a (mini)batch, shape ()."""
        return _likelihoods.nll(self.likelihood, self.network.apply(theta, X), y, w)

    def __call__(self, theta, aux, X, y, w, key):
        consolidation, scale = aux
        return self.data_term(theta, X, y, w), scale * consolidation.penalty(theta)
