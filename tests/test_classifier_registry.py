"""The registry of classifiers (``tests/_classifiers.py``) holds every
public classifier, and what it says of each is what the classifier is."""

from sklearn.base import clone

import skcl

from ._classifiers import CASES, WHERE, public_classifiers


def test_every_public_classifier_is_in_the_registry():
    registered = {case.name for case in CASES if case.kind == "default"}
    missing = sorted(set(public_classifiers()) - registered)
    assert not missing, (
        f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} public "
        f"(skcl.__all__) but not in the registry of classifiers: add a default case to "
        f"{WHERE}; the estimator checks, probabilities, properties, bad input, "
        "set_params, persistence and export tests then take it from there."
    )
    assert registered <= set(public_classifiers())
    # scikit-learn's checks run on every public classifier.
    assert all(case.estimator_checks for case in CASES if case.kind == "default")


def test_each_case_is_named_once_and_builds_its_configuration():
    assert len({case.id for case in CASES}) == len(CASES)
    assert {case.kind for case in CASES} == {"default", "state", "predictive"}
    for case in CASES:
        estimator = case.make(n_epochs=3, random_state=0)
        assert type(estimator) is getattr(skcl, case.name)
        params = estimator.get_params()
        assert {k: params[k] for k in case.params} == case.params, case
        assert clone(estimator).get_params() == params


def test_the_tags_say_what_each_classifier_is():
    for case in CASES:
        params = case.cls().get_params()
        # Gradient-trained: a network trained for epochs; exact: sums, no epochs.
        assert (case.family == "gradient") == ("n_epochs" in params), case
        assert case.variational == ("n_train_samples" in params), case
        # Settings that only a prediction reads.
        assert case.prediction_settings == bool(
            {"predictive", "probabilities"} & set(params)), case
        assert case.grows_classes == bool(case.make().grow_classes), case
        assert case.sparse == case.make().__sklearn_tags__().input_tags.sparse, case
