"""The exact classifiers' forgetting methods: rows, classes or calls on request.

A mixin of :class:`~skcl._exact.base.ExactClassifier`'s estimators: each
method computes the moments of what is to go (:mod:`.task`'s update on
the rows, held-out rule included, or the kept groups' own scatters),
takes them out of the sums (:func:`.forgetting.downdate`) and keeps the
result only if every check passed, so a refused removal changes nothing.
The solve is then rerun at the next use, from the sums left: the model is
the one a fit on the remaining rows gives, hyperparameters (GCV's α, OAS
shrinkage, the held-out choices) and components included.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from .base import _STATE_LOCK
from .forgetting import ForgettingError, downdate, select_groups
from .moments import class_of, empty_moments
from .task import task_moments

__all__ = ["ForgettingMixin"]


class ForgettingMixin:
    """``forget``, ``forget_classes`` and ``forget_task`` of an exact classifier."""

    #: The rows taken out so far (a fit, or a model from before forgetting, has none).
    _rows_forgotten = 0.0

    def forget(self, X, y, sample_weight=None, *, task=None):
        """Take rows that were learned back out: the model left is a fit without them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows, as they were learned (their values decide which
            were held out, exactly as when learned).
        y : array-like of shape (n_samples,)
            Their labels, classes of ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            The weights they were learned with (under ``decay``, as given
            then: the decay since is applied here).
        task : int, default=None
            The call (0 for the first ``partial_fit``, or ``fit``) that
            learned them. By default each class's only call: a class
            learned in several calls needs it, since each call's rows are
            kept apart (its own (task, class) group).

        Returns
        -------
        self

        Raises
        ------
        ForgettingError (a ValueError)
            Nothing changed: rows of a class never learned (in that call),
            more weight than was learned, a scatter the removal would
            leave with a negative variance, or no rows left at all.
        """
        self._check_forgettable()
        X, y = validate_data(self, X, y, reset=False, dtype=self._input_dtypes)
        weights = (np.ones(len(X)) if sample_weight is None
                   else np.asarray(sample_weight, dtype=np.float64))
        if weights.shape != (len(X),) or not (np.isfinite(weights) & (weights >= 0)).all():
            raise ValueError("sample_weight must hold one finite, non-negative weight per row "
                             "of X")
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if len(unknown):
            raise ForgettingError(f"rows of classes {unknown.tolist()}, which the model never "
                                  f"saw (its classes are {self.classes_.tolist()})")
        labels = np.unique(y)
        tasks = [self._task_of(label, task) for label in labels.tolist()]
        group = np.searchsorted(labels, y)
        scales = np.array([self._task_scale(t) for t in tasks])
        keys = [(t, label) for t, label in zip(tasks, labels.tolist())]
        fraction = float(self.validation_fraction) if self.heldout_moments_.keys else 0.0
        learned, held = task_moments(
            X, group, weights * scales[group], keys, fraction=fraction,
            seed=self._holdout_seed, per_group_scatter=self._removal_group_scatter())
        return self._take_out(learned, held, rows=len(X))

    def forget_classes(self, classes):
        """Forget every row of ``classes``: each gets probability 0.

        ``classes_`` is unchanged: a forgotten class stays a declared
        class with no rows (as one declared in ``partial_fit``'s
        ``classes`` and not yet seen), with probability 0, −inf in the
        log joint, and never predicted; a later call may bring rows of it
        again.

        Needs each group's own scatter (``store_group_scatter=True`` when
        learning) or each class's (the Gaussian's ``covariance="per_class"``);
        otherwise pass the class's rows to :meth:`forget`.

        Parameters
        ----------
        classes : array-like of labels
            Classes of ``classes_`` with rows learned.

        Returns
        -------
        self
        """
        self._check_forgettable()
        chosen = set(np.asarray(classes).ravel().tolist())
        learned = {class_of(key) for key in (*self.moments_.keys, *self.heldout_moments_.keys)}
        missing = chosen - learned
        if missing:
            raise ForgettingError(f"classes {sorted(missing)} have no rows learned: "
                                  f"nothing of them to forget")
        return self._forget_groups(lambda key: class_of(key) in chosen,
                                   f"classes {sorted(chosen)}")

    def forget_task(self, task):
        """Forget every row of one earlier call (``task``: 0 for the first).

        Needs each group's own scatter (``store_group_scatter=True`` when
        learning); otherwise pass the call's rows to :meth:`forget` with
        ``task``. The Gaussian's ``covariance="per_class"`` keeps one
        scatter a class, summed over its calls: it forgets a call without
        rows only when no other call learned its classes (a
        class-incremental sequence), and refuses otherwise, changing
        nothing. ``n_tasks_seen_`` and ``history_`` are unchanged (the
        call happened).

        Returns
        -------
        self
        """
        self._check_forgettable()
        self._check_task(task)
        return self._forget_groups(lambda key: key[0] == task, f"task {task}")

    # ------------------------------------------ merging's hooks (merging.merge_models)

    def _merge_state(self):
        """What merging reads beyond the public attributes: the held-out hash's
        seed (and whether rows are held out), each call's decay factor."""
        return {"holds_out": bool(self.heldout_moments_.keys) or self._holds_out(),
                "holdout_seed": self._holdout_seed, "task_scales": list(self._task_scales),
                "rows_forgotten": self._rows_forgotten}

    def _take_merge_state(self, state):
        """Set what :meth:`_merge_state` gave, on a merged model."""
        self._holdout_seed = state["holdout_seed"]
        self._task_scales = list(state["task_scales"])
        self._rows_forgotten = float(state["rows_forgotten"])

    # ------------------------------------------------------------------ helpers

    def _check_forgettable(self):
        check_is_fitted(self, "moments_")
        self._check_params()
        if getattr(self, "covariance", None) == "per_domain":
            raise ForgettingError("covariance='per_domain' keeps each task's scatter, which "
                                  "forgetting does not take rows out of yet: nothing forgotten")

    def _check_task(self, task):
        if not isinstance(task, (int, np.integer)) or not 0 <= task < self.n_tasks_seen_:
            raise ForgettingError(f"task must be a call index in [0, {self.n_tasks_seen_}), "
                                  f"got {task!r}")

    def _task_of(self, label, task):
        """The call whose (task, class) group holds the rows of ``label``."""
        tasks = sorted({key[0] for key in (*self.moments_.keys, *self.heldout_moments_.keys)
                        if class_of(key) == label})
        if task is not None:
            self._check_task(task)
            if task not in tasks:
                raise ForgettingError(f"class {label!r} has no rows learned in task {task}")
            return task
        if not tasks:
            raise ForgettingError(f"class {label!r} has no rows learned: nothing to forget")
        if len(tasks) > 1:
            raise ForgettingError(
                f"class {label!r} was learned in tasks {tasks}: pass task= to say which "
                f"call these rows came from (each call's rows are kept apart)")
        return tasks[0]

    def _task_scale(self, task):
        """The factor the decay has applied to the rows of ``task`` since."""
        return float(self._task_scales[task])

    def _forget_groups(self, chosen, what):
        if self.moments_.group_scatter is None:
            learned, held = self._select_without_group_scatter(chosen, what)
        else:
            learned = select_groups(self.moments_, chosen)
            held = select_groups(self.heldout_moments_, chosen)
        # Their rows, where only weights are kept: the share of the weight
        # they held (exact for rows of one weight each).
        total = self.moments_.total + self.heldout_moments_.total
        rows = self._rows_learned() * (learned.total + held.total) / total
        return self._take_out(learned, held, rows=rows)

    # ------------------------------------------ hooks of what an estimator keeps more

    def _removal_group_scatter(self):
        """Whether rows to forget are summed with each group's own scatter."""
        return self.moments_.group_scatter is not None

    def _select_without_group_scatter(self, chosen, what):
        """The moments of the groups ``chosen(key)`` is true of, learned and held
        out, where no group's own scatter is kept: refused here."""
        raise ForgettingError(
            f"forgetting {what} without their rows needs each group's own scatter, "
            f"which this model did not keep: learn with store_group_scatter=True, or "
            f"pass the rows to forget(X, y, task=...)")

    def _state_after_removal(self, learned, held):
        """What else the removal of these moments changes ({attribute: value}),
        computed (and checked) before anything is set."""
        return {}

    def _rows_learned(self):
        """The rows learned and not forgotten (what a refit on them would count)."""
        learned = sum(record["n_samples"] for record in self.history_)
        return float(learned) - self._rows_forgotten

    def _take_out(self, learned, held, *, rows):
        """Downdate both sides; keep the result only when both pass."""
        moments = downdate(self.moments_, learned)
        heldout = downdate(self.heldout_moments_, held)
        if moments.total + heldout.total <= 0:
            raise ForgettingError("forgetting these rows would leave no rows at all: call fit, "
                                  "or clone the estimator, to start anew")
        if not heldout.keys:  # the form of moments of no rows, as the start of a sequence's
            heldout = empty_moments(moments.n_features, moments.group_scatter is not None)
        more = self._state_after_removal(learned, held)
        with _STATE_LOCK:  # one step: a prediction in another thread sees before or after
            for name in self._stale_names():
                vars(self).pop(name, None)
            vars(self).update(more)
            self.moments_, self.heldout_moments_ = moments, heldout
            self._rows_forgotten = self._rows_forgotten + float(rows)
        return self
