"""A BackboneFeatureExtractor's network: built once, frozen, on its device.

``fit`` builds the network here from the extractor's parameters (a
torchvision model by name, a copy of a torch module, or a JAX function's
params), resolves the preprocessing it needs, and then runs it batch by
batch with :func:`forward`. Nothing here reads or sets the estimator: it
passes its parameters in and sets the fitted attributes from the result.
"""

from collections.abc import Mapping
from typing import NamedTuple

import jax

from ._feature_cache import function_identity
from ._jax_backend import jax_device, jax_forward, on_device, params_hash
from ._precision import JAX_PRECISIONS
from ._preprocessing import resolve_preprocess
from ._torch_backend import (
    frozen,
    import_torch,
    is_torch_module,
    module_copy,
    module_identity,
    state_dict_hash,
    torch_device,
    torch_forward,
)
from ._torchvision_backend import (
    check_model_name,
    default_weights,
    read_weights,
    torchvision_model,
    weights_preprocess,
)

__all__ = [
    "FrozenNetwork",
    "backbone_preprocess",
    "build_jax_network",
    "build_torch_network",
    "check_backbone",
    "forward",
    "runs_in_torch",
]


class FrozenNetwork(NamedTuple):
    """A built backbone: the fitted attributes it gives, and what names it in the cache.

    Attributes
    ----------
    model : torch.nn.Module or None
        ``model_``: the torch network, or None for a JAX function.
    params : pytree or None
        ``params_``: the JAX function's parameters, or None for torch.
    device : str
        ``device_``.
    identity : tuple
        What names the network (torchvision name, module structure or
        function code), for ``backbone_hash_``.
    weights_hash : str
        The hash of its weights or params, for ``backbone_hash_``.
    """

    model: object
    params: object
    device: str
    identity: tuple
    weights_hash: str


def runs_in_torch(backbone):
    """Whether ``backbone`` runs in torch: a torchvision model name or a torch module."""
    return isinstance(backbone, str) or is_torch_module(backbone)


def check_backbone(backbone, params, weights):
    """Raise a ValueError unless ``backbone`` is one of the three kinds, with its weights.

    Parameters
    ----------
    backbone : object
        A torchvision model name, a JAX function or a torch module.
    params : pytree or None
        Only for a JAX function.
    weights : object or None
        Only for a torchvision model or a torch module.
    """
    if not (isinstance(backbone, str) or callable(backbone)):
        raise ValueError(
            f"backbone must be a torchvision model name, a JAX function or a torch "
            f"module, got {backbone!r}."
        )
    if params is not None and runs_in_torch(backbone):
        raise ValueError(
            "params is for a JAX function backbone; a torch model's weights go in weights."
        )
    if weights is not None and not runs_in_torch(backbone):
        raise ValueError(
            "weights is for a torchvision model or a torch module; a JAX function's "
            "weights go in params."
        )


def build_torch_network(backbone, weights, device, *, verbose=0):
    """A torchvision model or a copy of your module, weights loaded, frozen on its device.

    Parameters
    ----------
    backbone : str or torch.nn.Module
        A torchvision model name, or a module (copied: yours is left as it is).
    weights : WeightsEnum, str, path-like, mapping or None
        As ``BackboneFeatureExtractor``'s ``weights``.
    device : str
        As its ``device`` ("auto", "cpu", "cuda", ...).
    verbose : int, default=0

    Returns
    -------
    FrozenNetwork
    """
    name = backbone if isinstance(backbone, str) else None
    torch = import_torch(
        f"torchvision's {name}" if name is not None else "A torch module backbone"
    )
    if name is not None:
        check_model_name(name)
    state = (
        read_weights(backbone, weights, torch, verbose=verbose)
        if weights is not None
        else None
    )
    if name is not None:
        model = torchvision_model(name, state, torch)
    else:
        model = module_copy(backbone, state)
    device = torch_device(device, torch)
    model = frozen(model, device)
    identity = (
        ("torchvision", name) if name is not None else module_identity(backbone, model)
    )
    return FrozenNetwork(model, None, str(device), identity, state_dict_hash(model))


def build_jax_network(backbone, params, device):
    """The JAX function's params on its device.

    Parameters
    ----------
    backbone : callable
        ``apply(params, images)`` or ``apply(images)``.
    params : pytree or None
    device : str
        As ``BackboneFeatureExtractor``'s ``device``.

    Returns
    -------
    FrozenNetwork
    """
    device = jax_device(device)
    params = on_device(params, device)
    return FrozenNetwork(
        None, params, f"{device.platform}:{device.id}",
        ("jax", *function_identity(backbone)), params_hash(params),
    )


def backbone_preprocess(backbone, weights, preprocess, image_shape):
    """``preprocess`` as a dict of plain values (hashable, picklable): ``preprocess_``.

    Parameters
    ----------
    backbone, weights, preprocess
        The extractor's parameters: "auto" is, for a torchvision model, the
        preprocessing of its weights (or of its default published weights).
    image_shape : tuple of int
        (height, width, channels) of the images.

    Returns
    -------
    dict
    """
    torchvision_name = isinstance(backbone, str)
    if isinstance(preprocess, str):  # "auto"
        preprocess = default_weights(backbone, weights) if torchvision_name else None
    if preprocess is not None and not isinstance(preprocess, Mapping):
        preprocess = weights_preprocess(preprocess)
    return resolve_preprocess(preprocess, image_shape, torchvision=torchvision_name)


def forward(backbone, model, params, spec, batch, *, device, precision, batch_size,
            no_params):
    """Features of one checked batch (uint8 or float32, NHWC) as float32 NumPy.

    Parameters
    ----------
    backbone : str, callable or torch.nn.Module
        The extractor's ``backbone`` (the function, for JAX).
    model : torch.nn.Module or None
        ``model_``: when set, the batch runs in torch.
    params : pytree or None
        ``params_``: the JAX function's parameters.
    spec : dict
        ``preprocess_``.
    batch : ndarray of shape (n, H, W, C)
    device : str
        ``device_``.
    precision : {"float32", "tf32", "bfloat16"}
    batch_size : int
        The extractor's batch size: JAX pads to it, so one compilation serves all.
    no_params : bool
        Whether the extractor's ``params`` is None: the JAX function then
        takes the images alone.

    Returns
    -------
    ndarray of shape (n, n_features), float32
    """
    if model is not None:
        return torch_forward(model, spec, batch, device, precision)
    # Part of the trace context: each precision is its own compilation.
    with jax.default_matmul_precision(JAX_PRECISIONS[precision]):
        return jax_forward(
            backbone, params, spec, batch, batch_size=batch_size,
            device=device, no_params=no_params,
        )
