"""skcl: continual learning by sequential MAP inference, the scikit-learn way.

Each classifier learns a sequence of tasks, one ``partial_fit`` call per
task, without keeping old data (except :class:`JointClassifier`, the
upper bound). They differ in how they approximate the previous loss
L_{t-1} in the recursion L_t(θ) = L_{t-1}(θ) + nll_t(θ); the exact family
(:class:`GaussianDiscriminantClassifier`, :class:`LeastSquaresClassifier`)
keeps it exactly, as sums, where the model allows.
"""

from ._lazy import lazy_exports

__version__ = "0.1.0"

# The estimators are imported on first use (PEP 562), so that importing
# skcl, e.g. for ``skcl --help``, does not import JAX.
_LAZY = {
    "AQCClassifier": "._quadratic_methods",
    "EWCClassifier": "._quadratic_methods",
    "OnlineEWCClassifier": "._quadratic_methods",
    "SIClassifier": "._quadratic_methods",
    "NCClassifier": "._neural_methods",
    "FineTuningClassifier": "._reference_methods",
    "JointClassifier": "._reference_methods",
    "GMVCLClassifier": "._variational_methods",
    "GSFSVIClassifier": "._variational_methods",
    "GVCLClassifier": "._variational_methods",
    "GaussianDiscriminantClassifier": "._exact_methods",
    "LeastSquaresClassifier": "._exact_methods",
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
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
