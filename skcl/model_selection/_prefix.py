"""A pipeline's leading steps, fitted and run once for every candidate.

A pipeline of feature extractors and a classifier is searched without
re-running the extractors: when the grid only sets the final step, every
candidate would meet the same leading steps, so the sequences go through
them once, and the candidates are clones of the final step (as a one-step
pipeline) learning the features. The best one is then put back behind the
same leading steps.

Leading steps that come unfitted (a ``StandardScaler()``) are fitted here,
once, on the first training task, exactly as the first ``partial_fit`` of
every candidate would fit them (:meth:`skcl.pipeline.Pipeline.partial_fit`):
since the candidates differ only in the final step, they would all fit the
same steps on the same task, so one fit serves them all.
"""

from sklearn.base import clone

from ..pipeline import Pipeline, _is_fitted


def _addresses_final_step(name, final):
    return name == final or name.startswith(final + "__")


def _uses_fitted_prefix(estimator, candidates):
    """Whether the leading steps can transform the sequences once for all.

    True for an skcl Pipeline whose grid sets only its final step: every
    candidate then shares the leading steps (fitted, or fitted on the first
    training task), and since ``partial_fit`` only transforms with them
    after that, their output is the same for all. Not when
    ``partial_fit_transformers`` lets a leading step update on every task:
    its output then depends on the tasks learned so far.
    """
    if not isinstance(estimator, Pipeline):
        return False
    if estimator.partial_fit_transformers and any(
        hasattr(step, "partial_fit") for _, step in estimator.leading_steps()
    ):
        return False
    final = estimator.steps[-1][0]
    return all(_addresses_final_step(name, final) for params in candidates for name in params)


def _fit_leading_steps(pipeline, first_task):
    """``pipeline`` with its leading steps as the first ``partial_fit`` leaves them.

    Fitted steps are kept (the same objects); an unfitted one is replaced
    by a clone fitted with ``fit_transform`` on what the steps before it
    make of the first task, as :meth:`skcl.pipeline.Pipeline.partial_fit`
    does. The user's pipeline and steps are not changed.

    Returns
    -------
    fitted : Pipeline
        A pipeline of the same type and parameters; its final step is the
        user's, untouched (the candidates clone their own).
    X_first : array-like
        The first task's inputs through the leading steps: the
        ``fit_transform`` output where a step was fitted, as the first
        ``partial_fit`` feeds the final step.
    """
    X, y = first_task
    steps = []
    for name, step in pipeline.steps[:-1]:
        if step is None or step == "passthrough":
            pass
        elif _is_fitted(step):
            X = step.transform(X)
        else:
            step = clone(step)
            X = step.fit_transform(X, y)
        steps.append((name, step))
    params = pipeline.get_params(deep=False)
    params["steps"] = steps + [pipeline.steps[-1]]
    return type(pipeline)(**params), X


def _final_step_learner(pipeline):
    """What the candidates clone on the fast path: the final step alone.

    A one-step pipeline rather than the bare step, so that the grid's
    ``<final step>__...`` names address it unchanged.
    """
    return Pipeline([pipeline.steps[-1]], verbose=pipeline.verbose)


def _transform_leading(pipeline, tasks):
    """``tasks`` with every ``X`` through the fitted leading steps."""
    return [(pipeline.transform_leading(X), y) for X, y in tasks]


def _transform_sequences(pipeline, train_tasks, validation_tasks):
    """Both sequences through the leading steps, once for all candidates.

    Leading steps that are not fitted are fitted on the first training
    task, as every candidate's first ``partial_fit`` would fit them.

    Returns
    -------
    leading : Pipeline
        ``pipeline`` with its leading steps fitted (the user's own objects
        where they already were).
    train_tasks, validation_tasks : lists of (X, y)
    """
    leading, X_first = _fit_leading_steps(pipeline, train_tasks[0])
    train_tasks = [(X_first, train_tasks[0][1])] + _transform_leading(leading, train_tasks[1:])
    validation_tasks = _transform_leading(leading, validation_tasks)
    return leading, train_tasks, validation_tasks


def _steps_fitted_here(pipeline, leading):
    """The names of the leading steps of ``leading`` that are not ``pipeline``'s own objects."""
    return [
        name for (name, own), (_, step) in zip(pipeline.steps, leading.steps[:-1])
        if own is not step
    ]


def _with_final_step(pipeline, final_step):
    """``pipeline`` with its leading steps (the same objects) and a new final step.

    ``final_step`` is the one-step pipeline a candidate trained.
    """
    params = pipeline.get_params(deep=False)
    params["steps"] = list(pipeline.steps[:-1]) + [final_step.steps[-1]]
    return type(pipeline)(**params)
