"""Shared fixtures: the bundled classical task sequences."""

import pytest

from skcl.datasets import load_ci_split_iris, load_ci_split_wine

# The paper's settings for Iris (appendix C).
IRIS_SETTINGS = dict(n_epochs=100, batch_size=16, learning_rate=0.1)


@pytest.fixture(scope="session")
def iris():
    return load_ci_split_iris()


@pytest.fixture(scope="session")
def wine():
    return load_ci_split_wine()
