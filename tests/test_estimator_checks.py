"""scikit-learn's own estimator checks, on every skcl classifier of the registry.

Each default and state case of ``tests/_classifiers.py`` (but those it
marks ``estimator_checks=False``) at its defaults (``random_state=0``):
the checks' accuracy thresholds (e.g. class weights of 1000 vs 0.0001 on
very noisy blobs) are held to the estimators as users get them; where one
is not met, the registry gives the reason. The feature extractors are
checked by ``tests/test_feature_extraction.py`` and
``tests/test_backbones.py``, RandomFeatures by
``tests/test_random_features.py``, the Pipeline by ``tests/test_pipeline.py``.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from ._classifiers import cases

CASES = [case for case in cases("default", "state") if case.estimator_checks]
ESTIMATORS = [case.make(random_state=0) for case in CASES]
# Each estimator's expected failures, found by its position in the list
# (two cases may be of the same class with equal reasons; ids by position
# keep them apart).
_FAILURES = {id(estimator): case.expected_failed_checks
             for case, estimator in zip(CASES, ESTIMATORS)}


def expected_failed_checks(estimator):
    return _FAILURES[id(estimator)]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
