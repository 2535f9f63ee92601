"""A network with its likelihood: the model whose parameters θ are learned."""

from dataclasses import dataclass

from . import likelihoods
from .networks import MLP

__all__ = ["Model"]


@dataclass(frozen=True)
class Model:
    """The network f(x; θ) and the likelihood of its outputs.

    Hashable, so jitted functions take it as a static argument: one
    compiled training loop serves every task, λ and estimator with the
    same network.

    Parameters
    ----------
    network : MLP
    likelihood : {"categorical", "bernoulli"}
    """

    network: MLP
    likelihood: str

    def nll(self, theta, X, y, w):
        """nll(θ) = −Σ_n w_n log p(y_n | x_n, θ) of a (mini)batch, shape ()."""
        return likelihoods.nll(self.likelihood, self.network.apply(theta, X), y, w)
