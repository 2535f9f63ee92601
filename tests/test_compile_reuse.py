"""Compiled programs shared where the shapes are: tasks of different sizes
padded to one size draw their minibatches with one program, and draw
exactly the minibatches a program per task size would."""

import itertools

import jax
import numpy as np
import pytest

from skcl import FineTuningClassifier
from skcl._gradient.minibatches import (
    _all_epoch_batches,
    _padded_epoch_batches,
    _shuffle_rounds,
    epoch_batches,
    n_minibatches,
    padded_size,
)


@pytest.mark.parametrize(
    ("n_samples", "batch_size", "seed"),
    # One row; under, just over and at a whole minibatch; exactly the
    # padded size; an odd minibatch; either side of JAX's change of sorting
    # rounds; a large task and minibatch (padded to 4,096); an MNIST-sized
    # one (padded to 8,192). Each case compiles two programs.
    [*itertools.product([1, 10, 17, 128], [16], [0]),
     (30, 7, 3), (1625, 256, 2), (1626, 256, 2), (3000, 1000, 5), (5000, 128, 1)],
)
def test_padded_draws_are_the_per_size_draws(n_samples, batch_size, seed):
    """The same indices, masks and step keys, dtype and shape included, as
    the program compiled for the task's own size (the old path)."""
    key = jax.random.PRNGKey(seed)
    batch_size = min(batch_size, n_samples)
    n_rows = padded_size(n_samples)
    n_slots = n_minibatches(n_rows, batch_size)
    expected = _all_epoch_batches(key, n_samples=n_samples, batch_size=batch_size,
                                  n_epochs=3, n_slots=n_slots)
    padded = _padded_epoch_batches(key, np.int32(n_samples), n_rows=n_rows,
                                   batch_size=batch_size, n_epochs=3, n_slots=n_slots,
                                   n_rounds=_shuffle_rounds(n_samples))
    for old, new in zip(expected, padded):
        assert old.dtype == new.dtype and old.shape == new.shape
        np.testing.assert_array_equal(np.asarray(old), np.asarray(new))


def test_shuffle_rounds_match_jax():
    """Where the number of sorting rounds changes (JAX's rule), a padded
    draw still equals jax.random.permutation's order."""
    assert [_shuffle_rounds(n) for n in (1, 2, 1625, 1626, 4096)] == [0, 1, 1, 2, 2]
    key = jax.random.PRNGKey(4)
    for n in (1, 1626):
        idx, mask, _ = epoch_batches(key, n_samples=n, n_rows=padded_size(n), batch_size=n,
                                     n_epochs=1, n_slots=n_minibatches(padded_size(n), n))
        shuffle_key, _ = jax.random.split(jax.random.split(key, 1)[0])
        order = np.asarray(jax.random.permutation(shuffle_key, n))
        np.testing.assert_array_equal(np.asarray(idx)[0].ravel()[:n], order)
        assert np.asarray(mask)[0].sum() == n


def test_tasks_of_three_sizes_share_one_minibatch_program():
    """CI Split Wine's task sizes (38, 45, 30 rows; padded to 128): one
    program draws all three tasks' minibatches, none per size."""
    rng = np.random.default_rng(0)
    # An epoch count no other test uses, so the programs are this test's own.
    clf = FineTuningClassifier(n_epochs=7, random_state=0)
    before = (_padded_epoch_batches._cache_size(), _all_epoch_batches._cache_size())
    for n, classes in [(38, (0, 1)), (45, (1, 2)), (30, (2, 0))]:
        X = rng.normal(size=(n, 4)).astype(np.float32)
        clf.partial_fit(X, rng.choice(classes, size=n), classes=[0, 1, 2])
    after = (_padded_epoch_batches._cache_size(), _all_epoch_batches._cache_size())
    assert after[0] - before[0] == 1 and after[1] == before[1]


def test_mnist_sized_tasks_share_one_training_loop_and_learn_as_alone(monkeypatch):
    """Tasks above 4,096 rows (Split MNIST's 11,263 to 12,665) are padded
    too: two tasks of 4,500 and 5,391 rows (scikit-learn's digits, tiled)
    compile one training loop, not one each (compiling it cost as much as
    an epoch), and learn bit for bit what they learn unpadded."""
    from sklearn.datasets import load_digits

    from skcl._gradient import minibatches
    from skcl._gradient.training import _minimize

    X, y = load_digits(return_X_y=True)
    X = np.tile(X.astype(np.float32) / 16, (3, 1))  # 5,391 rows
    y = np.tile(y, 3)
    tasks = [(X[:4500], y[:4500]), (X[::-1], y[::-1])]

    def learn():
        # A network no other test uses, so the compiled loop is this test's own.
        clf = FineTuningClassifier(hidden_layer_sizes=(7,), n_epochs=1, batch_size=128,
                                   random_state=0)
        for Xt, yt in tasks:
            clf.partial_fit(Xt, yt, classes=np.arange(10))
        return clf

    before = _minimize._cache_size()
    padded = learn()
    assert _minimize._cache_size() == before + 1
    assert padded.score(X, y) > 0.6  # it learned (0.77; chance 0.1)
    monkeypatch.setattr(minibatches, "PAD_MAX", 0)
    alone = learn()
    np.testing.assert_array_equal(padded.theta_, alone.theta_)
    np.testing.assert_array_equal(padded.predict_proba(X), alone.predict_proba(X))



@pytest.mark.parametrize(("structure", "hidden"),
                         [("diag", (6,)), ("full", ()), ("full", (3,))])
def test_curvatures_of_tasks_of_two_sizes_share_one_program_to_the_bit(monkeypatch, structure,
                                                                         hidden):
    """A task's curvature (EWC's Fisher, AQC's) that spans several chunks is
    taken on its rows padded with weight 0 to the training loop's size:
    tasks of 300 and 350 rows of scikit-learn's digits (in chunks of 32
    here; of 5,952 for Split MNIST's 784-400-400) compile one program, not
    one each, and each curvature is bit for bit the one computed on the
    task's rows alone (diagonal factors, the full closed form and the full
    autodiff path; the Kronecker structure is not padded)."""
    import jax.numpy as jnp
    from sklearn.datasets import load_digits

    from skcl._gradient.consolidation import curvature
    from skcl._gradient.model import Model
    from skcl._gradient.networks import MLP

    monkeypatch.setattr(curvature, "_CHUNK_FLOATS", 1)  # chunks of one minibatch
    X, y = load_digits(return_X_y=True)
    X, y = X.astype(np.float32) / 16, y.astype(np.int32)
    network = MLP(64, hidden, 10)  # with batch_size 32, programs of this test's own
    model = Model(network, "categorical")
    theta = network.init(jax.random.PRNGKey(0))
    args = [(model, "ggn", structure, theta, X[:n], y[:n], np.linspace(0.5, 2, n, dtype=np.float32))
            for n in (300, 350)]
    before = curvature._task_curvature._cache_size()
    padded = [curvature.task_curvature(*a, batch_size=32) for a in args]
    assert curvature._task_curvature._cache_size() == before + 1  # both padded to 512 rows
    for C, a in zip(padded, args):
        alone = curvature._task_curvature(*a, None, batch_size=32, method="auto", competing=None)
        for new, old in zip(jax.tree.leaves(C), jax.tree.leaves(alone)):
            np.testing.assert_array_equal(np.asarray(new), np.asarray(old))
        assert float(jnp.abs(C.to_dense()).max()) > 0.1  # not a zero matrix
