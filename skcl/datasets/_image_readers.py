"""Read an image dataset's files into arrays, checked.

The formats are read by their own modules (:mod:`._idx`, :mod:`._cifar`,
:mod:`._isic`); here a dataset's files are found (:mod:`._image_files`)
and read into its official (train, test) splits, checking what the format
readers cannot know: pixel types, labels in range, images and labels of
equal length. Decoding and resizing ISIC's JPEGs is slow, so their
images can go through a cache file.
"""

import numpy as np

from .._utils.npy_files import read_npz
from . import _cifar, _idx, _isic
from ._image_files import CIFAR_SOURCES, IDX_SOURCES, require_files

__all__ = ["read_idx_dataset", "read_cifar_dataset", "read_isic_cached", "ISIC_CACHE"]

ISIC_CACHE = "skcl_images_32x32.npz"
"""Name of the cache of resized ISIC images, in the collection's folder."""


def read_idx_dataset(name, root, download):
    """The official (train, test) splits of an IDX dataset, as read.

    Parameters
    ----------
    name : str
        A key of :data:`IDX_SOURCES` (``"MNIST"``, ``"Fashion-MNIST"``,
        ``"EMNIST Letters"``).
    root : str or path-like or None
        The loader's ``root`` (see :func:`get_data_home`).
    download : bool
        Whether torchvision may download missing files.

    Returns
    -------
    splits : list of 2 (images, labels)
        Train then test: uint8 images (n, 28, 28), upright, and int64
        labels from 0.
    target_names : ndarray of str

    Raises
    ------
    ValueError
        If a file is not uint8 images, images and labels differ in length,
        or a label is out of range.
    """
    source = IDX_SOURCES[name]
    expected = [f for pair in source["files"].values() for f in pair]
    folder = require_files(name, source, root, download, expected, _idx.find_idx, gz=True)
    n_classes = len(source["target_names"])
    splits = []
    for split in ("train", "test"):
        images_name, labels_name = source["files"][split]
        images_path = _idx.find_idx(folder, images_name)
        labels_path = _idx.find_idx(folder, labels_name)
        images = _idx.read_idx(images_path, ndim=3)
        labels = _idx.read_idx(labels_path, ndim=1).astype(np.int64)
        if images.dtype != np.uint8:
            raise ValueError(f"{images_path} holds {images.dtype} pixels, expected uint8.")
        if len(images) != len(labels):
            raise ValueError(
                f"{images_path} holds {len(images)} images but {labels_path} "
                f"holds {len(labels)} labels."
            )
        labels -= source["first_label"]
        if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
            raise ValueError(
                f"{labels_path} has labels outside "
                f"{source['first_label']}..{source['first_label'] + n_classes - 1}."
            )
        if source["transpose"]:
            images = np.ascontiguousarray(images.transpose(0, 2, 1))
        splits.append((images, labels))
    return splits, np.array(source["target_names"])


def read_cifar_dataset(name, root, download):
    """The official (train, test) splits of a CIFAR dataset, as read.

    Parameters
    ----------
    name : str
        A key of :data:`CIFAR_SOURCES` (``"CIFAR-10"``, ``"CIFAR-100"``).
    root : str or path-like or None
        The loader's ``root`` (see :func:`get_data_home`).
    download : bool
        Whether torchvision may download missing files.

    Returns
    -------
    splits : list of 2 (images, labels)
        Train then test, the batches of each concatenated in file order:
        uint8 images (n, 32, 32, 3) and int64 labels.
    target_names : ndarray of str
        From the metadata file.

    Raises
    ------
    ValueError
        If the metadata names another number of classes or a label is out
        of range (and as :func:`read_cifar_batch` for unreadable files).
    """
    source = CIFAR_SOURCES[name]
    expected = [*source["train"], *source["test"], source["meta"]]
    folder = require_files(
        name, source, root, download, expected,
        lambda folder, f: (folder / f) if (folder / f).is_file() else None, gz=False,
    )
    meta_path = folder / source["meta"]
    meta = _cifar.read_cifar_batch(meta_path, keys=(source["names_key"],))
    target_names = _cifar.label_names(meta, source["names_key"], meta_path)
    if len(target_names) != source["n_classes"]:
        raise ValueError(
            f"{meta_path} names {len(target_names)} classes, expected {source['n_classes']}."
        )
    splits = []
    for split in ("train", "test"):
        parts = []
        for file_name in source[split]:
            path = folder / file_name
            batch = _cifar.read_cifar_batch(path, keys=(b"data", source["label_key"]))
            images, labels = _cifar.cifar_images(batch, source["label_key"], path)
            if labels.size and (labels.min() < 0 or labels.max() >= source["n_classes"]):
                raise ValueError(f"{path} has labels outside 0..{source['n_classes'] - 1}.")
            parts.append((images, labels))
        splits.append(
            (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        )
    return splits, target_names


def read_isic_cached(folder, ids, cache):
    """Images of ``ids``, through an explicit .npz cache when ``cache``.

    The cache (:data:`ISIC_CACHE` in ``folder``) is keyed by image id and
    only grows: images not in it yet are decoded, resized and appended, so
    loaders that read different subsets of one collection (HAM-8, HAM-6)
    share it. It is stored without pickle.

    Parameters
    ----------
    folder : pathlib.Path
        The collection's folder.
    ids : list of str
        Image ids, in the order wanted (repeats allowed).
    cache : bool
        Whether to go through the cache file.

    Returns
    -------
    ndarray of uint8, shape (len(ids), 32, 32, 3)

    Raises
    ------
    ValueError
        If the cache file is unreadable or inconsistent (deleting it
        rebuilds it).
    """
    if not cache:
        return _isic.read_isic_images(folder, ids)
    path = folder / ISIC_CACHE
    cached_ids = np.array([], dtype=str)
    cached_images = np.empty((0, _isic.IMAGE_SIZE, _isic.IMAGE_SIZE, 3), np.uint8)
    if path.is_file():
        try:
            stored = read_npz(path, ["isic_id", "images"])  # sizes checked before allocating
            cached_ids, cached_images = stored["isic_id"], stored["images"]
        except (OSError, ValueError, KeyError) as error:
            raise ValueError(
                f"The image cache {path} is unreadable ({error}); delete it "
                "to rebuild it from the JPEG files."
            ) from error
        if cached_images.shape[1:] != (_isic.IMAGE_SIZE, _isic.IMAGE_SIZE, 3) or len(
            cached_images
        ) != len(cached_ids):
            raise ValueError(f"The image cache {path} is inconsistent; delete it to rebuild it.")
    index = {image_id: i for i, image_id in enumerate(cached_ids.tolist())}
    todo = [image_id for image_id in dict.fromkeys(ids) if image_id not in index]
    if todo:
        cached_ids = np.concatenate([cached_ids, np.array(todo)])
        cached_images = np.concatenate(
            [cached_images, _isic.read_isic_images(folder, todo)]
        )
        np.savez(path, isic_id=cached_ids, images=cached_images)
        index = {image_id: i for i, image_id in enumerate(cached_ids.tolist())}
    return cached_images[[index[image_id] for image_id in ids]]
