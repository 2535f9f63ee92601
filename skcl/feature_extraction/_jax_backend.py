"""A JAX function as the backbone: its params on a device, a jitted forward pass.

The function ``apply(params, images)`` (or ``apply(images)``) is compiled
with the preprocessing in front of it, once per function and preprocessing,
and fed batches of one size so that one compilation serves every batch.
The preprocessing follows torchvision's steps, in JAX (antialiased
resizing, but not torchvision's kernel).
"""

import functools

import jax
import jax.numpy as jnp
import joblib
import numpy as np

__all__ = ["jax_device", "jax_forward", "on_device", "params_hash"]


def jax_device(device):
    """The ``device`` parameter as a JAX device that is there.

    Parameters
    ----------
    device : str
        "auto" (JAX's default device: a GPU with ``skcl[gpu]``), "cpu",
        "cuda" or "gpu", with an optional ":index".

    Returns
    -------
    jax.Device
    """
    name = device.lower()
    if name == "auto":
        return jax.devices()[0]  # JAX's default: a GPU with skcl[gpu]
    platform, _, index = name.partition(":")
    platform = {"cuda": "gpu"}.get(platform, platform)
    try:
        devices = jax.devices(platform)
    except RuntimeError as error:
        raise ValueError(
            f"device={device!r}, but JAX has no {platform} device ({error}). "
            f"JAX's CUDA build is pip install \"skcl[gpu]\"."
        ) from error
    try:
        return devices[int(index) if index else 0]
    except (ValueError, IndexError):
        raise ValueError(
            f"device={device!r}: JAX has {len(devices)} {platform} device(s)."
        ) from None


def on_device(params, device):
    """``params`` (any pytree) as JAX arrays on ``device``."""
    return jax.tree.map(lambda a: jax.device_put(jnp.asarray(a), device), params)


def params_hash(params):
    """A hash of the params' structure and values."""
    # JAX arrays are immutable: the weights hashed here are the ones used.
    leaves, treedef = jax.tree.flatten(params)
    return joblib.hash((str(treedef), [np.asarray(leaf) for leaf in leaves]))


def jax_forward(function, params, spec, batch, *, batch_size, device, no_params):
    """Features of one checked batch through the jitted preprocessing and function.

    Parameters
    ----------
    function : callable
        ``apply(params, images)``, or ``apply(images)``.
    params : pytree or None
        ``params_``.
    spec : dict
        ``preprocess_``.
    batch : ndarray of shape (n, H, W, C), uint8 or float32
        Checked images, at most ``batch_size`` of them.
    batch_size : int
        The size every batch is padded to.
    device : str
        ``device_``, as "platform:index".
    no_params : bool
        Whether the function takes the images alone (the ``params``
        parameter is None).

    Returns
    -------
    features : ndarray of shape (n, n_features), float32
    """
    n = len(batch)
    if n < batch_size:  # pad: every batch reuses one compilation
        padding = np.zeros((batch_size - n, *batch.shape[1:]), batch.dtype)
        batch = np.concatenate([batch, padding])
    platform, _, index = device.partition(":")
    batch = jax.device_put(batch, jax.devices(platform)[int(index)])
    try:
        forward = _jitted_forward(function, _hashable(spec), no_params)
    except TypeError:  # an unhashable callable: compiled for this call only
        forward = _jitted_forward.__wrapped__(function, _hashable(spec), no_params)
    return np.asarray(forward(params, batch), np.float32)[:n]


def _hashable(spec):
    return tuple(sorted(spec.items()))


def _crop_box(height, width, crop):
    """torchvision's centre crop: top, left (rounded as it rounds them)."""
    return int(round((height - crop[0]) / 2.0)), int(round((width - crop[1]) / 2.0))


def _resized(height, width, size):
    """The shorter side to ``size``, as torchvision's Resize(int) computes it."""
    if isinstance(size, tuple):
        return size
    if height <= width:
        return size, int(size * width / height)
    return int(size * height / width), size


def _jax_preprocess(x, spec):
    """The same steps in JAX (antialiased resizing, but not torchvision's kernel)."""
    x = x.astype(jnp.float32) / 255.0 if x.dtype == jnp.uint8 else x.astype(jnp.float32)
    if spec["to_rgb"]:
        x = jnp.repeat(x, 3, axis=3)
    n, height, width, channels = x.shape
    if spec["resize_size"] is not None:
        height, width = _resized(height, width, spec["resize_size"])
        method = {"bilinear": "linear", "bicubic": "cubic"}.get(spec["interpolation"], "nearest")
        x = jax.image.resize(x, (n, height, width, channels), method=method, antialias=True)
    if spec["crop_size"] is not None:
        crop = spec["crop_size"]
        pad_h, pad_w = max(crop[0] - height, 0), max(crop[1] - width, 0)
        if pad_h or pad_w:  # a crop larger than the image pads it with zeros
            x = jnp.pad(x, ((0, 0), (pad_h // 2, pad_h - pad_h // 2),
                            (pad_w // 2, pad_w - pad_w // 2), (0, 0)))
            height, width = x.shape[1:3]
        top, left = _crop_box(height, width, crop)
        x = x[:, top : top + crop[0], left : left + crop[1]]
    if spec["mean"] is not None:
        x = (x - jnp.asarray(spec["mean"])) / jnp.asarray(spec["std"])
    return x


@functools.lru_cache(maxsize=32)
def _jitted_forward(function, spec, no_params):
    """One compiled forward per (function, preprocessing): reused across
    transforms and extractors."""
    spec = dict(spec)

    def forward(params, images):
        x = _jax_preprocess(images, spec)
        features = function(x) if no_params else function(params, x)
        return features.reshape(len(x), -1).astype(jnp.float32)

    return jax.jit(forward)
