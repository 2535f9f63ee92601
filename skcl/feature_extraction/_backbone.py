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

The estimator checks its parameters, builds the network once in ``fit``
and feeds it batches in ``transform``; the work is done by one module per
job: ``_frozen_network`` (the network built from the parameters, and one
batch's forward pass), ``_torchvision_backend`` (model names, published
weights and their preprocessing), ``_torch_backend`` (a torch network:
weights, device, forward pass), ``_jax_backend`` (a JAX function: params,
device, jitted forward pass), ``_preprocessing`` (the ``preprocess``
parameter), ``_precision`` (the ``precision`` parameter) and
``_feature_cache`` (the on-disk cache and its key).

torch and torchvision are optional (``pip install "skcl[torch]"``): they are
imported inside the functions that need them, so that skcl imports and
works without them.
"""

import functools
import logging
import time
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import _check_feature_names, check_is_fitted, check_memory

from .._utils.logging import log_progress
from .._utils.progress import check_progress_bar, progress_bar
from ._feature_cache import backbone_hash, cached_features, features_key
from ._frozen_network import (
    backbone_preprocess,
    build_jax_network,
    build_torch_network,
    check_backbone,
    forward,
    runs_in_torch,
)
from ._inputs import ImageInputMixin
from ._precision import check_precision
from ._preprocessing import check_preprocess, describe

# verbose mode's progress lines, through the logger "skcl.feature_extraction"
_progress = functools.partial(log_progress, logging.getLogger("skcl.feature_extraction"))


__all__ = ["BackboneFeatureExtractor"]


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
        Where to cache the features: a directory, or a :class:`joblib.Memory`
        whose location is used (as in scikit-learn's ``Pipeline``). A transform of images that
        were transformed before by the same network with the same weights,
        preprocessing, kind of device and ``precision`` is read from the
        cache instead of computed: a rerun, a search, or a second method over the same
        images extracts once. The key is a hash of the backbone (its
        name, or its code for a function, its class and structure for a
        module), of its weights or params, of the preprocessing and of the
        images' values, dtype and shape; a change of any of them is a new
        entry. The cache (under ``<memory>/skcl_features/``) holds ``.npy``
        arrays and JSON keys only and is read without unpickling, so a file
        planted in it runs no code: an entry that does not read back as
        these features is warned about and written over. Caches of earlier
        versions (joblib pickles under ``<memory>/joblib/``) are never read.
        None: no cache.
    device : str, default="auto"
        Where the network runs. "auto": an NVIDIA GPU when there is one
        (torch: ``torch.cuda.is_available()``; JAX: JAX's default device,
        a GPU with ``pip install "skcl[gpu]"``), else the CPU. "cpu",
        "cuda" (or "gpu"), or a torch device such as "cuda:1". The result
        is ``device_``.
    precision : {"float32", "tf32", "bfloat16"}, default="float32"
        The arithmetic of the network's forward pass (the preprocessing is
        float32 always), so that features, and the features a user caches,
        do not depend on a device's default precision mode:

        * "float32": full float32 everywhere. TensorFloat-32 is turned off
          for the forward pass (torch turns it on for cuDNN convolutions
          by default on Ampere and later NVIDIA GPUs, and JAX's default
          matrix-product precision may use it there; it moves a ResNet's
          features by about 1e-3), then torch's flags are restored. On a CPU torch's
          features are then those of torch's own float32 forward pass,
          bit for bit; on a GPU they agree with them to float32 rounding
          (a relative 1e-5 or so), as the kernels sum in another order.
        * "tf32": TensorFloat-32 (10-bit mantissa) in matrix products and
          convolutions on GPUs that have it, several times faster there;
          features move by about 1e-3. On a CPU, float32.
        * "bfloat16": the forward pass in bfloat16 (torch's autocast, on a
          CPU too; for a JAX function, JAX's bfloat16 matrix-product
          precision, which XLA's CPU backend computes in float32), the
          fastest on recent GPUs and the least exact: features move by
          about 1e-2 of their scale (0.8 % of the largest feature for a
          ResNet-18 on a CPU).

        torch's precision flags are global to the process: a forward pass
        holds a lock while it sets and restores them, so extractors in
        threads run their forward passes one at a time.

        It is part of the cache key: features are cached per precision.
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
    the cache itself. Features are cached per kind of device and per
    ``precision``, as a GPU's arithmetic differs from a CPU's in the last
    bits, and TF32's or bfloat16's from float32's in far more. A JAX function is
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
        precision="float32",
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
        self.precision = precision
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
        network = self._build_network()
        preprocess = backbone_preprocess(self.backbone, self.weights, self.preprocess, image_shape)
        n_features = self._probe(network, preprocess, images, image_shape)
        _check_feature_names(self, X, reset=True)
        self.model_ = network.model
        self.params_ = network.params
        self.device_ = network.device
        self.preprocess_ = preprocess
        self.backbone_hash_ = backbone_hash(network.identity, network.weights_hash)
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
        # of device with the precision (each computes other last bits), and
        # the images' bytes, dtype and shape.
        device = f"{self.device_.split(':')[0]}/{self.precision}"
        key = features_key(self.backbone_hash_, self.preprocess_, device, images)
        features, hit = cached_features(
            memory.location, key, lambda: self._extract(images),
            (len(images), self._n_features_out),
        )
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
        check_precision(self.precision)
        if not isinstance(self.device, str):
            raise ValueError(
                "device must be a string such as 'auto', 'cpu' or 'cuda', "
                f"got {self.device!r}."
            )
        check_backbone(self.backbone, self.params, self.weights)
        check_memory(self.memory)  # a clear error for anything but a path or a Memory
        self._declared_image_shape()
        check_preprocess(self.preprocess)

    # -- building the network: fit's state, set on the extractor at the end of fit
    def _build_network(self):
        """The frozen network with its weights, on its device (a ``FrozenNetwork``)."""
        if runs_in_torch(self.backbone):
            return build_torch_network(
                self.backbone, self.weights, self.device, verbose=self.verbose
            )
        return build_jax_network(self.backbone, self.params, self.device)

    def _probe(self, network, preprocess, images, image_shape):
        """The number of features, from one forward pass on the first image.

        A backbone that cannot take the images fails here, in ``fit``, with
        the image shape and the preprocessing in the error.
        """
        probe = self._checked_batch(images[:1])
        try:
            return self._forward(
                network.model, network.params, preprocess, network.device, probe
            ).shape[1]
        except Exception as error:
            raise ValueError(
                f"The backbone cannot take images of shape {image_shape} (height, width, "
                f"channels) with preprocessing {describe(preprocess)}: "
                f"{type(error).__name__}: {error}"
            ) from error

    # -- running it
    def _extract(self, images):
        """Features of (n, H, W, C) images, one batch at a time."""
        n_samples = len(images)
        batch_size = int(self.batch_size)
        features = np.empty((n_samples, self._n_features_out), np.float32)
        start = time.perf_counter()
        n_batches = -(-n_samples // batch_size)
        with progress_bar(self, total=n_batches, desc="transform", unit="batch") as bar:
            for begin in range(0, n_samples, batch_size):
                batch = self._checked_batch(images[begin : begin + batch_size])
                features[begin : begin + len(batch)] = self._forward(
                    self.model_, self.params_, self.preprocess_, self.device_, batch
                )
                bar.update()
                if self.verbose and (begin // batch_size) % 20 == 19:
                    _progress(
                        f"[{type(self).__name__}] transformed {begin + len(batch)}/{n_samples} "
                        f"images on {self.device_} ({time.perf_counter() - start:.1f} s)"
                    )
        return features

    def _forward(self, model, params, spec, device, batch):
        """Features of one checked batch (uint8 or float32, NHWC) as float32 NumPy."""
        return forward(
            self.backbone, model, params, spec, batch, device=device,
            precision=self.precision, batch_size=int(self.batch_size),
            no_params=self.params is None,
        )

