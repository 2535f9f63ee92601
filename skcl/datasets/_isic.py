"""Reader for ISIC archive downloads (HAM10000, BCN20000).

The paper's code reads a collection as the ISIC command-line tool
``isic`` (isic-cli) downloads it: one folder holding ``<isic_id>.jpg``
for every image and a ``metadata.csv`` with (among others) the columns
``isic_id`` and ``diagnosis`` (full names such as ``"nevus"`` or
``"pigmented benign keratosis"``). Images are resized to 32×32 with
Lanczos resampling through pillow, as in the paper (appendix A).
"""

import csv
from pathlib import Path

import numpy as np

__all__ = ["read_isic_metadata", "read_isic_images", "METADATA_FILE"]

METADATA_FILE = "metadata.csv"
IMAGE_SIZE = 32


def read_isic_metadata(path):
    """The image ids and diagnoses of an ISIC ``metadata.csv``.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ids : ndarray of str, shape (n_rows,)
    diagnoses : ndarray of str, shape (n_rows,)
        Lower-cased and stripped; ``""`` where the archive gives none.

    Raises
    ------
    ValueError
        If the file has no ``isic_id`` or ``diagnosis`` column, or no row.
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames or []
        missing = [c for c in ("isic_id", "diagnosis") if c not in columns]
        if missing:
            raise ValueError(
                f"{path} lacks the column(s) {missing} (it has {columns}). "
                "The ISIC loaders read the metadata.csv that the ISIC "
                "archive's tool writes next to the images (`isic image "
                "download`), with the columns isic_id and diagnosis."
            )
        rows = [(row["isic_id"].strip(), (row["diagnosis"] or "").strip().lower())
                for row in reader]
    if not rows:
        raise ValueError(f"{path} has no rows.")
    ids, diagnoses = zip(*rows)
    return np.array(ids), np.array(diagnoses)


def read_isic_images(folder, ids, size=IMAGE_SIZE):
    """Read ``<folder>/<id>.jpg`` for each id, resized with Lanczos.

    Parameters
    ----------
    folder : path-like
    ids : sequence of str
    size : int, default=32
        Side of the square output (the paper's 32).

    Returns
    -------
    ndarray of uint8, shape (len(ids), size, size, 3)

    Raises
    ------
    ImportError
        Without pillow.
    FileNotFoundError
        If images are missing (the message names the first few).
    ValueError
        If an image cannot be decoded.
    """
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError as error:
        raise ImportError(
            'Reading the ISIC images needs pillow: pip install "skcl[images]".'
        ) from error
    folder = Path(folder)
    paths = [folder / f"{image_id}.jpg" for image_id in ids]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise FileNotFoundError(
            f"{len(missing)} of the {len(paths)} images listed in "
            f"{folder / METADATA_FILE} are missing from {folder}: {shown}"
        )
    images = np.empty((len(paths), size, size, 3), dtype=np.uint8)
    for i, path in enumerate(paths):
        try:
            with Image.open(path) as image:
                image = image.convert("RGB")
                images[i] = np.asarray(
                    image.resize((size, size), resample=Image.Resampling.LANCZOS)
                )
        except (UnidentifiedImageError, OSError) as error:
            raise ValueError(f"Cannot decode the image {path}: {error}") from error
    return images
