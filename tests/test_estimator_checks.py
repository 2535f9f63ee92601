"""scikit-learn's own estimator checks, on every gradient-trained skcl classifier.

The exact classifiers (every covariance and components option) and
RandomFeatures are checked by ``tests/test_exact_methods.py``, their
probability options by ``tests/test_exact_probabilities.py``; the feature
extractors by ``tests/test_feature_extraction.py`` and
``tests/test_backbones.py``; the Pipeline by ``tests/test_pipeline.py``.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skcl import (
    AQCClassifier,
    EWCClassifier,
    FineTuningClassifier,
    GMVCLClassifier,
    GSFSVIClassifier,
    GVCLClassifier,
    JointClassifier,
    NCClassifier,
    OnlineEWCClassifier,
    SIClassifier,
)

# The defaults: the checks' accuracy thresholds (e.g. class weights of 1000
# vs 0.0001 on very noisy blobs) are held to the estimators as users get
# them; where one is not met, the reason is declared below.
FAST = dict(random_state=0)

ESTIMATORS = [
    FineTuningClassifier(**FAST),
    JointClassifier(**FAST),
    AQCClassifier(**FAST),
    EWCClassifier(**FAST),
    SIClassifier(**FAST),
    # Kronecker-factored GGN, on a hidden layer so that K-FAC has two blocks:
    # the contract with a hidden layer. (The full autodiff Hessian of a
    # hidden-layer network is tested against finite differences and the
    # GGN in test_curvature.py; under the checks' many input shapes it
    # would only add compilations.)
    AQCClassifier(curvature="ggn", structure="kron", hidden_layer_sizes=(4,), **FAST),
    OnlineEWCClassifier(**FAST),
    # A smaller consolidator than the default (256, 256) × 1000 steps: the
    # API is the same, and the checks fit a few hundred times.
    NCClassifier(consolidator_hidden_layer_sizes=(32,), consolidator_n_steps=100, **FAST),
    GVCLClassifier(**FAST),
    GMVCLClassifier(**FAST),
    GSFSVIClassifier(**FAST),
]

EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": (
        "a zero weight keeps the sample in the minibatch schedule: the number of "
        "minibatches, and so the one-cycle schedule and the penalty's 1/n_batches "
        "scaling, depend on n_samples"
    ),
}


# Measured on the check's data (two blobs of spread 20, 50 training rows,
# class weights 1000 and 0.0001; it asks for > 87 % of class 0): at the
# defaults G-VCL predicts class 0 for 80 %, G-SFSVI for 78 %; with 1,000
# epochs or learning_rate=0.1 both reach 100 %. Fine-tuning, the same
# network and steps without a posterior's variance, reaches 90 %.
VARIATIONAL_FAILURES = {
    "check_class_weight_classifiers": (
        "100 epochs of 4 minibatches at learning rate 0.01 (the paper's settings) leave the "
        "Monte Carlo ELBO short of the weighted optimum on the check's 50 noisy rows (G-VCL 80 %, "
        "G-SFSVI 78 % class 0 against the 87 % asked; 100 % with more steps)"
    ),
}


def expected_failed_checks(estimator):
    if isinstance(estimator, (GVCLClassifier, GMVCLClassifier, GSFSVIClassifier)):
        return {**EXPECTED_FAILURES, **VARIATIONAL_FAILURES}
    return EXPECTED_FAILURES


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
