"""A pipeline's fitted leading steps, run once for every candidate.

A pipeline of fitted feature extractors and a classifier is searched
without re-running the extractors: when the grid only sets the final step,
the sequences go through the leading steps once, and the candidates are
clones of the final step (as a one-step pipeline) learning the features.
The best one is then put back behind the same leading steps.
"""

from ..pipeline import Pipeline


def _addresses_final_step(name, final):
    return name == final or name.startswith(final + "__")


def _uses_fitted_prefix(estimator, candidates):
    """Whether the leading steps can transform the sequences once for all.

    True for an skcl Pipeline whose grid sets only its final step: every
    candidate then shares the leading steps, and since ``partial_fit``
    only transforms with them, their output is the same for all.

    Raises
    ------
    NotFittedError
        When the grid sets only the final step but a leading step is not
        fitted: no candidate could learn anything.
    """
    if not isinstance(estimator, Pipeline):
        return False
    final = estimator.steps[-1][0]
    if not all(_addresses_final_step(name, final) for params in candidates for name in params):
        return False
    estimator._check_leading_steps_fitted()
    return True


def _final_step_learner(pipeline):
    """What the candidates clone on the fast path: the final step alone.

    A one-step pipeline rather than the bare step, so that the grid's
    ``<final step>__...`` names address it unchanged.
    """
    return Pipeline([pipeline.steps[-1]], verbose=pipeline.verbose)


def _transform_leading(pipeline, tasks):
    """``tasks`` with every ``X`` through the fitted leading steps."""
    return [(pipeline._transform_leading(X), y) for X, y in tasks]


def _with_final_step(pipeline, final_step):
    """``pipeline`` with its leading steps (the same objects) and a new final step.

    ``final_step`` is the one-step pipeline a candidate trained.
    """
    params = pipeline.get_params(deep=False)
    params["steps"] = list(pipeline.steps[:-1]) + [final_step.steps[-1]]
    return type(pipeline)(**params)
