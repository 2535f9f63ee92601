"""A PretrainedFeatureExtractor's weights file: a ``.npz`` without pickle, its header checked.

The file holds θ, the classes of the pre-training task and a JSON header
(format, version, architecture, image shape, number of classes and of
parameters); reading it runs no code. The extractor writes it with
:func:`write_weights_file` and reads it back with :func:`read_weights_file`,
checking the header and the arrays with the other functions here.
"""

import json

import numpy as np

from .._utils.npy_files import read_npz
from ._architectures import DEPRECATED_ARCHITECTURES

__all__ = [
    "FORMAT",
    "VERSION",
    "check_format",
    "check_stored_weights",
    "header_image_shape",
    "read_weights_file",
    "stored_architecture",
    "write_weights_file",
]

#: The header's "format": what says a file is an extractor's weights.
FORMAT = "skcl.PretrainedFeatureExtractor"

#: The header's "version": the one layout this skcl writes and reads.
VERSION = 1


def write_weights_file(path, network, theta, classes):
    """Write θ, the classes and the header to ``path`` (NumPy appends ``.npz``).

    Parameters
    ----------
    path : str or path-like
    network : ConvNet
        The fitted network: its architecture, image shape and sizes go in
        the header.
    theta : ndarray of shape (n_params,)
    classes : ndarray of shape (n_classes,)
    """
    header = {
        "format": FORMAT,
        "version": VERSION,
        "architecture": network.architecture,
        "image_shape": list(network.image_shape),
        "n_classes": len(classes),
        "n_params": network.n_params,
    }
    classes = np.asarray(classes)
    if classes.dtype == object:  # strings: a unicode array needs no pickle
        classes = classes.astype(str)
    np.savez(path, header=np.array(json.dumps(header)), theta=theta, classes=classes)


def read_weights_file(path):
    """The header, θ and the classes of a weights file, read without pickle.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    header : object
        The parsed JSON header (a dict in a well-formed file).
    theta : ndarray of float32
    classes : ndarray of shape (n_classes,)

    Raises
    ------
    ValueError
        When the file is missing, not an ``.npz`` of named arrays, truncated,
        lacks one of them, or holds Python objects or an array larger than
        the file.
    """
    try:
        # Each array's header is checked before its data are allocated.
        stored = read_npz(path, ["header", "theta", "classes"])
        header = json.loads(str(stored["header"]))
        theta = np.asarray(stored["theta"], np.float32)
        classes = stored["classes"]
        if classes.ndim != 1:
            raise ValueError(f"its classes have shape {classes.shape}, not (n_classes,)")
    except (OSError, ValueError, KeyError) as error:
        raise ValueError(
            f"{path} is not a readable skcl weights file ({type(error).__name__}: "
            f"{error}); write one with PretrainedFeatureExtractor.save_weights."
        ) from error
    return header, theta, classes


def check_format(header, path):
    """Raise a ValueError unless the header is of an extractor's weights, in this version."""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path} is not an skcl PretrainedFeatureExtractor weights file.")
    if header.get("version") != VERSION:
        raise ValueError(
            f"{path} has weights format version {header.get('version')!r}; this skcl "
            f"reads version {VERSION}."
        )


def stored_architecture(header):
    """The architecture the header names, under its current name."""
    # Files written before the rename say "resnet18": the same network.
    return DEPRECATED_ARCHITECTURES.get(header.get("architecture"), header.get("architecture"))


def header_image_shape(header, path):
    """The header's image shape (height, width, channels) and number of classes.

    Raises
    ------
    ValueError
        When either is missing or out of range.
    """
    try:
        image_shape = tuple(int(s) for s in header["image_shape"])
        n_classes = int(header["n_classes"])
        if len(image_shape) != 3 or min(image_shape) < 1 or n_classes < 1:
            raise ValueError("out of range")
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(
            f"{path} is corrupted: its header lacks a valid image shape or number "
            f"of classes ({error})."
        ) from error
    return image_shape, n_classes


def check_stored_weights(path, network, theta, classes):
    """Raise a ValueError unless θ and the classes fit ``network`` and θ is finite."""
    if theta.shape != (network.n_params,) or len(classes) != network.n_classes:
        raise ValueError(
            f"{path} is corrupted: it holds {theta.size} parameters and "
            f"{len(classes)} classes, but a {network.architecture} on "
            f"{network.image_shape} images with {network.n_classes} classes has "
            f"{network.n_params}."
        )
    if not np.all(np.isfinite(theta)):
        raise ValueError(f"{path} is corrupted: its weights are not all finite.")
