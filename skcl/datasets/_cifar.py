"""Reader for the CIFAR-10 and CIFAR-100 "python version" batches.

CIFAR's own distribution format is a Python pickle per batch: a dict with
byte-string keys, e.g. ``b"data"`` (uint8 array of shape (n, 3072): the
red, green and blue 32×32 planes of each image, rows first),
``b"labels"`` (CIFAR-10) or ``b"fine_labels"`` / ``b"coarse_labels"``
(CIFAR-100), ``b"batch_label"`` and ``b"filenames"``; the metadata files
hold ``b"label_names"`` (CIFAR-10) or ``b"fine_label_names"`` (CIFAR-100).

Unpickling can run code. These files are unpickled with a restricted
unpickler that resolves only the few globals a CIFAR batch refers to
(numpy's array reconstruction, ``numpy.ndarray``, ``numpy.dtype`` and
``_codecs.encode``) and refuses any other, so a tampered file fails with
an error instead of running what it names. That narrows, but does not
remove, what pickle itself does: load only files from the official
source (or written by torchvision's download).
"""

import codecs
import pickle
from pathlib import Path

import numpy as np

__all__ = ["read_cifar_batch", "cifar_images"]


def _reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct as function
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct as function
    return function


_ALLOWED = {
    # Python 2 pickles (the official files) name numpy.core, newer ones numpy._core.
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy", "ndarray"): lambda: np.ndarray,
    ("numpy", "dtype"): lambda: np.dtype,
    ("_codecs", "encode"): lambda: codecs.encode,
}


class _CifarUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals of a CIFAR batch."""

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return _ALLOWED[module, name]()
        raise pickle.UnpicklingError(
            f"refusing to load the global {module}.{name}: a CIFAR batch "
            "holds only arrays, lists and strings"
        )


def read_cifar_batch(path, keys=()):
    """Unpickle one CIFAR batch or metadata file.

    Parameters
    ----------
    path : str or path-like
    keys : sequence of bytes
        Keys the dict must have (e.g. ``(b"data", b"labels")``).

    Returns
    -------
    dict
        With byte-string keys, as stored.

    Raises
    ------
    ValueError
        If the file is not a readable pickle of a dict with ``keys``
        (corrupt, truncated, or naming anything but numpy arrays).
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            batch = _CifarUnpickler(f, encoding="bytes").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError,
            AttributeError, IndexError, KeyError) as error:
        raise ValueError(
            f"{path} is not a CIFAR batch (python version): {error}. Replace "
            "it with the official file."
        ) from error
    if not isinstance(batch, dict):
        raise ValueError(
            f"{path} is not a CIFAR batch: it holds a {type(batch).__name__}, not a dict."
        )
    missing = [key for key in keys if key not in batch]
    if missing:
        raise ValueError(
            f"{path} is not a CIFAR batch of this kind: it lacks the keys "
            f"{missing} (it has {sorted(batch)})."
        )
    return batch


def cifar_images(batch, label_key, path):
    """Images (n, 32, 32, 3) uint8 and labels (n,) int64 of a batch."""
    data = np.asarray(batch[b"data"])
    labels = np.asarray(batch[label_key], dtype=np.int64)
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise ValueError(
            f"{path}: b'data' must be a uint8 array of shape (n, 3072), got "
            f"{data.dtype} {data.shape}."
        )
    if labels.shape != (len(data),):
        raise ValueError(
            f"{path}: {len(data)} images but {labels.size} labels."
        )
    # Stored as 3 colour planes per image; channels go last here.
    images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels


def label_names(batch, key, path):
    """Decoded class names from a CIFAR metadata dict."""
    try:
        return np.array([name.decode("ascii") for name in batch[key]])
    except (AttributeError, UnicodeDecodeError, TypeError) as error:
        raise ValueError(f"{path}: unreadable {key!r}: {error}") from error
