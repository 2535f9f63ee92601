"""Tasks that transform shared images on access: Permuted and Rotated MNIST.

Ten permuted copies of MNIST's 60,000 images would hold 10 × 47 MB as
uint8 (10 × 245 MB padded and in float32); the tasks of a permuted or
rotated sequence instead share the base images, each task an
:class:`ImageView` that applies its own transform to the rows asked for
(``X[i:j]``, ``X[indices]``) or, through ``__array__``, to all of them
(which is what ``np.asarray(X)`` and scikit-learn's input checks call, one
task at a time). A view's rows are flat (``side * side`` pixels, row by
row), as the field's networks and skcl's estimators take them.
"""

import numbers

import numpy as np
from scipy import ndimage, sparse

__all__ = ["ImageView", "permuted_view", "rotated_view", "check_permutation", "check_angles"]


class ImageView:
    """Flat rows of shared images, transformed when they are read.

    Parameters
    ----------
    images : ndarray of uint8 of shape (n_samples, side, side)
        The base images, shared by every view of them (not copied).
    transform : callable
        ``transform(batch) -> batch``: uint8 images (k, side, side) to the
        transformed uint8 rows (k, n_features); a pure function of the batch.
    n_features : int
        The length of a transformed row.
    description : str
        What the transform is, for ``repr``.

    Attributes
    ----------
    shape : tuple of int
        ``(n_samples, n_features)``.
    dtype : numpy.dtype
        uint8.
    ndim : int
        2.
    """

    def __init__(self, images, transform, n_features, description):
        self._images = images
        self._transform = transform
        self.shape = (len(images), int(n_features))
        self.dtype = np.dtype(np.uint8)
        self.ndim = 2
        self.description = description

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"ImageView({self.description}, shape={self.shape})"

    def __getitem__(self, key):
        """Rows (and columns) as an ndarray: ``X[i]``, ``X[i:j]``, ``X[rows, cols]``."""
        rows, columns = key if isinstance(key, tuple) and len(key) == 2 else (key, slice(None))
        if isinstance(rows, numbers.Integral):
            return self._transform(self._images[rows][None])[0, columns]
        return self._transform(self._images[rows])[:, columns]

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("An ImageView computes its rows: they cannot be read without a copy.")
        X = self._transform(self._images)
        return X if dtype is None else X.astype(dtype, copy=False)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


def check_permutation(permutation, n_pixels):
    """The permutation as an int array, or a clear ValueError."""
    permutation = np.asarray(permutation)
    if permutation.ndim != 1 or permutation.shape[0] != n_pixels:
        raise ValueError(
            f"A permutation of the pixels must have {n_pixels} entries, got shape "
            f"{permutation.shape}."
        )
    if permutation.dtype.kind not in "iu" or not np.array_equal(
            np.sort(permutation), np.arange(n_pixels)):
        raise ValueError(
            f"A permutation of the pixels must hold each of 0..{n_pixels - 1} once."
        )
    return permutation.astype(np.intp)


def permuted_view(images, permutation, *, pad):
    """The view of ``images`` (optionally zero-padded by 2) with pixels permuted.

    Row ``n`` of the view is ``padded(images[n]).ravel()[permutation]``.
    """
    side = images.shape[1] + (4 if pad else 0)
    permutation = check_permutation(permutation, side * side)

    def transform(batch):
        if pad:
            batch = np.pad(batch, ((0, 0), (2, 2), (2, 2)))
        return batch.reshape(len(batch), -1)[:, permutation]

    return ImageView(images, transform, side * side, f"permuted, {side}x{side}")


def check_angles(angles):
    """The angles as a float array of at least one finite entry, or a ValueError."""
    try:
        values = np.asarray(angles, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"angles must be numbers (degrees), got {angles!r}.") from error
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"angles must be a non-empty sequence of degrees, got {angles!r}.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"angles must be finite numbers of degrees, got {values.tolist()}.")
    return values


def rotation_matrix(side, angle):
    """The rotation of a side×side image by ``angle`` degrees, as a sparse matrix.

    Rotating with bilinear interpolation and zeros outside is linear in
    the pixels, so the map is built once per angle by rotating the
    ``side²`` unit images with ``scipy.ndimage.rotate`` (``reshape=False,
    order=1``): column j is the rotation of pixel j. Each output pixel then
    mixes at most four input pixels, and a batch is rotated by one sparse
    product (a hundred times faster than ``ndimage.rotate`` image by image).
    Entries below 1e-9 (cos 90° is 6e-17, not 0) are dropped.
    """
    n = side * side
    units = np.eye(n).reshape(n, side, side)
    rotated = ndimage.rotate(units, angle, axes=(1, 2), reshape=False, order=1,
                             mode="constant", cval=0.0).reshape(n, n)
    rotated[np.abs(rotated) < 1e-9] = 0.0
    return sparse.csr_matrix(rotated)  # row j: where pixel j goes; X @ M rotates


def rotate_images(batch, angle, matrix=None):
    """``batch`` (k, side, side) of uint8 rotated by ``angle`` degrees.

    Counter-clockwise as displayed (row 0 at the top), about the image's
    centre, keeping its size (corners that leave the frame are cut, those
    that enter are 0); bilinear interpolation in float64, rounded back to
    uint8: ``scipy.ndimage.rotate(batch, angle, axes=(1, 2),
    reshape=False, order=1)``, computed as a product with
    :func:`rotation_matrix` (``matrix``, if given). A multiple of 90° is
    exactly ``np.rot90``.
    """
    side = batch.shape[1]
    matrix = rotation_matrix(side, angle) if matrix is None else matrix
    rows = batch.reshape(len(batch), -1)
    out = np.empty(rows.shape, np.uint8)
    for start in range(0, len(rows), _CHUNK):  # float64 in chunks of a few MB
        mixed = (matrix.T @ rows[start:start + _CHUNK].T.astype(np.float64)).T
        out[start:start + _CHUNK] = np.clip(np.rint(mixed), 0, 255)
    return out.reshape(batch.shape)


# Rows rotated at a time: their float64 copy stays near 8 MB.
_CHUNK = 1024


def rotated_view(images, angle):
    """The view of ``images`` rotated by ``angle`` degrees (:func:`rotate_images`)."""
    side = images.shape[1]
    matrix = rotation_matrix(side, angle)

    def transform(batch):
        return rotate_images(batch, angle, matrix).reshape(len(batch), -1)

    return ImageView(images, transform, side * side, f"rotated by {angle:g} degrees")
