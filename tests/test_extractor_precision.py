"""PretrainedFeatureExtractor's precision: the matrix-product precision its
compiled forward pass is traced under, and its checks."""

import jax
import numpy as np
import pytest
from sklearn.datasets import load_digits

from skcl.feature_extraction import PretrainedFeatureExtractor, _extractor
from skcl.feature_extraction._architectures import ConvNet


@pytest.fixture(scope="module")
def fitted():
    X, y = load_digits(return_X_y=True)
    extractor = PretrainedFeatureExtractor("cnn4", image_shape=(8, 8), n_epochs=1,
                                           random_state=0).fit(X[:200] / 16, y[:200])
    return extractor, X[200:230] / 16


def test_transform_is_traced_under_the_precision_asked(fitted, monkeypatch):
    extractor, X = fitted
    traced = []
    features = ConvNet.features

    def recording(self, theta, images):
        traced.append(jax.config.jax_default_matmul_precision)
        return features(self, theta, images)

    monkeypatch.setattr(ConvNet, "features", recording)
    _extractor._features.clear_cache()  # trace again, through the recorder
    results = {}
    for precision, jax_name in [("float32", "highest"), ("tf32", "tensorfloat32"),
                                ("bfloat16", "bfloat16")]:
        traced.clear()
        results[precision] = extractor.set_params(precision=precision).transform(X)
        assert traced == [jax_name], precision
    extractor.set_params(precision="float32")
    _extractor._features.clear_cache()
    # XLA's CPU backend computes float32 whatever is asked; a GPU would not.
    if jax.default_backend() == "cpu":
        np.testing.assert_array_equal(results["tf32"], results["float32"])
    scale = np.abs(results["float32"]).max()
    np.testing.assert_allclose(results["bfloat16"], results["float32"], atol=5e-2 * scale)


def test_precision_is_checked(fitted):
    extractor, X = fitted
    with pytest.raises(ValueError, match="precision must be one of.*got 'fp16'"):
        PretrainedFeatureExtractor("cnn4", precision="fp16").fit(X, np.arange(len(X)) % 2)
    with pytest.raises(ValueError, match="precision must be one of"):
        extractor.set_params(precision=None).transform(X)
    extractor.set_params(precision="float32")
