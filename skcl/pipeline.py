"""A pipeline that learns a task sequence: scikit-learn's, plus ``partial_fit``.

Continual learning on images usually runs a fixed feature extractor
(a CNN pre-trained elsewhere) in front of a classifier that learns one task
at a time. scikit-learn's :class:`~sklearn.pipeline.Pipeline` chains the
two, but it has no ``partial_fit``, so it cannot learn a task sequence.
:class:`Pipeline` adds one: the leading steps are frozen transformers that
only ``transform`` each task (fitted beforehand, or on the first task when
they come unfitted), and the final step learns the task with its own
``partial_fit``. Everything else is scikit-learn's Pipeline unchanged.

Two public methods give other modules what they need of the leading
steps without reaching into the pipeline: :meth:`Pipeline.leading_steps`
and :meth:`Pipeline.transform_leading` (a search transforms its task
sequences once with them, :mod:`skcl.model_selection`).

scikit-learn's private Pipeline API is used here and nowhere else in
skcl (``tests/test_pipeline.py`` checks it): the subclass walks its steps
as scikit-learn's own ``fit`` does, so that ``partial_fit`` skips the
same steps, prints the same lines and validates the same way. Walking
(``_iter``) and timing (``_log_message`` with ``_print_elapsed_time``) go
through the two adapters at the end of :class:`Pipeline`; the final step
(``_final_estimator``), the validation (``_validate_steps``,
``_fit_context``) and :func:`make_pipeline`'s names (``_name_estimators``)
are used as scikit-learn's Pipeline uses them. All are present in every
scikit-learn skcl supports (1.6 and later).
"""

import copy

import numpy as np
from sklearn import pipeline as _sk_pipeline
from sklearn.base import _fit_context, clone
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)
from sklearn.utils._user_interface import _print_elapsed_time
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._utils.advisory import warn_once

__all__ = ["Pipeline", "make_pipeline"]

# Transformers that learn one statistic per input feature: fitted on a first
# task that misses most classes, they scale every later class's features by
# that task's spreads (a feature constant there gets scale 1, one barely
# used gets a huge factor).
_PER_FEATURE_SCALERS = (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler,
                        QuantileTransformer, PowerTransformer)


def _is_fitted(estimator):
    """scikit-learn's test of fittedness ('passthrough' and None are)."""
    if estimator is None or estimator == "passthrough":
        return True
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


class Pipeline(_sk_pipeline.Pipeline):
    """A scikit-learn Pipeline whose final step learns task by task.

    Everything scikit-learn's :class:`~sklearn.pipeline.Pipeline` does
    (``fit``, ``predict``, ``get_params``/``set_params``, slicing,
    ``memory``, ``verbose``...) works unchanged; this class adds
    :meth:`partial_fit` for continual learning: the steps before the last
    one transform the task, then the final step learns it with its own
    ``partial_fit``. A leading step that is already fitted (a pre-trained
    feature extractor) is used as it is. One that is not (a
    ``StandardScaler()``) is fitted on the *first* task's data, by the
    first ``partial_fit``, and then frozen: later tasks only transform.

    Freezing is what keeps the old tasks: every stand-in for an old loss
    (AQC's quadratic, EWC's and SI's diagonals, NC's consolidator, a
    variational posterior, the exact family's sums) is a function of the
    classifier's parameters acting on the representation those tasks were
    learned in. A transformer that moves after a task changes what every
    parameter means, so the stand-ins would protect the wrong function.
    ``partial_fit_transformers=True`` lets leading steps that have their
    own ``partial_fit`` (``StandardScaler``, ``IncrementalPCA``) update on
    every task, for those who accept that drift.

    ``fit`` is scikit-learn's: it fits *every* step on ``(X, y)``,
    re-fitting a pre-trained extractor on that data unless it is wrapped
    in :class:`~sklearn.frozen.FrozenEstimator`, whose ``fit`` does
    nothing. The wrapper also keeps :func:`~sklearn.base.clone` (used by
    every search) from resetting the fitted step.

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        The named steps, in order. The leading ones are transformers (or
        'passthrough' / None); the last one is the learner, usually an
        skcl classifier.
    transform_input : list of str, default=None
        As in scikit-learn (metadata routing only; ``fit`` alone uses it).
    memory : str or object with the joblib.Memory interface, default=None
        Caches the transformers fitted by ``fit``, as in scikit-learn;
        ``partial_fit`` does not use it.
    verbose : bool, default=False
        Print the time each step takes in ``fit`` and ``partial_fit``.
    partial_fit_transformers : bool, default=False
        Update the leading steps that have a ``partial_fit`` on every task
        (their ``partial_fit``, then ``transform``), instead of freezing
        them after the first task. The inputs of old tasks then drift
        under the classifier's stand-ins for their losses.

    Attributes
    ----------
    named_steps : :class:`~sklearn.utils.Bunch`
        The steps by name.
    classes_ : ndarray of shape (n_classes,)
        The final step's classes.
    n_features_in_ : int
        The first step's number of input features.

    See Also
    --------
    make_pipeline : Build a Pipeline without naming the steps.
    skcl.model_selection.SequenceGridSearch : Searches the final step's
        hyperparameters, transforming the task sequences once with the
        fitted leading steps.

    Examples
    --------
    A scaler fitted beforehand stands in for a pre-trained feature
    extractor; the classifier then learns CI Split Iris one task at a
    time.

    >>> import numpy as np
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skcl import AQCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.metrics import final_average_accuracy
    >>> from skcl.pipeline import Pipeline
    >>> data = load_ci_split_iris()
    >>> scaler = StandardScaler().fit(np.vstack([X for X, _ in data.train]))
    >>> pipe = Pipeline([("features", scaler),
    ...                  ("clf", AQCClassifier(alpha=10, learning_rate=0.1, random_state=0))])
    >>> for X, y in data.train:          # X of shape (32, 4), one species
    ...     _ = pipe.partial_fit(X, y, classes=data.classes)
    >>> pipe.named_steps["clf"].n_tasks_seen_
    3
    >>> pipe.predict(data.test[0][0]).shape
    (10,)
    >>> final_average_accuracy(pipe, data.test) > 0.5
    True
    """

    def __init__(self, steps, *, transform_input=None, memory=None, verbose=False,
                 partial_fit_transformers=False):
        super().__init__(steps, transform_input=transform_input, memory=memory, verbose=verbose)
        self.partial_fit_transformers = partial_fit_transformers

    def _final_step_has_partial_fit(self):
        """Whether the final step has ``partial_fit`` (``available_if``'s check).

        Raises AttributeError when it has none, which ``available_if``
        turns into the pipeline having no ``partial_fit`` either. Reads
        scikit-learn's private ``Pipeline._final_estimator``, which maps a
        final ``None`` to 'passthrough' and an empty or not yet validated
        ``steps`` to an AttributeError or None, as for ``predict``.
        """
        getattr(self._final_estimator, "partial_fit")
        return True

    @available_if(_final_step_has_partial_fit)
    @_fit_context(
        # The steps are validated by their own methods.
        prefer_skip_nested_validation=False
    )
    def partial_fit(self, X, y, classes=None, **params):
        """Transform with the leading steps, then learn one task.

        On the first call, leading steps that are not fitted yet are
        fitted on this task (``fit_transform(X, y)``, on a clone that
        replaces the step once the task is learned); later calls only
        transform with them (with ``partial_fit_transformers=True``, steps
        that have a ``partial_fit`` are updated on every call). The final
        step learns the transformed task with its ``partial_fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The task's inputs, as the first step expects them.
        y : array-like of shape (n_samples,)
            The task's labels.
        classes : array-like of shape (n_classes,), default=None
            Every class of the sequence, passed to the final step's
            ``partial_fit`` (skcl classifiers require it on the first call).
        **params : dict
            Other keyword arguments of the final step's ``partial_fit``,
            e.g. ``sample_weight``; the leading steps take none.

        Returns
        -------
        self : Pipeline

        Raises
        ------
        sklearn.exceptions.NotFittedError
            When a leading step is not fitted but the final step already
            learned a task: fitting it now would move the inputs of every
            task learned before.
        ValueError
            When a step rejects the task. Nothing is changed then: the
            leading steps fitted or updated for this task are committed
            only once the final step has learned it.
        """
        self._validate_steps()
        first = not _is_fitted(self._final_estimator)
        if not first:
            self._check_leading_steps_fitted()
        Xt, updated = X, {}
        for idx, _, step in self._indexed_leading_steps():
            with self._step_timer(idx):
                if self.partial_fit_transformers and hasattr(step, "partial_fit"):
                    # A copy learns, so that a rejected task leaves the step as it was.
                    updated[idx] = copy.deepcopy(step).partial_fit(Xt, y)
                    Xt = updated[idx].transform(Xt)
                elif first and not _is_fitted(step):
                    updated[idx] = clone(step)
                    Xt = updated[idx].fit_transform(Xt, y)
                    _warn_per_feature_fit(self, self.steps[idx][0], step, y, classes)
                else:
                    Xt = step.transform(Xt)
        with self._step_timer(len(self.steps) - 1):
            self._final_estimator.partial_fit(Xt, y, classes=classes, **params)
        for idx, step in updated.items():
            self.steps[idx] = (self.steps[idx][0], step)
        return self

    def _final_step_forgets(self):
        """Whether the final step can forget (``available_if``'s check): the exact family."""
        getattr(self._final_estimator, "forget")
        return True

    @available_if(_final_step_forgets)
    def forget(self, X, y, sample_weight=None, *, task=None):
        """Forget rows learned before: the leading steps transform them, the final step forgets.

        The result is the pipeline a fit on the remaining rows gives,
        since the leading steps are frozen (see the final step's
        ``forget``; with ``partial_fit_transformers=True`` they are not,
        and the steps are left as they are).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows, as the first step expects them.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        task : int, default=None
            The call that learned them (the final step's ``forget``).

        Returns
        -------
        self : Pipeline
        """
        self._check_leading_steps_fitted()
        self._final_estimator.forget(self.transform_leading(X), y, sample_weight, task=task)
        return self

    @available_if(_final_step_forgets)
    def forget_classes(self, classes):
        """The final step's ``forget_classes``: no rows, nothing to transform.

        Returns
        -------
        self : Pipeline
        """
        self._final_estimator.forget_classes(classes)
        return self

    @available_if(_final_step_forgets)
    def forget_task(self, task):
        """The final step's ``forget_task``: no rows, nothing to transform.

        Returns
        -------
        self : Pipeline
        """
        self._final_estimator.forget_task(task)
        return self

    def leading_steps(self):
        """The steps before the final one, as ``partial_fit`` runs them.

        'passthrough' and None steps are left out, as :meth:`partial_fit`
        and scikit-learn's ``fit`` skip them.

        Returns
        -------
        steps : list of (str, estimator) tuples
            The steps themselves (not copies), in order.

        Examples
        --------
        >>> from sklearn.preprocessing import StandardScaler
        >>> from skcl import AQCClassifier
        >>> from skcl.pipeline import make_pipeline
        >>> pipe = make_pipeline(StandardScaler(), "passthrough", AQCClassifier())
        >>> [name for name, _ in pipe.leading_steps()]
        ['standardscaler']
        """
        return [(name, step) for _, name, step in self._indexed_leading_steps()]

    def transform_leading(self, X):
        """``X`` through the leading steps: what the final step learns from.

        Each leading step's ``transform``, in order; the final step is not
        used, and nothing is fitted or changed. With ``verbose``, each
        step's time is printed as in :meth:`partial_fit`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs as the first step expects them.

        Returns
        -------
        Xt : array-like
            The inputs of the final step.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            From a leading step that is not fitted yet.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.preprocessing import StandardScaler
        >>> from skcl import AQCClassifier
        >>> from skcl.pipeline import make_pipeline
        >>> X = np.array([[0.0, 1.0], [2.0, 3.0]])
        >>> pipe = make_pipeline(StandardScaler().fit(X), AQCClassifier())
        >>> pipe.transform_leading(X).tolist()
        [[-1.0, -1.0], [1.0, 1.0]]
        """
        for idx, _, step in self._indexed_leading_steps():
            with self._step_timer(idx):
                X = step.transform(X)
        return X

    def _unfitted_leading_step(self):
        """``(index, name, step)`` of the first unfitted leading step, or None."""
        for idx, name, step in self._indexed_leading_steps():
            if not _is_fitted(step):
                return idx, name, step
        return None

    def _check_leading_steps_fitted(self):
        """Raise a NotFittedError naming the first unfitted leading step."""
        unfitted = self._unfitted_leading_step()
        if unfitted is not None:
            idx, name, step = unfitted
            raise NotFittedError(
                f"Step {name!r} ({type(step).__name__}, step {idx + 1} of "
                f"{len(self.steps)}) of the pipeline is not fitted, but the final step "
                f"has already learned a task: partial_fit fits unfitted leading steps "
                f"only on the first task, since fitting one now would move the inputs "
                f"of every task learned before. Put the step fitted on the first task "
                f"back, or fit or pre-train it first (e.g. "
                f"PretrainedFeatureExtractor(...).fit(X_pretrain, y_pretrain), or load "
                f"its weights). Wrap it in sklearn.frozen.FrozenEstimator to keep "
                f"Pipeline.fit from refitting it and clone (e.g. in a search) from "
                f"resetting it."
            )

    # ------------------------------------ adapters of scikit-learn's privates

    def _indexed_leading_steps(self):
        """``(index, name, step)`` of each leading step, 'passthrough' and None left out.

        Wraps scikit-learn's private ``Pipeline._iter(with_final=False)``:
        it is how scikit-learn's ``fit`` walks the steps, so ``partial_fit``
        skips exactly the steps ``fit`` skips.
        """
        return list(self._iter(with_final=False))

    def _step_timer(self, idx):
        """scikit-learn's timer of step ``idx``, printed when ``verbose``.

        Wraps the private ``sklearn.utils._user_interface._print_elapsed_time``
        and ``Pipeline._log_message``, so that ``partial_fit`` prints the
        lines ``fit`` prints ("(step 1 of 2) Processing ...").
        """
        return _print_elapsed_time("Pipeline", self._log_message(idx))


def _warn_per_feature_fit(pipeline, name, step, y, classes):
    """Warn when a per-feature scaler is fitted, then frozen, on a task missing classes.

    Once per pipeline and step (:func:`warn_once`).
    """
    if not isinstance(step, _PER_FEATURE_SCALERS) or classes is None or hasattr(y, "dask"):
        return
    seen, declared = len(np.unique(np.asarray(y))), len(np.unique(np.asarray(classes)))
    if seen >= declared:
        return
    warn_once(
        pipeline, f"per-feature step {name!r} frozen on a task missing classes",
        f"Step {name!r} ({type(step).__name__}) is fitted on the first task alone, which "
        f"holds {seen} of the {declared} declared classes, and then frozen: its "
        f"per-feature statistics are those of these {seen} classes, so the features of "
        f"the later classes are scaled by spreads they do not have (on CI Split MNIST "
        f"pixels this costs about 6 points of final average accuracy). Fit it beforehand "
        f"on rows of every class and pass it fitted, scale by one scalar instead (e.g. "
        f"RandomFeatures(scale='auto') reads one centre and one spread from the first "
        f"task), or drop it.",
        UserWarning,
    )


def make_pipeline(*steps, memory=None, transform_input=None, verbose=False,
                  partial_fit_transformers=False):
    """Build a :class:`Pipeline` named after its steps' classes.

    The shorthand of scikit-learn's :func:`~sklearn.pipeline.make_pipeline`,
    returning an skcl :class:`Pipeline` (which has ``partial_fit``): each
    step is named after its class in lower case, with ``-1``, ``-2``...
    appended when a class repeats.

    Parameters
    ----------
    *steps : estimators
        The leading transformers (fitted beforehand, or fitted by the first
        ``partial_fit``) and the final learner.
    memory : str or object with the joblib.Memory interface, default=None
        Caches the transformers fitted by ``fit``.
    transform_input : list of str, default=None
        As in scikit-learn (metadata routing only).
    verbose : bool, default=False
        Print the time each step takes.
    partial_fit_transformers : bool, default=False
        See :class:`Pipeline`.

    Returns
    -------
    Pipeline

    Examples
    --------
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skcl import AQCClassifier
    >>> from skcl.pipeline import make_pipeline
    >>> make_pipeline(StandardScaler(), AQCClassifier()).steps[-1][0]
    'aqcclassifier'
    """
    return Pipeline(
        _sk_pipeline._name_estimators(steps),
        transform_input=transform_input,
        memory=memory,
        verbose=verbose,
        partial_fit_transformers=partial_fit_transformers,
    )
