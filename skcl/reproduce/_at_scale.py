"""Two rows of the tables at the anchors' scale: random features before a closed form.

:class:`RandomFeaturesLeastSquares` is skcl's recipe, RanPAC's head on the
inputs: ``StandardScaler`` (fitted on the first task) →
:class:`~skcl.feature_extraction.RandomFeatures` (M random ReLU features)
→ :class:`~skcl.LeastSquaresClassifier`, learned task by task with
nothing approximated. :class:`RanDumbJoint` is RanDumb's (Prabhu et al.,
NeurIPS 2024) with scikit-learn's parts, ``StandardScaler`` →
``RBFSampler`` (random Fourier features) → ``LinearDiscriminantAnalysis``
(``solver="lsqr"``, covariance by OAS), *refitted on every row seen so
far* after each task: that model's joint bound, which RanDumb's streaming
update reaches exactly (its statistics are sums) and no continual learner
of that model can beat.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.covariance import OAS
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

__all__ = ["RanDumbJoint", "RandomFeaturesLeastSquares"]


class RandomFeaturesLeastSquares(ClassifierMixin, BaseEstimator):
    """StandardScaler → RandomFeatures(M) → LeastSquaresClassifier, by ``partial_fit``.

    Parameters
    ----------
    n_components : int, default=2000
        M, RandomFeatures' default.
    random_state : int or None, default=None
        Draws W and b (and the held-out hash, if any).
    backend : {"auto", "numpy", "jax"}, default="auto"
        Of the features and of the statistics update.

    Attributes
    ----------
    pipeline_ : skcl.pipeline.Pipeline
    classes_ : ndarray of shape (n_classes,)
    """

    def __init__(self, n_components=2000, *, random_state=None, backend="auto"):
        self.n_components = n_components
        self.random_state = random_state
        self.backend = backend

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn one task (the scaler is fitted on the first task only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class of the sequence (required on the first call).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        from ..feature_extraction import RandomFeatures
        from ..pipeline import make_pipeline

        if not hasattr(self, "pipeline_"):
            self.pipeline_ = make_pipeline(
                StandardScaler(),
                RandomFeatures(self.n_components, backend=self.backend,
                               random_state=self.random_state),
                _least_squares(self.random_state, self.backend),
            )
        params = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.pipeline_.partial_fit(X, y, classes=classes, **params)
        self.classes_ = self.pipeline_.classes_
        return self

    def fit(self, X, y, sample_weight=None):
        """Forget everything and learn ``(X, y)`` as one task."""
        if hasattr(self, "pipeline_"):
            del self.pipeline_
        return self.partial_fit(X, y, classes=np.unique(y), sample_weight=sample_weight)

    def decision_function(self, X):
        check_is_fitted(self)
        return self.pipeline_.decision_function(X)

    def predict(self, X):
        check_is_fitted(self)
        return self.pipeline_.predict(X)

    def predict_proba(self, X):
        """Least squares' probabilities (:meth:`skcl.LeastSquaresClassifier.predict_proba`)."""
        check_is_fitted(self)
        return self.pipeline_.predict_proba(X)


def _least_squares(random_state, backend):
    from .. import LeastSquaresClassifier

    return LeastSquaresClassifier(random_state=random_state, backend=backend)


class RanDumbJoint(ClassifierMixin, BaseEstimator):
    """RanDumb's model refitted on all rows seen so far: its joint bound.

    ``StandardScaler`` → ``RBFSampler(gamma="scale", n_components=M)`` →
    ``LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS())``,
    all scikit-learn's. RanDumb streams the same model's sums (class means
    and a shared covariance shrunk by OAS) one sample at a time; refitting
    on everything seen gives what that stream ends with, so this row is the
    ceiling of the recipe, not a continual learner.

    Parameters
    ----------
    n_components : int, default=2000
        M (RanDumb: 10,000 to 25,000; skcl's RandomFeatures default here).
    random_state : int or None, default=None
        Draws the Fourier features.

    Attributes
    ----------
    model_ : sklearn.pipeline.Pipeline
        Fitted on every row seen so far.
    classes_ : ndarray of shape (n_classes,)
    """

    def __init__(self, n_components=2000, *, random_state=None):
        self.n_components = n_components
        self.random_state = random_state

    def partial_fit(self, X, y, classes=None):
        """Add a task's rows and refit on all rows so far.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class of the sequence (required on the first call).

        Returns
        -------
        self
        """
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
        if not hasattr(self, "classes_"):
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            self.classes_ = np.unique(classes)
            self._X, self._y = X[:0], y[:0]
        self._X, self._y = np.vstack([self._X, X]), np.concatenate([self._y, y])
        model = sk_make_pipeline(
            StandardScaler(),
            RBFSampler(gamma="scale", n_components=self.n_components,
                       random_state=self.random_state),
            LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS()),
        )
        if len(np.unique(self._y)) < 2:
            # LDA needs two classes: a single class seen so far is predicted.
            self.model_ = None
        else:
            self.model_ = clone(model).fit(self._X, self._y)
        return self

    def fit(self, X, y):
        """Forget everything and fit ``(X, y)``."""
        for name in ("classes_", "_X", "_y", "model_"):
            if hasattr(self, name):
                delattr(self, name)
        return self.partial_fit(X, y, classes=np.unique(y))

    def predict(self, X):
        check_is_fitted(self)
        if self.model_ is None:
            return np.full(len(X), self._y[0])
        return self.model_.predict(X)

    def predict_proba(self, X):
        """LDA's posterior, a column per declared class (0 for those not seen yet).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        proba = np.zeros((len(X), len(self.classes_)))
        if self.model_ is None:
            proba[:, np.searchsorted(self.classes_, self._y[0])] = 1.0
        else:
            proba[:, np.searchsorted(self.classes_, self.model_.classes_)] = (
                self.model_.predict_proba(X))
        return proba
