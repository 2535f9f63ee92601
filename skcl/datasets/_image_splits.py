"""The paper's (train, validation, test) splits of the image datasets.

The paper (appendix A) splits every dataset the same way, with the seed
given: for datasets that come with an official test split (MNIST,
Fashion-MNIST, EMNIST, CIFAR), validation is a stratified 20 % of the
official training split and the test split is the official one; the ISIC
collections have none, so they are split like Iris: a stratified 20 %
test split, then 20 % of the rest for validation. The summaries say so in
each loader's ``DESCR``.
"""

import numpy as np
from sklearn.model_selection import train_test_split

from . import _isic
from ._image_files import isic_folder
from ._image_readers import read_isic_cached
from ._split import train_validation_test_split

__all__ = [
    "official_splits",
    "isic_splits",
    "OFFICIAL_SUMMARY",
    "ISIC_SUMMARY",
    "VALIDATION_SIZE",
]

VALIDATION_SIZE = 0.2
"""Share of the official training split held out for validation."""

OFFICIAL_SUMMARY = (
    "Validation: a stratified 20 % of the official training split; test: "
    "the official test split."
)
ISIC_SUMMARY = (
    "Images resized to 32x32 (Lanczos). Stratified 20 % test split, then 20 % "
    "of the rest for validation."
)


def official_splits(reader, name, root, download, random_state):
    """(train, validation, test) with validation = 20 % of official train.

    Parameters
    ----------
    reader : callable
        ``reader(name, root, download)``, e.g. :func:`read_idx_dataset`:
        the official ``[(X, y) train, (X, y) test]`` and the target names.
    name : str
        The dataset, as the reader knows it.
    root : str or path-like or None
        The loader's ``root`` (see :func:`get_data_home`).
    download : bool
        Whether torchvision may download missing files.
    random_state : int
        Seed of the stratified validation split.

    Returns
    -------
    parts : tuple of 3 (X, y)
        Train, validation and test.
    target_names : ndarray of str
    """
    ((X, y), test), target_names = reader(name, root, download)
    X_train, X_val, y_train, y_val = train_test_split(
        X, y, test_size=VALIDATION_SIZE, stratify=y, random_state=random_state
    )
    return ((X_train, y_train), (X_val, y_val), test), target_names


def isic_splits(collection, classes, used, root, download, random_state, cache):
    """(train, validation, test) of the rows whose class index is in ``used``.

    The split is stratified over all rows of ``classes`` (as the paper's
    code splits the whole metadata), so HAM-6 uses the same test images as
    HAM-8; only images of ``used`` classes are read.

    Parameters
    ----------
    collection : str
        The collection's folder in the data folder (``"HAM10000"``,
        ``"BCN20000"``).
    classes : ndarray of str
        The diagnoses kept, in label order; rows of other diagnoses are
        ignored.
    used : array-like of int
        The labels (indices into ``classes``) whose images are returned.
    root : str or path-like or None
        The loader's ``root`` (see :func:`get_data_home`).
    download : bool
        Must be False (see :func:`isic_folder`).
    random_state : int
        Seed of both stratified splits.
    cache : bool
        Whether the images go through the collection's .npz cache.

    Returns
    -------
    parts : list of 3 (X, y)
        Train, validation and test: uint8 images (n, 32, 32, 3) and int64
        labels, indices into ``classes``.

    Raises
    ------
    ValueError
        If a class of ``classes`` has no image: likely another collection.
    """
    folder = isic_folder(collection, root, download)
    ids, diagnoses = _isic.read_isic_metadata(folder / _isic.METADATA_FILE)
    keep = np.isin(diagnoses, classes)
    absent = [c for c in classes.tolist() if c not in set(diagnoses[keep].tolist())]
    if absent:
        raise ValueError(
            f"{folder / _isic.METADATA_FILE} has no image of the class(es) "
            f"{absent}; is this the {collection} collection?"
        )
    ids = ids[keep]
    index = {c: i for i, c in enumerate(classes.tolist())}
    labels = np.array([index[d] for d in diagnoses[keep].tolist()], dtype=np.int64)
    parts = train_validation_test_split(
        np.arange(len(ids)), labels, random_state=random_state
    )
    parts = [(rows[np.isin(y, used)], y[np.isin(y, used)]) for rows, y in parts]
    # The split is drawn on row numbers, before any image is read, so that
    # only the images kept are decoded, each once, in row order.
    needed = np.unique(np.concatenate([rows for rows, _ in parts]))
    images = read_isic_cached(folder, ids[needed].tolist(), cache)
    position = np.searchsorted(needed, np.arange(len(ids)))
    return [(images[position[rows]], y) for rows, y in parts]

