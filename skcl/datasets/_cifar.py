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
an error instead of running what it names. Sizes are bounded before
anything is allocated: the file is read whole (at most
``MAX_FILE_BYTES``) and its opcodes are walked first, so a length in the
pickle beyond the file's end is a truncated file, not a huge allocation
(the unpickler allocates a counted string before reading it); an array may
not ask for more bytes than the file holds, and object arrays (which a
CIFAR batch never holds) are refused. That narrows, but does not remove,
what pickle itself does: load only files from the official source (or
written by torchvision's download).
"""

import codecs
import io
import math
import pickle
import pickletools
from pathlib import Path

import numpy as np

__all__ = ["read_cifar_batch", "cifar_images"]

# The largest official file, CIFAR-100's train, is 158 MB.
MAX_FILE_BYTES = 1 << 30


def _reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct as function
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct as function
    return function


class _BatchArray(np.ndarray):
    """The arrays the unpickler builds: their state is checked before it is set.

    ``ndarray.__setstate__`` allocates the state's shape for an object
    dtype whatever the data hold (a crafted file asks for terabytes that
    way); other dtypes need the data's bytes, which are in the file.
    """

    def __setstate__(self, state):
        dtype = next((part for part in state if isinstance(part, np.dtype)), None)
        if dtype is None or dtype.hasobject:
            raise pickle.UnpicklingError(
                f"refusing an array of dtype {dtype}: a CIFAR batch holds uint8 data"
            )
        super().__setstate__(state)


def _dtype(*args, **kwargs):
    dtype = np.dtype(*args, **kwargs)
    if dtype.hasobject:
        raise pickle.UnpicklingError(
            "refusing an object dtype: a CIFAR batch holds only numbers and strings"
        )
    return dtype


def _latin1(text, encoding):
    """How Python 2's pickles of numpy arrays hold bytes: ``codecs.encode(text, "latin1")``."""
    if encoding not in ("latin1", "latin-1") or not isinstance(text, str):
        raise pickle.UnpicklingError(f"refusing codecs.encode(..., {encoding!r})")
    return codecs.encode(text, encoding)


def _reconstruct_at_most(max_bytes):
    """numpy's array reconstruction, refused when it asks for over ``max_bytes``."""

    def reconstruct(subtype, shape, dtype):
        dtype = _dtype(dtype)
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if not all(isinstance(n, int) and n >= 0 for n in shape):
            raise pickle.UnpicklingError(f"an array of shape {shape!r}")
        n_bytes = math.prod(shape) * dtype.itemsize
        if n_bytes > max_bytes:
            raise pickle.UnpicklingError(
                f"an array of shape {shape} asks for {n_bytes} bytes, more than the "
                f"file's {max_bytes}"
            )
        return _reconstruct()(_BatchArray, shape, dtype)

    return reconstruct


# The globals a CIFAR batch names, each given as a function of the file's size.
_ALLOWED = {
    # Python 2 pickles (the official files) name numpy.core, newer ones numpy._core.
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct_at_most,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct_at_most,
    ("numpy", "ndarray"): lambda max_bytes: _BatchArray,
    ("numpy", "dtype"): lambda max_bytes: _dtype,
    ("_codecs", "encode"): lambda max_bytes: _latin1,
}


class _CifarUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals of a CIFAR batch, of bytes in memory."""

    def __init__(self, data, **kwargs):
        super().__init__(io.BytesIO(data), **kwargs)
        self._max_bytes = len(data)

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return _ALLOWED[module, name](self._max_bytes)
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
        (corrupt, truncated, naming anything but numpy arrays, or asking
        for more memory than the file holds), or is over 1 GiB.
    """
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{path} is not a CIFAR batch (python version): it has {size} bytes, the "
            f"official files at most 158 MB. Replace it with the official file."
        )
    try:
        data = path.read_bytes()
        for _ in pickletools.genops(data):  # every counted length within the file
            pass
        batch = _CifarUnpickler(data, encoding="bytes").load()
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
    # The unpickler's arrays as plain ndarrays (a view: nothing is copied).
    batch = {key: value.view(np.ndarray) if isinstance(value, np.ndarray) else value
             for key, value in batch.items()}
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
