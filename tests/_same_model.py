"""One check that two exact models are the same model, for the tests that refit to compare.

Forgetting, merging, decay, per-class sums and the two backends all
promise a model equal to another one (a refit on the remaining rows, one
fit on every shard, the NumPy backend's): this says what "equal" means,
once.
"""

import numpy as np


def assert_same_model(model, other, X, rtol=1e-8, hyperparameters=True):
    """Assert ``model`` answers as ``other`` on ``X``.

    ``decision_function`` and ``predict_proba`` agree within ``rtol`` of
    their largest finite entry (−inf where ``other``'s is), ``predict``
    exactly, and, with ``hyperparameters``, ``shrinkage_`` and ``alpha_``
    within ``rtol`` relative.
    """
    np.testing.assert_array_equal(model.classes_, other.classes_)
    for method in ("decision_function", "predict_proba"):
        got, want = getattr(model, method)(X), getattr(other, method)(X)
        finite = np.isfinite(want)
        np.testing.assert_array_equal(np.isfinite(got), finite, err_msg=method)
        scale = np.abs(want[finite]).max()
        np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=rtol * scale,
                                   err_msg=method)
    np.testing.assert_array_equal(model.predict(X), other.predict(X))
    if hyperparameters:
        for name in ("shrinkage_", "alpha_"):
            if hasattr(other, name):
                np.testing.assert_allclose(getattr(model, name), getattr(other, name),
                                           rtol=rtol, err_msg=name)
