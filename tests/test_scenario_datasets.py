"""Split, Permuted and Rotated MNIST in the three scenarios.

On small IDX files written here (every pixel of an image says its label,
two say its index, as in ``test_image_datasets``) and, last, on the real
MNIST files (``shared_data_dir``). The permuted and rotated tasks are
views over shared images: each is checked against the transform applied by
hand, and against what the exact family and a pipeline learn from it
materialised.
"""

import numpy as np
import pytest
from scipy import ndimage

from skcl import GaussianDiscriminantClassifier
from skcl.datasets import (
    load_ci_split_mnist,
    load_di_split_mnist,
    load_mnist,
    load_permuted_mnist,
    load_rotated_mnist,
    load_split_mnist,
)
from skcl.feature_extraction import RandomFeatures
from skcl.pipeline import Pipeline

from .test_image_datasets import PAIRS, write_mnist_like


@pytest.fixture
def mnist_dir(tmp_path):
    written = write_mnist_like(tmp_path, n_train=10, n_test=4)
    # Pixels that differ from image to image, so that permutations show.
    return tmp_path, written


def _stripes(root):
    """Rewrite the small MNIST with images that vary across pixels."""
    from .test_image_datasets import write_idx
    raw = root / "MNIST" / "raw"
    rng = np.random.default_rng(0)
    out = {}
    for split, n, gz in (("train", 10, True), ("t10k", 4, False)):
        labels = np.repeat(np.arange(10), n)
        images = rng.integers(0, 256, (len(labels), 28, 28)).astype(np.uint8)
        for path in raw.glob(f"{split}-*"):
            path.unlink()
        write_idx(raw / f"{split}-images-idx3-ubyte", images, gz=gz)
        write_idx(raw / f"{split}-labels-idx1-ubyte", labels, gz=gz)
        out[split] = images, labels
    return out


# ---------------------------------------------------------------------------
# Split MNIST per scenario.


def test_split_mnist_labels_per_scenario(mnist_dir):
    root, _ = mnist_dir
    ci = load_ci_split_mnist(root)
    for scenario in ("task", "class"):
        data = load_split_mnist(root, scenario=scenario)
        assert data.scenario == scenario
        np.testing.assert_array_equal(data.classes, np.arange(10))
        assert [t.tolist() for t in data.task_labels] == PAIRS
        for (X, y), (X_ci, y_ci) in zip(data.test, ci.test):
            np.testing.assert_array_equal(X, X_ci)
            np.testing.assert_array_equal(y, y_ci)
    domain = load_split_mnist(root, scenario="domain")
    assert domain.scenario == "domain" and domain.classes.tolist() == [0, 1]
    assert [t.tolist() for t in domain.task_labels] == [[0, 1]] * 5
    assert domain.target_names.tolist() == ["first of pair", "second of pair"]
    for (X, y), pair in zip(domain.train, PAIRS):
        digits = X[:, 5, 5] // 25
        assert set(digits.tolist()) == set(pair)
        np.testing.assert_array_equal(y, [pair.index(d) for d in digits])  # position in pair
    # The existing loaders say their scenario and their tasks' labels too.
    assert ci.scenario == "class" and load_di_split_mnist(root).scenario == "domain"
    assert [t.tolist() for t in ci.task_labels] == PAIRS


# ---------------------------------------------------------------------------
# Permuted MNIST.


def test_permuted_tasks_are_the_images_permuted_first_task_too(tmp_path):
    write_mnist_like(tmp_path)
    images = _stripes(tmp_path)
    data = load_permuted_mnist(3, root=tmp_path, random_state=5)
    base = load_mnist(tmp_path, random_state=5)
    assert data.permutations.shape == (3, 784) and data.scenario == "domain"
    for t, (X, y) in enumerate(data.train):
        permutation = data.permutations[t]
        assert not np.array_equal(permutation, np.arange(784))  # the first task too
        assert np.array_equal(np.sort(permutation), np.arange(784))
        expected = base.train[0].reshape(len(X), -1)[:, permutation]
        np.testing.assert_array_equal(np.asarray(X), expected)
        np.testing.assert_array_equal(y, base.train[1])
        assert X.shape == (80, 784) and X.dtype == np.uint8 and len(X) == 80
        # Rows as numpy would index the materialised task.
        np.testing.assert_array_equal(X[3], expected[3])
        np.testing.assert_array_equal(X[5:9], expected[5:9])
        np.testing.assert_array_equal(X[[7, 1, 7]], expected[[7, 1, 7]])
        np.testing.assert_array_equal(X[2:6, 10:20], expected[2:6, 10:20])
        np.testing.assert_array_equal(np.asarray(X, dtype=np.float32), expected.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(data.test[1][0]),
                                  images["t10k"][0].reshape(40, -1)[:, data.permutations[1]])
    # Tasks share the images: no copy is made per task.
    assert data.train[0][0]._images is data.train[2][0]._images


def test_permutations_are_deterministic_for_a_random_state(tmp_path):
    write_mnist_like(tmp_path)
    first = load_permuted_mnist(4, root=tmp_path, random_state=0)
    again = load_permuted_mnist(4, root=tmp_path, random_state=0)
    other = load_permuted_mnist(4, root=tmp_path, random_state=1)
    np.testing.assert_array_equal(first.permutations, again.permutations)
    np.testing.assert_array_equal(np.asarray(first.train[3][0]), np.asarray(again.train[3][0]))
    assert not np.array_equal(first.permutations, other.permutations)
    assert len({p.tobytes() for p in first.permutations}) == 4  # each task its own


def test_padded_permuted_mnist_permutes_1024_pixels(tmp_path):
    write_mnist_like(tmp_path)
    _stripes(tmp_path)
    data = load_permuted_mnist(2, root=tmp_path, pad=True, random_state=3)
    base = load_mnist(tmp_path, random_state=3)
    padded = np.pad(base.test[0], ((0, 0), (2, 2), (2, 2))).reshape(40, -1)
    X, _ = data.test[1]
    assert X.shape == (40, 1024)
    np.testing.assert_array_equal(np.asarray(X), padded[:, data.permutations[1]])
    # The 124 border pixels are zeros, wherever the permutation puts them.
    assert (np.asarray(X) == 0).sum(axis=1).min() >= 1024 - 784


def test_permuted_labels_per_scenario(tmp_path):
    write_mnist_like(tmp_path)
    for scenario in ("task", "class"):
        data = load_permuted_mnist(3, root=tmp_path, scenario=scenario)
        np.testing.assert_array_equal(data.classes, np.arange(30))
        assert [t.tolist() for t in data.task_labels] == [list(range(10 * t, 10 * t + 10))
                                                          for t in range(3)]
        for t, (X, y) in enumerate(data.test):
            np.testing.assert_array_equal(y, np.repeat(np.arange(10), 4) + 10 * t)
        assert data.target_names[13] == "3 (task 2)"
    domain = load_permuted_mnist(3, root=tmp_path, scenario="domain")
    np.testing.assert_array_equal(domain.classes, np.arange(10))
    for X, y in domain.test:
        np.testing.assert_array_equal(y, np.repeat(np.arange(10), 4))


def test_a_permutation_given_is_used_and_checked(tmp_path):
    write_mnist_like(tmp_path)
    flip = np.arange(784)[::-1]
    data = load_permuted_mnist(1, root=tmp_path, permutations=[flip])
    X, _ = data.train[0]
    np.testing.assert_array_equal(np.asarray(X), load_mnist(tmp_path).train[0]
                                  .reshape(len(X), -1)[:, ::-1])
    with pytest.raises(ValueError, match="must have 784 entries"):
        load_permuted_mnist(1, root=tmp_path, permutations=[np.arange(783)])
    with pytest.raises(ValueError, match="must have 1024 entries"):
        load_permuted_mnist(1, root=tmp_path, pad=True, permutations=[flip])
    with pytest.raises(ValueError, match="each of 0..783 once"):
        load_permuted_mnist(1, root=tmp_path, permutations=[np.zeros(784, int)])
    with pytest.raises(ValueError, match="2 permutations given for n_tasks=3"):
        load_permuted_mnist(3, root=tmp_path, permutations=[flip, flip])


@pytest.mark.parametrize("n_tasks", [0, -1, 2.5, True, None])
def test_a_bad_number_of_tasks_is_refused(tmp_path, n_tasks):
    with pytest.raises(ValueError, match="n_tasks must be a positive integer"):
        load_permuted_mnist(n_tasks, root=tmp_path)


def test_a_bad_base_or_scenario_is_refused(tmp_path):
    write_mnist_like(tmp_path)
    with pytest.raises(ValueError, match="base must be one of"):
        load_permuted_mnist(2, root=tmp_path, base="cifar10")
    with pytest.raises(ValueError, match="scenario must be one of"):
        load_permuted_mnist(2, root=tmp_path, scenario="Domain")
    with pytest.raises(ValueError, match="scenario must be one of"):
        load_split_mnist(tmp_path, scenario="instance")
    with pytest.raises(ValueError, match="scenario must be one of"):
        load_rotated_mnist([0], root=tmp_path, scenario=None)


def test_the_views_learn_as_the_materialised_tasks(tmp_path):
    # The exact family in chunks of rows, and a pipeline, read the view as
    # they read the arrays it stands for.
    write_mnist_like(tmp_path)
    _stripes(tmp_path)
    data = load_permuted_mnist(2, root=tmp_path, scenario="class")
    by_view, by_array = GaussianDiscriminantClassifier(), GaussianDiscriminantClassifier()
    for X, y in data.train:
        for start in range(0, len(X), 16):
            by_view.partial_fit(X[start:start + 16], y[start:start + 16], classes=data.classes)
        by_array.partial_fit(np.asarray(X), y, classes=data.classes)
    X_test = np.asarray(data.test[1][0])
    np.testing.assert_allclose(by_view.predict_proba(X_test), by_array.predict_proba(X_test),
                               rtol=1e-9, atol=1e-12)
    pipe = Pipeline([("features", RandomFeatures(50, random_state=0)),
                     ("clf", GaussianDiscriminantClassifier())])
    reference = Pipeline([("features", RandomFeatures(50, random_state=0)),
                          ("clf", GaussianDiscriminantClassifier())])
    for X, y in data.train:
        pipe.partial_fit(X, y, classes=data.classes)
        reference.partial_fit(np.asarray(X), y, classes=data.classes)
    np.testing.assert_array_equal(pipe.predict(data.test[0][0]), reference.predict(
        np.asarray(data.test[0][0])))


# ---------------------------------------------------------------------------
# Rotated MNIST.


def test_rotations_are_exact_at_right_angles_and_match_scipy_elsewhere(tmp_path):
    write_mnist_like(tmp_path)
    _stripes(tmp_path)
    data = load_rotated_mnist([0, 90, 180, -90, 33.5], root=tmp_path)
    images = load_mnist(tmp_path).train[0]
    rotated = [np.asarray(X).reshape(-1, 28, 28) for X, _ in data.train]
    np.testing.assert_array_equal(rotated[0], images)  # 0°: identity
    np.testing.assert_array_equal(rotated[1], np.rot90(images, 1, axes=(1, 2)))
    np.testing.assert_array_equal(rotated[2], np.rot90(images, 2, axes=(1, 2)))
    np.testing.assert_array_equal(rotated[3], np.rot90(images, -1, axes=(1, 2)))
    by_scipy = ndimage.rotate(images.astype(np.float64), 33.5, axes=(1, 2), reshape=False,
                              order=1)
    by_scipy = np.clip(np.rint(by_scipy), 0, 255)
    # The sparse product's sums may round a value at .5 the other way.
    assert np.abs(rotated[4] - by_scipy).max() <= 1
    assert np.mean(rotated[4] == by_scipy) > 0.999
    assert data.angles.tolist() == [0, 90, 180, -90, 33.5] and data.scenario == "domain"
    np.testing.assert_array_equal(data.train[4][0][7], rotated[4][7].ravel())


@pytest.mark.parametrize("angles, match", [
    ([], "non-empty"), ([0, np.nan], "finite"), ([np.inf], "finite"),
    (["ten"], "numbers"), (45, "non-empty sequence"),
])
def test_bad_angles_are_refused(tmp_path, angles, match):
    with pytest.raises(ValueError, match=match):
        load_rotated_mnist(angles, root=tmp_path)


# ---------------------------------------------------------------------------
# The real files.


def test_real_permuted_and_rotated_mnist(shared_data_dir):
    mnist = load_mnist()
    data = load_permuted_mnist(10, pad=True, scenario="class")
    again = load_permuted_mnist(10, pad=True, scenario="class")
    np.testing.assert_array_equal(data.permutations, again.permutations)
    assert len(data.train) == 10 and data.classes.tolist() == list(range(100))
    X, y = data.train[9]
    assert X.shape == (48000, 1024) and y.min() == 90 and y.max() == 99
    padded = np.pad(mnist.train[0][:500], ((0, 0), (2, 2), (2, 2))).reshape(500, -1)
    np.testing.assert_array_equal(X[:500], padded[:, data.permutations[9]])
    # Permuting keeps every image's pixels: MNIST's mean intensity, 0.1307.
    assert np.asarray(data.train[0][0]).mean() * 1024 / 784 / 255 == pytest.approx(0.1307,
                                                                                    abs=5e-4)
    assert not np.array_equal(data.permutations[0], np.arange(1024))
    rotated = load_rotated_mnist([0, 90])
    np.testing.assert_array_equal(rotated.test[1][0][:300].reshape(-1, 28, 28),
                                  np.rot90(mnist.test[0][:300], 1, axes=(1, 2)))
    np.testing.assert_array_equal(rotated.test[0][0][:300].reshape(-1, 28, 28),
                                  mnist.test[0][:300])
