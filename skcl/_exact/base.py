"""The base of the exact classifiers: a task adds its moments, a solve reads them.

What the Gaussian and the least-squares classifiers share: the task's
moments (learned rows, and held-out rows for the "heldout" rules), the
lazy solve that turns them into fitted attributes at their first use, the
predictions written once from one log joint, the backend choice and the
bookkeeping of tasks, on the backend chosen per task (:mod:`.backend`).
"""


import logging
import time
from contextlib import contextmanager
from numbers import Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._sequential import BaseSequentialClassifier
from .._utils.logging import show_skcl_logs
from .._utils.validation import Interval, StrOptions, is_dask_array
from . import dask_task, task
from .backend import BACKENDS, get_backend, resolve_backend
from .forgetting import scaled
from .in_place import STATE_LOCK as _STATE_LOCK
from .in_place import merge_task, reading
from .moments import empty_moments, merge
from .predictive import log_normalise
from .ranges import answerable, refuse_underflow

__all__ = ["ExactClassifier", "all_moments", "choose"]

logger = logging.getLogger("skcl.estimators")

#: The attribute holding what is derived from the solve at its first use.
_DERIVED = "_derived_cache"


class ExactClassifier(BaseSequentialClassifier):
    """A task adds its moments; the classifier is solved from them in closed form.

    The contract, as scikit-learn's ``_BaseNB``: a subclass supplies

    * ``_solve(moments, heldout)``: the fitted attributes (a dict whose
      keys ``_solved_attributes`` names) from the moments of the rows
      learned from and held out;
    * ``_joint_log_likelihood(X)``: log p(c, x) of checked rows up to a
      constant per row, of shape (n_samples, n_classes), columns in the
      order of ``classes_`` (−inf for a class with no rows yet);

    and, when its decision function is not that log joint (the ridge's
    scores), ``_decision_columns(X)``. ``predict``, ``predict_proba``,
    ``predict_log_proba`` and ``decision_function`` are written here,
    once.

    **When the solve runs** (the one place its laziness lives).
    ``partial_fit`` only adds the task's moments and drops what was solved
    from the ones before: the solve (an eigendecomposition, the
    hyperparameter's choice, the coefficients) runs once, at the first use
    after the updates (a prediction, or reading a fitted attribute it
    sets, through ``__getattr__``), so a stream of small chunks pays one
    D³ solve, not one per chunk; ``fit`` solves at once. What only some
    predictions read and costs more than the solve itself (the least
    squares' temperature: 0.2 s on Iris against a 3 ms solve) is derived
    from the solved attributes at the first prediction that reads it
    (:meth:`_derived`) and kept beside them until the moments change. Both
    are pure functions of the moments: whether they are computed yet
    changes no result, and nothing is recomputed per call.

    **Settings and threads.** ``set_params`` of a setting the solve reads
    drops the solve, so that it acts (and is checked) at the next use, as
    it would have before the first solve; a setting only predictions read
    (``_prediction_params``) is checked by each of them. A prediction
    reads one copy of the state, taken at once (:meth:`_reading`), and
    ``partial_fit`` changes the state in one step under a lock, with the
    new task's solve left to its first use: a prediction made while
    another thread calls ``partial_fit`` on a fitted estimator is that of
    the model before the call or of the model after it, never a mix.
    """

    _parameter_constraints = {
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
        "grow_classes": ["boolean"],
        "verbose": ["verbose"],
        "backend": [StrOptions(set(BACKENDS))],
        "decay": [Interval(Real, 0, 1, closed="right")],
        "store_group_scatter": ["boolean"],
    }

    @property
    def _per_group_scatter(self):
        """Whether each group's own scatter is kept (per-class covariances, forgetting)."""
        # Read with a default: a subclass without it (the contributing guide's) works.
        return bool(getattr(self, "store_group_scatter", False))

    #: The fitted attributes the solve sets (absent from ``vars`` while
    #: the moments have changed since the last solve).
    _solved_attributes = ()

    #: The hyperparameter whose value "heldout" chooses it on held-out rows
    #: (None: no rule holds rows out).
    _tuned = None

    def __getattr__(self, name):
        # Only called when normal lookup fails: a solved attribute missing
        # after partial_fit is computed now, from the moments kept.
        if (name in type(self)._solved_attributes or name == _DERIVED) and "moments_" in vars(self):
            with self._reading() as view:
                solved = vars(view)
            if name in solved:
                return solved[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @contextmanager
    def _reading(self):
        """The estimator as it is now, solved: a copy that other threads do not change.

        The state is copied at once (under ``_STATE_LOCK``); where it has
        no solve, the copy is solved, and the solve is kept on the
        estimator too if its state is still the one copied (no task, no
        setting changed meanwhile: else the next use solves again). The
        copy, of the same class, shares every attribute's value with the
        estimator (the derived cache included) and is never written by it:
        while the block runs, ``partial_fit`` adds no task into the arrays
        it shares (:func:`~.in_place.merge_task` writes new ones then).
        """
        with reading(self):  # nothing is added in place while the copy is in use
            with _STATE_LOCK:
                state = dict(vars(self))
            view = object.__new__(type(self))
            vars(view).update(state)
            if "moments_" in state and not all(name in state for name in self._solved_attributes):
                type(self)._solve_now(view)
                solved = {name: vars(view)[name] for name in self._stale_names()}
                with _STATE_LOCK:
                    current = vars(self)
                    if current.keys() == state.keys() and all(
                            current[name] is value for name, value in state.items()):
                        current.update(solved)
            yield view

    @classmethod
    def _stale_names(cls):
        """The attributes a solve sets, dropped when what it read changes."""
        return (*cls._solved_attributes, _DERIVED, "solve_time_")

    def set_params(self, **params):
        """Set the estimator's parameters (scikit-learn's ``set_params``).

        A parameter the solve reads, changed on a fitted estimator, drops
        the solve: the next use solves again with it, and checks it, as
        before the first solve (``partial_fit`` only adds moments, so the
        model stays the one the moments and the settings define).

        Returns
        -------
        self
        """
        with _STATE_LOCK:
            before = self.get_params(deep=False)
            super().set_params(**params)
            after = self.get_params(deep=False)
            solve_reads = set(before) - set(self._prediction_params) - {"verbose"}
            if any(not _same(before[name], after[name]) for name in solve_reads):
                for name in self._stale_names():
                    vars(self).pop(name, None)
        return self

    def _solve_now(self):
        """Run the solve on the moments kept and set the attributes it gives."""
        self._check_params()  # set_params may have changed them since partial_fit
        self._check_same_structure()
        tic = time.perf_counter()
        with self._backend().scope():
            fitted = self._solve(self.moments_, self.heldout_moments_)
        for name, value in fitted.items():
            setattr(self, name, value)
        setattr(self, _DERIVED, {})
        self.solve_time_ = time.perf_counter() - tic

    def _derived(self, name, compute):
        """What ``compute()`` derives from the solved attributes, computed once.

        Parameters
        ----------
        name : str
            Its name among the things derived from this solve.
        compute : callable
            Of no argument; reads the solved attributes (which solves
            first if they are stale).

        Returns
        -------
        object
            ``compute()``'s value, the same on every call until the moments
            change. Kept in a cache created by the solve: a prediction adds
            to it and changes nothing else.
        """
        derived = getattr(self, _DERIVED)
        if name not in derived:
            derived[name] = compute()
        return derived[name]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Only the held-out rule draws anything (its rows' hash).
        tags.non_deterministic = self._holds_out() and self.random_state is None
        return tags

    def _backend(self):
        """``backend_``'s :class:`~.backend.Backend`: the update's, solve's and predictions'."""
        return get_backend(getattr(self, "backend_", "numpy"))

    def _holds_out(self):
        """Whether the rule in use needs held-out rows."""
        return self._tuned is not None and getattr(self, self._tuned) == "heldout"

    def fit(self, X, y, sample_weight=None):
        """Forget everything and learn ``(X, y)`` as a single task, solved at once.

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
            super().fit(X, y, sample_weight)
            self._solve_now()
        return self

    def _partial_fit(self, X, y, classes, sample_weight, infer_classes=False):
        self._check_params()
        tic = time.perf_counter()
        validate = self._validate_dask_task if is_dask_array(X) else self._validate_task
        X, y, sample_weight, first, grown = validate(
            X, y, classes, sample_weight, infer_classes=infer_classes
        )
        if not is_dask_array(X):
            refuse_underflow(X)
        if first:
            self._start_sequence()
        else:
            self._check_same_structure()
        # Resolved per task, so that "auto" follows a JAX imported between
        # tasks; the solve reads it too (the last task's).
        self.backend_ = resolve_backend(self.backend)
        # Grown classes are kept with the moments, in one step (_commit).
        classes = self.classes_ if grown is None else grown
        with self._backend().scope():
            learned, held = self._task_moments(X, y, sample_weight, classes)
            decay = float(getattr(self, "decay", 1.0))  # earlier rows weigh λ^(calls after)
            before = scaled(self.moments_, decay), scaled(self.heldout_moments_, decay)
        if sum(moments.total for moments in (*before, learned, held)) <= 0:
            raise ValueError("Every sample weight seen so far is zero: nothing to learn from.")
        scales = [*(s * decay for s in self._task_scales), 1.0]
        record = {"task": self.n_tasks_seen_ + 1, "n_samples": int(X.shape[0]),
                  "n_heldout": float(held.total), "time": time.perf_counter() - tic}
        # Checks passed: added (in place where the scatter is this estimator's
        # alone) and committed in one step, in the backend's scope.
        with self._backend().scope(), _STATE_LOCK:
            moments, heldout = merge_task(self, before, (learned, held))
            self._commit(moments, heldout, classes, scales, record)

    def _start_sequence(self):
        """Empty moments and task count for the sequence's first task."""
        # Drawn only for the held-out rule: at the defaults nothing is random.
        self._holdout_seed = (int(check_random_state(self.random_state).randint(2**31 - 1))
                              if self._holds_out() else 0)
        self.n_tasks_seen_ = 0
        self._task_scales, self._rows_forgotten = [], 0.0
        self.moments_ = self.heldout_moments_ = empty_moments(
            self.n_features_in_, self._per_group_scatter
        )

    def _check_same_structure(self):
        """Refuse a covariance structure the moments kept so far cannot serve."""
        if (self.moments_.group_scatter is not None) != self._per_group_scatter:
            raise ValueError(
                "The covariance structure cannot change between tasks: the statistics "
                "kept so far do not hold what it needs. Call fit, or clone the "
                "estimator, to start a new sequence."
            )

    def _task_moments(self, X, y, sample_weight, classes_):
        """The task's moments by (task, class): rows learned from, rows held out.

        ``classes_`` are the classes after the task (grown, or as they
        were). Nothing on the estimator changes here, so a task rejected while its
        moments are computed (a NaN in a Dask block) leaves it as it was.
        """
        keys = [(self.n_tasks_seen_, label) for label in classes_.tolist()]
        fraction = float(self.validation_fraction) if self._holds_out() else 0.0
        # The backend chosen, for a Dask array's blocks too (a worker's device).
        options = dict(fraction=fraction, seed=self._holdout_seed,
                       per_group_scatter=self._per_group_scatter, backend=self.backend_)
        if is_dask_array(X):
            groups = y.map_blocks(lambda block: np.searchsorted(classes_, block), dtype=np.intp)
            return dask_task.dask_task_moments(X, groups, sample_weight, keys, **options)
        return task.task_moments(X, np.searchsorted(classes_, y), sample_weight, keys, **options)

    def _commit(self, moments, heldout, classes_, task_scales, record):
        """Keep the merged moments, the classes, each call's weight factor (decay)
        and the task's record; the solve waits."""
        # The solved attributes are stale from here: dropped, and recomputed
        # from the new moments at their first use (__getattr__). One step
        # under the lock: a prediction sees the state before or after it.
        with _STATE_LOCK:
            for name in self._stale_names():
                vars(self).pop(name, None)
            self.moments_, self.heldout_moments_, self.classes_ = moments, heldout, classes_
            self._task_scales = task_scales
            self.history_ = [*getattr(self, "history_", []), record]
            self.n_tasks_seen_ += 1
        if self.verbose:
            show_skcl_logs()
            logger.info("[%s] task %d: %d samples (%.0f held out), %.3f s",
                        type(self).__name__, record["task"], record["n_samples"],
                        record["n_heldout"], record["time"])

    def _validate_dask_task(self, X, y, classes, sample_weight, *, infer_classes=False):
        """Check a task given as Dask arrays without loading X.

        The labels are reduced to their distinct values (Dask's
        ``unique``) and checked as an in-memory task of one row per label;
        the values of X are checked block by block as the moments are
        computed (a NaN there rejects the task).
        """
        import dask.array as da

        y = da.asarray(y)
        if X.ndim != 2 or y.ndim != 1:
            raise ValueError(f"Expected a 2-D X and a 1-D y, got {X.ndim}-D and {y.ndim}-D.")
        if np.isnan(X.shape[0]) or X.shape[0] != y.shape[0]:
            raise ValueError(
                f"X and y must have the same known number of rows, got {X.shape[0]} and "
                f"{y.shape[0]}."
            )
        if X.shape[0] == 0:
            raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
        labels = da.unique(y).compute()
        probe = np.zeros((len(labels), X.shape[1]))
        checked = self._validate_task(probe, labels, classes, None, infer_classes=infer_classes)
        if sample_weight is not None and not is_dask_array(sample_weight):
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (X.shape[0],) or (sample_weight < 0).any():
                raise ValueError("sample_weight must be non-negative, one per row of X.")
        return checked._replace(X=X, y=y, sample_weight=sample_weight)

    def _solve(self, moments, heldout):
        """The fitted attributes from the moments (learned rows, held-out rows).

        Returns
        -------
        dict
            Each attribute that ``_solved_attributes`` names, by name.
        """
        raise NotImplementedError

    def _joint_log_likelihood(self, X):
        """log p(c, x) of checked rows, up to a constant per row.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; −inf for a class with
            no rows yet.
        """
        raise NotImplementedError

    def _decision_columns(self, X):
        """What ``decision_function`` and ``predict`` read, for checked rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples, 1) for one
        score (positive for ``classes_[1]`` when there are two classes)
            By default the log joint.
        """
        return self._joint_log_likelihood(X)

    def _check_X(self, X):
        check_is_fitted(self)
        self._check_prediction_params()
        return validate_data(self, X, reset=False, dtype=self._input_dtypes)

    def _scored(self, X, columns):
        """A solved copy (:meth:`_reading`) and ``columns(copy, checked X)``, on its backend."""
        with self._reading() as view, type(self)._backend(view).scope():
            return view, answerable(columns(view, type(self)._check_X(view, X)))

    def decision_function(self, X):
        """The scores ``predict`` takes the highest of.

        The log joint of each class unless the estimator says otherwise
        (its own docstring); with two classes, the log-odds of
        ``classes_[1]``, column 1 minus column 0; one score is returned as
        it is.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) with two classes (positive means
        ``classes_[1]``) or one score, else (n_samples, n_classes)
        """
        columns = self._scored(X, type(self)._decision_columns)[1]
        if columns.shape[1] == 1:
            return columns[:, 0]
        if columns.shape[1] == 2:
            # −inf − (−inf) where neither class has rows cannot happen: a
            # fitted estimator has rows of at least one.
            with np.errstate(invalid="ignore"):
                return columns[:, 1] - columns[:, 0]
        return columns

    def predict(self, X):
        """The class of the highest decision column of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        view, columns = self._scored(X, type(self)._decision_columns)
        if columns.shape[1] == 1:  # one score: classes_[1] where positive
            if len(view.classes_) == 1:
                return np.repeat(view.classes_, len(columns))
            return view.classes_[(columns[:, 0] > 0).astype(int)]
        return view.classes_[np.argmax(columns, axis=1)]

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`: the log joint normalised over classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            −inf for a declared class with no rows yet.
        """
        return log_normalise(self._scored(X, type(self)._joint_log_likelihood)[1])

    def predict_proba(self, X):
        """p(c | x) of each class (the estimator's docstring says from what).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; 0 for a declared class
            with no rows yet.
        """
        return np.exp(self.predict_log_proba(X))


def _same(a, b):
    """Whether two values of a parameter are the same setting (1 and 1.0 are not)."""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def all_moments(estimator):
    """The moments of every row learned from, held-out ones included (the fit's).

    Free at the defaults: nothing is held out, and ``merge`` returns the
    learned side as it is.
    """
    return merge(estimator.moments_, estimator.heldout_moments_)


def choose(grid, scores, fallback, better):
    """The grid value with the best finite score, or the fallback."""
    scores = None if scores is None else np.asarray(scores)
    if scores is None or not np.isfinite(scores).any():
        return fallback
    finite = np.where(np.isfinite(scores), scores, -np.inf if better == "max" else np.inf)
    return grid[int(np.argmax(finite) if better == "max" else np.argmin(finite))]
