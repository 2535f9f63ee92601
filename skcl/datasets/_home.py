"""Where image datasets live on disk: one setting for every loader."""

import os
from pathlib import Path

__all__ = ["get_data_home", "DATA_DIR_VARIABLE"]

DATA_DIR_VARIABLE = "SKCL_DATA_DIR"
"""Environment variable naming the data folder when ``root`` is not given."""


def get_data_home(root=None):
    """The folder that the image loaders read (and download into).

    Parameters
    ----------
    root : str or path-like, default=None
        The folder to use. When None, the environment variable
        ``SKCL_DATA_DIR``; when that is unset or empty, ``~/skcl_data``.
        ``~`` is expanded.

    Returns
    -------
    pathlib.Path
        The folder. It is not created: loaders only read it, and a
        download (``download=True``) creates what it writes.

    Notes
    -----
    Inside this folder the files are laid out as torchvision lays them out
    (e.g. ``MNIST/raw/train-images-idx3-ubyte``,
    ``cifar-10-batches-py/data_batch_1``), so the same folder can be shared
    with ``torchvision.datasets`` by passing it as their ``root``. The
    ISIC collections go in ``HAM10000/`` and ``BCN20000/``.

    Examples
    --------
    >>> from skcl.datasets import get_data_home
    >>> str(get_data_home("/data/images"))
    '/data/images'
    """
    if root is None:
        root = os.environ.get(DATA_DIR_VARIABLE) or "~/skcl_data"
    return Path(os.fspath(root)).expanduser()


def describe_data_home(root):
    """How the data folder was chosen, for error messages."""
    if root is not None:
        return "the root argument"
    value = os.environ.get(DATA_DIR_VARIABLE)
    if value:
        return f"the environment variable {DATA_DIR_VARIABLE}={value!r}"
    return f"the default (~/skcl_data; {DATA_DIR_VARIABLE} is unset)"
