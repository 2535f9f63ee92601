"""The candidates of a search, and every check of them that needs no training.

A candidate is a dict of parameters. :func:`_grid_candidates` lists every
point of a grid, :func:`_sampled_candidates` draws ``n_iter`` of them with
scikit-learn's ``ParameterSampler``. Both check the names and values before
anything is trained, so that a typo fails in a second, not after hours of
candidates; :func:`_check_candidates_can_learn` does the same for a
pipeline whose candidates, as clones, would lose a step the user fitted.
"""

import numbers
from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid, ParameterSampler

from .._sequential import check_hyperparameters
from ..pipeline import Pipeline, _is_fitted
from ._prefix import _addresses_final_step
from ._sequence import final_estimator


def _grid_candidates(estimator, param_grid):
    """Every point of ``param_grid``, checked against ``estimator``.

    Returns
    -------
    candidates : list of dict
        In ``ParameterGrid``'s order.
    """
    grids = _check_grids(estimator, param_grid, "param_grid", sampled=False)
    return _check_candidates(estimator, list(ParameterGrid(grids)))


def _sampled_candidates(estimator, param_distributions, n_iter, random_state):
    """``n_iter`` candidates drawn from ``param_distributions``, checked.

    Returns
    -------
    candidates : list of dict
        In ``ParameterSampler``'s order (fewer than ``n_iter`` when the
        lists hold fewer combinations).
    """
    if not isinstance(n_iter, numbers.Integral) or isinstance(n_iter, bool) or n_iter < 1:
        raise ValueError(f"n_iter must be a positive integer, got {n_iter!r}.")
    grids = _check_grids(estimator, param_distributions, "param_distributions", sampled=True)
    sampler = ParameterSampler(grids, n_iter, random_state=random_state)
    return _check_candidates(estimator, list(sampler))


def _check_grids(estimator, param_grid, what, *, sampled):
    """Validate a grid (or distributions) against the estimator; return the list of dicts.

    Unknown names and empty value lists raise here, before anything is
    trained. ``sampled`` also accepts distributions (objects with ``rvs``).
    """
    if isinstance(param_grid, Mapping):
        grids = [param_grid]
    elif isinstance(param_grid, Sequence) and not isinstance(param_grid, str):
        grids = list(param_grid)
        if not all(isinstance(grid, Mapping) for grid in grids):
            raise TypeError(f"{what} must be a dict or a list of dicts.")
    else:
        raise TypeError(
            f"{what} must be a dict or a list of dicts, got {type(param_grid).__name__}."
        )
    if not grids:
        raise ValueError(f"{what} is an empty list: there is no candidate to try.")
    valid = estimator.get_params(deep=True)
    kinds = "lists or arrays of candidate values" + (
        " or distributions with an rvs method" if sampled else ""
    )
    for grid in grids:
        for name, values in grid.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} in {what} for estimator "
                    f"{type(estimator).__name__}. Valid parameters are: {sorted(valid)}."
                )
            if sampled and hasattr(values, "rvs"):
                continue
            if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
                raise TypeError(f"{what} values must be {kinds}; {name!r} maps to {values!r}.")
            if len(values) == 0:
                raise ValueError(f"{what} lists no value for {name!r}: the grid is empty.")
    return grids


def _check_candidates(estimator, candidates):
    """Check every candidate's values with the estimator's own parameter checks."""
    for params in candidates:
        candidate = clone(estimator).set_params(**params)
        try:
            check_hyperparameters(final_estimator(candidate))
        except ValueError as exc:
            raise ValueError(f"Invalid candidate {params}: {exc}") from exc
    return candidates


def _check_candidates_can_learn(learner, candidates):
    """Build every candidate as it will be trained; fail now if clone would undo a fit.

    A candidate is ``clone(learner).set_params(**params)``, and clone
    resets a fitted step that is not frozen. A leading step the user left
    unfitted is fine: the candidate's first ``partial_fit`` fits it on the
    first task, as a ``partial_fit`` loop does (and so is an unfitted step
    the grid swaps in). A step the user *fitted* (a pre-trained extractor)
    that the candidate would meet reset is not: the candidate would
    silently refit it on the first task instead.

    Raises
    ------
    NotFittedError
        Naming the candidate, the step that clone would reset, and why.
    """
    if not isinstance(learner, Pipeline):
        return
    final = learner.steps[-1][0]
    for params in candidates:
        candidate, original, address = clone(learner).set_params(**params), learner, ""
        while isinstance(candidate, Pipeline) and isinstance(original, Pipeline):
            own_steps = dict(original.steps)
            for name, step in candidate.steps[:-1]:
                own = own_steps.get(name)
                swapped = address + name in params
                if (not swapped and own not in (None, "passthrough") and _is_fitted(own)
                        and not _is_fitted(step)):
                    raise NotFittedError(
                        _cannot_learn_message(params, final, name, step, bool(address))
                    )
            # A pipeline nested as the final step is cloned with the candidate.
            address += candidate.steps[-1][0] + "__"
            candidate, original = candidate.steps[-1][1], original.steps[-1][1]


def _cannot_learn_message(params, final, name, step, nested):
    """Why the candidate ``params`` would meet the user's fitted step ``name`` reset."""
    if nested:
        why = (
            f"every candidate is a clone of the final step {final!r}, and "
            f"clone resets the fitted steps of a pipeline nested in it unless "
            f"they are wrapped in sklearn.frozen.FrozenEstimator."
        )
    else:  # the one-step learner of the fast path has no leading step
        leading = sorted(n for n in params if not _addresses_final_step(n, final))
        why = (
            f"the grid sets {leading}, outside the final step {final!r}, so "
            f"every candidate is a clone of the whole pipeline, and clone "
            f"resets every fitted step not wrapped in "
            f"sklearn.frozen.FrozenEstimator: the candidate would refit your "
            f"fitted {name!r} on the first task. Wrap the fitted step in "
            f"FrozenEstimator to keep it, leave it unfitted to have every "
            f"candidate fit it on the first training task, or search "
            f"'{final}__...' parameters alone, which uses your fitted steps "
            f"as they are."
        )
    where = f"the pipeline nested in {final!r}" if nested else "the pipeline"
    return (
        f"Candidate {params} would not use your fitted step {name!r} "
        f"({type(step).__name__}) of {where}: {why}"
    )

