"""A crafted file in any folder skcl reads runs no code and asks for no memory.

skcl reads files from six places: the backbone feature cache, a
PretrainedFeatureExtractor's weights file, a torch weights file, a CIFAR
batch, the ISIC image cache (the dataset cache), MNIST's IDX files, and a
skops file of an estimator. Each test plants crafted files there: a pickle
whose loading would create a marker file, an ``.npy`` of Python objects
(pickled inside), and an ``.npy`` header asking for 16 TiB. Each is
refused with a clear error (the feature cache: ignored with a warning,
and the features extracted again); none creates the marker or raises a
bare MemoryError.
"""

import gzip
import io
import pickle
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npy_format
from sklearn.datasets import load_digits

from skcl.datasets import load_ci_split_cifar10, load_ci_split_ham8, load_ci_split_mnist
from skcl.feature_extraction import BackboneFeatureExtractor, PretrainedFeatureExtractor

from .test_backbones import projection, projection_params, small_torch_module
from .test_image_datasets import HAM_COUNTS, write_cifar10, write_isic, write_mnist_like


class _Marker:
    """Loading its pickle creates the file ``path``: it would show that code ran."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def pickled(marker):
    return pickle.dumps({b"data": _Marker(marker), b"labels": [1]}, protocol=2)


def object_npy(marker):
    buffer = io.BytesIO()
    np.save(buffer, np.array([_Marker(marker)], dtype=object), allow_pickle=True)
    return buffer.getvalue()


def huge_npy(marker):
    buffer = io.BytesIO()
    npy_format.write_array_header_1_0(
        buffer, {"descr": "<f4", "fortran_order": False, "shape": (2**42, 1)}
    )
    return buffer.getvalue() + bytes(16)


PAYLOADS = {"pickle": pickled, "object array": object_npy, "16 TiB header": huge_npy}


def npz(members):
    """An .npz archive of raw .npy members (name -> bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(f"{name}.npy", content)
    return buffer.getvalue()


def npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_feature_cache_ignores_crafted_entries(digits, tmp_path, payload):
    X, _ = digits
    cache, marker = tmp_path / "cache", tmp_path / "ran"
    extractor = BackboneFeatureExtractor(projection, params=projection_params(),
                                         image_shape=(8, 8)).fit(X[:10])
    expected = extractor.transform(X[:10])
    extractor.set_params(memory=str(cache)).transform(X[:10])
    (entry,) = (cache / "skcl_features").iterdir()
    (entry / "features.npy").write_bytes(PAYLOADS[payload](marker))
    # What an earlier skcl's joblib cache would hold: never read.
    old = cache / "joblib" / "skcl" / "feature_extraction" / "_backbone" / "_cached_features"
    (old / ("0" * 32)).mkdir(parents=True)
    (old / ("0" * 32) / "output.pkl").write_bytes(pickled(marker))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        features = extractor.transform(X[:10])
    assert not marker.exists()
    assert [str(w.message) for w in caught if "Ignored the feature cache" in str(w.message)]
    np.testing.assert_array_equal(features, expected)
    (entry / "key.json").write_text("[" * 4000)  # deeper than json's recursion
    with pytest.warns(UserWarning, match="Ignored the feature cache entry"):
        np.testing.assert_array_equal(extractor.transform(X[:10]), expected)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_weights_file_refuses_crafted_files(tmp_path, payload):
    marker, path = tmp_path / "ran", tmp_path / "weights.npz"
    crafted = PAYLOADS[payload](marker)
    if payload != "pickle":  # a weights file's three arrays, θ crafted
        crafted = npz({"header": npy(np.array("{}")), "theta": crafted,
                       "classes": npy(np.arange(10))})
    path.write_bytes(crafted)
    extractor = PretrainedFeatureExtractor(image_shape=(8, 8))
    with pytest.raises(ValueError, match="not a readable skcl weights file"):
        extractor.load_weights(path)
    assert not marker.exists()


@pytest.mark.parametrize("payload", ["pickle", "torch.save of an object"])
def test_torch_weights_file_refuses_crafted_files(digits, tmp_path, payload):
    torch = pytest.importorskip("torch")
    X, _ = digits
    marker, path = tmp_path / "ran", tmp_path / "weights.pth"
    if payload == "pickle":
        path.write_bytes(pickled(marker))
    else:
        torch.save({"weight": _Marker(marker)}, path)
    extractor = BackboneFeatureExtractor(small_torch_module(torch), weights=path,
                                         image_shape=(8, 8))
    with pytest.raises(ValueError, match="not a readable torch weights file"):
        extractor.fit(X[:2])
    assert not marker.exists()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_cifar_batch_refuses_crafted_files(tmp_path, payload):
    folder, marker = write_cifar10(tmp_path), tmp_path / "ran"
    crafted = PAYLOADS[payload](marker)
    if payload != "pickle":  # an .npy where a batch should be: not a pickle of a dict
        crafted = pickle.dumps({b"data": crafted, b"labels": [1]}, protocol=2) + crafted
    (folder / "data_batch_3").write_bytes(crafted)
    with pytest.raises(ValueError, match="data_batch_3"):
        load_ci_split_cifar10(tmp_path)
    assert not marker.exists()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_dataset_cache_refuses_crafted_files(tmp_path, payload):
    folder, marker = write_isic(tmp_path, "HAM10000", HAM_COUNTS), tmp_path / "ran"
    crafted = PAYLOADS[payload](marker)
    if payload != "pickle":
        crafted = npz({"isic_id": crafted, "images": npy(np.zeros((0, 32, 32, 3), np.uint8))})
    (folder / "skcl_images_32x32.npz").write_bytes(crafted)
    with pytest.raises(ValueError, match="skcl_images_32x32.npz is unreadable.*delete it"):
        load_ci_split_ham8(tmp_path, cache=True)
    assert not marker.exists()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_idx_files_refuse_crafted_files(tmp_path, payload):
    write_mnist_like(tmp_path)
    marker = tmp_path / "ran"
    path = tmp_path / "MNIST" / "raw" / "t10k-images-idx3-ubyte"
    path.write_bytes(PAYLOADS[payload](marker))
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte is not an IDX file"):
        load_ci_split_mnist(tmp_path)
    assert not marker.exists()


_READ_UNDER_A_LIMIT = """
import resource, sys
from skcl.datasets._idx import read_idx

with open("/proc/self/statm") as statm:
    mapped = int(statm.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (mapped + 2**28, resource.getrlimit(resource.RLIMIT_AS)[1]))
try:
    read_idx(sys.argv[1])
except MemoryError as error:
    print(type(error).__name__, error)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")
def test_a_gzipped_idx_file_beyond_memory_is_named(tmp_path):
    # 2.4 MB of gzip that holds 512 MiB of zeros, in a process with 256 MiB
    # to spare: a MemoryError naming the file, not numpy's or zlib's.
    path = tmp_path / "train-images-idx1-ubyte.gz"
    zeros = gzip.compress(bytes(2**24), compresslevel=1)
    path.write_bytes(gzip.compress(bytes([0, 0, 8, 1]) + (2**29).to_bytes(4, "big"))
                     + zeros * 32)
    result = subprocess.run([sys.executable, "-c", _READ_UNDER_A_LIMIT, str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"MemoryError {path}: its header declares 0.5 GiB"), \
        result.stdout


def test_skops_file_of_an_estimator_refuses_crafted_types(tmp_path):
    skops_io = pytest.importorskip("skops.io")
    import skcl
    from skcl import GaussianDiscriminantClassifier

    marker = tmp_path / "ran"
    X, y = load_digits(return_X_y=True)
    clf = GaussianDiscriminantClassifier().partial_fit(X[:50], y[:50], classes=range(10))
    clf.note_ = _Marker(marker)
    data = skops_io.dumps(clf)
    with pytest.raises(skops_io.exceptions.UntrustedTypesFoundException, match="_Marker"):
        skops_io.loads(data, trusted=skcl.trusted_types())
    assert not marker.exists()
