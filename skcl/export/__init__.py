"""A learned model as plain scikit-learn: served without skcl, JAX or torch.

:func:`to_sklearn` returns the fitted scikit-learn estimator (or
Pipeline) that computes what a skcl model computes, where one exists:
a Gaussian with one component per class is ``LinearDiscriminantAnalysis``
(``QuadraticDiscriminantAnalysis`` with one covariance per class), least
squares is ``RidgeClassifier``, softmax regression learned by any MAP
method is ``LogisticRegression``, random Fourier features are
``RBFSampler``. Elsewhere a :class:`NotExportableError` says why; nothing
is approximated. The result needs scikit-learn only: pickle it, save it
with ``skops.io``, or convert it to ONNX with ``skl2onnx`` (the ``onnx``
extra).
"""

from ._classifiers import NotExportableError
from ._to_sklearn import to_sklearn

__all__ = ["NotExportableError", "to_sklearn"]
