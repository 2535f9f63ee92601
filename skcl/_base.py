"""The scikit-learn surface shared by every skcl classifier.

A call to ``partial_fit`` is one task of the sequence. The base class does
everything that does not depend on the method: input validation, the
label encoding, class weights, keys, the transaction that keeps a rejected
call from changing anything, the loss recursion itself (``_learn_task``)
and prediction. A method is its ``__init__`` plus the choice of a
consolidation (``_make_consolidation``), the stand-in for L_{t-1}.
"""

import time
from contextlib import contextmanager

import jax
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
    unique_labels,
)
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _likelihoods
from ._consolidation import FinishedTask
from ._model import Model
from ._networks import MLP, apply_numpy
from ._training import minimize

__all__ = ["BaseSequentialClassifier", "fill_doc"]

_COMMON_PARAMS_DOC = """
    hidden_layer_sizes : tuple of int, default=()
        Widths of the swish hidden layers. ``()`` is softmax regression
        (logistic regression for two classes), the paper's "SR"; ``(4,)``
        is its FCNN for Iris, ``(16,)`` for Wine.
    n_epochs : int, default=100
        Passes over each task's data (the paper: 100 for Iris and Wine, 20
        for image features).
    batch_size : int, default=16
        Minibatch size (the paper: 16 for Iris and Wine, 64 for images).
    learning_rate : float, default=0.01
        Peak learning rate of Adam's cosine one-cycle schedule, the paper's
        base learning rate (0.1 for Iris, 0.01 for Wine and MNIST).
    prior_precision : float, default=1.0
        Precision of the zero-mean Gaussian prior of the first task,
        L_0(θ) = ½·precision·‖θ‖² (the paper: a standard Gaussian, 1).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes in the likelihood. "balanced" weighs class
        i of a task by n / (k · n_i) over the k classes present, which is
        the paper's m / n_i weighting up to a constant factor.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation, the minibatch order and any sampling.
        An int gives identical results run to run.
    verbose : int, default=0
        Print one line per task when positive.
"""


class BaseSequentialClassifier(ClassifierMixin, BaseEstimator):
    """Base class of skcl's continual-learning classifiers.

    Not for direct use. Subclasses define ``__init__`` with their
    hyperparameters and ``_make_consolidation``.

    Attributes (after the first task)
    ---------------------------------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X had string column names.
    n_tasks_seen_ : int
        Number of tasks learned (calls to ``partial_fit``).
    theta_ : ndarray of shape (n_params,)
        θ*_t, the flat parameter vector after the last task.
    loss_curve_ : ndarray of shape (n_epochs,)
        Loss of each epoch of the last task (data term plus penalty).
    """

    def __init__(
        self,
        *,
        hidden_layer_sizes=(),
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.prior_precision = prior_precision
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ API

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn one more task.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The task's inputs.
        y : array-like of shape (n_samples,)
            The task's labels; any subset of ``classes``, one class is fine.
        classes : array-like of shape (n_classes,), default=None
            Every class of the whole sequence. Required on the first call
            (the network's output layer is sized once, as in every
            single-headed method); on later calls it may be omitted or must
            be the same.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples in the likelihood.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On NaN or infinite inputs, empty X, a different number of
            features than before, labels outside ``classes``, a first call
            without ``classes``, or when training diverges. The estimator
            is then left exactly as it was before the call.
        """
        with self._transaction():
            self._partial_fit(X, y, classes, sample_weight)
        return self

    def fit(self, X, y, sample_weight=None):
        """Forget everything and learn ``(X, y)`` as a single task.

        ``classes_`` become the labels present in ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        with self._transaction():
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
            self._partial_fit(X, y, None, sample_weight, infer_classes=True)
        return self

    def decision_function(self, X):
        """Logits of the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (the logit of
        ``classes_[1]``), else (n_samples, n_classes)
        """
        logits = self._logits(X)
        if self.likelihood_ == _likelihoods.BERNOULLI:
            return logits[:, 0]
        return logits

    def predict_proba(self, X):
        """Class probabilities under the MAP estimate θ*_t.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        logits = self._logits(X)  # checks fitted before reading likelihood_
        return _likelihoods.probabilities(self.likelihood_, logits)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Most probable class of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    @property
    def coefs_(self):
        """Weight matrices of the layers, as in ``MLPClassifier``."""
        check_is_fitted(self)
        return [W for W, _ in self.network_.unflatten(self.theta_)]

    @property
    def intercepts_(self):
        """Bias vectors of the layers, as in ``MLPClassifier``."""
        check_is_fitted(self)
        return [b for _, b in self.network_.unflatten(self.theta_)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    # ------------------------------------------------------- for subclasses

    def _make_consolidation(self):
        """The method: a Consolidation built from the hyperparameters."""
        raise NotImplementedError

    def _task_attributes(self, consolidation, state, key):
        """Further fitted attributes of a finished task (default: none)."""
        return {}

    def _learn_task(self, X, y, sample_weight, key):
        """One step of the loss recursion, L_t = L_{t-1} + nll_t.

        Task t is learned against the consolidation's stand-in for
        L_{t-1}, then folded into it. ``y`` holds class indices into
        ``classes_``. Returns the fitted attributes to set and must not
        modify ``self``: the caller commits them only when the whole task
        succeeded.
        """
        method = self._make_consolidation()
        model = self._model()
        state, X, y, sample_weight = method.prepare(self.consolidation_, X, y, sample_weight)
        w = self._likelihood_weights(y, sample_weight)
        train_key, fold_key = method.task_keys(key)
        start = method.start(state, self.theta_)
        params, losses, trace = self._minimize(model, method, state, start, X, y, w, train_key)
        task = FinishedTask(start, params, X, y, w, sample_weight, trace, int(self.batch_size))
        state = self._fold(method, model, state, task, fold_key)
        _check_finite_state(state, self.n_tasks_seen_)
        state = jax.tree.map(np.asarray, state)  # host arrays pickle anywhere
        return {
            "theta_": np.asarray(method.point_estimate(state, params)),
            "consolidation_": state,
            "loss_curve_": losses,
            **self._task_attributes(method, state, key),
        }

    def _fold(self, method, model, state, task, key):
        """Fold the finished task into the state (a subclass may defer it)."""
        return method.fold(model, state, task, key)

    # ------------------------------------------------------------ internals

    def _model(self):
        return Model(self.network_, self.likelihood_)

    def _minimize(self, model, method, state, params, X, y, w, key):
        """Run the jitted training loop and reject a diverged result."""
        params, losses, trace = minimize(
            model,
            method,
            state,
            params,
            X,
            y,
            w,
            key,
            float(self.learning_rate),
            n_epochs=int(self.n_epochs),
            batch_size=int(self.batch_size),
        )
        losses = np.asarray(losses)
        bad = ~np.isfinite(losses)
        if bad.any() or not np.all(np.isfinite(np.asarray(params))):
            epoch = int(np.argmax(bad)) + 1 if bad.any() else len(losses)
            raise ValueError(
                f"Training on task {self.n_tasks_seen_ + 1} diverged: the loss became "
                f"non-finite (inf or NaN) in epoch {epoch}. The estimator is unchanged; "
                "try a smaller learning_rate or alpha, or scale the features."
            )
        return np.asarray(params), losses, trace

    @contextmanager
    def _transaction(self):
        """Restore every attribute if the block raises."""
        saved = dict(vars(self))
        try:
            yield
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            raise

    def _check_params(self):
        sizes = self.hidden_layer_sizes
        sizes = (sizes,) if np.isscalar(sizes) else tuple(sizes)
        if any(int(s) != s or s < 1 for s in sizes):
            raise ValueError(f"hidden_layer_sizes must be positive integers, got {sizes}.")
        for name in ("n_epochs", "batch_size"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        for name in ("learning_rate", "prior_precision", "alpha", "damping", "radius"):
            value = getattr(self, name, 1.0)
            if not (np.isscalar(value) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}.")
        _likelihoods.check_class_weight(self.class_weight)
        return tuple(int(s) for s in sizes)

    def _partial_fit(self, X, y, classes, sample_weight, infer_classes=False):
        hidden = self._check_params()
        first = not hasattr(self, "classes_")
        if first and classes is None and not infer_classes:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        X, y = validate_data(self, X, y, reset=first, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        X = _to_float32(X)
        if infer_classes:
            classes = unique_labels(y)
        if first and classes is not None:
            check_classification_targets(np.asarray(classes))
        _check_partial_fit_first_call(self, classes)
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise ValueError(
                f"y contains labels not in classes: {unknown.tolist()}; "
                f"classes are {self.classes_.tolist()}."
            )
        y = np.searchsorted(self.classes_, y).astype(np.int32)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float32, ensure_non_negative=True
        )
        if first:
            self._initialize(X.shape[1], hidden)
        start = time.perf_counter()
        updates = self._learn_task(X, y, sample_weight, self._task_key())
        updates["n_tasks_seen_"] = self.n_tasks_seen_ + 1
        for name, value in updates.items():
            setattr(self, name, value)
        if self.verbose:
            print(
                f"[{type(self).__name__}] task {self.n_tasks_seen_}: {len(y)} samples, "
                f"final epoch loss {self.loss_curve_[-1]:.4g}, "
                f"{time.perf_counter() - start:.2f} s"
            )

    def _initialize(self, n_features, hidden):
        n_classes = len(self.classes_)
        likelihood = _likelihoods.BERNOULLI if n_classes == 2 else _likelihoods.CATEGORICAL
        self.likelihood_ = likelihood
        self.network_ = MLP(n_features, hidden, 1 if n_classes == 2 else n_classes)
        self._seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        self.n_tasks_seen_ = 0
        root = jax.random.PRNGKey(self._seed)
        self.theta_ = np.asarray(self.network_.init(jax.random.fold_in(root, 2**31 - 1)))
        state = self._make_consolidation().init(
            self._model(), float(self.prior_precision), self.theta_,
            jax.random.fold_in(root, 2**31 - 2),
        )
        self.consolidation_ = jax.tree.map(np.asarray, state)

    def _task_key(self):
        """A fresh key per task, reproducible from random_state alone."""
        return jax.random.fold_in(jax.random.PRNGKey(self._seed), self.n_tasks_seen_)

    def _likelihood_weights(self, y, sample_weight):
        """Per-sample likelihood weights: sample weight × class weight.

        ``class_weight="balanced"`` counts the classes of the samples given.
        """
        return _likelihoods.likelihood_weights(self.class_weight, self.classes_, y, sample_weight)

    def _logits(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return apply_numpy(self.network_, self.theta_, X)


def _to_float32(X):
    """Cast to float32 (JAX's default), rejecting values that overflow."""
    with np.errstate(over="ignore"):
        X32 = np.asarray(X, dtype=np.float32)
    if not np.all(np.isfinite(X32)):
        raise ValueError(
            "Input X contains values too large for float32 (|x| > 3.4e38); "
            "scale the features."
        )
    return X32


def _check_finite_state(consolidation, n_tasks_seen):
    leaves = jax.tree_util.tree_leaves(consolidation)
    if not all(np.all(np.isfinite(np.asarray(leaf))) for leaf in leaves):
        raise ValueError(
            f"Consolidating task {n_tasks_seen + 1} gave non-finite values; "
            "the estimator is unchanged."
        )


def fill_doc(cls):
    """Insert the shared parameter docs where a docstring says ``{common}``."""
    cls.__doc__ = cls.__doc__.replace("{common}", _COMMON_PARAMS_DOC.strip("\n"))
    return cls
