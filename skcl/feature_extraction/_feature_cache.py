"""The on-disk cache of a backbone's features, and what names a backbone in its key.

:class:`BackboneFeatureExtractor` caches its features under
``<memory>/skcl_features/``, keyed by four hashes: the backbone with its
weights (``backbone_hash_``), the preprocessing, the kind of device with
the precision, and the images. The hashes are computed here, once per fit
or transform.

The cache holds arrays and text only, and reading it runs no code: an
entry is a folder named by the SHA-256 of its key, holding ``key.json``
(the four hashes, read with :mod:`json`) and ``features.npy`` (read with
``allow_pickle=False``, its header checked against the shape and dtype the
extractor expects before a byte of data is read). Nothing is unpickled, so
a file planted in the folder can at worst be ignored: an entry that is
unreadable, or whose key or shape differs, is reported by a
:class:`UserWarning`, extracted again and written over. Caches written by
skcl before this format (joblib pickles, under ``<memory>/joblib/``) are
never read.

Changing what goes into a hash changes every key: features cached by an
earlier version would no longer be found.
"""

import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path

import joblib
import numpy as np
from numpy.lib import format as npy_format

from .._utils.npy_files import read_npy

__all__ = ["backbone_hash", "cached_features", "features_key", "function_identity"]

FOLDER = "skcl_features"
FORMAT = "skcl feature cache 1"
# key.json holds four hashes: a larger file is not one of ours.
_MAX_KEY_BYTES = 4096


def function_identity(function):
    """What names a JAX function for the cache: where it is defined and its code.

    Module-level functions would pickle by name alone, so a changed body would
    be served old features: the bytecode, constants and closed-over values
    are part of the key.

    Parameters
    ----------
    function : callable
        A function, a bound method or a callable object.

    Returns
    -------
    identity : tuple
        The module and qualified name, then the code and hashes (or reprs) of
        the closed-over values, defaults and bound object.
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


def backbone_hash(identity, weights_hash):
    """``backbone_hash_``: one hash of the network's identity and of its weights.

    Parameters
    ----------
    identity : tuple
        What names the network (its torchvision name, its class and
        structure, or its function's code), as a backend gives it.
    weights_hash : str
        The hash of its weights or params, as a backend gives it.

    Returns
    -------
    str
    """
    return joblib.hash((identity, weights_hash))


def features_key(backbone_hash, preprocess, device, images):
    """The cache key of the features of ``images``: four hashes.

    Parameters
    ----------
    backbone_hash : str
        ``backbone_hash_``.
    preprocess : dict
        ``preprocess_``, of plain values.
    device : str
        ``device_``: only its kind ("cpu", "cuda", "gpu") is in the key, as a
        GPU's arithmetic differs from a CPU's in the last bits while two GPUs
        of one kind agree.
    images : ndarray
        The images; their values, dtype and shape are hashed.

    Returns
    -------
    tuple of str
    """
    return (
        backbone_hash,
        joblib.hash(sorted(preprocess.items())),
        device.split(":")[0],
        joblib.hash(images),
    )


def cached_features(location, key, extract, shape):
    """The features of ``key`` from the cache at ``location``, else ``extract()``, cached.

    Parameters
    ----------
    location : str or path-like
        The cache's folder (``memory``, or a joblib.Memory's location).
    key : tuple of str
        :func:`features_key`.
    extract : callable
        ``extract() -> ndarray of shape (n_images, n_features)``, float32:
        called on a miss.
    shape : tuple of int
        (n_images, n_features), what ``extract`` gives: an entry of another
        shape is not these features, and is not read.

    Returns
    -------
    features : ndarray of shape (n_images, n_features), float32
    hit : bool
        Whether they came from the cache.
    """
    entry = Path(location) / FOLDER / hashlib.sha256("\0".join(key).encode()).hexdigest()
    features = _read(entry, key, tuple(shape))
    if features is not None:
        return features, True
    features = extract()
    _write(entry, key, features)
    return features, False


def _read(entry, key, shape):
    """The entry's features, or None when it is absent or not these features (warned)."""
    key_file, features_file = entry / "key.json", entry / "features.npy"
    if not key_file.exists():
        return None
    try:
        if key_file.stat().st_size > _MAX_KEY_BYTES:
            raise ValueError(f"key.json has over {_MAX_KEY_BYTES} bytes")
        stored = json.loads(key_file.read_text(encoding="utf-8"))
        if stored != {"format": FORMAT, "key": list(key)}:
            raise ValueError("key.json holds another key")
        with open(features_file, "rb") as f:  # its header checked before its data are read
            return read_npy(f, features_file.stat().st_size, dtype=np.float32, shape=shape)
    except (OSError, ValueError, RecursionError) as error:  # UnicodeDecodeError: a ValueError
        warnings.warn(
            f"Ignored the feature cache entry {entry}: {error}. Its features are "
            "extracted again and written over it.",
            UserWarning,
            stacklevel=4,
        )
        return None


def _write(entry, key, features):
    """Write the entry: features first, then its key, each renamed into place whole."""
    try:
        entry.mkdir(parents=True, exist_ok=True)
        _replace(entry / "features.npy",
                 lambda f: npy_format.write_array(f, features, allow_pickle=False))
        text = json.dumps({"format": FORMAT, "key": list(key)})
        _replace(entry / "key.json", lambda f: f.write(text.encode("utf-8")))
    except OSError as error:
        warnings.warn(f"Could not write the feature cache entry {entry}: {error}.",
                      UserWarning, stacklevel=4)


def _replace(path, write):
    """``write(file)`` into a temporary file next to ``path``, then renamed to it."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as f:
            write(f)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
