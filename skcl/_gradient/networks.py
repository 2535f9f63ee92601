"""Fully connected networks as pure functions of one flat parameter vector.

Every method in skcl works on the flat vector θ (``ravel_pytree`` order:
layer by layer, weights then biases), because AQC's Hessian, EWC's and
SI's importances and NC's consolidator all live on that vector. A network
is a small frozen description (hashable, so jitted functions take it as a
static argument) that knows how to cut θ into layers.
"""

from dataclasses import dataclass
from math import prod

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["ACTIVATIONS", "MLP", "apply_numpy", "check_same_hidden", "grown_map", "output_column"]

ACTIVATIONS = {
    "swish": jax.nn.swish,
    "relu": jax.nn.relu,
    "tanh": jnp.tanh,
    "logistic": jax.nn.sigmoid,
    "identity": lambda z: z,
}
"""The hidden units' activations by name (scikit-learn's names; swish is
skcl's default, the paper's network): the jitted forward pass's functions."""


def _numpy_activation(name, z):
    """``ACTIVATIONS[name]`` in float64 NumPy (z is modified in place when it can be)."""
    from scipy.special import expit

    if name == "swish":
        return z * expit(z)
    if name == "relu":
        return np.maximum(z, 0.0, out=z)
    if name == "tanh":
        return np.tanh(z, out=z)
    if name == "logistic":
        return expit(z, out=z)
    if name == "identity":
        return z
    raise ValueError(f"Unknown activation {name!r}; expected one of {sorted(ACTIVATIONS)}.")


@dataclass(frozen=True)
class MLP:
    """A fully connected network: dense layers, an activation between them.

    With no hidden layers it is softmax (or logistic) regression, the
    paper's "SR" model.

    Parameters
    ----------
    n_features : int
        Input dimension.
    hidden_layer_sizes : tuple of int
        Width of each hidden layer, ``()`` for none.
    n_outputs : int
        Output dimension: the number of classes, or 1 for a Bernoulli
        (sigmoid) output.
    activation : str, default="swish"
        The hidden units' activation, a key of :data:`ACTIVATIONS`. The
        default keeps networks pickled before the field existed as they
        were (a missing attribute reads the class's default).
    """

    n_features: int
    hidden_layer_sizes: tuple
    n_outputs: int
    activation: str = "swish"

    @property
    def layer_sizes(self):
        return (self.n_features, *self.hidden_layer_sizes, self.n_outputs)

    @property
    def shapes(self):
        """Shapes of the arrays in θ, in order: W0, b0, W1, b1, ..."""
        sizes = self.layer_sizes
        shapes = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            shapes += [(fan_in, fan_out), (fan_out,)]
        return tuple(shapes)

    @property
    def n_params(self):
        """Length of θ."""
        return sum(prod(shape) for shape in self.shapes)

    def unflatten(self, theta):
        """Cut θ of shape (n_params,) into [(W0, b0), (W1, b1), ...]."""
        arrays, start = [], 0
        for shape in self.shapes:
            size = prod(shape)
            arrays.append(theta[start : start + size].reshape(shape))
            start += size
        return list(zip(arrays[::2], arrays[1::2]))

    def init(self, key):
        """Lecun-normal weights and zero biases (paper, appendix C).

        Returns
        -------
        theta : jax.Array of shape (n_params,), float32
        """
        init_weight = jax.nn.initializers.lecun_normal()
        keys = jax.random.split(key, len(self.layer_sizes) - 1)
        parts = []
        for k, (fan_in, fan_out) in zip(keys, zip(self.layer_sizes[:-1], self.layer_sizes[1:])):
            parts += [init_weight(k, (fan_in, fan_out)).ravel(), jnp.zeros(fan_out)]
        return jnp.concatenate(parts).astype(jnp.float32)

    def apply(self, theta, X):
        """Logits of shape (n_samples, n_outputs) for X of shape (n_samples, n_features)."""
        return self.forward(theta, X)[0]

    def forward(self, theta, X, offsets=None):
        """Logits, and the input of every dense layer, for the curvature.

        Parameters
        ----------
        theta : array of shape (n_params,)
        X : array of shape (n_samples, n_features)
        offsets : sequence of arrays, default=None
            One per layer, broadcastable to that layer's pre-activations
            z_l = a_l W_l + b_l (shape (n_samples, fan_out_l)) and added to
            them. Differentiating with respect to zero offsets gives the
            derivatives with respect to the pre-activations, which is what
            the layer-wise (Kronecker and diagonal) curvatures need.

        Returns
        -------
        logits : array of shape (n_samples, n_outputs)
        inputs : list of arrays of shape (n_samples, fan_in_l)
            a_l, the input of layer l (X for the first layer).
        """
        layers = self.unflatten(theta)
        offsets = offsets if offsets is not None else [0.0] * len(layers)
        activation = ACTIVATIONS[self.activation]
        h, inputs = X, []
        for i, (W, b) in enumerate(layers):
            inputs.append(h)
            z = h @ W + b + offsets[i]
            h = activation(z) if i < len(layers) - 1 else z
        return h, inputs

    @property
    def layer_shapes(self):
        """(fan_in, fan_out) of every dense layer."""
        sizes = self.layer_sizes
        return tuple(zip(sizes[:-1], sizes[1:]))


def apply_numpy(network, theta, X):
    """``network.apply`` in float64 NumPy, for prediction.

    Prediction runs on inputs of any length; NumPy needs no compilation per
    shape and double precision keeps probabilities consistent with logits.
    """
    theta = np.asarray(theta, dtype=np.float64)
    h = np.asarray(X, dtype=np.float64)
    layers = network.unflatten(theta)
    for W, b in layers[:-1]:
        h = _numpy_activation(network.activation, h @ W + b)
    W, b = layers[-1]
    return h @ W + b


def check_same_hidden(network, hidden_layer_sizes, activation):
    """Refuse hidden layers (sizes or activation) other than ``network``'s.

    An estimator's settings may change between its ``partial_fit`` calls;
    those that shape the network cannot once it is learned.

    Raises
    ------
    ValueError
        Naming the setting, its value and the network's.
    """
    for name, value, learned in [
        ("hidden_layer_sizes", hidden_layer_sizes, network.hidden_layer_sizes),
        ("activation", activation, network.activation),
    ]:
        if value != learned:
            raise ValueError(
                f"{name} is {value!r} but the network learned so far has {learned!r}; it "
                "cannot change between tasks. Call fit, or clone the estimator, to start a "
                "new sequence."
            )


def grown_map(old, new, out_source, out_weight):
    """How the grown θ relates to the old one, coordinate by coordinate.

    Only the last layer changes: its augmented weight matrix W̃ = [W; b] of
    shape (fan_in + 1, n_outputs) is stored row-major, so new output
    column ``c`` of row ``r`` sits at ``r·K_new + c``; the hidden layers,
    which come first in θ, keep their positions.

    Parameters
    ----------
    old, new : MLP
        The networks before and after; the same but for ``n_outputs``.
    out_source : int array of shape (new.n_outputs,)
        The old output column each new one stands for, -1 for a fresh one.
    out_weight : float array of shape (new.n_outputs,)
        Its share of that old column (1, or 1/k for k columns splitting one).

    Returns
    -------
    source : int ndarray of shape (new.n_params,)
        The old coordinate each new one stands for, -1 for a fresh one.
    weight : ndarray of shape (new.n_params,)
        The share, 0 for fresh coordinates.
    bias : bool ndarray of shape (new.n_params,)
        Whether the coordinate is an output bias.
    """
    if old.layer_sizes[:-1] != new.layer_sizes[:-1]:
        raise ValueError("Only the output layer of a network can grow.")
    out_source = np.asarray(out_source, dtype=np.int64)
    fan_in, k_old = old.layer_shapes[-1]
    start = old.n_params - (fan_in + 1) * k_old
    rows = np.arange(fan_in + 1)[:, None]
    last = np.where(out_source[None, :] >= 0, start + rows * k_old + out_source[None, :], -1)
    source = np.concatenate([np.arange(start), last.ravel()])
    weight = np.concatenate([
        np.ones(start),
        np.broadcast_to(np.asarray(out_weight, np.float64), (fan_in + 1, len(out_source))).ravel(),
    ])
    bias = np.zeros(new.n_params, bool)
    bias[start + fan_in * len(out_source):] = True
    return source, np.where(source >= 0, weight, 0.0), bias


def output_column(network, column):
    """Indices in θ of one output column: its weights, then its bias.

    The last layer's augmented W̃ = [W; b] of shape (fan_in + 1, n_outputs)
    is stored row-major at the end of θ (see :func:`grown_map`).

    Returns
    -------
    int ndarray of shape (fan_in + 1,)
    """
    fan_in, n_outputs = network.layer_shapes[-1]
    start = network.n_params - (fan_in + 1) * n_outputs
    return start + np.arange(fan_in + 1) * n_outputs + column
