"""The image loaders, on small files written in the real formats.

Nothing here downloads. Each test writes IDX files (plain and gzipped),
CIFAR pickled batches or an ISIC folder (JPEGs + metadata.csv) into
tmp_path with pixel values that encode the label (and for ISIC the image),
so that after loading, splitting and relabelling every image can be traced
back to what was written. The last tests read the real MNIST and
Fashion-MNIST files through the ``shared_data_dir`` fixture.
"""

import gzip
import os
import pickle
import sys
import types

import numpy as np
import pytest

from skcl.datasets import (
    get_data_home,
    load_bcn12,
    load_ci_split_cifar10,
    load_ci_split_fashion_mnist,
    load_ci_split_ham8,
    load_ci_split_mnist,
    load_cifar100,
    load_di_split_cifar8,
    load_di_split_fashion_mnist,
    load_di_split_ham6,
    load_di_split_mnist,
    load_emnist_letters,
    load_fashion_mnist,
    load_mnist,
)
from skcl.datasets._idx import read_idx

PAIRS = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]

# ---------------------------------------------------------------------------
# Writers of the real formats.


def idx_bytes(array, code=0x08):
    array = np.asarray(array)
    dtype = {0x08: ">u1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4"}[code]
    header = bytes([0, 0, code, array.ndim]) + b"".join(
        int(n).to_bytes(4, "big") for n in array.shape
    )
    return header + array.astype(dtype).tobytes()


def write_idx(path, array, *, gz=False):
    content = idx_bytes(array)
    if gz:
        with gzip.open(f"{path}.gz", "wb") as f:
            f.write(content)
    else:
        path.write_bytes(content)


def labelled_images(labels, side=28):
    """Images whose pixels say their label (25·label) and index (row 0)."""
    labels = np.asarray(labels)
    images = np.repeat((25 * labels).astype(np.uint8)[:, None, None], side, 1)
    images = np.repeat(images, side, 2)
    images[:, 0, 0] = np.arange(len(labels)) % 256  # identifies the sample
    images[:, 0, 1] = np.arange(len(labels)) // 256
    return images


def sample_ids(X):
    return X[:, 0, 0].astype(int) + 256 * X[:, 0, 1].astype(int)


def write_mnist_like(root, folder="MNIST", *, n_train=10, n_test=4, n_classes=10,
                     prefix="", first_label=0, transpose=False):
    raw = root / folder / "raw"
    raw.mkdir(parents=True)
    written = {}
    for split, n, gz in (("train", n_train, True),
                         ("t10k" if not prefix else "test", n_test, False)):
        labels = np.repeat(np.arange(n_classes), n)
        images = labelled_images(labels)
        stored = images.transpose(0, 2, 1) if transpose else images
        write_idx(raw / f"{prefix}{split}-images-idx3-ubyte", stored, gz=gz)
        write_idx(raw / f"{prefix}{split}-labels-idx1-ubyte", labels + first_label, gz=gz)
        written[split] = (images, labels)
    return written


def cifar_pickle(obj):
    """Pickled like the official (Python 2) files: protocol 2, numpy.core."""
    return pickle.dumps(obj, protocol=2).replace(b"numpy._core.multiarray",
                                                 b"numpy.core.multiarray")


def cifar_images(labels):
    """Rows of 3072 bytes: R plane = 4·row, G plane = 4·column, B = 20·label."""
    rows, cols = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    planes = np.stack([4 * rows, 4 * cols, np.zeros_like(rows)])
    data = np.repeat(planes[None], len(labels), 0).astype(np.uint8)
    data[:, 2] = (20 * np.asarray(labels) % 256)[:, None, None]
    return data.reshape(len(labels), 3072)


CIFAR10_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                 "horse", "ship", "truck"]


def write_cifar10(root, per_class_per_batch=1, test_per_class=2):
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for i in range(1, 6):
        labels = list(np.tile(np.arange(10), per_class_per_batch).tolist())
        batch = {b"batch_label": f"training batch {i} of 5".encode(), b"labels": labels,
                 b"data": cifar_images(labels), b"filenames": [b"x.png"] * len(labels)}
        (folder / f"data_batch_{i}").write_bytes(cifar_pickle(batch))
    labels = np.tile(np.arange(10), test_per_class).tolist()
    batch = {b"batch_label": b"testing batch 1 of 1", b"labels": labels,
             b"data": cifar_images(labels), b"filenames": [b"x.png"] * len(labels)}
    (folder / "test_batch").write_bytes(cifar_pickle(batch))
    meta = {b"num_cases_per_batch": 10000, b"label_names": [n.encode() for n in CIFAR10_NAMES],
            b"num_vis": 3072}
    (folder / "batches.meta").write_bytes(cifar_pickle(meta))
    return folder


HAM8 = ["actinic keratosis", "basal cell carcinoma", "dermatofibroma", "melanoma", "nevus",
        "pigmented benign keratosis", "squamous cell carcinoma", "vascular lesion"]
BCN12 = ["actinic keratosis", "basal cell carcinoma", "dermatofibroma", "melanoma",
         "melanoma metastasis", "nevus", "other", "scar", "seborrheic keratosis",
         "solar lentigo", "squamous cell carcinoma", "vascular lesion"]
SIZES = [(64, 48), (50, 40), (30, 60), (33, 33)]


def write_isic(root, collection, class_counts, *, extra_rows=(),
               columns="isic_id,attribution,diagnosis"):
    """A folder as the ISIC tool writes it: <isic_id>.jpg + metadata.csv.

    Image k is a solid colour: red = 20 + 20·class, green = 3·k, so after
    JPEG coding and Lanczos resizing its class and k can be read back.
    """
    from PIL import Image

    folder = root / collection
    folder.mkdir(parents=True)
    lines = [columns]
    k = 0
    for diagnosis, count in class_counts:
        c = (HAM8 if collection == "HAM10000" else BCN12).index(diagnosis)
        for _ in range(count):
            image_id = f"ISIC_{k:07d}"
            size = SIZES[k % len(SIZES)]
            Image.new("RGB", size, (20 + 20 * c, 3 * k, 128)).save(
                folder / f"{image_id}.jpg", quality=95
            )
            lines.append(f"{image_id},Hospital Clinic Barcelona,{diagnosis}")
            k += 1
    lines.extend(extra_rows)
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return folder


def isic_class_and_id(X):
    mean = X.reshape(len(X), -1, 3).mean(axis=1)
    return np.round((mean[:, 0] - 20) / 20).astype(int), np.round(mean[:, 1] / 3).astype(int)


# ---------------------------------------------------------------------------
# The data folder setting.


def test_get_data_home_root_then_environment_then_default(monkeypatch, tmp_path):
    monkeypatch.setenv("SKCL_DATA_DIR", str(tmp_path / "env"))
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    assert get_data_home() == tmp_path / "env"
    monkeypatch.delenv("SKCL_DATA_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / "skcl_data"
    assert not (tmp_path / "home").exists()  # reading never creates folders


def test_loaders_read_the_folder_of_skcl_data_dir(monkeypatch, tmp_path):
    write_mnist_like(tmp_path)
    monkeypatch.setenv("SKCL_DATA_DIR", str(tmp_path))
    data = load_mnist()
    assert len(data.train[1]) + len(data.validation[1]) == 100


# ---------------------------------------------------------------------------
# IDX.


@pytest.mark.parametrize("gz", [False, True])
def test_read_idx_round_trip(tmp_path, gz):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "x", images, gz=gz)
    read = read_idx(tmp_path / ("x.gz" if gz else "x"), ndim=3)
    np.testing.assert_array_equal(read, images)
    assert read.dtype == np.uint8 and read.flags.writeable
    # A big-endian int32 file (type code 0x0C) comes back in native order.
    values = np.array([[-1, 2], [300000, -4]])
    (tmp_path / "i").write_bytes(idx_bytes(values, code=0x0C))
    np.testing.assert_array_equal(read_idx(tmp_path / "i"), values)


def test_read_idx_rejects_wrong_magic_truncated_and_swapped_files(tmp_path):
    good = idx_bytes(np.zeros((3, 28, 28), np.uint8))
    (tmp_path / "magic").write_bytes(b"\x01\x02" + good[2:])
    with pytest.raises(ValueError, match="magic number is 0x01020803"):
        read_idx(tmp_path / "magic")
    (tmp_path / "type").write_bytes(b"\x00\x00\x07" + good[3:])
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "type")
    (tmp_path / "short").write_bytes(good[:-5])
    with pytest.raises(ValueError, match="truncated.*shape \\(3, 28, 28\\)"):
        read_idx(tmp_path / "short")
    (tmp_path / "long").write_bytes(good + b"\x00")
    with pytest.raises(ValueError, match="longer than its header"):
        read_idx(tmp_path / "long")
    (tmp_path / "header").write_bytes(good[:9])
    with pytest.raises(ValueError, match="header is incomplete"):
        read_idx(tmp_path / "header")
    with pytest.raises(ValueError, match="expected 1 dimensions"):
        read_idx(tmp_path / "long", ndim=1)
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b" + b"garbage")
    with pytest.raises(ValueError, match="Cannot read the IDX file"):
        read_idx(tmp_path / "bad.gz")


def test_corrupt_mnist_file_names_the_file(tmp_path):
    write_mnist_like(tmp_path)
    path = tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte"
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match=f"{path}.* truncated"):
        load_ci_split_mnist(tmp_path)


def test_images_and_labels_of_different_lengths_are_rejected(tmp_path):
    write_mnist_like(tmp_path)
    write_idx(tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte", np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="40 images but .* 3 labels"):
        load_mnist(tmp_path)


# ---------------------------------------------------------------------------
# MNIST-like task sequences.


def test_ci_split_mnist_from_idx_files(tmp_path):
    written = write_mnist_like(tmp_path)  # train gzipped, test plain
    data = load_ci_split_mnist(tmp_path)
    assert data.name == "CI Split MNIST"
    np.testing.assert_array_equal(data.classes, np.arange(10))
    assert data.target_names.tolist() == [str(d) for d in range(10)]
    assert data.task_classes == [[str(a), str(b)] for a, b in PAIRS]
    for split in ("train", "validation", "test"):
        assert len(data[split]) == 5
        for (X, y), pair in zip(data[split], PAIRS):
            assert X.shape[1:] == (28, 28) and X.dtype == np.uint8 and y.dtype == np.int64
            assert sorted(set(y.tolist())) == pair
            np.testing.assert_array_equal(X[:, 5, 5], 25 * y)  # images stay with labels
    # Validation: exactly 20 % of each class of the official training split
    # (10 per class here), disjoint from training; test = the official test split.
    for X, y in data.validation:
        assert np.bincount(y, minlength=10)[np.unique(y)].tolist() == [2, 2]
    train_ids = np.concatenate([sample_ids(X) for X, _ in data.train])
    val_ids = np.concatenate([sample_ids(X) for X, _ in data.validation])
    assert sorted(np.concatenate([train_ids, val_ids]).tolist()) == list(range(100))
    X_test = np.concatenate([X for X, _ in data.test])
    y_test = np.concatenate([y for _, y in data.test])
    np.testing.assert_array_equal(X_test, written["t10k"][0])
    np.testing.assert_array_equal(y_test, written["t10k"][1])
    assert "5 tasks" in data.DESCR and "seed 1337" in data.DESCR


def test_split_is_deterministic_and_depends_on_the_seed(tmp_path):
    write_mnist_like(tmp_path)
    first, again = load_ci_split_mnist(tmp_path), load_ci_split_mnist(tmp_path)
    other = load_ci_split_mnist(tmp_path, random_state=0)
    for (X1, y1), (X2, y2) in zip(first.validation, again.validation):
        np.testing.assert_array_equal(X1, X2)
        np.testing.assert_array_equal(y1, y2)
    ids = [sorted(sample_ids(X).tolist()) for X, _ in first.validation]
    assert ids != [sorted(sample_ids(X).tolist()) for X, _ in other.validation]


def test_di_split_mnist_labels_even_0_odd_1(tmp_path):
    write_mnist_like(tmp_path)
    ci, di = load_ci_split_mnist(tmp_path), load_di_split_mnist(tmp_path)
    np.testing.assert_array_equal(di.classes, [0, 1])
    assert di.target_names.tolist() == ["even", "odd"]
    assert di.task_classes == ci.task_classes
    for split in ("train", "validation", "test"):
        for (X_ci, y_ci), (X_di, y_di) in zip(ci[split], di[split]):
            np.testing.assert_array_equal(X_di, X_ci)
            digits = X_di[:, 5, 5] // 25
            np.testing.assert_array_equal(y_di, digits % 2)
            assert y_di.dtype == np.int64 and set(y_di.tolist()) == {0, 1}


def test_fashion_mnist_sequences_and_pretraining_task(tmp_path):
    write_mnist_like(tmp_path, "FashionMNIST")
    ci = load_ci_split_fashion_mnist(tmp_path)
    assert ci.task_classes[0] == ["T-shirt/top", "Trouser"]
    assert ci.task_classes[4] == ["Bag", "Ankle boot"]
    di = load_di_split_fashion_mnist(tmp_path)
    np.testing.assert_array_equal(di.classes, [0, 1])
    for (X, y), pair in zip(di.test, PAIRS):
        np.testing.assert_array_equal(y, (X[:, 5, 5] // 25 == pair[1]).astype(int))
    data = load_fashion_mnist(tmp_path)
    X, y = data.train
    assert X.shape == (80, 28, 28) and data.validation[0].shape == (20, 28, 28)
    assert data.test[0].shape == (40, 28, 28) and data.name == "Fashion-MNIST"
    np.testing.assert_array_equal(np.bincount(y), np.full(10, 8))


def test_emnist_letters_shifts_labels_and_transposes_images(tmp_path):
    written = write_mnist_like(tmp_path, "EMNIST", n_train=5, n_test=2, n_classes=26,
                               prefix="emnist-letters-", first_label=1, transpose=True)
    data = load_emnist_letters(tmp_path)
    np.testing.assert_array_equal(data.classes, np.arange(26))
    assert data.target_names[0] == "a" and data.target_names[-1] == "z"
    X, y = data.test
    # Stored transposed; read back upright (the written, untransposed images).
    np.testing.assert_array_equal(X, written["test"][0])
    np.testing.assert_array_equal(y, np.repeat(np.arange(26), 2))
    assert data.train[0].shape == (104, 28, 28) and set(data.train[1].tolist()) == set(range(26))


# ---------------------------------------------------------------------------
# Missing files and downloads.


def test_missing_files_say_what_is_expected_where(tmp_path, monkeypatch):
    monkeypatch.delenv("SKCL_DATA_DIR", raising=False)
    with pytest.raises(FileNotFoundError) as error:
        load_ci_split_mnist(tmp_path)
    message = str(error.value)
    assert str(tmp_path / "MNIST" / "raw") in message
    for name in ("train-images-idx3-ubyte", "t10k-labels-idx1-ubyte", ".gz",
                 "download=True", 'pip install "skcl[download]"', "SKCL_DATA_DIR"):
        assert name in message
    with pytest.raises(FileNotFoundError, match="cifar-10-batches-py.*data_batch_1.*batches.meta"):
        load_di_split_cifar8(tmp_path)
    with pytest.raises(FileNotFoundError, match="emnist-letters-train-images-idx3-ubyte"):
        load_emnist_letters(tmp_path)
    # One file missing: only that one is named.
    write_mnist_like(tmp_path, "FashionMNIST")
    (tmp_path / "FashionMNIST" / "raw" / "t10k-images-idx3-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match=r"appended\): t10k-images-idx3-ubyte\. The data"):
        load_fashion_mnist(tmp_path)


def test_download_without_torchvision_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", None)  # import fails
    with pytest.raises(ImportError, match=r'pip install "skcl\[download\]"'):
        load_ci_split_mnist(tmp_path, download=True)
    with pytest.raises(ImportError, match="CIFAR-100"):
        load_cifar100(tmp_path, download=True)


def test_download_asks_torchvision_and_reads_what_it_wrote(tmp_path, monkeypatch):
    """A stand-in torchvision writes the files where the real one does."""
    calls = []

    class MNIST:
        def __init__(self, root, train=True, download=False, **kwargs):
            calls.append((root, train, download, kwargs))
            if not (tmp_path / "MNIST").exists():
                write_mnist_like(tmp_path / "fetched")
                (tmp_path / "fetched" / "MNIST").rename(tmp_path / "MNIST")

    datasets = types.ModuleType("torchvision.datasets")
    datasets.MNIST = MNIST
    torchvision = types.ModuleType("torchvision")
    torchvision.datasets = datasets
    monkeypatch.setitem(sys.modules, "torchvision", torchvision)
    monkeypatch.setitem(sys.modules, "torchvision.datasets", datasets)
    data = load_di_split_mnist(tmp_path, download=True)
    assert calls == [(str(tmp_path), True, True, {}), (str(tmp_path), False, True, {})]
    assert sum(len(y) for _, y in data.test) == 40
    load_di_split_mnist(tmp_path, download=True)  # files present: no new call
    assert len(calls) == 2


# ---------------------------------------------------------------------------
# CIFAR.


def test_ci_split_cifar10_from_pickled_batches(tmp_path):
    write_cifar10(tmp_path)
    data = load_ci_split_cifar10(tmp_path)
    assert data.target_names.tolist() == CIFAR10_NAMES
    assert data.task_classes[0] == ["airplane", "automobile"]
    rows, cols = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    for split, n_per_class in (("train", 4), ("validation", 1), ("test", 2)):
        for (X, y), pair in zip(data[split], PAIRS):
            assert X.shape == (2 * n_per_class, 32, 32, 3) and X.dtype == np.uint8
            assert y.dtype == np.int64 and sorted(set(y.tolist())) == pair
            # Channels last: red varies down the rows, green across the columns.
            np.testing.assert_array_equal(X[..., 0], np.broadcast_to(4 * rows, X.shape[:3]))
            np.testing.assert_array_equal(X[..., 1], np.broadcast_to(4 * cols, X.shape[:3]))
            np.testing.assert_array_equal(X[:, 7, 9, 2], 20 * y)


def test_di_split_cifar8_vehicles_0_animals_1(tmp_path):
    write_cifar10(tmp_path, per_class_per_batch=2)
    data = load_di_split_cifar8(tmp_path)
    assert data.task_classes == [["airplane", "cat"], ["automobile", "deer"],
                                 ["ship", "dog"], ["truck", "horse"]]
    assert data.target_names.tolist() == ["vehicle", "animal"]
    vehicles = {0, 1, 8, 9}
    for split in ("train", "validation", "test"):
        assert len(data[split]) == 4
        for (X, y), names in zip(data[split], data.task_classes):
            original = X[:, 0, 0, 2] // 20
            assert set(original.tolist()) == {CIFAR10_NAMES.index(n) for n in names}
            np.testing.assert_array_equal(y, [0 if c in vehicles else 1 for c in original])
    all_original = np.concatenate([X[:, 0, 0, 2] // 20 for X, _ in data.train])
    assert 2 not in all_original and 6 not in all_original  # no bird, no frog


def test_cifar100_fine_labels_and_names(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    names = [f"class{i:02d}" for i in range(100)]
    for split, n in (("train", 5), ("test", 1)):
        fine = np.repeat(np.arange(100), n).tolist()
        batch = {b"filenames": [b"x.png"] * len(fine), b"batch_label": split.encode(),
                 b"fine_labels": fine, b"coarse_labels": [c // 5 for c in fine],
                 b"data": cifar_images(fine)}
        (folder / split).write_bytes(cifar_pickle(batch))
    meta = {b"fine_label_names": [n.encode() for n in names],
            b"coarse_label_names": [b"c"] * 20}
    (folder / "meta").write_bytes(cifar_pickle(meta))
    data = load_cifar100(tmp_path)
    assert data.target_names.tolist() == names
    np.testing.assert_array_equal(data.classes, np.arange(100))
    assert data.train[0].shape == (400, 32, 32, 3) and data.validation[0].shape == (100, 32, 32, 3)
    np.testing.assert_array_equal(np.bincount(data.validation[1]), np.ones(100))
    np.testing.assert_array_equal(data.test[1], np.arange(100))
    np.testing.assert_array_equal(data.test[0][:, 0, 0, 2], (20 * np.arange(100)) % 256)


class _Payload:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_cifar_unpickler_refuses_code_and_reports_corrupt_files(tmp_path, monkeypatch):
    folder = write_cifar10(tmp_path)
    monkeypatch.chdir(tmp_path)
    (folder / "data_batch_3").write_bytes(
        pickle.dumps({b"data": _Payload(), b"labels": []}, protocol=2)
    )
    with pytest.raises(ValueError,
                       match="data_batch_3.*refusing to load the global (posix|nt).system"):
        load_ci_split_cifar10(tmp_path)
    assert not (tmp_path / "pwned").exists()
    (folder / "data_batch_3").write_bytes((folder / "data_batch_2").read_bytes()[:500])
    with pytest.raises(ValueError, match="data_batch_3 is not a CIFAR batch"):
        load_ci_split_cifar10(tmp_path)
    (folder / "data_batch_3").write_bytes(
        cifar_pickle({b"data": cifar_images([1]), b"fine_labels": [1]})
    )
    with pytest.raises(ValueError, match=r"lacks the keys \[b'labels'\]"):
        load_ci_split_cifar10(tmp_path)
    (folder / "data_batch_3").write_bytes(
        cifar_pickle({b"data": np.zeros((1, 100), np.uint8), b"labels": [1]})
    )
    with pytest.raises(ValueError, match=r"shape \(n, 3072\)"):
        load_ci_split_cifar10(tmp_path)


# ---------------------------------------------------------------------------
# ISIC: HAM10000 and BCN20000.

HAM_COUNTS = [(name, 10) for name in HAM8]


def test_ci_split_ham8_from_an_isic_folder(tmp_path):
    write_isic(tmp_path, "HAM10000", HAM_COUNTS,
               extra_rows=["ISIC_9999999,X,solar lentigo", "ISIC_9999998,X,"])
    data = load_ci_split_ham8(tmp_path)
    assert data.target_names.tolist() == HAM8
    np.testing.assert_array_equal(data.classes, np.arange(8))
    assert data.task_classes[2] == ["nevus", "pigmented benign keratosis"]
    seen = []
    for split in ("train", "validation", "test"):
        assert len(data[split]) == 4
        for (X, y), pair in zip(data[split], [[0, 1], [2, 3], [4, 5], [6, 7]]):
            assert X.shape[1:] == (32, 32, 3) and X.dtype == np.uint8 and y.dtype == np.int64
            assert sorted(set(y.tolist())) == pair
            cls, ids = isic_class_and_id(X)
            np.testing.assert_array_equal(cls, y)  # each image kept its label
            seen.extend(ids.tolist())
    # Every listed image of the 8 classes appears once; rows of other
    # diagnoses (whose images do not even exist) are ignored.
    assert sorted(seen) == list(range(80))
    n = {s: sum(len(y) for _, y in data[s]) for s in ("train", "validation", "test")}
    assert n == {"train": 51, "validation": 13, "test": 16}  # 64 / 16 / 20 %
    for _, y in data.test:
        assert np.bincount(y)[np.unique(y)].tolist() == [2, 2]  # stratified


def test_isic_images_are_resized_with_lanczos(tmp_path):
    from PIL import Image

    folder = write_isic(tmp_path, "HAM10000", HAM_COUNTS)
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (45, 60, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(folder / "ISIC_0000000.png")
    (folder / "ISIC_0000000.png").rename(folder / "ISIC_0000000.jpg")  # pillow sniffs the format
    expected = np.asarray(Image.fromarray(pixels).resize((32, 32), Image.Resampling.LANCZOS))
    bilinear = np.asarray(Image.fromarray(pixels).resize((32, 32), Image.Resampling.BILINEAR))
    X = np.concatenate([X for split in ("train", "validation", "test")
                        for X, _ in load_ci_split_ham8(tmp_path)[split]])
    match = [np.array_equal(x, expected) for x in X]
    assert sum(match) == 1 and not any(np.array_equal(x, bilinear) for x in X)


def test_di_split_ham6_benign_0_malignant_1_on_ham8_splits(tmp_path):
    write_isic(tmp_path, "HAM10000", HAM_COUNTS)
    ham8, ham6 = load_ci_split_ham8(tmp_path), load_di_split_ham6(tmp_path)
    assert ham6.task_classes == [
        ["pigmented benign keratosis", "squamous cell carcinoma"],
        ["dermatofibroma", "basal cell carcinoma"],
        ["nevus", "melanoma"],
    ]
    assert ham6.target_names.tolist() == ["benign", "malignant"]
    malignant = {HAM8.index(n)
                 for n in ("basal cell carcinoma", "melanoma", "squamous cell carcinoma")}
    for split in ("train", "validation", "test"):
        ids6 = []
        for (X, y), names in zip(ham6[split], ham6.task_classes):
            cls, ids = isic_class_and_id(X)
            assert set(cls.tolist()) == {HAM8.index(n) for n in names}
            np.testing.assert_array_equal(y, [int(c in malignant) for c in cls])
            ids6.extend(ids.tolist())
        # Same split as HAM-8, without actinic keratosis and vascular lesion.
        cls8, ids8 = zip(*(isic_class_and_id(X) for X, _ in ham8[split]))
        cls8, ids8 = np.concatenate(cls8), np.concatenate(ids8)
        assert sorted(ids6) == sorted(ids8[~np.isin(cls8, [0, 7])].tolist())


def test_bcn12_class_weights(tmp_path):
    counts = [(name, 5 + 3 * i) for i, name in enumerate(BCN12)]
    write_isic(tmp_path, "BCN20000", counts)
    data = load_bcn12(tmp_path)
    assert data.name == "BCN-12" and data.target_names.tolist() == BCN12
    X, y = data.train
    assert X.shape[1:] == (32, 32, 3) and X.dtype == np.uint8
    np.testing.assert_array_equal(isic_class_and_id(X)[0], y)
    n = np.bincount(y, minlength=12)
    assert sorted(data.class_weight) == list(range(12))
    for c in range(12):
        assert data.class_weight[c] == pytest.approx(n.min() / n[c])
    # Weighted, every class counts as much as the rarest one (m of the paper).
    weights = np.array([data.class_weight[c] for c in y])
    np.testing.assert_allclose(np.bincount(y, weights), n.min())
    assert data.class_weight[0] == 1.0 and data.class_weight[11] < 0.2


def test_isic_cache_is_explicit_and_reused(tmp_path):
    folder = write_isic(tmp_path, "HAM10000", HAM_COUNTS)
    plain = load_di_split_ham6(tmp_path)
    assert not (folder / "skcl_images_32x32.npz").exists()
    cached = load_di_split_ham6(tmp_path, cache=True)
    assert (folder / "skcl_images_32x32.npz").exists()
    # HAM-8 needs more images than HAM-6 cached: they are added.
    ham8 = load_ci_split_ham8(tmp_path, cache=True)
    for image in folder.glob("*.jpg"):
        image.unlink()
    again = load_di_split_ham6(tmp_path, cache=True)
    ham8_again = load_ci_split_ham8(tmp_path, cache=True)
    for split in ("train", "validation", "test"):
        for (X1, y1), (X2, y2), (X3, y3) in zip(plain[split], cached[split], again[split]):
            np.testing.assert_array_equal(X1, X2)
            np.testing.assert_array_equal(X1, X3)
            np.testing.assert_array_equal(y1, y3)
        for (X1, _), (X2, _) in zip(ham8[split], ham8_again[split]):
            np.testing.assert_array_equal(X1, X2)
    with pytest.raises(FileNotFoundError, match="80 of the 80 images"):
        load_ci_split_ham8(tmp_path)  # without the cache the JPEGs are needed
    (folder / "skcl_images_32x32.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="delete it"):
        load_ci_split_ham8(tmp_path, cache=True)


def test_isic_errors_say_what_is_wrong(tmp_path, monkeypatch):
    monkeypatch.delenv("SKCL_DATA_DIR", raising=False)
    with pytest.raises(FileNotFoundError,
                       match=f"{tmp_path / 'HAM10000' / 'metadata.csv'}.*isic-cli"):
        load_ci_split_ham8(tmp_path)
    with pytest.raises(ValueError, match="download=True is not possible for BCN20000"):
        load_bcn12(tmp_path, download=True)
    folder = write_isic(tmp_path, "HAM10000", HAM_COUNTS)
    (folder / "ISIC_0000042.jpg").unlink()
    with pytest.raises(FileNotFoundError, match="1 of the 80 images .* ISIC_0000042.jpg"):
        load_ci_split_ham8(tmp_path)
    (folder / "ISIC_0000042.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    with pytest.raises(ValueError, match="Cannot decode the image .*ISIC_0000042.jpg"):
        load_ci_split_ham8(tmp_path)
    metadata = (folder / "metadata.csv").read_text()
    (folder / "metadata.csv").write_text(metadata.replace("diagnosis", "dx", 1))
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['diagnosis'\]"):
        load_ci_split_ham8(tmp_path)
    (folder / "metadata.csv").write_text(metadata.replace(",vascular lesion", ",nevus"))
    with pytest.raises(ValueError, match=r"no image of the class\(es\) \['vascular lesion'\]"):
        load_ci_split_ham8(tmp_path)
    (folder / "metadata.csv").rename(folder / "HAM10000_metadata.csv")
    with pytest.raises(ValueError, match="akiec"):
        load_di_split_ham6(tmp_path)


# ---------------------------------------------------------------------------
# The real MNIST and Fashion-MNIST files.

# Official class counts (training, test) of MNIST; Fashion-MNIST is balanced.
MNIST_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def _counts(tasks):
    return sum(np.bincount(y, minlength=10) for _, y in tasks)


@pytest.mark.parametrize(
    "ci_loader, di_loader, train_counts, test_counts, mean_pixel",
    [
        (load_ci_split_mnist, load_di_split_mnist, MNIST_TRAIN_COUNTS, MNIST_TEST_COUNTS, 0.1307),
        (load_ci_split_fashion_mnist, load_di_split_fashion_mnist, [6000] * 10, [1000] * 10,
         0.2860),
    ],
)
def test_real_split_mnist_and_fashion_mnist(shared_data_dir, ci_loader, di_loader,
                                            train_counts, test_counts, mean_pixel):
    ci = ci_loader()  # found through SKCL_DATA_DIR
    train, validation = _counts(ci.train), _counts(ci.validation)
    np.testing.assert_array_equal(train + validation, train_counts)
    np.testing.assert_array_equal(_counts(ci.test), test_counts)
    assert train.sum() == 48000 and validation.sum() == 12000 and _counts(ci.test).sum() == 10000
    # Stratified: each class gives 20 % (rounded) of its samples to validation.
    assert np.all(np.abs(validation - 0.2 * np.asarray(train_counts)) <= 1)
    for split in ("train", "validation", "test"):
        for (X, y), pair in zip(ci[split], PAIRS):
            assert X.dtype == np.uint8 and X.shape[1:] == (28, 28) and y.dtype == np.int64
            assert sorted(set(y.tolist())) == pair
    X_all = np.concatenate([X for X, _ in ci.train + ci.validation])
    assert X_all.min() == 0 and X_all.max() == 255
    # The datasets' well-known mean intensity (0.1307 for MNIST, 0.2860 for Fashion-MNIST).
    assert X_all.mean() / 255 == pytest.approx(mean_pixel, abs=5e-4)
    di = di_loader(shared_data_dir)
    for (X_ci, y_ci), (X_di, y_di) in zip(ci.test, di.test):
        np.testing.assert_array_equal(X_di, X_ci)
        np.testing.assert_array_equal(y_di, y_ci % 2)


def test_real_pretraining_tasks(shared_data_dir):
    mnist, fashion = load_mnist(shared_data_dir), load_fashion_mnist(shared_data_dir)
    for data in (mnist, fashion):
        assert data.train[0].shape == (48000, 28, 28)
        assert data.validation[0].shape == (12000, 28, 28)
        assert data.test[0].shape == (10000, 28, 28)
    np.testing.assert_array_equal(np.bincount(fashion.validation[1]), np.full(10, 1200))
    # MNIST and Fashion-MNIST are different images.
    assert np.abs(mnist.test[0].astype(int) - fashion.test[0]).mean() > 20


class _HugeArray:
    """Pickles as numpy's reconstruction of a 16 TiB array."""

    def __init__(self, dtype="b", state=None):
        self.dtype, self.state = dtype, state

    def __reduce__(self):
        from numpy._core.multiarray import _reconstruct

        built = (_reconstruct, (np.ndarray, (2**44,) if self.state is None else (0,), self.dtype))
        return built if self.state is None else (*built, self.state)


@pytest.mark.parametrize("payload", [
    _HugeArray(),  # the reconstruction's own shape
    _HugeArray("O", (1, (2**44,), np.dtype("O"), False, [1, 2])),  # an object array's state
    None,  # a counted string that runs past the end of the file
])
def test_cifar_reader_bounds_what_a_crafted_file_asks_for(tmp_path, payload):
    folder = write_cifar10(tmp_path)
    if payload is None:
        crafted = b"\x80\x04\x8e" + (2**44).to_bytes(8, "little") + b"abc"
    else:
        crafted = cifar_pickle({b"data": payload, b"labels": [1]})
    (folder / "data_batch_3").write_bytes(crafted)
    with pytest.raises(ValueError, match="data_batch_3 is not a CIFAR batch"):
        load_ci_split_cifar10(tmp_path)
