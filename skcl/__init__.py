"""skcl: continual learning by sequential MAP inference, the scikit-learn way.

Each classifier learns a sequence of tasks, one ``partial_fit`` call per
task, without keeping old data (except :class:`JointClassifier`, the
upper bound). They differ in how they approximate the previous loss
L_{t-1} in the recursion L_t(θ) = L_{t-1}(θ) + nll_t(θ); the exact family
(:class:`GaussianDiscriminantClassifier`, :class:`LeastSquaresClassifier`)
keeps it exactly, as sums, where the model allows.
"""

from ._persistence import trusted_types
from ._utils.lazy import lazy_exports

__version__ = "0.1.0"

# The estimators are imported on first use (PEP 562), so that importing
# skcl, e.g. for ``skcl --help``, does not import JAX.
_LAZY = {
    "AQCClassifier": "._gradient.estimators.quadratic",
    "EWCClassifier": "._gradient.estimators.quadratic",
    "OnlineEWCClassifier": "._gradient.estimators.quadratic",
    "SIClassifier": "._gradient.estimators.quadratic",
    "NCClassifier": "._gradient.estimators.neural",
    "FineTuningClassifier": "._gradient.estimators.reference",
    "JointClassifier": "._gradient.estimators.reference",
    "GMVCLClassifier": "._gradient.estimators.variational",
    "GSFSVIClassifier": "._gradient.estimators.variational",
    "GVCLClassifier": "._gradient.estimators.variational",
    "GaussianDiscriminantClassifier": "._exact.estimators.gaussian",
    "LeastSquaresClassifier": "._exact.estimators.least_squares",
    "merge_models": "._exact.merging",
}

__all__ = [
    "AQCClassifier",
    "EWCClassifier",
    "FineTuningClassifier",
    "GMVCLClassifier",
    "GSFSVIClassifier",
    "GVCLClassifier",
    "GaussianDiscriminantClassifier",
    "JointClassifier",
    "LeastSquaresClassifier",
    "NCClassifier",
    "OnlineEWCClassifier",
    "SIClassifier",
    "merge_models",
    "trusted_types",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
