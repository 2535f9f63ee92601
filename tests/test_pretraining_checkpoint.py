"""PretrainedFeatureExtractor(checkpoint=...): a pre-training stopped after
some epochs resumes from its last complete one, with the weights an
uninterrupted run gives (issue 52); the file is read without pickle and a
checkpoint of another run is refused."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from skcl.feature_extraction import PretrainedFeatureExtractor, _checkpoint

SETTINGS = dict(image_shape=(8, 8), n_epochs=4, batch_size=32, random_state=0)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:300] / 16.0, y[:300]


@pytest.fixture(scope="module")
def uninterrupted(digits):
    return PretrainedFeatureExtractor(**SETTINGS).fit(*digits)


def _stopped_after(epochs, monkeypatch):
    """The checkpoint writer, stopping the run (as Ctrl-C would) once ``epochs`` are saved."""
    write = _checkpoint.write_checkpoint

    def write_then_stop(path, fingerprint, key, state):
        write(path, fingerprint, key, state)
        if state.epoch == epochs:
            raise KeyboardInterrupt

    monkeypatch.setattr(_checkpoint, "write_checkpoint", write_then_stop)


def test_a_stopped_pretraining_resumes_to_the_uninterrupted_weights(
        digits, uninterrupted, tmp_path, monkeypatch, caplog):
    path = tmp_path / "pretraining.npz"
    with monkeypatch.context() as patch:
        _stopped_after(2, patch)
        with pytest.raises(KeyboardInterrupt):
            PretrainedFeatureExtractor(**SETTINGS, checkpoint=path).fit(*digits)
    with np.load(path, allow_pickle=False) as saved:  # plain arrays, no pickle
        assert saved["epoch_losses"].shape == (2,)
    with caplog.at_level("INFO", logger="skcl"):
        resumed = PretrainedFeatureExtractor(**SETTINGS, checkpoint=path, verbose=1).fit(*digits)
    assert "resuming the pre-training from" in caplog.text and "after epoch 2/4" in caplog.text
    assert "epoch 1/4" not in caplog.text and "epoch 3/4" in caplog.text  # 2 epochs ran
    np.testing.assert_array_equal(resumed.theta_, uninterrupted.theta_)
    np.testing.assert_array_equal(resumed.loss_curve_, uninterrupted.loss_curve_)
    np.testing.assert_array_equal(resumed.transform(digits[0][:50]),
                                  uninterrupted.transform(digits[0][:50]))


def test_a_drawn_seed_resumes_with_the_checkpoints_key(digits, tmp_path, monkeypatch, caplog):
    # random_state=None draws a seed per fit: the resumed run continues the
    # stopped one's minibatch draws (its key is in the checkpoint), and a
    # complete checkpoint gives its weights back without another epoch.
    path = tmp_path / "pretraining.npz"
    settings = {**SETTINGS, "random_state": None, "checkpoint": path}
    with monkeypatch.context() as patch:
        _stopped_after(3, patch)
        with pytest.raises(KeyboardInterrupt):
            PretrainedFeatureExtractor(**settings).fit(*digits)
    resumed = PretrainedFeatureExtractor(**settings).fit(*digits)
    with caplog.at_level("INFO", logger="skcl"):
        again = PretrainedFeatureExtractor(**settings, verbose=1).fit(*digits)
    assert "after epoch 4/4" in caplog.text and "epoch 4/4: loss" not in caplog.text
    np.testing.assert_array_equal(again.theta_, resumed.theta_)
    np.testing.assert_array_equal(again.loss_curve_, resumed.loss_curve_)


def test_a_checkpoint_of_another_run_is_refused(digits, tmp_path):
    X, y = digits
    path = tmp_path / "pretraining.npz"
    PretrainedFeatureExtractor(**SETTINGS, checkpoint=path).fit(X, y)
    for other, data in [({"learning_rate": 0.02}, (X, y)), ({}, (X[:200], y[:200]))]:
        extractor = PretrainedFeatureExtractor(**SETTINGS, **other, checkpoint=path)
        with pytest.raises(ValueError, match="checkpoint of another pre-training"):
            extractor.fit(*data)
        assert not hasattr(extractor, "theta_")
    path.write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="not a readable pre-training checkpoint"):
        PretrainedFeatureExtractor(**SETTINGS, checkpoint=path).fit(X, y)


def test_skcl_reproduce_resumes_its_pretraining_from_the_output_folder(tmp_path, monkeypatch):
    # pretrained_extractor keeps a checkpoint beside the cached weights while
    # it pre-trains; a stopped run resumes from it, and once the weights are
    # saved the checkpoint is removed. A stand-in task: 8x8 digits as images.
    import dataclasses

    from sklearn.utils import Bunch

    from skcl.reproduce import _extractors
    from skcl.reproduce._sequences import PRETRAINING

    X, y = load_digits(return_X_y=True)
    images = (X.reshape(-1, 8, 8) * 16).astype(np.uint8)
    task = Bunch(train=(images[:300], y[:300]), validation=(images[300:400], y[300:400]))
    option = dataclasses.replace(PRETRAINING["mnist"], loader=lambda root, download: task,
                                 n_epochs=3, batch_size=32)
    monkeypatch.setitem(PRETRAINING, "mnist", option)
    uninterrupted, _ = _extractors.pretrained_extractor("mnist", log=lambda line: None)
    with monkeypatch.context() as patch:
        _stopped_after(2, patch)
        with pytest.raises(KeyboardInterrupt):
            _extractors.pretrained_extractor("mnist", cache_dir=tmp_path, log=lambda line: None)
    assert [p.name for p in tmp_path.iterdir()] == ["mnist_cnn4_3epochs_seed0.checkpoint.npz"]
    resumed, info = _extractors.pretrained_extractor("mnist", cache_dir=tmp_path,
                                                     log=lambda line: None)
    assert info["source"] == "pre-trained"
    np.testing.assert_array_equal(resumed.theta_, uninterrupted.theta_)
    assert [p.name for p in tmp_path.iterdir()] == ["mnist_cnn4_3epochs_seed0.npz"]
    assert resumed.checkpoint is None
