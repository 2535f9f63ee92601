"""decay: each call multiplies the weight of every row learned before it by λ.

The independent computation is the same calls learned without decay, each
with sample weights λ^(calls after it): the loss decay states. Every part
of the model (OAS shrinkage, GCV's α, the components' rule) must follow.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl.datasets import load_di_split_digits

from ._same_model import assert_same_model

RTOL = 1e-8


def _di_split_digits_in_calls(calls_per_task=3):
    """DI Split digits (parity), each task cut into calls: 15 calls."""
    data = load_di_split_digits()
    calls = [(X[i::calls_per_task], y[i::calls_per_task])
             for X, y in data.train for i in range(calls_per_task)]
    return calls, np.vstack([X for X, _ in data.test])


CALLS, X_TEST = _di_split_digits_in_calls()


@pytest.mark.parametrize("model", [
    GaussianDiscriminantClassifier(), GaussianDiscriminantClassifier(components="task_class"),
    LeastSquaresClassifier(), LeastSquaresClassifier(alpha="heldout", random_state=0),
], ids=["gaussian", "gaussian_task_class", "least_squares", "least_squares_heldout"])
def test_decay_is_the_fit_with_weights_decay_to_the_calls_after(model):
    decay = 0.8
    decayed = clone(model).set_params(decay=decay)
    weighted = clone(model)
    T = len(CALLS)
    for t, (X, y) in enumerate(CALLS):
        decayed.partial_fit(X, y, classes=[0, 1])
        weighted.partial_fit(X, y, classes=[0, 1],
                             sample_weight=np.full(len(y), decay ** (T - 1 - t)))
    assert_same_model(decayed, weighted, X_TEST, RTOL)
    # Forgetting a call's rows (given with the weights they came with) takes
    # out what is left of them after the decay since.
    decayed.forget(*CALLS[4], task=4)
    refit = clone(model)
    for t, (X, y) in enumerate(CALLS):
        if t != 4:
            refit.partial_fit(X, y, classes=[0, 1],
                              sample_weight=np.full(len(y), decay ** (T - 1 - t)))
    assert_same_model(decayed, refit, X_TEST, RTOL)


@pytest.mark.parametrize("decay, n_components", [(0.95, 10), (0.5, 4)])
def test_decay_changes_the_components_as_the_weights_do(decay, n_components):
    """components="auto" reads weights: decay moves it as the weights would.

    Undecayed, each of the 5 domains keeps its parity classes apart (10
    components); at λ = 0.95 too. The test counts rows, not weights
    (issue 50), so at λ = 0.5 the old domains hold a sliver of the rows
    each and some of their groups no longer stand apart by the BIC (4
    components left).
    """
    decayed = GaussianDiscriminantClassifier(decay=decay)
    weighted = GaussianDiscriminantClassifier()
    T = len(CALLS)
    for t, (X, y) in enumerate(CALLS):
        decayed.partial_fit(X, y, classes=[0, 1])
        weighted.partial_fit(X, y, classes=[0, 1],
                             sample_weight=np.full(len(y), decay ** (T - 1 - t)))
    np.testing.assert_array_equal(decayed.component_classes_, weighted.component_classes_)
    assert len(decayed.component_classes_) == n_components
    assert_same_model(decayed, weighted, X_TEST, RTOL)


@pytest.mark.parametrize("cls", [GaussianDiscriminantClassifier, LeastSquaresClassifier])
@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5, np.nan, "0.9"])
def test_decay_outside_0_1_is_refused_where_it_acts_and_changes_nothing(cls, bad):
    model = cls(decay=0.9)
    for X, y in CALLS[:2]:
        model.partial_fit(X, y, classes=[0, 1])
    before = model.predict_proba(X_TEST)
    model.set_params(decay=bad)
    with pytest.raises(InvalidParameterError, match="decay"):
        model.partial_fit(*CALLS[2])
    model.set_params(decay=0.9)
    np.testing.assert_array_equal(model.predict_proba(X_TEST), before)
    assert model.n_tasks_seen_ == 2
    with pytest.raises(InvalidParameterError, match="decay"):
        cls(decay=bad).fit(*CALLS[0])
