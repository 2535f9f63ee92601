"""BackboneFeatureExtractor: a published or your own network, frozen, features cached.

The paper's point (section IV) is that a good frozen extractor is what lets
AQC come close to joint training. Published backbones (torchvision's
ImageNet models) and the user's own networks are such extractors; this
module runs them as a scikit-learn transformer:

* torchvision models run in torch itself (no conversion), so their
  features are torchvision's own forward pass, bit for bit;
* a JAX function ``apply(params, images)`` (a Flax ``module.apply``, an
  Equinox model through a small function) runs jitted in JAX;
* any ``torch.nn.Module`` runs in torch.

torch and torchvision are optional (``pip install "skcl[torch]"``): they are
imported inside the functions that need them, so that skcl imports and
works without them.
"""

import copy
import functools
import logging
import os
import sys
import time
from collections.abc import Mapping
from numbers import Integral

import jax
import jax.numpy as jnp
import joblib
import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import _check_feature_names, check_is_fitted, check_memory

from .._logging import log_progress
from .._progress import check_progress_bar, progress_bar
from ._inputs import ImageInputMixin

# verbose mode's progress lines, through the logger "skcl.feature_extraction"
_progress = functools.partial(log_progress, logging.getLogger("skcl.feature_extraction"))


__all__ = ["BackboneFeatureExtractor"]

_TORCH_EXTRA = (
    'pip install "skcl[torch]" (torch>=2.1 and torchvision>=0.16; for an NVIDIA GPU, '
    "torch's CUDA build: see https://pytorch.org/get-started/locally/)"
)

_WEIGHTS_FILE_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".tar")

_PREPROCESS_KEYS = {"resize_size", "crop_size", "mean", "std", "interpolation"}

_INTERPOLATIONS = ("bilinear", "bicubic", "nearest")

# Seed of torchvision's random initialisation when weights=None: features of
# an untrained network are only for trying things out, but reproducible.
_INIT_SEED = 0


def _import_torch(what):
    """torch (and torchvision), or an ImportError that says how to install them."""
    try:
        import torch
        import torchvision  # noqa: F401  (torchvision.models is imported by callers)
    except ImportError as error:
        raise ImportError(
            f"{what} runs in torch, which is not installed (or torchvision is not): "
            f"{_TORCH_EXTRA}. Without torch, pass a JAX function apply(params, images) "
            f"as the backbone."
        ) from error
    return torch


def _is_torch_module(obj):
    # A torch module can only exist once torch is imported: no import here.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def _is_weights_path(weights):
    if isinstance(weights, os.PathLike):
        return True
    return isinstance(weights, str) and (
        os.sep in weights
        or "/" in weights
        or weights.lower().endswith(_WEIGHTS_FILE_SUFFIXES)
        or os.path.exists(weights)
    )


class BackboneFeatureExtractor(
    ImageInputMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """A torchvision model, or your own JAX or torch network, as a frozen feature extractor.

    The extractor is not trained: ``fit`` builds the network with its
    weights and reads the image shape; ``transform`` returns the network's
    penultimate features, in evaluation mode, batch by batch, optionally
    cached on disk. Chain it with an skcl classifier in
    :class:`skcl.pipeline.Pipeline` to learn a task sequence on the
    features (the paper, section IV)::

        extractor = BackboneFeatureExtractor(
            "resnet18", weights=ResNet18_Weights.IMAGENET1K_V1, memory="cache/"
        ).fit(X_first_task)
        model = Pipeline([("features", extractor), ("clf", AQCClassifier())])
        for X, y in split_mnist.train:
            model.partial_fit(X, y, classes=range(10))

    Three kinds of ``backbone``:

    * **a torchvision model name** (``"resnet18"``, ``"mobilenet_v3_small"``,
      ``"efficientnet_b0"``, ... any of ``torchvision.models.list_models()``),
      with ``weights``. The model runs in torch with its last linear layer
      (the ImageNet classifier) replaced by the identity, so the features
      are the input of that layer, exactly as torchvision computes it.
      The name is always torchvision's: the paper's GroupNorm network
      formerly called "resnet18" is
      :class:`PretrainedFeatureExtractor` with ``"gn_resnet18"``.
    * **a JAX function** ``apply(params, images) -> features`` with its
      ``params`` (any pytree), or ``apply(images)`` when ``params`` is None.
      ``images`` is a float32 array of shape (batch, H, W, C), after the
      preprocessing; the output is flattened to (batch, n_features). A
      Flax module is ``BackboneFeatureExtractor(module.apply,
      params=variables)``; an Equinox model is
      ``BackboneFeatureExtractor(lambda model, x: jax.vmap(model)(x),
      params=model)`` (with images moved to channels first inside, if
      the model expects them so). It is jitted, so it must be traceable.
    * **a torch module** (``torch.nn.Module``), used as it is: its output,
      flattened, is the features (for a torchvision model you built
      yourself, replace its head by ``torch.nn.Identity()``). It gets
      images in channels-first layout (batch, C, H, W), float32.

    Parameters
    ----------
    backbone : str, callable or torch.nn.Module
        The network, as above.
    weights : torchvision WeightsEnum, str, path-like, mapping or None, default=None
        The weights of a torchvision model, or of a torch module:

        * a weights enum, e.g. ``torchvision.models.ResNet18_Weights.IMAGENET1K_V1``,
          or its name (``"IMAGENET1K_V1"``, ``"DEFAULT"``): torchvision
          downloads the file once into its cache (``$TORCH_HOME``);
        * a path to a local file holding the model's ``state_dict`` (as
          written by ``torch.save(model.state_dict(), path)``, or a
          checkpoint with it under ``"state_dict"`` or ``"model"``), for
          machines without internet: the published files, downloaded
          elsewhere, load this way. It is read with ``weights_only=True``,
          so loading it runs no code;
        * a state dict itself;
        * None: a torchvision model keeps its random initialisation (seeded,
          so features are reproducible; only for trying things out), a
          torch module its current weights.

        A JAX function's weights are its ``params``.
    params : pytree, default=None
        The parameters of a JAX function backbone. None calls
        ``backbone(images)``.
    preprocess : "auto", None, dict or torchvision WeightsEnum, default="auto"
        What is done to the images, scaled to [0, 1], before the network:

        * "auto": for a torchvision model, the preprocessing its weights
          define (for ResNet-18's ImageNet weights: resize the shorter side
          to 256, centre crop 224×224, normalise by ImageNet's mean and
          standard deviation); for a weights file or None, that of the
          model's default published weights, so that a local copy of
          published weights is preprocessed as they require. For your own
          network, nothing more than the scaling.
        * a weights enum: the preprocessing it defines;
        * a dict with any of ``resize_size`` (int: the shorter side),
          ``crop_size`` (int or (height, width): a centre crop), ``mean``
          and ``std`` (per channel), ``interpolation`` ("bilinear",
          "bicubic" or "nearest"; antialiased, as torchvision does);
        * None: nothing more than the scaling.

        Grayscale images are repeated into three channels for a torchvision
        model, and for your network when ``mean`` has three values.
    image_shape : tuple of int, default=None
        (height, width) or (height, width, channels), used to read 2-D
        input (n_samples, height·width·channels) as images. None: 3-D input
        (n, H, W) is one-channel, 4-D input (n, H, W, C) has C channels,
        and 2-D input is read as one-row images of width n_features.
    batch_size : int, default=64
        Images per forward pass: memory stays bounded by one batch (plus
        the output) whatever the input size.
    memory : str, joblib.Memory or None, default=None
        Where to cache the features, as in scikit-learn's ``Pipeline``: a
        directory, or a :class:`joblib.Memory`. A transform of images that
        were transformed before by the same network with the same weights,
        preprocessing and kind of device is read from the cache instead of
        computed: a rerun, a search, or a second method over the same
        images extracts once. The key is a hash of the backbone (its
        name, or its code for a function, its class and structure for a
        module), of its weights or params, of the preprocessing and of the
        images' values, dtype and shape; a change of any of them is a new
        entry. None: no cache.
    device : str, default="auto"
        Where the network runs. "auto": an NVIDIA GPU when there is one
        (torch: ``torch.cuda.is_available()``; JAX: JAX's default device,
        a GPU with ``pip install "skcl[gpu]"``), else the CPU. "cpu",
        "cuda" (or "gpu"), or a torch device such as "cuda:1". The result
        is ``device_``.
    verbose : int, default=0
        When positive, print the device, the progress of long transforms
        and whether features came from the cache.
    progress_bar : bool, default=False
        Show a tqdm progress bar on standard error (a widget in a notebook)
        of the batches of :meth:`transform` (none when the features come
        from the cache); it changes no result. Needs tqdm
        (``pip install 'skcl[progress]'``): without it, ``fit`` and
        ``transform`` raise an ImportError before any work.

    Attributes
    ----------
    model_ : torch.nn.Module or None
        The torch network, in evaluation mode, on ``device_`` (for a
        torchvision model, without its classifier; for your module, a
        copy of it, so that yours is left as it was). None for a JAX
        function.
    params_ : pytree or None
        The JAX function's parameters, as JAX arrays. None for torch.
    preprocess_ : dict
        The preprocessing applied: ``resize_size``, ``crop_size``,
        ``mean``, ``std``, ``interpolation`` and ``to_rgb``.
    device_ : str
        The device the network runs on, e.g. "cpu" or "cuda:0".
    backbone_hash_ : str
        Hash of the backbone and its weights, part of the cache key.
    image_shape_ : tuple of int
        (height, width, channels) of the images.
    n_features_in_ : int
        height · width · channels.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X was a DataFrame with string column names.

    See Also
    --------
    PretrainedFeatureExtractor : the paper's networks, pre-trained by skcl.
    skcl.pipeline.Pipeline : chains the extractor with a classifier and
        learns task by task with ``partial_fit``.

    Notes
    -----
    Pickling keeps the network: a torch module pickles with its weights, a
    JAX function by reference (a function defined at the top level of a
    module pickles, a lambda does not), and ``memory`` is a location, not
    the cache itself. Features are cached per kind of device, as a GPU's
    arithmetic differs from a CPU's in the last bits. A JAX function is
    keyed by its code and the values it closes over: one that reads
    global state should not be cached.

    Examples
    --------
    A JAX function as the backbone (here two fixed random projections
    with a tanh); a torchvision model is ``BackboneFeatureExtractor(
    "resnet18", weights=...)`` the same way.

    >>> import jax.numpy as jnp
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skcl.feature_extraction import BackboneFeatureExtractor
    >>> def apply(params, images):
    ...     return jnp.tanh(images.reshape(len(images), -1) @ params["w"])
    >>> params = {"w": np.random.default_rng(0).normal(size=(64, 16)).astype("float32")}
    >>> X, y = load_digits(return_X_y=True)
    >>> extractor = BackboneFeatureExtractor(apply, params=params, image_shape=(8, 8))
    >>> extractor.fit(X / 16).transform(X[:5] / 16).shape
    (5, 16)
    """

    def __init__(
        self,
        backbone,
        *,
        weights=None,
        params=None,
        preprocess="auto",
        image_shape=None,
        batch_size=64,
        memory=None,
        device="auto",
        verbose=0,
        progress_bar=False,
    ):
        self.backbone = backbone
        self.weights = weights
        self.params = params
        self.preprocess = preprocess
        self.image_shape = image_shape
        self.batch_size = batch_size
        self.memory = memory
        self.device = device
        self.verbose = verbose
        self.progress_bar = progress_bar

    # ------------------------------------------------------------------ API

    def fit(self, X, y=None):
        """Build the network with its weights and read the image shape of ``X``.

        Nothing is learnt: ``X`` gives the image shape that :meth:`transform`
        will expect, and is checked (one forward pass on one image tells the
        number of features).

        Parameters
        ----------
        X : array-like of shape (n_samples, H, W), (n_samples, H, W, C) or (n_samples, n_features)
            Images: uint8 (divided by 255) or float (used as given, e.g.
            already in [0, 1]). 2-D input is read with ``image_shape``.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        ImportError
            When a torchvision model or a torch module is asked for and
            torch is not installed.
        ValueError
            For unknown model names, weights of another architecture,
            unreadable weights files, a device that is not there, images
            the network cannot take. A rejected call changes nothing.
        """
        self._check_params()
        check_progress_bar(self)
        images = self._images(X)
        for begin in range(0, len(images), 4096):  # NaN, inf, dtypes; bounded memory
            self._checked_batch(images[begin : begin + 4096])
        image_shape = tuple(int(s) for s in images.shape[1:])
        # Everything is built in locals; attributes are set only at the end,
        # so that a rejected call leaves a fitted extractor as it was.
        if isinstance(self.backbone, str) or _is_torch_module(self.backbone):
            state = self._build_torch()
        else:
            state = self._build_jax()
        state["preprocess_"] = self._resolve_preprocess(image_shape)
        probe = self._checked_batch(images[:1])
        try:
            n_features = self._forward(state, probe).shape[1]
        except Exception as error:
            raise ValueError(
                f"The backbone cannot take images of shape {image_shape} (height, width, "
                f"channels) with preprocessing {_describe(state['preprocess_'])}: "
                f"{type(error).__name__}: {error}"
            ) from error
        state["backbone_hash_"] = joblib.hash(
            (state.pop("_identity"), state.pop("_weights_hash"))
        )
        _check_feature_names(self, X, reset=True)
        vars(self).update(state)
        self.image_shape_ = image_shape
        self.n_features_in_ = int(np.prod(image_shape))
        self._n_features_out = int(n_features)
        if self.verbose:
            _progress(
                f"[{type(self).__name__}] {self._name()} on {self.device_}: "
                f"{n_features} features per image"
            )
        return self

    def transform(self, X):
        """The backbone's features of ``X``, from the cache when they are there.

        Parameters
        ----------
        X : array-like of shape (n_samples, H, W), (n_samples, H, W, C) or (n_samples, n_features)
            Images of the shape the extractor was fitted on. A NumPy
            array (or memory map) is read one batch at a time, never
            copied whole.

        Returns
        -------
        features : ndarray of shape (n_samples, n_features), float32
        """
        check_is_fitted(self)
        check_progress_bar(self)
        _check_feature_names(self, X, reset=False)
        images = self._images(X, fitted_shape=self.image_shape_)
        memory = check_memory(self.memory)
        if getattr(memory, "location", None) is None:
            return self._extract(images)
        start = time.perf_counter()
        # The key: the backbone with its weights, the preprocessing, the kind
        # of device, and the images' bytes, dtype and shape. The extractor
        # and the images themselves are ignored by joblib (not hashed again).
        cached = memory.cache(_cached_features, ignore=["extractor", "images"])
        key = (
            self.backbone_hash_,
            joblib.hash(sorted(self.preprocess_.items())),
            self.device_.split(":")[0],
            joblib.hash(images),
        )
        hit = cached.check_call_in_cache(*key, extractor=self, images=images)
        features = cached(*key, extractor=self, images=images)
        if self.verbose:
            source = "read from the cache" if hit else "extracted and cached"
            _progress(
                f"[{type(self).__name__}] {len(features)} images: features {source} "
                f"({time.perf_counter() - start:.2f} s)"
            )
        return features

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float32"]
        tags.input_tags.three_d_array = True
        return tags

    # ------------------------------------------------------------ internals

    def _name(self):
        if isinstance(self.backbone, str):
            return f"torchvision's {self.backbone}"
        return getattr(self.backbone, "__qualname__", type(self.backbone).__name__)

    def _check_params(self):
        if not (isinstance(self.batch_size, Integral) and self.batch_size >= 1):
            raise ValueError(f"batch_size must be a positive integer, got {self.batch_size!r}.")
        if not isinstance(self.device, str):
            raise ValueError(f"device must be a string such as 'auto', 'cpu' or 'cuda', got {self.device!r}.")
        if not (isinstance(self.backbone, str) or callable(self.backbone)):
            raise ValueError(
                f"backbone must be a torchvision model name, a JAX function or a torch "
                f"module, got {self.backbone!r}."
            )
        if self.params is not None and (isinstance(self.backbone, str) or _is_torch_module(self.backbone)):
            raise ValueError(
                "params is for a JAX function backbone; a torch model's weights go in weights."
            )
        if self.weights is not None and not (
            isinstance(self.backbone, str) or _is_torch_module(self.backbone)
        ):
            raise ValueError(
                "weights is for a torchvision model or a torch module; a JAX function's "
                "weights go in params."
            )
        check_memory(self.memory)  # a clear error for anything but a path or a Memory
        self._declared_image_shape()
        self._check_preprocess_param()

    def _check_preprocess_param(self):
        preprocess = self.preprocess
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

    # -- preprocessing

    def _resolve_preprocess(self, image_shape):
        """``preprocess`` as a dict of plain values (hashable, picklable)."""
        preprocess = self.preprocess
        torchvision_name = isinstance(self.backbone, str)
        spec = dict(resize_size=None, crop_size=None, mean=None, std=None,
                    interpolation="bilinear")
        if isinstance(preprocess, str):  # "auto"
            preprocess = self._default_weights() if torchvision_name else None
        if preprocess is not None and not isinstance(preprocess, Mapping):
            preprocess = _weights_preprocess(preprocess)
        if preprocess is not None:
            spec.update(preprocess)
        for key in ("resize_size", "crop_size"):
            value = spec[key]
            if value is None:
                continue
            value = tuple(np.atleast_1d(value).tolist())
            if not (len(value) in (1, 2) and all(isinstance(v, Integral) and v >= 1 for v in value)):
                raise ValueError(f"preprocess[{key!r}] must be a positive int or (height, width), got {spec[key]!r}.")
            spec[key] = value if key == "crop_size" or len(value) == 2 else value[0]
        if isinstance(spec["crop_size"], tuple) and len(spec["crop_size"]) == 1:
            spec["crop_size"] = spec["crop_size"] * 2
        for key in ("mean", "std"):
            if spec[key] is not None:
                spec[key] = tuple(float(v) for v in np.atleast_1d(spec[key]))
        if (spec["mean"] is None) != (spec["std"] is None) or (
            spec["mean"] is not None and len(spec["mean"]) != len(spec["std"])
        ):
            raise ValueError("preprocess needs both mean and std, with one value per channel.")
        if spec["std"] is not None and min(spec["std"]) <= 0:
            raise ValueError(f"preprocess['std'] must be positive, got {spec['std']}.")
        if spec["interpolation"] not in _INTERPOLATIONS:
            raise ValueError(
                f"preprocess['interpolation'] must be one of {_INTERPOLATIONS}, got "
                f"{spec['interpolation']!r}."
            )
        channels = image_shape[2]
        spec["to_rgb"] = bool(channels == 1 and (torchvision_name or (spec["mean"] and len(spec["mean"]) == 3)))
        if spec["mean"] is not None and len(spec["mean"]) not in (1, 3 if spec["to_rgb"] else channels):
            raise ValueError(
                f"preprocess has {len(spec['mean'])} means and standard deviations, but "
                f"the images have {channels} channels."
            )
        return spec

    def _default_weights(self):
        """The weights enum whose preprocessing "auto" applies to a torchvision model."""
        _import_torch(f"torchvision's {self.backbone}")
        from torchvision.models import get_model_weights

        weights = self.weights
        if weights is not None and not _is_weights_path(weights) and not isinstance(weights, Mapping):
            return self._weights_enum(weights)
        try:
            return get_model_weights(self.backbone).DEFAULT
        except (ValueError, KeyError, AttributeError):  # a model with no published weights
            return None

    # -- building the network

    def _weights_enum(self, weights):
        """``weights`` (an enum or its name) as a weights enum of this model."""
        from torchvision.models import get_model_weights

        enum_class = get_model_weights(self.backbone)
        if isinstance(weights, str):
            name = weights.split(".")[-1]
            if weights.count(".") == 1 and weights.split(".")[0] != enum_class.__name__:
                raise ValueError(
                    f"weights {weights!r} are not weights of torchvision's {self.backbone}, "
                    f"whose weights are {enum_class.__name__}.{[w.name for w in enum_class]}."
                )
            try:
                return enum_class[name] if name != "DEFAULT" else enum_class.DEFAULT
            except KeyError:
                raise ValueError(
                    f"torchvision's {self.backbone} has no weights {weights!r}: it has "
                    f"{[w.name for w in enum_class]} and 'DEFAULT' (or pass a path to a "
                    f"local weights file)."
                ) from None
        if not isinstance(weights, enum_class):
            raise ValueError(
                f"weights {weights!r} are not weights of torchvision's {self.backbone}, "
                f"whose weights are {enum_class.__name__}.{[w.name for w in enum_class]}."
            )
        return weights

    def _state_dict(self, torch):
        """The state dict ``weights`` names, read before anything is built."""
        weights = self.weights
        if isinstance(weights, Mapping):
            return dict(weights), "a state dict"
        if _is_weights_path(weights):
            path = os.fspath(weights)
            try:
                state = torch.load(path, map_location="cpu", weights_only=True)
            except Exception as error:  # missing, truncated, pickled code, not torch's
                raise ValueError(
                    f"{path} is not a readable torch weights file ({type(error).__name__}: "
                    f"{error}); write one with torch.save(model.state_dict(), path)."
                ) from error
            for key in ("state_dict", "model"):  # common checkpoint layouts
                if isinstance(state, Mapping) and isinstance(state.get(key), Mapping):
                    state = state[key]
            if not isinstance(state, Mapping):
                raise ValueError(f"{path} holds a {type(state).__name__}, not a state dict.")
            return dict(state), path
        enum = self._weights_enum(weights)
        # Downloads once into torchvision's cache ($TORCH_HOME), then reads it.
        return enum.get_state_dict(progress=bool(self.verbose), check_hash=True), str(enum)

    def _build_torch(self):
        if isinstance(self.backbone, str):
            torch = _import_torch(f"torchvision's {self.backbone}")
            from torchvision.models import get_model, list_models

            if self.backbone not in list_models():
                raise ValueError(
                    f"{self.backbone!r} is not a torchvision model name: see "
                    f"torchvision.models.list_models() (e.g. 'resnet18', "
                    f"'mobilenet_v3_small', 'efficientnet_b0'). The paper's networks are "
                    f"PretrainedFeatureExtractor('cnn4') and ('gn_resnet18')."
                )
            state = self._state_dict(torch) if self.weights is not None else None
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(_INIT_SEED)
                model = get_model(self.backbone, weights=None)
            source = f"torchvision's {self.backbone}"
        else:
            torch = _import_torch("A torch module backbone")
            state = self._state_dict(torch) if self.weights is not None else None
            # A copy: eval(), .to(device) and loaded weights leave yours as it was.
            model = copy.deepcopy(self.backbone)
            source = type(self.backbone).__name__
        if state is not None:
            state, where = state
            try:
                model.load_state_dict(state, strict=True)
            except (RuntimeError, KeyError, TypeError) as error:
                raise ValueError(
                    f"The weights in {where} do not fit {source}: they were probably "
                    f"written for another architecture. {_first_lines(error)}"
                ) from error
        if isinstance(self.backbone, str):
            _drop_classifier(model, self.backbone, torch)
        device = self._torch_device(torch)
        model = model.to(device).eval()
        for parameter in model.parameters():
            parameter.requires_grad_(False)
        identity = (
            ("torchvision", self.backbone)
            if isinstance(self.backbone, str)
            else (
                "torch", type(self.backbone).__module__, type(self.backbone).__qualname__,
                repr(model),  # the layers and their settings
                # Your forward's code: a changed forward is another network.
                *_function_identity(type(self.backbone).forward)[2:],
            )
        )
        weights_hash = joblib.hash(
            {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        )
        return {
            "model_": model,
            "params_": None,
            "device_": str(device),
            "_identity": identity,
            "_weights_hash": weights_hash,
        }

    def _torch_device(self, torch):
        name = self.device.lower()
        if name == "auto":
            name = "cuda" if torch.cuda.is_available() else "cpu"
        name = "cuda" + name[3:] if name.startswith("gpu") else name
        try:
            device = torch.device(name)
        except RuntimeError as error:
            raise ValueError(f"device {self.device!r} is not a torch device: {error}") from error
        if device.type == "cuda":
            if not torch.cuda.is_available():
                raise ValueError(
                    f"device={self.device!r}, but torch sees no CUDA GPU (torch "
                    f"{torch.__version__}; a CPU-only build, or no driver). Use "
                    f"device='auto' or 'cpu'."
                )
            if device.index is None:
                device = torch.device("cuda", torch.cuda.current_device())
        return device

    def _build_jax(self):
        device = self._jax_device()
        # JAX arrays are immutable: the weights hashed here are the ones used.
        params = jax.tree.map(lambda a: jax.device_put(jnp.asarray(a), device), self.params)
        leaves, treedef = jax.tree.flatten(params)
        weights_hash = joblib.hash((str(treedef), [np.asarray(leaf) for leaf in leaves]))
        return {
            "model_": None,
            "params_": params,
            "device_": f"{device.platform}:{device.id}",
            "_identity": ("jax", *_function_identity(self.backbone)),
            "_weights_hash": weights_hash,
        }

    def _jax_device(self):
        name = self.device.lower()
        if name == "auto":
            return jax.devices()[0]  # JAX's default: a GPU with skcl[gpu]
        platform, _, index = name.partition(":")
        platform = {"cuda": "gpu"}.get(platform, platform)
        try:
            devices = jax.devices(platform)
        except RuntimeError as error:
            raise ValueError(
                f"device={self.device!r}, but JAX has no {platform} device ({error}). "
                f"JAX's CUDA build is pip install \"skcl[gpu]\"."
            ) from error
        try:
            return devices[int(index) if index else 0]
        except (ValueError, IndexError):
            raise ValueError(f"device={self.device!r}: JAX has {len(devices)} {platform} device(s).") from None

    # -- running it

    def _extract(self, images):
        """Features of (n, H, W, C) images, one batch at a time."""
        n_samples = len(images)
        batch_size = int(self.batch_size)
        features = np.empty((n_samples, self._n_features_out), np.float32)
        state = vars(self)
        start = time.perf_counter()
        n_batches = -(-n_samples // batch_size)
        with progress_bar(self, total=n_batches, desc="transform", unit="batch") as bar:
            for begin in range(0, n_samples, batch_size):
                batch = self._checked_batch(images[begin : begin + batch_size])
                features[begin : begin + len(batch)] = self._forward(state, batch)
                bar.update()
                if self.verbose and (begin // batch_size) % 20 == 19:
                    _progress(
                        f"[{type(self).__name__}] transformed {begin + len(batch)}/{n_samples} "
                        f"images on {self.device_} ({time.perf_counter() - start:.1f} s)"
                    )
        return features

    def _forward(self, state, batch):
        """Features of one checked batch (uint8 or float32, NHWC) as float32 NumPy."""
        spec = state["preprocess_"]
        if state["model_"] is not None:
            return _torch_forward(state["model_"], spec, batch, state["device_"])
        n = len(batch)
        batch_size = int(self.batch_size)
        if n < batch_size:  # pad: every batch reuses one compilation
            padding = np.zeros((batch_size - n, *batch.shape[1:]), batch.dtype)
            batch = np.concatenate([batch, padding])
        platform, _, index = state["device_"].partition(":")
        batch = jax.device_put(batch, jax.devices(platform)[int(index)])
        try:
            forward = _jitted_forward(self.backbone, _hashable(spec), self.params is None)
        except TypeError:  # an unhashable callable: compiled for this call only
            forward = _jitted_forward.__wrapped__(self.backbone, _hashable(spec), self.params is None)
        return np.asarray(forward(state["params_"], batch), np.float32)[:n]


def _cached_features(backbone_hash, preprocess_hash, device, images_hash, *, extractor, images):
    """The features joblib's Memory caches, keyed by the hashes only."""
    return extractor._extract(images)


def _describe(spec):
    return ", ".join(f"{k}={v}" for k, v in spec.items() if v is not None and v is not False) or "none"


def _first_lines(error, n=6):
    lines = str(error).strip().splitlines()
    return "\n".join(lines[:n]) + ("\n..." if len(lines) > n else "")


def _hashable(spec):
    return tuple(sorted(spec.items()))


def _weights_preprocess(weights):
    """A torchvision weights enum's preprocessing, read from its transforms."""
    transforms = weights.transforms()
    interpolation = getattr(transforms, "interpolation", None)
    interpolation = getattr(interpolation, "value", "bilinear")
    spec = {"interpolation": interpolation if interpolation in _INTERPOLATIONS else "bilinear"}
    for key in ("resize_size", "crop_size", "mean", "std"):
        value = getattr(transforms, key, None)
        if value is not None:
            spec[key] = tuple(value) if key in ("mean", "std") else list(value)
    return spec


def _function_identity(function):
    """What names a JAX function for the cache: where it is defined and its code.

    Module-level functions would pickle by name alone, so a changed body would
    be served old features: the bytecode, constants and closed-over values
    are part of the key.
    """
    target = getattr(function, "__func__", function)  # a bound method's function
    code = getattr(target, "__code__", None)
    if code is None:  # a callable object, e.g. an Equinox module
        code = getattr(type(function).__call__, "__code__", None)
    parts = [getattr(target, "__module__", type(function).__module__),
             getattr(target, "__qualname__", type(function).__qualname__)]
    if code is not None:
        parts += [code.co_code, repr(code.co_consts), code.co_names]
    closure = [cell.cell_contents for cell in (getattr(target, "__closure__", None) or ())]
    closure += [getattr(target, "__defaults__", None), getattr(target, "__kwdefaults__", None)]
    bound = getattr(function, "__self__", None)
    for value in (closure, bound) if bound is not None else (closure,):
        try:
            parts.append(joblib.hash(value))
        except Exception:  # not picklable: its repr is the best we have
            parts.append(repr(value))
    if code is None or not hasattr(target, "__code__"):
        try:
            parts.append(joblib.hash(function))
        except Exception:
            parts.append(repr(function))
    return tuple(parts)


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


def _torch_forward(model, spec, batch, device):
    """torchvision's ImageClassification transforms, then the model, in torch."""
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as F

    with torch.inference_mode():
        x = torch.from_numpy(batch).to(device).permute(0, 3, 1, 2)
        if spec["to_rgb"]:
            x = x.expand(-1, 3, -1, -1)
        # The steps and functions of torchvision's ImageClassification (what
        # weights.transforms() returns): uint8 images are resized and cropped
        # as uint8, with its rounding, then scaled to [0, 1] and normalised.
        if spec["resize_size"] is not None:
            size = spec["resize_size"]
            size = list(size) if isinstance(size, tuple) else [size]
            x = F.resize(x, size, interpolation=InterpolationMode(spec["interpolation"]), antialias=True)
        if spec["crop_size"] is not None:
            x = F.center_crop(x, list(spec["crop_size"]))
        x = F.convert_image_dtype(x, torch.float)
        if spec["mean"] is not None:
            x = F.normalize(x, list(spec["mean"]), list(spec["std"]))
        # Standard NCHW strides, as a DataLoader would give: a permuted or
        # expanded view counts as channels-last (even where torch calls it
        # contiguous, with one channel), which picks other kernels and so
        # changes the last bits of the features.
        x = torch.empty(x.shape, dtype=x.dtype, device=x.device).copy_(x)
        features = model(x)
        return features.reshape(len(features), -1).float().cpu().numpy()


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
            x = jnp.pad(x, ((0, 0), (pad_h // 2, pad_h - pad_h // 2), (pad_w // 2, pad_w - pad_w // 2), (0, 0)))
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
