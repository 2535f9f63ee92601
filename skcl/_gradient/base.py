"""The gradient-trained classifiers: a network, a consolidation, a task loop.

On top of the surface every skcl classifier shares (:mod:`skcl._sequential`:
validation, classes, the transaction), the base class here does what all
gradient-trained methods share: the network and its parameters θ, class
weights, keys, the loss recursion itself (``_learn_task``: minimise the
stand-in for L_{t-1} plus the task's NLL, then fold the task in) and
prediction. A method is its ``__init__`` plus the choice of a
consolidation (``_make_consolidation``): the method object, rebuilt from
the hyperparameters whenever needed, whose *state*, the stand-in for
L_{t-1}, is the fitted ``consolidation_`` (see
:mod:`skcl._gradient.consolidation`). Class growth of the network lives in
:mod:`skcl._gradient.growth`.
"""

import time

import jax
import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._sequential import BaseSequentialClassifier
from .._utils.advisory import warn_once
from .._utils.validation import (
    StrOptions,
    layer_sizes,
    positive_int,
    positive_real,
    store_parameters,
    validate_params,
)
from ..exceptions import SingleClassTaskWarning
from . import keys, likelihoods
from .compilation_cache import setup as setup_compilation_cache
from .consolidation import FinishedTask
from .deferred_folds import UNSET, PendingFoldMixin
from .divergence import check_trained
from .growth import grow_network
from .minibatches import n_minibatches
from .model import Model
from .networks import ACTIVATIONS, MLP, apply_numpy, check_same_hidden
from .reporting import epoch_callback, epoch_progress, report_task
from .training import SCHEDULES, minimize, minimize_epochwise

__all__ = ["GradientClassifier"]


class GradientClassifier(PendingFoldMixin, BaseSequentialClassifier):
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
    consolidation_ : pytree of ndarrays
        The consolidation's state after the last task: the stand-in for L_t.
    loss_curve_ : ndarray of shape (n_epochs,)
        Loss of each epoch of the last task (data term plus penalty).
    n_iter_ : int
        Epochs run on the last task.
    history_ : list of dict
        One entry per task: ``task`` (counted from 1), ``n_samples``,
        ``loss_curve`` (the loss of each epoch), ``train_time`` and
        ``consolidation_time`` (seconds: minimising the task's loss, and
        folding the task into the stand-in for the previous loss).
    """

    _parameter_constraints = {
        "hidden_layer_sizes": ["array-like", positive_int],
        "activation": [StrOptions(set(ACTIVATIONS))],
        "n_epochs": [positive_int],
        "batch_size": [positive_int],
        "learning_rate": [positive_real],
        "learning_rate_schedule": [StrOptions(set(SCHEDULES))],
        "prior_precision": [positive_real],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "grow_classes": ["boolean"],
        "callback": [callable, None],
        "scenario": [StrOptions({"class", "domain", "task"})],
    }

    def __init__(
        self,
        *,
        hidden_layer_sizes=(),
        activation="swish",
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        learning_rate_schedule="one_cycle",
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
        scenario="class",
    ):
        store_parameters(self, locals())

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
            be the same. With ``grow_classes=True`` it may be omitted on
            the first call too, and a later call may pass more classes (a
            superset of ``classes_``) or labels not seen yet.
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
            without ``classes`` (unless ``grow_classes``), ``classes`` that
            lack a class seen before, labels of another type than before,
            or when training diverges. The estimator
            is then left exactly as it was before the call.
        """
        return super().partial_fit(X, y, classes, sample_weight)

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
        if self.likelihood_ == likelihoods.BERNOULLI:
            return logits[:, 0]
        if len(self.classes_) == 2:  # a softmax over two grown classes
            return logits[:, 1] - logits[:, 0]
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
        return likelihoods.proba(self.likelihood_, logits)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, finite wherever it is.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        logits = self._logits(X)
        return likelihoods.log_proba(self.likelihood_, logits)

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

    # ------------------------------------------------------- for subclasses

    #: Whether a one-class task warns (:class:`SingleClassTaskWarning`):
    #: true for the methods whose stand-in measures the task's loss around
    #: its solution.
    _warns_on_single_class_task = False

    def _make_consolidation(self):
        """The method: a Consolidation built from the hyperparameters (its
        state is ``consolidation_``)."""
        raise NotImplementedError

    def _task_attributes(self, method, state, key):
        """Further fitted attributes of a finished task (default: none)."""
        return {}

    def _learn_task(self, X, y, sample_weight, key):
        """One step of the loss recursion, L_t = L_{t-1} + nll_t.

        Task t is learned against the consolidation's stand-in for
        L_{t-1}, then folded into it. ``y`` holds class indices into
        ``classes_``. Returns the fitted attributes to set (``UNSET``: to
        remove) and must not modify ``self``: the caller commits them only
        when the whole task succeeded. Inside :func:`deferred_folds` a
        fold that may wait is kept in ``_pending_fold_`` instead of
        ``consolidation_`` (:class:`~skcl._gradient.deferred_folds.PendingFoldMixin`).
        """
        method, model = self._make_consolidation(), self._model()
        state, X, y, sample_weight = method.prepare(self.consolidation_, X, y, sample_weight)
        train_key, fold_key = method.task_keys(key)
        tic = time.perf_counter()
        task, losses = self._train_task(model, method, state, X, y, sample_weight, train_key)
        train_time = time.perf_counter() - tic
        state, folded = self._fold(method, model, state, task, fold_key)
        times = {"train_time": train_time,
                 "consolidation_time": time.perf_counter() - tic - train_time}
        return {
            "theta_": np.asarray(method.point_estimate(state, task.end)),
            **folded,
            **self._task_record(losses, len(y), times),
            **self._task_attributes(method, state, key),
        }

    def _train_task(self, model, method, state, X, y, sample_weight, key):
        """Minimise the task's loss from the method's start; returns the
        :class:`~skcl._gradient.consolidation.FinishedTask` and the epoch losses."""
        w = self._likelihood_weights(y, sample_weight)
        start = method.start(state, self.theta_)
        params, losses, trace = self._minimize(model, method, state, start, X, y, w, key)
        task = FinishedTask(start, params, X, y, w, sample_weight, trace, int(self.batch_size))
        return task, losses

    def _task_record(self, losses, n_samples, times):
        """The fitted attributes that describe the task's training: its loss
        curve, epoch count and an entry of ``history_``."""
        record = {"task": self.n_tasks_seen_ + 1, "n_samples": n_samples,
                  "loss_curve": losses, **times}
        return {
            "loss_curve_": losses,
            "n_iter_": len(losses),
            "history_": [*getattr(self, "history_", []), record],
        }

    # ------------------------------------------------------------ internals

    def _model(self):
        return Model(self.network_, self.likelihood_)

    def _minimize(self, model, method, state, start_params, X, y, w, key):
        """Run the jitted training loop and reject a diverged result."""
        trained = self._train(model, method, state, start_params, X, y, w, key)
        params, losses = np.asarray(trained.params), np.asarray(trained.epoch_losses)
        check_trained(params, losses, float(trained.start_loss), len(y),
                      task=self.n_tasks_seen_ + 1, advice=self._divergence_advice())
        return params, losses, trained.trace

    def _train(self, model, method, state, start_params, X, y, w, key):
        """One task's training loop: compiled whole, or epoch by epoch for the callback.

        Progress after each epoch (:func:`~skcl._gradient.reporting.epoch_progress`)
        runs the whole loop's program one epoch at a time: the same result.
        """
        args = (model, method, state, start_params, X, y, w, key, float(self.learning_rate))
        kwargs = dict(n_epochs=int(self.n_epochs), batch_size=int(self.batch_size),
                      schedule=self.learning_rate_schedule)
        task = self.n_tasks_seen_ + 1
        n_batches = n_minibatches(len(y), min(int(self.batch_size), len(y)))
        progress = epoch_progress(self, task, len(y), n_batches)
        if self.callback is None:
            return minimize(*args, **kwargs, on_epoch=progress)
        on_epoch = epoch_callback(self, task=task, progress=progress)
        return minimize_epochwise(*args, **kwargs, on_epoch=on_epoch)

    def _divergence_advice(self):
        """What a diverged task's error suggests: smaller steps, or scaled features."""
        smaller = "learning_rate or alpha" if "alpha" in self.get_params() else "learning_rate"
        return f"The estimator is unchanged; try a smaller {smaller}, or scale the features."

    def _check_params(self):
        """Validate every hyperparameter; return the hidden layers' sizes."""
        validate_params(self)
        likelihoods.check_class_weight(self.class_weight)
        if self.scenario == "task" and self.grow_classes:
            raise ValueError(
                "scenario='task' masks the outputs of the classes outside each task, a "
                "fixed set of outputs: it cannot be combined with grow_classes=True. Pass "
                "every class on the first call instead."
            )
        return layer_sizes(self.hidden_layer_sizes, "hidden_layer_sizes")

    def _partial_fit(self, X, y, classes, sample_weight, infer_classes=False):
        """One task, inside ``partial_fit``'s transaction: every step may raise."""
        # JAX's on-disk cache, switched on before this estimator compiles anything.
        setup_compilation_cache()
        hidden = self._check_params()
        X, y, sample_weight, first, grown = self._validate_task(
            X, y, classes, sample_weight, infer_classes=infer_classes,
            sample_weight_dtype=np.float32,
        )
        X = _to_float32(X)
        self._prepare_network(X.shape[1], hidden, first, grown)
        self._warn_if_single_class(y)
        y = np.searchsorted(self.classes_, y).astype(np.int32)
        if self.scenario == "task":
            y = self._task_incremental(y)
        self._commit(self._learn_task(X, y, sample_weight, self._task_key()))
        report_task(self)

    def _task_incremental(self, y):
        """The task's class indices with the mask of its classes (:func:`likelihoods.task_rows`).

        Only the classes of this task's ``y`` compete in its likelihood.
        """
        n_columns = 2 if self.likelihood_ == likelihoods.BERNOULLI else len(self.classes_)
        return likelihoods.task_rows(y, np.unique(y), n_columns)

    def _prepare_network(self, n_features, hidden, first, grown):
        """The network for the task: a new one on the first task, else the one
        learned so far, its pending fold finished and its output grown by the
        new classes ``grown`` (None: none)."""
        if first:
            self._initialize(n_features, hidden)
            return
        check_same_hidden(self.network_, hidden, self.activation)
        # Inside partial_fit's transaction: a failure restores the pending fold.
        self._complete_fold()
        if grown is not None:
            self._grow(grown)

    def _warn_if_single_class(self, y):
        """:class:`~skcl.exceptions.SingleClassTaskWarning` for a one-class task.

        Once per estimator, through the warnings filters (:func:`warn_once`).
        """
        if not (self._warns_on_single_class_task and np.unique(y).size == 1):
            return
        warn_once(
            self, "single-class task",
            f"{type(self).__name__}: a task with a single class has a flat loss at its "
            "solution, so the stand-in for it keeps almost nothing beside the prior and "
            "the next task will overwrite it unless the penalty's weight λ is large. "
            "Choose λ on a validation task sequence "
            "(skcl.model_selection.SequenceGridSearch), or use "
            "skcl.GaussianDiscriminantClassifier or skcl.LeastSquaresClassifier, which "
            "keep every task exactly. (Said once per estimator.)",
            SingleClassTaskWarning,
        )

    def _commit(self, updates):
        """Set the fitted attributes of a learned task (``UNSET``: remove one)."""
        updates["n_tasks_seen_"] = self.n_tasks_seen_ + 1
        for name, value in updates.items():
            if value is UNSET:
                vars(self).pop(name, None)
            else:
                setattr(self, name, value)

    def _grow(self, classes):
        """Give the output layer a column for each new class of ``classes``.

        Applies :func:`skcl._gradient.growth.grow_network` to the network, θ
        and the consolidation (inside the ``partial_fit`` transaction).
        """
        if self.likelihood_ == likelihoods.BERNOULLI:
            raise ValueError(
                f"{type(self).__name__} learned its first task with two classes and "
                "grow_classes=False, i.e. with one sigmoid output, which cannot gain "
                f"classes {np.setdiff1d(classes, self.classes_).tolist()}. Set "
                "grow_classes=True before the first task (the output is then a "
                "softmax), or pass every class on the first call."
            )
        network, theta, growth = grow_network(
            self.network_, self.likelihood_, self.theta_, self.classes_, classes,
            unseen=self._unseen_output, prior_precision=float(self.prior_precision),
            init_key=keys.init_key(self._seed),
        )
        state = self._make_consolidation().grow(
            self.consolidation_, growth, keys.growth_key(self._seed, self.n_tasks_seen_)
        )
        self.consolidation_ = jax.tree.map(np.asarray, state)
        self.network_, self.classes_, self.theta_ = network, classes, theta

    @property
    def _unseen_output(self):
        """Whether the network's last output stands for the unseen classes."""
        return int(getattr(self, "unseen_output_", False))

    def _initialize(self, n_features, hidden):
        n_classes = len(self.classes_)
        if self.grow_classes:
            # Always a softmax, plus the unseen classes' output: a task
            # learns its classes against it (one class alone is learnable),
            # and the first new class inherits it.
            self.unseen_output_ = True
            self.likelihood_ = likelihoods.CATEGORICAL
            self.network_ = MLP(n_features, hidden, n_classes + 1, self.activation)
        else:
            likelihood = likelihoods.BERNOULLI if n_classes == 2 else likelihoods.CATEGORICAL
            self.likelihood_ = likelihood
            self.network_ = MLP(n_features, hidden, 1 if n_classes == 2 else n_classes,
                                self.activation)
        self._seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        self.n_tasks_seen_ = 0
        self.theta_ = np.asarray(self.network_.init(keys.init_key(self._seed)))
        state = self._make_consolidation().init(
            self._model(), float(self.prior_precision), self.theta_,
            keys.consolidation_init_key(self._seed),
        )
        self.consolidation_ = jax.tree.map(np.asarray, state)

    def _task_key(self):
        """A fresh key per task, reproducible from random_state alone."""
        return keys.task_key(self._seed, self.n_tasks_seen_)

    def _likelihood_weights(self, y, sample_weight):
        """Per-sample likelihood weights: sample weight × class weight.

        ``class_weight="balanced"`` counts the classes of the samples given.
        """
        labels = y if y.ndim == 1 else y[:, 0]  # a task-incremental y: index, then mask
        return likelihoods.likelihood_weights(self.class_weight, self.classes_, labels,
                                              sample_weight)

    def _logits(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=self._input_dtypes)
        return self._class_logits(self.theta_, X)

    def _class_logits(self, theta, X):
        """The network's logits of the known classes (without the unseen output).

        Dropping the unseen classes' logit renormalises the softmax over
        the classes seen so far.
        """
        logits = apply_numpy(self.network_, theta, X)
        return logits[:, : logits.shape[1] - self._unseen_output]


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

