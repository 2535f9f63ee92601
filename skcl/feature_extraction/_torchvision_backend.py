"""torchvision's models by name: their published weights, their preprocessing, no head.

A torchvision model is built here, without its ImageNet classifier, and
then runs as any torch network (``_torch_backend``). The weights a
BackboneFeatureExtractor is given (a weights enum or its name, a file, a
state dict) are read here too, also for a torch module.

torchvision is imported inside the functions, after ``import_torch`` has
said how to install it when it is missing.
"""

import os
from collections.abc import Mapping

from ._preprocessing import INTERPOLATIONS
from ._torch_backend import (
    import_torch,
    is_weights_path,
    load_weights,
    read_weights_file,
)

__all__ = [
    "check_model_name",
    "default_weights",
    "read_weights",
    "torchvision_model",
    "weights_enum",
    "weights_preprocess",
]

# Seed of torchvision's random initialisation when weights=None: features of
# an untrained network are only for trying things out, but reproducible.
_INIT_SEED = 0


def check_model_name(name):
    """Reject a name that is not one of ``torchvision.models.list_models()``."""
    from torchvision.models import list_models

    if name not in list_models():
        raise ValueError(
            f"{name!r} is not a torchvision model name: see "
            f"torchvision.models.list_models() (e.g. 'resnet18', "
            f"'mobilenet_v3_small', 'efficientnet_b0'). The paper's networks are "
            f"PretrainedFeatureExtractor('cnn4') and ('gn_resnet18')."
        )


def torchvision_model(name, state, torch):
    """torchvision's model ``name`` with ``state`` loaded, its classifier dropped.

    Parameters
    ----------
    name : str
        A torchvision model name, checked by :func:`check_model_name`.
    state : (dict, str) or None
        The state dict and where it came from; None keeps the random
        initialisation, seeded so that its features are reproducible.
    torch : module
        torch, imported by the caller.

    Returns
    -------
    torch.nn.Module
    """
    from torchvision.models import get_model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_INIT_SEED)
        model = get_model(name, weights=None)
    load_weights(model, state, f"torchvision's {name}")
    _drop_classifier(model, name, torch)
    return model


def weights_enum(backbone, weights):
    """``weights`` (an enum or its name) as a weights enum of the model ``backbone``."""
    from torchvision.models import get_model_weights

    enum_class = get_model_weights(backbone)
    if isinstance(weights, str):
        name = weights.split(".")[-1]
        if weights.count(".") == 1 and weights.split(".")[0] != enum_class.__name__:
            raise ValueError(
                f"weights {weights!r} are not weights of torchvision's {backbone}, "
                f"whose weights are {enum_class.__name__}.{[w.name for w in enum_class]}."
            )
        try:
            return enum_class[name] if name != "DEFAULT" else enum_class.DEFAULT
        except KeyError:
            raise ValueError(
                f"torchvision's {backbone} has no weights {weights!r}: it has "
                f"{[w.name for w in enum_class]} and 'DEFAULT' (or pass a path to a "
                f"local weights file)."
            ) from None
    if not isinstance(weights, enum_class):
        raise ValueError(
            f"weights {weights!r} are not weights of torchvision's {backbone}, "
            f"whose weights are {enum_class.__name__}.{[w.name for w in enum_class]}."
        )
    return weights


def read_weights(backbone, weights, torch, *, verbose=0):
    """The state dict ``weights`` names, read before anything is built.

    Parameters
    ----------
    backbone : str or torch.nn.Module
        The backbone the weights are for.
    weights : mapping, path-like, str or torchvision WeightsEnum
        A state dict, a local weights file, or published weights (an enum or
        its name).
    torch : module
        torch, imported by the caller.
    verbose : int, default=0
        When positive, torchvision shows its download's progress.

    Returns
    -------
    state : dict
    where : str
        Where it came from, for messages.
    """
    if isinstance(weights, Mapping):
        return dict(weights), "a state dict"
    if is_weights_path(weights):
        path = os.fspath(weights)
        return read_weights_file(path, torch), path
    enum = weights_enum(backbone, weights)
    # Downloads once into torchvision's cache ($TORCH_HOME), then reads it.
    return enum.get_state_dict(progress=bool(verbose), check_hash=True), str(enum)


def default_weights(backbone, weights):
    """The weights enum whose preprocessing "auto" applies to a torchvision model.

    ``weights`` itself when it is published weights; else the model's
    default published weights, so that a local copy of them is preprocessed
    as they require; None for a model with none.
    """
    import_torch(f"torchvision's {backbone}")
    from torchvision.models import get_model_weights

    if weights is not None and not is_weights_path(weights) and not isinstance(weights, Mapping):
        return weights_enum(backbone, weights)
    try:
        return get_model_weights(backbone).DEFAULT
    except (ValueError, KeyError, AttributeError):  # a model with no published weights
        return None


def weights_preprocess(weights):
    """A torchvision weights enum's preprocessing, read from its transforms."""
    transforms = weights.transforms()
    interpolation = getattr(transforms, "interpolation", None)
    interpolation = getattr(interpolation, "value", "bilinear")
    spec = {"interpolation": interpolation if interpolation in INTERPOLATIONS else "bilinear"}
    for key in ("resize_size", "crop_size", "mean", "std"):
        value = getattr(transforms, key, None)
        if value is not None:
            spec[key] = tuple(value) if key in ("mean", "std") else list(value)
    return spec


def _drop_classifier(model, name, torch):
    """Replace the model's last linear layer (its classifier) by the identity.

    torchvision's classification models end with one linear layer whose
    input is the penultimate features (``fc`` of ResNets, ``classifier[-1]``
    of MobileNets and EfficientNets, ``heads.head`` of ViTs); it is the last
    ``nn.Linear`` they register.
    """
    last = None
    for module_name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            last = module_name
    if last is None:
        raise ValueError(
            f"torchvision's {name} has no linear classifier to remove (e.g. SqueezeNet's "
            f"is a convolution): build it yourself, replace its classifier, and pass the "
            f"torch module as the backbone."
        )
    parent_name, _, child = last.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child, torch.nn.Identity())
