"""PretrainedFeatureExtractor: a CNN pre-trained on a similar task, then frozen.

The paper's answer to AQC's and NC's cost in the network size (section
II-D and IV): pre-train a CNN on a similar task (EMNIST Letters for Split
MNIST, CIFAR-100 for Split CIFAR-10, BCN-12 for HAM), freeze it, and
learn the task sequence continually with one dense layer on its features.
"""

import logging
import time
from functools import partial
from numbers import Integral

import jax
import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_feature_names,
    _check_sample_weight,
    check_is_fitted,
    column_or_1d,
)

from .._gradient import likelihoods
from .._gradient.consolidation import Prior, prior_state
from .._gradient.model import Model
from .._gradient.training import EpochState, minimize_stepwise
from .._utils.logging import log_progress
from .._utils.progress import check_progress_bar, progress_bar
from ._architectures import ARCHITECTURES, DEPRECATED_ARCHITECTURES, ConvNet, current_name
from ._checkpoint import checkpointing
from ._inputs import ImageInputMixin
from ._precision import JAX_PRECISIONS, check_precision
from ._weights_file import (
    check_format,
    check_stored_weights,
    header_image_shape,
    read_weights_file,
    stored_architecture,
    write_weights_file,
)

# verbose mode's progress lines, through the logger "skcl.feature_extraction"
_progress = partial(log_progress, logging.getLogger("skcl.feature_extraction"))


__all__ = ["PretrainedFeatureExtractor"]


class PretrainedFeatureExtractor(
    ImageInputMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """A CNN pre-trained on a similar task, used frozen as a feature extractor.

    ``fit(X, y)`` pre-trains the CNN with a dense classification head on a
    pre-training task: the MAP estimate under a Gaussian prior, with
    Adam, the cosine one-cycle schedule and shuffled minibatches — the same
    jitted training loop as the continual-learning classifiers.
    ``transform(X)`` returns the penultimate features, on which an skcl
    classifier then learns the task sequence (paper, section IV)::

        extractor = PretrainedFeatureExtractor("cnn4").fit(X_letters, y_letters)
        model = Pipeline([("features", extractor), ("clf", AQCClassifier())])
        for X, y in split_mnist.train:
            model.partial_fit(X, y, classes=range(10))

    Parameters
    ----------
    architecture : {"cnn4", "gn_resnet18"}, default="cnn4"
        The paper's networks (appendix B). "cnn4": two 3×3 convolutions
        of 32 filters, each with group norm (32 groups), swish and 2×2
        average pooling, then a dense layer of 64 swish units: 64
        features (Split MNIST). "gn_resnet18": a convolution of 32
        filters and 8 residual blocks of 64 to 512 filters with group
        norm and swish: 512 features (Split CIFAR-10, HAM).

        .. deprecated::
            "resnet18", the former name of "gn_resnet18", still works with
            a FutureWarning. It never was torchvision's ResNet-18
            (BatchNorm, ReLU, published ImageNet weights): that one is
            :class:`BackboneFeatureExtractor` with ``"resnet18"`` and
            its ``weights``.
    image_shape : tuple of int, default=None
        (height, width) or (height, width, channels), used to read 2-D
        input of shape (n_samples, height·width·channels) as images (e.g.
        ``sklearn.datasets.load_digits().data`` with ``(8, 8)``). None:
        3-D input (n, H, W) is one-channel, 4-D input (n, H, W, C) has C
        channels, and 2-D input is read as one-row images of width
        n_features.
    n_epochs : int, default=20
        Passes over the pre-training data (the paper: 20).
    batch_size : int, default=64
        Minibatch size of pre-training (the paper: 64).
    learning_rate : float, default=0.01
        Peak learning rate of Adam's one-cycle schedule (the paper: 0.01
        on EMNIST Letters, 0.001 on CIFAR-100, 0.0001 on BCN-12).
    prior_precision : float, default=1.0
        Precision of the zero-mean Gaussian prior, ½·precision·‖θ‖² (the
        paper: a standard Gaussian), divided over the minibatches.
    class_weight : dict, "balanced" or None, default=None
        Class weights of the pre-training cross entropy, for imbalanced
        tasks: the paper weighs BCN-12's classes by m / n_i, which
        "balanced" gives up to a constant factor (or pass
        :func:`skcl.datasets.load_bcn12`'s ``class_weight``).
    transform_batch_size : int, default=1024
        Images per compiled forward pass of :meth:`transform`: memory
        stays bounded by one batch (plus the output) whatever the input
        size, and every call reuses one compilation.
    precision : {"float32", "tf32", "bfloat16"}, default="float32"
        The arithmetic of :meth:`transform`'s matrix products and
        convolutions (JAX's ``default_matmul_precision``), as for
        :class:`BackboneFeatureExtractor`: full float32 by default, so
        that the features do not depend on a GPU's default precision mode
        (JAX may use TensorFloat-32 on Ampere and later NVIDIA GPUs);
        "tf32" or "bfloat16" trade exactness for speed on a GPU. XLA's CPU
        backend computes float32 whatever is asked. Pre-training in
        :meth:`fit` runs at JAX's default precision.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation and the minibatch order; an int gives
        identical weights run to run.
    verbose : int, default=0
        When positive, print the loss of each pre-training epoch and the
        progress of long transforms.
    progress_bar : bool, default=False
        Show a tqdm progress bar on standard error (a widget in a notebook)
        of the pre-training's epochs in :meth:`fit` and of the batches of
        :meth:`transform`; it changes no result. Needs tqdm
        (``pip install 'skcl[progress]'``): without it, ``fit`` and
        ``transform`` raise an ImportError before any work.
    checkpoint : str or path-like, default=None
        A ``.npz`` where :meth:`fit` saves the pre-training's state after
        each epoch (read back without pickle): a later ``fit`` of the same
        task and settings resumes after the last complete epoch, with the
        weights of an uninterrupted run; another run's file is refused.

    Attributes
    ----------
    network_ : ConvNet
        The architecture with the head, for the fitted image shape.
    theta_ : ndarray of shape (n_params,)
        The pre-trained parameters θ (feature extractor, then head).
    classes_ : ndarray of shape (n_classes,)
        Labels of the pre-training task.
    image_shape_ : tuple of int
        (height, width, channels) of the images.
    n_features_in_ : int
        height · width · channels.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X was a DataFrame with string column names.
    loss_curve_ : ndarray of shape (n_epochs,)
        Pre-training loss per epoch (summed NLL plus the prior).

    See Also
    --------
    BackboneFeatureExtractor : a torchvision model with published weights,
        or your own JAX or torch network, as the frozen extractor.
    skcl.pipeline.Pipeline : chains the extractor with a classifier and
        learns task by task with ``partial_fit``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skcl.feature_extraction import PretrainedFeatureExtractor
    >>> X, y = load_digits(return_X_y=True)
    >>> extractor = PretrainedFeatureExtractor(
    ...     "cnn4", image_shape=(8, 8), n_epochs=2, random_state=0
    ... ).fit(X[y >= 5] / 16, y[y >= 5])
    >>> extractor.transform(X[y < 5] / 16).shape
    (901, 64)
    """

    def __init__(
        self,
        architecture="cnn4",
        *,
        image_shape=None,
        n_epochs=20,
        batch_size=64,
        learning_rate=0.01,
        prior_precision=1.0,
        class_weight=None,
        transform_batch_size=1024,
        precision="float32",
        random_state=None,
        verbose=0,
        progress_bar=False,
        checkpoint=None,
    ):
        self.architecture = architecture
        self.image_shape = image_shape
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.prior_precision = prior_precision
        self.class_weight = class_weight
        self.transform_batch_size = transform_batch_size
        self.precision = precision
        self.random_state = random_state
        self.verbose = verbose
        self.progress_bar = progress_bar
        self.checkpoint = checkpoint

    # ------------------------------------------------------------------ API

    def fit(self, X, y, sample_weight=None):
        """Pre-train the CNN and its classification head on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, H, W), (n_samples, H, W, C) or (n_samples, n_features)
            Images: uint8 (divided by 255) or float (used as given, e.g.
            already in [0, 1]). 2-D input is read with ``image_shape``.
        y : array-like of shape (n_samples,)
            Labels of the pre-training task.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples in the cross entropy.

        Returns
        -------
        self
        """
        self._check_params()
        check_progress_bar(self)
        architecture = self._architecture()  # warns first for a deprecated name
        # Nothing is set before every check has passed (feature_names_in_
        # included): a rejected call leaves a fitted extractor as it was.
        images, classes, y_index, weights = self._pretraining_task(X, y, sample_weight)
        network = ConvNet(architecture, images.shape[1:], len(classes))
        seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        init_key, train_key = jax.random.split(jax.random.PRNGKey(seed))
        train_key, found, on_state = checkpointing(self, train_key, images, y_index, weights)
        resume = None if found is None else EpochState(*found)
        start = time.perf_counter()
        with progress_bar(self, total=int(self.n_epochs), desc="pre-training", unit="epoch") as bar:
            on_epoch = self._epoch_reporter(bar, len(images), resume)

            # Stepwise: XLA:CPU runs convolutions slowly inside compiled loops.
            trained = minimize_stepwise(
                Model(network, likelihoods.CATEGORICAL), Prior(),
                prior_state(network.n_params, self.prior_precision), network.init(init_key),
                images, y_index.astype(np.int32), weights, train_key,
                float(self.learning_rate), n_epochs=int(self.n_epochs),
                batch_size=int(self.batch_size),
                on_epoch=on_epoch if self.verbose or self.progress_bar else None,
                resume=resume, on_state=on_state,
            )
        theta, losses = np.asarray(trained.params), np.asarray(trained.epoch_losses)
        if not (np.all(np.isfinite(losses)) and np.all(np.isfinite(theta))):
            raise ValueError(
                "Pre-training diverged: the loss became non-finite (inf or NaN). Try a "
                "smaller learning_rate, or scale the images to [0, 1]."
            )
        if self.verbose:
            _progress(f"[{type(self).__name__}] pre-trained {network.architecture} on "
                      f"{len(images)} images in {time.perf_counter() - start:.1f} s")
        _check_feature_names(self, X, reset=True)
        self._set_fitted(network, theta, classes)
        self.loss_curve_ = losses
        return self

    def transform(self, X):
        """Extract the penultimate features of ``X``, batch by batch.

        Parameters
        ----------
        X : array-like of shape (n_samples, H, W), (n_samples, H, W, C) or (n_samples, n_features)
            Images of the shape the extractor was fitted on. A NumPy
            array (or memory map) is read one batch at a time, never
            copied whole.

        Returns
        -------
        features : ndarray of shape (n_samples, 64) for "cnn4", (n_samples, 512) for "gn_resnet18"
            float32.
        """
        check_is_fitted(self)
        check_progress_bar(self)
        check_precision(self.precision)
        _check_feature_names(self, X, reset=False)
        images = self._images(X, fitted_shape=self.image_shape_)
        n_samples = len(images)
        batch_size = int(self.transform_batch_size)
        features = np.empty((n_samples, self.network_.n_features), np.float32)
        start = time.perf_counter()
        n_batches = -(-n_samples // batch_size)
        with progress_bar(self, total=n_batches, desc="transform", unit="batch") as bar:
            for begin in range(0, n_samples, batch_size):
                batch = self._checked_batch(images[begin : begin + batch_size])
                n = len(batch)
                if n < batch_size:  # pad: every batch reuses one compilation
                    padding = np.zeros((batch_size - n, *batch.shape[1:]), batch.dtype)
                    batch = np.concatenate([batch, padding])
                # Part of the trace context: each precision is its own compilation.
                with jax.default_matmul_precision(JAX_PRECISIONS[self.precision]):
                    out = _features(self.network_, self.theta_, batch)
                features[begin : begin + n] = np.asarray(out)[:n]
                bar.update()
                if self.verbose and (begin // batch_size) % 10 == 9:
                    _progress(
                        f"[{type(self).__name__}] transformed {begin + n}/{n_samples} images "
                        f"({time.perf_counter() - start:.1f} s)"
                    )
        return features

    def score(self, X, y):
        """Accuracy of the pre-training head on ``(X, y)``.

        A check of the pre-training on held-out data (e.g. the pre-training
        task's validation split), not of continual learning.

        Parameters
        ----------
        X : array-like of images, as for :meth:`transform`
        y : array-like of shape (n_samples,)

        Returns
        -------
        float
        """
        check_is_fitted(self)
        head = self.network_.unflatten(self.theta_)["head"]
        logits = self.transform(X) @ head["w"] + head["b"]
        predicted = self.classes_[np.argmax(logits, axis=1)]
        return float(np.mean(predicted == column_or_1d(y)))

    def save_weights(self, path):
        """Write the pre-trained weights to a ``.npz`` file (no pickle).

        The file holds θ, the classes of the pre-training task and a
        JSON header (architecture, image shape); loading it runs no code.

        Parameters
        ----------
        path : str or path-like
            Destination; NumPy appends ``.npz`` when missing.
        """
        check_is_fitted(self)
        write_weights_file(path, self.network_, self.theta_, self.classes_)

    def load_weights(self, path):
        """Restore weights written by :meth:`save_weights`; the extractor is then fitted.

        The file must hold this ``architecture`` (and ``image_shape``, when
        set); nothing in it is executed.

        Parameters
        ----------
        path : str or path-like

        Returns
        -------
        self

        Raises
        ------
        ValueError
            When the file is not a readable skcl weights file, is
            truncated or corrupted, or holds another architecture or
            image shape. The extractor is then left unchanged.
        """
        self._check_params()
        header, theta, classes = read_weights_file(path)
        network = self._network_from_header(header, path)
        check_stored_weights(path, network, theta, classes)
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        self._set_fitted(network, theta, classes)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float32"]
        tags.input_tags.three_d_array = True
        return tags

    # ------------------------------------------------------------ internals

    def _architecture(self):
        """The architecture's current name; the deprecated "resnet18" warns."""
        # stacklevel: the warning points at the caller of fit (or at load_weights).
        return current_name(self.architecture, stacklevel=3)

    def _check_params(self):
        if (self.architecture not in ARCHITECTURES
                and self.architecture not in DEPRECATED_ARCHITECTURES):
            raise ValueError(
                f"architecture must be one of {sorted(ARCHITECTURES)}, got {self.architecture!r}."
            )
        for name in ("n_epochs", "batch_size", "transform_batch_size"):
            value = getattr(self, name)
            if not (isinstance(value, Integral) and value >= 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        for name in ("learning_rate", "prior_precision"):
            value = getattr(self, name)
            if not (np.isscalar(value) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}.")
        check_precision(self.precision)
        likelihoods.check_class_weight(self.class_weight)
        self._declared_image_shape()

    def _network_from_header(self, header, path):
        """The ConvNet a weights file's header describes, if it fits this extractor."""
        check_format(header, path)
        stored = stored_architecture(header)
        # Asked only now, so that a file of another format fails without the
        # deprecation warning (and the warning points at load_weights).
        architecture = self._architecture()
        if stored != architecture:
            raise ValueError(
                f"{path} holds a {stored!r} extractor, but this one's "
                f"architecture is {architecture!r}."
            )
        image_shape, n_classes = header_image_shape(header, path)
        wanted = self._declared_image_shape()
        if wanted is not None and wanted != image_shape:
            raise ValueError(
                f"{path} was trained on images of shape {image_shape}, but this "
                f"extractor's image_shape is {wanted}."
            )
        return ConvNet(architecture, image_shape, n_classes)

    def _pretraining_task(self, X, y, sample_weight):
        """The pre-training task, checked, as training takes it.

        Returns
        -------
        images : ndarray of shape (n_samples, H, W, C), uint8 or float32
            Checked whole: the whole task goes to the device.
        classes : ndarray of shape (n_classes,)
        y_index : ndarray of shape (n_samples,)
            Each label's index in ``classes``.
        weights : ndarray of shape (n_samples,)
            The cross entropy's weight of each sample (class and sample weights).
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "pre-training is supervised."
            )
        images = self._images(X)
        y = column_or_1d(y, warn=True)
        if len(y) != len(images):
            raise ValueError(f"X has {len(images)} samples but y has {len(y)}.")
        check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
        sample_weight = _check_sample_weight(
            sample_weight, images, dtype=np.float32, ensure_non_negative=True
        )
        weights = likelihoods.likelihood_weights(
            self.class_weight, classes, y_index, sample_weight
        )
        return self._checked_batch(images), classes, y_index, weights

    def _epoch_reporter(self, bar, n_images, resume):
        """What pre-training calls after each epoch (from ``resume``, an
        EpochState, or None): the verbose line, the progress bar."""
        start, done = time.perf_counter(), 0 if resume is None else resume.epoch
        bar.update(done)
        if done and self.verbose:
            _progress(f"[{type(self).__name__}] resuming the pre-training from "
                      f"{self.checkpoint} after epoch {done}/{self.n_epochs}")

        def on_epoch(epoch, loss):
            if self.verbose:
                self._log_epoch(epoch, loss, n_images,
                                (time.perf_counter() - start) / (epoch - done))
            bar.set_postfix_str(f"loss {loss:.5g}", refresh=False)
            bar.update()

        return on_epoch

    def _log_epoch(self, epoch, loss, n_images, seconds_per_epoch):
        # The loss is the objective minimised: the NLL summed over the images,
        # plus the prior's term; per image it reads as a cross entropy.
        left = seconds_per_epoch * (int(self.n_epochs) - epoch)
        _progress(
            f"[{type(self).__name__}] {time.strftime('%H:%M:%S')} epoch "
            f"{epoch}/{self.n_epochs}: loss {loss:.5g} (summed over {n_images} images, "
            f"with the prior's term: {loss / n_images:.4f} per image); "
            f"{seconds_per_epoch:.1f} s an epoch, about {left:.0f} s left"
        )

    def _set_fitted(self, network, theta, classes):
        self.network_ = network
        self.theta_ = theta
        self.classes_ = classes
        self.image_shape_ = network.image_shape
        self.n_features_in_ = int(np.prod(network.image_shape))
        self._n_features_out = network.n_features


@partial(jax.jit, static_argnums=0)
def _features(network, theta, images):
    return network.features(theta, images)
