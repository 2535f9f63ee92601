"""RandomFeatures: scikit-learn's checks, the kernel that cosine features
approximate, and the features fixed by the seed. (Inputs of any units and
size: ``tests/test_random_features_units.py``; at scale:
``tests/test_random_features_scale.py``.)"""

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcl.datasets import load_ci_split_iris
from skcl.feature_extraction import RandomFeatures


@parametrize_with_checks([RandomFeatures(50, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_random_cosine_features_approximate_the_rbf_kernel():
    X = np.random.default_rng(9).standard_normal((30, 5))
    gamma = 0.2
    phi = RandomFeatures(20000, activation="cos", scale=np.sqrt(2 * gamma * 5), bias="uniform",
                         dtype="float64", random_state=0).fit_transform(X)
    kernel = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
    np.testing.assert_allclose(phi @ phi.T * 2 / phi.shape[1], kernel, atol=0.03)


def test_random_features_are_fixed_by_the_seed_and_take_their_shape():
    X = load_ci_split_iris().train[0][0]
    # With a numeric scale fit reads only X's number of features
    # (scale="auto" also reads its centre and spread).
    a = RandomFeatures(64, activation="relu", scale=1.0, random_state=1).fit(X)
    b = RandomFeatures(64, activation="relu", scale=1.0, random_state=1).fit(X[:3])
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert a.transform(X).shape == (len(X), 64) and (a.transform(X) >= 0).all()
    assert a.get_feature_names_out()[0] == "randomfeatures0"
