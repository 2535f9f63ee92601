"""Exact models learned apart merge into the model of all their rows.

The independent computation is one learner given every row: for shards
fitted with one call each, ``fit`` on the union; for shards of a sequence
of calls, the sequence of the calls' unions.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import skops.io
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError

import skcl
from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier, merge_models
from skcl._exact.merging import MergeError
from skcl.feature_extraction import RandomFeatures
from skcl.pipeline import Pipeline

from ._same_model import assert_same_model

RTOL = 1e-8
X_ALL, Y_ALL = load_digits(return_X_y=True)
X_ALL = X_ALL / 16.0
X_TEST = X_ALL[::7]
# Four disjoint shards of uneven sizes; the third has no 7.
_ORDER = np.random.default_rng(0).permutation(len(X_ALL))
SHARDS = [_ORDER[a:b] for a, b in [(0, 150), (150, 700), (700, 1000), (1000, len(X_ALL))]]
SHARDS[2] = SHARDS[2][Y_ALL[SHARDS[2]] != 7]

MODELS = {
    "gaussian": GaussianDiscriminantClassifier(),
    "least_squares": LeastSquaresClassifier(),
    "gaussian_heldout": GaussianDiscriminantClassifier(shrinkage="heldout", random_state=0),
    "least_squares_heldout": LeastSquaresClassifier(alpha="heldout", random_state=0),
    "gaussian_per_class": GaussianDiscriminantClassifier(covariance="per_class",
                                                         shrinkage=0.1),
}


@pytest.mark.parametrize("name", MODELS)
def test_four_shards_merge_into_the_fit_on_all_rows(name):
    shards = [clone(MODELS[name]).fit(X_ALL[rows], Y_ALL[rows]) for rows in SHARDS]
    assert 7 not in shards[2].classes_
    merged = merge_models(shards)
    union = np.concatenate(SHARDS)
    assert_same_model(merged, clone(MODELS[name]).fit(X_ALL[union], Y_ALL[union]), X_TEST)
    # The shards are not changed.
    kept = shards[0].moments_.total + shards[0].heldout_moments_.total
    assert 7 not in shards[2].classes_ and kept == len(SHARDS[0])


@pytest.mark.parametrize("name", ["gaussian", "least_squares"])
def test_shards_of_a_sequence_of_calls_merge_call_by_call(name):
    """Each shard learns the CI Split digits calls on its rows; call t merges with call t."""
    pairs = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]

    def learn(rows):
        model = clone(MODELS[name])
        for pair in pairs:
            task = rows[np.isin(Y_ALL[rows], pair)]
            model.partial_fit(X_ALL[task], Y_ALL[task], classes=np.arange(10))
        return model

    merged = merge_models([learn(rows) for rows in SHARDS])
    assert merged.n_tasks_seen_ == 5
    assert_same_model(merged, learn(np.concatenate(SHARDS)), X_TEST)


_SHARD_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np, skops.io
    from sklearn.datasets import load_digits
    from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
    X, y = load_digits(return_X_y=True)
    rows = np.load(sys.argv[1])
    for cls in (GaussianDiscriminantClassifier, LeastSquaresClassifier):
        model = cls().fit(X[rows] / 16.0, y[rows])
        skops.io.dump(model, sys.argv[2] + cls.__name__ + ".skops")
""")


@pytest.mark.slow
def test_shards_saved_by_other_processes_merge_after_loading(tmp_path):
    """Each shard learned and saved with skops by its own process (the four at once)."""
    processes = []
    for k, rows in enumerate(SHARDS):
        np.save(tmp_path / f"rows{k}.npy", rows)
        processes.append(subprocess.Popen([sys.executable, "-c", _SHARD_SCRIPT,
                                           str(tmp_path / f"rows{k}.npy"),
                                           str(tmp_path / f"shard{k}-")]))
    assert all(process.wait(timeout=600) == 0 for process in processes)
    union = np.concatenate(SHARDS)
    for cls in (GaussianDiscriminantClassifier, LeastSquaresClassifier):
        loaded = [skops.io.load(tmp_path / f"shard{k}-{cls.__name__}.skops",
                                trusted=skcl.trusted_types()) for k in range(len(SHARDS))]
        assert_same_model(merge_models(loaded), cls().fit(X_ALL[union], Y_ALL[union]),
                          X_TEST)


def _pipelines(features_of, cls=LeastSquaresClassifier):
    pipes = []
    for rows in SHARDS:
        pipe = Pipeline([("features", features_of(rows)), ("clf", cls())])
        pipes.append(pipe.partial_fit(X_ALL[rows], Y_ALL[rows], classes=np.arange(10)))
    return pipes


def test_pipelines_with_one_shared_feature_map_merge():
    # Fitted once; float64 features, whose products are float64: the merge is
    # then the refit to 1e-8 (float32 features' products are float32 blocks,
    # which the shards and the refit would round differently).
    shared = RandomFeatures(300, random_state=0, dtype="float64").fit(X_ALL[SHARDS[0]])
    merged = merge_models(_pipelines(lambda rows: shared))
    refit = Pipeline([("features", shared), ("clf", LeastSquaresClassifier())])
    union = np.concatenate(SHARDS)
    refit.partial_fit(X_ALL[union], Y_ALL[union], classes=np.arange(10))
    assert_same_model(merged, refit, X_TEST)
    # A numeric scale reads no rows: fitted by each learner on its own, the same map.
    fixed = merge_models(_pipelines(
        lambda rows: RandomFeatures(300, scale=1.0, random_state=0).fit(X_ALL[rows])))
    assert fixed.predict(X_TEST).shape == (len(X_TEST),)


def test_pipelines_whose_feature_maps_differ_are_refused():
    # scale="auto" fitted on each shard's rows: four different maps.
    pipes = _pipelines(lambda rows: RandomFeatures(300, random_state=0).fit(X_ALL[rows]))
    with pytest.raises(MergeError, match="different feature maps: step 'features' differs"):
        merge_models(pipes)
    pipes = _pipelines(lambda rows: RandomFeatures(300, scale=1.0, random_state=int(rows[0])))
    with pytest.raises(MergeError, match="step 'features'"):
        merge_models(pipes)


def test_mismatched_models_are_refused_naming_the_difference():
    X, y = X_ALL[:300], Y_ALL[:300]
    a = LeastSquaresClassifier().fit(X, y)
    cases = [
        (LeastSquaresClassifier(alpha=1.0).fit(X, y), "different settings: alpha='auto'"),
        (GaussianDiscriminantClassifier().fit(X, y), "different kinds"),
        (LeastSquaresClassifier().fit(X[:, :10], y), "64 and 10 features"),
        (LeastSquaresClassifier().fit(X, np.array(list("abcdefghij"))[y]),
         "cannot be put in one order"),
        (LeastSquaresClassifier(alpha="heldout").fit(X, y), "different settings"),
    ]
    for other, message in cases:
        with pytest.raises(MergeError, match=message):
            merge_models([a, other])
    with pytest.raises(NotFittedError, match="model 1"):
        merge_models([a, LeastSquaresClassifier()])
    h1 = LeastSquaresClassifier(alpha="heldout").fit(X, y)
    h2 = LeastSquaresClassifier(alpha="heldout").fit(X_ALL[300:600], Y_ALL[300:600])
    with pytest.raises(MergeError, match="different hashes"):
        merge_models([h1, h2])  # random_state=None: each drew its own seed
    with pytest.raises(MergeError, match="at least one"):
        merge_models([])
