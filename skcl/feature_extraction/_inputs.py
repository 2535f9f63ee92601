"""Images as the feature extractors read them: (n, H, W, C), checked batch by batch."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

__all__ = ["ImageInputMixin"]


class ImageInputMixin:
    """Reads ``X`` as images; needs an ``image_shape`` parameter.

    Shared by the extractors so that they accept the same input forms
    with the same errors.
    """

    def _declared_image_shape(self):
        """``image_shape`` as (H, W, C), or None."""
        shape = self.image_shape
        if shape is None:
            return None
        try:
            shape = tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            shape = ()
        if len(shape) not in (2, 3) or min(shape) < 1:
            raise ValueError(
                f"image_shape must be (height, width) or (height, width, channels) of "
                f"positive integers, got {self.image_shape!r}."
            )
        return shape if len(shape) == 3 else (*shape, 1)

    def _images(self, X, *, fitted_shape=None):
        """``X`` as an (n, H, W, C) array, without copying a NumPy array.

        Values are checked batch by batch later (:meth:`_checked_batch`),
        so that a large uint8 array or memory map is never converted whole.
        ``fitted_shape``: the image shape the images must have (after fit).
        """
        if sp.issparse(X) or not hasattr(X, "dtype") or hasattr(X, "iloc"):
            # Lists, DataFrames and sparse input (which it rejects) go
            # through check_array; NumPy arrays are used as they are.
            X = check_array(X, allow_nd=True, dtype=None, ensure_all_finite=False)
        if X.ndim < 2 or X.ndim > 4:
            raise ValueError(
                f"Expected images of shape (n, H, W) or (n, H, W, C), or a 2D array of "
                f"flattened images; got an array of shape {X.shape}. "
                "Reshape your data either using "
                "array.reshape(-1, 1) if your data has a single feature or "
                "array.reshape(1, -1) if it contains a single sample."
            )
        if len(X) == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={X.shape}) "
                "while a minimum of 1 is required."
            )
        if X.ndim == 3:
            X = X[..., None]
        declared = self._declared_image_shape()
        if X.ndim == 2:
            # Flattened rows: as fitted, else as declared, else one-row images.
            shape = fitted_shape or declared or (1, X.shape[1], 1)
            if np.prod(shape) == X.shape[1]:
                X = X.reshape(len(X), *shape)
        shape = tuple(int(s) for s in X.shape[1:])
        expected = fitted_shape or declared
        if expected is not None and shape != expected:
            n_features, n_expected = int(np.prod(shape)), int(np.prod(expected))
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} is expecting "
                f"{n_expected} features as input: images of shape {expected} "
                f"(height, width, channels), got {shape}."
            )
        return X

    @staticmethod
    def _checked_batch(images):
        """A batch of images as uint8 or float32, rejecting NaN and inf."""
        dtype = np.uint8 if images.dtype == np.uint8 else np.float32
        flat = check_array(images.reshape(len(images), -1), dtype=dtype)
        return flat.reshape(images.shape)
