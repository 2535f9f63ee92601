"""Models learned apart, merged into the model of all their rows (:func:`merge_models`).

An exact classifier is a function of its sums (:mod:`.moments`), and sums
of disjoint rows add: the pairwise merge of Chan, Golub and LeVeque that
joins a task's chunks, and a Dask array's blocks (:func:`.dask_task.dask_task_moments`),
joins models fitted on separate shards (clients, processes, machines) into
the model one fit on the union gives, hyperparameters and components
included. Call t of the merged model holds call t of every model: shards
of one sequence of calls learned side by side.
"""

import copy
import functools

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from .base import ExactClassifier
from .moments import merge
from .per_class import combine

__all__ = ["MergeError", "merge_models"]

# Settings that change where the work is done or what is logged, not the model.
_IRRELEVANT = {"verbose", "backend"}


class MergeError(ValueError):
    """Models that cannot be merged into one; the message names the difference."""


def merge_models(models):
    """One exact model equal to a fit on the union of the models' rows.

    Each model (a :class:`~skcl.GaussianDiscriminantClassifier` or
    :class:`~skcl.LeastSquaresClassifier`, or a :class:`~skcl.pipeline.Pipeline`
    ending in one) learned its own rows; their sums add, so the merged
    model is the one a single learner given every row would be: call t of
    it holds the rows of call t of every model (for shards fitted with one
    ``fit`` or ``partial_fit`` each, the fit on all rows). Its
    ``classes_`` are the union of theirs, sorted; a class that some shard
    lacks is simply learned from the others.

    Pipelines merge when their leading steps are identical, fitted
    attributes included (the same random draws, the same fitted scale):
    fit the feature map once and give every learner that fitted step
    (or one whose fit reads no rows, e.g. ``RandomFeatures`` with a
    numeric ``scale`` and a fixed ``random_state``).

    Parameters
    ----------
    models : sequence of fitted exact classifiers or pipelines
        At least one; they are not changed.

    Returns
    -------
    model
        A new model of the first one's kind and settings; a pipeline's
        leading steps are copies of the first's.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        A model that has learned nothing.
    MergeError (a ValueError)
        Models of other kinds or settings, classes of label types that
        cannot be put in one order, different feature maps or input
        widths, held-out rules of different seeds, or decayed models of
        different numbers of calls; the message names which models and
        what differs.

    Examples
    --------
    Three shards of Wine learned apart merge into the model of one fit on
    all the rows:

    >>> import numpy as np
    >>> from sklearn.datasets import load_wine
    >>> from skcl import GaussianDiscriminantClassifier, merge_models
    >>> X, y = load_wine(return_X_y=True)
    >>> shards = [GaussianDiscriminantClassifier().fit(X[i::3], y[i::3]) for i in range(3)]
    >>> merged = merge_models(shards)
    >>> whole = GaussianDiscriminantClassifier().fit(X, y)
    >>> bool(np.allclose(merged.predict_proba(X), whole.predict_proba(X), rtol=1e-8))
    True
    """
    models = list(models)
    if not models:
        raise MergeError("merge_models needs at least one model")
    if all(hasattr(model, "steps") for model in models):
        return _merge_pipelines(models)
    for i, model in enumerate(models):
        if not isinstance(model, ExactClassifier) or not hasattr(model, "forget"):
            raise MergeError(f"model {i} is a {type(model).__name__}: only the exact "
                             f"classifiers (and pipelines ending in one) merge")
    return _merge_classifiers(models)


def _merge_pipelines(models):
    first = models[0]
    names = [name for name, _ in first.steps]
    for i, model in enumerate(models[1:], 1):
        if [name for name, _ in model.steps] != names:
            raise MergeError(f"pipelines 0 and {i} have different steps: {names} and "
                             f"{[name for name, _ in model.steps]}")
        for (name, a), (_, b) in zip(first.steps[:-1], model.steps[:-1]):
            difference = _difference(a, b)
            if difference:
                raise MergeError(
                    f"pipelines 0 and {i} have different feature maps: step {name!r} "
                    f"differs in {difference}. Fit the step once and give every learner "
                    f"that fitted step (see the user guide, 'Forgetting, merging, decay')")
    final = _merge_classifiers([model.steps[-1][1] for model in models])
    merged = copy.deepcopy(first)
    merged.steps[-1] = (names[-1], final)
    return merged


def _difference(a, b, path=""):
    """Where ``a`` and ``b`` differ (a fitted step's settings or state), or None."""
    if type(a) is not type(b):
        return f"{path or 'type'}: {type(a).__name__} and {type(b).__name__}"
    if isinstance(a, np.ndarray):
        same = a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
        return None if same else f"{path} (arrays)"
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(map(str, a.keys() ^ b.keys()))}"
        for key in a:
            found = _difference(a[key], b[key], f"{path}[{key!r}]" if path else str(key))
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path} (lengths {len(a)} and {len(b)})"
        for k, (x, y) in enumerate(zip(a, b)):
            found = _difference(x, y, f"{path}[{k}]")
            if found:
                return found
        return None
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return _difference(vars(a), vars(b), path)
    try:
        return None if bool(a == b) else f"{path}: {a!r} and {b!r}"
    except (TypeError, ValueError):
        return None if a is b else f"{path}: {a!r} and {b!r}"


def _merge_classifiers(models):
    first = models[0]
    for i, model in enumerate(models):
        if "moments_" not in vars(model):
            raise NotFittedError(f"model {i} ({type(model).__name__}) is not fitted: it has "
                                 f"nothing to merge")
        if type(model) is not type(first):
            raise MergeError(f"models 0 and {i} are of different kinds: "
                             f"{type(first).__name__} and {type(model).__name__}")
    params = first.get_params(deep=False)
    if params.get("covariance") == "per_domain":
        raise MergeError("covariance='per_domain' keeps each task's scatter, which merging "
                         "does not add up yet")
    for i, model in enumerate(models[1:], 1):
        other = model.get_params(deep=False)
        for name in sorted(params.keys() - _IRRELEVANT):
            if _difference(params[name], other[name]):
                raise MergeError(f"models 0 and {i} have different settings: {name}="
                                 f"{params[name]!r} and {name}={other[name]!r}")
        _check_compatible(first, model, i)
    classes = _aligned_classes(models)
    merged = clone(first)
    merged.classes_ = classes
    merged.n_features_in_ = first.n_features_in_
    if hasattr(first, "feature_names_in_"):
        merged.feature_names_in_ = first.feature_names_in_
    merged.moments_ = functools.reduce(merge, [model.moments_ for model in models])
    merged.heldout_moments_ = functools.reduce(merge, [m.heldout_moments_ for m in models])
    if hasattr(first, "class_scatters_"):  # the Gaussian: W_c per class, or None
        merged.class_scatters_ = _merged_class_scatters(
            [(m.moments_, m.class_scatters_) for m in models])
        merged.heldout_class_scatters_ = _merged_class_scatters(
            [(m.heldout_moments_, m.heldout_class_scatters_) for m in models])
    states = [model._merge_state() for model in models]
    longest = max(range(len(models)), key=lambda i: models[i].n_tasks_seen_)
    merged.n_tasks_seen_ = models[longest].n_tasks_seen_
    merged.backend_ = first.backend_
    merged.history_ = [_merged_record(t, [m.history_[t] for m in models if t < len(m.history_)])
                       for t in range(merged.n_tasks_seen_)]
    # Each model's forgotten rows (the components' test counts rows left).
    forgotten = sum(state["rows_forgotten"] for state in states)
    merged._take_merge_state({**states[longest], "rows_forgotten": forgotten})
    return merged


def _merged_class_scatters(pairs):
    """W_c of the union (:func:`.per_class.combine`, in the order the moments merge)."""
    moments, sums = pairs[0]
    if sums is None:
        return None
    for other, other_sums in pairs[1:]:
        sums = combine(moments, sums, other, other_sums)
        moments = merge(moments, other)
    return sums


def _check_compatible(first, model, i):
    """Refuse what equal settings do not rule out: inputs, held-out seeds, decayed calls."""
    if model.n_features_in_ != first.n_features_in_:
        raise MergeError(f"models 0 and {i} learned {first.n_features_in_} and "
                         f"{model.n_features_in_} features")
    names = [getattr(m, "feature_names_in_", None) for m in (first, model)]
    if (names[0] is None) != (names[1] is None) or (
            names[0] is not None and not np.array_equal(*names)):
        raise MergeError(f"models 0 and {i} learned features of different names")
    a, b = first._merge_state(), model._merge_state()
    if (a["holds_out"] or b["holds_out"]) and a["holdout_seed"] != b["holdout_seed"]:
        raise MergeError(
            f"models 0 and {i} hold out rows by different hashes (their random_state "
            f"drew different seeds): give every learner the same int random_state")
    if float(first.decay) != 1 and model.n_tasks_seen_ != first.n_tasks_seen_:
        raise MergeError(
            f"models 0 and {i} decay by {first.decay} per call but saw "
            f"{first.n_tasks_seen_} and {model.n_tasks_seen_} calls: their rows' weights "
            f"would not be those of one sequence")
    if (first.moments_.group_scatter is None) != (model.moments_.group_scatter is None):
        raise MergeError(f"models 0 and {i} keep different statistics (each group's "
                         f"scatter in one only)")


def _aligned_classes(models):
    """The union of the models' classes, sorted; refused when their label types differ."""
    kinds = {_label_kind(model.classes_) for model in models}
    if len(kinds) > 1:
        listed = ", ".join(f"model {i}: {model.classes_.tolist()}"
                           for i, model in enumerate(models))
        raise MergeError(f"the models' classes cannot be put in one order, their labels are "
                         f"of different types ({listed})")
    return functools.reduce(np.union1d, [model.classes_ for model in models])


def _label_kind(classes):
    kind = classes.dtype.kind
    return "number" if kind in "biuf" else kind


def _merged_record(task, records):
    return {
        "task": task + 1,
        "n_samples": int(sum(r.get("n_samples", 0) for r in records)),
        "n_heldout": float(sum(r.get("n_heldout", 0.0) for r in records)),
        "time": float(sum(r.get("time", 0.0) for r in records)),
        "merged": len(records),
    }
