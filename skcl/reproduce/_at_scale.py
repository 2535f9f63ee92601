"""The tables' rows at the anchors' scale: random features before a closed form.

:class:`RandomFeaturesLeastSquares` and :class:`RandomFeaturesGaussian`
are skcl's recipe, RanPAC's and RanDumb's heads on the inputs:
:class:`~skcl.feature_extraction.RandomFeatures` (M random features)
→ :class:`~skcl.LeastSquaresClassifier` or
:class:`~skcl.GaussianDiscriminantClassifier`, learned task by task with
nothing approximated; on tabular inputs of mixed units a
``StandardScaler`` fitted on the first task comes first
(``standardize=True``), on pixels nothing does. :class:`RanDumbJoint` is
RanDumb's code path (Prabhu et al., NeurIPS 2024) with scikit-learn's
parts, ``RBFSampler(gamma="scale")`` (random Fourier features) →
``LinearDiscriminantAnalysis`` (``solver="lsqr"``, covariance by OAS),
*refitted on every row seen so far* after each task: that model's joint
bound, which RanDumb's streaming update reaches exactly (its statistics
are sums) and no continual learner of that model can beat.
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.covariance import OAS
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from .._exact.openblas import refuse_wide_products

__all__ = ["RanDumbJoint", "RandomFeaturesGaussian", "RandomFeaturesLeastSquares"]


class _RandomFeaturesExact(ClassifierMixin, BaseEstimator):
    """[StandardScaler →] RandomFeatures(M) → an exact classifier, by ``partial_fit``.

    Parameters
    ----------
    n_components : int, default=2000
        M, RandomFeatures' default.
    standardize : bool, default=True
        Put a ``StandardScaler``, fitted on the first task and then frozen,
        before the features: for tabular inputs whose columns have
        different units. Pixels share one unit and need none
        (RandomFeatures' own scale is one scalar of the data's spread).
    random_state : int or None, default=None
        Draws W and b (and the held-out hash, if any).
    backend : {"auto", "numpy", "jax"}, default="auto"
        Of the features and of the statistics update.

    Attributes
    ----------
    pipeline_ : skcl.pipeline.Pipeline
    classes_ : ndarray of shape (n_classes,)
    """

    def __init__(self, n_components=2000, *, standardize=True, random_state=None,
                 backend="auto"):
        self.n_components = n_components
        self.standardize = standardize
        self.random_state = random_state
        self.backend = backend

    def _head(self):
        """The exact classifier on the features."""
        raise NotImplementedError

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn one task (a scaler, if any, is fitted on the first task only).

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
            steps = [StandardScaler()] if self.standardize else []
            self.pipeline_ = make_pipeline(
                *steps,
                RandomFeatures(self.n_components, backend=self.backend,
                               random_state=self.random_state),
                self._head(),
            )
        params = {} if sample_weight is None else {"sample_weight": sample_weight}
        with warnings.catch_warnings():
            # The tables' tabular rows keep the scaler their numbers were
            # measured with, knowingly: on inputs of mixed units (Wine's
            # proline in hundreds beside ratios near 1) one scalar spread
            # would let one column set the features' scale.
            warnings.filterwarnings("ignore", "Step 'standardscaler' .* first task alone")
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
        """The head's probabilities, a column per declared class."""
        check_is_fitted(self)
        return self.pipeline_.predict_proba(X)


class RandomFeaturesLeastSquares(_RandomFeaturesExact):
    __doc__ = _RandomFeaturesExact.__doc__.replace(
        "an exact classifier", "LeastSquaresClassifier (RanPAC's head)", 1)

    def _head(self):
        from .. import LeastSquaresClassifier

        return LeastSquaresClassifier(random_state=self.random_state, backend=self.backend)


class RandomFeaturesGaussian(_RandomFeaturesExact):
    __doc__ = _RandomFeaturesExact.__doc__.replace(
        "an exact classifier", "GaussianDiscriminantClassifier (RanDumb's head)", 1)

    def _head(self):
        from .. import GaussianDiscriminantClassifier

        return GaussianDiscriminantClassifier(random_state=self.random_state,
                                              backend=self.backend)


class RanDumbJoint(ClassifierMixin, BaseEstimator):
    """RanDumb's model refitted on all rows seen so far: its joint bound.

    [``StandardScaler`` →] ``RBFSampler(gamma="scale", n_components=M)`` →
    ``LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS())``,
    all scikit-learn's, as RanDumb's ``src/main.py`` runs them. RanDumb
    streams the same model's sums (class means and a shared covariance
    shrunk by OAS) one sample at a time; refitting
    on everything seen gives what that stream ends with, so this row is the
    ceiling of the recipe, not a continual learner.

    Two savings change no prediction: the refit waits for the first
    prediction after new rows (a sequence scored only at its end fits
    once), and OAS keeps no precision matrix (``store_precision=False``:
    LDA reads only its covariance, and the pseudo-inverse it would store,
    one M×M eigendecomposition per class and fit, took most of the row's
    time: 115 of 149 s at M = 500 on 1,000 MNIST images a task).

    Parameters
    ----------
    n_components : int, default=2000
        M (RanDumb: 10,000 to 25,000; skcl's RandomFeatures default here).
    standardize : bool, default=True
        Standardise each input column on the rows seen (tabular inputs of
        mixed units). RanDumb's own scripts instead normalise images by
        one scalar, ``(x/255 - 0.1307)/0.3081`` on MNIST, which
        ``gamma="scale"`` absorbs but for the random phases: on pixels
        ``standardize=False`` is RanDumb's code path.
    random_state : int or None, default=None
        Draws the Fourier features.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    """

    def __init__(self, n_components=2000, *, standardize=True, random_state=None):
        self.n_components = n_components
        self.standardize = standardize
        self.random_state = random_state

    def partial_fit(self, X, y, classes=None):
        """Add a task's rows; the next prediction refits on all rows so far.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class of the sequence (required on the first call).

        Returns
        -------
        self

        Raises
        ------
        RuntimeError
            Up front, where scikit-learn's products of ``n_components``
            columns would segfault in the loaded OpenBLAS
            (:func:`skcl._exact.openblas.refuse_wide_products`).
        """
        refuse_wide_products(self.n_components, f"RanDumbJoint(n_components={self.n_components})")
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
        if not hasattr(self, "classes_"):
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            self.classes_ = np.unique(classes)
            self._X, self._y = X[:0], y[:0]
        self._X, self._y = np.vstack([self._X, X]), np.concatenate([self._y, y])
        self._model = None  # refitted at the next prediction
        return self

    def _fitted(self):
        """The pipeline fitted on every row seen so far (None while they hold one class),
        fitted on the first call after new rows, then kept."""
        check_is_fitted(self)
        if self._model is None and len(np.unique(self._y)) >= 2:
            # LDA needs two classes: while one is seen, it is predicted.
            self._model = sk_make_pipeline(
                *([StandardScaler()] if self.standardize else []),
                RBFSampler(gamma="scale", n_components=self.n_components,
                           random_state=self.random_state),
                LinearDiscriminantAnalysis(
                    solver="lsqr", covariance_estimator=OAS(store_precision=False)),
            ).fit(self._X, self._y)
        return self._model

    def fit(self, X, y):
        """Forget everything and fit ``(X, y)``."""
        for name in ("classes_", "_X", "_y", "_model"):
            if hasattr(self, name):
                delattr(self, name)
        return self.partial_fit(X, y, classes=np.unique(y))

    def predict(self, X):
        model = self._fitted()
        if model is None:
            return np.full(len(X), self._y[0])
        return model.predict(X)

    def predict_proba(self, X):
        """LDA's posterior, a column per declared class (0 for those not seen yet).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        model = self._fitted()
        proba = np.zeros((len(X), len(self.classes_)))
        if model is None:
            proba[:, np.searchsorted(self.classes_, self._y[0])] = 1.0
        else:
            proba[:, np.searchsorted(self.classes_, model.classes_)] = model.predict_proba(X)
        return proba
