"""Where each image dataset's files are expected, and how they get there.

Files live in one data folder, :func:`get_data_home`, laid out as
torchvision lays it out, so the folder can be shared with
``torchvision.datasets``. torchvision is needed only to download
(``download=True``); the ISIC collections are downloaded by hand. When
files are missing, the error names the files expected, where, and how the
data folder was chosen, since that is what a user has to fix.
"""

from . import _isic
from ._home import describe_data_home, get_data_home

__all__ = ["IDX_SOURCES", "CIFAR_SOURCES", "require_files", "isic_folder"]

_DOWNLOAD_HINT = 'pip install "skcl[download]"'

# ---------------------------------------------------------------------------
# Sources: where each dataset's files are, how torchvision fetches them, and
# what the readers need to know about their content.

_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
IDX_SOURCES = {
    "MNIST": dict(
        folder="MNIST/raw", files=_MNIST_FILES, torchvision=("MNIST", {}),
        target_names=[str(digit) for digit in range(10)],
        first_label=0, transpose=False,
    ),
    "Fashion-MNIST": dict(
        folder="FashionMNIST/raw", files=_MNIST_FILES,
        torchvision=("FashionMNIST", {}),
        target_names=[
            "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
            "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
        ],
        first_label=0, transpose=False,
    ),
    "EMNIST Letters": dict(
        folder="EMNIST/raw",
        files={
            split: (f"emnist-letters-{split}-images-idx3-ubyte",
                    f"emnist-letters-{split}-labels-idx1-ubyte")
            for split in ("train", "test")
        },
        torchvision=("EMNIST", {"split": "letters"}),
        target_names=[chr(c) for c in range(ord("a"), ord("z") + 1)],
        # EMNIST numbers the letters 1..26 and stores each image transposed.
        first_label=1, transpose=True,
    ),
}
CIFAR_SOURCES = {
    "CIFAR-10": dict(
        folder="cifar-10-batches-py",
        train=[f"data_batch_{i}" for i in range(1, 6)], test=["test_batch"],
        meta="batches.meta", label_key=b"labels", names_key=b"label_names",
        torchvision=("CIFAR10", {}), n_classes=10,
    ),
    "CIFAR-100": dict(
        folder="cifar-100-python", train=["train"], test=["test"],
        meta="meta", label_key=b"fine_labels", names_key=b"fine_label_names",
        torchvision=("CIFAR100", {}), n_classes=100,
    ),
}


def _missing_message(name, folder, missing, root, top, *, gz):
    """What is missing where, and the ways to put it there."""
    gz_note = " (each may also be gzipped, with '.gz' appended)" if gz else ""
    return (
        f"{name} was not found. Expected in {folder}{gz_note}: "
        f"{', '.join(missing)}. The data folder came from "
        f"{describe_data_home(root)}. Either pass download=True to let "
        f"torchvision fetch it (needs torchvision: {_DOWNLOAD_HINT}), or put "
        f"the files there yourself, or pass root=... or set the environment "
        f"variable SKCL_DATA_DIR to the folder that holds {top}/."
    )


def _download(name, home, torchvision_source):
    """Let torchvision download ``name`` into ``home`` (its own layout)."""
    try:
        import torchvision.datasets
    except ImportError as error:
        raise ImportError(
            f"download=True needs torchvision to download {name}: "
            f"{_DOWNLOAD_HINT}. Or put the files in {home} yourself "
            "(see the FileNotFoundError without download=True)."
        ) from error
    class_name, kwargs = torchvision_source
    dataset = getattr(torchvision.datasets, class_name)
    for train in (True, False):
        dataset(str(home), train=train, download=True, **kwargs)


def require_files(name, source, root, download, expected, locate, *, gz):
    """Find the files of a source, downloading them when allowed.

    Parameters
    ----------
    name : str
        The dataset's name, for messages (e.g. ``"MNIST"``).
    source : dict
        Its entry of :data:`IDX_SOURCES` or :data:`CIFAR_SOURCES`: the
        ``folder`` below the data folder and the ``torchvision`` dataset
        class (with its keyword arguments) that downloads it.
    root : str or path-like or None
        The ``root`` argument of the loader (see :func:`get_data_home`).
    download : bool
        Whether torchvision may download missing files.
    expected : list of str
        The names of the files needed.
    locate : callable
        ``locate(folder, name)``: the path of the file ``name`` in
        ``folder``, or None when it is absent.
    gz : bool
        Whether the files may also be gzipped (said in the message).

    Returns
    -------
    folder : pathlib.Path
        The folder that holds every expected file.

    Raises
    ------
    FileNotFoundError
        If files are missing (after the download, with ``download``).
    ImportError
        If ``download`` is needed but torchvision is not installed.
    """
    home = get_data_home(root)
    folder = home / source["folder"]
    missing = [f for f in expected if locate(folder, f) is None]
    if missing and download:
        _download(name, home, source["torchvision"])
        missing = [f for f in expected if locate(folder, f) is None]
        if missing:
            raise FileNotFoundError(
                f"torchvision's download of {name} did not write "
                f"{', '.join(missing)} into {folder}."
            )
    if missing:
        top = source["folder"].split("/")[0]
        raise FileNotFoundError(_missing_message(name, folder, missing, root, top, gz=gz))
    return folder


def isic_folder(collection, root, download):
    """The folder of an ISIC collection, which must hold its metadata.csv.

    Parameters
    ----------
    collection : str
        ``"HAM10000"`` or ``"BCN20000"``: the folder's name in the data
        folder.
    root : str or path-like or None
        The ``root`` argument of the loader (see :func:`get_data_home`).
    download : bool
        Must be False: ISIC collections are downloaded by hand.

    Returns
    -------
    folder : pathlib.Path

    Raises
    ------
    ValueError
        With ``download``, or if the folder holds the Harvard Dataverse
        release of HAM10000 instead of the ISIC archive's.
    FileNotFoundError
        If ``metadata.csv`` is missing.
    """
    folder = get_data_home(root) / collection
    metadata = folder / _isic.METADATA_FILE
    how = (
        f"ISIC collections cannot be downloaded by skcl: download the "
        f"{collection} collection from the ISIC archive (e.g. with its "
        f"command-line tool, pip install isic-cli, then `isic image download` "
        f"with the collection's id: it writes the images <isic_id>.jpg and "
        f"metadata.csv into one folder), then put that folder at {folder}, "
        f"or pass root=... or set SKCL_DATA_DIR to the folder that holds "
        f"{collection}/ (now {describe_data_home(root)})."
    )
    if download:
        raise ValueError(f"download=True is not possible for {collection}. {how}")
    if not metadata.is_file():
        if (folder / "HAM10000_metadata.csv").is_file():
            raise ValueError(
                f"{folder} holds HAM10000_metadata.csv (the Harvard Dataverse "
                "release), whose code 'akiec' lumps actinic keratosis and "
                "squamous cell carcinoma together, so HAM-8 and HAM-6 cannot "
                f"be built from it. {how}"
            )
        raise FileNotFoundError(f"{collection} was not found: {metadata} is missing. {how}")
    return folder
