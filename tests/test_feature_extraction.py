"""PretrainedFeatureExtractor: the paper's CNNs against a NumPy forward pass,
pre-training and transfer on real images, weights files, input forms and
scikit-learn's estimator checks."""

import copy
import pickle
import tracemalloc

import jax
import numpy as np
import pytest
from scipy.special import expit
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcl import AQCClassifier, EWCClassifier, FineTuningClassifier, JointClassifier
from skcl.datasets import make_task_sequences
from skcl.feature_extraction import PretrainedFeatureExtractor
from skcl.feature_extraction._architectures import ConvNet
from skcl.metrics import final_average_accuracy
from skcl.model_selection import SequenceGridSearch
from skcl.pipeline import make_pipeline

# ----------------------------------------------------------------------------
# The architectures, written out again in NumPy (float64, explicit windows).


def _conv(x, layer):
    """'Same' convolution, stride 1: a sum over the kernel's shifted windows."""
    w, b = layer["w"], layer["b"]
    kh, kw = w.shape[:2]
    n, h, wd, _ = x.shape
    padded = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    out = np.zeros((n, h, wd, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += padded[:, i : i + h, j : j + wd, :] @ w[i, j]
    return out + b


def _group_norm(x, layer, groups=32, eps=1e-6):
    n, h, w, c = x.shape
    out = np.empty_like(x)
    for g in range(groups):
        part = x[..., g * c // groups : (g + 1) * c // groups]
        mean = part.mean(axis=(1, 2, 3), keepdims=True)
        var = part.var(axis=(1, 2, 3), keepdims=True)
        out[..., g * c // groups : (g + 1) * c // groups] = (part - mean) / np.sqrt(var + eps)
    return out * layer["scale"] + layer["offset"]


def _pool(x):
    """2×2 means; an odd last row or column is averaged alone."""
    n, h, w, c = x.shape
    out = np.empty((n, -(-h // 2), -(-w // 2), c))
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            out[:, i, j] = x[:, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2].mean(axis=(1, 2))
    return out


def _swish(x):
    return x * expit(x)


def _numpy_features(network, theta, images):
    p = {
        layer: {name: np.asarray(a, np.float64) for name, a in arrays.items()}
        for layer, arrays in network.unflatten(np.asarray(theta)).items()
    }
    x = images.astype(np.float64) / (255.0 if images.dtype == np.uint8 else 1.0)

    def block(x, conv, norm):
        return _swish(_group_norm(_conv(x, p[conv]), p[norm]))

    if network.architecture == "cnn4":
        x = _pool(block(x, "conv0", "norm0"))
        x = _pool(block(x, "conv1", "norm1"))
        return _swish(x.reshape(len(x), -1) @ p["dense0"]["w"] + p["dense0"]["b"])
    x = block(x, "conv0", "norm0")
    for i in range(8):
        r = block(x, f"block{i}_conv0", f"block{i}_norm0")
        r = _group_norm(_conv(r, p[f"block{i}_conv1"]), p[f"block{i}_norm1"])
        if f"block{i}_shortcut_conv" in p:
            x = _group_norm(_conv(x, p[f"block{i}_shortcut_conv"]), p[f"block{i}_shortcut_norm"])
        x = _swish(x + r)
        if i in (1, 3, 5):
            x = _pool(x)
    return x.mean(axis=(1, 2))


@pytest.mark.parametrize(
    "architecture, image_shape, n_features",
    [("cnn4", (7, 6, 2), 64), ("cnn4", (28, 28, 1), 64), ("gn_resnet18", (5, 6, 3), 512)],
)
def test_features_match_a_numpy_forward_pass(architecture, image_shape, n_features):
    """Random θ (not the initialisation, so every scale and offset matters),
    odd and even image sides, uint8 scaling."""
    network = ConvNet(architecture, image_shape, 4)
    rng = np.random.default_rng(0)
    theta = (0.3 * rng.standard_normal(network.n_params)).astype(np.float32)
    images = rng.integers(0, 256, (3, *image_shape)).astype(np.uint8)
    got = np.asarray(jax.jit(network.features)(theta, images))
    assert got.shape == (3, n_features)
    np.testing.assert_allclose(got, _numpy_features(network, theta, images), rtol=2e-4, atol=2e-5)
    # The head is one dense layer on the features.
    head = network.unflatten(theta)["head"]
    np.testing.assert_allclose(
        np.asarray(network.apply(theta, images)), got @ head["w"] + head["b"], rtol=1e-5, atol=1e-5
    )


def test_parameter_counts_follow_the_papers_architectures():
    # cnn4 on 28×28: conv 1→32, conv 32→32, two group norms, dense 7·7·32→64,
    # head 64→26 (EMNIST Letters).
    cnn4 = (9 * 32 + 32) + (9 * 32 * 32 + 32) + 2 * 64 + (7 * 7 * 32 * 64 + 64) + (64 * 26 + 26)
    assert ConvNet("cnn4", (28, 28, 1), 26).n_params == cnn4
    # gn_resnet18: 17 3×3 convolutions of 32, 64×4, 128×4, 256×4, 512×4 filters,
    # four 1×1 shortcut convolutions where the width grows, a group norm after
    # each of the 21 convolutions, and the head 512→100 (CIFAR-100).
    widths = [3, 32, 64, 64, 64, 64, 128, 128, 128, 128, 256, 256, 256, 256, 512, 512, 512, 512]
    convs = sum(9 * a * b + b for a, b in zip(widths[:-1], widths[1:]))
    shortcuts = sum(a * b + b for a, b in [(32, 64), (64, 128), (128, 256), (256, 512)])
    norms = 2 * (sum(widths[1:]) + 64 + 128 + 256 + 512)
    assert (ConvNet("gn_resnet18", (32, 32, 3), 100).n_params
            == convs + shortcuts + norms + 512 * 100 + 100)


def test_initialisation_is_lecun_normal_with_zero_biases():
    network = ConvNet("cnn4", (28, 28, 1), 10)
    params = network.unflatten(np.asarray(network.init(jax.random.PRNGKey(0))))
    dense = params["dense0"]["w"]
    assert dense.std() == pytest.approx(1 / np.sqrt(7 * 7 * 32), rel=0.05)
    assert params["conv1"]["w"].std() == pytest.approx(1 / np.sqrt(9 * 32), rel=0.05)
    for layer in ("conv0", "conv1", "dense0", "head"):
        assert not params[layer]["b"].any()
    assert np.all(params["norm0"]["scale"] == 1) and not params["norm0"]["offset"].any()


# ----------------------------------------------------------------------------
# Pre-training and transfer on real images.


@pytest.fixture(scope="module")
def digits_extractor(digits):
    """cnn4 pre-trained on the digits 5-9 (the 'similar task')."""
    X, y = digits
    keep = y >= 5
    return PretrainedFeatureExtractor(
        "cnn4", image_shape=(8, 8), n_epochs=20, learning_rate=0.01, random_state=0
    ).fit(X[keep][::2], y[keep][::2])


def test_pretraining_learns_the_pretraining_task(digits, digits_extractor):
    X, y = digits
    held_out = y >= 5
    # Odd rows of the digits 5-9 were not seen in pre-training.
    assert digits_extractor.score(X[held_out][1::2], y[held_out][1::2]) >= 0.9
    loss = digits_extractor.loss_curve_
    assert loss.shape == (20,) and loss[-1] < 0.2 * loss[0]


def test_frozen_features_let_aqc_learn_split_digits_without_forgetting(digits, digits_extractor):
    """The paper's setting and protocol on bundled data: the extractor
    pre-trained on 5-9, then CI Split Digits 0-4 (tasks {0, 1}, {2, 3}, {4})
    learned with one dense layer on its features, λ chosen on the validation
    sequence. Measured: joint 0.95, AQC 0.69 (λ = 10), EWC 0.44, fine-tuning
    0.33 (only the last task's class survives)."""
    X, y = digits
    new = y < 5
    data = make_task_sequences(X[new], y[new], [[0, 1], [2, 3], [4]], random_state=0)
    settings = dict(n_epochs=20, batch_size=16, learning_rate=0.1, random_state=0)
    scores = {}
    for name, clf, grid in [
        ("joint", JointClassifier(**settings), {}),
        ("fine-tuning", FineTuningClassifier(**settings), {}),
        ("aqc", AQCClassifier(**settings), {"aqcclassifier__alpha": [1, 10, 100]}),
        ("ewc", EWCClassifier(**settings), {"ewcclassifier__alpha": [1, 100, 10000]}),
    ]:
        search = SequenceGridSearch(make_pipeline(digits_extractor, clf), grid)
        search.fit(data["train"], data["validation"], classes=range(5))
        assert search.best_estimator_[0] is digits_extractor  # frozen, not refitted
        scores[name] = final_average_accuracy(search, data["test"])
    assert scores["joint"] >= 0.9, scores
    assert scores["fine-tuning"] <= 0.34, scores
    assert scores["aqc"] >= 0.6, scores
    assert scores["aqc"] >= scores["ewc"] + 0.15, scores


@pytest.mark.xdist_group("fashion_cnn4")
def test_fashion_mnist_features_transfer_to_mnist(shared_data_dir, fashion_cnn4):
    """Real files: cnn4 pre-trained on Fashion-MNIST (6,000 images, 1
    epoch), then a softmax regression on its features learns MNIST digits
    it never saw far above chance. Scored on the first 2,000 test images of
    each (a standard error under one point; measured: 0.838 and 0.815, on
    all 10,000 0.825 and 0.844)."""
    from skcl.datasets import load_fashion_mnist, load_mnist

    extractor = copy.deepcopy(fashion_cnn4)  # shared with other tests: left as it was
    X_test, y_test = load_fashion_mnist(shared_data_dir).test
    assert extractor.score(X_test[:2000], y_test[:2000]) >= 0.75
    mnist = load_mnist(shared_data_dir)
    model = make_pipeline(extractor, JointClassifier(n_epochs=20, batch_size=64, random_state=0))
    model.partial_fit(mnist.train[0][:5000], mnist.train[1][:5000], classes=range(10))
    X_test, y_test = mnist.test
    assert model.score(X_test[:2000], y_test[:2000]) >= 0.75


def test_same_random_state_gives_the_same_weights(digits):
    X, y = digits
    def make():
        return PretrainedFeatureExtractor(image_shape=(8, 8), n_epochs=1, random_state=3)

    np.testing.assert_array_equal(make().fit(X, y).theta_, make().fit(X, y).theta_)
    other = PretrainedFeatureExtractor(image_shape=(8, 8), n_epochs=1, random_state=4).fit(X, y)
    assert not np.array_equal(make().fit(X, y).theta_, other.theta_)


def test_balanced_class_weight_is_inverse_frequency(digits):
    X, y = digits
    kept = (y < 3) & ((y != 0) | (np.arange(len(y)) % 4 == 0))
    X, y = X[kept], y[kept]
    counts = np.bincount(y)
    by_hand = {c: len(y) / (3 * n) for c, n in enumerate(counts)}
    def make(cw):
        return PretrainedFeatureExtractor(
            image_shape=(8, 8), n_epochs=2, class_weight=cw, random_state=0
        ).fit(X, y)

    np.testing.assert_allclose(make("balanced").theta_, make(by_hand).theta_, rtol=1e-6, atol=1e-7)
    assert not np.allclose(make("balanced").theta_, make(None).theta_)


# ----------------------------------------------------------------------------
# Inputs.


@pytest.fixture(scope="module")
def small_extractor(digits):
    X, y = digits
    return PretrainedFeatureExtractor(image_shape=(8, 8), n_epochs=1, random_state=0).fit(X, y)


def test_input_forms_give_the_same_features(digits, small_extractor):
    X, _ = digits
    flat = small_extractor.transform(X[:50])
    assert flat.shape == (50, 64) and flat.dtype == np.float32
    np.testing.assert_array_equal(small_extractor.transform(X[:50].reshape(-1, 8, 8)), flat)
    np.testing.assert_array_equal(small_extractor.transform(X[:50].reshape(-1, 8, 8, 1)), flat)
    np.testing.assert_array_equal(small_extractor.transform(X[:50].tolist()), flat)
    # uint8 images are divided by 255 inside the network.
    images = np.round(X[:50] * 255).astype(np.uint8)
    np.testing.assert_allclose(
        small_extractor.transform(images), small_extractor.transform(images / 255.0), atol=1e-5
    )
    # One sample at a time: padding the last batch changes nothing.
    np.testing.assert_array_equal(small_extractor.transform(X[7:8]), flat[7:8])


def test_bad_input_gets_a_clear_error(digits, small_extractor):
    X, y = digits
    with pytest.raises(ValueError, match="expecting 64 features"):
        small_extractor.transform(X[:5, :60])
    with pytest.raises(ValueError, match=r"images of shape \(8, 8, 1\).*got \(8, 8, 3\)"):
        small_extractor.transform(np.zeros((2, 8, 8, 3)))
    bad = X[:5].copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        small_extractor.transform(bad)
    with pytest.raises(ValueError, match="Reshape your data"):
        small_extractor.transform(X[0])
    with pytest.raises(ValueError, match="architecture must be one of"):
        PretrainedFeatureExtractor("vgg").fit(X, y)
    with pytest.raises(ValueError, match="image_shape must be"):
        PretrainedFeatureExtractor(image_shape=(8,)).fit(X, y)
    with pytest.raises(ValueError, match="requires y"):
        PretrainedFeatureExtractor(image_shape=(8, 8)).fit(X, None)


def test_transform_reads_one_batch_at_a_time(small_extractor):
    """A large uint8 array is never converted whole: the host memory that
    transform allocates is a few batches, not a float32 copy of the input."""
    images = np.random.default_rng(0).integers(0, 256, (20_000, 8, 8), dtype=np.uint8)
    whole_float32_copy = images.size * 4
    small_extractor.transform(images[:10])  # compile outside the measurement
    tracemalloc.start()
    features = small_extractor.transform(images)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert features.shape == (20_000, 64)
    assert peak < features.nbytes + whole_float32_copy / 4, peak


def test_verbose_reports_epochs_and_transform_progress(digits, caplog):
    caplog.set_level("INFO", logger="skcl")
    X, y = digits
    extractor = PretrainedFeatureExtractor(
        image_shape=(8, 8), n_epochs=2, transform_batch_size=64, random_state=0, verbose=1
    ).fit(X[:300], y[:300])
    extractor.transform(X[:700])
    out = caplog.text
    assert "epoch 1/2" in out and "epoch 2/2" in out and "pre-trained cnn4 on 300 images" in out
    # The loss says what it is (it was a bare "loss 21569"), with a rate and an estimate.
    assert "(summed over 300 images, with the prior's term: " in out and " per image)" in out
    assert "s an epoch, about " in out and " s left" in out
    assert "transformed 640/700 images" in out


def test_feature_names_out(small_extractor):
    names = small_extractor.get_feature_names_out()
    assert names.shape == (64,) and names[0] == "pretrainedfeatureextractor0"


# ----------------------------------------------------------------------------
# Weights files and pickling.


def test_saved_weights_load_to_identical_features(tmp_path, digits, small_extractor):
    X, y = digits
    path = tmp_path / "digits_cnn4.npz"
    small_extractor.save_weights(path)
    loaded = PretrainedFeatureExtractor("cnn4").load_weights(path)
    np.testing.assert_array_equal(loaded.transform(X), small_extractor.transform(X))
    np.testing.assert_array_equal(loaded.classes_, small_extractor.classes_)
    assert loaded.image_shape_ == (8, 8, 1) and loaded.score(X, y) == small_extractor.score(X, y)
    # Only arrays: the file loads with pickle disabled.
    with np.load(path, allow_pickle=False) as stored:
        assert sorted(stored.files) == ["classes", "header", "theta"]


def test_string_classes_survive_the_weights_file(tmp_path, digits):
    X, y = digits
    names = np.array(["zero", "one", "two"], dtype=object)[y[y < 3]]
    extractor = PretrainedFeatureExtractor(image_shape=(8, 8), n_epochs=1, random_state=0)
    extractor.fit(X[y < 3], names)
    extractor.save_weights(tmp_path / "w.npz")
    loaded = PretrainedFeatureExtractor().load_weights(tmp_path / "w.npz")
    assert loaded.classes_.tolist() == sorted(["zero", "one", "two"])


def _rewrite(path, target, **changes):
    import json

    with np.load(path, allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    header = json.loads(str(arrays["header"]))
    header.update(changes.pop("header", {}))
    arrays["header"] = np.array(json.dumps(header))
    arrays.update(changes)
    np.savez(target, **arrays)
    return target


def test_bad_weights_files_fail_clearly_and_change_nothing(tmp_path, digits, small_extractor):
    X, _ = digits
    good = tmp_path / "good.npz"
    small_extractor.save_weights(good)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:400])
    not_ours = tmp_path / "other.npz"
    np.savez(not_ours, weights=np.zeros(3))
    plain_array = tmp_path / "weights.npy"  # used to raise TypeError
    np.save(plain_array, small_extractor.theta_)
    cases = [
        (plain_array, "not a readable skcl weights file.*not named arrays"),
        (_rewrite(good, tmp_path / "c.npz", classes=np.array(3)), r"classes have shape \(\)"),
        (truncated, "not a readable skcl weights file"),
        (tmp_path / "missing.npz", "not a readable skcl weights file"),
        (not_ours, "not a readable skcl weights file"),
        (_rewrite(good, tmp_path / "v.npz", header={"version": 99}), "format version 99"),
        (_rewrite(good, tmp_path / "f.npz", header={"format": "keras"}), "not an skcl"),
        (_rewrite(good, tmp_path / "s.npz", theta=np.zeros(10, np.float32)),
         "corrupted: it holds 10"),
        (_rewrite(good, tmp_path / "n.npz",
                  theta=np.full(small_extractor.theta_.size, np.nan, np.float32)),
         "not all finite"),
        (_rewrite(good, tmp_path / "h.npz", header={"image_shape": "8x8"}),
         "corrupted: its header"),
    ]
    before = small_extractor.transform(X[:20])
    for path, message in cases:
        with pytest.raises(ValueError, match=message):
            small_extractor.load_weights(path)
        np.testing.assert_array_equal(small_extractor.transform(X[:20]), before)
    with pytest.raises(
        ValueError, match="holds a 'cnn4' extractor, but this one's architecture is 'gn_resnet18'"
    ):
        PretrainedFeatureExtractor("gn_resnet18").load_weights(good)
    with pytest.raises(ValueError, match=r"trained on images of shape \(8, 8, 1\)"):
        PretrainedFeatureExtractor(image_shape=(28, 28)).load_weights(good)


def test_the_old_name_resnet18_still_works_with_a_warning(tmp_path):
    """"resnet18" was the paper's GroupNorm network; it is "gn_resnet18" now,
    and weights files written under the old name still load."""
    import json

    network = ConvNet("gn_resnet18", (4, 4, 3), 2)
    header = {"format": "skcl.PretrainedFeatureExtractor", "version": 1, "architecture": "resnet18",
              "image_shape": [4, 4, 3], "n_classes": 2, "n_params": network.n_params}
    old_file = tmp_path / "old.npz"
    np.savez(old_file, header=np.array(json.dumps(header)),
             theta=np.zeros(network.n_params, np.float32), classes=np.arange(2))
    with pytest.warns(FutureWarning, match="now named 'gn_resnet18'.*not torchvision's ResNet-18"):
        old = PretrainedFeatureExtractor("resnet18").load_weights(old_file)
    new = PretrainedFeatureExtractor("gn_resnet18").load_weights(old_file)
    assert old.network_ == new.network_ and new.network_.architecture == "gn_resnet18"
    np.testing.assert_array_equal(old.theta_, new.theta_)
    with pytest.warns(FutureWarning, match="now named 'gn_resnet18'"):
        with pytest.raises(ValueError, match="requires y"):
            PretrainedFeatureExtractor("resnet18").fit(np.zeros((2, 4, 4, 3)), None)


def test_a_rejected_fit_changes_nothing(digits):
    """Issue 13: fit used to set (or drop) feature_names_in_ before it
    checked the rest of its input, so a rejected call changed a fitted
    extractor."""
    pd = pytest.importorskip("pandas")
    X, y = digits
    frame = pd.DataFrame(X[:40], columns=[f"px{i}" for i in range(64)])
    extractor = PretrainedFeatureExtractor(image_shape=(8, 8), n_epochs=1, random_state=0)
    extractor.fit(frame, y[:40])
    before = {k: v for k, v in vars(extractor).items() if k.endswith("_")}
    for bad_X, bad_y in [(X[:40], y[:39]), (X[:40], np.full(40, np.nan)), (X[:40, :60], y[:40])]:
        with pytest.raises(ValueError):
            extractor.fit(bad_X, bad_y)
        after = {k: v for k, v in vars(extractor).items() if k.endswith("_")}
        assert after.keys() == before.keys()
        assert all(after[k] is before[k] for k in before)
        np.testing.assert_array_equal(extractor.feature_names_in_, frame.columns)


def test_pickle_round_trip(digits, small_extractor):
    X, _ = digits
    restored = pickle.loads(pickle.dumps(small_extractor))
    np.testing.assert_array_equal(restored.transform(X[:30]), small_extractor.transform(X[:30]))


# ----------------------------------------------------------------------------
# scikit-learn's checks. Two epochs of small minibatches: the checks fit
# dozens of times on tiny 2-D data (read as one-row images).


@parametrize_with_checks(
    [PretrainedFeatureExtractor(n_epochs=2, batch_size=16, transform_batch_size=64,
                                random_state=0)],
    expected_failed_checks=lambda estimator: {
        "check_sample_weight_equivalence_on_dense_data": (
            "a zero weight keeps the sample in the minibatch schedule: the number of "
            "minibatches, and so the one-cycle schedule and the prior's 1/n_batches "
            "scaling, depend on n_samples"
        ),
    },
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
