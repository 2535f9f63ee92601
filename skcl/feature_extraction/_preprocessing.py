"""The ``preprocess`` parameter of BackboneFeatureExtractor, as a dict of plain values.

Both backends apply the same steps (resize the shorter side, centre crop,
normalise, repeat a gray channel), read from one dict: ``preprocess_``.
It holds plain values only, so that it hashes into the cache key, keys the
compiled JAX forward pass and pickles.
"""

from collections.abc import Mapping
from numbers import Integral

import numpy as np

__all__ = ["INTERPOLATIONS", "check_preprocess", "describe", "resolve_preprocess"]

_PREPROCESS_KEYS = {"resize_size", "crop_size", "mean", "std", "interpolation"}

INTERPOLATIONS = ("bilinear", "bicubic", "nearest")


def check_preprocess(preprocess):
    """Reject a ``preprocess`` that is none of "auto", None, a dict or a weights enum.

    Parameters
    ----------
    preprocess : object
        The parameter, as given.
    """
    if preprocess is None or (isinstance(preprocess, str) and preprocess == "auto"):
        return
    if isinstance(preprocess, Mapping):
        unknown = set(preprocess) - _PREPROCESS_KEYS
        if unknown:
            raise ValueError(
                f"preprocess has unknown keys {sorted(unknown)}; it takes "
                f"{sorted(_PREPROCESS_KEYS)}."
            )
        return
    if hasattr(preprocess, "transforms") and hasattr(preprocess, "meta"):
        return  # a torchvision weights enum
    raise ValueError(
        f"preprocess must be 'auto', None, a dict or a torchvision weights enum, got "
        f"{preprocess!r}."
    )


def resolve_preprocess(preprocess, image_shape, *, torchvision):
    """The preprocessing as a dict of plain values (hashable, picklable).

    Parameters
    ----------
    preprocess : mapping or None
        What is done to the images, with any of the keys of the
        ``preprocess`` parameter (a weights enum already read into such a
        mapping); None: nothing more than the scaling.
    image_shape : tuple of int
        (height, width, channels) of the images.
    torchvision : bool
        Whether the backbone is a torchvision model, which always takes
        three channels.

    Returns
    -------
    spec : dict
        ``resize_size`` (int, (height, width) or None), ``crop_size``
        ((height, width) or None), ``mean`` and ``std`` (tuples of float or
        None), ``interpolation`` and ``to_rgb``.
    """
    spec = dict(resize_size=None, crop_size=None, mean=None, std=None,
                interpolation="bilinear")
    if preprocess is not None:
        spec.update(preprocess)
    _resolve_sizes(spec)
    _resolve_normalisation(spec)
    if spec["interpolation"] not in INTERPOLATIONS:
        raise ValueError(
            f"preprocess['interpolation'] must be one of {INTERPOLATIONS}, got "
            f"{spec['interpolation']!r}."
        )
    channels = image_shape[2]
    spec["to_rgb"] = bool(
        channels == 1 and (torchvision or (spec["mean"] and len(spec["mean"]) == 3))
    )
    if spec["mean"] is not None and len(spec["mean"]) not in (1, 3 if spec["to_rgb"] else channels):
        raise ValueError(
            f"preprocess has {len(spec['mean'])} means and standard deviations, but "
            f"the images have {channels} channels."
        )
    return spec


def _resolve_sizes(spec):
    """``resize_size`` and ``crop_size`` of ``spec`` as plain ints and tuples, in place.

    ``resize_size`` stays an int (the shorter side) or becomes (height,
    width); ``crop_size`` is always (height, width).
    """
    for key in ("resize_size", "crop_size"):
        value = spec[key]
        if value is None:
            continue
        value = tuple(np.atleast_1d(value).tolist())
        if not (len(value) in (1, 2) and all(isinstance(v, Integral) and v >= 1 for v in value)):
            raise ValueError(
                f"preprocess[{key!r}] must be a positive int or (height, width), "
                f"got {spec[key]!r}."
            )
        spec[key] = value if key == "crop_size" or len(value) == 2 else value[0]
    if isinstance(spec["crop_size"], tuple) and len(spec["crop_size"]) == 1:
        spec["crop_size"] = spec["crop_size"] * 2


def _resolve_normalisation(spec):
    """``mean`` and ``std`` of ``spec`` as tuples of float, checked, in place."""
    for key in ("mean", "std"):
        if spec[key] is not None:
            spec[key] = tuple(float(v) for v in np.atleast_1d(spec[key]))
    if (spec["mean"] is None) != (spec["std"] is None) or (
        spec["mean"] is not None and len(spec["mean"]) != len(spec["std"])
    ):
        raise ValueError("preprocess needs both mean and std, with one value per channel.")
    if spec["std"] is not None and min(spec["std"]) <= 0:
        raise ValueError(f"preprocess['std'] must be positive, got {spec['std']}.")


def describe(spec):
    """``spec`` in a few words, for messages: the steps that are on."""
    return ", ".join(
        f"{k}={v}" for k, v in spec.items() if v is not None and v is not False
    ) or "none"
