"""The paper's feature-extracting CNNs (appendix B) as pure functions of θ.

Like :class:`skcl._gradient.networks.MLP`, a :class:`ConvNet` is a small frozen,
hashable description (a static argument of jitted functions) of how to cut
one flat parameter vector θ into layers. It holds the feature extractor
and, on top of it, the dense classification head used for pre-training:

* ``"cnn4"`` (Split MNIST): two 3×3 convolutions of 32 filters, each
  followed by group normalisation (32 groups), swish and 2×2 average
  pooling; then a dense layer of 64 swish units, the 64 features.
* ``"gn_resnet18"`` (Split CIFAR-10, HAM; formerly ``"resnet18"``,
  renamed so that no one takes it for torchvision's BatchNorm/ReLU
  ResNet-18): a 3×3 convolution of 32 filters
  with group norm and swish, then 8 residual blocks of two 3×3
  convolutions (64, 64, 128, 128, 256, 256, 512, 512 filters) with group
  norm and swish, 2×2 average pooling after every two blocks but the last
  two, whose output is averaged over space: 512 features. A block whose
  input has fewer channels adds a 1×1 convolution with group norm on its
  shortcut (as in the paper's code).

Convolutions are "same"-padded with stride 1 and carry a bias; group norm
has a per-channel scale and offset; weights are Lecun-normal, biases and
offsets zero, scales one (paper, appendix C). A 2×2 pooling of an odd
side averages the last row or column alone, so sizes never reach zero
(for the even sides of 28×28 and 32×32 inputs this is plain 2×2
average pooling).

Images are NHWC; uint8 images are divided by 255 inside the network, so
the data stay uint8 (a quarter of the memory) until a minibatch is used.
"""

import warnings
from dataclasses import dataclass
from math import prod

import jax
import jax.numpy as jnp

__all__ = ["ARCHITECTURES", "DEPRECATED_ARCHITECTURES", "ConvNet", "current_name"]

N_GROUPS = 32
"""Groups of every group normalisation (the paper: 32)."""

_GROUP_NORM_EPSILON = 1e-6

_RESNET_BLOCK_WIDTHS = (64, 64, 128, 128, 256, 256, 512, 512)

ARCHITECTURES = {"cnn4": 64, "gn_resnet18": 512}
"""Architecture name → number of features it extracts."""

DEPRECATED_ARCHITECTURES = {"resnet18": "gn_resnet18"}
"""Old name → new name. "resnet18" was the paper's GroupNorm/swish network,
which torchvision's ResNet-18 (BatchNorm/ReLU, published weights) is not."""


def current_name(architecture, *, stacklevel=2):
    """An architecture's current name; a deprecated name warns (FutureWarning).

    Parameters
    ----------
    architecture : str
        A name of :data:`ARCHITECTURES` or of :data:`DEPRECATED_ARCHITECTURES`.
    stacklevel : int, default=2
        As :func:`warnings.warn`'s, counted from the caller of this function.

    Returns
    -------
    str
    """
    if architecture in DEPRECATED_ARCHITECTURES:
        new = DEPRECATED_ARCHITECTURES[architecture]
        warnings.warn(
            f"architecture={architecture!r} is deprecated and will be removed: it "
            f"is the paper's GroupNorm/swish network, now named {new!r} (same network, "
            f"same weights files). It is not torchvision's ResNet-18; for that one, with "
            f"published weights, use BackboneFeatureExtractor('resnet18', weights=...).",
            FutureWarning,
            stacklevel=stacklevel + 1,
        )
        return new
    return architecture


def _pooled(size):
    """Side length after 2×2 pooling (odd sides round up)."""
    return -(-size // 2)


def _conv(fan_in_channels, channels, size=3):
    return (("w", (size, size, fan_in_channels, channels)), ("b", (channels,)))


def _norm(channels):
    return (("scale", (channels,)), ("offset", (channels,)))


def _dense(fan_in, fan_out):
    return (("w", (fan_in, fan_out)), ("b", (fan_out,)))


def _cnn4_layout(height, width, channels):
    flat = _pooled(_pooled(height)) * _pooled(_pooled(width)) * 32
    return (
        ("conv0", _conv(channels, 32)),
        ("norm0", _norm(32)),
        ("conv1", _conv(32, 32)),
        ("norm1", _norm(32)),
        ("dense0", _dense(flat, 64)),
    )


def _resnet18_layout(height, width, channels):
    layers = [("conv0", _conv(channels, 32)), ("norm0", _norm(32))]
    fan_in = 32
    for i, width_i in enumerate(_RESNET_BLOCK_WIDTHS):
        layers += [
            (f"block{i}_conv0", _conv(fan_in, width_i)),
            (f"block{i}_norm0", _norm(width_i)),
            (f"block{i}_conv1", _conv(width_i, width_i)),
            (f"block{i}_norm1", _norm(width_i)),
        ]
        if fan_in != width_i:
            layers += [
                (f"block{i}_shortcut_conv", _conv(fan_in, width_i, size=1)),
                (f"block{i}_shortcut_norm", _norm(width_i)),
            ]
        fan_in = width_i
    return tuple(layers)


_LAYOUTS = {"cnn4": _cnn4_layout, "gn_resnet18": _resnet18_layout}


def _convolve(x, layer):
    y = jax.lax.conv_general_dilated(
        x, layer["w"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    return y + layer["b"]


def _group_norm(x, layer):
    n, h, w, c = x.shape
    groups = x.reshape(n, h, w, N_GROUPS, c // N_GROUPS)
    mean = groups.mean(axis=(1, 2, 4), keepdims=True)
    var = groups.var(axis=(1, 2, 4), keepdims=True)
    normed = ((groups - mean) * jax.lax.rsqrt(var + _GROUP_NORM_EPSILON)).reshape(x.shape)
    return normed * layer["scale"] + layer["offset"]


def _average_pool(x):
    """2×2 average pooling with stride 2; an odd last row/column alone."""
    _, h, w, _ = x.shape
    window = (1, 2, 2, 1)
    padding = ((0, 0), (0, h % 2), (0, w % 2), (0, 0))
    total = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, window, padding)
    if h % 2 == 0 and w % 2 == 0:
        return total / 4.0
    ones = jnp.ones((1, h, w, 1), x.dtype)
    count = jax.lax.reduce_window(ones, 0.0, jax.lax.add, window, window, padding)
    return total / count


def _conv_norm_swish(x, params, conv, norm):
    return jax.nn.swish(_group_norm(_convolve(x, params[conv]), params[norm]))


def _cnn4_features(params, x):
    x = _average_pool(_conv_norm_swish(x, params, "conv0", "norm0"))
    x = _average_pool(_conv_norm_swish(x, params, "conv1", "norm1"))
    x = x.reshape(x.shape[0], -1)
    return jax.nn.swish(x @ params["dense0"]["w"] + params["dense0"]["b"])


def _resnet18_features(params, x):
    x = _conv_norm_swish(x, params, "conv0", "norm0")
    for i in range(len(_RESNET_BLOCK_WIDTHS)):
        residual = _conv_norm_swish(x, params, f"block{i}_conv0", f"block{i}_norm0")
        residual = _group_norm(
            _convolve(residual, params[f"block{i}_conv1"]), params[f"block{i}_norm1"]
        )
        if f"block{i}_shortcut_conv" in params:
            x = _group_norm(
                _convolve(x, params[f"block{i}_shortcut_conv"]), params[f"block{i}_shortcut_norm"]
            )
        x = jax.nn.swish(x + residual)
        if i % 2 == 1 and i < len(_RESNET_BLOCK_WIDTHS) - 1:
            x = _average_pool(x)
    return x.mean(axis=(1, 2))


_FEATURES = {"cnn4": _cnn4_features, "gn_resnet18": _resnet18_features}


@dataclass(frozen=True)
class ConvNet:
    """A feature-extracting CNN with a dense classification head, on flat θ.

    Parameters
    ----------
    architecture : {"cnn4", "gn_resnet18"}
    image_shape : tuple of int
        (height, width, channels) of the input images.
    n_classes : int
        Outputs of the pre-training head.
    """

    architecture: str
    image_shape: tuple
    n_classes: int

    @property
    def n_features(self):
        """Dimension of the extracted features (64 or 512)."""
        return ARCHITECTURES[self.architecture]

    @property
    def layout(self):
        """((layer, ((array, shape), ...)), ...) in the order of θ, head last."""
        body = _LAYOUTS[self.architecture](*self.image_shape)
        return (*body, ("head", _dense(self.n_features, self.n_classes)))

    @property
    def n_params(self):
        """Length of θ."""
        return sum(prod(shape) for _, arrays in self.layout for _, shape in arrays)

    def unflatten(self, theta):
        """θ of shape (n_params,) → {layer: {array: values}}."""
        params, start = {}, 0
        for layer, arrays in self.layout:
            params[layer] = {}
            for name, shape in arrays:
                size = prod(shape)
                params[layer][name] = theta[start : start + size].reshape(shape)
                start += size
        return params

    def init(self, key):
        """Lecun-normal weights, zero biases and offsets, unit scales.

        Returns
        -------
        theta : jax.Array of shape (n_params,), float32
        """
        lecun = jax.nn.initializers.lecun_normal()
        layout = self.layout
        keys = jax.random.split(key, len(layout))
        parts = []
        for layer_key, (_, arrays) in zip(keys, layout):
            for name, shape in arrays:
                if name == "w":
                    parts.append(lecun(layer_key, shape, jnp.float32).ravel())
                elif name == "scale":
                    parts.append(jnp.ones(prod(shape), jnp.float32))
                else:
                    parts.append(jnp.zeros(prod(shape), jnp.float32))
        return jnp.concatenate(parts)

    def features(self, theta, X):
        """Penultimate features of shape (n, n_features) for images X (n, H, W, C).

        uint8 images are scaled to [0, 1]; other dtypes are used as they are.
        """
        x = X.astype(jnp.float32)
        if X.dtype == jnp.uint8:
            x = x / 255.0
        return _FEATURES[self.architecture](self.unflatten(theta), x)

    def apply(self, theta, X):
        """Logits of the pre-training head, shape (n, n_classes)."""
        head = self.unflatten(theta)["head"]
        return self.features(theta, X) @ head["w"] + head["b"]

