"""A pipeline that learns a task sequence: scikit-learn's, plus ``partial_fit``.

Continual learning on images usually runs a fixed feature extractor
(a CNN pre-trained elsewhere) in front of a classifier that learns one task
at a time. scikit-learn's :class:`~sklearn.pipeline.Pipeline` chains the
two, but it has no ``partial_fit``, so it cannot learn a task sequence.
:class:`Pipeline` adds one: the leading steps are frozen, already fitted
transformers that only ``transform`` each task, and the final step learns
the task with its own ``partial_fit``. Everything else is scikit-learn's
Pipeline unchanged.
"""

from sklearn import pipeline as _sk_pipeline
from sklearn.base import _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils._user_interface import _print_elapsed_time
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

__all__ = ["Pipeline", "make_pipeline"]


def _final_step_has_partial_fit(pipeline):
    # Raises AttributeError when the final step has no partial_fit, which
    # available_if turns into the pipeline having no partial_fit either.
    getattr(pipeline._final_estimator, "partial_fit")
    return True


class Pipeline(_sk_pipeline.Pipeline):
    """A scikit-learn Pipeline whose final step learns task by task.

    Everything scikit-learn's :class:`~sklearn.pipeline.Pipeline` does
    (``fit``, ``predict``, ``get_params``/``set_params``, slicing,
    ``memory``, ``verbose``...) works unchanged; this class adds
    :meth:`partial_fit` for continual learning. The steps before the last
    one must already be fitted (for instance a pre-trained feature
    extractor): ``partial_fit`` only transforms with them and never fits
    them, then learns the task with the final step's ``partial_fit``.

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
        ``partial_fit`` fits none, so it ignores it.
    verbose : bool, default=False
        Print the time each step takes in ``fit`` and ``partial_fit``.

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

    @available_if(_final_step_has_partial_fit)
    @_fit_context(
        # The steps are validated by their own methods.
        prefer_skip_nested_validation=False
    )
    def partial_fit(self, X, y, classes=None, **params):
        """Transform with the fitted leading steps, then learn one task.

        The leading steps are frozen: they only ``transform``, they are
        never fitted or partially fitted. The final step learns the
        transformed task with its ``partial_fit``.

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
            When a leading step is not fitted. Nothing is changed: the
            check runs before the final step is touched.
        """
        self._validate_steps()
        self._check_leading_steps_fitted()
        Xt = self._transform_leading(X)
        with _print_elapsed_time("Pipeline", self._log_message(len(self.steps) - 1)):
            self._final_estimator.partial_fit(Xt, y, classes=classes, **params)
        return self

    def _unfitted_leading_step(self):
        """``(index, name, step)`` of the first unfitted leading step, or None."""
        for idx, name, step in self._iter(with_final=False):
            try:
                check_is_fitted(step)
            except NotFittedError:
                return idx, name, step
        return None

    def _check_leading_steps_fitted(self):
        """Raise a NotFittedError naming the first unfitted leading step."""
        unfitted = self._unfitted_leading_step()
        if unfitted is not None:
            idx, name, step = unfitted
            raise NotFittedError(
                f"Step {name!r} ({type(step).__name__}, step {idx + 1} of "
                f"{len(self.steps)}) of the pipeline is not fitted. partial_fit only "
                f"transforms with the steps before the last one and never fits them: "
                f"fit or pre-train the step first (e.g. "
                f"PretrainedFeatureExtractor(...).fit(X_pretrain, y_pretrain), or load "
                f"its weights) and put the fitted step in the pipeline. Wrap it in "
                f"sklearn.frozen.FrozenEstimator to keep Pipeline.fit from refitting it "
                f"and clone (e.g. in a search) from resetting it."
            )

    def _transform_leading(self, X):
        """``X`` through every step but the last (already checked fitted)."""
        for idx, _, step in self._iter(with_final=False):
            with _print_elapsed_time("Pipeline", self._log_message(idx)):
                X = step.transform(X)
        return X


def make_pipeline(*steps, memory=None, transform_input=None, verbose=False):
    """Build a :class:`Pipeline` named after its steps' classes.

    The shorthand of scikit-learn's :func:`~sklearn.pipeline.make_pipeline`,
    returning an skcl :class:`Pipeline` (which has ``partial_fit``): each
    step is named after its class in lower case, with ``-1``, ``-2``...
    appended when a class repeats.

    Parameters
    ----------
    *steps : estimators
        The leading transformers (fitted, for ``partial_fit``) and the
        final learner.
    memory : str or object with the joblib.Memory interface, default=None
        Caches the transformers fitted by ``fit``.
    transform_input : list of str, default=None
        As in scikit-learn (metadata routing only).
    verbose : bool, default=False
        Print the time each step takes.

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
    )
