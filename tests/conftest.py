"""Shared fixtures: the bundled classical task sequences and the real
MNIST / Fashion-MNIST files."""

import os
from pathlib import Path

import pytest

from skcl.datasets import load_ci_split_iris, load_ci_split_wine

# The paper's settings for Iris (appendix C).
IRIS_SETTINGS = dict(n_epochs=100, batch_size=16, learning_rate=0.1)

# The files the real-data tests read, in torchvision's layout.
SHARED_DATA_FILES = [
    f"{dataset}/raw/{split}-{kind}-ubyte"
    for dataset in ("MNIST", "FashionMNIST")
    for split in ("train", "t10k")
    for kind in ("images-idx3", "labels-idx1")
]


@pytest.fixture(scope="session")
def iris():
    return load_ci_split_iris()


@pytest.fixture(scope="session")
def wine():
    return load_ci_split_wine()


@pytest.fixture(scope="session")
def shared_data_dir():
    """The folder of the real MNIST and Fashion-MNIST files.

    Found through the environment variable ``SKCL_DATA_DIR`` (the loaders'
    own setting). When it is unset or lacks the files, the test is skipped
    with a message saying how to point it at them, unless
    ``SKCL_REQUIRE_DATA=1`` (as in CI), in which case it fails.
    """
    value = os.environ.get("SKCL_DATA_DIR")
    if not value:
        problem = "SKCL_DATA_DIR is not set"
    else:
        root = Path(value).expanduser()
        missing = [
            name
            for name in SHARED_DATA_FILES
            if not (root / name).is_file() and not (root / f"{name}.gz").is_file()
        ]
        problem = f"SKCL_DATA_DIR={value!r} lacks {', '.join(missing)}" if missing else None
    if problem is None:
        return root
    message = (
        f"{problem}: this test reads the real MNIST and Fashion-MNIST IDX "
        "files. Point SKCL_DATA_DIR at the folder that holds MNIST/raw and "
        "FashionMNIST/raw, e.g. `SKCL_DATA_DIR=../shared/data python -m "
        "pytest ...` from the project's root."
    )
    if os.environ.get("SKCL_REQUIRE_DATA") == "1":
        pytest.fail(f"{message} (SKCL_REQUIRE_DATA=1 makes this an error.)")
    pytest.skip(message)
