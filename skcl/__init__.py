"""skcl: continual learning by sequential MAP inference, the scikit-learn way.

Each classifier learns a sequence of tasks, one ``partial_fit`` call per
task, without keeping old data (except :class:`JointClassifier`, the
upper bound). They differ in how they approximate the previous loss
L_{t-1} in the recursion L_t(θ) = L_{t-1}(θ) + nll_t(θ).
"""

from ._quadratic_methods import (
    AQCClassifier,
    EWCClassifier,
    OnlineEWCClassifier,
    SIClassifier,
)
from ._neural_methods import NCClassifier
from ._reference_methods import FineTuningClassifier, JointClassifier
from ._variational_methods import GMVCLClassifier, GSFSVIClassifier, GVCLClassifier

__version__ = "0.1.0"

__all__ = [
    "AQCClassifier",
    "EWCClassifier",
    "FineTuningClassifier",
    "GMVCLClassifier",
    "GSFSVIClassifier",
    "GVCLClassifier",
    "JointClassifier",
    "NCClassifier",
    "OnlineEWCClassifier",
    "SIClassifier",
]
