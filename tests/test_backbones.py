"""BackboneFeatureExtractor: torchvision models against torchvision's own forward
pass, JAX functions and torch modules as extractors in a Pipeline and a
search, the feature cache, bad input, and scikit-learn's estimator checks.

Offline: torchvision models are built with weights=None and their state
saved to local files; the weights-enum path has its download intercepted.
"""

import importlib.util
import pickle
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcl import AQCClassifier
from skcl.datasets import make_task_sequences
from skcl.feature_extraction import BackboneFeatureExtractor
from skcl.metrics import final_average_accuracy
from skcl.model_selection import SequenceGridSearch
from skcl.pipeline import make_pipeline

HAS_TORCH = (importlib.util.find_spec("torch") is not None
             and importlib.util.find_spec("torchvision") is not None)


def image_stats(images):
    """A parameter-free JAX backbone: four statistics of each image."""
    flat = images.reshape(len(images), -1)
    return jnp.stack([flat.mean(1), flat.std(1), flat.max(1), flat.min(1)], axis=1)


def projection(params, images):
    """A JAX backbone with parameters: a random projection and a tanh."""
    return jnp.tanh(images.reshape(len(images), -1) @ params["w"] + params["b"])


def projection_params(n_in=64, n_out=16, seed=0):
    rng = np.random.default_rng(seed)
    return {"w": rng.normal(size=(n_in, n_out)).astype(np.float32) / 4,
            "b": np.zeros(n_out, np.float32)}


def fitted_state(estimator):
    return {k: v for k, v in vars(estimator).items() if k.endswith("_") or k == "_n_features_out"}


def assert_unchanged(estimator, before):
    after = fitted_state(estimator)
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before), [
        k for k in before if after[k] is not before[k]
    ]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def resnet18_file(torch, tmp_path_factory):
    """torchvision's ResNet-18, random weights (seeded), saved to a local file."""
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    path = tmp_path_factory.mktemp("weights") / "resnet18.pth"
    torch.save(model.state_dict(), path)
    return model, path


def rgb_images(n=6, size=32, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (n, size, size, 3), dtype=np.uint8)


def torchvision_features(torch, model, images):
    """torchvision's own forward pass without the classifier, eval mode."""
    import copy

    headless = copy.deepcopy(model).eval()
    headless.fc = torch.nn.Identity()
    with torch.no_grad():  # contiguous: channels-last strides pick other kernels
        return headless(images.contiguous()).numpy()


def assert_torch_features(got, expected, extractor):
    """Features against torchvision's forward pass on the CPU, to the precision asked.

    On a CPU, float32 (and tf32, which a CPU does not have) is torch's own
    forward pass bit for bit. On a GPU, float32 kernels sum in another
    order: float32 rounding through the network, ten times below the 1e-3
    that TF32 moves the features by (what the float32 default is there to
    avoid). bfloat16 has 8 bits of mantissa.
    """
    assert got.dtype == np.float32 and got.shape == expected.shape
    scale = np.abs(expected).max()
    if extractor.precision == "bfloat16":
        np.testing.assert_allclose(got, expected, rtol=0, atol=5e-2 * scale)
    elif extractor.device_ == "cpu":
        np.testing.assert_array_equal(got, expected)
    elif extractor.precision == "float32":
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * scale)
    else:  # TF32 on a GPU
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-2 * scale)


# ----------------------------------------------------------------------------
# torchvision models: the same features as torchvision's forward pass.


def test_torchvision_weights_file_gives_torchvisions_features(torch, resnet18_file):
    model, path = resnet18_file
    images = rgb_images()
    extractor = BackboneFeatureExtractor("resnet18", weights=path, preprocess=None).fit(images)
    got = extractor.transform(images)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    assert_torch_features(got, torchvision_features(torch, model, x), extractor)
    assert got.shape == (6, 512) and got.dtype == np.float32
    # The features are the classifier's input: the full model's logits follow.
    with torch.no_grad():
        logits = model(x.contiguous()).numpy()
    fc = model.fc.weight.detach().numpy(), model.fc.bias.detach().numpy()
    np.testing.assert_allclose(got @ fc[0].T + fc[1], logits, rtol=1e-4, atol=1e-4)
    assert extractor.device_ in ("cpu", "cuda:0") and extractor.model_.training is False
    assert extractor.get_feature_names_out()[0] == "backbonefeatureextractor0"


def test_grayscale_images_are_expanded_to_three_channels(torch, resnet18_file):
    model, path = resnet18_file
    gray = rgb_images()[..., 0]
    extractor = BackboneFeatureExtractor("resnet18", weights=path, preprocess=None).fit(gray)
    x = torch.from_numpy(gray)[:, None].expand(-1, 3, -1, -1).float() / 255
    assert_torch_features(extractor.transform(gray), torchvision_features(torch, model, x),
                          extractor)
    # Flattened rows with image_shape, and floats in [0, 1], are the same images.
    flat = BackboneFeatureExtractor("resnet18", weights=path, preprocess=None, image_shape=(32, 32))
    np.testing.assert_allclose(
        flat.fit(gray.reshape(6, -1) / 255.0).transform(gray.reshape(6, -1) / 255.0),
        extractor.transform(gray), rtol=1e-5, atol=1e-5,
    )


def test_preprocessing_is_torchvisions(torch, resnet18_file):
    """Resize, centre crop and normalisation as torchvision's transforms do them."""
    from torchvision.transforms._presets import ImageClassification

    model, path = resnet18_file
    images = rgb_images(n=3, size=40)
    spec = dict(resize_size=36, crop_size=32, mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3))
    extractor = BackboneFeatureExtractor("resnet18", weights=path, preprocess=spec).fit(images)
    transforms = ImageClassification(**spec)
    # On the extractor's device: torch resizes uint8 images with another
    # kernel on a GPU (its own rounding), as the extractor does there.
    x = transforms(torch.from_numpy(images).permute(0, 3, 1, 2).to(extractor.device_)).cpu()
    assert x.shape == (3, 3, 32, 32)
    assert_torch_features(extractor.transform(images), torchvision_features(torch, model, x),
                          extractor)


def test_weights_enum_uses_its_state_and_its_preprocessing(torch, resnet18_file, monkeypatch):
    """The enum path, with the download intercepted: the weights come from
    get_state_dict, and "auto" preprocessing is the enum's transforms()."""
    from torchvision.models import ResNet18_Weights

    model, _ = resnet18_file
    calls = []

    def get_state_dict(self, *args, **kwargs):
        calls.append(self)
        return model.state_dict()

    monkeypatch.setattr(ResNet18_Weights, "get_state_dict", get_state_dict)
    images = rgb_images(n=2, size=24)
    weights = ResNet18_Weights.IMAGENET1K_V1
    extractor = BackboneFeatureExtractor("resnet18", weights=weights).fit(images)
    assert calls == [weights]
    assert extractor.preprocess_ == {
        "resize_size": 256, "crop_size": (224, 224), "mean": (0.485, 0.456, 0.406),
        "std": (0.229, 0.224, 0.225), "interpolation": "bilinear", "to_rgb": False,
    }
    x = weights.transforms()(torch.from_numpy(images).permute(0, 3, 1, 2))
    assert_torch_features(extractor.transform(images), torchvision_features(torch, model, x),
                          extractor)
    for name in ("IMAGENET1K_V1", "DEFAULT", "ResNet18_Weights.IMAGENET1K_V1"):
        again = BackboneFeatureExtractor("resnet18", weights=name).fit(images[:1])
        assert again.backbone_hash_ == extractor.backbone_hash_


def test_a_local_copy_of_published_weights_gets_their_preprocessing(torch, resnet18_file):
    _, path = resnet18_file
    extractor = BackboneFeatureExtractor("resnet18", weights=path).fit(rgb_images(n=1, size=16))
    assert (extractor.preprocess_["resize_size"] == 256
            and extractor.preprocess_["crop_size"] == (224, 224))


def test_other_torchvision_models_lose_their_last_linear_layer(torch):
    import torchvision

    torch.manual_seed(1)
    model = torchvision.models.mobilenet_v3_small(weights=None).eval()
    images = rgb_images(n=2)
    extractor = BackboneFeatureExtractor(
        "mobilenet_v3_small", weights=model.state_dict(), preprocess=None
    ).fit(images)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    model.classifier[-1] = torch.nn.Identity()
    with torch.no_grad():
        expected = model(x.contiguous()).numpy()
    assert expected.shape == (2, 1024)
    assert_torch_features(extractor.transform(images), expected, extractor)


@pytest.mark.parametrize("precision", ["float32", "tf32", "bfloat16"])
def test_each_precision_is_within_its_tolerance_of_torchvisions_forward(torch, resnet18_file,
                                                                        precision):
    model, path = resnet18_file
    images = rgb_images()
    extractor = BackboneFeatureExtractor("resnet18", weights=path, preprocess=None,
                                         precision=precision).fit(images)
    got = extractor.transform(images)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    expected = torchvision_features(torch, model, x)
    assert_torch_features(got, expected, extractor)
    if precision == "bfloat16":  # it did run in bfloat16 (autocast works on a CPU)
        assert np.abs(got - expected).max() > 1e-4 * np.abs(expected).max()


def test_precision_is_set_for_the_forward_pass_only(torch, digits):
    """The flags torch reads while the network runs, and after: restored."""
    conv, matmul = torch.backends.cudnn.conv, torch.backends.cuda.matmul
    if not hasattr(conv, "fp32_precision"):
        pytest.skip("torch < 2.9: the legacy allow_tf32 flags are used")
    seen = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            seen.append((conv.fp32_precision, matmul.fp32_precision,
                         torch.is_autocast_enabled(x.device.type)))
            return x.mean(dim=(2, 3))

    X, _ = digits
    saved = conv.fp32_precision, matmul.fp32_precision
    try:
        # As on an Ampere GPU by default (cuDNN), and matrix products too.
        conv.fp32_precision, matmul.fp32_precision = "tf32", "tf32"
        for precision, expected in [("float32", ("ieee", "ieee", False)),
                                    ("tf32", ("tf32", "tf32", False)),
                                    ("bfloat16", ("ieee", "ieee", True))]:
            seen.clear()
            BackboneFeatureExtractor(Probe(), image_shape=(8, 8), precision=precision).fit(
                X[:4]).transform(X[:4])
            assert seen and set(seen) == {expected}, precision
            assert (conv.fp32_precision, matmul.fp32_precision) == ("tf32", "tf32")
            assert not torch.is_autocast_enabled("cpu")
    finally:
        conv.fp32_precision, matmul.fp32_precision = saved


def test_precision_is_checked(digits):
    X, _ = digits
    with pytest.raises(ValueError, match="precision must be one of.*float32.*got 'half'"):
        BackboneFeatureExtractor(image_stats, image_shape=(8, 8), precision="half").fit(X)


# ----------------------------------------------------------------------------
# Your own network: a JAX function, a torch module.


def test_jax_function_with_params(digits):
    X, _ = digits
    params = projection_params()
    extractor = BackboneFeatureExtractor(projection, params=params, image_shape=(8, 8),
                                         batch_size=32)
    features = extractor.fit(X).transform(X[:50])
    expected = np.tanh(X[:50] @ params["w"] + params["b"])
    np.testing.assert_allclose(features, expected, rtol=1e-5, atol=1e-5)
    default = jax.devices()[0]  # a GPU where JAX has one
    assert extractor.model_ is None and extractor.device_ == f"{default.platform}:{default.id}"
    # Batches of any size, padded to one compilation, change nothing.
    np.testing.assert_array_equal(extractor.transform(X[7:8]), features[7:8])


def test_jax_preprocessing_resizes_crops_and_normalises(digits):
    X, _ = digits
    spec = dict(resize_size=16, crop_size=12, mean=(0.5,), std=(0.25,))
    extractor = BackboneFeatureExtractor(
        lambda x: x, preprocess=spec, image_shape=(8, 8)
    ).fit(X[:3])
    features = extractor.transform(X[:3]).reshape(3, 12, 12)
    assert extractor.n_features_in_ == 64 and features.shape == (3, 12, 12)
    # An upsampled constant image stays constant; then it is normalised.
    constant = np.full((1, 64), 0.75)
    np.testing.assert_allclose(extractor.transform(constant), (0.75 - 0.5) / 0.25, rtol=1e-5)


class _FlaxLike:
    """What a Flax module offers: apply(variables, x), a bound method."""

    def __init__(self, scale):
        self.scale = scale

    def apply(self, variables, x):
        return self.scale * projection(variables["params"], x)


def test_a_bound_apply_method_like_flax(digits):
    X, _ = digits
    variables = {"params": projection_params()}
    one = BackboneFeatureExtractor(
        _FlaxLike(1.0).apply, params=variables, image_shape=(8, 8)
    ).fit(X)
    two = BackboneFeatureExtractor(
        _FlaxLike(2.0).apply, params=variables, image_shape=(8, 8)
    ).fit(X)
    np.testing.assert_allclose(two.transform(X[:5]), 2 * one.transform(X[:5]), rtol=1e-6)
    assert one.backbone_hash_ != two.backbone_hash_


def small_torch_module(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Dropout(0.5), torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(),
    )


def test_torch_module_runs_in_eval_mode_and_is_left_alone(torch, digits):
    X, _ = digits
    module = small_torch_module(torch)
    extractor = BackboneFeatureExtractor(module, image_shape=(8, 8)).fit(X)
    features = extractor.transform(X[:20])
    assert features.shape == (20, 32)
    module.eval()
    with torch.no_grad():
        expected = module(torch.from_numpy(X[:20].reshape(20, 1, 8, 8)).float()).numpy()
    # Dropout off, running statistics: bit for bit on a CPU, to float32's
    # rounding on a GPU.
    assert_torch_features(features, expected, extractor)
    module.train()
    BackboneFeatureExtractor(module, image_shape=(8, 8)).fit(X[:2])
    assert module.training and extractor.model_ is not module


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["jax", "torch"])
def test_jax_function_and_torch_module_in_pipeline_and_search(kind, digits):
    """partial_fit task by task through the extractor, and a search of the
    classifier on its features (9 s each, most of it compiling AQC)."""
    X, y = digits
    keep = y < 4
    data = make_task_sequences(X[keep], y[keep], [[0, 1], [2, 3]], random_state=0)
    X_first = data["train"][0][0]
    settings = dict(n_epochs=5, batch_size=32, learning_rate=0.05, random_state=0)
    if kind == "jax":
        extractor = BackboneFeatureExtractor(
            projection, params=projection_params(), image_shape=(8, 8)
        )
    else:
        extractor = BackboneFeatureExtractor(
            small_torch_module(pytest.importorskip("torch")), image_shape=(8, 8)
        )
    extractor.fit(X_first)
    model = make_pipeline(extractor, AQCClassifier(alpha=10, **settings))
    for X_task, y_task in data["train"]:
        model.partial_fit(X_task, y_task, classes=range(4))
    assert final_average_accuracy(model, data["test"]) > 0.4
    search = SequenceGridSearch(
        make_pipeline(extractor, AQCClassifier(**settings)), {"aqcclassifier__alpha": [1, 100]}
    ).fit(data["train"], data["validation"], classes=range(4))
    assert search.best_estimator_[0] is extractor  # used as it is, not refitted
    assert final_average_accuracy(search, data["test"]) > 0.4


def test_pickle_and_clone(torch, digits, tmp_path):
    X, _ = digits
    for extractor in [
        BackboneFeatureExtractor(projection, params=projection_params(), image_shape=(8, 8),
                                 memory=str(tmp_path)),
        BackboneFeatureExtractor(small_torch_module(torch), image_shape=(8, 8),
                                 memory=str(tmp_path)),
    ]:
        features = extractor.fit(X).transform(X[:10])
        restored = pickle.loads(pickle.dumps(extractor))
        np.testing.assert_array_equal(restored.transform(X[:10]), features)
        np.testing.assert_array_equal(clone(extractor).fit(X).transform(X[:10]), features)


# ----------------------------------------------------------------------------
# The cache.


def _cache_hits(caplog):
    out = caplog.text
    caplog.clear()
    return out.count("read from the cache"), out.count("extracted and cached")


def test_cache_serves_the_same_images_again_and_nothing_else(torch, tmp_path, caplog):
    caplog.set_level("INFO", logger="skcl")
    import torchvision

    # Small images keep the seven forward passes fast (MobileNet, with its
    # many small layers, is slower on a busy CPU than ResNet-18).
    images = rgb_images(n=3, size=16)
    path = tmp_path / "w.pth"
    torch.manual_seed(0)
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), path)
    def make(**changes):
        settings = dict(weights=path, preprocess=None, memory=str(tmp_path / "cache"), verbose=1)
        return BackboneFeatureExtractor("resnet18", **{**settings, **changes})

    first = make().fit(images).transform(images)
    again = make().fit(images).transform(images)  # a rerun: another extractor
    np.testing.assert_array_equal(again, first)
    assert _cache_hits(caplog) == (1, 1)
    # Other data: one pixel changed, or the same values as floats.
    changed = images.copy()
    changed[2, 5, 5, 1] ^= 1
    extractor = make().fit(images)
    different = extractor.transform(changed)
    assert not np.array_equal(different[2], first[2])
    np.testing.assert_array_equal(different, make(memory=None).fit(images).transform(changed))
    extractor.transform(images / 255.0)
    assert _cache_hits(caplog) == (0, 2)
    # Other weights in the same file: never the old features.
    torch.manual_seed(1)
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), path)
    new_weights = make().fit(images).transform(images)
    assert not np.array_equal(new_weights, first)
    np.testing.assert_array_equal(new_weights, make(memory=None).fit(images).transform(images))
    # Other preprocessing, another model.
    make(preprocess={"mean": (0.5,) * 3, "std": (0.5,) * 3}).fit(images).transform(images)
    assert _cache_hits(caplog) == (0, 2)
    # Another precision: other features, their own entry, never float32's.
    bf16 = make(precision="bfloat16").fit(images).transform(images)
    assert not np.array_equal(bf16, new_weights)
    np.testing.assert_array_equal(make(precision="bfloat16").fit(images).transform(images), bf16)
    np.testing.assert_array_equal(make().fit(images).transform(images), new_weights)
    assert _cache_hits(caplog) == (2, 1)


def test_cache_keys_jax_functions_by_code_and_params(digits, tmp_path, caplog):
    caplog.set_level("INFO", logger="skcl")
    X, _ = digits
    memory = str(tmp_path)
    def make(f, p):
        return BackboneFeatureExtractor(f, params=p, image_shape=(8, 8), memory=memory,
                                        verbose=1)

    base = make(projection, projection_params()).fit(X).transform(X)
    np.testing.assert_array_equal(make(projection, projection_params()).fit(X).transform(X), base)
    other_params = make(projection, projection_params(seed=1)).fit(X).transform(X)
    assert not np.allclose(other_params, base)
    for scale in (2.0, 3.0):  # closures over other values are other functions
        make(lambda p, x, s=scale: s * projection(p, x), projection_params()).fit(X).transform(X)
    assert _cache_hits(caplog) == (1, 4)


def test_cache_keys_torch_modules_by_their_weights(torch, digits, tmp_path):
    X, _ = digits
    module = small_torch_module(torch)
    def make():
        extractor = BackboneFeatureExtractor(module, image_shape=(8, 8), memory=str(tmp_path))
        return extractor.fit(X[:2])

    before = make()
    first = before.transform(X[:10])
    with torch.no_grad():
        module[0].bias += 1  # your module changed after the first extractor copied it
    after = make()
    assert after.backbone_hash_ != before.backbone_hash_
    assert not np.allclose(after.transform(X[:10]), first)
    np.testing.assert_array_equal(before.transform(X[:10]), first)  # its own copy



class _Marker:
    """A pickle that, when loaded, creates the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_cache_reads_arrays_only_and_a_planted_pickle_runs_nothing(digits, tmp_path):
    X, _ = digits
    cache, marker = tmp_path / "cache", tmp_path / "ran"
    extractor = BackboneFeatureExtractor(projection, params=projection_params(),
                                         image_shape=(8, 8), memory=str(cache)).fit(X[:10])
    expected = extractor.set_params(memory=None).transform(X[:10])
    extractor.set_params(memory=str(cache)).transform(X[:10])
    written = [path for path in cache.rglob("*") if path.suffix in (".pkl", ".npy")]
    assert written  # the entry's data, whatever its format
    crafted = pickle.dumps(_Marker(marker))
    for path in written:
        path.write_bytes(crafted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        features = extractor.transform(X[:10])
    assert not marker.exists()  # the pickle was never loaded
    assert any("Ignored the feature cache entry" in str(w.message) for w in caught)
    np.testing.assert_array_equal(features, expected)
    # Written over: read back, silently, as the features.
    np.testing.assert_array_equal(extractor.transform(X[:10]), expected)
    assert not list(cache.rglob("*.pkl"))  # arrays and text only

# ----------------------------------------------------------------------------
# Bad input: a clear error, and nothing changed.


def test_bad_torchvision_input_fails_clearly_and_changes_nothing(torch, resnet18_file, tmp_path):
    import torchvision
    from torchvision.models import ResNet50_Weights

    _, path = resnet18_file
    images = rgb_images(n=2)
    extractor = BackboneFeatureExtractor("resnet18", weights=path, preprocess=None).fit(images)
    before = fitted_state(extractor)
    features = extractor.transform(images)

    ten_classes = tmp_path / "ten_classes.pth"
    torch.save(torchvision.models.resnet18(num_classes=10).state_dict(), ten_classes)
    linear = tmp_path / "linear.pth"
    torch.save(torch.nn.Linear(3, 2).state_dict(), linear)
    garbage = tmp_path / "garbage.pth"
    garbage.write_bytes(b"not a torch file")
    cases = [
        (dict(weights=ten_classes), ValueError,
         r"(?s)do not fit torchvision.s resnet18.*size mismatch"),
        (dict(weights=linear), ValueError, r"(?s)do not fit torchvision.s resnet18.*Missing key"),
        (dict(weights=garbage), ValueError, "not a readable torch weights file"),
        (dict(weights=tmp_path / "missing.pth"), ValueError, "not a readable torch weights file"),
        (dict(weights=ResNet50_Weights.DEFAULT), ValueError,
         "not weights of torchvision's resnet18"),
        (dict(weights="IMAGENET9K"), ValueError, "has no weights 'IMAGENET9K'"),
        (dict(backbone="resnet_18"), ValueError, "not a torchvision model name.*gn_resnet18"),
        (dict(device="cuda:7" if not torch.cuda.is_available() else "nonsense"), ValueError,
         "device"),
        (dict(params={"w": 1}), ValueError, "params is for a JAX function"),
        (dict(preprocess={"size": 3}), ValueError, "unknown keys"),
        (dict(preprocess={"mean": (0.5,) * 3}), ValueError, "both mean and std"),
    ]
    for change, error, message in cases:
        with pytest.raises(error, match=message):
            extractor.set_params(**change).fit(images)
        extractor.set_params(backbone="resnet18", weights=path, device="auto", params=None,
                             preprocess=None)
        assert_unchanged(extractor, before)
    with pytest.raises(ValueError, match=r"images of shape \(32, 32, 3\).*got \(32, 32, 1\)"):
        extractor.transform(images[..., :1])
    with pytest.raises(ValueError, match="expecting 3072 features"):
        extractor.transform(images.reshape(2, -1)[:, :100])
    assert_unchanged(extractor, before)
    np.testing.assert_array_equal(extractor.transform(images), features)


def test_images_the_network_cannot_take(digits):
    X, _ = digits
    extractor = BackboneFeatureExtractor(
        projection, params=projection_params(), image_shape=(8, 8)
    ).fit(X)
    before = fitted_state(extractor)
    with pytest.raises(ValueError, match=r"cannot take images of shape \(4, 4, 1\)"):
        extractor.set_params(image_shape=(4, 4)).fit(X[:, :16])
    assert_unchanged(extractor, before)
    with pytest.raises(ValueError, match="weights is for a torchvision model or a torch module"):
        BackboneFeatureExtractor(projection, weights="w.pth").fit(X)
    try:
        message = f"device='gpu:7': JAX has {len(jax.devices('gpu'))} gpu device"
    except RuntimeError:  # no GPU (the CI)
        message = "device='gpu:7', but JAX has no gpu device"
    with pytest.raises(ValueError, match=message):
        BackboneFeatureExtractor(image_stats, device="gpu:7").fit(X)


def test_missing_torch_says_which_extra_to_install(monkeypatch, digits):
    X, _ = digits
    class NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("torch", "torchvision"):
                raise ImportError(f"No module named {name!r}")

    # `import torch` now raises ImportError. (Not sys.modules["torch"] = None:
    # scipy looks torch up in sys.modules and fails on None.)
    for name in ("torch", "torchvision"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoTorch(), *sys.meta_path])
    extractor = BackboneFeatureExtractor("resnet18", image_shape=(8, 8))
    with pytest.raises(
        ImportError, match=r"torchvision's resnet18 runs in torch.*pip install \"skcl\[torch\]\""
    ):
        extractor.fit(X)
    assert not fitted_state(extractor)
    # A JAX function needs no torch.
    BackboneFeatureExtractor(image_stats, image_shape=(8, 8)).fit(X).transform(X[:2])


# ----------------------------------------------------------------------------
# scikit-learn's checks (on tiny 2-D data, read as one-row images).


class _NamedImageStats:
    """image_stats as a callable object whose repr has no memory address.

    parametrize_with_checks names each test after the estimator's repr, and
    pytest-xdist needs every worker to collect the same names; clone
    deep-copies parameters, and this one copies to itself.
    """

    def __call__(self, images):
        return image_stats(images)

    def __repr__(self):
        return "image_stats"

    def __deepcopy__(self, memo):
        return self


def _checked_estimators():
    estimators = [BackboneFeatureExtractor(_NamedImageStats(), batch_size=16)]
    if HAS_TORCH:
        import torch

        estimators.append(BackboneFeatureExtractor(
            torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten()), batch_size=16
        ))
    return estimators


@parametrize_with_checks(_checked_estimators())
def test_sklearn_compatible(estimator, check):
    check(estimator)
